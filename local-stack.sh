#!/usr/bin/env bash
# Starts the whole payments platform locally: PostgreSQL and Kafka (embedded by default, or the ones given by
# PAYMENTS_PG_* / PAYMENTS_KAFKA_BOOTSTRAP_SERVERS), the PSP sandbox, the schema migration, payments-api,
# outbox-relay, refunds-worker and webhook-delivery (which may send to http and loopback endpoints here, never in
# production). Ctrl-C stops everything it started.
#
#   ./local-stack.sh              build what is needed, start everything, wait for Ctrl-C
#   ./local-stack.sh recon [ARGS]  run the reconciler once against the running stack (see docs/reconciler.md)
#   ./local-stack.sh events [TOPIC [SECONDS [end]]]  print a Kafka topic from the beginning (default payment-events);
#                                              with end, stop once its end is read
#   ./local-stack.sh send TOPIC KEY VALUE  send one record to a Kafka topic (prints partition/offset)
#   SKIP_BUILD=1 ./local-stack.sh start without building (the jars must exist)
# .local/ready exists while everything is up (scripts wait for it); .local/env holds the services' settings;
# .local/pids one line "MODULE PID" per service started (bench/all.sh reads their memory).
#   PSP_PROVIDER=stripe ./local-stack.sh  the services speak Stripe's API to the sandbox's Stripe mode (docs/stripe.md)
#   PROMETHEUS=1 ./local-stack.sh also start Prometheus (Debian package `prometheus`) on PROMETHEUS_PORT (9090),
#                scraping every service with the alerts of k8s/monitoring/prometheus-rule.yaml (needs node/npm)
#   NATIVE=1 ./local-stack.sh     the same with the native executables (<module>/target/*-runner), built first with the
#                                 test toolchain when missing (docs/deployment.md, "Native images"); NATIVE=MODULE,...
#                                 runs only those natively, the others as jars
#   CONTAINERS=1 ./local-stack.sh the Kubernetes manifests played with podman instead (scripts/kube-play.sh: the images of
#                                 scripts/images.sh, ports 18080-18083, 19000-19003, 18089; docs/deployment.md)
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
if [[ -n ${CONTAINERS:-} ]]; then exec scripts/kube-play.sh "${@:-run}"; fi
STATE=$ROOT/.local
LOGS=$STATE/logs

API_PORT=${API_PORT:-8080}
RELAY_PORT=${RELAY_PORT:-8081}
WORKER_PORT=${WORKER_PORT:-8082}
DELIVERY_PORT=${DELIVERY_PORT:-8083} # webhook-delivery: nothing served, its health and metrics are on the management port
PSP_PORT=${PSP_PORT:-8089}
# Management interfaces (health, metrics, OpenAPI, the operator API; docs/deployment.md)
API_MANAGEMENT_PORT=${API_MANAGEMENT_PORT:-9000}
RELAY_MANAGEMENT_PORT=${RELAY_MANAGEMENT_PORT:-9001}
WORKER_MANAGEMENT_PORT=${WORKER_MANAGEMENT_PORT:-9002}
DELIVERY_MANAGEMENT_PORT=${DELIVERY_MANAGEMENT_PORT:-9003}
PROMETHEUS_PORT=${PROMETHEUS_PORT:-9090}
WEBHOOK_SECRET=${PSP_WEBHOOK_SECRET:-whsec_local_stack}
# sandbox: the PSP protocol of docs/architecture.md §5; stripe: Stripe's API, served by the sandbox under /stripe
PSP_PROVIDER=${PSP_PROVIDER:-sandbox}
[[ $PSP_PROVIDER == sandbox || $PSP_PROVIDER == stripe ]] || { echo "local-stack: PSP_PROVIDER must be sandbox or stripe" >&2; exit 1; }
STRIPE_WEBHOOK_SECRET=${STRIPE_WEBHOOK_SECRET:-whsec_local_stack_stripe}
ADMIN_TOKEN=${PAYMENTS_ADMIN_TOKEN:-dev-operator-token}
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

log() { printf '\033[1m==> %s\033[0m\n' "$*"; }
die() { printf 'local-stack: %s\n' "$*" >&2; exit 1; }

jar() { echo "$ROOT/$1/target/quarkus-app/quarkus-run.jar"; }
executable() { compgen -G "$ROOT/$1/target/*-runner" | head -n 1; }
# native MODULE: whether MODULE runs as its native executable (NATIVE=1: every service; NATIVE=payments-api,psp-sandbox:
# those, the others as jars)
native() { [[ ${NATIVE:-} == 1 || ",${NATIVE:-}," == *",$1,"* ]]; }
# launch MODULE [-Dname=value...]: the module's jar on $JAVA, or its native executable (same options)
launch() {
  local module=$1
  shift
  if native "$module"; then
    set -- "$(executable "$module")" "$@"
  else
    set -- "$JAVA" "$@" -jar "$(jar "$module")"
  fi
  # Started with & (a subshell), exec: $! is then the service itself, which cleanup's kill stops (a subshell's child
  # would outlive it and keep its port).
  if [[ $BASHPID != "$$" ]]; then exec "$@"; else "$@"; fi
}

if [[ "${1:-}" == "events" ]]; then
  [[ -f $STATE/env ]] || die "the stack is not running (no $STATE/env): start ./local-stack.sh first"
  # shellcheck disable=SC1091
  source "$STATE/infra.env"
  exec "$JAVA" -cp "$ROOT/local-infra/target/classes:$(cat "$STATE/infra.classpath")" \
    com.payments.infra.TopicTail "${2:-payment-events}" "${@:3}" 2>/dev/null
fi

if [[ "${1:-}" == "send" ]]; then
  [[ -f $STATE/env ]] || die "the stack is not running (no $STATE/env): start ./local-stack.sh first"
  (($# == 4)) || die "usage: ./local-stack.sh send TOPIC KEY VALUE"
  # shellcheck disable=SC1091
  source "$STATE/infra.env"
  exec "$JAVA" -cp "$ROOT/local-infra/target/classes:$(cat "$STATE/infra.classpath")" \
    com.payments.infra.TopicSend "${@:2}" 2>/dev/null
fi

if [[ "${1:-}" == "recon" ]]; then
  [[ -f $STATE/env ]] || die "the stack is not running (no $STATE/env): start ./local-stack.sh first"
  # shellcheck disable=SC1091
  source "$STATE/env"
  if native reconciler; then exec "$(executable reconciler)" "${@:2}"; fi
  exec "$JAVA" -jar "$(jar reconciler)" "${@:2}"
fi

ports=("$API_PORT" "$RELAY_PORT" "$WORKER_PORT" "$DELIVERY_PORT" "$PSP_PORT" "$API_MANAGEMENT_PORT"
  "$RELAY_MANAGEMENT_PORT" "$WORKER_MANAGEMENT_PORT" "$DELIVERY_MANAGEMENT_PORT")
if [[ -n "${PROMETHEUS:-}" ]]; then
  command -v prometheus >/dev/null || die "PROMETHEUS=1 needs prometheus (apt-get install prometheus)"
  command -v node >/dev/null || die "PROMETHEUS=1 needs node/npm (it renders k8s/monitoring/prometheus-rule.yaml)"
  ports+=("$PROMETHEUS_PORT")
fi
for port in "${ports[@]}"; do
  # A process of an earlier stack may still be stopping (payments-api pauses 5 s after SIGTERM): give it 15 s.
  for ((i = 0; i < 150; i++)); do port_open "$port" || break; sleep 0.1; done
  port_open "$port" && die "port $port is already in use (set API_PORT, RELAY_PORT, WORKER_PORT, DELIVERY_PORT, PSP_PORT, *_MANAGEMENT_PORT or PROMETHEUS_PORT to move a service)"
done

mkdir -p "$LOGS"
MODULES=(psp-sandbox payments-api outbox-relay refunds-worker webhook-delivery reconciler)
if [[ -z "${SKIP_BUILD:-}" ]]; then
  log "building (./mvnw package -DskipTests)"
  ./mvnw -B -q -ntp package -DskipTests
fi
missing=()
for module in "${MODULES[@]}"; do
  if native "$module"; then
    [[ -n $(executable "$module") ]] || missing+=("$module")
  else
    [[ -f $(jar "$module") ]] || die "$(jar "$module") is missing: run without SKIP_BUILD"
  fi
done
if ((${#missing[@]})); then
  # The test toolchain (shared/native-toolchain): a GraalVM home made from Temurin 25 and Maven Central jars.
  GRAALVM_HOME=${GRAALVM_HOME:-$STATE/graalvm-home}
  if [[ ! -x $GRAALVM_HOME/bin/native-image ]]; then
    toolchain=${NATIVE_TOOLCHAIN_DIR:-$ROOT/../shared/native-toolchain}
    [[ -f $toolchain/setup.sh ]] || die "no $toolchain/setup.sh: set NATIVE_TOOLCHAIN_DIR or GRAALVM_HOME"
    log "setting up the native toolchain in $GRAALVM_HOME"
    bash "$toolchain/setup.sh" "$GRAALVM_HOME" >"$LOGS/native-toolchain.log" 2>&1 ||
      { tail -n 30 "$LOGS/native-toolchain.log" >&2; die "native toolchain setup failed"; }
  fi
  modules=$(IFS=,; echo "${missing[*]}")
  log "building native executables of $modules (several minutes each)"
  read -ra toolchain_args < <(scripts/native-toolchain/build-args.sh "$GRAALVM_HOME")
  ./mvnw -B -q -ntp package -Dnative -DskipTests -Dquarkus.native.graalvm-home="$GRAALVM_HOME" "${toolchain_args[@]}" \
    -pl "$modules" -am
  for module in "${missing[@]}"; do
    [[ -n $(executable "$module") ]] || die "no native executable in $module/target"
  done
fi

PIDS=()
cleanup() {
  trap - INT TERM EXIT
  log "stopping"
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do kill "${PIDS[i]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -f "$STATE/env" "$STATE/ready" "$STATE/pids"
}
trap cleanup INT TERM EXIT

log "starting PostgreSQL and Kafka"
rm -f "$STATE/ready" "$STATE/pids"
start_infra "$STATE" "$LOGS/infra.log" --database payments || die "PostgreSQL and Kafka did not start"

# The sandbox's Stripe mode takes any key: a made-up one, so that a real key in the environment never goes to it. With
# PSP_STRIPE_API_BASE set (real Stripe, scripts/stripe-smoke.sh) the services use the caller's STRIPE_API_KEY, which
# stays in the environment and out of .local/env.
STRIPE_KEY_LINE="export STRIPE_API_KEY='sk_test_local_stack'"
if [[ -n ${PSP_STRIPE_API_BASE:-} ]]; then
  [[ -n ${STRIPE_API_KEY:-} ]] || die "PSP_STRIPE_API_BASE is set but STRIPE_API_KEY is not"
  STRIPE_KEY_LINE="export PSP_STRIPE_API_BASE='$PSP_STRIPE_API_BASE' _DEV_PSP_STRIPE_API_BASE='$PSP_STRIPE_API_BASE'"
fi
cat >"$STATE/env" <<ENV
export QUARKUS_DATASOURCE_REACTIVE_URL='postgresql://$PAYMENTS_PG_HOST:$PAYMENTS_PG_PORT/$PAYMENTS_PG_DATABASE'
export QUARKUS_DATASOURCE_JDBC_URL='jdbc:postgresql://$PAYMENTS_PG_HOST:$PAYMENTS_PG_PORT/$PAYMENTS_PG_DATABASE'
# The services log in as the application role (DML only); the migration below runs as the schema owner.
export QUARKUS_DATASOURCE_USERNAME='$PAYMENTS_PG_APP_USER'
export QUARKUS_DATASOURCE_PASSWORD='$PAYMENTS_PG_APP_PASSWORD'
export KAFKA_BOOTSTRAP_SERVERS='$PAYMENTS_KAFKA_BOOTSTRAP_SERVERS'
export PSP_URL='http://127.0.0.1:$PSP_PORT'
export PSP_WEBHOOK_SECRET='$WEBHOOK_SECRET'
export PSP_PROVIDER='$PSP_PROVIDER'
export STRIPE_WEBHOOK_SECRET='$STRIPE_WEBHOOK_SECRET'
$STRIPE_KEY_LINE
# The reconciler reads the settlement lines through the PSP port (PSP_PROVIDER, PSP_URL), as the services call it.
export RECON_SOURCE=psp
export PAYMENTS_ADMIN_TOKEN='$ADMIN_TOKEN'
# Local runs use the dev profile: demo merchants on, plain-text logs. Never in production.
export QUARKUS_PROFILE=dev
# which services run natively (NATIVE): \`./local-stack.sh recon\` runs the same kind
NATIVE='${NATIVE:-}'
# Webhook endpoints on http://127.0.0.1:... (payments-api registers them, webhook-delivery sends to them): local runs
# and tests only, never in production (docs/merchant-webhooks.md, "Which URLs are accepted").
export PAYMENTS_WEBHOOKS_ALLOW_HTTP=true
export PAYMENTS_WEBHOOKS_ALLOW_LOOPBACK=true
ENV
# shellcheck disable=SC1091
source "$STATE/env"

start() { # MODULE PORT READY_PORT [-Dname=value...] (READY_PORT: where /q/health/ready is, the management port if any)
  local name=$1 port=$2 ready=$3
  shift 3
  : >"$LOGS/$name.log"
  launch "$name" -Xmx384m -Dquarkus.http.port="$port" "$@" >>"$LOGS/$name.log" 2>&1 &
  PIDS+=($!)
  echo "$name $!" >>"$STATE/pids"
  wait_http "http://127.0.0.1:$ready/q/health/ready" 120 "$!" "$LOGS/$name.log" || die "$name did not start"
  log "$name ready on http://127.0.0.1:$port"
}

log "migrating the schema (payments-api as the migration Job)"
QUARKUS_INIT_AND_EXIT=true QUARKUS_FLYWAY_MIGRATE_AT_START=true PAYMENTS_DB_REQUIRE_APPLICATION_ROLE=true \
  QUARKUS_DATASOURCE_USERNAME="$PAYMENTS_PG_USER" QUARKUS_DATASOURCE_PASSWORD="$PAYMENTS_PG_PASSWORD" \
  launch payments-api >"$LOGS/migrate.log" 2>&1 || { tail -n 30 "$LOGS/migrate.log" >&2; die "migration failed"; }

start psp-sandbox "$PSP_PORT" "$PSP_PORT" -Dpsp.webhook.url="http://127.0.0.1:$API_PORT/v1/psp/webhooks" \
  -Dpsp.stripe.webhook-url="http://127.0.0.1:$API_PORT/v1/psp/stripe/webhooks"
start payments-api "$API_PORT" "$API_MANAGEMENT_PORT" -Dquarkus.management.port="$API_MANAGEMENT_PORT"
start outbox-relay "$RELAY_PORT" "$RELAY_MANAGEMENT_PORT" -Dquarkus.management.port="$RELAY_MANAGEMENT_PORT"
start refunds-worker "$WORKER_PORT" "$WORKER_MANAGEMENT_PORT" -Dquarkus.management.port="$WORKER_MANAGEMENT_PORT"
start webhook-delivery "$DELIVERY_PORT" "$DELIVERY_MANAGEMENT_PORT" -Dquarkus.management.port="$DELIVERY_MANAGEMENT_PORT"

# Prometheus with the same alerts as the cluster's PrometheusRule; job names are the services' (as the ServiceMonitors').
prometheus_info=""
if [[ -n "${PROMETHEUS:-}" ]]; then
  mkdir -p "$STATE/prometheus"
  [[ -d k8s/validate/node_modules/yaml ]] ||
    (cd k8s/validate && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  node k8s/validate/monitoring.mjs rules k8s/monitoring/prometheus-rule.yaml >"$STATE/prometheus/rules.yaml"
  cat >"$STATE/prometheus/prometheus.yml" <<PROM
global:
  scrape_interval: 5s
  evaluation_interval: 5s
rule_files: [rules.yaml]
scrape_configs:
  - {job_name: payments-api, metrics_path: /q/metrics, static_configs: [{targets: ['127.0.0.1:$API_MANAGEMENT_PORT']}]}
  - {job_name: outbox-relay, metrics_path: /q/metrics, static_configs: [{targets: ['127.0.0.1:$RELAY_MANAGEMENT_PORT']}]}
  - {job_name: refunds-worker, metrics_path: /q/metrics, static_configs: [{targets: ['127.0.0.1:$WORKER_MANAGEMENT_PORT']}]}
  - {job_name: webhook-delivery, metrics_path: /q/metrics, static_configs: [{targets: ['127.0.0.1:$DELIVERY_MANAGEMENT_PORT']}]}
PROM
  rm -rf "$STATE/prometheus/data"
  prometheus --config.file="$STATE/prometheus/prometheus.yml" --storage.tsdb.path="$STATE/prometheus/data" \
    --web.listen-address="127.0.0.1:$PROMETHEUS_PORT" >"$LOGS/prometheus.log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$PROMETHEUS_PORT/-/ready" 120 "$!" "$LOGS/prometheus.log" || die "prometheus did not start"
  log "prometheus ready on http://127.0.0.1:$PROMETHEUS_PORT"
  prometheus_info="
  Prometheus       http://127.0.0.1:$PROMETHEUS_PORT  (alerts: /alerts, targets: /targets)"
fi

cat <<INFO

The payments platform is running${NATIVE:+ (native executables: NATIVE=$NATIVE)}. Ctrl-C stops it.

  Merchant API     http://127.0.0.1:$API_PORT/v1/payments
  Operator API     http://127.0.0.1:$API_MANAGEMENT_PORT/v1/admin  (also on :$API_PORT locally; docs/deployment.md)
  Operator console http://127.0.0.1:$API_MANAGEMENT_PORT/console  (log in with the operator token below; also on :$API_PORT locally)
  Swagger UI       http://127.0.0.1:$API_MANAGEMENT_PORT/q/swagger-ui
  Metrics          http://127.0.0.1:$API_MANAGEMENT_PORT/q/metrics  (relay :$RELAY_MANAGEMENT_PORT, worker :$WORKER_MANAGEMENT_PORT, webhook-delivery :$DELIVERY_MANAGEMENT_PORT)$prometheus_info
  PSP sandbox      http://127.0.0.1:$PSP_PORT  (test API: /test/counters/{reference}; PSP_PROVIDER=$PSP_PROVIDER)
  PostgreSQL       $QUARKUS_DATASOURCE_JDBC_URL  (services log in as $PAYMENTS_PG_APP_USER, owner $PAYMENTS_PG_USER)
  Kafka            $PAYMENTS_KAFKA_BOOTSTRAP_SERVERS
  Logs             $LOGS/
  Operator token   $ADMIN_TOKEN

Demo merchants (local runs only):
  Demo Shop A      Authorization: Bearer sk_test_demo_merchant_a
  Demo Shop B      Authorization: Bearer sk_test_demo_merchant_b

Kafka events:      ./local-stack.sh events payment-events
Webhooks:          POST /v1/webhook_endpoints with an http://127.0.0.1:<port>/ URL (allowed locally only; docs/merchant-webhooks.md)
Reconcile a day:   ./local-stack.sh recon --date=$(date -u +%F)
INFO
touch "$STATE/ready"
wait "${PIDS[@]}"
