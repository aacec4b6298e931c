#!/usr/bin/env bash
# The operator console's browser test (docs/console.md) against a running local stack (./local-stack.sh): headless
# Chromium from Debian's `chromium` package, driven by playwright-core pinned in scripts/console-browser/package.json.
# Installs both when missing (apt, npm ci). Environment: see scripts/console-browser/console.test.mjs.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
[[ -x ${CHROMIUM:-/usr/bin/chromium} ]] || missing+=(chromium)
command -v npm >/dev/null || missing+=(nodejs npm)
if ((${#missing[@]})); then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
LOCK=scripts/console-browser/package-lock.json
if ! cmp -s "$LOCK" scripts/console-browser/node_modules/.installed-lock 2>/dev/null; then
  npm ci --prefix scripts/console-browser --no-audit --no-fund --loglevel=error >/dev/null
  cp "$LOCK" scripts/console-browser/node_modules/.installed-lock
fi
exec node scripts/console-browser/console.test.mjs
