#!/usr/bin/env bash
# Latency of captures at a steady arrival rate (issue 38 item 5): payments-api beside the Spring baseline of the
# side-by-side harness (../shared/bench-baseline), both started as its compare.sh starts them: the harness's durable
# PostgreSQL (fsync and synchronous commit on), its PSP stub at PSP_LATENCY_MS, payments-api's jar of this checkout.
# The load is Gatling's open model (bench/latency/, a Maven project outside the reactor): RATE new captures per second
# whatever the answers' times, each with its own Idempotency-Key and orderId, so a slow answer holds no later request
# back and the percentiles are the times clients wait (no coordinated omission, unlike wrk's closed loop).
# Per side, one after the other: compare.sh's wrk warm-up, VACUUM ANALYZE, then one Gatling run of GATLING_WARMUP
# seconds at RATE (discarded) followed by DURATION seconds at RATE (measured). One line per side:
#   latency sut=proj rate=800 duration_s=60 psp_ms=300 requests=48000 ok=48000 ko=0 p50_ms=.. p99_ms=.. p99.9_ms=..
#     max_ms=.. load_before=.. load_after=..
# (the percentiles over all the measured answers, errors included; ko counts answers other than 201 and timeouts).
#
#   cp -r ../shared/bench-baseline /tmp/bench-lat && mkdir -p /tmp/bench-lat/results   # a writable copy
#   BASELINE=/tmp/bench-lat bench/latency.sh                         # 800 /s, PSP 300 ms, 60 s (issue 38's setting)
#   BASELINE=/tmp/bench-lat PSP_LATENCY_MS=0 RATE=1100 bench/latency.sh  # 0 ms, half a measured maximum of 2,200 /s
# Env: RATE (captures/s, 800), DURATION (s, 60), PSP_LATENCY_MS (300), SIDES (spring,proj), WARMUP (s of wrk, 60),
# WARMUP_CONNS (16 at 0 ms, else 400, as compare.sh's slow-PSP runs), GATLING_WARMUP (s, 10), PSP_THREADS (256 at
# 0 ms, else 3000), TAG (suffix of the result file), SKIP_BUILD=1 (payments-api's jar as it is). Ports (none of
# compare.sh's, so both can run): SPRING_PORT 18180, PROJ_PORT 18182 (management 18192), PSP_PORT 19190, PostgreSQL
# PGPORT 15442 with its data in PGBASE (/tmp/bench-lat-pg). Results: BASELINE/results/latency-<commit>[-TAG].txt.
set -euo pipefail
cd "$(dirname "$0")/.."

BASELINE=$(cd "${BASELINE:-../shared/bench-baseline}" && pwd)
RATE=${RATE:-800}
DURATION=${DURATION:-60}
PSP_LATENCY_MS=${PSP_LATENCY_MS:-300}
SIDES=${SIDES:-spring,proj}
WARMUP=${WARMUP:-60}
WARMUP_CONNS=${WARMUP_CONNS:-$((PSP_LATENCY_MS > 0 ? 400 : 16))}
GATLING_WARMUP=${GATLING_WARMUP:-10}
PSP_THREADS=${PSP_THREADS:-$((PSP_LATENCY_MS > 0 ? 3000 : 256))}
# ZGC: a pause of the load generator would be counted as the servers' latency
GATLING_OPTS=${GATLING_OPTS:--Xms1g -Xmx1g -XX:+UseZGC}
SPRING_PORT=${SPRING_PORT:-18180}
PROJ_PORT=${PROJ_PORT:-18182}
PROJ_MANAGEMENT_PORT=${PROJ_MANAGEMENT_PORT:-18192}
PSP_PORT=${PSP_PORT:-19190}
export PGPORT=${PGPORT:-15442} PGBASE=${PGBASE:-/tmp/bench-lat-pg}
ADMIN_TOKEN=latency-admin-$RANDOM$RANDOM
PSP=http://127.0.0.1:$PSP_PORT

source bench/lib.sh # stops what it started at exit (PIDS, BENCH_PG_STOP)
# shellcheck source=/dev/null
source "$BASELINE/pg/env.sh" # PGHOST/PGPORT/PGUSER/PGPASSWORD/PGDATABASE of the harness's cluster, as_pg
LOGDIR=$(mktemp -d /tmp/latency-bench.XXXXXX)
head=$(git rev-parse --short=12 HEAD)
mkdir -p "$BASELINE/results"
OUT=$BASELINE/results/latency-$head${TAG:+-$TAG}.txt

bench_build payments-api
for jar in psp-stub baseline-spring; do
  [[ -f $BASELINE/$jar/target/$jar.jar ]] || ./mvnw -B -q -ntp -f "$BASELINE/$jar/pom.xml" package -DskipTests
done
ensure_wrk
# Gatling from Maven Central, resolved here (once; then from the local repository) with the versions pinned in
# pom.xml's properties: the runs below are plain java processes on those jars, so they download nothing.
pinned() { sed -n "s:.*<$1>\(.*\)</$1>.*:-D$1=\1:p" pom.xml; }
./mvnw -B -q -ntp -f bench/latency/pom.xml "$(pinned gatling.version)" "$(pinned compiler-plugin.version)" \
  "$(pinned resources-plugin.version)" "$(pinned dependency-plugin.version)" \
  test-compile dependency:build-classpath -Dmdep.outputFile="$LOGDIR/gatling.classpath" >"$LOGDIR/gatling-build.log" 2>&1 ||
  { tail -n 30 "$LOGDIR/gatling-build.log" >&2; exit 1; }

"$BASELINE/pg/start-pg.sh" >"$LOGDIR/pg.log" 2>&1
BENCH_PG_STOP=("$BASELINE/pg/stop-pg.sh")
"$BASELINE/pg/reset-db.sh" >>"$LOGDIR/pg.log" 2>&1
as_pg "$PGBIN/psql" -q -h "$PGBASE" -p "$PGPORT" -U postgres -d postgres -c "DROP DATABASE IF EXISTS proj" \
  -c "CREATE DATABASE proj OWNER payments" >/dev/null

PSP_PORT=$PSP_PORT PSP_LATENCY_MS=$PSP_LATENCY_MS PSP_THREADS=$PSP_THREADS \
  start_jar "$LOGDIR/psp.log" "$PSP/_admin/stats" -Xms512m -Xmx1g -jar "$BASELINE/psp-stub/target/psp-stub.jar"

declare -A url key db=([spring]=payments [proj]=proj)
for side in ${SIDES//,/ }; do
  case $side in
    spring)
      url[spring]=http://127.0.0.1:$SPRING_PORT key[spring]=sk_test_m1
      PORT=$SPRING_PORT PSP_URL=$PSP DB_URL=jdbc:postgresql://127.0.0.1:$PGPORT/payments \
        "$JAVA" -Xms1g -Xmx1g -jar "$BASELINE/baseline-spring/target/baseline-spring.jar" >"$LOGDIR/spring.log" 2>&1 &
      PIDS+=($!)
      # no health endpoint: Tomcat opens its port once the application has started
      poll 120 "$!" "Spring baseline on port $SPRING_PORT" port_open "$SPRING_PORT"
      ;;
    proj)
      url[proj]=http://127.0.0.1:$PROJ_PORT
      QUARKUS_DATASOURCE_REACTIVE_URL=postgresql://127.0.0.1:$PGPORT/proj \
        QUARKUS_DATASOURCE_JDBC_URL=jdbc:postgresql://127.0.0.1:$PGPORT/proj \
        QUARKUS_DATASOURCE_USERNAME=payments QUARKUS_DATASOURCE_PASSWORD=payments QUARKUS_FLYWAY_MIGRATE_AT_START=true \
        PAYMENTS_ADMIN_TOKEN=$ADMIN_TOKEN PSP_URL=$PSP \
        start_jar "$LOGDIR/proj.log" "http://127.0.0.1:$PROJ_MANAGEMENT_PORT/q/health/ready" -Xms1g -Xmx1g \
        -Dquarkus.http.port="$PROJ_PORT" -Dquarkus.management.port="$PROJ_MANAGEMENT_PORT" -Dquarkus.log.level=WARN \
        -jar payments-api/target/quarkus-app/quarkus-run.jar
      key[proj]=$(curl -fs -X POST "${url[proj]}/v1/admin/merchants" -H "Authorization: Bearer $ADMIN_TOKEN" \
        -H 'Content-Type: application/json' -d '{"name":"latency","rateLimitPerSecond":1000000}' |
        sed -E 's/.*"apiKey":"([^"]+)".*/\1/' || true)
      [[ -n ${key[proj]} ]] || { echo "no merchant key from payments-api's operator API" >&2; exit 1; }
      ;;
    *) echo "unknown side $side (SIDES: spring,proj)" >&2; exit 1 ;;
  esac
done

loadavg() { cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,; }
# measured PAGE ROW COLUMN: the cell COLUMN (total, ok or ko) of the row ROW ("Total count", "99th percentile",
# "Max", ...) in the tables of PAGE, the report's page of the requests named "capture" (the measured phase). Gatling
# 3.15 writes its statistics only into its HTML report and a binary simulation.log.
measured() {
  awk -v row="$2" -v col="$3" '
    /<td class="title">/ { title = $0; sub(/.*<td class="title">/, "", title); sub(/<.*/, "", title); next }
    title == row && index($0, "<td class=\"" col "\">") { v = $0; sub(/.*">/, "", v); sub(/<.*/, "", v); print v; exit }
  ' "$1"
}

echo "# latency $head $(date -u +%FT%TZ) cores=$(nproc) load=$(loadavg) durable PG, psp latency $PSP_LATENCY_MS ms," \
  "rate $RATE/s for ${DURATION}s after ${GATLING_WARMUP}s at the same rate; wrk warm-up ${WARMUP}s x $WARMUP_CONNS" |
  tee "$OUT"
export BENCH_LOAD_DIR=$BASELINE/load
for side in ${SIDES//,/ }; do
  API_KEY=${key[$side]} timeout $((WARMUP + 30)) wrk -t2 -c"$WARMUP_CONNS" -d"${WARMUP}s" --timeout 10s \
    -s "$BASELINE/load/capture.lua" "${url[$side]}" >/dev/null || true
  psql -q -d "${db[$side]}" -c "VACUUM ANALYZE" >/dev/null 2>&1 # (warnings: the shared catalogs are not its own)
  before=$(loadavg)
  # --add-opens: Gatling's log writer reads String's internals. The https proxy on a closed loopback port: Gatling
  # asks Maven Central for its latest release at every start (java.net.URL, no setting turns it off); so it does not.
  # Its other calls out (usage analytics, warm-up request) are off in gatling.conf.
  # shellcheck disable=SC2086
  timeout $((GATLING_WARMUP + DURATION + 180)) "$JAVA" $GATLING_OPTS --add-opens=java.base/java.lang=ALL-UNNAMED \
    -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=1 -Djava.util.prefs.userRoot="$LOGDIR" \
    -cp "bench/latency/target/test-classes:$(cat "$LOGDIR/gatling.classpath")" \
    -DbaseUrl="${url[$side]}" -DapiKey="${key[$side]}" -DrunId="$side$(printf %04x $RANDOM)" -Drate="$RATE" \
    -DwarmupSeconds="$GATLING_WARMUP" -DdurationSeconds="$DURATION" \
    io.gatling.app.Gatling -s bench.latency.CaptureSimulation -rf "$LOGDIR/gatling-$side" \
    >"$LOGDIR/gatling-$side.log" 2>&1 || echo "gatling on $side exited with $? (log: $LOGDIR/gatling-$side.log)" >&2
  after=$(loadavg)
  page=$(find "$LOGDIR/gatling-$side" -name 'req_capture-*.html' 2>/dev/null | head -n 1 || true)
  p99=$([[ -n $page ]] && measured "$page" "99th percentile" total || true)
  if [[ -z $p99 ]]; then
    echo "latency sut=$side rate=$RATE duration_s=$DURATION psp_ms=$PSP_LATENCY_MS failed: no Gatling report" | tee -a "$OUT"
    continue
  fi
  echo "latency sut=$side rate=$RATE duration_s=$DURATION psp_ms=$PSP_LATENCY_MS" \
    "requests=$(measured "$page" "Total count" total) ok=$(measured "$page" "Total count" ok)" \
    "ko=$(measured "$page" "Total count" ko) p50_ms=$(measured "$page" "50th percentile" total) p99_ms=$p99" \
    "p99.9_ms=$(measured "$page" "99.9th percentile" total) max_ms=$(measured "$page" Max total)" \
    "load_before=$before load_after=$after" | tee -a "$OUT"
done
echo "logs and Gatling reports: $LOGDIR"
