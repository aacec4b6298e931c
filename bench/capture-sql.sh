#!/usr/bin/env bash
# PostgreSQL's share of a capture: pgbench runs the capture path's two statements (key claim + PROCESSING insert;
# outcome with ledger transaction, outbox row and key completion) against a freshly migrated schema, with no API, PSP
# or load generator running. Captures/s here is the ceiling the database alone puts on bench/capture.sh on this
# machine. The statements are payments-api's own (payments-api/src/main/resources/sql).
#
#   bench/capture-sql.sh                       # 16 clients, 20 s
#   CLIENTS="8 16 64" BATCHES="1 4 8" DURATION=30 bench/capture-sql.sh   # BATCHES: captures per statement
# PostgreSQL: PAYMENTS_PG_HOST/PORT/USER/PASSWORD if set, otherwise local-infra's LocalInfraMain starts one.
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${CLIENTS:-16}
BATCHES=${BATCHES:-"1 8"}
DURATION=${DURATION:-20}
LOGDIR=$(mktemp -d /tmp/capture-sql-bench.XXXXXX)
source bench/lib.sh
[[ -n "${PAYMENTS_PG_HOST:-}" ]] || ./mvnw -B -q -pl local-infra -am compile >/dev/null
start_postgres "$LOGDIR"
DB=capture_sql_$(date +%s)
bench_database "$DB"
for f in $(ls contracts/src/main/resources/db/migration/V*.sql | sort -V); do
  psql -q -v ON_ERROR_STOP=1 -d "$DB" -f "$f" >/dev/null
done
MERCHANT=$(psql -qtA -d "$DB" -c "INSERT INTO merchants (name) VALUES ('bench') RETURNING id")

# One pgbench transaction = one claim statement and one outcome statement for BATCH captures, as payments-api sends
# them when BATCH captures arrive together (StatementBatcher): payments-api's own statements (sql/capture-claim.sql and
# sql/record-outcome.sql), their parameters $n bound as pgbench variables :cn and :on.
SQLDIR=payments-api/src/main/resources/sql
{
  cat <<SQL
SELECT array_agg(gen_random_uuid()) AS c1, array_agg('$MERCHANT'::uuid) AS c2, array_agg('order'::text) AS c3,
       array_agg(1 + (random() * 100000)::int8) AS c4, array_agg('EUR'::text) AS c5, array_agg('tok_visa'::text) AS c6,
       array_agg(gen_random_uuid()::text) AS c7, array_agg('\\x00'::bytea) AS c8, 60 AS c9
  FROM generate_series(1, @BATCH@) \gset
SQL
  sed 's/\$\([0-9][0-9]*\)/:c\1/g' "$SQLDIR/capture-claim.sql"
  echo ";"
  cat <<SQL
SELECT :c1::uuid[] AS o1, array_agg('CAPTURED'::text) AS o2, array_agg('ch_bench'::text) AS o3,
       array_agg(NULL::text) AS o4, array_agg(NULL::text) AS o5, array_agg('PROCESSING,UNKNOWN'::text) AS o6,
       array_agg(gen_random_uuid()) AS o7, array_agg('PaymentCaptured'::text) AS o8,
       array_agg('payment-events'::text) AS o9, array_agg('{"type":"PaymentCaptured"}'::text) AS o10,
       array_agg('{}'::text) AS o11, array_agg(201) AS o12, array_agg('\\x7b7d'::bytea) AS o13, 'capture' AS o14
  FROM generate_series(1, @BATCH@) \gset
SQL
  sed 's/\$\([0-9][0-9]*\)/:o\1/g' "$SQLDIR/record-outcome.sql"
  echo ";"
} >"$LOGDIR/capture.sql.in"

# as payments-api plans them (application.properties)
export PGOPTIONS="-c plan_cache_mode=force_generic_plan"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); PostgreSQL alone (pgbench, prepared, generic plans)"
for b in $BATCHES; do
  sed "s/@BATCH@/$b/g" "$LOGDIR/capture.sql.in" >"$LOGDIR/capture.sql"
  for c in $CLIENTS; do
    OUT=$(pgbench -n -M prepared -c "$c" -j 2 -T "$DURATION" -f "$LOGDIR/capture.sql" "$DB" 2>&1) || true
    echo "$OUT" | grep -q "failed transactions: 0 " && ! echo "$OUT" | grep -q aborted || { echo "$OUT" | tail -8; exit 1; }
    RATE=$(echo "$OUT" | awk -v b="$b" '/^tps/ {printf "%.0f", $3 * b}')
    LAT=$(echo "$OUT" | awk '/latency average/ {print $4}')
    echo "clients=$c captures-per-statement=$b duration=${DURATION}s captures/s=$RATE latency-avg=${LAT}ms (per pair of statements)"
  done
done
echo "== database: $(psql -tA -d "$DB" -c "SELECT count(*) || ' captured payments, ' || (SELECT count(*) FROM outbox) || ' outbox rows' FROM payments WHERE status = 'CAPTURED'")"
