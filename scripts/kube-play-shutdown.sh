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
# Then webhook-delivery: an endpoint of the run's merchant at a receiver on loopback (answering after HOOK_DELAY
# seconds) gets the PaymentCaptured events of HOOK_EVENTS new payments; its container gets SIGTERM with deliveries in
# flight, and is started again. Passes when, once it is stopped, every request the receiver got has its attempt row and
# no delivery is left leased, and after the restart every delivery is SUCCEEDED and the receiver got each event once.
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
  # (or -) start-ms end-ms order local-port
  local n=$1 i=0 end=$((SECONDS + SECONDS_LOAD)) code rc body t0 id last
  while ((SECONDS < end)); do
    i=$((i + 1))
    rc=0
    t0=$(date +%s%3N)
    body=$(curl -sS --max-time 30 -o - -w '\n%{http_code} %{local_port}' -X POST "$API/v1/payments" \
      -H "Authorization: Bearer $MERCHANT_KEY" -H 'Content-Type: application/json' -H "Idempotency-Key: $RUN-$n-$i" \
      -d '{"orderId":"'"$RUN-$n-$i"'","amount":1000,"currency":"EUR","source":"tok_visa"}' 2>/dev/null) || rc=$?
    last=$(tail -n 1 <<<"$body")
    code=${last% *}
    id=$(sed -nE 's/.*"id":"([^"]+)".*/\1/p' <<<"$body" | head -n 1)
    echo "$rc ${code:-000} ${id:--} $t0 $(date +%s%3N) $RUN-$n-$i ${last#* }"
    ((rc == 7)) && sleep 0.2 # refused: the port is closed, do not spin
    [[ $code == 503 ]] && sleep 1 # Retry-After: 1 (service_stopping: a Service would send it to another pod)
  done >"$out/client-$n"
}

# The server's side of the API port every 100 ms from the SIGTERM on (`ss`: the listener's Recv-Q is its accept queue,
# a connection's Recv-Q the bytes the server has not read), to place a cut request's connection against the close.
sample() {
  local end=$((SECONDS + 25))
  while ((SECONDS < end)); do
    ss -Htan "( sport = :${API##*:} )" | awk -v t="$(date +%s%3N)" '{ print t, $0 }'
    sleep 0.1
  done >"$out/ss"
}

for n in $(seq 1 "$WORKERS"); do client "$n" & done
sleep "$STOP_AFTER"
stop_start=$(date +%s%3N)
sample &
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
echo "podman stop (SIGTERM at $(date -u -d "@$((stop_start / 1000))" +%T).$(printf %03d $((stop_start % 1000))) UTC, drain, exit) took ${stop_ms} ms"
# Each cut request against the stop: when it started and ended after the SIGTERM, beside the last answer and the first
# refused connection (the listener's close), and whether the service stored anything for its key (a payment of its
# order): a request cut as the listener closed, with nothing stored, raced the close and was never taken on.
first_refused=$(awk '$1 == 7 { print $4 }' "$out/all" | sort -n | head -n 1)
last_answer=$(awk '$1 == 0 { print $5 }' "$out/all" | sort -n | tail -n 1)
echo "after SIGTERM: last answer at +$(( ${last_answer:-$stop_start} - stop_start )) ms, first refused connection sent at +$(( ${first_refused:-$stop_start} - stop_start )) ms"

# Every payment of the run ends CAPTURED: the resolver finishes what the stop left PROCESSING or UNKNOWN.
psql_() { PGPASSWORD=$PAYMENTS_PG_PASSWORD psql -h "$PAYMENTS_PG_HOST" -p "$PAYMENTS_PG_PORT" -U "$PAYMENTS_PG_USER" \
  -d "$PAYMENTS_PG_DATABASE" -Atc "$1"; }
statuses() { psql_ "SELECT status || '×' || count(*) FROM payments WHERE order_id LIKE '$RUN-%' GROUP BY status ORDER BY 1" | paste -sd ' '; }
echo "right after the restart: $(statuses)"
poll 180 "" "every payment CAPTURED" bash -c \
  "[[ \$(PGPASSWORD='$PAYMENTS_PG_PASSWORD' psql -h '$PAYMENTS_PG_HOST' -p '$PAYMENTS_PG_PORT' -U '$PAYMENTS_PG_USER' -d '$PAYMENTS_PG_DATABASE' -Atc \"SELECT count(*) FROM payments WHERE order_id LIKE '$RUN-%' AND status <> 'CAPTURED'\") == 0 ]]" ||
  { echo "left: $(statuses)" >&2; exit 1; }
echo "after the resolver: $(statuses)"
awk -v s="$stop_start" '$2 == "LISTEN" { n++; last = $1; if ($3 > max) max = $3 } END { if (n)
  printf "the listener (ss every 100 ms): last seen at +%d ms, its accept queue up to %d connections\n", last - s, max }' "$out/ss"
awk '$1 != 0 && $1 != 7' "$out/all" | while read -r rc _ _ t0 t1 order port; do
  echo "cut: curl $rc, sent at +$((t0 - stop_start)) ms, ended at +$((t1 - stop_start)) ms, payments stored for its order: $(psql_ "SELECT count(*) FROM payments WHERE order_id = '$order'")"
  # its connection as the server saw it: first and last sample, the states, the most bytes left unread
  awk -v s="$stop_start" -v p=":$port" 'substr($6, length($6) - length(p) + 1) == p { if (!n++) first = $1; last = $1
    st[$2]; if ($3 > max) max = $3 } END { for (k in st) states = states k " "
    if (n) printf "  its connection (port %s): seen +%d..+%d ms, %sunread up to %d bytes\n", substr(p, 2), first - s, last - s, states, max
    else printf "  its connection (port %s): not seen by ss\n", substr(p, 2) }' "$out/ss"
done
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
at_sigterm=$(refunds)
echo "refunds requested: ${#payments[@]}; at SIGTERM: $at_sigterm"
# A SIGTERM after the backlog was worked off would prove nothing about the shutdown.
[[ $at_sigterm == *PENDING* ]] ||
  { echo "FAILED: no refund was left to work off at the SIGTERM; raise REFUNDS (now $REFUNDS)" >&2; exit 1; }
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

# --- webhook-delivery with deliveries in flight
HOOK_PORT=${HOOK_PORT:-18097}
HOOK_EVENTS=${HOOK_EVENTS:-120}
HOOK_DELAY=${HOOK_DELAY:-3} # with 8 attempts in flight per endpoint: a backlog builds
port_open "$HOOK_PORT" && { echo "port $HOOK_PORT is in use (HOOK_PORT)" >&2; exit 1; }
# the receiver: one line per request (its webhook-id), answered 200 after HOOK_DELAY seconds, many at once
python3 - "$HOOK_PORT" "$out/hooks" "$HOOK_DELAY" <<'PY' &
import http.server, sys, threading, time
port, path, delay = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
lock = threading.Lock()
class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        with lock, open(path, "a") as f:
            f.write(self.headers.get("webhook-id", "-") + "\n")
        time.sleep(delay)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), Hook).serve_forever()
PY
receiver=$!
# the run's endpoint goes with it (DELETED, as the API's DELETE leaves it): a second run on the same stack would
# otherwise deliver each event to both
end_hooks() {
  kill "$receiver" 2>/dev/null
  [[ -n ${endpoint:-} ]] &&
    psql_ "UPDATE webhook_endpoints SET status = 'DELETED', updated_at = now() WHERE id = '$endpoint'" >/dev/null
  rm -rf "$out"
}
trap end_hooks EXIT
: >"$out/hooks"
# registered in the database as payments-api would (its registration refuses loopback http, as in production); the
# plaintext secret is sealed by payments-api's WebhookSecretSealingJob
merchant=$(psql_ "SELECT merchant_id FROM payments WHERE order_id LIKE '$RUN-%' LIMIT 1")
endpoint=$(psql_ "WITH e AS (INSERT INTO webhook_endpoints (id, merchant_id, url, event_types)
  VALUES (gen_random_uuid(), '$merchant', 'http://127.0.0.1:$HOOK_PORT/hooks', '{PaymentCaptured}') RETURNING id) SELECT id FROM e")
psql_ "INSERT INTO webhook_endpoint_secrets (endpoint_id, secret)
  VALUES ('$endpoint', 'whsec_' || encode(decode(md5(random()::text) || md5(random()::text), 'hex'), 'base64'))" >/dev/null
hook_client() { # hook_client N: captures its share of HOOK_EVENTS payments; a 429 (the merchant's rate) is sent again
  local n=$1 i code
  for ((i = n; i <= HOOK_EVENTS; i += WORKERS)); do
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 30 -X POST "$API/v1/payments" \
        -H "Authorization: Bearer $MERCHANT_KEY" -H 'Content-Type: application/json' -H "Idempotency-Key: $RUN-hook-$i" \
        -d '{"orderId":"'"$RUN-hook-$i"'","amount":500,"currency":"EUR","source":"tok_visa"}' 2>/dev/null) || true
      [[ $code == 429 || $code == 503 || $code == 000 ]] || break
      sleep 1
    done
  done
}
clients=()
for n in $(seq 1 "$WORKERS"); do hook_client "$n" & clients+=($!); done
deliveries() { psql_ "SELECT status || '×' || count(*) FROM webhook_deliveries WHERE endpoint_id = '$endpoint' GROUP BY status ORDER BY 1" | paste -sd ' '; }
hook_attempts() { psql_ "SELECT count(*) FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = '$endpoint'"; }
hook_succeeded() { psql_ "SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = '$endpoint' AND status = 'SUCCEEDED'"; }
# some deliveries succeeded, and more requests reached the receiver than attempts are recorded: some are in flight
in_flight() { (($(hook_succeeded) >= 8 && $(hook_attempts) + 4 < $(wc -l <"$out/hooks"))); }
all_delivered() { [[ $(psql_ "SELECT count(*) FILTER (WHERE status = 'SUCCEEDED') >= $captured AND count(*) FILTER (WHERE status <> 'SUCCEEDED') = 0 FROM webhook_deliveries WHERE endpoint_id = '$endpoint'") == t ]]; }
poll 180 "" "webhook deliveries in flight" in_flight
echo "webhook deliveries at SIGTERM: $(deliveries); requests received: $(wc -l <"$out/hooks")"
stop_start=$(date +%s%3N)
podman stop -t 40 webhook-delivery-pod-0-webhook-delivery >/dev/null 2>&1
stop_ms=$(($(date +%s%3N) - stop_start))
sent=$(wc -l <"$out/hooks")
attempts=$(hook_attempts)
# under a lease (1 min): due more than 10 s from now, which no retry of the schedule's first step (5 s) is
leased=$(psql_ "SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = '$endpoint' AND status = 'PENDING' AND next_attempt_at > now() + interval '10 seconds'")
echo "podman stop of webhook-delivery took $stop_ms ms; then: $(deliveries); requests received: $sent, attempts recorded: $attempts, left leased: $leased"
podman pod start webhook-delivery-pod-0 >/dev/null 2>&1
wait_http "http://127.0.0.1:19003/q/health/ready" 240 || { echo "webhook-delivery did not come back" >&2; exit 1; }
wait "${clients[@]}"
captured=$(psql_ "SELECT count(*) FROM payments WHERE order_id LIKE '$RUN-hook-%' AND status = 'CAPTURED'")
poll 300 "" "every delivery SUCCEEDED" all_delivered ||
  { echo "left: $(deliveries)" >&2; exit 1; }
requests=$(wc -l <"$out/hooks")
unique=$(sort -u "$out/hooks" | wc -l)
echo "after the restart: $(deliveries) for $captured payments captured; the receiver got $requests requests for $unique events: $((requests - unique)) duplicates"
if ((sent == attempts && leased == 0 && requests == unique)); then echo "webhook-delivery graceful shutdown: passed"; else
  echo "webhook-delivery graceful shutdown FAILED: $((sent - attempts)) requests without a recorded attempt at the stop, $leased left leased, $((requests - unique)) duplicates" >&2
  failed=1
fi
exit "$failed"
