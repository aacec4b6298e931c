# Shared by the bench scripts (source it after `cd` to the repository root).
# shellcheck source=../scripts/lib.sh
source scripts/lib.sh

# Processes started by the script; all stopped when it exits.
PIDS=()
bench_cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap bench_cleanup EXIT

ensure_wrk() {
  command -v wrk >/dev/null && return
  apt-get install -y wrk >/dev/null || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
}

# PostgreSQL: PAYMENTS_PG_HOST/PORT/USER/PASSWORD if set, otherwise local-infra's LocalInfraMain starts one (the
# local-infra module must be compiled). Exports PAYMENTS_PG_*; LOGDIR receives its classpath and logs.
start_postgres() { # LOGDIR
  [[ -n "${PAYMENTS_PG_HOST:-}" ]] && return
  local logdir=$1
  ./mvnw -B -q -pl local-infra dependency:build-classpath -Dmdep.outputFile="$logdir/infra.classpath" >/dev/null
  java -Xmx512m -cp "local-infra/target/classes:$(cat "$logdir/infra.classpath")" com.payments.infra.LocalInfraMain \
    >"$logdir/infra.out" 2>"$logdir/infra.log" &
  PIDS+=($!)
  for _ in $(seq 1 300); do grep -q PAYMENTS_PG_HOST "$logdir/infra.out" 2>/dev/null && break; sleep 0.2; done
  eval "$(grep '^export PAYMENTS_PG' "$logdir/infra.out")"
}
