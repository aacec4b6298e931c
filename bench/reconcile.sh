#!/usr/bin/env bash
# Reconciler load + match at scale: 1,000,000 payments and a 1,000,000-line settlement file for one business date.
# Starts a throwaway durable PostgreSQL 15 (bench/lib.sh start_postgres with PG_DURABLE=1, on PG_DURABLE_PORT, with a
# larger WAL for the bulk load; PG_DURABLE=0: local-infra's embedded one; PAYMENTS_PG_HOST set: that server), creates
# a database migrated by Flyway as the services' is (bench/FreshDatabase.java), generates our side in SQL and the PSP's file in the psp-sandbox synthetic format (same formulas as SettlementService.appendSynthetic:
# 1 REFUND every 20 lines, the rest CHARGEs, fee 2.9 % + 30), builds the reconciler (unless SKIP_BUILD=1), runs it
# twice for the date (first run, then a re-run: breaks become REPORTED), and prints the run summaries and timings.
#
#   bench/reconcile.sh                   # LINES=1000000
#   LINES=200000 SKIP_BUILD=1 bench/reconcile.sh
#
# Injected: every 100,000th line (+7) settles 1 more than we hold (AMOUNT_MISMATCH), every 100,000th line (+11) has
# no payment on our side (MISSING_INTERNAL); 50,000 more payments of the day before carry the refunds.
set -euo pipefail
cd "$(dirname "$0")/.."

LINES=${LINES:-1000000}
DATE=${DATE:-2030-01-01}
SEED=${SEED:-1}
JAVA_OPTS=${JAVA_OPTS:--Xmx512m}
JAR=reconciler/target/quarkus-app/quarkus-run.jar
export PG_DURABLE=${PG_DURABLE:-1} PG_DURABLE_PORT=${PG_DURABLE_PORT:-25439} # below the ephemeral port range
export PG_OPTIONS="-c max_wal_size=8GB -c checkpoint_timeout=30min"

source bench/lib.sh
WORK=$(mktemp -d /tmp/recon-bench.XXXXXX)
chmod 755 "$WORK"
BENCH_REMOVE+=("$WORK")
bench_build reconciler,local-infra
[[ -f $JAR ]] || { echo "no $JAR: build it, or run without SKIP_BUILD=1" >&2; exit 1; }
start_postgres "$WORK"
DB=$(fresh_database recon_bench "$WORK") || exit 1
use_database "$DB" # PG* for psql, QUARKUS_DATASOURCE_* for the reconciler (the server's login)
PSQL=(psql -X -q -v ON_ERROR_STOP=1)

echo "== generating $LINES settlement lines and our side for $DATE (not timed)"
START=$(date +%s.%N)
"${PSQL[@]}" -d "$DB" <<SQL
INSERT INTO merchants (id, name) VALUES ('00000000-0000-4000-a000-000000000001', 'bench');
CREATE TEMP TABLE gen AS
SELECT i,
       CASE WHEN i % 20 = 19 THEN 'REFUND' ELSE 'CHARGE' END AS type,
       (lpad(to_hex($SEED), 8, '0') || CASE WHEN i % 20 = 19 THEN '-0000-4000-9000-' ELSE '-0000-4000-8000-' END
           || lpad(to_hex(i), 12, '0')) AS reference,
       100 + (i * 7919 + $SEED) % 100000 AS amount,
       timestamptz '$DATE 00:00:00+00' + (i * 86400000 / $LINES) * interval '1 millisecond' AS at
  FROM generate_series(0::bigint, $LINES - 1) AS i;
-- our charges (a few missing), amounts as settled (a few off by one)
INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, status, psp_reference, captured_at)
SELECT reference::uuid, '00000000-0000-4000-a000-000000000001', 'o' || i,
       amount - CASE WHEN i % 100000 = 7 THEN 1 ELSE 0 END, 'EUR', 'tok_visa', 'CAPTURED', 'ch_' || i, at
  FROM gen WHERE type = 'CHARGE' AND i % 100000 <> 11;
-- the payments that the refunds refund: captured the day before
INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, status, psp_reference, captured_at,
                      refunded_amount)
SELECT (lpad(to_hex($SEED), 8, '0') || '-0000-4000-a000-' || lpad(to_hex(i), 12, '0'))::uuid,
       '00000000-0000-4000-a000-000000000001', 'r' || i, 200000, 'EUR', 'tok_visa', 'CAPTURED', 'ch_r' || i,
       timestamptz '$DATE 00:00:00+00' - interval '12 hours', amount
  FROM gen WHERE type = 'REFUND';
INSERT INTO refunds (id, payment_id, merchant_id, amount, currency, status, psp_reference, completed_at)
SELECT reference::uuid, (lpad(to_hex($SEED), 8, '0') || '-0000-4000-a000-' || lpad(to_hex(i), 12, '0'))::uuid,
       '00000000-0000-4000-a000-000000000001', amount, 'EUR', 'SUCCEEDED', 're_' || i, at
  FROM gen WHERE type = 'REFUND';
ANALYZE payments;
ANALYZE refunds;
\copy (SELECT CASE WHEN type = 'REFUND' THEN 're_' ELSE 'ch_' END || lpad(to_hex($SEED), 8, '0') || lpad(to_hex(i), 16, '0'), type, reference, amount, CASE WHEN type = 'CHARGE' THEN (amount * 290 + 5000) / 10000 + 30 ELSE 0 END, 'EUR', to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') FROM gen ORDER BY i) TO '$WORK/body.csv' WITH (FORMAT csv)
SQL
{ echo "psp_reference,type,reference,amount,fee,currency,settled_at"; cat "$WORK/body.csv"; } > "$WORK/$DATE.csv"
rm "$WORK/body.csv"
echo "generated in $(echo "$(date +%s.%N) - $START" | bc) s: $("${PSQL[@]}" -d "$DB" -Atc 'SELECT count(*) FROM payments') payments, $(($(wc -l < "$WORK/$DATE.csv") - 1)) lines ($(du -h "$WORK/$DATE.csv" | cut -f1))"

for run in first re-run; do
  echo "== $run ($(nproc) cores, shared machine; JAVA_OPTS=$JAVA_OPTS)"
  T0=$(date +%s.%N)
  set +e
  # shellcheck disable=SC2086
  OUT=$("$JAVA" $JAVA_OPTS -Dquarkus.log.level=WARN -jar "$JAR" \
        --date="$DATE" --source="$WORK/{date}.csv" --lookback=0)
  CODE=$?
  set -e
  T1=$(date +%s.%N)
  echo "$OUT" | grep '^{' || echo "$OUT"
  echo "exit code $CODE; process wall time (JVM start + load + match + exit): $(echo "$T1 - $T0" | bc) s"
  echo "$OUT" | grep '^{"businessDate"' | python3 -c 'import json,sys; s=json.loads(sys.stdin.readline()); print("load (COPY + validation): %.1f s, match + breaks + fees: %.1f s, run total: %.1f s" % (s["loadMs"]/1000, s["matchMs"]/1000, s["durationMs"]/1000))'
done
