#!/usr/bin/env bash
# Plays the Kubernetes manifests for real with podman (docs/deployment.md, "Played with podman"): renders
# k8s/overlays/local (dev with the images of scripts/images.sh, host networking on loopback) with what only this
# machine knows (PostgreSQL and Kafka addresses, the Secrets), then `podman kube play`s the migration Job's pod
# template, psp-sandbox, every Deployment, and the reconciler CronJob's pod template once.
#
#   scripts/kube-play.sh             up, then wait for Ctrl-C, then down (also: CONTAINERS=1 ./local-stack.sh)
#   scripts/kube-play.sh up          start everything and return once every Deployment is ready
#   scripts/kube-play.sh down        stop and remove everything `up` started (also after a failed up)
#   scripts/kube-play.sh check       every probe path answers on the port its manifest names; podman inspect shows the
#                                    user, read-only root and dropped capabilities the manifests ask for
#   scripts/kube-play.sh recon ARGS  one run of the reconciler CronJob's pod template with ARGS as its args; its exit code
#   scripts/kube-play.sh events [TOPIC [SECONDS [end]]]  print a Kafka topic (as ./local-stack.sh events)
#   scripts/kube-play.sh walkthrough scripts/walkthrough.sh against the played stack
#   NATIVE=1 ... up                  payments-api from its native image (REPO/payments-api:local) instead of the JVM one
# PostgreSQL and Kafka are local-infra's (embedded, on loopback) unless PAYMENTS_PG_* / PAYMENTS_KAFKA_BOOTSTRAP_SERVERS
# name others. Ports (k8s/overlays/local): 18080-18083 and 19000-19003 (management), 18089 the sandbox.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
STATE=$ROOT/.local/kube-play
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
API_PORT=18080
API_MANAGEMENT_PORT=19000
PORTS=(18080 18081 18082 18083 18089 19000 19001 19002 19003)
WEBHOOK_SECRET=${PSP_WEBHOOK_SECRET:-whsec_kube_play}
ADMIN_TOKEN=${PAYMENTS_ADMIN_TOKEN:-kube-play-operator-token}

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'kube-play: %s\n' "$*" >&2; exit 1; }
helper() { python3 "$ROOT/scripts/kube-play.py" "$@"; }

down() {
  [[ -d $STATE ]] || return 0
  set +e # remove whatever exists, whatever failed
  log "stopping the played stack"
  for file in services sandbox; do
    [[ -f $STATE/play/$file.yaml ]] && podman kube down "$STATE/play/$file.yaml" >/dev/null 2>&1
  done
  for pod in payments-migrate reconciler $(podman pod ps --filter label=payments/kube-play=true --format '{{.Name}}' 2>/dev/null); do
    podman pod rm -f "$pod" >/dev/null 2>&1
  done
  if [[ -f $STATE/play/secrets.json ]]; then
    for secret in $(python3 -c 'import json, sys; print(*json.load(open(sys.argv[1])))' "$STATE/play/secrets.json"); do
      podman secret rm "$secret" >/dev/null 2>&1
    done
  fi
  if [[ -f $STATE/play/volumes.txt ]]; then
    while read -r volume; do podman volume rm -f "$volume" >/dev/null 2>&1; done <"$STATE/play/volumes.txt"
  fi
  if [[ -f $STATE/infra.pid ]]; then
    kill "$(cat "$STATE/infra.pid")" 2>/dev/null && poll 30 "" "infra exit" bash -c "! kill -0 $(cat "$STATE/infra.pid") 2>/dev/null"
  fi
  rm -rf "$STATE"
  set -e
}

# play FILE: podman kube play FILE (labelled, so that `down` finds its pods)
play() { podman kube play --quiet "$1" >"$STATE/logs/play-$(basename "$1" .yaml).log" 2>&1; }

# run_pod FILE NAME: plays the one Pod in FILE and waits until its container exits; returns its exit code
run_pod() {
  local file=$1 name=$2 container status
  podman pod rm -f "$name" >/dev/null 2>&1 || true
  play "$file"
  container=$(podman ps -a --filter "pod=$name" --format '{{.Names}}' | grep -v -- '-infra$' | head -n 1)
  [[ -n $container ]] || return 1
  status=$(podman wait "$container")
  podman logs "$container" >"$STATE/logs/$name.log" 2>&1
  podman pod rm -f "$name" >/dev/null
  return "$status"
}

up() {
  command -v podman >/dev/null || die "needs podman and runc (docs/deployment.md, \"Container images\")"
  [[ ! -d $STATE ]] || die "$STATE exists: a played stack is running (scripts/kube-play.sh down)"
  for port in "${PORTS[@]}"; do port_open "$port" && die "port $port is in use"; done
  local tag=local-jvm
  [[ ${NATIVE:-} == 1 || ${NATIVE:-} == payments-api ]] && tag=local
  podman image exists "localhost/payments/payments-api:$tag" || die "no image payments-api:$tag: run scripts/images.sh"
  mkdir -p "$STATE/logs" "$STATE/play" "$STATE/overlay"
  trap 'status=$?; ((status == 0)) || { echo "kube-play: up failed" >&2; tail -n 20 "$STATE"/logs/*.log >&2; down; }' EXIT

  log "starting PostgreSQL and Kafka (local-infra, loopback)"
  [[ -d local-infra/target/classes ]] || ./mvnw -B -q -ntp compile -pl local-infra -am
  PIDS=()
  start_infra "$STATE" "$STATE/logs/infra.log" --database payments || die "PostgreSQL and Kafka did not start"
  echo "$STARTED_PID" >"$STATE/infra.pid"

  # What only this machine knows, on top of k8s/overlays/local: the addresses and the Secrets' values.
  cat >"$STATE/overlay/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../../k8s/overlays/local # (relative: kustomize refuses an absolute one)
configMapGenerator:
  - name: payments-config
    behavior: merge
    literals:
      - QUARKUS_DATASOURCE_REACTIVE_URL=postgresql://$PAYMENTS_PG_HOST:$PAYMENTS_PG_PORT/$PAYMENTS_PG_DATABASE
      - QUARKUS_DATASOURCE_JDBC_URL=jdbc:postgresql://$PAYMENTS_PG_HOST:$PAYMENTS_PG_PORT/$PAYMENTS_PG_DATABASE
      - KAFKA_BOOTSTRAP_SERVERS=$PAYMENTS_KAFKA_BOOTSTRAP_SERVERS
generatorOptions:
  disableNameSuffixHash: true # the Secrets keep the names the manifests read (created out of band in a cluster)
secretGenerator:
  - name: payments-db
    literals: [username=$PAYMENTS_PG_APP_USER, password=$PAYMENTS_PG_APP_PASSWORD]
  - name: payments-db-migrator
    literals: [username=$PAYMENTS_PG_USER, password=$PAYMENTS_PG_PASSWORD]
  - name: payments-psp
    literals: [webhook-secret=$WEBHOOK_SECRET]
  - name: payments-admin
    literals: [token=$ADMIN_TOKEN]
  - name: payments-webhook-secrets # the AES keys of merchants' webhook signing secrets (scripts/lib.sh: the dev key)
    literals:
      - "keys=$WEBHOOK_SECRETS_KEYS"
labels:
  - pairs:
      payments/kube-play: "true"
    includeTemplates: true
images:
  - name: localhost/payments/payments-api
    newTag: $tag
YAML
  kubectl kustomize "$STATE/overlay" >"$STATE/rendered.yaml"
  helper split "$STATE/rendered.yaml" "$STATE/play"
  log "podman does not run: $(paste -sd ';' "$STATE/play/skipped.txt")"
  mkdir -p "$STATE/secrets"
  local secret
  for secret in $(helper secrets "$STATE/play/secrets.json" "$STATE/secrets"); do
    podman secret rm "$secret" >/dev/null 2>&1 || true
    podman secret create "$secret" "$STATE/secrets/$secret.json" >/dev/null
  done
  rm -rf "$STATE/secrets"

  log "migration: the Job's pod template"
  run_pod "$STATE/play/migrate.yaml" payments-migrate || die "migration failed (logs: $STATE/logs/payments-migrate.log)"

  log "psp-sandbox, then payments-api, outbox-relay, refunds-worker, webhook-delivery"
  play "$STATE/play/sandbox.yaml"
  wait_http "http://127.0.0.1:18089/q/health/ready" 120 || die "psp-sandbox not ready"
  play "$STATE/play/services.yaml"
  local name kind port path
  while read -r name kind port path; do
    [[ $kind == readinessProbe ]] || continue
    wait_http "http://127.0.0.1:$port$path" 180 || { podman logs --tail 30 "$name-pod-0-$name" >&2; die "$name not ready"; }
    log "$name ready ($path on :$port)"
  done < <(helper probes "$STATE/rendered.yaml")

  log "reconciler: the CronJob's pod template, once"
  local recon=0
  run_pod "$STATE/play/reconciler.yaml" reconciler || recon=$?
  ((recon == 0 || recon == 2)) || die "reconciler run failed with $recon (logs: $STATE/logs/reconciler.log)"
  log "reconciler exited with $recon (0 clean, 2 breaks)"

  log "a merchant through the operator API (the prod profile has no demo merchants)"
  local answer
  answer=$(curl -fsS -X POST "http://127.0.0.1:$API_MANAGEMENT_PORT/v1/admin/merchants" \
    -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' -d '{"name":"kube-play merchant"}')
  MERCHANT_KEY=$(sed -nE 's/.*"(apiKey|key)":"([^"]+)".*/\2/p' <<<"$answer")
  [[ -n $MERCHANT_KEY ]] || die "no key in the operator API's answer: $answer"
  cat >"$STATE/env" <<ENV
export API=http://127.0.0.1:$API_PORT MERCHANT_KEY='$MERCHANT_KEY' PAYMENTS_ADMIN_TOKEN='$ADMIN_TOKEN'
ENV
  trap - EXIT
  cat <<INFO >&2

The manifests are played (podman pod ps). scripts/kube-play.sh down stops them.
  Merchant API     http://127.0.0.1:$API_PORT/v1/payments  (Authorization: Bearer $MERCHANT_KEY)
  Operator API     http://127.0.0.1:$API_MANAGEMENT_PORT/v1/admin  (token $ADMIN_TOKEN)
  Settings         $STATE/env, the render $STATE/rendered.yaml, logs: podman logs <deployment>-pod-0-<container>
INFO
}

check() {
  [[ -f $STATE/env ]] || die "nothing played (scripts/kube-play.sh up)"
  local name kind port path failed=0 code
  while read -r name kind port path; do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port$path" || true)
    printf '%-18s %-15s :%s%-20s %s\n' "$name" "$kind" "$port" "$path" "$code"
    [[ $code == 200 ]] || failed=1
  done < <(helper probes "$STATE/rendered.yaml")
  helper check "$STATE/rendered.yaml" || failed=1
  ((failed == 0)) || die "check failed"
  log "every probe answers 200; every container runs as its manifest asks"
}

case "${1:-run}" in
  up) up ;;
  down) down ;;
  check) check ;;
  recon)
    [[ -f $STATE/env ]] || die "nothing played (scripts/kube-play.sh up)"
    cp "$STATE/play/reconciler.yaml" "$STATE/play/reconciler-run.yaml"
    helper args "$STATE/play/reconciler-run.yaml" "${@:2}"
    status=0
    run_pod "$STATE/play/reconciler-run.yaml" reconciler || status=$?
    cat "$STATE/logs/reconciler.log"
    exit "$status"
    ;;
  events)
    [[ -f $STATE/env ]] || die "nothing played (scripts/kube-play.sh up)"
    # shellcheck disable=SC1091
    source "$STATE/infra.env"
    exec "$JAVA" -cp "$ROOT/local-infra/target/classes:$(cat "$STATE/infra.classpath")" \
      com.payments.infra.TopicTail "${2:-payment-events}" "${@:3}" 2>/dev/null
    ;;
  walkthrough)
    [[ -f $STATE/env ]] || die "nothing played (scripts/kube-play.sh up)"
    # shellcheck disable=SC1091
    source "$STATE/env"
    STACK=scripts/kube-play.sh exec scripts/walkthrough.sh
    ;;
  run)
    up # (a failed up downs itself)
    trap down EXIT
    trap 'exit 0' INT TERM
    echo "Ctrl-C stops it." >&2
    # wait, not a foreground sleep: bash runs a trap only once its foreground command has ended
    while :; do
      sleep 3600 &
      wait $!
    done
    ;;
  *) die "unknown command $1 (up, down, check, recon, events, walkthrough)" ;;
esac
