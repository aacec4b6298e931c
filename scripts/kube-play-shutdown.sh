#!/usr/bin/env bash
# Graceful shutdown of payments-api's container, measured on the played stack (scripts/kube-play.sh up first;
# docs/deployment.md, "Graceful shutdown, measured"): WORKERS concurrent clients capture payments for SECONDS; after
# STOP_AFTER seconds the container gets SIGTERM (`podman stop -t 40`: terminationGracePeriodSeconds, which podman 4.3
# does not take from the manifest), then its pod is started again. Passes when
#   - no request was cut: no reset connection and no empty reply (curl 52/56) and no time-out; a refused connection
#     (curl 7) is a request that was never accepted;
#   - every payment of the run ends CAPTURED once the service is back (PROCESSING/UNKNOWN ones by the resolver).
# Then refunds-worker: REFUNDS refunds of those payments are requested at once, its container gets SIGTERM while they
# are being worked off, and is started again. Passes when every refund ends SUCCEEDED with exactly one ledger booking
# and one RefundSucceeded event.
set -euo pipefail
cd "$(dirname "$0")/.."
STATE=.local/kube-play
[[ -f $STATE/env ]] || { echo "nothing played (scripts/kube-play.sh up)" >&2; exit 1; }
# shellcheck disable=SC1091
source "$STATE/env"
# shellcheck disable=SC1091
source "$STATE/infra.env"
source scripts/lib.sh
WORKERS=${WORKERS:-8}
SECONDS_LOAD=${SECONDS_LOAD:-25}
STOP_AFTER=${STOP_AFTER:-8}
CONTAINER=payments-api-pod-0-payments-api
RUN=sd$(date +%s)x
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

client() { # client N: captures until SECONDS_LOAD pass; one line per request: curl-exit http-code payment-id
  local n=$1 i=0 end=$((SECONDS + SECONDS_LOAD)) code rc body
  while ((SECONDS < end)); do
    i=$((i + 1))
    rc=0
    body=$(curl -sS --max-time 30 -o - -w '\n%{http_code}' -X POST "$API/v1/payments" \
      -H "Authorization: Bearer $MERCHANT_KEY" -H 'Content-Type: application/json' -H "Idempotency-Key: $RUN-$n-$i" \
      -d '{"orderId":"'"$RUN-$n-$i"'","amount":1000,"currency":"EUR","source":"tok_visa"}' 2>/dev/null) || rc=$?
    code=$(tail -n 1 <<<"$body")
    echo "$rc ${code:-000} $(sed -nE 's/.*"id":"([^"]+)".*/\1/p' <<<"$body" | head -n 1)"
    ((rc == 7)) && sleep 0.2 # refused: the port is closed, do not spin
    [[ $code == 503 ]] && sleep 1 # Retry-After: 1 (service_stopping: a Service would send it to another pod)
  done >"$out/client-$n"
}

for n in $(seq 1 "$WORKERS"); do client "$n" & done
sleep "$STOP_AFTER"
stop_start=$(date +%s%3N)
podman stop -t 40 "$CONTAINER" >/dev/null 2>&1
stop_ms=$(($(date +%s%3N) - stop_start))
wait
podman pod start payments-api-pod-0 >/dev/null 2>&1
wait_http "http://127.0.0.1:19000/q/health/ready" 240 || { echo "payments-api did not come back" >&2; exit 1; }

cat "$out"/client-* >"$out/all"
total=$(wc -l <"$out/all")
answered=$(awk '$1 == 0' "$out/all" | wc -l)
refused=$(awk '$1 == 7' "$out/all" | wc -l)
cut=$(awk '$1 != 0 && $1 != 7' "$out/all" | wc -l)
codes=$(awk '$1 == 0 { print $2 }' "$out/all" | sort | uniq -c | awk '{ printf "%s×%s ", $2, $1 }')
cut_codes=$(awk '$1 != 0 && $1 != 7 { print "curl " $1 }' "$out/all" | sort | uniq -c | awk '{ printf "%s %s×%s ", $2, $3, $1 }')
echo "requests: $total; answered: $answered ($codes); refused (never accepted): $refused; cut (reset, empty, time-out): $cut ($cut_codes)"
echo "podman stop (SIGTERM, drain, exit) took ${stop_ms} ms"

# Every payment of the run ends CAPTURED: the resolver finishes what the stop left PROCESSING or UNKNOWN.
psql_() { PGPASSWORD=$PAYMENTS_PG_PASSWORD psql -h "$PAYMENTS_PG_HOST" -p "$PAYMENTS_PG_PORT" -U "$PAYMENTS_PG_USER" \
  -d "$PAYMENTS_PG_DATABASE" -Atc "$1"; }
statuses() { psql_ "SELECT status || '×' || count(*) FROM payments WHERE order_id LIKE '$RUN-%' GROUP BY status ORDER BY 1" | paste -sd ' '; }
echo "right after the restart: $(statuses)"
poll 180 "" "every payment CAPTURED" bash -c \
  "[[ \$(PGPASSWORD='$PAYMENTS_PG_PASSWORD' psql -h '$PAYMENTS_PG_HOST' -p '$PAYMENTS_PG_PORT' -U '$PAYMENTS_PG_USER' -d '$PAYMENTS_PG_DATABASE' -Atc \"SELECT count(*) FROM payments WHERE order_id LIKE '$RUN-%' AND status <> 'CAPTURED'\") == 0 ]]" ||
  { echo "left: $(statuses)" >&2; exit 1; }
echo "after the resolver: $(statuses)"
# An answered 201/202 names a payment that exists; a cut request must not have charged twice either (one row per key).
dups=$(psql_ "SELECT count(*) FROM (SELECT order_id FROM payments WHERE order_id LIKE '$RUN-%' GROUP BY order_id HAVING count(*) > 1) d")
failed=0
if ((cut == 0 && dups == 0)); then echo "payments-api graceful shutdown: passed"; else
  echo "payments-api graceful shutdown FAILED: $cut requests cut, $dups orders charged twice" >&2
  failed=1
fi

# --- refunds-worker in the middle of a refund backlog
REFUNDS=${REFUNDS:-40}
mapfile -t payments < <(psql_ "SELECT id FROM payments WHERE order_id LIKE '$RUN-%' LIMIT $REFUNDS")
for id in "${payments[@]}"; do
  curl -sS -o /dev/null -X POST "$API/v1/payments/$id/refunds" -H "Authorization: Bearer $MERCHANT_KEY" \
    -H 'Content-Type: application/json' -H "Idempotency-Key: $RUN-refund-$id" -d '{"amount":400}' &
done
wait
refunds() { psql_ "SELECT r.status || '×' || count(*) FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE p.order_id LIKE '$RUN-%' GROUP BY r.status ORDER BY 1" | paste -sd ' '; }
# SIGTERM once the first refunds are done and the others are in the worker's hands or still queued
poll 120 "" "a first SUCCEEDED refund" bash -c "[[ \$(PGPASSWORD='$PAYMENTS_PG_PASSWORD' psql -h '$PAYMENTS_PG_HOST' -p '$PAYMENTS_PG_PORT' -U '$PAYMENTS_PG_USER' -d '$PAYMENTS_PG_DATABASE' -Atc \"SELECT count(*) FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE p.order_id LIKE '$RUN-%' AND r.status = 'SUCCEEDED'\") -gt 0 ]]"
echo "refunds requested: ${#payments[@]}; at SIGTERM: $(refunds)"
stop_start=$(date +%s%3N)
podman stop -t 40 refunds-worker-pod-0-refunds-worker >/dev/null 2>&1
echo "podman stop of refunds-worker took $(($(date +%s%3N) - stop_start)) ms; then: $(refunds)"
podman pod start refunds-worker-pod-0 >/dev/null 2>&1
wait_http "http://127.0.0.1:19002/q/health/ready" 240 || { echo "refunds-worker did not come back" >&2; exit 1; }
poll 180 "" "every refund SUCCEEDED" bash -c "[[ \$(PGPASSWORD='$PAYMENTS_PG_PASSWORD' psql -h '$PAYMENTS_PG_HOST' -p '$PAYMENTS_PG_PORT' -U '$PAYMENTS_PG_USER' -d '$PAYMENTS_PG_DATABASE' -Atc \"SELECT count(*) FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE p.order_id LIKE '$RUN-%' AND r.status <> 'SUCCEEDED'\") == 0 ]]" ||
  { echo "left: $(refunds)" >&2; exit 1; }
once=$(psql_ "SELECT count(*) FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE p.order_id LIKE '$RUN-%'
  AND (SELECT count(*) FROM ledger_transactions t WHERE t.kind = 'REFUND' AND t.reference = r.id::text) = 1
  AND (SELECT count(*) FROM outbox o WHERE o.event_type = 'RefundSucceeded' AND o.payload->>'refundId' = r.id::text) = 1")
# (a request over the merchant's rate got 429 and made no refund)
made=$(psql_ "SELECT count(*) FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE p.order_id LIKE '$RUN-%'")
echo "after the restart: $(refunds); booked once with one RefundSucceeded event: $once of $made"
((made > 0 && once == made)) || { echo "FAILED: a refund was not booked exactly once" >&2; exit 1; }
echo "refunds-worker graceful shutdown: passed"
exit "$failed"
