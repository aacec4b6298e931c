#!/usr/bin/env bash
# Every benchmark behind one entry point, then one table. Each script also runs on its own (see its header).
# Logs: target/bench/<name>.log. Only measured numbers are printed; a benchmark that fails shows "failed".
#
#   bench/all.sh                  # builds once, then runs everything (about 13 minutes on 2 cores)
#   SKIP_BUILD=1 LINES=200000 bench/all.sh   # uses the jars as they are
set -uo pipefail
cd "$(dirname "$0")/.."
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
# the refunds worker only idles: no refunds in this load).
echo "== memory under load (local stack + 30 s of captures at 16 connections)"
rm -f .local/ready
./local-stack.sh >"$OUT/stack.log" 2>&1 &
STACK=$!
MEMORY=()
if wait_file .local/ready 300 "$STACK"; then
  # a merchant without a practical rate limit (the demo merchants' limit would turn most of the load into 429s)
  KEY=$(curl -fs -X POST http://127.0.0.1:8080/v1/admin/merchants -H "Authorization: Bearer dev-operator-token" \
    -H 'Content-Type: application/json' -d '{"name":"bench-memory","rateLimitPerSecond":1000000}' |
    sed -E 's/.*"apiKey":"([^"]+)".*/\1/')
  wrk -t2 -c16 -d30s -s bench/capture.lua http://127.0.0.1:8080 -- "$KEY" mem >"$OUT/memory-load.log" 2>&1 &
  LOAD=$!
  sleep 25
  for svc in payments-api:8080 outbox-relay:8081 refunds-worker:8082 psp-sandbox:8089; do
    pid=$(pgrep -f "quarkus.http.port=${svc#*:} " | head -n 1)
    rss=$([[ -n $pid ]] && awk '/VmRSS/ {printf "%.0f MiB", $2 / 1024}' "/proc/$pid/status")
    MEMORY+=("${svc%:*} RSS: ${rss:-n/a}")
  done
  wait "$LOAD"
fi
kill -TERM "$STACK" 2>/dev/null
wait "$STACK" 2>/dev/null

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
