#!/usr/bin/env bash
# Checks the monitoring of k8s/monitoring (docs/operations.md "Alerts"). Needs promtool (Debian package
# `prometheus`) and node/npm (the `yaml` package of k8s/validate).
#
#   k8s/monitoring/check.sh rules    promtool check rules + promtool test rules (tests/*.yaml), then proves the
#                                    checks can fail: a rule with a syntax error must be refused; with every alert
#                                    forced never to fire, each alert must fail a test that expects it to fire, and
#                                    forced always to fire, one that expects silence; the metric-name comparison
#                                    must report a missing name.
#   k8s/monitoring/check.sh metrics  every metric the rules and the dashboard read must be exported by the running
#                                    services: scrapes PAYMENTS_API_METRICS_URL, OUTBOX_RELAY_METRICS_URL,
#                                    REFUNDS_WORKER_METRICS_URL and WEBHOOK_DELIVERY_METRICS_URL (defaults: the local
#                                    stack's management ports) until all are there or METRICS_WAIT seconds (120)
#                                    passed, then names the missing ones. With PROMETHEUS_URL (local-stack.sh
#                                    PROMETHEUS=1) it also requires that Prometheus scrapes the four services (targets
#                                    up) and has loaded every alert.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
helper="$here/../validate/monitoring.mjs"
dashboard="$here/grafana-dashboard.json"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

command -v promtool >/dev/null || { echo "check.sh: promtool is required (apt-get install prometheus)" >&2; exit 1; }
[[ -d "$here/../validate/node_modules/yaml" ]] ||
  (cd "$here/../validate" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

node "$helper" rules "$here/prometheus-rule.yaml" >"$work/rules.yaml"
cp "$here"/tests/*.yaml "$work/"
tests=()
for file in "$here"/tests/*.yaml; do tests+=("$(basename "$file")"); done

fail() { echo "check.sh: $*" >&2; exit 1; }

rules() {
  promtool check rules "$work/rules.yaml"
  (cd "$work" && promtool test rules "${tests[@]}")

  echo "self-test: the checks must refuse broken rules"
  node "$helper" selftest || fail "metric name extraction self-test failed"
  mkdir "$work/broken"
  cp "$here"/tests/*.yaml "$work/broken/"
  sed 's/expr: max(outbox_oldest_unsent_age_seconds) > 60/expr: max(outbox_oldest_unsent_age_seconds > 60/' \
    "$work/rules.yaml" >"$work/broken/rules.yaml"
  cmp -s "$work/rules.yaml" "$work/broken/rules.yaml" && fail "self-test: the syntax error was not injected"
  if promtool check rules "$work/broken/rules.yaml" >/dev/null 2>&1; then
    fail "self-test: promtool check rules accepted a rule with a syntax error"
  fi
  # Every alert never firing must fail a test that expects it to fire; every alert always firing must fail a test
  # that expects silence. promtool prints each failed case as "alertname: X, time: T," then "exp:[..." .
  local mode alert
  for mode in never always; do
    node "$helper" force "$work/rules.yaml" "$mode" >"$work/broken/rules.yaml"
    if (cd "$work/broken" && promtool test rules "${tests[@]}" >"$work/broken/out.txt" 2>&1); then
      fail "self-test: the tests pass with every alert forced to $mode fire"
    fi
    awk -v mode="$mode" '/alertname: /{
        name = $2; sub(/,$/, "", name); getline
        if ((mode == "always") == ($0 ~ /exp:\[\],/)) print name }' "$work/broken/out.txt" |
      sort -u >"$work/broken/caught-$mode.txt"
    while read -r alert; do
      grep -qx "$alert" "$work/broken/caught-$mode.txt" ||
        fail "self-test: alert $alert has no test that fails when it $mode fires"
    done < <(node "$helper" alerts "$work/rules.yaml")
  done
  node "$helper" used "$work/rules.yaml" "$dashboard" >"$work/used.txt"
  node "$helper" missing "$work/used.txt" "$work/used.txt" >/dev/null || fail "self-test: names missing from themselves"
  sed 1d "$work/used.txt" >"$work/scraped.txt"
  if node "$helper" missing "$work/used.txt" "$work/scraped.txt" >/dev/null; then
    fail "self-test: a metric missing from the scrape was not reported"
  fi
  echo "self-test passed: a syntax error is refused; each of $(node "$helper" alerts "$work/rules.yaml" | wc -l)" \
    "alerts has a test that it fires and one that it stays quiet; a metric missing from the scrape is reported"
}

scrape() { # the metric names exported by every service, one per line
  local url
  for url in "$PAYMENTS_API_METRICS_URL" "$OUTBOX_RELAY_METRICS_URL" "$REFUNDS_WORKER_METRICS_URL" \
    "$WEBHOOK_DELIVERY_METRICS_URL"; do
    curl -fsS --max-time 10 "$url" || { echo "check.sh: cannot scrape $url" >&2; return 1; }
  done | grep -v '^#' | sed -E 's/[{ ].*//' | sort -u
}

metrics() {
  : "${PAYMENTS_API_METRICS_URL:=http://127.0.0.1:${API_MANAGEMENT_PORT:-9000}/q/metrics}"
  : "${OUTBOX_RELAY_METRICS_URL:=http://127.0.0.1:${RELAY_MANAGEMENT_PORT:-9001}/q/metrics}"
  : "${REFUNDS_WORKER_METRICS_URL:=http://127.0.0.1:${WORKER_MANAGEMENT_PORT:-9002}/q/metrics}"
  : "${WEBHOOK_DELIVERY_METRICS_URL:=http://127.0.0.1:${DELIVERY_MANAGEMENT_PORT:-9003}/q/metrics}"
  node "$helper" used "$work/rules.yaml" "$dashboard" >"$work/used.txt"
  local deadline=$((SECONDS + ${METRICS_WAIT:-120}))
  while true; do
    if scrape >"$work/scraped.txt" && node "$helper" missing "$work/used.txt" "$work/scraped.txt" >"$work/missing.txt"; then
      echo "all $(wc -l <"$work/used.txt") metrics of the rules and the dashboard are exported"
      break
    fi
    if ((SECONDS >= deadline)); then
      echo "check.sh: metrics used by the rules or the dashboard but exported by no service:" >&2
      sed 's/^/  /' "$work/missing.txt" >&2
      echo "  (scraped $PAYMENTS_API_METRICS_URL $OUTBOX_RELAY_METRICS_URL $REFUNDS_WORKER_METRICS_URL" \
        "$WEBHOOK_DELIVERY_METRICS_URL)" >&2
      return 1
    fi
    sleep 5
  done
  [[ -n "${PROMETHEUS_URL:-}" ]] || return 0
  local alerts up loaded
  alerts="$(node "$helper" alerts "$work/rules.yaml" | wc -l)"
  deadline=$((SECONDS + 60))
  while true; do
    up="$(curl -fsS "$PROMETHEUS_URL/api/v1/targets?state=active" | grep -o '"health":"up"' | wc -l)" || up=0
    loaded="$(curl -fsS "$PROMETHEUS_URL/api/v1/rules?type=alert" | grep -o '"type":"alerting"' | wc -l)" || loaded=0
    if ((up == 4 && loaded == alerts)); then
      echo "Prometheus at $PROMETHEUS_URL: 4 targets up, $loaded alerts loaded"
      return 0
    fi
    if ((SECONDS >= deadline)); then
      echo "check.sh: Prometheus at $PROMETHEUS_URL: $up of 4 targets up, $loaded of $alerts alerts loaded" >&2
      return 1
    fi
    sleep 2
  done
}

case "${1:-}" in
  rules) rules ;;
  metrics) metrics ;;
  *) echo "usage: $0 rules|metrics" >&2; exit 2 ;;
esac
