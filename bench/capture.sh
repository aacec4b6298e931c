#!/usr/bin/env bash
# Capture throughput of payments-api (POST /v1/payments, unique Idempotency-Keys) against the PSP sandbox and a local
# PostgreSQL, all on this machine. Prints captures/s and p50/p99 at 16 and 64 connections, and checks that every 201
# became exactly one captured payment.
#
#   bench/capture.sh                         # builds the jars unless SKIP_BUILD=1
#   DURATION=60s bench/capture.sh
#   PSP_LATENCY_MS=300 CONNECTIONS_LIST="1000" PG_DURABLE=1 bench/capture.sh   # a real PSP's latency, durable PG
# Knobs: PSP_LATENCY_MS (the sandbox's psp.latency.fixed, default 0); PG_DURABLE=1 for a durable PostgreSQL (fsync and
# synchronous_commit on), 0 (default) for local-infra's embedded one (both off). PostgreSQL: PAYMENTS_PG_HOST/PORT/
# USER/PASSWORD if set (then its own settings apply; the result lines say which), otherwise as PG_DURABLE says.
set -euo pipefail
cd "$(dirname "$0")/.."

API_PORT=${API_PORT:-18080}
API_MANAGEMENT_PORT=${API_MANAGEMENT_PORT:-18090} # health and metrics (management interface)
PSP_PORT=${PSP_PORT:-18089}
DURATION=${DURATION:-30s}
# Long enough for the JIT: a 15 s warm-up measured a service still compiling (about 30 % of its CPU in C2).
WARMUP=${WARMUP:-60s}
PSP_LATENCY_MS=${PSP_LATENCY_MS:-0}
CONNECTIONS_LIST=${CONNECTIONS_LIST:-"16 64"}
THREADS=${THREADS:-2}
# wrk needs at least one connection per thread
API_OPTS=${API_OPTS:--Xms1g -Xmx1g -XX:+UseParallelGC}
# The sandbox keeps every charge in memory, so each young collection copies all charges made since the last one:
# 40-120 ms pauses with ParallelGC or SerialGC on 2 busy cores, which stall every capture in flight. ZGC collects
# concurrently; the sandbox's pauses are not the API's latency.
PSP_OPTS=${PSP_OPTS:--Xms1g -Xmx1g -XX:+UseZGC}
ADMIN_TOKEN=bench-operator-token-$RANDOM$RANDOM
API=http://127.0.0.1:$API_PORT
API_MANAGEMENT=http://127.0.0.1:$API_MANAGEMENT_PORT
PSP=http://127.0.0.1:$PSP_PORT

source bench/lib.sh
bench_build payments-api,psp-sandbox,local-infra
ensure_wrk
LOGDIR=$(mktemp -d /tmp/capture-bench.XXXXXX)
start_postgres "$LOGDIR"
DB=bench_$(date +%s)
bench_database "$DB"

# shellcheck disable=SC2086
start_jar "$LOGDIR/psp.log" "$PSP/q/health/ready" $PSP_OPTS -Dquarkus.http.port="$PSP_PORT" -Dquarkus.log.level=WARN \
  -Dpsp.latency.fixed="${PSP_LATENCY_MS}ms" -jar psp-sandbox/target/quarkus-app/quarkus-run.jar || exit 1

# The API migrates its fresh database at start (as the migration Job does) and then serves.
# shellcheck disable=SC2086
QUARKUS_FLYWAY_MIGRATE_AT_START=true PAYMENTS_ADMIN_TOKEN="$ADMIN_TOKEN" PSP_URL="$PSP" \
start_jar "$LOGDIR/api.log" "$API_MANAGEMENT/q/health/ready" $API_OPTS -Dquarkus.http.port="$API_PORT" \
  -Dquarkus.management.port="$API_MANAGEMENT_PORT" -Dquarkus.log.level=WARN \
  -jar payments-api/target/quarkus-app/quarkus-run.jar || exit 1

KEY=$(curl -fs -X POST "$API/v1/admin/merchants" -H "Authorization: Bearer $ADMIN_TOKEN" \
  -H 'Content-Type: application/json' -d '{"name":"bench","rateLimitPerSecond":1000000}' |
  sed -E 's/.*"apiKey":"([^"]+)".*/\1/')

echo "== warm-up ($WARMUP, 16 connections)"
wrk -t"$THREADS" -c16 -d"$WARMUP" -s bench/capture.lua "$API" -- "$KEY" warmup >/dev/null
# The tables' first autovacuum and autoanalyze round, a minute into the load, stalled the first measured run
# (docs/benchmarks.md): run it here, as a server that has been up for a while has long done it.
psql -q -d "$DB" -c "VACUUM ANALYZE" >/dev/null

DURABILITY=$(pg_durability "$DB")
echo "machine: $(nproc) cores, load average $(cut -d" " -f1-3 /proc/loadavg); API_OPTS=$API_OPTS; PSP_OPTS=$PSP_OPTS"
echo "psp latency: ${PSP_LATENCY_MS} ms; $DURABILITY"
# captures per statement (claim, outcome) so far: "sum count" of each, from the API's metrics
batch_totals() {
  curl -fs "$API_MANAGEMENT/q/metrics" | awk '
    /^payments_capture_batch_size_(sum|count)\{.*statement="claim"/ {c[$1 ~ /_sum/ ? "s" : "n"] = $2}
    /^payments_capture_batch_size_(sum|count)\{.*statement="outcome"/ {o[$1 ~ /_sum/ ? "s" : "n"] = $2}
    END {print c["s"] + 0, c["n"] + 0, o["s"] + 0, o["n"] + 0}'
}
run=0
for c in $CONNECTIONS_LIST; do
  read -r CS0 CN0 OS0 ON0 <<<"$(batch_totals)"
  run=$((run + 1)) # each run its own keys: a repeated connection count must not replay the last run's keys
  t=$(( c < THREADS ? c : THREADS ))
  OUT=$(wrk -t"$t" -c"$c" -d"$DURATION" --timeout 10s --latency -s bench/capture.lua "$API" -- "$KEY" "run$run-$c")
  RATE=$(echo "$OUT" | awk '/Requests\/sec/ {print $2}')
  P50=$(echo "$OUT" | awk '$1 == "50%" {print $2}')
  P99=$(echo "$OUT" | awk '$1 == "99%" {print $2}')
  TOTAL=$(echo "$OUT" | awk '/requests in/ {print $1}')
  NON2XX=$(echo "$OUT" | awk '/Non-2xx/ {print $5}')
  STATUSES=$(echo "$OUT" | sed -n 's/^statuses: //p')
  read -r CS1 CN1 OS1 ON1 <<<"$(batch_totals)"
  BATCHES=$(echo "$CS0 $CN0 $OS0 $ON0 $CS1 $CN1 $OS1 $ON1" | awk '{cs = $5 - $1; cn = $6 - $2; os = $7 - $3; on = $8 - $4
    printf "captures per statement: claim %.1f, outcome %.1f", cn ? cs / cn : 0, on ? os / on : 0}')
  echo "psp=${PSP_LATENCY_MS}ms pg=${DURABILITY%% *} connections=$c duration=$DURATION captures/s=$RATE p50=$P50 p99=$P99 requests=$TOTAL non-2xx=${NON2XX:-0} ($STATUSES; $BATCHES)"
done

CAPTURED=$(psql -tA -d "$DB" -c "SELECT count(*) FILTER (WHERE status = 'CAPTURED') || ' captured, ' || count(*) FILTER (WHERE status <> 'CAPTURED') || ' other, ' || (SELECT count(*) FROM ledger_transactions) || ' ledger transactions, ' || (SELECT count(*) FROM outbox) || ' outbox rows' FROM payments")
echo "== database: $CAPTURED (logs in $LOGDIR)"
