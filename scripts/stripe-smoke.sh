#!/usr/bin/env bash
# The README's walkthrough against real Stripe in test mode: starts the local stack with PSP_PROVIDER=stripe and
# Stripe's API (https://api.stripe.com) instead of the sandbox's Stripe mode, runs scripts/walkthrough.sh (capture,
# replay, key reuse, refund, Kafka events, a reconciliation of today's balance transactions; then manual capture:
# authorize, capture part, refunds, cancel) and stops the stack.
#
#   STRIPE_API_KEY=sk_test_... scripts/stripe-smoke.sh
#
# Needs a Stripe test-mode secret key (live keys are refused: the walkthrough moves money) and access to
# api.stripe.com. Webhooks (optional): Stripe cannot reach this machine, so forward them with the Stripe CLI,
#   stripe listen --forward-to http://127.0.0.1:${API_PORT:-18480}/v1/psp/stripe/webhooks
# and pass the signing secret it prints as STRIPE_WEBHOOK_SECRET. Without webhooks a payment whose answer was lost
# is settled by the resolver's look-up instead. It cannot run in CI here (no internet); CI checks it with bash -n.
# Ports: API_PORT etc. as for ./local-stack.sh, default 184xx so that it runs beside a local stack on the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { printf 'stripe-smoke: %s\n' "$*" >&2; exit 1; }
[[ -n ${STRIPE_API_KEY:-} ]] || die "set STRIPE_API_KEY to a Stripe test-mode secret key (sk_test_... or rk_test_...)"
[[ $STRIPE_API_KEY == sk_test_* || $STRIPE_API_KEY == rk_test_* ]] ||
  die "STRIPE_API_KEY is not a test-mode key: this script creates and refunds payments, live keys are refused"
curl -fsS -o /dev/null --max-time 10 -u "$STRIPE_API_KEY:" https://api.stripe.com/v1/balance ||
  die "Stripe's API did not accept the key at https://api.stripe.com/v1/balance (network or key)"

export PSP_PROVIDER=stripe PSP_STRIPE_API_BASE=https://api.stripe.com STRIPE_API_KEY
export STRIPE_WEBHOOK_SECRET=${STRIPE_WEBHOOK_SECRET:-whsec_unused_without_stripe_listen}
export API_PORT=${API_PORT:-18480} RELAY_PORT=${RELAY_PORT:-18481} WORKER_PORT=${WORKER_PORT:-18482}
export PSP_PORT=${PSP_PORT:-18489} API_MANAGEMENT_PORT=${API_MANAGEMENT_PORT:-18490}
export RELAY_MANAGEMENT_PORT=${RELAY_MANAGEMENT_PORT:-18491} WORKER_MANAGEMENT_PORT=${WORKER_MANAGEMENT_PORT:-18492}
export DELIVERY_PORT=${DELIVERY_PORT:-18483} DELIVERY_MANAGEMENT_PORT=${DELIVERY_MANAGEMENT_PORT:-18493}
# shellcheck source=lib.sh
source scripts/lib.sh

mkdir -p .local && rm -f .local/ready
./local-stack.sh >.local/stripe-smoke.log 2>&1 &
STACK_PID=$!
trap 'kill -TERM "$STACK_PID" 2>/dev/null; wait "$STACK_PID" 2>/dev/null || true' EXIT
wait_file .local/ready 600 "$STACK_PID" || { tail -n 40 .local/stripe-smoke.log; die "the stack did not start"; }
API=http://127.0.0.1:$API_PORT scripts/walkthrough.sh
echo "stripe-smoke: the walkthrough passed against Stripe test mode; see the payments in the Stripe Dashboard (test mode)"
