#!/usr/bin/env bash
# Kafka broker loss (issue 40, docs/fault-suite.md "Broker loss"): a three-node KRaft cluster (each node broker and
# controller, its own JVM, the Kafka jars of .ci/kafka-broker), topics with replication factor 3 and
# min.insync.replicas=2; the fault suite's stack and load run against it, and its fault round is replaced by a kill -9
# of the node that leads most payment-events partitions while the relay publishes at full speed (it is held back with
# SIGSTOP for BROKER_LOSS_HOLD_SECONDS of load, resumed with SIGCONT, and the node dies BROKER_LOSS_DRAIN_SECONDS into
# the drain of that backlog) and refunds-worker and webhook-delivery consume. The suite's invariants then hold (every
# outbox row on Kafka, each payment's events in commit order on one partition, no refund left PENDING, ...), plus: the
# consumer groups' lag back to 0, no partition led by the dead node, every partition with 2 in-sync replicas. Prints
# the produce requests the kill cut, the time without publishing, the events and the lag.
#
#   scripts/fault-suite.sh broker-loss            60 s of load (LOAD_SECONDS), then the acks proof (below)
#   scripts/fault-suite.sh broker-loss --short    CI's form: 25 s of load, no acks proof
#   scripts/fault-suite.sh broker-loss --prove    only the acks proof: the same kill under a producer at full speed,
#                                                 once with acks=all and once with acks=1 (the second may lose records)
#   env: BROKER_LOSS_PORT (26090: brokers on +1..+3, controllers on +11..+13; the stack on 262xx),
#        BROKER_LOSS_HOLD_SECONDS (20: the relay stopped), BROKER_LOSS_DRAIN_SECONDS (1: resume -> kill), KEEP=1, and
#        the fault suite's (LOAD_SECONDS, WORKERS, SETTLE_SECONDS, ...)
#
# Sourced by scripts/fault-suite.sh (FAULT_HOOKS) it only defines the suite's hooks fault_round and fault_report.

if [[ ${BASH_SOURCE[0]} != "$0" ]]; then
  # --- hooks, in the fault suite's shell -----------------------------------------------------------------------
  kbl() { "$JAVA" -cp "$BROKER_LOSS_TOOL_CP" com.payments.infra.KafkaClusterTool "$@" 2>>"$BROKER_LOSS_DIR/tool.log"; }
  KILLED_NODE='' KILL_AT_MS='' LEADERS_MOVED_MS='' RESUME_AT_MS='' BACKLOG_AT_RESUME='' BACKLOG_AT_KILL=''
  unsent() { sql -c "SELECT count(*) FROM outbox WHERE sent_at IS NULL"; }
  not_led_by() { ! kbl describe payment-events | grep -q " leader=$1 "; }
  fault_round() {
    # The JVM itself in the background, not kbl (a function: a subshell whose kill at the end left the JVM running)
    "$JAVA" -cp "$BROKER_LOSS_TOOL_CP" com.payments.infra.KafkaClusterTool lag 1000 refunds-worker webhook-delivery \
      >"$BROKER_LOSS_DIR/lag.tsv" 2>>"$BROKER_LOSS_DIR/tool.log" &
    PIDS+=($!)
    # A look may time out on a busy machine (a JVM each): try again.
    for _ in 1 2 3; do KILLED_NODE=$(kbl leader payment-events) && break; done
    [[ $KILLED_NODE =~ ^[1-3]$ ]] || { say "no leader of payment-events found"; INFRA_ERRORS=$((INFRA_ERRORS + 1)); return; }
    leaders() { kbl describe payment-events | grep -o 'leader=[a-z0-9]*' | sort | uniq -c | awk '{printf "%s %s, ", $2, $1}'; }
    say "payment-events partitions per leader before: $(leaders)"
    # At full speed: the relay held back while the load goes on, so that the kill hits it publishing a backlog.
    local relay node_pid
    relay=$(pid_on_port "$RELAY_PORT")
    node_pid=$(cat "$BROKER_LOSS_DIR/node$KILLED_NODE.pid")
    [[ -n $relay ]] || { say "no outbox-relay on :$RELAY_PORT"; INFRA_ERRORS=$((INFRA_ERRORS + 1)); return; }
    kill -STOP "$relay"
    say "outbox-relay (pid $relay) stopped (SIGSTOP) for ${BROKER_LOSS_HOLD_SECONDS:-20} s of load"
    sleep "${BROKER_LOSS_HOLD_SECONDS:-20}"
    BACKLOG_AT_RESUME=$(unsent)
    kill -CONT "$relay"
    RESUME_AT_MS=$(date +%s%3N)
    sleep "${BROKER_LOSS_DRAIN_SECONDS:-1}"
    kill -9 "$node_pid"
    KILL_AT_MS=$(date +%s%3N)
    FAULTS=$((FAULTS + 1))
    BACKLOG_AT_KILL=$(unsent)
    say "kill -9 Kafka node $KILLED_NODE (leads most payment-events partitions) $((KILL_AT_MS - RESUME_AT_MS)) ms" \
      "after the relay resumed with $BACKLOG_AT_RESUME unsent rows; $BACKLOG_AT_KILL unsent at the kill"
    if POLL_EVERY=0.5 poll 60 "" "payment-events leaders off node $KILLED_NODE" not_led_by "$KILLED_NODE"; then
      LEADERS_MOVED_MS=$(($(date +%s%3N) - KILL_AT_MS))
      say "payment-events leaders off node $KILLED_NODE after ${LEADERS_MOVED_MS} ms (polled): $(leaders)"
    else
      INFRA_ERRORS=$((INFRA_ERRORS + 1))
    fi
  }
  broker_check() { # NAME VIOLATIONS
    INVARIANTS=$((INVARIANTS + 1))
    VIOLATIONS=$((VIOLATIONS + $2))
    printf '%-70s %s\n' "$1" "$2"
  }
  # A fresh client each look (the sampler's may still wait on the dead node while it refreshes its metadata).
  lag_zero() { [[ $(kbl lag 0 refunds-worker webhook-delivery | cut -d' ' -f2) == 0 ]]; }
  fault_report() {
    local describe stuck=0 offline isr gap published max_lag in_flight
    # Throttled commits trail the processing by a few seconds.
    poll 60 "" "lag 0 of refunds-worker and webhook-delivery" lag_zero || stuck=1
    describe=$(kbl describe payment-events; kbl describe refund-commands)
    offline=$(grep -c -e "leader=none" -e "leader=$KILLED_NODE " <<<"$describe")
    isr=$(grep -vc 'isr=\[[0-9]*, [0-9]*\]$' <<<"$describe")
    broker_check "Kafka: consumer groups caught up (lag 0 within 60 s of settling)" "$stuck"
    broker_check "Kafka: no partition without a leader or led by the killed node $KILLED_NODE" "$offline"
    broker_check "Kafka: every partition with 2 in-sync replicas after the loss" "$isr"
    ((offline + isr)) && echo "$describe"
    # The longest time without a row marked sent, from the relay's resume to the end of the load (before it, the
    # relay was held back on purpose).
    gap=$(sql -c "SELECT coalesce(round(extract(epoch FROM max(gap)) * 1000), -1) FROM (SELECT sent_at - lag(sent_at)
      OVER (ORDER BY sent_at) gap FROM outbox WHERE sent_at BETWEEN to_timestamp($RESUME_AT_MS / 1000.0)
      AND to_timestamp($(cat "$OUT/stop")) + interval '5 s') t")
    published=$(sql -c "SELECT count(*) FILTER (WHERE sent_at < to_timestamp($KILL_AT_MS / 1000.0)) || ' before, '
      || count(*) FILTER (WHERE sent_at >= to_timestamp($KILL_AT_MS / 1000.0)) || ' after the kill' FROM outbox")
    # Produce requests the kill cut: the relay's producer logs each partition's failed request before it retries it
    # (on the same idempotent sequence): proof that the kill hit the relay publishing, not idle.
    in_flight=$(grep -c 'Got error produce response' "$ROOT/.local/logs/outbox-relay.log")
    max_lag=$(awk '$2 != "unknown" && $2 > m {m = $2} END {print m + 0}' "$BROKER_LOSS_DIR/lag.tsv")
    echo
    say "broker loss: node $KILLED_NODE killed ${BROKER_LOSS_DRAIN_SECONDS:-1} s into the relay's drain of" \
      "$BACKLOG_AT_RESUME rows ($BACKLOG_AT_KILL unsent at the kill); payment-events leaders moved after" \
      "${LEADERS_MOVED_MS:-?} ms; produce requests cut by the kill and retried: $in_flight; longest time without publishing after the resume ${gap} ms; outbox rows published: $published;" \
      "consumer lag (refunds-worker + webhook-delivery) max $max_lag records," \
      "$(grep -c unknown "$BROKER_LOSS_DIR/lag.tsv") samples unanswered"
  }
  return 0
fi

# --- the runner ------------------------------------------------------------------------------------------------
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
# shellcheck source=lib.sh
source scripts/lib.sh
SHORT=0 PROVE=1 SUITE=1
case "${1:-}" in
  --short) SHORT=1 PROVE=0 ;;
  --prove) SUITE=0 ;;
  "") ;;
  *) echo "usage: $0 [--short|--prove]" >&2; exit 2 ;;
esac
BASE=${BROKER_LOSS_PORT:-26090}
export BROKER_LOSS_DIR=$ROOT/.local/broker-loss
START=$SECONDS
say() { printf '[broker-loss %4ds] %s\n' $((SECONDS - START)) "$*"; }
rm -rf "$BROKER_LOSS_DIR" && mkdir -p "$BROKER_LOSS_DIR"
PIDS=()
cleanup() {
  trap - INT TERM EXIT
  for n in 1 2 3; do [[ -f $BROKER_LOSS_DIR/node$n.pid ]] && kill "$(cat "$BROKER_LOSS_DIR/node$n.pid")" 2>/dev/null; done
  sleep 2
  for n in 1 2 3; do [[ -f $BROKER_LOSS_DIR/node$n.pid ]] && kill -9 "$(cat "$BROKER_LOSS_DIR/node$n.pid")" 2>/dev/null; done
  [[ -n ${KEEP:-} ]] || rm -rf "$BROKER_LOSS_DIR"/data*
}
trap cleanup INT TERM EXIT

# The cluster: node N listens on BASE+N (clients) and BASE+10+N (controller quorum).
"$ROOT/mvnw" -q -B -ntp -f .ci/kafka-broker/pom.xml dependency:build-classpath \
  -Dmdep.outputFile="$BROKER_LOSS_DIR/kafka.classpath" >/dev/null || { say "cannot resolve the Kafka jars"; exit 2; }
module_classpath local-infra "$BROKER_LOSS_DIR/infra.classpath" || { say "cannot resolve local-infra's class path"; exit 2; }
[[ -f local-infra/target/classes/com/payments/infra/KafkaClusterTool.class ]] ||
  { say "local-infra is not compiled: ./mvnw -B package -DskipTests first"; exit 2; }
export BROKER_LOSS_TOOL_CP=$ROOT/local-infra/target/classes:$(cat "$BROKER_LOSS_DIR/infra.classpath")
VOTERS=$(for n in 1 2 3; do printf '%s@127.0.0.1:%s,' $n $((BASE + 10 + n)); done)
export PAYMENTS_KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:$((BASE + 1)),127.0.0.1:$((BASE + 2)),127.0.0.1:$((BASE + 3))
KAFKA_JAVA=("$JAVA" -Xmx384m -Xms384m -cp "$(cat "$BROKER_LOSS_DIR/kafka.classpath")"
  -Dlog4j2.configurationFile="$ROOT/.ci/kafka-broker/log4j2.properties")
CLUSTER_ID="-" # a Kafka Uuid (as .ci/run draws it: one starting with "-" would read as an option)
while [[ $CLUSTER_ID == -* ]]; do CLUSTER_ID=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '='); done
for n in 1 2 3; do
  # Production's settings (k8s/overlays/strimzi-cnpg/data/kafka.yaml): replication 3, min.insync.replicas 2, no
  # unclean leader election, no topic created by a client (the topics are declared, below as KafkaTopics there).
  cat >"$BROKER_LOSS_DIR/node$n.properties" <<EOF
process.roles=broker,controller
node.id=$n
controller.quorum.voters=${VOTERS%,}
listeners=PLAINTEXT://127.0.0.1:$((BASE + n)),CONTROLLER://127.0.0.1:$((BASE + 10 + n))
advertised.listeners=PLAINTEXT://127.0.0.1:$((BASE + n))
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$BROKER_LOSS_DIR/data$n
num.partitions=4
auto.create.topics.enable=false
default.replication.factor=3
min.insync.replicas=2
unclean.leader.election.enable=false
offsets.topic.replication.factor=3
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
group.initial.rebalance.delay.ms=0
EOF
  "${KAFKA_JAVA[@]}" kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$BROKER_LOSS_DIR/node$n.properties" \
    >"$BROKER_LOSS_DIR/format$n.out" || { say "format of node $n failed"; exit 2; }
done
start_node() { # N
  setsid "${KAFKA_JAVA[@]}" kafka.Kafka "$BROKER_LOSS_DIR/node$1.properties" >>"$BROKER_LOSS_DIR/node$1.log" 2>&1 </dev/null &
  echo $! >"$BROKER_LOSS_DIR/node$1.pid"
  disown
}
for n in 1 2 3; do start_node $n; done
for n in 1 2 3; do
  poll 90 "$(cat "$BROKER_LOSS_DIR/node$n.pid")" "Kafka node $n on :$((BASE + n))" port_open $((BASE + n)) || exit 2
done
kbl() { "$JAVA" -cp "$BROKER_LOSS_TOOL_CP" com.payments.infra.KafkaClusterTool "$@" 2>>"$BROKER_LOSS_DIR/tool.log"; }
# The services' topics as production's KafkaTopics (k8s/overlays/strimzi-cnpg/data/kafka-topics.yaml) set them.
kbl topics 3 2 24 payment-events && kbl topics 3 2 12 refund-commands && kbl topics 3 2 3 refund-commands-dlq ||
  { say "cannot create the topics (log: $BROKER_LOSS_DIR/tool.log)"; tail -5 "$BROKER_LOSS_DIR/tool.log"; exit 2; }
say "three-node KRaft cluster up on $PAYMENTS_KAFKA_BOOTSTRAP_SERVERS; topics created (replication 3, min.insync.replicas 2)"

status=0
if ((SUITE)); then
  if ((SHORT)); then export LOAD_SECONDS=${LOAD_SECONDS:-25}; fi
  export API_PORT=${API_PORT:-26280} RELAY_PORT=${RELAY_PORT:-26281} WORKER_PORT=${WORKER_PORT:-26282}
  export DELIVERY_PORT=${DELIVERY_PORT:-26283} PSP_PORT=${PSP_PORT:-26289} API_MANAGEMENT_PORT=${API_MANAGEMENT_PORT:-26290}
  export RELAY_MANAGEMENT_PORT=${RELAY_MANAGEMENT_PORT:-26291} WORKER_MANAGEMENT_PORT=${WORKER_MANAGEMENT_PORT:-26292}
  export DELIVERY_MANAGEMENT_PORT=${DELIVERY_MANAGEMENT_PORT:-26293}
  FAULT_HOOKS=$ROOT/scripts/fault-broker-loss.sh ROUNDS=1 scripts/fault-suite.sh
  status=$?
fi

if ((PROVE && status == 0)); then
  # The same kill under a producer at full speed, on topics of one partition (one leader to kill): acks=all must lose
  # nothing; acks=1 acknowledges a record once the leader alone has it, so what the followers had not fetched yet
  # when the leader died is gone although acknowledged.
  for n in 1 2 3; do
    kill -0 "$(cat "$BROKER_LOSS_DIR/node$n.pid")" 2>/dev/null && continue
    start_node "$n"
    poll 90 "" "Kafka node $n back" port_open $((BASE + n)) || exit 2
    say "Kafka node $n started again (same data directory)"
  done
  for acks in all 1; do
    topic=probe-acks-$acks
    kbl topics 3 2 1 "$topic" || exit 2
    leader=$(kbl leader "$topic")
    : >"$BROKER_LOSS_DIR/probe-$acks.out"
    kbl probe "$acks" 10 "$topic" >"$BROKER_LOSS_DIR/probe-$acks.out" &
    probe=$!
    poll 120 "$probe" "first acknowledgement of the probe" grep -q sending "$BROKER_LOSS_DIR/probe-$acks.out" || exit 2
    sleep 2
    kill -9 "$(cat "$BROKER_LOSS_DIR/node$leader.pid")"
    say "acks=$acks: kill -9 Kafka node $leader (the leader of $topic) under a producer at full speed"
    wait "$probe"
    say "acks=$acks: $(tail -1 "$BROKER_LOSS_DIR/probe-$acks.out")"
    start_node "$leader"
    poll 90 "" "Kafka node $leader back" port_open $((BASE + leader)) || exit 2
    sleep 5 # let it rejoin the in-sync replicas before the next kill
  done
  lost_all=$(grep -o 'lost=[0-9]*' "$BROKER_LOSS_DIR/probe-all.out" | cut -d= -f2)
  if [[ $lost_all != 0 ]]; then
    say "VIOLATION: acks=all lost ${lost_all:-?} acknowledged records"
    status=1
  fi
fi
say "done in $((SECONDS - START)) s"
exit "$status"
