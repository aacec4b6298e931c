// Validates rendered Kubernetes manifests offline against the Kubernetes OpenAPI schemas of kubernetes-models.
// Usage: node validate.mjs FILE... (each a multi-document YAML, e.g. the output of `kubectl kustomize`).
// Kubernetes kinds must validate; custom resources of Strimzi, CloudNativePG and the Prometheus Operator (no schema
// package; k8s/monitoring/check.sh tests the rules) are checked only for apiVersion, kind, metadata.name and a spec;
// any other unknown kind fails.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const CUSTOM_RESOURCES = new Set([
  "kafka.strimzi.io/v1beta2/Kafka",
  "kafka.strimzi.io/v1beta2/KafkaNodePool",
  "kafka.strimzi.io/v1beta2/KafkaTopic",
  "kafka.strimzi.io/v1beta2/KafkaUser",
  "postgresql.cnpg.io/v1/Cluster",
  "monitoring.coreos.com/v1/ServiceMonitor",
  "monitoring.coreos.com/v1/PrometheusRule",
]);

async function modelFor(apiVersion, kind) {
  // "v1" is the core group (kubernetes-models/v1/...), "apps/v1" -> kubernetes-models/apps/v1/...
  try {
    const module = await import(`kubernetes-models/${apiVersion}/${kind}`);
    return module[kind];
  } catch {
    return undefined;
  }
}

let objects = 0;
let failures = 0;
let customOnly = 0;
for (const file of process.argv.slice(2)) {
  for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
    if (doc.errors.length > 0) {
      console.error(`${file}: YAML error: ${doc.errors[0].message}`);
      failures++;
      continue;
    }
    const object = doc.toJS();
    if (object == null) continue;
    objects++;
    const id = `${file}: ${object.kind}/${object.metadata?.name}`;
    const key = `${object.apiVersion}/${object.kind}`;
    if (CUSTOM_RESOURCES.has(key)) {
      customOnly++;
      if (!object.metadata?.name || typeof object.spec !== "object") {
        console.error(`${id}: custom resource without metadata.name or spec`);
        failures++;
      }
      continue;
    }
    const Model = await modelFor(object.apiVersion, object.kind);
    if (!Model) {
      console.error(`${id}: no schema for ${key}`);
      failures++;
      continue;
    }
    try {
      new Model(object).validate();
    } catch (error) {
      console.error(`${id}: ${error.message}`);
      failures++;
    }
  }
}
console.log(
  `validated ${objects} objects (${customOnly} custom resources checked for shape only): ${failures} invalid`,
);
process.exit(failures === 0 && objects > 0 ? 0 : 1);
