# shellcheck shell=bash
# The fault suites' invariants (scripts/fault-suite-invariants.sql): each a named query counting its violations, run on
# the evidence in $OUT (psp.tsv, kafka.tsv, client.tsv, webhooks.tsv, ops.tsv) loaded into temporary tables. Sourced
# by fault-suite.sh, fault-failover.sh and fault-upgrade.sh, which define sql() and OUT and print the table's header.
INVARIANTS=0 VIOLATIONS=0

# psp_evidence PSP_URL: the sandbox's counters of each reference read from stdin (one curl process, one connection)
# into $OUT/psp.tsv.
psp_evidence() {
  sed "s#^#$1/test/counters/#" | xargs -r curl -fsS |
    jq -r '[.reference, .chargeMovements, .refundMovements, .capturedAmount, .voidMovements] | @tsv' >"$OUT/psp.tsv"
}

# evidence_sql QUERY: the query's last output line, run after the evidence is loaded.
evidence_sql() {
  [[ -e $OUT/ops.tsv ]] || : >"$OUT/ops.tsv" # a scenario without the load client's manual captures
  printf '%s\n%s\n' "CREATE TEMP TABLE psp (reference text, charge_movements int, refund_movements int, captured_amount bigint,
  void_movements int);
CREATE TEMP TABLE kafka (part int, off bigint, key text, event_id text);
CREATE TEMP TABLE client (key text, payment_id text, code text);
CREATE TEMP TABLE webhook (event_id text, copy int, status text, reference text);
CREATE TEMP TABLE ops (payment_id text, op text, key text, amount bigint, code text);
\\copy psp FROM '$OUT/psp.tsv'
\\copy kafka FROM '$OUT/kafka.tsv'
\\copy client FROM '$OUT/client.tsv'
\\copy webhook FROM '$OUT/webhooks.tsv'
\\copy ops FROM '$OUT/ops.tsv'" "$1" | sql 2>&1 | tail -1
}

# count_violations NAME COUNT: one line of the table; a count that is not a number is a check that failed to run.
count_violations() {
  local n=$2
  INVARIANTS=$((INVARIANTS + 1))
  [[ $n =~ ^[0-9]+$ ]] || { echo "check failed to run: $1 ($n)"; n=1; }
  VIOLATIONS=$((VIOLATIONS + n))
  printf '%-70s %s\n' "$1" "$n"
}

# check NAME QUERY: an invariant as a query on the evidence.
check() { count_violations "$1" "$(evidence_sql "$2")"; }

# check_invariants_file: every invariant of fault-suite-invariants.sql; each query follows its "-- name: ..." line and
# ends with the line that ends in ";".
check_invariants_file() {
  local line name='' query=''
  while IFS= read -r line; do
    if [[ $line == "-- name: "* ]]; then
      name=${line#-- name: } query=''
    elif [[ -n $name && -n $line && $line != --* ]]; then
      query+="$line"$'\n'
      [[ $line == *\; ]] && { check "$name" "$query"; name=''; }
    fi
  done <scripts/fault-suite-invariants.sql
}
