# shellcheck shell=bash
# The load client of the fault scenarios (scripts/fault-suite.sh, scripts/fault-failover.sh; docs/fault-suite.md
# "Load"). Source it, start `load_worker N &` a few times, `load_stop` when the load should end, wait for the workers
# (each finishes the keys in hand, giving up SETTLE_SECONDS after the stop), then `load_evidence`.
# The caller sets API, KEY (a merchant key), OUT (results in $OUT/results), SETTLE_SECONDS; LOAD_PREFIX (keys and
# orderIds, default fs) and LOAD_RETRY_PAUSE (seconds between two tries of a key, default 1).
#
# Each worker mixes: 40 % automatic payments (90 % tok_visa, 10 % tok_chargeDeclined), a third of the captured ones
# partially refunded; 20 % manual ones (captureMethod manual, the same sources): each authorization is then captured
# (6 in 10, half of those partially), canceled (3 in 10) or left authorized, a third of the captures partially
# refunded; 20 % replays of an earlier key with the same body (must answer the same payment); 20 % reads (must answer
# the payment asked for).
# Every POST is retried with the same key until a definitive answer (the merchant's contract).
#
# Per worker, in $OUT/results/wN:
#   .requests  "start_ms end_ms kind code" per request (kind: pay, auth, capture, cancel, refund, replay, read)
#   .keys      "key payment_id code amount source orderId method" per payment, or "key - unresolved|unexpected code"
#   .ops       "payment_id op key amount code" per authorization (op authorize), its capture (the amount asked),
#              cancel (amount 0) and every refund (automatic payments' too); code "409:<problem code>" for a 409,
#              "unresolved:<code>" when the key was not answered by the settle deadline
#   .bad       replays or reads that answered another payment or an unexpected code

load_stop() { date +%s >"$OUT/stop"; }
settle_over() { [[ -s $OUT/stop ]] && (($(date +%s) >= $(cat "$OUT/stop") + SETTLE_SECONDS)); }

# send KIND URL CURL_ARGS...: one request as the merchant; the status in CODE, the body in $out.body (out: the
# calling worker's prefix), a line in $out.requests.
send() {
  local kind=$1 url=$2 t0=${EPOCHREALTIME/./}
  shift 2
  CODE=$(curl -s -o "$out.body" -w '%{http_code}' --max-time 15 -H "Authorization: Bearer $KEY" "$@" "$url")
  echo "$((t0 / 1000)) $((${EPOCHREALTIME/./} / 1000)) $kind $CODE" >>"$out.requests"
}

# post_until KIND KEY BODY URL: POSTs BODY with Idempotency-Key KEY until an answer other than a 5xx, a connection
# error, a 429 or a 409 for a key in flight or a payment whose outcome is pending. CODE: that answer ("409:<code>" for
# another 409), or "unresolved:<last code>" after the settle deadline.
post_until() {
  local kind=$1 key=$2 body=$3 url=$4 problem
  while :; do
    send "$kind" "$url" -H "Idempotency-Key: $key" -H 'Content-Type: application/json' -d "$body"
    case $CODE in
      5?? | 000 | 429) ;;
      409)
        problem=$(jq -r .code "$out.body" 2>/dev/null)
        [[ $problem == idempotency_key_in_use || $problem == payment_outcome_pending ]] || { CODE="409:$problem"; return; } ;;
      *) return ;;
    esac
    settle_over && { CODE="unresolved:$CODE"; return; }
    sleep "${LOAD_RETRY_PAUSE:-1}"
  done
}

payment_body() { # ORDER AMOUNT SOURCE METHOD
  local manual=
  [[ $4 == manual ]] && manual=',"captureMethod":"manual"'
  echo "{\"orderId\":\"$1\",\"amount\":$2,\"currency\":\"EUR\",\"source\":\"$3\"$manual}"
}

load_refund() { # PAYMENT_ID KEY AMOUNT
  post_until refund "r-$2" "{\"amount\":$3}" "$API/v1/payments/$1/refunds"
  echo "$1 refund r-$2 $3 $CODE" >>"$out.ops"
}

load_payment() { # automatic|manual
  local method=$1 key="${LOAD_PREFIX:-fs}-$n-$i-$RANDOM" order="${LOAD_PREFIX:-fs}-$n-$i" amount=$((RANDOM % 50000 + 100))
  local source=tok_visa kind=pay id status captured body choice
  ((RANDOM % 10 == 0)) && source=tok_chargeDeclined
  [[ $method == manual ]] && kind=auth
  post_until "$kind" "$key" "$(payment_body "$order" "$amount" "$source" "$method")" "$API/v1/payments"
  case $CODE in
    201 | 202 | 402) id=$(jq -r .id "$out.body"); echo "$key $id $CODE $amount $source $order $method" >>"$out.keys" ;;
    unresolved:*) echo "$key - ${CODE/:/ }" >>"$out.keys"; return ;;
    *) echo "$key - unexpected $CODE" >>"$out.keys"; return ;;
  esac
  if [[ $method == automatic ]]; then
    [[ $CODE == 201 ]] && ((RANDOM % 3 == 0)) && load_refund "$id" "$key" $((amount / 2))
    return
  fi
  echo "$id authorize $key $amount $CODE" >>"$out.ops"
  status=$(jq -r .status "$out.body")
  # An authorization whose PSP answer was lost (202 AUTHORIZING) is the resolver's: wait for its outcome.
  while [[ $status == AUTHORIZING ]] && ! settle_over; do
    sleep 1
    send read "$API/v1/payments/$id"
    [[ $CODE == 200 ]] && status=$(jq -r .status "$out.body")
  done
  [[ $status == AUTHORIZED ]] || return
  choice=$((RANDOM % 10))
  if ((choice < 6)); then
    captured=$amount body='{}'
    ((RANDOM % 2)) && captured=$((RANDOM * amount / 32768 + 1)) body="{\"amount\":$captured}"
    post_until capture "c-$key" "$body" "$API/v1/payments/$id/capture"
    echo "$id capture c-$key $captured $CODE" >>"$out.ops"
    [[ $CODE == 200 ]] && ((RANDOM % 3 == 0)) && load_refund "$id" "$key" $(((captured + 1) / 2))
  elif ((choice < 9)); then
    post_until cancel "v-$key" '{}' "$API/v1/payments/$id/cancel"
    echo "$id cancel v-$key 0 $CODE" >>"$out.ops"
  fi
}

load_replay() { # an earlier key with the same body: must answer the same payment
  local key id code amount source order method
  [[ -s $out.keys ]] || return
  read -r key id code amount source order method < <(shuf -n 1 "$out.keys")
  [[ $id == - ]] && return
  send replay "$API/v1/payments" -H "Idempotency-Key: $key" -H 'Content-Type: application/json' \
    -d "$(payment_body "$order" "$amount" "$source" "$method")"
  case $CODE in
    201 | 202 | 402) [[ $(jq -r .id "$out.body") == "$id" ]] || echo "$key replay-other-payment" >>"$out.bad" ;;
    000 | 5?? | 429) ;;
    *) echo "$key replay $CODE" >>"$out.bad" ;;
  esac
}

load_read() { # must answer the payment asked for
  local key id
  [[ -s $out.keys ]] || return
  read -r key id _ < <(shuf -n 1 "$out.keys")
  [[ $id == - ]] && return
  send read "$API/v1/payments/$id"
  [[ $CODE == 200 || $CODE == 000 || $CODE == 5?? ]] || echo "$id read $CODE" >>"$out.bad"
  [[ $CODE == 200 && $(jq -r .id "$out.body") != "$id" ]] && echo "$id read-other" >>"$out.bad"
}

load_worker() { # N
  local n=$1 i=0 out=$OUT/results/w$1
  while [[ ! -e $OUT/stop ]]; do
    i=$((i + 1))
    case $((RANDOM % 10)) in
      [0-3]) load_payment automatic ;;
      [4-5]) load_payment manual ;;
      [6-7]) load_replay ;;
      *) load_read ;;
    esac
  done
}

# load_evidence: the clients' answers for the invariants (scripts/invariants.sh): $OUT/client.tsv (key, payment_id,
# code), $OUT/ops.tsv (the .ops lines) and every request in time order in $OUT/requests.txt.
load_evidence() {
  cat "$OUT"/results/w*.keys 2>/dev/null | awk '{print $1 "\t" ($2 == "-" ? "" : $2) "\t" $3}' >"$OUT/client.tsv"
  cat "$OUT"/results/w*.ops 2>/dev/null | tr ' ' '\t' >"$OUT/ops.tsv"
  cat "$OUT"/results/w*.requests 2>/dev/null | sort -n >"$OUT/requests.txt"
}

# unsettled [SQL]: what the load left to settle, 0 once everything is: unsent outbox rows, PENDING refunds, payments
# whose PSP call is pending and not handed to the operations queue, the sandbox's webhooks still to send, plus the
# scenario's own count (SQL). Needs sql() and PSP.
unsettled() {
  local pending
  pending=$(curl -fsS "$PSP/test/webhooks" | jq '[.[] | select(.status == "PENDING" or .status == "RETRYING")] | length')
  sql -c "SELECT (SELECT count(*) FROM outbox WHERE sent_at IS NULL)
    + (SELECT count(*) FROM refunds WHERE status = 'PENDING')
    + (SELECT count(*) FROM payments p WHERE status IN ('PROCESSING','UNKNOWN','AUTHORIZING','CAPTURING','CANCELING',
      'EXPIRING') AND NOT EXISTS
      (SELECT 1 FROM operations_queue q WHERE q.subject_type = 'payment' AND q.subject_id = p.id::text))
    + (${1:-0})
    + ${pending:-1}" 2>/dev/null
}
