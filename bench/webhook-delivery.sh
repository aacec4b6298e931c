#!/usr/bin/env bash
# Webhook delivery throughput of one webhook-delivery instance, end to end on this machine: ENDPOINTS endpoints of one
# merchant (every event type) registered in the tables, EVENTS PaymentCaptured events written to the outbox (the
# trigger fills merchant_events, as for a real capture) and published to payment-events by outbox-relay; then one
# webhook-delivery (the packaged jar, allow-http and allow-loopback on) consumes that backlog, fans it out into
# EVENTS x ENDPOINTS deliveries and sends them to a fast receiver on loopback (bench/WebhookReceiver.java: Vert.x,
# answers 200 at once and checks every signature). Measured from PostgreSQL: deliveries per second from the attempts
# (finished attempts / (last end - first end), and over the middle 80 % of them), p50/p99 of one attempt (the
# receiver's round trip) and of fan-out -> delivered; the receiver's count of bad signatures must be 0.
# With WARMUP_EVENTS > 0 (default 500), a first backlog of that many events is delivered before the measured one,
# which then flows through the running relay and webhook-delivery: the figures cover the measured events only (a
# started JIT, as in production); WARMUP_EVENTS=0 measures the cold start too.
#
#   bench/webhook-delivery.sh                        # 20 endpoints x 2500 events = 50,000 deliveries
#   ENDPOINTS=50 EVENTS=2000 bench/webhook-delivery.sh
#   PAYMENTS_WEBHOOKS_PER_ENDPOINT_CONCURRENCY=16 PAYMENTS_WEBHOOKS_MAX_IN_FLIGHT=512 bench/webhook-delivery.sh
#   SKIP_BUILD=1 ...                                 # use the jars as they are
# Ports: RECEIVER_PORT, RELAY_PORT, DELIVERY_PORT (the management interface on each port + 10). Kafka: an embedded
# broker (local-infra). PostgreSQL: PAYMENTS_PG_* if set, else embedded; a new database migrated by Flyway
# (bench/FreshDatabase.java).
set -euo pipefail
cd "$(dirname "$0")/.."

ENDPOINTS=${ENDPOINTS:-20}
EVENTS=${EVENTS:-2500}
WARMUP_EVENTS=${WARMUP_EVENTS:-500}
RECEIVER_PORT=${RECEIVER_PORT:-18090}
RELAY_PORT=${RELAY_PORT:-18081}
DELIVERY_PORT=${DELIVERY_PORT:-18083}
DELIVERY_OPTS=${DELIVERY_OPTS:--Xms512m -Xmx512m -XX:+UseParallelGC}
RELAY_OPTS=${RELAY_OPTS:--Xmx384m}
TIMEOUT=${TIMEOUT:-600} # seconds to wait for every delivery
SECRET=whsec_$(head -c 32 /dev/urandom | base64 -w0)
TOTAL=$((ENDPOINTS * EVENTS))

source bench/lib.sh
bench_build webhook-delivery,outbox-relay,local-infra
LOGDIR=$(mktemp -d /tmp/webhook-delivery-bench.XXXXXX)

start_infra "$LOGDIR" "$LOGDIR/infra.log" || exit 1
DB=$(fresh_database bench_webhooks "$LOGDIR") || exit 1
use_database "$DB"
sql() { psql -q -tA -v ON_ERROR_STOP=1 -d "$DB" -c "$1"; }
export KAFKA_BOOTSTRAP_SERVERS="$PAYMENTS_KAFKA_BOOTSTRAP_SERVERS"
export PAYMENTS_WEBHOOKS_ALLOW_HTTP=true PAYMENTS_WEBHOOKS_ALLOW_LOOPBACK=true

# The receiver: Vert.x from webhook-delivery's own class path.
module_classpath webhook-delivery "$LOGDIR/delivery.classpath"
"$JAVA" -Xmx256m -cp "$(cat "$LOGDIR/delivery.classpath")" bench/WebhookReceiver.java "$RECEIVER_PORT" "$SECRET" \
  >"$LOGDIR/receiver.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$RECEIVER_PORT/stats" 120 "$!" "$LOGDIR/receiver.log" || exit 1
receiver_stats() { curl -fsS "http://127.0.0.1:$RECEIVER_PORT/stats"; }

outbox_relay_PID="" webhook_delivery_PID="" # set by start()
start() { # NAME PORT JAVA_OPTS JAR; the management interface (health) on PORT + 10; its pid in NAME_PID
  local name=$1 port=$2 opts=$3 jar=$4
  # shellcheck disable=SC2086
  start_jar "$LOGDIR/$name.log" "http://127.0.0.1:$((port + 10))/q/health/ready" $opts -Dquarkus.http.port="$port" \
    -Dquarkus.management.port=$((port + 10)) -Dquarkus.log.level=WARN -jar "$jar" || exit 1
  printf -v "${name//-/_}_PID" %s "$STARTED_PID"
}

echo "== $ENDPOINTS endpoints, $EVENTS events: $TOTAL deliveries; $(nproc) cores, uptime:$(uptime)"
MERCHANT=$(sql "INSERT INTO merchants (name) VALUES ('bench') RETURNING id")
sql "WITH e AS (INSERT INTO webhook_endpoints (id, merchant_id, url, event_types)
                SELECT gen_random_uuid(), '$MERCHANT', 'http://127.0.0.1:$RECEIVER_PORT/hooks/' || i, ARRAY['*']
                  FROM generate_series(1, $ENDPOINTS) i RETURNING id)
     INSERT INTO webhook_endpoint_secrets (endpoint_id, secret) SELECT id, '$SECRET' FROM e"
insert_events() { # N PREFIX: N PaymentCaptured events into the outbox
  sql "INSERT INTO outbox (event_id, event_type, topic, key, payload)
       SELECT e, 'PaymentCaptured', 'payment-events', p::text,
              jsonb_build_object('eventId', e, 'type', 'PaymentCaptured', 'paymentId', p, 'merchantId', '$MERCHANT',
                                 'orderId', '$2-' || i, 'amount', 1000 + i, 'currency', 'EUR',
                                 'pspReference', 'psp_' || i, 'occurredAt', now(), 'metadata', '{}'::jsonb)
         FROM (SELECT i, gen_random_uuid() e, gen_random_uuid() p FROM generate_series(1, $1) i) s"
}
wait_delivered() { # COUNT: until COUNT deliveries succeeded
  local deadline=$((SECONDS + TIMEOUT)) done_count
  while true; do
    done_count=$(sql "SELECT count(*) FROM webhook_deliveries WHERE status = 'SUCCEEDED'")
    echo "  $(date +%T) deliveries: $(sql "SELECT count(*) FROM webhook_deliveries"), succeeded: $done_count; receiver (requests, bad signatures): $(receiver_stats)"
    ((done_count >= $1)) && return
    ((SECONDS < deadline)) || { echo "not every delivery succeeded within $TIMEOUT s (log: $LOGDIR)" >&2; exit 1; }
    kill -0 "$webhook_delivery_PID" 2>/dev/null || { tail -n 30 "$LOGDIR/webhook-delivery.log" >&2; exit 1; }
    sleep 5
  done
}
outbox_drained() { [[ $(sql "SELECT count(*) FROM outbox WHERE sent_at IS NULL") == 0 ]]; }
# The first backlog (the warm-up's, or the measured one when WARMUP_EVENTS=0) is published before webhook-delivery
# starts.
insert_events "$((WARMUP_EVENTS > 0 ? WARMUP_EVENTS : EVENTS))" "$( ((WARMUP_EVENTS > 0)) && echo warm || echo order)"
start outbox-relay "$RELAY_PORT" "$RELAY_OPTS" outbox-relay/target/quarkus-app/quarkus-run.jar
poll 300 "$outbox_relay_PID" "the first backlog published" outbox_drained || exit 1
sql "VACUUM ANALYZE"

start webhook-delivery "$DELIVERY_PORT" "$DELIVERY_OPTS" webhook-delivery/target/quarkus-app/quarkus-run.jar
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
MEASURED_FROM=-infinity
if ((WARMUP_EVENTS > 0)); then
  echo "warm-up: $WARMUP_EVENTS events, $((WARMUP_EVENTS * ENDPOINTS)) deliveries"
  wait_delivered $((WARMUP_EVENTS * ENDPOINTS))
  MEASURED_FROM=$(sql "SELECT clock_timestamp()")
  read -r warm_requests _ < <(receiver_stats)
  echo "measured: $EVENTS events, $TOTAL deliveries"
  insert_events "$EVENTS" order
fi
DELIVERY_CPU0=$(cpu_ticks "$webhook_delivery_PID")
wait_delivered $((TOTAL + WARMUP_EVENTS * ENDPOINTS))
DELIVERY_CPU=$((($(cpu_ticks "$webhook_delivery_PID") - DELIVERY_CPU0) / $(getconf CLK_TCK)))

read -r requests bad < <(receiver_stats)
requests=$((requests - ${warm_requests:-0}))
sql "WITH a AS (SELECT a.started_at + a.latency_ms * interval '1 ms' AS ended, a.latency_ms, a.outcome,
                       d.created_at AS fanned_out
                  FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
                 WHERE a.started_at >= '$MEASURED_FROM'),
          r AS (SELECT *, ntile(10) OVER (ORDER BY ended) AS decile FROM a),
          mid AS (SELECT count(*) n, extract(epoch FROM max(ended) - min(ended)) s FROM r WHERE decile BETWEEN 2 AND 9)
     SELECT format(E'%s attempts (%s failed) over %s s: %s deliveries/s overall, %s /s over the middle 80 %%\n'
                   'attempt (receiver round trip) p50 %s ms, p99 %s ms; fan-out -> delivered p50 %s ms, p99 %s ms',
                   count(*), count(*) FILTER (WHERE outcome <> 'SUCCEEDED'),
                   round(extract(epoch FROM max(ended) - min(ended))::numeric, 2),
                   round(count(*) / nullif(extract(epoch FROM max(ended) - min(ended)), 0)::numeric, 1),
                   (SELECT round(n / nullif(s, 0)::numeric, 1) FROM mid),
                   percentile_disc(0.5) WITHIN GROUP (ORDER BY latency_ms),
                   percentile_disc(0.99) WITHIN GROUP (ORDER BY latency_ms),
                   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM ended - fanned_out) * 1000)::numeric),
                   round(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM ended - fanned_out) * 1000)::numeric))
       FROM a"
echo "receiver: $requests requests, $bad with a bad signature; webhook-delivery CPU: $DELIVERY_CPU s; logs: $LOGDIR"
((bad == 0)) || { echo "the receiver saw $bad webhooks with a bad signature" >&2; exit 1; }
