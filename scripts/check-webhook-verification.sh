#!/usr/bin/env bash
# Runs the openssl verification that docs/merchant-webhooks.md shows merchants (its ```bash block after the marker naming this
# script) against known vectors: the Standard Webhooks specification's, and an event body signed with the two secrets
# of a rotation (the same vectors as contracts' MerchantVerificationExampleTest). Each good webhook must verify and
# each bad one (other body, other id, stale or future or non-numeric timestamp, wrong secret) must not. Needs bash,
# openssl, base64 and od. CI: .ci/run, phase "webhook verification example".
set -euo pipefail

doc="$(cd "$(dirname "$0")/.." && pwd)/docs/merchant-webhooks.md"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

awk '/<!-- scripts\/check-webhook-verification.sh /{marked=1; next}
     marked && /^```bash$/{inside=1; next}
     inside && /^```$/{exit}
     inside{print}' "$doc" >"$work/verify.sh"
grep -q '^verify_webhook()' "$work/verify.sh" || { echo "no verify_webhook block found in $doc" >&2; exit 1; }
# shellcheck source=/dev/null
source "$work/verify.sh"

failures=0
expect() { # expect good|bad DESCRIPTION ID TIMESTAMP SIGNATURES BODY
  local want=$1 what=$2 got=bad
  printf '%s' "$6" >"$work/body"
  if verify_webhook "$3" "$4" "$5" "$work/body"; then got=good; fi
  if [[ $got == "$want" ]]; then
    echo "  ok: $what ($want)"
  else
    echo "  FAILED: $what: expected $want, got $got" >&2
    failures=$((failures + 1))
  fi
}

# Standard Webhooks specification vector
WEBHOOK_SECRET=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
WEBHOOK_NOW=1614265340
expect good "the specification's vector" msg_p5jXN8AQM9LWM0D4loKWxJek 1614265330 \
  'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' '{"test": 2432232314}'
expect bad "the specification's vector, body changed" msg_p5jXN8AQM9LWM0D4loKWxJek 1614265330 \
  'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' '{"test": 2432232315}'

# An event signed with the old and the new secret of a rotation (see MerchantVerificationExampleTest)
id=5f1c2a9e-6d7b-4c1e-9a51-0c2f1d7e8b34
ts=1796212801
body='{"id":"5f1c2a9e-6d7b-4c1e-9a51-0c2f1d7e8b34","type":"PaymentCaptured","createdAt":"2026-12-02T12:00:01.123456Z","data":{"type": "PaymentCaptured", "amount": 1999, "eventId": "5f1c2a9e-6d7b-4c1e-9a51-0c2f1d7e8b34", "orderId": "order-42", "currency": "EUR", "metadata": {"cart": "ünïcødé"}}}'
old='v1,tySB4ednmU4gMa0RG163Ov96gglTwGvjd5XEKNnL+vM='
new='v1,ay5UkHAtGNAUgn3Wmm95zkFLNNAeVSe2jJcpAucN4z0='
WEBHOOK_NOW=$ts
WEBHOOK_SECRET=whsec_cm90YXRlZC1zZWNyZXQtZm9yLXRoZS1kb2MtdGVzdHM=
expect good "rotation header, new secret" "$id" "$ts" "$old $new" "$body"
expect good "new signature only" "$id" "$ts" "$new" "$body"
expect bad "old signature only, new secret" "$id" "$ts" "$old" "$body"
expect bad "body re-serialized" "$id" "$ts" "$new" "${body//\", \"/\",\"}"
expect bad "another id" "${id/5/6}" "$ts" "$new" "$body"
expect bad "another timestamp" "$id" "$((ts + 1))" "$new" "$body"
expect bad "a v2 entry" "$id" "$ts" "v2,${new#v1,}" "$body"
expect bad "a glob as the header" "$id" "$ts" '*' "$body"
expect bad "arithmetic in the timestamp" "$id" 'a[$(touch '"$work"'/pwned)]' "$new" "$body"
[[ ! -e $work/pwned ]] || { echo "  FAILED: the timestamp was evaluated" >&2; failures=$((failures + 1)); }
WEBHOOK_NOW=$((ts + 300))
expect good "5 minutes after signing" "$id" "$ts" "$new" "$body"
WEBHOOK_NOW=$((ts + 301))
expect bad "5 minutes and a second after signing" "$id" "$ts" "$new" "$body"
WEBHOOK_NOW=$((ts - 301))
expect bad "signed 5 minutes and a second in the future" "$id" "$ts" "$new" "$body"
WEBHOOK_NOW=$ts
WEBHOOK_SECRET=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
expect good "rotation header, old secret" "$id" "$ts" "$old $new" "$body"

if ((failures > 0)); then
  echo "docs/merchant-webhooks.md's openssl verification: $failures of the vectors judged wrongly" >&2
  exit 1
fi
echo "docs/merchant-webhooks.md's openssl verification judged every vector as expected"
