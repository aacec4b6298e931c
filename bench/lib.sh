# shellcheck shell=bash
# Shared by the bench scripts (source it after `cd` to the repository root).
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

# At exit: the processes started by the script (PIDS) are stopped, then the durable PostgreSQL (BENCH_PG_STOP), then
# the directories in BENCH_REMOVE are deleted.
PIDS=()
BENCH_PG_STOP=()
BENCH_REMOVE=()
bench_cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ((${#BENCH_PG_STOP[@]} == 0)) || "${BENCH_PG_STOP[@]}" >/dev/null 2>&1 || true
  ((${#BENCH_REMOVE[@]} == 0)) || rm -rf "${BENCH_REMOVE[@]}"
}
trap bench_cleanup EXIT

# bench_build MODULES: packages MODULES (comma-separated) and what they need, unless SKIP_BUILD=1 (then the jars are
# used as they are).
bench_build() {
  [[ "${SKIP_BUILD:-0}" == 1 ]] && return
  ./mvnw -B -q -ntp -pl "$1" -am package -DskipTests
}

ensure_wrk() { # wrk, the load generator (Debian package)
  command -v wrk >/dev/null && return
  apt-get install -y wrk >/dev/null || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
}

# PostgreSQL: PAYMENTS_PG_HOST/PORT/USER/PASSWORD if set (its own settings apply); otherwise, with PG_DURABLE=1, a
# durable server of the PostgreSQL 15 binaries (fsync, synchronous_commit and full_page_writes on) on PG_DURABLE_PORT;
# otherwise (PG_DURABLE=0, the default) local-infra's LocalInfraMain starts its embedded one (fsync, synchronous_commit
# and full_page_writes off; the local-infra module must be compiled). Exports PAYMENTS_PG_*; LOGDIR receives logs.
start_postgres() { # LOGDIR
  [[ -n "${PAYMENTS_PG_HOST:-}" ]] && return
  local logdir=$1
  if [[ "${PG_DURABLE:-0}" == 1 ]]; then
    start_durable_postgres "$logdir"
    return
  fi
  start_infra "$logdir" "$logdir/infra.log" || exit 1
}

# A durable PostgreSQL 15 (default settings: fsync, synchronous_commit and full_page_writes on) in a fresh data
# directory under LOGDIR, on PG_DURABLE_PORT (default 15433), stopped when the script exits; PG_OPTIONS adds server
# options (`-c name=value ...`). As root it runs as the postgres OS user. Needs /usr/lib/postgresql/15/bin (Debian
# package postgresql-15).
start_durable_postgres() { # LOGDIR
  local logdir=$1 bin=${PG_BIN:-/usr/lib/postgresql/15/bin} port=${PG_DURABLE_PORT:-15433}
  local data="$logdir/pgdata" as=()
  [[ $(id -u) == 0 ]] && as=(runuser -u postgres --) && chmod 777 "$logdir"
  "${as[@]}" "$bin/initdb" -D "$data" -U postgres --auth=trust >"$logdir/initdb.log"
  "${as[@]}" "$bin/pg_ctl" -D "$data" -l "$logdir/postgres.log" -w \
    -o "-p $port -k $data -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=512MB ${PG_OPTIONS:-}" \
    start >/dev/null
  BENCH_PG_STOP=("${as[@]}" "$bin/pg_ctl" -D "$data" -m fast stop)
  export PAYMENTS_PG_HOST=127.0.0.1 PAYMENTS_PG_PORT=$port PAYMENTS_PG_USER=postgres PAYMENTS_PG_PASSWORD=
}

# bench_database NAME: creates the empty database NAME on the server of start_postgres (or PAYMENTS_PG_*), then
# use_database NAME.
bench_database() {
  use_database postgres
  psql -q -d postgres -c "CREATE DATABASE $1" >/dev/null
  use_database "$1"
}

# use_database NAME: exports PGHOST, PGPORT, PGUSER, PGPASSWORD (for psql) and QUARKUS_DATASOURCE_* (for the services,
# as the server's login PAYMENTS_PG_USER) pointing at database NAME of the server of PAYMENTS_PG_*.
use_database() {
  export PGHOST=$PAYMENTS_PG_HOST PGPORT=${PAYMENTS_PG_PORT:-5432} PGUSER=${PAYMENTS_PG_USER:-postgres}
  export PGPASSWORD=${PAYMENTS_PG_PASSWORD:-}
  export QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://$PGHOST:$PGPORT/$1"
  export QUARKUS_DATASOURCE_JDBC_URL="jdbc:postgresql://$PGHOST:$PGPORT/$1"
  export QUARKUS_DATASOURCE_USERNAME=$PGUSER QUARKUS_DATASOURCE_PASSWORD=$PGPASSWORD
}

# fresh_database PREFIX DIR: prints the name of a new database on the server of PAYMENTS_PG_*, migrated by Flyway as
# the tests migrate theirs (bench/FreshDatabase.java: contracts' migrations, the application role's grants included;
# local-infra and contracts must be compiled). DIR receives local-infra's class path and the log (migrate.log).
fresh_database() {
  local dir=$2 name
  [[ -s $dir/infra.classpath ]] || module_classpath local-infra "$dir/infra.classpath" || return 1
  name=$("$JAVA" -cp "local-infra/target/classes:$(cat "$dir/infra.classpath"):contracts/target/classes" \
    bench/FreshDatabase.java "$1" 2>"$dir/migrate.log" | tail -n 1)
  [[ -n $name ]] || { tail -n 30 "$dir/migrate.log" >&2; return 1; }
  echo "$name"
}

# How durable the server is, for the result lines: "durable" only with fsync and synchronous_commit on.
pg_durability() { # DB
  local settings
  settings=$(psql -tA -d "$1" -c "SELECT current_setting('fsync') || ' ' || current_setting('synchronous_commit')")
  if [[ "$settings" == "on on" ]]; then echo "durable PostgreSQL (fsync on, synchronous_commit on)"
  else echo "non-durable PostgreSQL (fsync ${settings% *}, synchronous_commit ${settings#* })"; fi
}
