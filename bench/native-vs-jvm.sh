#!/usr/bin/env bash
# Every service as jars and as native executables, one kind after the other on the same machine (docs/benchmarks.md,
# "Native against JVM"): time to ready, resident memory idle and under load, captures/s, and a reconciler run. Each
# kind runs the whole path: psp-sandbox, payments-api, outbox-relay, refunds-worker and webhook-delivery of that kind;
# one merchant with a webhook endpoint on a receiver on loopback (bench/WebhookReceiver.java, checks every signature);
# a capture load on payments-api (the relay publishes every capture's events, webhook-delivery sends each
# PaymentCaptured), then a refund load over the captured payments (refunds-worker executes them at the sandbox,
# webhook-delivery sends each RefundSucceeded), then the reconciler over the day.
#
#   bench/native-vs-jvm.sh                  # both kinds; no build here: jars and executables must exist
#   MODES=native DURATION=20s bench/native-vs-jvm.sh
# Native executables come from `./mvnw package -Dnative -pl <module> -am` with the test toolchain
# (docs/deployment.md, "Native images"); a service without one runs as its jar in the native run too (its lines say
# "jar").
# Heaps: native -Xmx at 80 % of the k8s limit (the toolchain's executables do not see container limits, a Mandrel one
# sizes its heap from them); JVM -Xmx at 50 % of the prod-jvm overlay's limit (JAVA_MAX_MEM_RATIO=50).
# Ports BASE_PORT..BASE_PORT+9 (default 18100); PostgreSQL and Kafka: local-infra's LocalInfraMain (it uses
# PAYMENTS_PG_HOST/PORT/USER/PASSWORD if set; its Kafka is in-process on a free port).
set -euo pipefail
cd "$(dirname "$0")/.."

MODES=${MODES:-"jvm native"}
BASE_PORT=${BASE_PORT:-18100}
DURATION=${DURATION:-20s}
WARMUP=${WARMUP:-20s}
CONNECTIONS=${CONNECTIONS:-16}
IDLE_AFTER=${IDLE_AFTER:-5}         # seconds after the last service is ready that idle memory is read
RECON_TIMEOUT=${RECON_TIMEOUT:-600} # seconds the reconciler run may take
ADMIN_TOKEN=bench-operator-token-$RANDOM$RANDOM
SERVICES=(psp-sandbox payments-api outbox-relay refunds-worker webhook-delivery)
declare -A PORT=([payments-api]=$BASE_PORT [outbox-relay]=$((BASE_PORT + 2)) [refunds-worker]=$((BASE_PORT + 4))
  [psp-sandbox]=$((BASE_PORT + 6)) [webhook-delivery]=$((BASE_PORT + 7)))
declare -A MANAGEMENT=([payments-api]=$((BASE_PORT + 1)) [outbox-relay]=$((BASE_PORT + 3))
  [refunds-worker]=$((BASE_PORT + 5)) [psp-sandbox]=$((BASE_PORT + 6)) [webhook-delivery]=$((BASE_PORT + 8)))
RECEIVER_PORT=$((BASE_PORT + 9))
declare -A NATIVE_HEAP=([payments-api]=200m [outbox-relay]=200m [refunds-worker]=200m [psp-sandbox]=200m
  [webhook-delivery]=200m [reconciler]=400m)
declare -A JVM_HEAP=([payments-api]=384m [outbox-relay]=256m [refunds-worker]=384m [psp-sandbox]=256m
  [webhook-delivery]=256m [reconciler]=512m)
API=http://127.0.0.1:${PORT[payments-api]}
PSP=http://127.0.0.1:${PORT[psp-sandbox]}

source bench/lib.sh
ensure_wrk
LOGDIR=$(mktemp -d /tmp/native-bench.XXXXXX)
start_infra "$LOGDIR" "$LOGDIR/infra.log" || exit 1
module_classpath webhook-delivery "$LOGDIR/delivery.classpath"
export PAYMENTS_WEBHOOKS_ALLOW_HTTP=true PAYMENTS_WEBHOOKS_ALLOW_LOOPBACK=true

executable() { compgen -G "$1/target/*-runner" | head -n 1; }
# command MODE MODULE: the command line that runs MODULE's artifact of MODE, with its heap
command_of() {
  if [[ $1 == native && -n $(executable "$2") ]]; then echo "$(executable "$2") -Xmx${NATIVE_HEAP[$2]}"
  else echo "$JAVA -Xmx${JVM_HEAP[$2]} -jar $2/target/quarkus-app/quarkus-run.jar"; fi
}
kind_of() { if [[ $1 == native && -n $(executable "$2") ]]; then echo native; else echo jar; fi; }
millis() { date +%s%3N; }
settled() { # nothing left to publish, execute or send
  [[ $(psql -tA -d "$DB" -c "SELECT (SELECT count(*) FROM outbox WHERE sent_at IS NULL)
    + (SELECT count(*) FROM refunds WHERE status = 'PENDING')
    + (SELECT count(*) FROM webhook_deliveries WHERE status = 'PENDING')") == 0 ]]
}
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "commit $(git rev-parse --short HEAD) $(date -u +%FT%TZ), $(nproc) cores, load average $(load)"
for mode in $MODES; do
  services=("${SERVICES[@]}")
  DB=bench_${mode}_$(date +%s)
  bench_database "$DB" # exports PG* and QUARKUS_DATASOURCE_*
  export KAFKA_BOOTSTRAP_SERVERS=$PAYMENTS_KAFKA_BOOTSTRAP_SERVERS PSP_URL=$PSP RECON_SOURCE=psp
  export PAYMENTS_ADMIN_TOKEN=$ADMIN_TOKEN PSP_WEBHOOK_SECRET=whsec_bench
  # the migration Job (schema owner), then the services as the application role
  # shellcheck disable=SC2046,SC2091
  QUARKUS_INIT_AND_EXIT=true QUARKUS_FLYWAY_MIGRATE_AT_START=true QUARKUS_DATASOURCE_USERNAME=$PAYMENTS_PG_USER \
    QUARKUS_DATASOURCE_PASSWORD=$PAYMENTS_PG_PASSWORD $(command_of "$mode" payments-api) >"$LOGDIR/$mode-migrate.log" 2>&1 &
  migration=$!
  PIDS+=("$migration")
  wait_exit "$migration" 300 "the migration Job" ||
    { echo "the migration failed (log: $LOGDIR/$mode-migrate.log)" >&2; exit 1; }
  export QUARKUS_DATASOURCE_USERNAME=$PAYMENTS_PG_APP_USER QUARKUS_DATASOURCE_PASSWORD=$PAYMENTS_PG_APP_PASSWORD
  declare -A PID=() READY=() IDLE=() PEAK=() STARTED=()
  for s in "${services[@]}"; do
    args=(-Dquarkus.http.port="${PORT[$s]}" -Dquarkus.http.host=127.0.0.1)
    [[ $s == psp-sandbox ]] && args+=(-Dpsp.webhook.url="$API/v1/psp/webhooks")
    [[ $s != psp-sandbox ]] && args+=(-Dquarkus.management.port="${MANAGEMENT[$s]}" -Dquarkus.management.host=127.0.0.1)
    read -ra cmd <<<"$(command_of "$mode" "$s")"
    # the options go before -jar for the JVM; the executable takes them anywhere
    if [[ $(kind_of "$mode" "$s") == jar ]]; then cmd=("${cmd[0]}" "${cmd[1]}" "${args[@]}" "${cmd[@]:2}")
    else cmd+=("${args[@]}"); fi
    t0=$(millis)
    "${cmd[@]}" >"$LOGDIR/$mode-$s.log" 2>&1 &
    PID[$s]=$!
    PIDS+=("${PID[$s]}")
    POLL_EVERY=0.01 wait_http "http://127.0.0.1:${MANAGEMENT[$s]}/q/health/ready" 300 "${PID[$s]}" \
      "$LOGDIR/$mode-$s.log" || exit 1
    READY[$s]=$(($(millis) - t0))
    STARTED[$s]=$(grep -o 'started in [0-9.]*s' "$LOGDIR/$mode-$s.log" | head -n 1 | cut -d' ' -f3)
  done
  # Not a wait for anything: idle memory is read IDLE_AFTER seconds after the last service is ready (docs/benchmarks.md).
  sleep "$IDLE_AFTER"
  for s in "${services[@]}"; do IDLE[$s]=$(rss_mib "${PID[$s]}"); done
  KEY=$(curl -fs --max-time 30 -X POST "http://127.0.0.1:${MANAGEMENT[payments-api]}/v1/admin/merchants" \
    -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
    -d '{"name":"bench","rateLimitPerSecond":1000000}' | sed -E 's/.*"apiKey":"([^"]+)".*/\1/')
  SECRET=$(curl -fs --max-time 30 -X POST "$API/v1/webhook_endpoints" -H "Authorization: Bearer $KEY" \
    -H 'Content-Type: application/json' -d "{\"url\":\"http://127.0.0.1:$RECEIVER_PORT/hooks\",\"events\":[\"*\"]}" |
    sed -E 's/.*"secret":"([^"]+)".*/\1/')
  "$JAVA" -Xmx256m -cp "$(cat "$LOGDIR/delivery.classpath")" bench/WebhookReceiver.java "$RECEIVER_PORT" "$SECRET" \
    >"$LOGDIR/$mode-receiver.log" 2>&1 &
  receiver=$!
  PIDS+=("$receiver")
  wait_http "http://127.0.0.1:$RECEIVER_PORT/stats" 120 "$receiver" "$LOGDIR/$mode-receiver.log" || exit 1
  wrk -t2 -c"$CONNECTIONS" -d"$WARMUP" -s bench/capture.lua "$API" -- "$KEY" "warm-$mode" >/dev/null
  (while true; do
    line=""
    for s in "${services[@]}"; do line+="$s=$(rss_mib "${PID[$s]}") "; done
    echo "$line"
    sleep 0.5
  done) >"$LOGDIR/$mode.rss" &
  sampler=$!
  OUT=$(wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency -s bench/capture.lua "$API" -- "$KEY" "run-$mode")
  psql -q -tA -d "$DB" -c "SELECT id FROM payments WHERE status = 'CAPTURED' LIMIT 5000" >"$LOGDIR/$mode.payments"
  REFUNDS=$(wrk -t2 -c"$CONNECTIONS" -d"$DURATION" -s bench/refund-reservations.lua "$API" -- "$KEY" "refund-$mode" \
    "$LOGDIR/$mode.payments")
  # the relay publishes the last events, the worker executes the last reservations, webhook-delivery sends them
  poll 120 "" "end of the refunds and webhooks" settled || true
  kill "$sampler" 2>/dev/null || true
  for s in "${services[@]}"; do
    PEAK[$s]=$(grep -o "$s=[0-9]*" "$LOGDIR/$mode.rss" | cut -d= -f2 | sort -n | tail -n 1)
  done
  rate=$(awk '/Requests\/sec/ {print $2}' <<<"$OUT")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$OUT")
  statuses=$(grep '^statuses:' <<<"$OUT" || true)
  echo "$mode: captures/s $rate, p99 $p99 at $CONNECTIONS connections ($statuses), load average $(load)"
  echo "$mode: refund reservations/s $(awk '/Requests\/sec/ {print $2}' <<<"$REFUNDS")" \
    "($(grep -o 'Non-2xx or 3xx responses: [0-9]*' <<<"$REFUNDS" || echo 'every answer 2xx'))"
  read -r received bad < <(curl -fs --max-time 10 "http://127.0.0.1:$RECEIVER_PORT/stats")
  echo "$mode: webhooks received $received, bad signatures $bad"
  ((bad == 0)) || { echo "the receiver saw $bad webhooks with a bad signature" >&2; exit 1; }
  for s in "${services[@]}"; do
    echo "$mode $s ($(kind_of "$mode" "$s")): ready ${READY[$s]} ms (log: started in ${STARTED[$s]:-?}), idle RSS ${IDLE[$s]} MiB," \
      "RSS under capture and refund load (max) ${PEAK[$s]} MiB"
  done
  read -ra cmd <<<"$(command_of "$mode" reconciler)"
  set +e
  # the deadline inside /usr/bin/time: stopping time itself would leave the reconciler running (exit 124: timed out)
  /usr/bin/time -f '%e %M' -o "$LOGDIR/$mode-recon.time" timeout -k 10 "$RECON_TIMEOUT" "${cmd[@]}" \
    --date="$(date -u +%F)" --lookback=0 >"$LOGDIR/$mode-recon.log" 2>&1
  code=$?
  set -e
  read -r secs kb < <(tail -n 1 "$LOGDIR/$mode-recon.time") # after "Command exited with non-zero status" if any
  echo "$mode reconciler ($(kind_of "$mode" reconciler)): exit $code in ${secs} s over the day's captures," \
    "max RSS $((kb / 1024)) MiB"
  for s in "${services[@]}"; do kill "${PID[$s]}" 2>/dev/null || true; done
  kill "$receiver" 2>/dev/null || true
  for p in "${PID[@]}" "$receiver"; do wait_exit "$p" 60 "the stop of process $p" 2>/dev/null || true; done
done
echo "logs in $LOGDIR"
