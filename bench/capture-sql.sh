#!/usr/bin/env bash
# PostgreSQL's share of a capture: pgbench runs the capture path's two statements (key claim + PROCESSING insert;
# outcome with ledger entries, outbox row and key completion) against a freshly migrated schema, with no API, PSP
# or load generator running. Captures/s here is the ceiling the database alone puts on bench/capture.sh on this
# machine. The SQL mirrors PaymentRepository's INSERT_PROCESSING and RECORD_OUTCOME: keep the two in step.
#
#   bench/capture-sql.sh                       # 16 clients, 20 s
#   CLIENTS="8 16 64" DURATION=30 bench/capture-sql.sh
# PostgreSQL: PAYMENTS_PG_HOST/PORT/USER/PASSWORD if set, otherwise local-infra's LocalInfraMain starts one.
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${CLIENTS:-16}
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

cat >"$LOGDIR/capture.sql" <<SQL
\set amount random(1, 100000)
SELECT gen_random_uuid() AS id, gen_random_uuid()::text AS idem_key \gset
WITH claim AS (
    INSERT INTO idempotency_keys (merchant_id, key, request_hash, resource_type, resource_id)
    VALUES ('$MERCHANT', :idem_key, '\x00', 'payment', :id::uuid) ON CONFLICT DO NOTHING RETURNING resource_id)
INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, next_attempt_at)
SELECT resource_id, '$MERCHANT', 'order', :amount, 'EUR', 'tok_visa', now() + make_interval(secs => 60) FROM claim
RETURNING id, merchant_id, order_id, amount, currency, status, refunded_amount, psp_reference, decline_code, created_at;
WITH moved AS (
    UPDATE payments SET status = 'CAPTURED', psp_reference = COALESCE('ch_bench', psp_reference), decline_code = NULL,
           last_error = NULL, captured_at = now(), next_attempt_at = NULL
     WHERE id = :id::uuid AND status = ANY('{PROCESSING,UNKNOWN}') AND set_config('payments.actor', 'capture', true) IS NOT NULL
     RETURNING id, merchant_id, amount, currency, status),
ledger AS (
    INSERT INTO ledger_transactions (kind, reference, merchant_id, description)
    SELECT 'CAPTURE', id::text, merchant_id, 'payment captured' FROM moved WHERE status = 'CAPTURED' RETURNING id),
entries AS (
    INSERT INTO ledger_entries (transaction_id, account, amount, currency)
    SELECT ledger.id, e.account, e.sign * moved.amount, moved.currency
      FROM ledger, moved, (VALUES ('psp_receivable', 1), ('merchant_payable', -1)) AS e (account, sign)),
event AS (
    INSERT INTO outbox (event_id, event_type, topic, key, payload, headers)
    SELECT gen_random_uuid(), 'PaymentCaptured', 'payment-events', id::text, '{"type":"PaymentCaptured"}', '{}' FROM moved),
completed AS (
    UPDATE idempotency_keys SET status = 'COMPLETED', response_status = 201, response_body = '\x7b7d', completed_at = now()
     WHERE resource_type = 'payment' AND resource_id = :id::uuid AND status = 'IN_PROGRESS' AND EXISTS (SELECT 1 FROM moved))
SELECT count(*) FROM moved;
SQL

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); PostgreSQL alone (pgbench, prepared)"
for c in $CLIENTS; do
  OUT=$(pgbench -n -M prepared -c "$c" -j 2 -T "$DURATION" -f "$LOGDIR/capture.sql" "$DB" 2>&1) || true
  echo "$OUT" | grep -q "failed transactions: 0 " || { echo "$OUT" | tail -8; exit 1; }
  TPS=$(echo "$OUT" | awk '/^tps/ {printf "%.0f", $3}')
  LAT=$(echo "$OUT" | awk '/latency average/ {print $4}')
  echo "clients=$c duration=${DURATION}s captures/s=$TPS latency-avg=${LAT}ms (claim+insert, outcome: 2 statements + 1 uuid select)"
done
echo "== database: $(psql -tA -d "$DB" -c "SELECT count(*) || ' captured payments, ' || (SELECT count(*) FROM outbox) || ' outbox rows' FROM payments WHERE status = 'CAPTURED'")"
