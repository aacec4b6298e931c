#!/usr/bin/env bash
# Lints the committed merchant API document (docs/openapi.yaml) with Redocly's recommended rules (redocly.yaml).
# Exit 0 only with zero errors and zero warnings (redocly itself exits 0 on warnings). CI runs it;
# The service serves this file as it is; OpenApiDocumentTest holds it to the code (routes, records).
set -euo pipefail
cd "$(dirname "$0")/.."
SPEC=${1:-docs/openapi.yaml}
# shellcheck source=scripts/openapi-tools.sh
source scripts/openapi-tools.sh
redocly lint --max-problems=200 "$SPEC" || true
totals=$({ redocly lint --format=json "$SPEC" 2>/dev/null || true; } |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const t=JSON.parse(s).totals;console.log(`${t.errors} ${t.warnings}`)})')
read -r errors warnings <<<"$totals"
if [[ "$errors" != 0 || "$warnings" != 0 ]]; then
  echo "openapi lint FAILED: $errors errors, $warnings warnings in $SPEC" >&2
  exit 1
fi
echo "openapi lint: $SPEC has 0 errors, 0 warnings"
