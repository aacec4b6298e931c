# Shared by local-stack.sh, the bench scripts and the fault suite: source it. Readiness is what a service answers on
# its health endpoint (or a file a script writes), never a line of log text.

JAVA=${JAVA:-${JAVA_HOME:+$JAVA_HOME/bin/}java}

# wait_http URL [SECONDS [PID [LOG]]]: returns once URL answers 2xx. Returns 1, with a note on stderr (and the tail of
# LOG), when SECONDS (default 120) pass first or PID exits.
wait_http() {
  local url=$1 deadline=$((SECONDS + ${2:-120})) pid=${3:-} log=${4:-}
  until curl -fsS -o /dev/null --max-time 5 "$url" 2>/dev/null; do
    if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
      [[ -n $log ]] && tail -n 30 "$log" >&2
      echo "exited before $url answered${log:+ (log: $log)}" >&2
      return 1
    fi
    if ((SECONDS >= deadline)); then
      echo "$url did not answer in ${2:-120} s${log:+ (log: $log)}" >&2
      return 1
    fi
    sleep 0.3
  done
}

# wait_file FILE [SECONDS [PID]]: returns once FILE exists; 1 when SECONDS (default 300) pass first or PID exits.
wait_file() {
  local file=$1 deadline=$((SECONDS + ${2:-300})) pid=${3:-}
  until [[ -e $file ]]; do
    if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then echo "exited before $file appeared" >&2; return 1; fi
    ((SECONDS < deadline)) || { echo "$file did not appear in ${2:-300} s" >&2; return 1; }
    sleep 0.5
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
