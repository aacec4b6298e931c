#!/usr/bin/env bash
# Installs the pinned npm tools of clients/package.json (@redocly/cli, typescript) into clients/node_modules
# (git-ignored, never global), once per lock file. Sourced by scripts/openapi-lint.sh and scripts/client-walkthrough.sh.
TOOLS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../clients" && pwd)"
if [[ ! -f "$TOOLS_DIR/node_modules/.installed-lock" ]] ||
  ! cmp -s "$TOOLS_DIR/package-lock.json" "$TOOLS_DIR/node_modules/.installed-lock"; then
  (cd "$TOOLS_DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$TOOLS_DIR/package-lock.json" "$TOOLS_DIR/node_modules/.installed-lock"
fi
export PATH="$TOOLS_DIR/node_modules/.bin:$PATH"
# Redocly asks a server whether a newer version exists and sends usage data: neither on CI.
export REDOCLY_SUPPRESS_UPDATE_NOTICE=true REDOCLY_TELEMETRY=off
