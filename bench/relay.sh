#!/usr/bin/env bash
# Outbox-relay benchmark: events/s drained by one relay instance, and the insert -> Kafka delay at a fixed rate.
# Runs the packaged relay (outbox-relay/target/quarkus-app/quarkus-run.jar) as a process against PostgreSQL and
# Kafka as local-infra resolves them (PAYMENTS_PG_* / PAYMENTS_KAFKA_BOOTSTRAP_SERVERS, else embedded ones).
# Knobs: BACKLOG (rows drained, default 100000), RATE (events/s, default 1000), DURATION (seconds, default 20),
# BATCH (relay.batch-size, default 1000). SKIP_BUILD=1: nothing is packaged, the relay's jar and RelayBench's test
# classes are used as they are (Maven stops at compile, which recompiles only changed main sources, to resolve the
# class path from this tree rather than from ~/.m2).
set -euo pipefail
cd "$(dirname "$0")/.."

CP_FILE="$(mktemp)"
# One invocation, so that contracts and local-infra resolve from this tree (the last module writes the file).
GOALS=(package)
[[ "${SKIP_BUILD:-0}" == 1 ]] && GOALS=(compile)
./mvnw -q -B -pl outbox-relay -am "${GOALS[@]}" dependency:build-classpath -DskipTests \
  -Dmdep.includeScope=test -Dmdep.outputFile="$CP_FILE"
CP="outbox-relay/target/test-classes:outbox-relay/target/classes:$(cat "$CP_FILE")"
rm -f "$CP_FILE"

exec java -Xmx1g -cp "$CP" \
  -Dbench.backlog="${BACKLOG:-100000}" -Dbench.rate="${RATE:-1000}" -Dbench.seconds="${DURATION:-20}" \
  -Dbench.batch-size="${BATCH:-1000}" \
  -Drelay.jar=outbox-relay/target/quarkus-app/quarkus-run.jar \
  com.payments.relay.RelayBench
