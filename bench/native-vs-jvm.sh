#!/usr/bin/env bash
# payments-api as a jar and as a native executable, one after the other, on the same machine: time to ready, resident
# memory idle and under a short capture load, and captures/s (docs/benchmarks.md, "Native against JVM").
#
#   bench/native-vs-jvm.sh                 # both; the jar and the executable must exist (no build here)
#   MODES=native DURATION=20s bench/native-vs-jvm.sh
# The native executable comes from `./mvnw package -Dnative -pl payments-api -am` with the test toolchain
# (docs/deployment.md). The sandbox runs as a jar with its own heap; its memory is not counted.
# PostgreSQL: PAYMENTS_PG_HOST/PORT/USER/PASSWORD if set, otherwise local-infra's LocalInfraMain starts one.
set -euo pipefail
cd "$(dirname "$0")/.."

MODES=${MODES:-"jvm native"}
API_PORT=${API_PORT:-18080}
PSP_PORT=${PSP_PORT:-18089}
DURATION=${DURATION:-20s}
WARMUP=${WARMUP:-20s}
CONNECTIONS=${CONNECTIONS:-16}
# The same heap ceiling for both: about what a native executable takes in a 256 MiB container (80 % of it). The
# test toolchain's executables do not see container limits, so it is given explicitly.
HEAP=${HEAP:-200m}
ADMIN_TOKEN=bench-operator-token-$RANDOM$RANDOM
API=http://127.0.0.1:$API_PORT
PSP=http://127.0.0.1:$PSP_PORT

source bench/lib.sh
ensure_wrk
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT
LOGDIR=$(mktemp -d /tmp/native-bench.XXXXXX)
start_postgres "$LOGDIR"
PG_PORT=${PAYMENTS_PG_PORT:-5432}
PG_USER=${PAYMENTS_PG_USER:-postgres}

java -Xms1g -Xmx1g -XX:+UseZGC -Dquarkus.http.port="$PSP_PORT" -Dquarkus.log.level=WARN \
  -jar psp-sandbox/target/quarkus-app/quarkus-run.jar >"$LOGDIR/psp.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 600); do curl -fs "$PSP/q/health/ready" >/dev/null 2>&1 && break; sleep 0.2; done

rss() { awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
millis() { date +%s%3N; }

for mode in $MODES; do
  DB=bench_${mode}_$(date +%s)
  PGPASSWORD=${PAYMENTS_PG_PASSWORD:-} psql -q -h "$PAYMENTS_PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres \
    -c "CREATE DATABASE $DB" >/dev/null
  export QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://$PAYMENTS_PG_HOST:$PG_PORT/$DB"
  export QUARKUS_DATASOURCE_JDBC_URL="jdbc:postgresql://$PAYMENTS_PG_HOST:$PG_PORT/$DB"
  export QUARKUS_DATASOURCE_USERNAME="$PG_USER" QUARKUS_DATASOURCE_PASSWORD="${PAYMENTS_PG_PASSWORD:-}"
  export PAYMENTS_ADMIN_TOKEN="$ADMIN_TOKEN" PSP_URL="$PSP"
  if [[ $mode == native ]]; then
    cmd=("$(compgen -G 'payments-api/target/*-runner' | head -n 1)" "-Xmx$HEAP")
  else
    cmd=(java "-Xmx$HEAP" -jar payments-api/target/quarkus-app/quarkus-run.jar)
  fi
  # the migration Job, then the service on the migrated database
  QUARKUS_INIT_AND_EXIT=true QUARKUS_FLYWAY_MIGRATE_AT_START=true "${cmd[@]}" >"$LOGDIR/$mode-migrate.log" 2>&1
  t0=$(millis)
  "${cmd[@]}" -Dquarkus.http.port="$API_PORT" >"$LOGDIR/$mode.log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  until curl -fs -o /dev/null "$API/q/health/ready" 2>/dev/null; do
    kill -0 "$pid" || { tail "$LOGDIR/$mode.log"; exit 1; }
    sleep 0.01
  done
  ready_ms=$(($(millis) - t0))
  started=$(grep -o 'started in [0-9.]*s' "$LOGDIR/$mode.log" | head -n 1)
  sleep 5
  idle=$(rss "$pid")
  KEY=$(curl -fs -X POST "$API/v1/admin/merchants" -H "Authorization: Bearer $ADMIN_TOKEN" \
    -H 'Content-Type: application/json' -d '{"name":"bench","rateLimitPerSecond":1000000}' |
    sed -E 's/.*"apiKey":"([^"]+)".*/\1/')
  wrk -t2 -c"$CONNECTIONS" -d"$WARMUP" -s bench/capture.lua "$API" -- "$KEY" "warm-$mode" >/dev/null
  peak=0
  (while kill -0 "$pid" 2>/dev/null; do r=$(rss "$pid"); echo "$r"; sleep 0.5; done) >"$LOGDIR/$mode.rss" &
  sampler=$!
  OUT=$(wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency -s bench/capture.lua "$API" -- "$KEY" "run-$mode")
  kill "$sampler" 2>/dev/null || true
  peak=$(sort -n "$LOGDIR/$mode.rss" | tail -n 1)
  rate=$(echo "$OUT" | awk '/Requests\/sec/ {print $2}')
  p99=$(echo "$OUT" | awk '$1 == "99%" {print $2}')
  echo "$mode: ready ${ready_ms} ms (log: ${started:-?}), idle RSS ${idle} MiB, RSS under load (max) ${peak} MiB," \
    "captures/s ${rate} p99 ${p99} at ${CONNECTIONS} connections, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
done
echo "logs in $LOGDIR"
