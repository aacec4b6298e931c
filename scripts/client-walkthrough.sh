#!/usr/bin/env bash
# The README's walkthrough through the merchant API clients that OpenAPI Generator makes from the committed
# docs/openapi.yaml (clients/pom.xml; docs/clients.md): a Java client (java.net.http + Jackson) and a TypeScript one
# (typescript-fetch, compiled with tsc, run on Node). Each does capture, replay with the same key, key reuse (422),
# refund, and reads the refund until SUCCEEDED, against a running local stack (./local-stack.sh). CI runs it.
#
#   scripts/client-walkthrough.sh         generate, compile, run both
#   scripts/client-walkthrough.sh build   generate and compile only (no stack needed)
#   scripts/client-walkthrough.sh run     run both (after build)
# Generated code stays in clients/target/ (git-ignored). Exit 0 when both walkthroughs passed.
set -euo pipefail
cd "$(dirname "$0")/.."
API=${API:-http://127.0.0.1:8080}
KEY=${MERCHANT_KEY:-sk_test_demo_merchant_a}
MODE=${1:-all}

# shellcheck source=scripts/openapi-tools.sh
source scripts/openapi-tools.sh

if [[ $MODE == all || $MODE == build ]]; then
  echo "--- generating the Java and TypeScript clients from docs/openapi.yaml, compiling the walkthroughs"
  ./mvnw -B -q -f clients/pom.xml clean compile
  tsc -p clients/tsconfig.json
fi

if [[ $MODE == all || $MODE == run ]]; then
  echo "--- Java client walkthrough"
  ./mvnw -B -q -f clients/pom.xml exec:java -Dexec.mainClass=com.payments.clients.Walkthrough \
    -Dexec.args="$API $KEY" || { echo "java client walkthrough FAILED" >&2; exit 1; }
  echo "--- TypeScript client walkthrough"
  node clients/target/typescript-build/typescript/walkthrough.js "$API" "$KEY" ||
    { echo "typescript client walkthrough FAILED" >&2; exit 1; }
  echo "client walkthroughs: both passed"
fi
