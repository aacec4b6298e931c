#!/usr/bin/env bash
# Refund execution of refunds-worker, end to end on this machine: N payments captured through payments-api (PSP at
# 0 ms), then one refund of 1 minor unit reserved on each through the API (as fast as 16 connections go, or paced at
# RATE per second), with the sandbox's latency set to PSP_LATENCY_MS. outbox-relay publishes the commands and one
# refunds-worker instance executes them. Measured from the refunds' own timestamps in PostgreSQL (created_at is the
# reservation, completed_at the SUCCEEDED/FAILED transition): executed refunds per second (N / first reservation to
# last completion, over the middle 80 % of completions, and after the last reservation: the worker alone, without
# the API's reservations on the same cores), and p50/p99 of reservation -> SUCCEEDED. While it runs,
# the PENDING backlog is sampled every second; the worker's and PostgreSQL's CPU seconds are printed at the end.
# With WARMUP_N > 0 each run first reserves WARMUP_N refunds on other payments, on the same stack at the run's latency
# and arrival (RATE or 16 connections), and waits until every one the API reserved is SUCCEEDED (it stops if one is
# not): the worker's JIT is warm when the measured N start (a cold worker put the paced 100/s run's p99 at 3.4 s).
# Every printed figure (throughput, p50/p99, the backlog, CPU per refund, the flame graph) covers the N refunds only.
#
#   PSP_LATENCY_MS=300 N=6000 bench/refund-execution.sh          # throughput at 300 ms
#   PSP_LATENCY_MS=300 N=3000 RATE=100 bench/refund-execution.sh # latency and backlog at 100 refunds/s
#   RUNS="300:0 0:0 300:100" N=6000 bench/refund-execution.sh    # several LATENCY_MS:RATE runs on one stack
#   WARMUP_N=1000 ...                                             # warm up each run with 1000 refunds (default 0)
#   SKIP_BUILD=1 ...                                              # use the jars as they are
#   PROFILE=/tmp/refunds-worker-flame ...  # async-profiler (cpu) on the worker during each run: PROFILE-<run>.html
#   WORKER_LOG_LEVEL=INFO ...             # the worker's log level (default WARN; production logs at INFO)
# CPU per refund (worker, and the processes of this run's PostgreSQL server only) is process CPU time from /proc,
# which does not depend on how loaded the machine is; throughput does.
# Kafka: an embedded broker (local-infra's LocalInfraMain). PostgreSQL: PAYMENTS_PG_* if set, else embedded.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-3000}
WARMUP_N=${WARMUP_N:-0}
PSP_LATENCY_MS=${PSP_LATENCY_MS:-300}
RATE=${RATE:-0}
RUNS=${RUNS:-"$PSP_LATENCY_MS:$RATE"}
API_PORT=${API_PORT:-18080}
RELAY_PORT=${RELAY_PORT:-18081}
WORKER_PORT=${WORKER_PORT:-18082}
PSP_PORT=${PSP_PORT:-18089}
THREADS=${THREADS:-2}
WORKER_LOG_LEVEL=${WORKER_LOG_LEVEL:-WARN}
PROFILE=${PROFILE:-}
# tools.profiler:async-profiler on Maven Central (the agent library for linux-x64), its version pinned in pom.xml
ASYNC_PROFILER_VERSION=$(sed -n 's:.*<async-profiler.version>\(.*\)</async-profiler.version>.*:\1:p' pom.xml)
API_OPTS=${API_OPTS:--Xms512m -Xmx512m -XX:+UseParallelGC}
WORKER_OPTS=${WORKER_OPTS:--Xms512m -Xmx512m -XX:+UseParallelGC}
RELAY_OPTS=${RELAY_OPTS:--Xmx384m}
PSP_OPTS=${PSP_OPTS:--Xms512m -Xmx512m -XX:+UseZGC}
ADMIN_TOKEN=bench-operator-token-$RANDOM$RANDOM
API=http://127.0.0.1:$API_PORT
PSP=http://127.0.0.1:$PSP_PORT

source bench/lib.sh
bench_build payments-api,outbox-relay,refunds-worker,psp-sandbox,local-infra
ensure_wrk
LOGDIR=$(mktemp -d /tmp/refund-execution.XXXXXX)
DB=bench_refund_exec_$(date +%s)

# PostgreSQL (from PAYMENTS_PG_* or embedded) and an embedded Kafka broker, with the database created.
start_infra "$LOGDIR" "$LOGDIR/infra.log" || exit 1
bench_database "$DB"
sql() { psql -q -tA -d "$DB" -c "$1"; }
export KAFKA_BOOTSTRAP_SERVERS="$PAYMENTS_KAFKA_BOOTSTRAP_SERVERS" PSP_URL="$PSP"

start() { # NAME PORT JAVA_OPTS JAR [more java args]; the management interface (health) on PORT + 10
  local name=$1 port=$2 opts=$3 jar=$4
  shift 4
  # shellcheck disable=SC2086
  # psp-sandbox has no management interface: its health is on its own port
  local ready="http://127.0.0.1:$((port + 10))/q/health/ready"
  [[ $name == psp-sandbox ]] && ready="http://127.0.0.1:$port/q/health/ready"
  start_jar "$LOGDIR/$name.log" "$ready" $opts -Dquarkus.http.port="$port" -Dquarkus.management.port=$((port + 10)) \
    -Dquarkus.log.level=WARN "$@" -jar "$jar" || exit 1
  printf -v "${name//-/_}_PID" %s "$STARTED_PID"
}
start psp-sandbox "$PSP_PORT" "$PSP_OPTS" psp-sandbox/target/quarkus-app/quarkus-run.jar
# The API migrates the fresh database at start (as the migration Job does).
QUARKUS_FLYWAY_MIGRATE_AT_START=true PAYMENTS_ADMIN_TOKEN="$ADMIN_TOKEN" \
  start payments-api "$API_PORT" "$API_OPTS" payments-api/target/quarkus-app/quarkus-run.jar
start outbox-relay "$RELAY_PORT" "$RELAY_OPTS" outbox-relay/target/quarkus-app/quarkus-run.jar
start refunds-worker "$WORKER_PORT" "$WORKER_OPTS" refunds-worker/target/quarkus-app/quarkus-run.jar \
  -Dquarkus.log.category.\"com.payments\".level="$WORKER_LOG_LEVEL"

if [[ -n $PROFILE ]]; then # the agent library out of the Maven Central jar, loaded into the worker per run (jcmd)
  ./mvnw -B -q -ntp dependency:get -Dtransitive=false \
    -Dartifact="tools.profiler:async-profiler:$ASYNC_PROFILER_VERSION:jar:linux-x64" >/dev/null
  unzip -q -o -d "$LOGDIR/async-profiler" \
    ~/.m2/repository/tools/profiler/async-profiler/$ASYNC_PROFILER_VERSION/async-profiler-$ASYNC_PROFILER_VERSION-linux-x64.jar
  PROFILER_LIB=$LOGDIR/async-profiler/linux-x64/libasyncProfiler.so
  JCMD=$(dirname "$(readlink -f "$(command -v "$JAVA")")")/jcmd
fi

KEY=$(curl -fs -X POST "$API/v1/admin/merchants" -H "Authorization: Bearer $ADMIN_TOKEN" \
  -H 'Content-Type: application/json' -d '{"name":"bench","rateLimitPerSecond":1000000}' |
  sed -E 's/.*"apiKey":"([^"]+)".*/\1/')

read -ra RUN_LIST <<<"$RUNS"
PER_RUN=$((WARMUP_N + N))
TOTAL=$((PER_RUN * ${#RUN_LIST[@]}))
echo "== capturing $TOTAL payments through the API (PSP at 0 ms)"
curl -fs -X DELETE "$PSP/test/faults" >/dev/null
round=0
while (($(sql "SELECT count(*) FROM payments WHERE status = 'CAPTURED'") < TOTAL)); do
  round=$((round + 1))
  ((round <= 60)) || { echo "fewer than $TOTAL payments CAPTURED after 60 rounds of 5 s (log: $LOGDIR)" >&2; exit 1; }
  wrk -t"$THREADS" -c16 -d5s -s bench/capture.lua "$API" -- "$KEY" "capture$round" >/dev/null
done
sql "SELECT id FROM payments WHERE status = 'CAPTURED' ORDER BY created_at LIMIT $TOTAL" >"$LOGDIR/all-payments.txt"
sql "VACUUM ANALYZE"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# This run's PostgreSQL server only (other servers may run on the machine): the postmaster's CPU with that of its
# ended children, plus its live children's. (A process may end between the glob and its read: cat goes on, where mawk
# would stop the script with no output.)
PG_POSTMASTER=$(head -n 1 "$(sql "SHOW data_directory")/postmaster.pid")
pg_ticks() {
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } |
    awk -v pm="$PG_POSTMASTER" '$1 == pm {s += $14 + $15 + $16 + $17} $4 == pm {s += $14 + $15} END {print s + 0}'
}
# reserve PREFIX PAYMENT_FILE COUNT: one refund on each of the COUNT payments of the file, at this run's RATE (or
# 16 connections), the refunds' Idempotency-Keys starting with PREFIX
reserve() {
  local connections=16 seconds=$(($3 / 500 + 5))
  if ((RATE > 0)); then
    connections=$THREADS
    seconds=$((($3 + RATE - 1) / RATE + 2))
  fi
  wrk -t"$THREADS" -c"$connections" -d"${seconds}s" -s bench/refund-execution.lua "$API" -- \
    "$KEY" "$1" "$2" "$THREADS" "$RATE" >"$LOGDIR/wrk-$1.txt"
}
ms_per_refund() { awk -v t="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", n ? t * 1000 / hz / n : 0}'; }
run=0
for spec in "${RUN_LIST[@]}"; do
  run=$((run + 1))
  PSP_LATENCY_MS=${spec%%:*}
  RATE=${spec##*:}
  FIRST=$(((run - 1) * PER_RUN + 1))
  sed -n "$((FIRST + WARMUP_N)),$((run * PER_RUN))p" "$LOGDIR/all-payments.txt" >"$LOGDIR/payments.txt"
  curl -fs -X PUT "$PSP/test/faults" -H 'Content-Type: application/json' \
    -d "{\"latencyFixedMs\":$PSP_LATENCY_MS}" >/dev/null
  echo
  echo "== run $run: PSP latency ${PSP_LATENCY_MS} ms, N=$N, RATE=$RATE (0 = 16 connections), WARMUP_N=$WARMUP_N; $(nproc) cores, uptime:$(uptime)"
  if ((WARMUP_N > 0)); then # every warm-up refund final before the measured run starts; none of them counted
    sed -n "$FIRST,$((FIRST + WARMUP_N - 1))p" "$LOGDIR/all-payments.txt" >"$LOGDIR/warmup-payments.txt"
    WARMUP_START=$(sql "SELECT now()")
    reserve "warmup$run" "$LOGDIR/warmup-payments.txt" "$WARMUP_N"
    for _ in $(seq 1 600); do
      (($(sql "SELECT count(*) FROM refunds WHERE status = 'PENDING' AND created_at >= '$WARMUP_START'") == 0)) && break
      sleep 1
    done
    WARMUP_STATUSES=$(sql "SELECT string_agg(status || ' ' || n, ', ') FROM
      (SELECT status, count(*) n FROM refunds WHERE created_at >= '$WARMUP_START' GROUP BY status ORDER BY status) s")
    # a reservation the API refused is only reported; a reserved refund that did not succeed stops the script
    if [[ ! $WARMUP_STATUSES =~ ^SUCCEEDED\ [0-9]+$ ]]; then
      echo "warm-up of run $run: not all SUCCEEDED: ${WARMUP_STATUSES:-none reserved} (log: $LOGDIR)" >&2
      exit 1
    fi
    echo "warm-up: ${WARMUP_STATUSES#SUCCEEDED } of $WARMUP_N refunds reserved, all SUCCEEDED, in" \
      "$(sql "SELECT round(extract(epoch FROM now() - '$WARMUP_START')::numeric)") s; left out of every figure below"
  fi
  RUN_START=$(sql "SELECT now()")
  WORKER_CPU0=$(cpu_ticks "$refunds_worker_PID")
  PG_CPU0=$(pg_ticks)
  # (jcmd splits its arguments at '=': the agent's options go quoted)
  [[ -z $PROFILE ]] || "$JCMD" "$refunds_worker_PID" JVMTI.agent_load "$PROFILER_LIB" '"start,event=cpu,interval=1ms"' >/dev/null

  # the PENDING backlog, once a second, while reserving and until every refund is final
  (
    while true; do
      echo "$(date +%s) $(sql "SELECT count(*) FROM refunds WHERE status = 'PENDING'")"
      sleep 1
    done
  ) >"$LOGDIR/backlog-$run.txt" 2>/dev/null &
  SAMPLER=$!
  PIDS+=($SAMPLER)
  reserve "refund$run" "$LOGDIR/payments.txt" "$N"
  RESERVED=$(sql "SELECT count(*) FROM refunds WHERE created_at >= '$RUN_START'")
  for _ in $(seq 1 600); do
    (($(sql "SELECT count(*) FROM refunds WHERE status = 'PENDING'") == 0)) && break
    sleep 1
done
kill "$SAMPLER" 2>/dev/null || true
WORKER_TICKS=$(($(cpu_ticks "$refunds_worker_PID") - WORKER_CPU0))
PG_TICKS=$(($(pg_ticks) - PG_CPU0))
if [[ -n $PROFILE ]]; then # the flame graph, and the same samples as collapsed stacks (one line per stack) to grep
  "$JCMD" "$refunds_worker_PID" JVMTI.agent_load "$PROFILER_LIB" "\"stop,file=$PROFILE-$run.html\"" >/dev/null
  "$JCMD" "$refunds_worker_PID" JVMTI.agent_load "$PROFILER_LIB" "\"dump,collapsed,file=$PROFILE-$run.collapsed\"" >/dev/null
fi
COMPLETED=$(sql "SELECT count(*) FROM refunds WHERE created_at >= '$RUN_START' AND status <> 'PENDING'")

echo "$RESERVED refunds reserved; $(sql "SELECT string_agg(status || ' ' || n, ', ') FROM
  (SELECT status, count(*) n FROM refunds WHERE created_at >= '$RUN_START' GROUP BY status ORDER BY status) s")"
sql "WITH r AS (SELECT created_at, completed_at, extract(epoch FROM completed_at - created_at) * 1000 AS ms,
                       ntile(10) OVER (ORDER BY completed_at) AS decile
                  FROM refunds WHERE status = 'SUCCEEDED' AND created_at >= '$RUN_START'),
          mid AS (SELECT count(*) n, extract(epoch FROM max(completed_at) - min(completed_at)) s
                    FROM r WHERE decile BETWEEN 2 AND 9),
          drain AS (SELECT count(*) n, extract(epoch FROM max(completed_at) - (SELECT max(created_at) FROM r)) s
                      FROM r WHERE completed_at > (SELECT max(created_at) FROM r))
     SELECT format('reserved over %s s (%s /s); executed %s /s overall (first reservation to last completion), %s /s over the middle 80 %% of completions, %s /s after the last reservation (%s refunds, nothing reserved meanwhile); reservation -> SUCCEEDED p50 %s ms, p99 %s ms, max %s ms',
                   round(extract(epoch FROM max(created_at) - min(created_at))::numeric, 2),
                   round(count(*) / nullif(extract(epoch FROM max(created_at) - min(created_at)), 0)::numeric, 1),
                   round(count(*) / nullif(extract(epoch FROM max(completed_at) - min(created_at)), 0)::numeric, 1),
                   (SELECT round(n / nullif(s, 0)::numeric, 1) FROM mid),
                   (SELECT round(n / nullif(s, 0)::numeric, 1) FROM drain), (SELECT n FROM drain),
                   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric),
                   round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric),
                   round(max(ms)::numeric))
       FROM r"
awk 'NR == 1 {t0 = $1} {n++; if ($2 > max) max = $2; line = line sprintf(" %ds:%d", $1 - t0, $2)}
     END {print "PENDING backlog, per second (max " max "):" line}' "$LOGDIR/backlog-$run.txt" | cut -c1-1500
echo "CPU during the run: refunds-worker $(ms_per_refund "$WORKER_TICKS" 1000) s, PostgreSQL $(ms_per_refund "$PG_TICKS" 1000) s" \
  "(this server's processes, with the reservations' and the relay's work); per refund executed ($COMPLETED):" \
  "refunds-worker $(ms_per_refund "$WORKER_TICKS" "$COMPLETED") ms, PostgreSQL $(ms_per_refund "$PG_TICKS" "$COMPLETED") ms"
[[ -z $PROFILE ]] || echo "flame graph of the worker: $PROFILE-$run.html (collapsed stacks: $PROFILE-$run.collapsed)"
echo "sandbox: $(curl -fs "$PSP/test/refund-requests?reference=none" | sed -E 's/.*"maxInFlight":([0-9]+).*/at most \1 refund calls in flight since the stack started/')"
done
echo "logs in $LOGDIR"
