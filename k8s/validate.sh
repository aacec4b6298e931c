#!/usr/bin/env bash
# Offline check of the Kubernetes manifests: renders the base and every overlay with `kubectl kustomize`, then
# validates each rendered object against the Kubernetes schemas (validate/validate.mjs, npm kubernetes-models) and
# checks the reconciler CronJob's retry policy against the docs (validate/reconciler-job.mjs) and the deployment
# policy (validate/policy.mjs: release images in every overlay but dev, only *-jvm images in prod-jvm; probes,
# resources, securityContext, management port and PDB of every Deployment; webhook egress; the migration Job's
# ConfigMaps in the first apply; payments-api's proxy settings behind the ingress; Kafka replication 3 with 2 in sync), after its tests (validate/policy.test.mjs) have fed it bad renders.
# Needs kubectl (with kustomize) and node/npm; no cluster. Run from anywhere: k8s/validate.sh
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
command -v kubectl >/dev/null || { echo "k8s/validate.sh: kubectl (with kustomize) is required" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

rendered=()
policy_args=()
cd "$here"
for dir in base overlays/*/; do
  dir="${dir%/}"
  name="${dir//\//-}"
  kubectl kustomize "$dir" >"$out/$name.yaml"
  echo "rendered $dir: $(grep -c '^kind:' "$out/$name.yaml") objects"
  rendered+=("$out/$name.yaml")
  case "$dir" in
    base | overlays/dev) policy_args+=("$out/$name.yaml") ;; # not a release: logical names, dev tags
    overlays/prod-jvm) policy_args+=(--jvm "$out/$name.yaml") ;; # a release of JVM images only (*-jvm tags)
    *) policy_args+=(--release "$out/$name.yaml") ;;
  esac
done

(cd "$here/validate" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
node "$here/validate/validate.mjs" "${rendered[@]}"
node "$here/validate/reconciler-job.mjs" "$here/../docs" "${rendered[@]}"
node --test "$here/validate/policy.test.mjs" >"$out/policy-test.log" 2>&1 || { cat "$out/policy-test.log"; exit 1; }
echo "policy tests: $(grep -c '^ok ' "$out/policy-test.log") bad and good renders judged as expected"
node "$here/validate/policy.mjs" "${policy_args[@]}"
