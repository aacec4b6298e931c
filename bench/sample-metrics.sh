#!/usr/bin/env bash
# Samples Prometheus metrics during a run: every INTERVAL seconds until killed, appends to OUT one line per sample, the
# time (ISO 8601, UTC) then the lines of URL whose metric names contain a match of METRICS_FILTER (an extended
# regex), joined by " ; ", e.g.
#   2026-12-05T07:10:03Z payments_psp_limit 20.0 ; payments_psp_in_flight 3.0 ; payments_shed_total{reason="psp_limit"} 2.0
# or the time then "down" when URL does not answer (within INTERVAL seconds) and "none" when nothing matches; it goes
# on either way. The default filter is payments-api's PSP limit (gauges payments_psp_limit and payments_psp_in_flight,
# PspConcurrencyLimit) and its shed requests (counter payments_shed_total{reason}, ApiMetrics); the gauges appear at
# payments-api's first PSP call, the counter at its first shed.
#
#   bench/sample-metrics.sh http://127.0.0.1:9000/q/metrics 1 /tmp/psp-limit.txt &   # payments-api's management port
#   SAMPLER=$!; ...the run...; kill $SAMPLER
#   METRICS_FILTER='refunds_pending|refunds_commands_in_flight' bench/sample-metrics.sh \
#     http://127.0.0.1:18092/q/metrics 5 /tmp/worker.txt   # refunds-worker under bench/refund-execution.sh
set -uo pipefail

(($# == 3)) || { echo "usage: [METRICS_FILTER=regex] $0 URL INTERVAL OUT" >&2; exit 2; }
URL=$1 INTERVAL=$2 OUT=$3
FILTER=${METRICS_FILTER:-payments_psp_limit|payments_psp_in_flight|payments_shed}

while true; do
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  if body=$(curl -fs --max-time "$INTERVAL" "$URL"); then
    lines=$(grep -E "^[^#{ ]*($FILTER)" <<<"$body")
    lines=${lines:-none}
    echo "$now ${lines//$'\n'/ ; }"
  else
    echo "$now down"
  fi >>"$OUT"
  sleep "$INTERVAL"
done
