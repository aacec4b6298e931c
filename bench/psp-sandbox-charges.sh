#!/usr/bin/env bash
# Charge throughput of the PSP sandbox at zero latency: builds the jar (unless SKIP_BUILD=1), starts it,
# warms it up, runs wrk against POST /v1/charges with unique idempotency keys, prints charges/s and
# latency percentiles and the sandbox's CPU time per charge (a figure less sensitive to other processes
# on the machine), checks that every 200 became exactly one settlement line, and stops the sandbox.
#
#   bench/psp-sandbox-charges.sh                 # defaults below
#   DURATION=60s CONNECTIONS=128 bench/psp-sandbox-charges.sh
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${PORT:-18089}
DURATION=${DURATION:-30s}
WARMUP=${WARMUP:-10s}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-1}
JAVA_OPTS=${JAVA_OPTS:--Xms2g -Xmx2g -XX:+UseParallelGC}
JAR=psp-sandbox/target/quarkus-app/quarkus-run.jar
BASE=http://127.0.0.1:$PORT

source bench/lib.sh
bench_build psp-sandbox
ensure_wrk

LOG=$(mktemp /tmp/psp-sandbox-bench.XXXXXX.log)
# shellcheck disable=SC2086
start_jar "$LOG" "$BASE/q/health/ready" $JAVA_OPTS -Dquarkus.http.port="$PORT" -Dquarkus.log.level=WARN -jar "$JAR" ||
  exit 1
PID=$STARTED_PID

echo "== warm-up ($WARMUP)"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s bench/psp-sandbox-charges.lua "$BASE" -- warmup >/dev/null
curl -fs -X DELETE "$BASE/test/state" >/dev/null

cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$PID/stat"; }
LOAD_BEFORE=$(cut -d' ' -f1 /proc/loadavg)
CPU_BEFORE=$(cpu_seconds)
echo "== measure: $DURATION, $CONNECTIONS connections, $THREADS wrk thread(s), $(nproc) cores, JAVA_OPTS=$JAVA_OPTS"
OUT=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s bench/psp-sandbox-charges.lua "$BASE" -- run)
CPU_AFTER=$(cpu_seconds)
LOAD_AFTER=$(cut -d' ' -f1 /proc/loadavg)
echo "$OUT"

RATE=$(echo "$OUT" | awk '/Requests\/sec/ {print $2}')
TOTAL=$(echo "$OUT" | awk '/requests in/ {print $1}')
ERRORS=$(echo "$OUT" | awk '/Non-2xx/ {print $5}')
TODAY=$(date -u +%F)
TOMORROW=$(date -u -d tomorrow +%F)
LINES=0
for d in "$TODAY" "$TOMORROW"; do
  n=$(curl -fs "$BASE/v1/settlements/$d.csv" | tail -n +2 | grep -c ',CHARGE,' || true)
  LINES=$((LINES + n))
done
CPU=$(echo "$CPU_AFTER - $CPU_BEFORE" | bc)
PER_CPU_S=$(echo "$TOTAL / $CPU" | bc)
echo "== result: charges/s=$RATE requests=$TOTAL non-2xx=${ERRORS:-0} settlement CHARGE lines=$LINES"
echo "== sandbox CPU: ${CPU}s for $TOTAL charges = $PER_CPU_S charges per CPU-second;" \
  "1-min load average $LOAD_BEFORE -> $LOAD_AFTER on $(nproc) cores (other processes compete with the run when it exceeds ~2)"
