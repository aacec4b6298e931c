#!/usr/bin/env bash
# Database failover under load (issue 40, docs/fault-suite.md "Database failover", docs/operations.md): a PostgreSQL 15
# primary and a streaming standby (Debian binaries, run as postgres, data under a temp dir), HAProxy in front of them
# standing in for CNPG's -rw Service, and the stack (./local-stack.sh, SKIP_BUILD=1, Kafka embedded) on that endpoint,
# with a second outbox-relay replica, and a merchant webhook endpoint on a loopback receiver (bench/WebhookReceiver.java)
# subscribed to every event of the run's merchant. With captures, refunds, PSP webhooks and merchant webhooks flowing:
# the standby's WAL receiver is paused for LAG_SECONDS (a slow replica), the primary is killed with kill -9 (postmaster
# and backends), the standby is promoted and HAProxy repointed. The services are not restarted. Afterwards the fault
# suite's invariants (scripts/fault-suite-invariants.sql), the relay's single leader and the delivery of every merchant
# webhook are checked, and the capture outage is measured.
#
#   scripts/fault-failover.sh           synchronous standby (synchronous_standby_names 'ANY 1 (...)', as the
#                                       strimzi-cnpg overlay): must pass
#   scripts/fault-failover.sh --async   asynchronous standby and synchronous_commit=local: shows the acknowledged
#                                       writes that the failover lost (exits 1 when it lost some)
#   env: WARM_SECONDS (10: load before the fault), LAG_SECONDS (2), DETECT_SECONDS (1: kill -9 to promotion),
#        AFTER_SECONDS (20: load after the promotion), SETTLE_SECONDS (60), WORKERS (4), FAILOVER_PORT_BASE (25700:
#        endpoint +0, primary +1, standby +2, services +10..+25, webhook receiver +16), KEEP=1 (leave the data and
#        results for inspection)
# The jars must be built (./mvnw -B package -DskipTests). Needs root or the postgres user, haproxy (installed with
# apt-get when missing and root), jq, ss.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
MODE=sync
[[ ${1:-} == --async ]] && MODE=async
WARM_SECONDS=${WARM_SECONDS:-10} LAG_SECONDS=${LAG_SECONDS:-2} DETECT_SECONDS=${DETECT_SECONDS:-1}
AFTER_SECONDS=${AFTER_SECONDS:-20} SETTLE_SECONDS=${SETTLE_SECONDS:-60} WORKERS=${WORKERS:-4}
BASE=${FAILOVER_PORT_BASE:-25700}
EP_PORT=$BASE PRIMARY_PORT=$((BASE + 1)) STANDBY_PORT=$((BASE + 2)) RELAY2_PORT=$((BASE + 15))
RELAY2_MANAGEMENT_PORT=$((BASE + 25)) RECEIVER_PORT=$((BASE + 16))
# The fault suite's short retry schedules (scripts/fault-suite.sh says why), so that the run settles in a minute.
export PAYMENTS_PSP_STUCK_AFTER=${PAYMENTS_PSP_STUCK_AFTER:-15s} PAYMENTS_RESOLVER_BACKOFF=${PAYMENTS_RESOLVER_BACKOFF:-2s,5s,10s,30s}
export PAYMENTS_RESOLVER_LEASE=${PAYMENTS_RESOLVER_LEASE:-20s} REFUNDS_RETRY_INITIAL_BACKOFF=${REFUNDS_RETRY_INITIAL_BACKOFF:-2s}
export REFUNDS_RETRY_MAX_BACKOFF=${REFUNDS_RETRY_MAX_BACKOFF:-10s} REFUNDS_SYNC_EVERY=${REFUNDS_SYNC_EVERY:-5s}
export REFUNDS_SYNC_LEASE=${REFUNDS_SYNC_LEASE:-20s} REFUNDS_SYNC_UNSCHEDULED_AFTER=${REFUNDS_SYNC_UNSCHEDULED_AFTER:-20s}
# Merchant webhooks likewise: a delivery whose outcome could not be recorded (the database gone mid-attempt) is sent
# again when its lease ends, after 15 s instead of 1 min (above the 10 s attempt timeout, as the lease must be); a
# failed attempt is retried within 1-5 s instead of 5 s, 5 min, ...
export PAYMENTS_WEBHOOKS_LEASE=${PAYMENTS_WEBHOOKS_LEASE:-15s} PAYMENTS_WEBHOOKS_SCHEDULE=${PAYMENTS_WEBHOOKS_SCHEDULE:-1s,2s,5s}
export API_PORT=$((BASE + 10)) RELAY_PORT=$((BASE + 11)) WORKER_PORT=$((BASE + 12)) DELIVERY_PORT=$((BASE + 13))
export PSP_PORT=$((BASE + 14)) API_MANAGEMENT_PORT=$((BASE + 20)) RELAY_MANAGEMENT_PORT=$((BASE + 21))
export WORKER_MANAGEMENT_PORT=$((BASE + 22)) DELIVERY_MANAGEMENT_PORT=$((BASE + 23))
export PAYMENTS_ADMIN_TOKEN=${PAYMENTS_ADMIN_TOKEN:-fault-failover-admin}
# The endpoint is the database of the stack; Kafka stays local-infra's in-process broker.
export PAYMENTS_PG_HOST=127.0.0.1 PAYMENTS_PG_PORT=$EP_PORT PAYMENTS_PG_USER=postgres PAYMENTS_PG_PASSWORD=
unset PAYMENTS_KAFKA_BOOTSTRAP_SERVERS
API=http://127.0.0.1:$API_PORT
PSP=http://127.0.0.1:$PSP_PORT
PG_BIN=/usr/lib/postgresql/15/bin
OUT=$ROOT/.local/fault-failover
START=$SECONDS
# shellcheck source=lib.sh
source scripts/lib.sh

say() { printf '[failover %4ds] %s\n' $((SECONDS - START)) "$*"; }
die() { say "ERROR: $*"; exit 2; }
now_ms() { date +%s%3N; }

for m in payments-api outbox-relay refunds-worker webhook-delivery psp-sandbox reconciler; do
  [[ -f $m/target/quarkus-app/quarkus-run.jar ]] || die "$m is not built: ./mvnw -B package -DskipTests first"
done
[[ -x $PG_BIN/postgres ]] || die "no PostgreSQL 15 in $PG_BIN (apt-get install postgresql-15)"
if ! command -v haproxy >/dev/null; then
  [[ $(id -u) == 0 ]] || die "haproxy is missing (apt-get install haproxy)"
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends haproxy >/dev/null; } || die "could not install haproxy"
fi
for tool in jq ss; do command -v $tool >/dev/null || die "$tool is missing"; done

rm -rf "$OUT" && mkdir -p "$OUT/results"
WORK=$(mktemp -d /tmp/fault-failover.XXXXXX)
chmod 755 "$WORK"
[[ $(id -u) == 0 ]] && chown postgres "$WORK"
PIDS=()
STACK_PID=
PRIMARY=$WORK/primary STANDBY=$WORK/standby
# PostgreSQL refuses to run as root: as postgres then (the data directories are its own).
if [[ $(id -u) == 0 ]]; then as_pg() { runuser -u postgres -- "$@"; }; else as_pg() { "$@"; }; fi
postmaster() { [[ -f $1/postmaster.pid ]] && head -1 "$1/postmaster.pid"; }
cleanup() {
  trap - INT TERM EXIT
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  [[ -n $STACK_PID ]] && kill "$STACK_PID" 2>/dev/null && wait "$STACK_PID" 2>/dev/null
  stop_all "${PIDS[@]}"
  [[ -f $WORK/haproxy.pid ]] && kill "$(cat "$WORK/haproxy.pid")" 2>/dev/null
  for dir in "$PRIMARY" "$STANDBY"; do
    [[ -f $dir/postmaster.pid ]] && as_pg "$PG_BIN/pg_ctl" -D "$dir" -m immediate stop >/dev/null 2>&1
  done
  if [[ -n ${KEEP:-} ]]; then say "kept $WORK and $OUT"; else rm -rf "$WORK" "$OUT/results"; fi
}
trap cleanup INT TERM EXIT

# --- 1. Primary, standby, endpoint ---------------------------------------------------------------------------
say "PostgreSQL primary :$PRIMARY_PORT, $MODE standby :$STANDBY_PORT, HAProxy endpoint :$EP_PORT"
as_pg "$PG_BIN/initdb" -D "$PRIMARY" -U postgres --auth=trust -E UTF8 --locale=C >"$OUT/initdb.log" 2>&1 ||
  die "initdb failed ($OUT/initdb.log)"
cat >>"$PRIMARY/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$WORK'
port = $PRIMARY_PORT
max_connections = 300
wal_level = replica
max_wal_senders = 4
hot_standby = on
CONF
# Loopback only, a throwaway cluster: trust (the services' passwords are ignored).
printf 'local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n' \
  >"$PRIMARY/pg_hba.conf"
as_pg "$PG_BIN/pg_ctl" -D "$PRIMARY" -l "$WORK/primary.log" -w start >/dev/null || die "primary did not start"
as_pg "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -D "$STANDBY" -R -X stream \
  >"$OUT/basebackup.log" 2>&1 || die "pg_basebackup failed ($OUT/basebackup.log)"
cat >>"$STANDBY/postgresql.auto.conf" <<CONF
port = $STANDBY_PORT
primary_conninfo = 'host=127.0.0.1 port=$PRIMARY_PORT user=postgres application_name=failover_standby'
CONF
as_pg "$PG_BIN/pg_ctl" -D "$STANDBY" -l "$WORK/standby.log" -w start >/dev/null || die "standby did not start"
pg_primary() { psql -X -q -t -A -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -d postgres -c "$1"; }
# Set on the primary after the base backup, so the standby does not inherit it: promoted, it runs alone (CNPG lowers
# the requirement when no standby is left the same way).
if [[ $MODE == sync ]]; then
  pg_primary "ALTER SYSTEM SET synchronous_standby_names = 'ANY 1 (failover_standby)'"
else
  pg_primary "ALTER SYSTEM SET synchronous_commit = 'local'"
fi
pg_primary "SELECT pg_reload_conf()" >/dev/null
replication() { pg_primary "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'failover_standby'"; }
want_state=$([[ $MODE == sync ]] && echo quorum || echo async)
streaming() { [[ $(replication) == "$want_state" ]]; }
poll 30 "" "standby streaming ($want_state)" streaming || die "no replication"

haproxy_config() { # PORT: the one server behind the endpoint
  cat >"$WORK/haproxy.cfg" <<CFG
global
  pidfile $WORK/haproxy.pid
defaults
  mode tcp
  timeout connect 2s
  timeout client 1h
  timeout server 1h
listen rw
  bind 127.0.0.1:$EP_PORT
  # like a Service whose endpoint left: a dead server's sessions are cut, new ones refused
  server db 127.0.0.1:$1 check inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
CFG
}
haproxy_config "$PRIMARY_PORT"
haproxy -f "$WORK/haproxy.cfg" -D >"$OUT/haproxy.log" 2>&1 || die "haproxy did not start ($OUT/haproxy.log)"
poll 10 "" "HAProxy on :$EP_PORT" port_open "$EP_PORT" || die "no endpoint"

# --- 2. The stack on the endpoint ------------------------------------------------------------------------------
say "starting the stack (./local-stack.sh, SKIP_BUILD=1, api :$API_PORT, database via :$EP_PORT)"
rm -f .local/ready
SKIP_BUILD=1 ./local-stack.sh >"$OUT/stack.log" 2>&1 &
STACK_PID=$!
wait_file .local/ready "${STACK_WAIT_SECONDS:-600}" "$STACK_PID" || { tail -n 20 "$OUT/stack.log"; die "the stack did not start"; }
# shellcheck disable=SC1091
source .local/env
export PGHOST=127.0.0.1 PGPORT=$EP_PORT PGUSER=postgres PGDATABASE=payments
sql() { psql -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }
# A second relay replica: the leadership must settle on exactly one after the failover.
start_jar "$ROOT/.local/logs/outbox-relay-2.log" "http://127.0.0.1:$RELAY2_MANAGEMENT_PORT/q/health/ready" \
  -Xmx384m -Dquarkus.http.port="$RELAY2_PORT" -Dquarkus.management.port="$RELAY2_MANAGEMENT_PORT" \
  -jar outbox-relay/target/quarkus-app/quarkus-run.jar || die "second relay did not start"
KEY=$(curl -fsS -H "Authorization: Bearer $PAYMENTS_ADMIN_TOKEN" -H 'Content-Type: application/json' \
  -d '{"name":"fault failover","rateLimitPerSecond":100000}' "$API/v1/admin/merchants" | jq -r .apiKey)
[[ $KEY == sk_* ]] || die "could not create the merchant"
# The merchant's webhook endpoint, every event type, on a receiver that answers 200 at once and checks each signature
# (Vert.x from webhook-delivery's own jars).
ENDPOINT=$(curl -fsS -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
  -d "{\"url\":\"http://127.0.0.1:$RECEIVER_PORT/hooks\",\"events\":[\"*\"]}" "$API/v1/webhook_endpoints")
ENDPOINT_ID=$(jq -r .id <<<"$ENDPOINT")
WEBHOOK_SECRET=$(jq -r .secret <<<"$ENDPOINT")
[[ $WEBHOOK_SECRET == whsec_* ]] || die "could not register the webhook endpoint: $ENDPOINT"
"$JAVA" -Xmx128m -cp "$ROOT/webhook-delivery/target/quarkus-app/lib/main/*" bench/WebhookReceiver.java "$RECEIVER_PORT" \
  "$WEBHOOK_SECRET" >"$OUT/receiver.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$RECEIVER_PORT/stats" 120 "$!" "$OUT/receiver.log" || die "the webhook receiver did not start"
say "stack ready; merchant webhooks to :$RECEIVER_PORT (endpoint $ENDPOINT_ID)"

# --- 3. Load: the fault suite's load client (scripts/load-client.sh), each request logged with its time ----------
LOAD_PREFIX=ff LOAD_RETRY_PAUSE=0.5
# shellcheck source=load-client.sh
source scripts/load-client.sh
# PSP webhooks flow all along (the sandbox sends one per charge and refund), some of them twice.
curl -fsS -o /dev/null -X PUT -H 'Content-Type: application/json' -d '{"webhookDuplicateRate":0.2}' "$PSP/test/faults"
for w in $(seq 1 "$WORKERS"); do load_worker "$w" & PIDS+=($!); done
WORKER_PIDS=("${PIDS[@]: -$WORKERS}")
say "load: $WORKERS workers"
sleep "$WARM_SECONDS"

# --- 4. The failover -------------------------------------------------------------------------------------------
standby_pid=$(postmaster "$STANDBY")
receiver=$(ps -o pid=,args= --ppid "$standby_pid" | awk '/walreceiver/ {print $1}')
T_LAG=$(now_ms)
if [[ -n $receiver && $LAG_SECONDS != 0 ]]; then
  kill -STOP "$receiver"
  say "standby's WAL receiver paused for $LAG_SECONDS s (a slow replica)"
  sleep "$LAG_SECONDS"
fi
say "replication before the kill: $(pg_primary "SELECT sync_state || ', lag ' || pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn) || ' bytes' FROM pg_stat_replication" 2>&1)"
primary_pid=$(postmaster "$PRIMARY")
# The whole server dies at once, as with its node: the postmaster and every backend.
mapfile -t backends < <(ps -o pid= --ppid "$primary_pid")
kill -9 "$primary_pid" "${backends[@]}"
T_KILL=$(now_ms)
say "kill -9 of the primary (postmaster $primary_pid and its processes)"
# The WAL the paused receiver had not read is still in its socket: resumed, it would read it after the primary's
# death. Killed, it is gone, as when the network dropped it (the standby restarts its processes and replays what it
# has, then streams from nobody).
[[ -n $receiver ]] && kill -9 "$receiver" 2>/dev/null && kill -CONT "$receiver" 2>/dev/null
sleep "$DETECT_SECONDS"
as_pg "$PG_BIN/pg_ctl" -D "$STANDBY" -w promote >/dev/null || die "promotion failed"
T_PROMOTE=$(now_ms)
haproxy_config "$STANDBY_PORT"
haproxy -f "$WORK/haproxy.cfg" -D -sf "$(cat "$WORK/haproxy.pid")" >>"$OUT/haproxy.log" 2>&1 || die "haproxy reload failed"
T_REPOINT=$(now_ms)
say "standby promoted, endpoint repointed to :$STANDBY_PORT ($((T_REPOINT - T_KILL)) ms after the kill)"
sleep "$AFTER_SECONDS"
load_stop
say "load stopped; waiting for the clients to settle their keys"
wait "${WORKER_PIDS[@]}"
curl -fsS -o /dev/null -X DELETE "$PSP/test/faults"

# --- 5. Settle -------------------------------------------------------------------------------------------------
# The merchant's events (merchant_events: every payment-events row, written with it) of a type that has webhooks
# (webhook-delivery's FanOutConsumer.TYPES) without a SUCCEEDED delivery to the endpoint: not fanned out yet, pending,
# or given up.
UNDELIVERED="SELECT count(*) FROM merchant_events e WHERE e.merchant_id = (SELECT merchant_id FROM webhook_endpoints
  WHERE id = '$ENDPOINT_ID') AND e.type IN ('PaymentCaptured', 'PaymentFailed', 'PaymentDisputed', 'RefundSucceeded',
  'RefundFailed') AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = '$ENDPOINT_ID' AND
  d.event_id = e.id AND d.status = 'SUCCEEDED')"
deadline=$((SECONDS + SETTLE_SECONDS))
until [[ $(unsettled "$UNDELIVERED") == 0 ]] || ((SECONDS >= deadline)); do sleep 2; done
say "settled"

# --- 6. Evidence and invariants (the fault suite's, scripts/fault-suite-invariants.sql) ------------------------
load_evidence
# Payments (automatic ones: the outage's figures), "start_ms end_ms code", in time order.
awk '$3 == "pay" {print $1, $2, $4}' "$OUT/requests.txt" >"$OUT/captures.txt"
./local-stack.sh events payment-events 15 end 2>/dev/null |
  sed -n 's#^\([0-9]*\)/\([0-9]*\) \([^ ]*\) .*"eventId": *"\([^"]*\)".*#\1\t\2\t\3\t\4#p' >"$OUT/kafka.tsv" &
TAIL_PID=$!
# shellcheck source=invariants.sh
source scripts/invariants.sh
# The sandbox's counters of every payment and refund the clients were answered or the database has.
{ sql -c "SELECT id FROM payments UNION SELECT id FROM refunds"; cut -f2 "$OUT/client.tsv" | grep .; } | sort -u |
  psp_evidence "$PSP"
curl -fsS "$PSP/test/webhooks" | jq -r '.[] | [.eventId, .copy, .status, .reference] | @tsv' >"$OUT/webhooks.tsv"
wait "$TAIL_PID"
echo
printf '%-70s %s\n' "invariant" "violations"
check_invariants_file
# Failover's own: a charge at the PSP whose payment the database lost (an acknowledged write gone), one relay leader.
check "no PSP charge without its payment (lost acknowledged write)" \
  "SELECT count(*) FROM psp WHERE charge_movements > 0 AND reference IN (SELECT payment_id FROM client) AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.id::text = psp.reference);"
leaders=0
for port in "$RELAY_MANAGEMENT_PORT" "$RELAY2_MANAGEMENT_PORT"; do
  l=$(curl -fsS "http://127.0.0.1:$port/q/metrics" | awk '/^outbox_relay_leader[ {]/ {print int($NF)}' | head -1)
  leaders=$((leaders + ${l:-0}))
done
INVARIANTS=$((INVARIANTS + 1))
VIOLATIONS=$((VIOLATIONS + (leaders == 1 ? 0 : 1)))
printf '%-70s %s\n' "one relay leader among the two replicas (found $leaders)" "$((leaders == 1 ? 0 : 1))"
# Over the whole run: a sync commit waiting for the paused standby when the primary dies is answered too.
bad_codes=$(awk '$3 !~ /^(201|202|402|409|429|503)$/' "$OUT/captures.txt" | wc -l)
INVARIANTS=$((INVARIANTS + 1))
VIOLATIONS=$((VIOLATIONS + bad_codes))
printf '%-70s %s\n' "captures answered only 201/202/402/409/429/503 (no 500, no lost answer)" "$bad_codes"
count_violations "authorizations answered only 201/202/402/409/429/503 (no 500, no lost answer)" \
  "$(awk '$3 == "auth" && $4 !~ /^(201|202|402|409|429|503)$/' "$OUT/requests.txt" | wc -l)"
count_violations "captures/cancels of them answered only 200/202/409/429/503 (idem)" \
  "$(awk '($3 == "capture" || $3 == "cancel") && $4 !~ /^(200|202|409|429|503)$/' "$OUT/requests.txt" | wc -l)"
count_violations "refunds answered only 202/409/422/429/503 (no 500, no lost answer)" \
  "$(awk '$3 == "refund" && $4 !~ /^(202|409|422|429|503)$/' "$OUT/requests.txt" | wc -l)"
count_violations "replays and reads answer the same payment" "$(cat "$OUT"/results/w*.bad 2>/dev/null | wc -l)"
# Merchant webhooks: every event of the run delivered (its delivery SUCCEEDED, at least one attempt answered 2xx),
# the receiver got a request for each and every signature verified; no event at all would make this trivially 0.
check "every merchant webhook event delivered to the endpoint" \
  "SELECT ($UNDELIVERED) + (SELECT CASE WHEN count(*) = 0 THEN 1 ELSE 0 END FROM webhook_deliveries WHERE endpoint_id = '$ENDPOINT_ID');"
WEBHOOKS_DELIVERED=$(sql -c "SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = '$ENDPOINT_ID' AND status = 'SUCCEEDED'")
read -r RECEIVED BAD_SIGNATURES < <(curl -fsS "http://127.0.0.1:$RECEIVER_PORT/stats" || echo "0 1")
count_violations "receiver: a request per delivery ($RECEIVED for $WEBHOOKS_DELIVERED), every signature valid" \
  "$((BAD_SIGNATURES + (RECEIVED < WEBHOOKS_DELIVERED ? WEBHOOKS_DELIVERED - RECEIVED : 0)))"
lost=$(evidence_sql "SELECT count(*) FROM client c WHERE c.payment_id <> '' AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.id::text = c.payment_id);")

# --- 7. Figures ------------------------------------------------------------------------------------------------
# Recovery: the first success (201/402) of a capture sent after the promotion. The window: every capture answered
# from the pause of the WAL receiver until then (by the time of its answer).
recovered=$(awk -v p="$T_PROMOTE" '$1 >= p && $3 ~ /^(201|402)$/ {print $2; exit}' "$OUT/captures.txt")
window_end=${recovered:-$(sort -n -k2 "$OUT/captures.txt" | tail -1 | cut -d' ' -f2)}
echo
say "mode: $MODE standby; WAL receiver paused $LAG_SECONDS s, kill -9 -> promotion $((T_PROMOTE - T_KILL)) ms, endpoint repointed $((T_REPOINT - T_KILL)) ms after the kill"
if [[ -n $recovered ]]; then
  say "captures succeed again $((recovered - T_PROMOTE)) ms after the promotion (target 15000), $((recovered - T_KILL)) ms after the kill"
else
  say "captures did NOT succeed again after the promotion"
  VIOLATIONS=$((VIOLATIONS + 1))
fi
say "captures answered from the pause to the recovery ($((window_end - T_LAG)) ms): $(awk -v a="$T_LAG" -v b="$window_end" '$2 >= a && $2 <= b {c[$3]++} END {for (k in c) printf "%s=%d ", k, c[k]}' "$OUT/captures.txt")"
say "slowest capture answer in that window: $(awk -v a="$T_LAG" -v b="$window_end" '$2 >= a && $2 <= b && $2 - $1 > m {m = $2 - $1} END {print m + 0}' "$OUT/captures.txt") ms"
say "acknowledged payments (201/202/402) missing after the failover: $lost"
say "payments: $(sql -c "SELECT string_agg(status || '=' || n, ' ') FROM (SELECT status, count(*) n FROM payments GROUP BY status ORDER BY status) t")"
say "refunds: $(sql -c "SELECT coalesce(string_agg(status || '=' || n, ' '), 'none') FROM (SELECT status, count(*) n FROM refunds GROUP BY status ORDER BY status) t"); PSP webhooks stored: $(sql -c 'SELECT count(*) FROM psp_webhook_events')"
say "merchant webhooks: $(sql -c "SELECT format('%s events, %s deliveries SUCCEEDED, %s attempts (%s failed)', (SELECT count(*) FROM merchant_events
  WHERE merchant_id = w.merchant_id), (SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = w.id AND status = 'SUCCEEDED'),
  count(a.delivery_id), count(a.delivery_id) FILTER (WHERE a.outcome <> 'SUCCEEDED')) FROM webhook_endpoints w LEFT JOIN webhook_deliveries d ON
  d.endpoint_id = w.id LEFT JOIN webhook_delivery_attempts a ON a.delivery_id = d.id WHERE w.id = '$ENDPOINT_ID' GROUP BY w.id,
  w.merchant_id"); the receiver got $RECEIVED requests, $BAD_SIGNATURES badly signed"
echo
echo "capture requests:     $(wc -l <"$OUT/captures.txt")"
echo "invariants checked:   $INVARIANTS"
echo "violations found:     $VIOLATIONS"
echo "duration:             $((SECONDS - START)) s"
((VIOLATIONS == 0)) || exit 1
