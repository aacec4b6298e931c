#!/usr/bin/env bash
# PostgreSQL's share of a capture: pgbench runs the capture path's two statements (key claim + PROCESSING insert;
# outcome with ledger entries, outbox row and key completion) against a freshly migrated schema, with no API, PSP
# or load generator running. Captures/s here is the ceiling the database alone puts on bench/capture.sh on this
# machine. The SQL mirrors PaymentRepository's INSERT_PROCESSING and RECORD_OUTCOME: keep the two in step.
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
export PGHOST=$PAYMENTS_PG_HOST PGPORT=${PAYMENTS_PG_PORT:-5432} PGUSER=${PAYMENTS_PG_USER:-postgres}
export PGPASSWORD=${PAYMENTS_PG_PASSWORD:-}
DB=capture_sql_$(date +%s)
psql -q -d postgres -c "CREATE DATABASE $DB" >/dev/null
for f in $(ls contracts/src/main/resources/db/migration/V*.sql | sort -V); do
  psql -q -v ON_ERROR_STOP=1 -d "$DB" -f "$f" >/dev/null
done
MERCHANT=$(psql -qtA -d "$DB" -c "INSERT INTO merchants (name) VALUES ('bench') RETURNING id")

# One pgbench transaction = one claim statement and one outcome statement for BATCH captures, as payments-api sends
# them when BATCH captures arrive together (StatementBatcher).
cat >"$LOGDIR/capture.sql.in" <<SQL
SELECT array_agg(gen_random_uuid()) AS ids, array_agg(gen_random_uuid()::text) AS idem_keys,
       array_agg(1 + (random() * 100000)::int8) AS amounts, array_agg('$MERCHANT'::uuid) AS merchants
  FROM generate_series(1, @BATCH@) \gset
WITH input AS (
    SELECT * FROM unnest(:ids::uuid[], :merchants::uuid[], array_fill('order'::text, ARRAY[@BATCH@]), :amounts::int8[],
                         array_fill('EUR'::text, ARRAY[@BATCH@]), array_fill('tok_visa'::text, ARRAY[@BATCH@]),
                         :idem_keys::text[], array_fill('\\x00'::bytea, ARRAY[@BATCH@]))
        AS t (id, merchant_id, order_id, amount, currency, source, key, request_hash)),
claim AS (
    INSERT INTO idempotency_keys (merchant_id, key, request_hash, resource_type, resource_id)
    SELECT merchant_id, key, request_hash, 'payment', id FROM input ORDER BY merchant_id, key
    ON CONFLICT DO NOTHING RETURNING resource_id)
INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, next_attempt_at)
SELECT input.id, input.merchant_id, input.order_id, input.amount, input.currency, input.source,
       now() + make_interval(secs => 60)
  FROM claim JOIN input ON input.id = claim.resource_id
RETURNING id, merchant_id, order_id, amount, currency, status, refunded_amount, psp_reference, decline_code, created_at;
WITH input AS (
    SELECT * FROM unnest(:ids::uuid[], array_fill('CAPTURED'::text, ARRAY[@BATCH@]),
                         array_fill('ch_bench'::text, ARRAY[@BATCH@]), array_fill(NULL::text, ARRAY[@BATCH@]),
                         array_fill(NULL::text, ARRAY[@BATCH@]), array_fill('PROCESSING,UNKNOWN'::text, ARRAY[@BATCH@]),
                         :ids::uuid[], array_fill('PaymentCaptured'::text, ARRAY[@BATCH@]),
                         array_fill('payment-events'::text, ARRAY[@BATCH@]),
                         array_fill('{"type":"PaymentCaptured"}'::text, ARRAY[@BATCH@]),
                         array_fill('{}'::text, ARRAY[@BATCH@]), array_fill(201, ARRAY[@BATCH@]),
                         array_fill('\\x7b7d'::bytea, ARRAY[@BATCH@]))
        AS t (id, status, psp_reference, decline_code, last_error, allowed_from,
              event_id, event_type, topic, payload, headers, response_status, response_body)),
moved AS (
    UPDATE payments p
       SET status = input.status,
           psp_reference = COALESCE(input.psp_reference, p.psp_reference),
           decline_code = input.decline_code,
           last_error = input.last_error,
           captured_at = CASE WHEN input.status = 'CAPTURED' THEN now() ELSE p.captured_at END,
           next_attempt_at = CASE WHEN input.status = 'UNKNOWN' THEN now() ELSE NULL END
      FROM input
     WHERE p.id = input.id AND p.status = ANY (string_to_array(input.allowed_from, ','))
       AND set_config('payments.actor', 'capture', true) IS NOT NULL
     RETURNING p.id, p.merchant_id, p.amount, p.currency, p.status),
ledger AS (
    INSERT INTO ledger_transactions (kind, reference, merchant_id, description)
    SELECT 'CAPTURE', id::text, merchant_id, 'payment captured' FROM moved WHERE status = 'CAPTURED'
    RETURNING id, reference),
entries AS (
    INSERT INTO ledger_entries (transaction_id, account, amount, currency)
    SELECT ledger.id, e.account, e.sign * moved.amount, moved.currency
      FROM ledger JOIN moved ON moved.id::text = ledger.reference,
           (VALUES ('psp_receivable', 1), ('merchant_payable', -1)) AS e (account, sign)),
event AS (
    INSERT INTO outbox (event_id, event_type, topic, key, payload, headers)
    SELECT input.event_id, input.event_type, input.topic, moved.id::text, input.payload::jsonb, input.headers::jsonb
      FROM moved JOIN input ON input.id = moved.id WHERE input.event_id IS NOT NULL),
completed AS (
    UPDATE idempotency_keys k
       SET status = 'COMPLETED', response_status = input.response_status, response_body = input.response_body,
           completed_at = now()
      FROM moved JOIN input ON input.id = moved.id
     WHERE k.resource_type = 'payment' AND k.resource_id = moved.id AND k.status = 'IN_PROGRESS')
SELECT id FROM moved;
SQL

# as payments-api plans them (application.properties)
export PGOPTIONS="-c plan_cache_mode=force_generic_plan"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); PostgreSQL alone (pgbench, prepared, generic plans)"
for b in $BATCHES; do
  sed "s/@BATCH@/$b/g" "$LOGDIR/capture.sql.in" >"$LOGDIR/capture.sql"
  for c in $CLIENTS; do
    OUT=$(pgbench -n -M prepared -c "$c" -j 2 -T "$DURATION" -f "$LOGDIR/capture.sql" "$DB" 2>&1) || true
    echo "$OUT" | grep -q "failed transactions: 0 " || { echo "$OUT" | tail -8; exit 1; }
    RATE=$(echo "$OUT" | awk -v b="$b" '/^tps/ {printf "%.0f", $3 * b}')
    LAT=$(echo "$OUT" | awk '/latency average/ {print $4}')
    echo "clients=$c captures-per-statement=$b duration=${DURATION}s captures/s=$RATE latency-avg=${LAT}ms (per pair of statements)"
  done
done
echo "== database: $(psql -tA -d "$DB" -c "SELECT count(*) || ' captured payments, ' || (SELECT count(*) FROM outbox) || ' outbox rows' FROM payments WHERE status = 'CAPTURED'")"
