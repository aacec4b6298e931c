#!/usr/bin/env bash
# Rolling upgrade scenario (issue 40, docs/operations.md "Rolling upgrade", docs/fault-suite.md): the previous release's
# services, built from its commit (RELEASES), run on a fresh database migrated to their schema; HEAD's migrations are
# applied (the migration Job: HEAD's payments-api, Flyway from HEAD's contracts) while captures run at a steady rate,
# and the longest capture stall is measured (target < 1 s); the walkthrough (scripts/walkthrough.sh) runs through the
# old services on the new schema; then HEAD's services start beside them (same PostgreSQL and Kafka, other ports) and
# traffic goes through both; the fault suite's invariants (scripts/fault-suite-invariants.sql) are checked at the end.
# Prints the figures and the invariants; exits 1 on a violation or a failed step, 0 with a SKIPPED line when the
# previous release's commit is not in this clone (a shallow checkout).
#
#   scripts/fault-upgrade.sh                 the scenario (CI runs it: scripts/fault-suite.sh upgrade)
#   scripts/fault-upgrade.sh --bad-migration the same with scripts/fault-upgrade/bad/*.sql added after HEAD's
#                                            migrations (a rename of a column the previous release writes): must fail
#   scripts/fault-upgrade.sh --build-release only build the previous release (CI builds it while its tests run)
#   env: PREVIOUS_RELEASE (a version of RELEASES; default the newest one whose commit is not HEAD), LOAD_SECONDS (mixed
#        traffic through both versions, 20), KEEP=1 (keep the results), UPGRADE_RUN_DIR (.local/upgrade/run: state and
#        logs of the run), UPGRADE_PORT_BASE (27000: old
#        services on 27080-27083 / 27090-27093, HEAD's on 27180-27183 / 27190-27193, the sandbox on 27089)
# HEAD's jars must be built (./mvnw -B package -DskipTests). The previous release's are built once per commit into
# .local/upgrade/releases/<commit> (./mvnw package -Dmaven.test.skip=true in a temporary copy of that commit: git
# archive).
# Internal: scripts/fault-upgrade.sh events|recon ... is the walkthrough's STACK for this scenario's stack.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
STATE=$ROOT/.local/upgrade
OUT=${UPGRADE_RUN_DIR:-$STATE/run} # this run's state, logs and results
export UPGRADE_RUN_DIR=$OUT
BASE=${UPGRADE_PORT_BASE:-27000}
PSP_PORT=$((BASE + 89))
OLD_API=$((BASE + 80)) NEW_API=$((BASE + 180))
ADMIN_TOKEN=upgrade-admin
SERVICES=(payments-api outbox-relay refunds-worker webhook-delivery)
# shellcheck source=lib.sh
source scripts/lib.sh

# --- the walkthrough's STACK commands, against this scenario's Kafka and with the given release's reconciler -------
if [[ ${1:-} == events || ${1:-} == recon ]]; then
  # shellcheck disable=SC1091
  source "$OUT/env"
  if [[ $1 == events ]]; then
    # shellcheck disable=SC1091
    source "$OUT/infra.env"
    # At least UPGRADE_EVENTS_SECONDS (30): with nine JVMs starting on a loaded machine a consumer took longer than
    # the walkthrough's 8 s to join and fetch (the records were there, read again for 30 s).
    seconds=${3:-15}
    ((seconds >= ${UPGRADE_EVENTS_SECONDS:-30})) || seconds=${UPGRADE_EVENTS_SECONDS:-30}
    exec "$JAVA" -cp "$ROOT/local-infra/target/classes:$(cat "$OUT/infra.classpath")" com.payments.infra.TopicTail \
      "${2:-payment-events}" "$seconds" ${4:+"$4"} 2>/dev/null
  fi
  exec "$JAVA" -jar "${RECON_APP:?}/quarkus-run.jar" "${@:2}"
fi

BAD=0 BUILD_ONLY=0
[[ ${1:-} == --bad-migration ]] && BAD=1
[[ ${1:-} == --build-release ]] && BUILD_ONLY=1
LOAD_SECONDS=${LOAD_SECONDS:-20}
START=$SECONDS
say() { printf '[upgrade %4ds] %s\n' $((SECONDS - START)) "$*"; }
die() { say "FAILED: $*"; exit 1; }

# --- 1. The previous release: RELEASES names its commit; the tag v<version> wins when this clone has it --------------
head_commit=$(git rev-parse HEAD)
release_line=$(grep -v '^#' RELEASES | awk -v want="${PREVIOUS_RELEASE:-}" -v head="$head_commit" \
  'NF == 2 && (want == "" ? $2 != head : $1 == want) { line = $0 } END { print line }')
[[ -n $release_line ]] || die "no previous release ${PREVIOUS_RELEASE:-} in RELEASES"
read -r VERSION COMMIT <<<"$release_line"
if tagged=$(git rev-parse -q --verify "refs/tags/v$VERSION^{commit}"); then
  [[ $tagged == "$COMMIT" ]] || say "note: tag v$VERSION is $tagged, RELEASES says $COMMIT: the tag is used"
  COMMIT=$tagged
fi
if ! git cat-file -e "$COMMIT^{commit}" 2>/dev/null; then
  echo "SKIPPED: rolling upgrade: release $VERSION's commit $COMMIT is not in this clone (shallow checkout?):" \
    "git fetch --unshallow (or fetch that commit) to run it"
  exit 0
fi
say "previous release $VERSION at ${COMMIT:0:12}; HEAD ${head_commit:0:12}$( ((BAD)) && echo ", with the bad migration fixture")"

OLD=$STATE/releases/$COMMIT
NEW=$STATE/head # HEAD's quarkus-app directories, as DIR/<module> like the release's
mkdir -p "$NEW"
for m in "${SERVICES[@]}"; do ln -sfn "$ROOT/$m/target/quarkus-app" "$NEW/$m"; done
if [[ ! -f $OLD/complete ]]; then
  say "building release $VERSION (once per commit, into $OLD)"
  src=$(mktemp -d "/tmp/upgrade-src-${COMMIT:0:12}.XXXXXX")
  git archive "$COMMIT" | tar -x -C "$src"
  # Only the apps: the release's tests are not compiled (nothing here runs them).
  if ! (cd "$src" && ./mvnw -B -q -ntp package -Dmaven.test.skip=true \
    -pl "$(IFS=,; echo "${SERVICES[*]}"),reconciler" -am >"$src/build.log" 2>&1); then
    tail -n 30 "$src/build.log"
    die "the build of release $VERSION failed (log: $src/build.log)"
  fi
  rm -rf "$OLD" && mkdir -p "$OLD"
  for m in "${SERVICES[@]}" reconciler; do cp -r "$src/$m/target/quarkus-app" "$OLD/$m"; done
  touch "$OLD/complete"
  rm -rf "$src"
  say "release $VERSION built"
fi
((BUILD_ONLY)) && exit 0

for m in "${SERVICES[@]}" psp-sandbox; do
  [[ -f $m/target/quarkus-app/quarkus-run.jar ]] || die "$m is not built: ./mvnw -B package -DskipTests first"
done
[[ -d local-infra/target/classes ]] || die "local-infra is not built: ./mvnw -B package -DskipTests first"

# --- 2. PostgreSQL and Kafka (fresh), the sandbox, the previous release's schema and services ------------------------
rm -rf "$OUT" && mkdir -p "$OUT/logs"
PIDS=()
cleanup() {
  trap - INT TERM EXIT
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do kill "${PIDS[i]}" 2>/dev/null; done
  wait 2>/dev/null
  [[ -n ${KEEP:-} ]] || rm -rf "$OUT/results"
}
trap cleanup INT TERM EXIT
# Ours, not the caller's: a fresh embedded PostgreSQL and in-process broker.
unset PAYMENTS_PG_HOST PAYMENTS_PG_PORT PAYMENTS_PG_USER PAYMENTS_PG_PASSWORD PAYMENTS_KAFKA_BOOTSTRAP_SERVERS
start_infra "$OUT" "$OUT/logs/infra.log" --database payments || die "PostgreSQL and Kafka did not start"
cat >"$OUT/env" <<ENV
export QUARKUS_DATASOURCE_REACTIVE_URL='postgresql://$PAYMENTS_PG_HOST:$PAYMENTS_PG_PORT/$PAYMENTS_PG_DATABASE'
export QUARKUS_DATASOURCE_JDBC_URL='jdbc:postgresql://$PAYMENTS_PG_HOST:$PAYMENTS_PG_PORT/$PAYMENTS_PG_DATABASE'
export QUARKUS_DATASOURCE_USERNAME='$PAYMENTS_PG_APP_USER' QUARKUS_DATASOURCE_PASSWORD='$PAYMENTS_PG_APP_PASSWORD'
export KAFKA_BOOTSTRAP_SERVERS='$PAYMENTS_KAFKA_BOOTSTRAP_SERVERS'
export PSP_URL='http://127.0.0.1:$PSP_PORT' PSP_WEBHOOK_SECRET='whsec_upgrade' PSP_PROVIDER=sandbox RECON_SOURCE=psp
export PAYMENTS_ADMIN_TOKEN='$ADMIN_TOKEN' QUARKUS_PROFILE=dev
export PAYMENTS_WEBHOOKS_ALLOW_HTTP=true PAYMENTS_WEBHOOKS_ALLOW_LOOPBACK=true
ENV
# shellcheck disable=SC1091
source "$OUT/env"
export PGHOST=$PAYMENTS_PG_HOST PGPORT=$PAYMENTS_PG_PORT PGUSER=$PAYMENTS_PG_USER PGPASSWORD=$PAYMENTS_PG_PASSWORD
export PGDATABASE=$PAYMENTS_PG_DATABASE
sql() { psql -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }
schema_version() { sql -c "SELECT max(version::int) FROM flyway_schema_history WHERE success"; }

# migrate APP LOG: the migration Job of the release whose payments-api is APP (Flyway from its contracts)
migrate() {
  QUARKUS_INIT_AND_EXIT=true QUARKUS_FLYWAY_MIGRATE_AT_START=true PAYMENTS_DB_REQUIRE_APPLICATION_ROLE=true \
    QUARKUS_DATASOURCE_USERNAME="$PAYMENTS_PG_USER" QUARKUS_DATASOURCE_PASSWORD="$PAYMENTS_PG_PASSWORD" \
    "$JAVA" -jar "$1/quarkus-run.jar" >"$2" 2>&1
}
# start_services DIR OFFSET LABEL: the four services of DIR/<module> (a quarkus-app) on BASE+80+OFFSET.. and
# BASE+90+OFFSET..
start_services() {
  local dir=$1 offset=$2 label=$3 i=0 m
  for m in "${SERVICES[@]}"; do
    start_jar "$OUT/logs/$label-$m.log" "http://127.0.0.1:$((BASE + 90 + offset + i))/q/health/ready" -Xmx256m \
      -Dquarkus.http.port=$((BASE + 80 + offset + i)) -Dquarkus.management.port=$((BASE + 90 + offset + i)) \
      -jar "$dir/$m/quarkus-run.jar" || die "$label $m did not start (log: $OUT/logs/$label-$m.log)"
    i=$((i + 1))
  done
}

migrate "$OLD/payments-api" "$OUT/logs/migrate-old.log" || { tail -n 20 "$OUT/logs/migrate-old.log"; die "release $VERSION's migration failed"; }
OLD_SCHEMA=$(schema_version)
start_jar "$OUT/logs/psp-sandbox.log" "http://127.0.0.1:$PSP_PORT/q/health/ready" -Xmx256m -Dquarkus.http.port=$PSP_PORT \
  -Dpsp.webhook.url="http://127.0.0.1:$OLD_API/v1/psp/webhooks" -jar psp-sandbox/target/quarkus-app/quarkus-run.jar ||
  die "the sandbox did not start"
start_services "$OLD" 0 old
say "release $VERSION serving on :$OLD_API, schema V$OLD_SCHEMA"
KEY=$(curl -fsS -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
  -d '{"name":"upgrade","rateLimitPerSecond":100000}' "http://127.0.0.1:$OLD_API/v1/admin/merchants" | jq -r .apiKey)
[[ $KEY == sk_* ]] || die "could not create the merchant"

# --- 3. HEAD's migrations while captures run at a steady rate ------------------------------------------------------
mkdir -p "$OUT/results" && touch "$OUT/results/bad"
# capture API N: one capture, retried with the same key until a definitive answer (the merchant's contract); appends
# "key id code amount source order" to results/keys (and sets CAPTURED_ID, CAPTURED_CODE) and "start_ms duration_ms code" per request to results/latency
capture() {
  local api=$1 n=$2 key="up-$2-$RANDOM" amount=$((RANDOM % 50000 + 100)) code t0 t1 tries=0
  CAPTURED_ID='' CAPTURED_CODE=''
  local body="{\"orderId\":\"up-$n\",\"amount\":$amount,\"currency\":\"EUR\",\"source\":\"tok_visa\"}"
  while :; do
    t0=$(date +%s%3N)
    code=$(curl -s -o "$OUT/results/body-$n" -w '%{http_code}' --max-time 15 -H "Authorization: Bearer $KEY" \
      -H "Idempotency-Key: $key" -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:$api/v1/payments")
    t1=$(date +%s%3N)
    echo "$t0 $((t1 - t0)) $code" >>"$OUT/results/latency"
    case $code in
      201 | 202 | 402)
        CAPTURED_ID=$(jq -r .id "$OUT/results/body-$n") CAPTURED_CODE=$code
        echo "$key $CAPTURED_ID $code $amount tok_visa up-$n" >>"$OUT/results/keys"
        break ;;
      5?? | 000 | 409 | 429) tries=$((tries + 1)); ((tries < 30)) || { echo "$key - unresolved $code" >>"$OUT/results/keys"; break; }
        sleep 0.5 ;;
      *) echo "$key - unexpected $code" >>"$OUT/results/keys"; break ;;
    esac
  done
  rm -f "$OUT/results/body-$n"
}
# steady API PREFIX STOPFILE: a capture every 100 ms (one at a time: a stalled one delays the next, and shows)
steady() {
  local i=0
  while [[ ! -e $3 ]]; do
    i=$((i + 1))
    capture "$1" "$2-$i"
    sleep 0.1
  done
}

# HEAD's migrations; with --bad-migration also the fixture(s), lint first (as CI does), then applied by the owner
# right after Flyway (Quarkus fixes Flyway's locations at build time, so a fixture cannot join HEAD's Job itself).
LINT_STATUS=-
if ((BAD)); then
  mkdir -p "$OUT/migrations"
  cp contracts/src/main/resources/db/migration/*.sql scripts/fault-upgrade/bad/*.sql "$OUT/migrations/"
  scripts/migration-lint.sh "$OUT/migrations" >"$OUT/logs/lint.log" 2>&1
  LINT_STATUS=$?
  say "migration lint on HEAD's migrations + the fixture: exit $LINT_STATUS ($( ((LINT_STATUS)) && echo refused || echo accepted))"
  grep -E 'error|warning' "$OUT/logs/lint.log" | head -5
fi
steady "$OLD_API" m "$OUT/stop-steady" &
STEADY_PID=$!
PIDS+=("$STEADY_PID")
sleep 3 # a baseline before the migration
JOB_START=$(date +%s%3N)
migrate "$NEW/payments-api" "$OUT/logs/migrate-head.log"
migrate_status=$?
if ((BAD && migrate_status == 0)); then
  for f in scripts/fault-upgrade/bad/*.sql; do
    sql -f "$f" >>"$OUT/logs/migrate-head.log" 2>&1 || migrate_status=$?
  done
fi
JOB_END=$(date +%s%3N)
sleep 3 # and after it
touch "$OUT/stop-steady"
wait "$STEADY_PID"
((migrate_status == 0)) || { tail -n 20 "$OUT/logs/migrate-head.log"; die "HEAD's migration failed"; }
NEW_SCHEMA=$(schema_version)
# When the migrations' statements ran: Flyway's history row is written in each migration's transaction (installed_on
# is its start) with its execution time; the fixture of --bad-migration ran until JOB_END.
read -r SQL_START SQL_END <<<"$(sql -F ' ' -c "SELECT (extract(epoch FROM min(installed_on AT TIME ZONE
  current_setting('TimeZone'))) * 1000)::bigint, (extract(epoch FROM max((installed_on + execution_time * interval '1 ms')
  AT TIME ZONE current_setting('TimeZone'))) * 1000)::bigint FROM flyway_schema_history
  WHERE success AND version::numeric > $OLD_SCHEMA")"
((BAD)) && SQL_END=$JOB_END
# overlapping FROM TO: the capture requests (one line each: start_ms duration_ms code) that ran during [FROM, TO]
overlapping() { awk -v s="$1" -v e="$2" '$1 <= e && $1 + $2 >= s' "$OUT/results/latency"; }
# The stall: the longest capture request (a retry is a request of its own) running within 1 s of the statements (it
# may have queued behind their locks), compared with the longest one outside the Job. Every capture during the Job
# must be answered.
read -r STALL STALL_CODE DURING <<<"$(overlapping $((SQL_START - 1000)) $((SQL_END + 1000)) |
  awk '{ n++; if ($2 >= max) { max = $2; code = $3 } } END { print max + 0, code, n + 0 }')"
BASELINE=$(awk -v s="$JOB_START" -v e="$JOB_END" '($1 > e || $1 + $2 < s) && $2 > max { max = $2 } END { print max + 0 }' \
  "$OUT/results/latency")
FAILED_DURING=$(overlapping "$JOB_START" "$JOB_END" | awk '$3 !~ /^(201|202|402)$/' | wc -l)
say "HEAD's migration Job V$OLD_SCHEMA -> V$NEW_SCHEMA: $((JOB_END - JOB_START)) ms (its JVM included)," \
  "statements $((SQL_END - SQL_START)) ms; $DURING captures within 1 s of the statements, the longest $STALL ms" \
  "(code $STALL_CODE); $(overlapping "$JOB_START" "$JOB_END" | wc -l) during the Job, $FAILED_DURING not answered" \
  "2xx/402; the longest capture outside the Job $BASELINE ms"

# --- 4. The walkthrough through the previous release on the new schema -------------------------------------------
walk() { # LABEL API RECON_APP [MANUAL_CAPTURE]
  API=http://127.0.0.1:$2 STACK="$ROOT/scripts/fault-upgrade.sh" RECON_APP=$3 MANUAL_CAPTURE=${4:-1} \
    scripts/walkthrough.sh >"$OUT/logs/walkthrough-$1.log" 2>&1
}
# Manual capture (the walkthrough's steps 8-14) came with API 1.9.0: a release before it has none.
OLD_MANUAL=1
[[ $(printf '%s\n' "$VERSION" 1.9.0 | sort -V | head -n 1) == 1.9.0 ]] || OLD_MANUAL=0
WALK_OLD=passed
walk old "$OLD_API" "$OLD/reconciler" "$OLD_MANUAL" || WALK_OLD=FAILED
say "walkthrough through release $VERSION on schema V$NEW_SCHEMA: $WALK_OLD$([[ $WALK_OLD == FAILED ]] && echo " ($(grep -m1 'walkthrough FAILED' "$OUT/logs/walkthrough-old.log"))")"

# --- 5. HEAD's services beside the previous release's: both serve, traffic through both ------------------------
start_services "$NEW" 100 head
say "HEAD serving on :$NEW_API beside release $VERSION on :$OLD_API"
WALK_NEW=passed
walk head "$NEW_API" "$ROOT/reconciler/target/quarkus-app" || WALK_NEW=FAILED
say "walkthrough through HEAD: $WALK_NEW$([[ $WALK_NEW == FAILED ]] && echo " ($(grep -m1 'walkthrough FAILED' "$OUT/logs/walkthrough-head.log"))")"
# Mixed traffic for LOAD_SECONDS: captures alternate between the versions; a refund of each capture goes through the
# other version; reads of it through both.
mixed() { # N
  local i=0 api other id code port
  while [[ ! -e $OUT/stop-mixed ]]; do
    i=$((i + 1))
    if (((i + $1) % 2)); then api=$OLD_API other=$NEW_API; else api=$NEW_API other=$OLD_API; fi
    capture "$api" "x$1-$i"
    id=$CAPTURED_ID
    [[ $CAPTURED_CODE == 201 ]] || continue
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 15 -H "Authorization: Bearer $KEY" \
      -H "Idempotency-Key: r-x$1-$i" -H 'Content-Type: application/json' -d '{"amount":50}' \
      "http://127.0.0.1:$other/v1/payments/$id/refunds")
    [[ $code == 202 ]] || echo "refund of $id through :$other: $code" >>"$OUT/results/bad"
    for port in "$api" "$other"; do
      code=$(curl -s -o "$OUT/results/read-$1" -w '%{http_code}' --max-time 15 -H "Authorization: Bearer $KEY" \
        "http://127.0.0.1:$port/v1/payments/$id")
      [[ $code == 200 && $(jq -r .id "$OUT/results/read-$1") == "$id" ]] || echo "read of $id through :$port: $code" \
        >>"$OUT/results/bad"
    done
  done
}
MIXED_PIDS=()
for w in 1 2; do mixed "$w" & MIXED_PIDS+=($!); PIDS+=($!); done
sleep "$LOAD_SECONDS"
touch "$OUT/stop-mixed"
wait "${MIXED_PIDS[@]}"
say "mixed traffic through both versions: $(grep -c ' up-x' "$OUT/results/keys") captures, $(wc -l <"$OUT/results/bad") bad answers"

# --- 6. Settle, then the fault suite's invariants ----------------------------------------------------------------
unsettled() {
  sql -c "SELECT (SELECT count(*) FROM outbox WHERE sent_at IS NULL) + (SELECT count(*) FROM refunds WHERE status = 'PENDING')
    + (SELECT count(*) FROM payments WHERE status IN ('PROCESSING','UNKNOWN'))
    + $(curl -fsS "http://127.0.0.1:$PSP_PORT/test/webhooks" | jq '[.[] | select(.status == "PENDING" or .status == "RETRYING")] | length' || echo 1)"
}
deadline=$((SECONDS + 60))
until [[ $(unsettled) == 0 ]] || ((SECONDS >= deadline)); do sleep 1; done
awk '{print $1 "\t" ($2 == "-" ? "" : $2) "\t" $3}' "$OUT/results/keys" >"$OUT/client.tsv"
scripts/fault-upgrade.sh events payment-events 15 end |
  sed -n 's#^\([0-9]*\)/\([0-9]*\) \([^ ]*\) .*"eventId": *"\([^"]*\)".*#\1\t\2\t\3\t\4#p' >"$OUT/kafka.tsv"
source scripts/invariants.sh
sql -c "SELECT id FROM payments UNION ALL SELECT id FROM refunds" | psp_evidence "http://127.0.0.1:$PSP_PORT"
curl -fsS "http://127.0.0.1:$PSP_PORT/test/webhooks" | jq -r '.[] | [.eventId, .copy, .status, .reference] | @tsv' \
  >"$OUT/webhooks.tsv"
echo
printf '%-70s %s\n' "invariant" "violations"
check_invariants_file
count_violations "walkthrough through release $VERSION on HEAD's schema" "$([[ $WALK_OLD == passed ]] && echo 0 || echo 1)"
count_violations "walkthrough through HEAD beside release $VERSION" "$([[ $WALK_NEW == passed ]] && echo 0 || echo 1)"
count_violations "refunds and reads across versions answered as expected" "$(wc -l <"$OUT/results/bad")"
count_violations "captures during the migration all answered 2xx/402" "$FAILED_DURING"
count_violations "longest capture stall during the migration < 1000 ms ($STALL ms)" "$((STALL >= 1000))"
((BAD)) && count_violations "migration lint accepts the migrations applied" "$((LINT_STATUS != 0))"
head -n 10 "$OUT/results/bad"

echo
echo "previous release:     $VERSION (${COMMIT:0:12}), schema V$OLD_SCHEMA -> HEAD ${head_commit:0:12}, V$NEW_SCHEMA"
echo "capture stall:        $STALL ms within 1 s of the migration's statements ($((SQL_END - SQL_START)) ms, $DURING captures), $BASELINE ms outside the Job"
echo "walkthroughs:         release $VERSION on the new schema $WALK_OLD, HEAD beside it $WALK_NEW"
echo "requests (captures):  $(wc -l <"$OUT/results/latency")"
echo "invariants checked:   $INVARIANTS"
echo "violations found:     $VIOLATIONS"
echo "duration:             $((SECONDS - START)) s"
((VIOLATIONS == 0)) || exit 1
