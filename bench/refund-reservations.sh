#!/usr/bin/env bash
# Refund reservation throughput of payments-api (POST /v1/payments/{id}/refunds, unique Idempotency-Keys, 1 minor
# unit each) on a local PostgreSQL: per request one read (payment and key) and one statement (conditional UPDATE of
# the payment, PENDING refund, refund-commands outbox row, completed key). Neither the relay nor the worker runs: this measures
# the API side only. Requests go round-robin over PAYMENTS captured payments (seeded in SQL), so concurrent requests
# rarely wait for the same payment's row lock. Prints reservations/s and p50/p99 at 16 and 64 connections, then checks
# that every 202 is one refund, one outbox row and 1 minor unit of refunded_amount.
#
#   bench/refund-reservations.sh                 # builds the jars unless SKIP_BUILD=1
#   DURATION=60s PAYMENTS=1000 bench/refund-reservations.sh
#   PG_DURABLE=1 bench/refund-reservations.sh    # durable PostgreSQL
# Knobs: PG_DURABLE=1 for a durable PostgreSQL (fsync and synchronous_commit on), 0 (default) for local-infra's
# embedded one (both off); PSP_LATENCY_MS is accepted for symmetry with bench/capture.sh and printed, but a reservation
# never calls the PSP (refunds-worker does: bench/refund-execution.sh), so it changes nothing here. PostgreSQL:
# PAYMENTS_PG_HOST/PORT/USER/PASSWORD if set (then its own settings apply; the result lines say which), otherwise as
# PG_DURABLE says.
set -euo pipefail
cd "$(dirname "$0")/.."

API_PORT=${API_PORT:-18080}
API_MANAGEMENT_PORT=${API_MANAGEMENT_PORT:-18090} # health (management interface)
DURATION=${DURATION:-30s}
WARMUP=${WARMUP:-60s} # long enough for the JIT (see bench/capture.sh)
CONNECTIONS_LIST=${CONNECTIONS_LIST:-"16 64"}
THREADS=${THREADS:-2}
PAYMENTS=${PAYMENTS:-10000}
PSP_LATENCY_MS=${PSP_LATENCY_MS:-0}
API_OPTS=${API_OPTS:--Xms1g -Xmx1g -XX:+UseParallelGC}
ADMIN_TOKEN=bench-operator-token-$RANDOM$RANDOM
API=http://127.0.0.1:$API_PORT

source bench/lib.sh
bench_build payments-api,local-infra
ensure_wrk
LOGDIR=$(mktemp -d /tmp/refund-bench.XXXXXX)
start_postgres "$LOGDIR"
DB=bench_refunds_$(date +%s)
bench_database "$DB"
sql() { psql -q -tA -d "$DB" -c "$1"; }

# The API migrates its fresh database at start (as the migration Job does) and then serves.
# shellcheck disable=SC2086
QUARKUS_FLYWAY_MIGRATE_AT_START=true PAYMENTS_ADMIN_TOKEN="$ADMIN_TOKEN" \
start_jar "$LOGDIR/api.log" "http://127.0.0.1:$API_MANAGEMENT_PORT/q/health/ready" $API_OPTS \
  -Dquarkus.http.port="$API_PORT" -Dquarkus.management.port="$API_MANAGEMENT_PORT" -Dquarkus.log.level=WARN \
  -jar payments-api/target/quarkus-app/quarkus-run.jar || exit 1

CREATED=$(curl -fs -X POST "$API/v1/admin/merchants" -H "Authorization: Bearer $ADMIN_TOKEN" \
  -H 'Content-Type: application/json' -d '{"name":"bench","rateLimitPerSecond":1000000}')
KEY=$(echo "$CREATED" | sed -E 's/.*"apiKey":"([^"]+)".*/\1/')
MERCHANT=$(echo "$CREATED" | sed -E 's/.*"merchantId":"([^"]+)".*/\1/')

# Captured payments as the capture path leaves them (status CAPTURED, a PSP reference), large enough never to run out.
sql "INSERT INTO payments (merchant_id, order_id, amount, currency, source, status, psp_reference, captured_at)
     SELECT '$MERCHANT', 'bench-' || i, 1000000000000, 'EUR', 'tok_visa', 'CAPTURED', 'ch_bench_' || i, now()
       FROM generate_series(1, $PAYMENTS) i"
sql "ANALYZE"
sql "SELECT id FROM payments WHERE merchant_id = '$MERCHANT'" >"$LOGDIR/payments.txt"

echo "== warm-up ($WARMUP, 16 connections)"
wrk -t"$THREADS" -c16 -d"$WARMUP" -s bench/refund-reservations.lua "$API" -- "$KEY" warmup "$LOGDIR/payments.txt" >/dev/null
# The tables' first autovacuum and autoanalyze round, a minute into the load, stalled the first measured run
# (docs/benchmarks.md): run it here, as a server that has been up for a while has long done it.
sql "VACUUM ANALYZE"

DURABILITY=$(pg_durability "$DB")
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); API_OPTS=$API_OPTS; $PAYMENTS payments"
echo "psp latency: ${PSP_LATENCY_MS} ms (not on this path); $DURABILITY"
# reservations per statement so far: "sum count", from the API's metrics
batch_totals() {
  curl -fs "http://127.0.0.1:$API_MANAGEMENT_PORT/q/metrics" | awk '/^payments_refund_reservation_batch_size_(sum|count)/ {v[$1 ~ /_sum/ ? "s" : "n"] = $2}
    END {print v["s"] + 0, v["n"] + 0}'
}
run=0
for c in $CONNECTIONS_LIST; do
  read -r S0 N0 <<<"$(batch_totals)"
  run=$((run + 1)) # each run its own keys: a repeated connection count must not replay the last run's keys
  OUT=$(wrk -t"$THREADS" -c"$c" -d"$DURATION" --latency -s bench/refund-reservations.lua "$API" -- "$KEY" "run$run-$c" \
    "$LOGDIR/payments.txt")
  RATE=$(echo "$OUT" | awk '/Requests\/sec/ {print $2}')
  P50=$(echo "$OUT" | awk '$1 == "50%" {print $2}')
  P99=$(echo "$OUT" | awk '$1 == "99%" {print $2}')
  TOTAL=$(echo "$OUT" | awk '/requests in/ {print $1}')
  NON2XX=$(echo "$OUT" | awk '/Non-2xx/ {print $5}')
  read -r S1 N1 <<<"$(batch_totals)"
  PER=$(awk -v s0="$S0" -v n0="$N0" -v s1="$S1" -v n1="$N1" 'BEGIN {n = n1 - n0; printf "%.1f", n ? (s1 - s0) / n : 0}')
  echo "pg=${DURABILITY%% *} connections=$c duration=$DURATION reservations/s=$RATE p50=$P50 p99=$P99 requests=$TOTAL non-2xx=${NON2XX:-0} (reservations per statement: $PER)"
done

CHECK=$(sql "SELECT (SELECT count(*) FROM refunds) || ' refunds, ' ||
                    (SELECT count(*) FROM outbox WHERE topic = 'refund-commands') || ' refund commands, ' ||
                    (SELECT sum(refunded_amount) FROM payments) || ' reserved, ' ||
                    (SELECT count(*) FROM idempotency_keys WHERE resource_type = 'refund' AND status = 'COMPLETED')
                    || ' completed keys'")
echo "== database: $CHECK (all four must be equal; logs in $LOGDIR)"
