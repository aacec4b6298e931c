#!/usr/bin/env bash
# Most benchmarks behind one entry point, then one table: capture, capture SQL alone, refund reservations, relay,
# reconciliation, sandbox, webhook delivery, resident memory under load. Not here, each run alone:
# bench/native-vs-jvm.sh (needs native executables) and bench/refund-execution.sh (refunds executed end to end at a
# given PSP latency). Each script also runs on its own (see its header).
# Logs: target/bench/<name>.log. Only measured numbers are printed; a benchmark that fails shows "failed".
#
#   bench/all.sh                  # builds once, then runs them all (13 minutes on 2 cores on 2026-12-01, before the
#                                 # webhook-delivery benchmark joined; not timed since)
#   SKIP_BUILD=1 LINES=200000 bench/all.sh   # uses the jars as they are
# The memory part runs ./local-stack.sh on its ports (API_PORT, API_MANAGEMENT_PORT, ... as local-stack.sh reads
# them; defaults 8080, 9000, ...) with an operator token of its own.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=target/bench
mkdir -p "$OUT"
source scripts/lib.sh

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  echo "== building (./mvnw package -DskipTests)"
  ./mvnw -B -q -ntp package -DskipTests || exit 1
fi
export SKIP_BUILD=1 # the scripts below use what was just built

run() { # NAME SCRIPT...
  local name=$1
  shift
  echo "== $name"
  if "$@" >"$OUT/$name.log" 2>&1; then echo "   done ($OUT/$name.log)"; else echo "   failed ($OUT/$name.log)"; fi
}

run capture bench/capture.sh
run capture-sql bench/capture-sql.sh
run refunds bench/refund-reservations.sh
run relay bench/relay.sh
run reconcile bench/reconcile.sh
run sandbox bench/psp-sandbox-charges.sh
run webhooks bench/webhook-delivery.sh

# Resident memory of each service of the local stack while it serves captures (the relay publishes their events;
# the refunds worker and webhook-delivery only idle: no refunds and no webhook endpoints in this load): the largest
# of the samples taken every 0.5 s during the load, of the processes local-stack.sh lists in .local/pids.
echo "== memory under load (local stack + 30 s of captures at 16 connections)"
export API_PORT=${API_PORT:-8080} API_MANAGEMENT_PORT=${API_MANAGEMENT_PORT:-9000}
export PAYMENTS_ADMIN_TOKEN=bench-operator-token-$RANDOM$RANDOM
MEASURED=(payments-api outbox-relay refunds-worker webhook-delivery psp-sandbox)
declare -A STACK_PID=() PEAK=()
rm -f .local/ready
./local-stack.sh >"$OUT/stack.log" 2>&1 &
STACK=$!
MEMORY=()
sample_rss() { # LOAD_PID: records each service's RSS in PEAK; succeeds once the load has ended
  local module rss
  for module in "${MEASURED[@]}"; do
    rss=$(rss_mib "${STACK_PID[$module]:-0}")
    ((rss > ${PEAK[$module]:-0})) && PEAK[$module]=$rss
  done
  exited "$1"
}
if wait_file .local/ready 300 "$STACK"; then
  while read -r module pid; do STACK_PID[$module]=$pid; done <.local/pids
  # a merchant without a practical rate limit (the demo merchants' limit would turn most of the load into 429s)
  KEY=$(curl -fs --max-time 30 -X POST "http://127.0.0.1:$API_MANAGEMENT_PORT/v1/admin/merchants" \
    -H "Authorization: Bearer $PAYMENTS_ADMIN_TOKEN" \
    -H 'Content-Type: application/json' -d '{"name":"bench-memory","rateLimitPerSecond":1000000}' |
    sed -E 's/.*"apiKey":"([^"]+)".*/\1/')
  wrk -t2 -c16 -d30s -s bench/capture.lua "http://127.0.0.1:$API_PORT" -- "$KEY" mem >"$OUT/memory-load.log" 2>&1 &
  LOAD=$!
  POLL_EVERY=0.5 poll 90 "" "end of the capture load" sample_rss "$LOAD" || true
  wait_exit "$LOAD" 10 "the capture load" || true
  for module in "${MEASURED[@]}"; do
    MEMORY+=("$module RSS (max): $( ((${PEAK[$module]:-0} > 0)) && echo "${PEAK[$module]} MiB" || echo n/a)")
  done
fi
kill -TERM "$STACK" 2>/dev/null
wait_exit "$STACK" 60 "the local stack" || true

pick() { grep -hE "$2" "$OUT/$1.log" 2>/dev/null | sed 's/^/    /' || true; }
echo
echo "=================== results ($(nproc) cores, $(date -u +%F)) ==================="
echo "capture (payments-api + sandbox + PostgreSQL on this machine):"; pick capture '^connections='
echo "capture statements in PostgreSQL alone (pgbench):"; pick capture-sql '^clients='
echo "refund reservations:"; pick refunds 'connections=|reservations/s'
echo "outbox-relay:"; pick relay '^(drain|delay)'
echo "reconciliation of 1M lines:"; pick reconcile '^load \(COPY'
echo "psp-sandbox:"; pick sandbox '^== result'
echo "webhook-delivery (one instance, receiver on loopback):"; pick webhooks 'deliveries/s|^attempt|^receiver'
echo "resident memory under load (JVM mode, -Xmx384m; $(awk '/Requests\/sec/ {print $2}' "$OUT/memory-load.log" 2>/dev/null) captures/s):"
printf '    %s\n' "${MEMORY[@]:-n/a}"
