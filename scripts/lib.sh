# shellcheck shell=bash
# Shared by local-stack.sh, the bench scripts, the fault suite and .ci/run: source it. Readiness is what a service
# answers on its health endpoint (or a file a script writes), never a line of log text.

JAVA=${JAVA:-${JAVA_HOME:+$JAVA_HOME/bin/}java}
LIB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) # the repository
# The keys of merchants' webhook signing secrets at rest (docs/deployment.md, "Webhook secrets key"): the services'
# prod profile, which the benchmarks and the fault suite run, refuses to start without. The dev profile's public key,
# for local runs only, unless the caller set one.
export WEBHOOK_SECRETS_KEYS=${WEBHOOK_SECRETS_KEYS:-dev-1:2OOdBc75LMo/UmqKwahOhGKQs7HLaggdqaMlfQ1mxhc=}

# poll SECONDS PID WHAT COMMAND...: runs COMMAND every POLL_EVERY seconds (default 0.3) until it succeeds. Returns 1,
# with a note on stderr, when SECONDS pass first or PID (unless empty) exits.
poll() {
  local seconds=$1 pid=$2 what=$3 deadline=$((SECONDS + $1))
  shift 3
  until "$@"; do
    if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
      echo "process $pid exited before $what" >&2
      return 1
    fi
    ((SECONDS < deadline)) || { echo "no $what in $seconds s" >&2; return 1; }
    sleep "${POLL_EVERY:-0.3}"
  done
}

# wait_exit PID SECONDS WHAT: waits for the background process PID (a child of this shell) and returns its exit code;
# when it still runs after SECONDS, stops it and returns 1 with a note on stderr.
wait_exit() {
  local pid=$1 seconds=$2 what=$3
  if ! poll "$seconds" "" "end of $what" exited "$pid"; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    return 1
  fi
  wait "$pid"
}

exited() { ! kill -0 "$1" 2>/dev/null; }

# rss_mib PID: resident memory of PID in MiB (0 once it has exited).
rss_mib() { awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status" 2>/dev/null || echo 0; }

# module_classpath MODULE FILE: writes MODULE's dependency class path (from the local repository) into FILE.
module_classpath() {
  "$LIB_ROOT/mvnw" -B -q -ntp -f "$LIB_ROOT/pom.xml" -pl "$1" dependency:build-classpath -Dmdep.outputFile="$2" \
    >/dev/null
}

# port_open PORT: whether something accepts connections on 127.0.0.1:PORT.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

http_ok() { curl -fsS -o /dev/null --max-time 5 "$1" 2>/dev/null; }

# wait_http URL [SECONDS [PID [LOG]]]: returns once URL answers 2xx; 1 when SECONDS (default 120) pass first or PID
# exits, then with the tail of LOG on stderr.
wait_http() {
  local log=${4:-}
  poll "${2:-120}" "${3:-}" "answer from $1${log:+ (log: $log)}" http_ok "$1" && return
  [[ -n $log ]] && tail -n 30 "$log" >&2
  return 1
}

# wait_file FILE [SECONDS [PID]]: returns once FILE exists; 1 when SECONDS (default 300) pass first or PID exits.
wait_file() { poll "${2:-300}" "${3:-}" "$1" test -e "$1"; }

# stop_all PID...: SIGKILL, then returns once none of them runs any more (at most 15 s): a kill only asks, and a script
# that exits while its processes still hold their ports makes the next stack on those ports fail to start.
stop_all() {
  local pid i
  for pid in "$@"; do kill -9 "$pid" 2>/dev/null; done
  for pid in "$@"; do
    for ((i = 0; i < 150; i++)); do
      if ! kill -0 "$pid" 2>/dev/null || [[ $(ps -o stat= -p "$pid" 2>/dev/null) == Z* ]]; then break; fi
      sleep 0.1
    done
  done
}

# start_jar LOG READY_URL JAVA_ARGS...: starts a Java process in the background, its output appended to LOG, and
# waits until READY_URL answers (wait_http, 120 s). Its pid is in STARTED_PID and appended to the caller's PIDS (to
# stop at exit), also when it did not become ready.
start_jar() {
  local log=$1 ready=$2
  shift 2
  "$JAVA" "$@" >>"$log" 2>&1 &
  STARTED_PID=$!
  PIDS+=("$STARTED_PID")
  wait_http "$ready" 120 "$STARTED_PID" "$log"
}

# start_infra DIR LOG [ARGS...]: PostgreSQL and Kafka from local-infra's LocalInfraMain (embedded ones unless
# PAYMENTS_PG_* / PAYMENTS_KAFKA_BOOTSTRAP_SERVERS name others; ARGS e.g. --database NAME), in the background (pid in
# STARTED_PID and PIDS), its log in LOG. Writes DIR/infra.classpath (local-infra's dependencies; local-infra must be
# compiled) and DIR/infra.env (its settings, complete once its last line is "# ready"); waits for "# ready" (120 s)
# and sources DIR/infra.env (exports PAYMENTS_PG_* and PAYMENTS_KAFKA_BOOTSTRAP_SERVERS).
start_infra() {
  local dir=$1 log=$2
  shift 2
  module_classpath local-infra "$dir/infra.classpath" || return 1
  : >"$dir/infra.env" # empty until LocalInfraMain writes it
  "$JAVA" -Xmx768m -cp "$LIB_ROOT/local-infra/target/classes:$(cat "$dir/infra.classpath")" com.payments.infra.LocalInfraMain \
    "$@" >"$dir/infra.env" 2>"$log" &
  STARTED_PID=$!
  PIDS+=("$STARTED_PID")
  if ! poll 120 "$STARTED_PID" "PostgreSQL and Kafka (log: $log)" grep -q '^# ready' "$dir/infra.env"; then
    tail -n 30 "$log" >&2
    return 1
  fi
  # shellcheck disable=SC1091
  source "$dir/infra.env"
}
