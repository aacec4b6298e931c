#!/usr/bin/env bash
# Migration lint (docs/operations.md, "Expand and contract"): every migration above the baseline must be safe to apply
# while the previous release runs. squawk (pinned in scripts/migration-lint/package.json, installed into its
# node_modules, never global; the Linux x86-64 binary) refuses the statements that lock a hot table or break the previous release's queries:
# a NOT NULL column without a default on an existing table, an index built or dropped without CONCURRENTLY, a column
# type change, DROP TABLE/COLUMN, RENAME, a constraint added without NOT VALID. An exception is a `-- squawk-ignore
# <rule>` comment right under a `-- lint-exception: <why>` line (a squawk-ignore without one fails the lint).
#
#   scripts/migration-lint.sh             self-test on the fixtures of scripts/migration-lint/{bad,good} (each bad
#                                         migration must be refused for its `-- expect: <rule>`, the good ones
#                                         accepted), then lints contracts/src/main/resources/db/migration
#   scripts/migration-lint.sh DIR...      lints the migrations of DIR... only
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
tools="$here/migration-lint"
# V1..V93 are history (applied everywhere, written before this rule); only later migrations are linted.
BASELINE=93
# Not about the previous release or locks: idempotent re-runs (Flyway runs a migration once, in a transaction),
# integer widths, and per-statement timeouts (docs/operations.md says when to set lock_timeout by hand).
EXCLUDED=prefer-robust-stmts,prefer-bigint-over-int,prefer-bigint-over-smallint,prefer-identity
EXCLUDED+=,require-statement-timeout,require-lock-timeout

if [[ ! -f "$tools/node_modules/.installed-lock" ]] ||
  ! cmp -s "$tools/package-lock.json" "$tools/node_modules/.installed-lock"; then
  (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$tools/package-lock.json" "$tools/node_modules/.installed-lock"
fi
squawk="$tools/node_modules/@squawk-cli/linux-x64/bin/squawk"
[[ "$(uname -sm)" == "Linux x86_64" ]] || { echo "migration-lint.sh: squawk is pinned for Linux x86-64 only" >&2; exit 1; }

# above_baseline FILE: whether V<version>__*.sql is newer than V$BASELINE (versions compared as Flyway does: 94_1 = 94.1)
above_baseline() {
  local version
  version="$(basename "$1")"
  version="${version#V}"
  version="${version%%__*}"
  version="${version//_/.}"
  [[ "$version" != "$BASELINE" && "$(printf '%s\n%s\n' "$BASELINE" "$version" | sort -V | tail -n 1)" == "$version" ]]
}

# lint DIR...: prints every problem of the migrations above the baseline; fails when there is one
lint() {
  local files=() file status=0
  for file in $(find "$@" -maxdepth 1 -name 'V*__*.sql' | sort -V); do
    above_baseline "$file" && files+=("$file")
  done
  if ((${#files[@]} == 0)); then
    echo "migration lint: no migration above V$BASELINE in $*"
    return 0
  fi
  # An exception names its reason on the line above; the reviewer reads both in the migration's diff.
  awk '/^[ \t]*--[ \t]*squawk-ignore/ && prev !~ /^[ \t]*--[ \t]*lint-exception:[ \t]*[^ \t]/ {
         printf "%s:%d: squawk-ignore without a \"-- lint-exception: <why>\" line right above it\n", FILENAME, FNR; bad = 1 }
       { prev = $0 }
       END { exit bad }' "${files[@]}" || status=1
  grep -n -A1 -E '^[[:space:]]*--[[:space:]]*lint-exception:' "${files[@]}" /dev/null | sed 's/^/exception: /' || true
  # Flyway runs each migration in one transaction (a CONCURRENTLY one alone, outside): a table created earlier in
  # the same migration is new, nobody else can be locked out of it. gcc's line numbers start at 0: shown from 1.
  "$squawk" --pg-version 15 --assume-in-transaction --exclude="$EXCLUDED" --reporter gcc "${files[@]}" |
    awk 'match($0, /^[^:]+:[0-9]+:/) { split(substr($0, 1, RLENGTH - 1), p, ":");
           $0 = p[1] ":" p[2] + 1 ":" substr($0, RLENGTH + 1) } { print }' || status=1
  ((status == 0)) && echo "migration lint: ${#files[@]} migration(s) above V$BASELINE pass: ${files[*]##*/}"
  return "$status"
}

selftest() {
  local work file expect out
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  for file in "$tools"/bad/*.sql; do
    expect="$(sed -n 's/^-- expect: //p' "$file")"
    [[ -n "$expect" ]] || { echo "self-test: $file names no '-- expect: <rule>'" >&2; return 1; }
    rm -f "$work"/*.sql
    cp "$file" "$work/"
    if out="$(lint "$work" 2>&1)"; then
      echo "$out" >&2
      echo "self-test: the lint accepted $(basename "$file"), which must fail with $expect" >&2
      return 1
    fi
    grep -q -- "$expect" <<<"$out" ||
      { echo "$out" >&2; echo "self-test: $(basename "$file") failed, but not with $expect" >&2; return 1; }
  done
  out="$(lint "$tools/good" 2>&1)" ||
    { echo "$out" >&2; echo "self-test: the lint refused the good migrations" >&2; return 1; }
  local bad=("$tools"/bad/*.sql) good=("$tools"/good/*.sql)
  echo "self-test: ${#bad[@]} bad migrations refused for their rule, ${#good[@]} good ones accepted"
}

if (($# > 0)); then
  lint "$@"
else
  selftest
  lint "$here/../contracts/src/main/resources/db/migration"
fi
