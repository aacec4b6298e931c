#!/usr/bin/env bash
# System fault suite (issue 11): starts the local stack (real processes), runs a steady mixed load, and during it
# kill -9s and restarts payments-api, outbox-relay and refunds-worker and turns sandbox faults on and off; then
# lets the system settle and checks design.md §7 from PostgreSQL, Kafka and the sandbox's counters.
# Prints requests made, faults injected, invariants checked, violations found; exits 1 on any violation.
# Bounded in time, stops everything it started. See docs/fault-suite.md.
#
#   scripts/fault-suite.sh          short run (about 60 s of load, each service killed twice)
#   scripts/fault-suite.sh --long   long run (LOAD_SECONDS=300, more kills and fault windows)
#   env: LOAD_SECONDS, WORKERS, SETTLE_SECONDS, API_PORT/RELAY_PORT/WORKER_PORT/PSP_PORT (default 182xx),
#        KEEP=1 (leave .local/fault-suite for inspection)
# The jars must be built (./mvnw -B package -DskipTests, or one ./local-stack.sh run); then SKIP_BUILD=1 is used.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

LONG=0
[[ "${1:-}" == "--long" ]] && LONG=1
if ((LONG)); then
  LOAD_SECONDS=${LOAD_SECONDS:-300} ROUNDS=${ROUNDS:-8}
else
  LOAD_SECONDS=${LOAD_SECONDS:-60} ROUNDS=${ROUNDS:-2}
fi
WORKERS=${WORKERS:-4}
SETTLE_SECONDS=${SETTLE_SECONDS:-90}
export API_PORT=${API_PORT:-18280} RELAY_PORT=${RELAY_PORT:-18281} WORKER_PORT=${WORKER_PORT:-18282}
export PSP_PORT=${PSP_PORT:-18289} PAYMENTS_ADMIN_TOKEN=${PAYMENTS_ADMIN_TOKEN:-fault-suite-admin}
API=http://127.0.0.1:$API_PORT
PSP=http://127.0.0.1:$PSP_PORT
OUT=$ROOT/.local/fault-suite
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
START=$SECONDS

say() { printf '[fault-suite %4ds] %s\n' $((SECONDS - START)) "$*"; }
die() { say "ERROR: $*"; exit 2; }

rm -rf "$OUT" && mkdir -p "$OUT/results"
MY_PIDS=()
STACK_PID=
cleanup() {
  trap - INT TERM EXIT
  for pid in "${MY_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  [[ -n $STACK_PID ]] && kill "$STACK_PID" 2>/dev/null && wait "$STACK_PID" 2>/dev/null
  for pid in "${MY_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; done
  [[ -n ${KEEP:-} ]] || rm -rf "$OUT/results"
}
trap cleanup INT TERM EXIT

# --- 1. The stack -------------------------------------------------------------------------------------------
for m in payments-api outbox-relay refunds-worker psp-sandbox reconciler; do
  [[ -f $m/target/quarkus-app/quarkus-run.jar ]] || die "$m is not built: ./mvnw -B package -DskipTests first"
done
[[ -f .local/infra.classpath ]] || die "missing .local/infra.classpath: run ./local-stack.sh once (it writes it)"
say "starting the stack (./local-stack.sh, SKIP_BUILD=1, api :$API_PORT)"
SKIP_BUILD=1 ./local-stack.sh >"$OUT/stack.log" 2>&1 &
STACK_PID=$!
deadline=$((SECONDS + 300))
until grep -q 'The payments platform is running' "$OUT/stack.log"; do
  kill -0 "$STACK_PID" 2>/dev/null || { tail -n 20 "$OUT/stack.log"; die "the stack did not start"; }
  ((SECONDS < deadline)) || die "the stack did not start in 300 s"
  sleep 1
done
# shellcheck disable=SC1091
source .local/env
# shellcheck disable=SC1091
source .local/infra.env
export PGHOST=$PAYMENTS_PG_HOST PGPORT=$PAYMENTS_PG_PORT PGUSER=$PAYMENTS_PG_USER PGPASSWORD=$PAYMENTS_PG_PASSWORD
export PGDATABASE=$PAYMENTS_PG_DATABASE
sql() { psql -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }
# A merchant of our own (the stack runs the prod profile: no demo merchants), with a rate limit above the load.
KEY=$(curl -fsS -H "Authorization: Bearer $PAYMENTS_ADMIN_TOKEN" -H 'Content-Type: application/json' \
  -d '{"name":"fault suite","rateLimitPerSecond":100000}' "$API/v1/admin/merchants" | jq -r .apiKey)
[[ $KEY == sk_* ]] || die "could not create the merchant"
say "stack ready"

# --- 2. Faults ----------------------------------------------------------------------------------------------
FAULTS=0
pid_on_port() { ss -ltnpH "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2; }
restart() { # NAME PORT
  local name=$1 port=$2 pid
  pid=$(pid_on_port "$port")
  [[ -n $pid ]] || { say "no $name on :$port"; return; }
  kill -9 "$pid"
  FAULTS=$((FAULTS + 1))
  say "kill -9 $name (pid $pid)"
  while [[ -n $(pid_on_port "$port") ]]; do sleep 0.2; done
  "$JAVA" -Xmx384m -Dquarkus.http.port="$port" -jar "$name/target/quarkus-app/quarkus-run.jar" \
    >>"$ROOT/.local/logs/$name.log" 2>&1 &
  MY_PIDS+=($!)
  local until=$((SECONDS + 120))
  until curl -fsS -o /dev/null "http://127.0.0.1:$port/q/health/ready" 2>/dev/null; do
    ((SECONDS < until)) || { say "$name not ready after 120 s"; return; }
    sleep 0.3
  done
  say "$name back"
}
psp_faults() { # JSON
  curl -fsS -o /dev/null -X PUT -H 'Content-Type: application/json' -d "$1" "$PSP/test/faults" && say "sandbox faults $1"
}

# --- 3. Load: captures retried with the same key until answered, replays, reads (refunds if the endpoint exists)
REFUNDS=0
probe_refunds() {
  local id code
  id=$(curl -s -H "Authorization: Bearer $KEY" -H "Idempotency-Key: probe-$RANDOM$RANDOM" -H 'Content-Type: application/json' \
    -d '{"orderId":"probe","amount":1000,"currency":"EUR","source":"tok_visa"}' "$API/v1/payments" | jq -r .id)
  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $KEY" -H "Idempotency-Key: probe-r-$id" \
    -H 'Content-Type: application/json' -d '{"amount":1}' "$API/v1/payments/$id/refunds")
  [[ $code == 201 || $code == 202 ]] && REFUNDS=1
}

worker() { # N END
  local n=$1 end=$2 i=0 out=$OUT/results/w$1 code key body amount source id
  while ((SECONDS < end)); do
    i=$((i + 1))
    case $((RANDOM % 10)) in
      [0-5])
        key="fs-$n-$i-$RANDOM"
        amount=$((RANDOM % 50000 + 100))
        source=tok_visa
        ((RANDOM % 10 == 0)) && source=tok_chargeDeclined
        body="{\"orderId\":\"fs-$n-$i\",\"amount\":$amount,\"currency\":\"EUR\",\"source\":\"$source\"}"
        # The client's contract: retry the same key until a definitive answer (or the settle deadline).
        while :; do
          code=$(curl -s -o "$out.body" -w '%{http_code}' --max-time 15 -H "Authorization: Bearer $KEY" \
            -H "Idempotency-Key: $key" -H 'Content-Type: application/json' -d "$body" "$API/v1/payments")
          echo "req" >>"$out.req"
          case $code in
            201 | 202 | 402) echo "$key $(jq -r .id "$out.body") $code $amount $source fs-$n-$i" >>"$out.keys"; break ;;
            5?? | 000 | 409 | 429) ((SECONDS < end + SETTLE_SECONDS)) || { echo "$key - unresolved $code" >>"$out.keys"; break; }
              sleep 1 ;;
            *) echo "$key - unexpected $code" >>"$out.keys"; break ;;
          esac
        done
        if ((REFUNDS)) && [[ $code == 201 ]] && ((RANDOM % 3 == 0)); then
          id=$(jq -r .id "$out.body")
          # NEEDS refund reservation: partial refund retried with the same key
          for _ in 1 2 3 4 5 6 7 8 9 10; do
            code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 15 -H "Authorization: Bearer $KEY" \
              -H "Idempotency-Key: r-$key" -H 'Content-Type: application/json' -d "{\"amount\":$((amount / 2))}" \
              "$API/v1/payments/$id/refunds")
            echo "req" >>"$out.req"
            [[ $code == 2?? || $code == 4?? && $code != 409 && $code != 429 ]] && break
            sleep 1
          done
        fi
        ;;
      [6-7]) # replay an earlier key with the same body: must answer the same payment
        [[ -s $out.keys ]] || continue
        read -r key id code amount source order < <(shuf -n 1 "$out.keys")
        [[ $id == - ]] && continue
        body="{\"orderId\":\"$order\",\"amount\":$amount,\"currency\":\"EUR\",\"source\":\"$source\"}"
        code=$(curl -s -o "$out.body" -w '%{http_code}' --max-time 15 -H "Authorization: Bearer $KEY" \
          -H "Idempotency-Key: $key" -H 'Content-Type: application/json' -d "$body" "$API/v1/payments")
        echo "req" >>"$out.req"
        case $code in
          201 | 202 | 402) [[ $(jq -r .id "$out.body") == "$id" ]] || echo "$key replay-other-payment" >>"$out.bad" ;;
          000 | 5?? | 429) ;;
          *) echo "$key replay $code" >>"$out.bad" ;;
        esac
        ;;
      *)
        [[ -s $out.keys ]] || continue
        read -r key id code _ < <(shuf -n 1 "$out.keys")
        [[ $id == - ]] && continue
        code=$(curl -s -o "$out.body" -w '%{http_code}' --max-time 15 -H "Authorization: Bearer $KEY" "$API/v1/payments/$id")
        echo "req" >>"$out.req"
        [[ $code == 200 || $code == 000 || $code == 5?? ]] || echo "$id read $code" >>"$out.bad"
        [[ $code == 200 && $(jq -r .id "$out.body") != "$id" ]] && echo "$id read-other" >>"$out.bad"
        ;;
    esac
  done
}

probe_refunds
if ((REFUNDS)); then say "refund endpoint found: partial refunds are part of the load"; else
  say "no POST /v1/payments/{id}/refunds on this build: load without refunds (NEEDS refund reservation)"; fi

LOAD_END=$((SECONDS + LOAD_SECONDS))
for w in $(seq 1 "$WORKERS"); do worker "$w" "$LOAD_END" & MY_PIDS+=($!); done
WORKER_PIDS=("${MY_PIDS[@]: -$WORKERS}")
say "load: $WORKERS workers for $LOAD_SECONDS s"

# The fault schedule: ROUNDS rounds spread over the load, each: api, relay, worker killed, then sandbox faults.
step=$((LOAD_SECONDS / (ROUNDS * 4 + 1)))
((step < 3)) && step=3
for r in $(seq 1 "$ROUNDS"); do
  ((SECONDS < LOAD_END)) || break
  sleep "$step"; restart payments-api "$API_PORT"
  sleep "$step"; restart outbox-relay "$RELAY_PORT"
  sleep "$step"; restart refunds-worker "$WORKER_PORT"
  sleep "$step"
  if ((r % 2)); then psp_faults '{"errorRate":0.3}'; else psp_faults '{"timeoutRate":0.3}'; fi
  FAULTS=$((FAULTS + 1))
  sleep "$step"; psp_faults '{"errorRate":0,"timeoutRate":0}'
done
say "fault schedule done; waiting for the load to finish and the clients to settle their keys"
wait "${WORKER_PIDS[@]}"
curl -fsS -o /dev/null -X DELETE "$PSP/test/faults"

# --- 4. Settle: the relay publishes everything; the resolver (if present) resolves ---------------------------
deadline=$((SECONDS + SETTLE_SECONDS))
until [[ $(sql -c "SELECT count(*) FROM outbox WHERE sent_at IS NULL") == 0 ]] || ((SECONDS >= deadline)); do sleep 1; done
RESOLVER=0
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{}' "$API/v1/psp/webhooks")
[[ $code != 404 && $code != 405 ]] && RESOLVER=1
if ((RESOLVER)); then
  until [[ $(sql -c "SELECT count(*) FROM payments p WHERE status IN ('PROCESSING','UNKNOWN') AND NOT EXISTS
      (SELECT 1 FROM operations_queue q WHERE q.subject_type = 'payment' AND q.subject_id = p.id::text)") == 0 ]] ||
    ((SECONDS >= deadline)); do sleep 2; done
fi
say "settled"

# --- 5. Evidence: the sandbox's counters per payment, the payment-events topic, the clients' results ----------
cat "$OUT"/results/w*.keys 2>/dev/null | awk '{print $1 "\t" ($2 == "-" ? "" : $2) "\t" $3}' >"$OUT/client.tsv"
REQUESTS=$(cat "$OUT"/results/w*.req 2>/dev/null | wc -l)
BAD_ANSWERS=$(cat "$OUT"/results/w*.bad 2>/dev/null | wc -l)
sql -c "SELECT id FROM payments" | while read -r id; do
  curl -fsS "$PSP/test/counters/$id" | jq -r '[.reference, .chargeMovements, .refundMovements] | @tsv'
done >"$OUT/psp.tsv"
./local-stack.sh events payment-events 15 2>/dev/null |
  sed -n 's#^\([0-9]*\)/\([0-9]*\) \([^ ]*\) .*"eventId": *"\([^"]*\)".*#\1\t\2\t\3\t\4#p' >"$OUT/kafka.tsv"

# Every invariant is a query counting its violations.
CHECKS=$(cat <<'SQL'
no payment charged twice at the PSP|SELECT count(*) FROM psp WHERE charge_movements > 1
every CAPTURED payment charged exactly once|SELECT count(*) FROM payments p LEFT JOIN psp ON psp.reference = p.id::text WHERE p.status = 'CAPTURED' AND coalesce(psp.charge_movements, 0) <> 1
no FAILED payment charged|SELECT count(*) FROM payments p JOIN psp ON psp.reference = p.id::text WHERE p.status = 'FAILED' AND psp.charge_movements <> 0
refunded_amount <= amount|SELECT count(*) FROM payments WHERE refunded_amount > amount
refunded_amount = reserved + succeeded refunds|SELECT count(*) FROM payments p WHERE refunded_amount <> (SELECT coalesce(sum(amount), 0) FROM refunds r WHERE r.payment_id = p.id AND r.status IN ('PENDING', 'SUCCEEDED'))
PSP refund movements <= refunds reserved or succeeded|SELECT count(*) FROM payments p JOIN psp ON psp.reference = p.id::text WHERE psp.refund_movements > (SELECT count(*) FROM refunds r WHERE r.payment_id = p.id AND r.status IN ('PENDING', 'SUCCEEDED'))
ledger balanced per transaction|SELECT count(*) FROM (SELECT 1 FROM ledger_entries GROUP BY transaction_id, currency HAVING sum(amount) <> 0) t
ledger balanced in total|SELECT count(*) FROM (SELECT 1 FROM ledger_entries GROUP BY currency HAVING sum(amount) <> 0) t
one CAPTURE ledger transaction per CAPTURED payment, none otherwise|SELECT count(*) FROM payments p WHERE (p.status = 'CAPTURED') <> EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.kind = 'CAPTURE' AND t.reference = p.id::text)
every outbox row published|SELECT count(*) FROM outbox WHERE sent_at IS NULL
every payment-events row on Kafka|SELECT count(*) FROM outbox o WHERE o.topic = 'payment-events' AND NOT EXISTS (SELECT 1 FROM kafka k WHERE k.event_id = o.event_id::text)
each payment's events in commit order on Kafka|SELECT count(*) FROM (SELECT o.event_id, row_number() OVER (PARTITION BY o.key ORDER BY o.id) AS want, row_number() OVER (PARTITION BY o.key ORDER BY f.part, f.off) AS got FROM outbox o JOIN (SELECT DISTINCT ON (event_id) event_id, part, off FROM kafka ORDER BY event_id, part, off) f ON f.event_id = o.event_id::text WHERE o.topic = 'payment-events') t WHERE want <> got
one partition per payment on Kafka|SELECT count(*) FROM (SELECT key FROM kafka GROUP BY key HAVING count(DISTINCT part) > 1) t
evidence: payments exist, were answered, are on Kafka|SELECT CASE WHEN (SELECT count(*) FROM payments) = 0 OR (SELECT count(*) FROM client WHERE payment_id <> '') = 0 OR (SELECT count(*) FROM kafka) = 0 OR (SELECT count(*) FROM psp) = 0 THEN 1 ELSE 0 END
no unexpected answer to a valid capture|SELECT count(*) FROM client WHERE code LIKE 'unexpected%' OR code NOT IN ('201', '202', '402', 'unresolved')
every answered payment exists|SELECT count(*) FROM client c WHERE c.payment_id <> '' AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.id::text = c.payment_id)
answered status matches or moved on (201 CAPTURED, 402 FAILED)|SELECT count(*) FROM client c JOIN payments p ON p.id::text = c.payment_id WHERE (c.code = '201' AND p.status <> 'CAPTURED') OR (c.code = '402' AND p.status <> 'FAILED')
SQL
)
if ((RESOLVER)); then
  CHECKS+=$'\n'"every client key answered (retried until settled)|SELECT count(*) FROM client WHERE payment_id = ''"
  CHECKS+=$'\n'"no PROCESSING/UNKNOWN left outside the operations queue|SELECT count(*) FROM payments p WHERE status IN ('PROCESSING','UNKNOWN') AND NOT EXISTS (SELECT 1 FROM operations_queue q WHERE q.subject_type = 'payment' AND q.subject_id = p.id::text)"
fi

setup="CREATE TEMP TABLE psp (reference text, charge_movements int, refund_movements int);
CREATE TEMP TABLE kafka (part int, off bigint, key text, event_id text);
CREATE TEMP TABLE client (key text, payment_id text, code text);
\\copy psp FROM '$OUT/psp.tsv'
\\copy kafka FROM '$OUT/kafka.tsv'
\\copy client FROM '$OUT/client.tsv'"
INVARIANTS=0 VIOLATIONS=0
echo
printf '%-70s %s\n' "invariant" "violations"
while IFS='|' read -r name query; do
  [[ -n $name ]] || continue
  n=$(printf '%s\n%s;\n' "$setup" "$query" | sql | tail -1)
  INVARIANTS=$((INVARIANTS + 1))
  [[ $n =~ ^[0-9]+$ ]] || { echo "check failed to run: $name ($n)"; n=1; }
  VIOLATIONS=$((VIOLATIONS + n))
  printf '%-70s %s\n' "$name" "$n"
done <<<"$CHECKS"
INVARIANTS=$((INVARIANTS + 1))
VIOLATIONS=$((VIOLATIONS + BAD_ANSWERS))
printf '%-70s %s\n' "replays and reads answer the same payment" "$BAD_ANSWERS"
((BAD_ANSWERS)) && cat "$OUT"/results/w*.bad | head -20

STUCK=$(sql -c "SELECT count(*) FROM payments WHERE status IN ('PROCESSING','UNKNOWN')")
echo
say "payments: $(sql -c "SELECT string_agg(status || '=' || n, ' ') FROM (SELECT status, count(*) n FROM payments GROUP BY status ORDER BY status) t")"
say "outbox rows: $(sql -c 'SELECT count(*) FROM outbox'), Kafka payment-events records: $(wc -l <"$OUT/kafka.tsv")"
if ((!RESOLVER)); then
  say "PROCESSING/UNKNOWN left: $STUCK, client keys never answered (stuck IN_PROGRESS): $(grep -c unresolved "$OUT/client.tsv")"
  say "  not counted as violations: no resolver on this build (NEEDS resolver + webhooks)"
fi
echo
echo "requests made:        $REQUESTS"
echo "faults injected:      $FAULTS"
echo "invariants checked:   $INVARIANTS"
echo "violations found:     $VIOLATIONS"
echo "duration:             $((SECONDS - START)) s"
((VIOLATIONS == 0)) || exit 1
