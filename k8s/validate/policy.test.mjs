// Each policy check of policy.mjs fed a bad render must fail, and the good render pass (`node --test`, run by
// ../validate.sh). The good render is a small copy of a base service: Deployment, HPA and PDB; the Deployment is a
// webhook sender, with the base's webhook-egress and allow-dns NetworkPolicies, and named payments-api, with its
// proxy settings (the trusted proxies from the ConfigMap); and a migration Job reading both ConfigMaps, as prod's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { problems } from "./policy.mjs";

function goodRender() {
  const probe = (path) => ({ httpGet: { path, port: "management" } });
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "payments-api", namespace: "payments" },
    spec: {
      selector: { matchLabels: { "app.kubernetes.io/name": "api" } },
      template: {
        metadata: {
          labels: { "app.kubernetes.io/name": "api", "payments/webhook-sender": "true" },
          annotations: { "prometheus.io/scrape": "true", "prometheus.io/port": "9000" },
        },
        spec: {
          securityContext: { runAsNonRoot: true },
          initContainers: [],
          containers: [
            {
              name: "api",
              image: "registry.example.invalid/payments/api:1.0.0",
              ports: [
                { name: "http", containerPort: 8080 },
                { name: "management", containerPort: 9000 },
              ],
              startupProbe: probe("/q/health/started"),
              livenessProbe: probe("/q/health/live"),
              readinessProbe: probe("/q/health/ready"),
              resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "256Mi" } },
              env: [
                { name: "PSP_URL", valueFrom: { configMapKeyRef: { name: "config", key: "PSP_URL" } } },
                { name: "QUARKUS_HTTP_PROXY_PROXY_ADDRESS_FORWARDING", value: "true" },
                { name: "QUARKUS_HTTP_PROXY_ALLOW_X_FORWARDED", value: "true" },
                { name: "QUARKUS_HTTP_PROXY_TRUSTED_PROXIES", valueFrom: { configMapKeyRef: { name: "config", key: "TRUSTED_PROXIES" } } },
              ],
              envFrom: [{ configMapRef: { name: "db-tls", optional: true } }],
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ["ALL"] },
              },
            },
          ],
        },
      },
    },
  };
  const hpa = {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: { name: "api", namespace: "payments" },
    spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "payments-api" }, minReplicas: 2, maxReplicas: 4 },
  };
  const pdb = {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name: "api", namespace: "payments" },
    spec: { maxUnavailable: 1, selector: { matchLabels: { "app.kubernetes.io/name": "api" } } },
  };
  // A CloudNativePG Cluster as the strimzi-cnpg overlay's: TLS only.
  const cluster = {
    apiVersion: "postgresql.cnpg.io/v1",
    kind: "Cluster",
    metadata: { name: "db", namespace: "payments-data" },
    spec: {
      instances: 2,
      postgresql: { pg_hba: ["hostnossl all all all reject", "hostssl all all all scram-sha-256"] },
    },
  };
  const configLabels = () => ({ "app.kubernetes.io/component": "config" });
  const config = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "config", namespace: "payments", labels: configLabels() },
    data: { PSP_URL: "https://psp", TRUSTED_PROXIES: "10.244.0.0/16, fd00:10:244::/56" },
  };
  const dbTls = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "db-tls", namespace: "payments", labels: configLabels() },
    data: { SSL_MODE: "verify-full" },
  };
  // the base's webhook-egress: public IPv4 and IPv6 global unicast
  const publicOnly = {
    cidr: "0.0.0.0/0",
    except: [
      "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10", "127.0.0.0/8", "0.0.0.0/8",
      "192.0.0.0/24", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
    ],
  };
  const publicV6 = { cidr: "2000::/3", except: ["2001::/32", "2002::/16"] };
  const webhookEgress = {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: "webhook-egress", namespace: "payments" },
    spec: {
      podSelector: { matchLabels: { "payments/webhook-sender": "true" } },
      policyTypes: ["Egress"],
      egress: [{ to: [{ ipBlock: publicOnly }, { ipBlock: publicV6 }], ports: [{ protocol: "TCP", port: 443 }] }],
    },
  };
  const dns = {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: "allow-dns", namespace: "payments" },
    spec: {
      podSelector: {},
      policyTypes: ["Egress"],
      egress: [{
        to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } } }],
        ports: [{ protocol: "UDP", port: 53 }, { protocol: "TCP", port: 53 }],
      }],
    },
  };
  const migration = {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: "migrate", namespace: "payments", labels: { "app.kubernetes.io/component": "migration" } },
    spec: {
      template: {
        spec: {
          restartPolicy: "Never",
          containers: [{
            name: "migrate",
            image: "registry.example.invalid/payments/api:1.0.0",
            env: [{ name: "JDBC_URL", valueFrom: { configMapKeyRef: { name: "config", key: "JDBC_URL" } } }],
            envFrom: [{ configMapRef: { name: "db-tls", optional: true } }],
            resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "256Mi" } },
          }],
        },
      },
    },
  };
  return [deployment, hpa, pdb, cluster, config, dbTls, webhookEgress, dns, migration];
}

/** Every container image of the render set to its `-jvm` tag with a JVM's memory limit: prod-jvm's shape. */
function jvmRender() {
  const render = goodRender();
  for (const c of [container(render), render[8].spec.template.spec.containers[0]]) {
    c.image = c.image.replace(/:1\.0\.0$/, ":1.0.0-jvm");
    c.resources.limits.memory = "768Mi";
  }
  return render;
}

const webhookRule = (render) => render[6].spec.egress[0];

/** A NetworkPolicy in the good render's namespace selecting its pods by `labels`, with one egress rule. */
const egressPolicy = (labels, rule) => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "NetworkPolicy",
  metadata: { name: "extra", namespace: "payments" },
  spec: { podSelector: { matchLabels: labels }, policyTypes: ["Egress"], egress: [rule] },
});

const hba = (render) => render[3].spec.postgresql.pg_hba;

const container = (render) => render[0].spec.template.spec.containers[0];

const env = (render, name) => container(render).env.find((e) => e.name === name);

/** Each bad render, the check it breaks, and a fragment of the problem it must report. */
const BAD = {
  "a SNAPSHOT image": [(r) => (container(r).image = "registry.example.invalid/payments/api:1.0.0-SNAPSHOT"), "SNAPSHOT"],
  "a latest image": [(r) => (container(r).image = "registry.example.invalid/payments/api:latest"), "latest"],
  "an image without tag or digest": [(r) => (container(r).image = "registry.example.invalid:5000/payments/api"), "neither a tag nor a digest"],
  "a malformed digest": [(r) => (container(r).image = "registry.example.invalid/payments/api@sha256:abc"), "malformed digest"],
  "an untagged init container": [
    (r) => r[0].spec.template.spec.initContainers.push({ name: "init", image: "busybox" }),
    "neither a tag nor a digest",
  ],
  "no readiness probe": [(r) => delete container(r).readinessProbe, "no readinessProbe"],
  "no liveness probe": [(r) => delete container(r).livenessProbe, "no livenessProbe"],
  "no startup probe": [(r) => delete container(r).startupProbe, "no startupProbe"],
  "a probe on the merchant port": [(r) => (container(r).livenessProbe.httpGet.port = "http"), "not on the management port"],
  "scraping the merchant port": [(r) => (r[0].spec.template.metadata.annotations["prometheus.io/port"] = "8080"), "prometheus.io/port"],
  "no resources": [(r) => delete container(r).resources, "no memory limit"],
  "no CPU request": [(r) => delete container(r).resources.requests.cpu, "no CPU request"],
  "no container securityContext": [(r) => delete container(r).securityContext, "allowPrivilegeEscalation"],
  "a writable root filesystem": [(r) => (container(r).securityContext.readOnlyRootFilesystem = false), "readOnlyRootFilesystem"],
  "capabilities kept": [(r) => (container(r).securityContext.capabilities.drop = []), "drop ALL"],
  "a root pod": [(r) => delete r[0].spec.template.spec.securityContext, "runAsNonRoot"],
  "a JVM image in a native-sized limit": [(r) => (container(r).image = "registry.example.invalid/payments/api:1.0.0-jvm"), "below 512Mi"],
  "no PDB": [(r) => r.splice(2, 1), "0 PodDisruptionBudgets"],
  "a PDB that blocks drains": [
    (r) => (r[2].spec = { minAvailable: 2, selector: r[2].spec.selector }),
    "can never evict",
  ],
  "dev's HPA minimum 1 with minAvailable 1": [
    (r) => {
      r[1].spec.minReplicas = 1;
      r[2].spec = { minAvailable: 1, selector: r[2].spec.selector };
    },
    "can never evict",
  ],
  "a PDB that allows evicting all": [(r) => (r[2].spec.maxUnavailable = "100%"), "every one"],
  "a PDB in another namespace": [(r) => (r[2].metadata.namespace = "other"), "0 PodDisruptionBudgets"],
  "a CNPG cluster with CNPG's default pg_hba": [(r) => delete r[3].spec.postgresql, "accepts connections without TLS"],
  "a CNPG cluster with a host rule": [(r) => hba(r).unshift("host all all 10.0.0.0/8 scram-sha-256"), "accepts connections without TLS"],
  "a CNPG cluster with an accepting hostnossl rule": [
    (r) => hba(r).unshift("hostnossl payments payments_app 10.0.0.0 255.0.0.0 md5"),
    "accepts connections without TLS",
  ],
  "a CNPG cluster whose reject covers one database only": [
    (r) => (hba(r)[0] = "hostnossl payments all all reject"),
    "no \"hostnossl all all all reject\"",
  ],
  "a setting in an envFrom ConfigMap that the container's env shadows": [
    (r) => (r[5].data.PSP_URL = "https://other-psp"),
    "PSP_URL from ConfigMap db-tls (envFrom) never applies",
  ],
"a webhook sender whose egress lets the metadata range through": [
    (r) => webhookRule(r).to[0].ipBlock.except.splice(3, 1),
    "reach 169.254.0.0/16 on port 443",
  ],
  "a webhook sender whose except covers only part of a private range": [
    (r) => (webhookRule(r).to[0].ipBlock.except[0] = "10.0.0.0/9"),
    "reach 10.0.0.0/8 on port 443",
  ],
  "a webhook sender with 443 open to every destination": [(r) => delete webhookRule(r).to, "reach every address"],
  "a webhook sender also labelled as a PSP client (443 anywhere)": [
    (r) => r.push(egressPolicy({ "payments/psp-client": "true" }, { ports: [{ protocol: "TCP", port: 443 }] })) &&
      (r[0].spec.template.metadata.labels["payments/psp-client"] = "true"),
    "NetworkPolicy/extra lets the webhook sender reach every address",
  ],
  "a webhook sender with every port open to the pod network": [
    (r) => r.push(egressPolicy({ "app.kubernetes.io/name": "api" }, { to: [{ ipBlock: { cidr: "10.0.0.0/8" } }] })),
    "reach 10.0.0.0/8 on port 443",
  ],
  "a webhook sender allowed to cluster pods on a port range with 443": [
    (r) => r.push(egressPolicy({ "app.kubernetes.io/name": "api" }, {
      to: [{ podSelector: {} }],
      ports: [{ protocol: "TCP", port: 400, endPort: 500 }],
    })),
    "pods or namespaces of the cluster",
  ],
  "a webhook sender with all of IPv6 on 443": [
    (r) => webhookRule(r).to.push({ ipBlock: { cidr: "::/0" } }),
    "reach ::1/128, ::/96, fc00::/7, fec0::/10, fe80::/10, ff00::/8, 64:ff9b::/96, ::ffff:0:0/96, 2002::/16, 2001::/32, 100::/64 on port 443",
  ],
  "a webhook sender whose IPv6 block lets 6to4 through": [
    (r) => webhookRule(r).to[1].ipBlock.except.pop(),
    "reach 2002::/16 on port 443",
  ],
  "a webhook sender with IPv6 unique-local addresses on 443": [
    (r) => webhookRule(r).to.push({ ipBlock: { cidr: "fd00::/8" } }),
    "reach fc00::/7 on port 443",
  ],
  "a webhook sender whose IPv4 except misses the benchmarking range": [
    (r) => (webhookRule(r).to[0].ipBlock.except = webhookRule(r).to[0].ipBlock.except.filter((c) => c !== "198.18.0.0/15")),
    "reach 198.18.0.0/15 on port 443",
  ],
  "a webhook sender with multicast on 443": [
    (r) => (webhookRule(r).to[0].ipBlock.except = webhookRule(r).to[0].ipBlock.except.filter((c) => c !== "224.0.0.0/4")),
    "reach 224.0.0.0/4 on port 443",
  ],
  "a webhook sender with an ipBlock that is not a CIDR": [
    (r) => (webhookRule(r).to[1].ipBlock.cidr = "2000::/200"),
    "2000::/200 (not an IP block)",
  ],
  "an except the API server refuses: IPv4-mapped in ::/0": [
    (r) => webhookRule(r).to.push({ ipBlock: { cidr: "::/0", except: ["::1/128", "::ffff:0:0/96"] } }),
    "except ::ffff:0:0/96 of ipBlock ::/0 is not a strict subset",
  ],
  "an except the API server refuses: outside the cidr": [
    (r) => (webhookRule(r).to[1].ipBlock.except[0] = "fc00::/7"),
    "except fc00::/7 of ipBlock 2000::/3 is not a strict subset",
  ],
  "a ConfigMap the migration Job reads without the first apply's label": [
    (r) => delete r[5].metadata.labels,
    "Job/migrate: reads ConfigMap db-tls, which is not labelled app.kubernetes.io/component: config",
  ],
  "a ConfigMap the migration Job reads as a volume, labelled for monitoring": [
    (r) => {
      r[4].metadata.labels["app.kubernetes.io/component"] = "monitoring";
      r[8].spec.template.spec.containers[0].env = [];
      r[8].spec.template.spec.volumes = [{ name: "c", projected: { sources: [{ configMap: { name: "config" } }] } }];
    },
    "reads ConfigMap config, which is not labelled",
  ],
  "a migration Job the first apply leaves out": [
    (r) => (r[8].metadata.labels = { "app.kubernetes.io/component": "job" }),
    "Job/migrate: not labelled app.kubernetes.io/component: migration",
  ],
  "a CNPG cluster with a trust rule": [(r) => hba(r).push("hostssl all all all trust"), "trusts without a password"],
  "payments-api without proxy address forwarding (every client counts as the ingress)": [
    (r) => (container(r).env = container(r).env.filter((e) => e.name !== "QUARKUS_HTTP_PROXY_PROXY_ADDRESS_FORWARDING")),
    "QUARKUS_HTTP_PROXY_PROXY_ADDRESS_FORWARDING is not true",
  ],
  "payments-api with forwarding off": [
    (r) => (env(r, "QUARKUS_HTTP_PROXY_PROXY_ADDRESS_FORWARDING").value = "false"),
    "QUARKUS_HTTP_PROXY_PROXY_ADDRESS_FORWARDING is not true",
  ],
  "payments-api reading neither X-Forwarded-For nor Forwarded": [
    (r) => (env(r, "QUARKUS_HTTP_PROXY_ALLOW_X_FORWARDED").value = "false"),
    "neither QUARKUS_HTTP_PROXY_ALLOW_X_FORWARDED nor QUARKUS_HTTP_PROXY_ALLOW_FORWARDED",
  ],
  "payments-api trusting every peer (no trusted proxies)": [
    (r) => (container(r).env = container(r).env.filter((e) => e.name !== "QUARKUS_HTTP_PROXY_TRUSTED_PROXIES")),
    "no QUARKUS_HTTP_PROXY_TRUSTED_PROXIES",
  ],
  "payments-api's trusted proxies from a ConfigMap key the render lacks": [
    (r) => delete r[4].data.TRUSTED_PROXIES,
    "no QUARKUS_HTTP_PROXY_TRUSTED_PROXIES",
  ],
  "payments-api's trusted proxies empty": [(r) => (r[4].data.TRUSTED_PROXIES = " "), "no QUARKUS_HTTP_PROXY_TRUSTED_PROXIES"],
  "payments-api trusting all of IPv4": [(r) => (r[4].data.TRUSTED_PROXIES = "0.0.0.0/0"), "trusted proxy 0.0.0.0/0 is not"],
  "payments-api trusting a public range beside the pod range": [
    (r) => (r[4].data.TRUSTED_PROXIES = "10.244.0.0/16,203.0.113.0/24"),
    "trusted proxy 203.0.113.0/24 is not",
  ],
  "payments-api trusting all of IPv6": [(r) => (r[4].data.TRUSTED_PROXIES = "10.244.0.0/16, ::/0"), "trusted proxy ::/0 is not"],
  "payments-api trusting a host name": [(r) => (r[4].data.TRUSTED_PROXIES = "ingress.example.invalid"), "trusted proxy ingress.example.invalid is not"],
};

test("the good render passes, as a release", () => {
  assert.deepEqual(problems(goodRender(), true), []);
});

test("a PDB percentage that keeps one of two passes", () => {
  const render = goodRender();
  render[2].spec.maxUnavailable = "50%";
  assert.deepEqual(problems(render, true), []);
});

for (const [name, [mutate, expected]] of Object.entries(BAD)) {
  test(`refused: ${name}`, () => {
    const render = goodRender();
    mutate(render);
    const found = problems(render, true);
    assert.ok(found.some((p) => p.includes(expected)), `expected a problem with "${expected}", got ${JSON.stringify(found)}`);
  });
}

test("payments-api's proxy settings pass as literals, from envFrom, with Forwarded instead of X-Forwarded-For, and with single addresses", () => {
  const render = goodRender();
  env(render, "QUARKUS_HTTP_PROXY_TRUSTED_PROXIES").value = "10.1.2.3, 172.16.0.0/12, fd00::1";
  delete env(render, "QUARKUS_HTTP_PROXY_TRUSTED_PROXIES").valueFrom;
  assert.deepEqual(problems(render, true), []);
  container(render).env = container(render).env.filter((e) => !e.name.startsWith("QUARKUS_HTTP_PROXY_"));
  render[5].data = { ...render[5].data, QUARKUS_HTTP_PROXY_PROXY_ADDRESS_FORWARDING: "true",
    QUARKUS_HTTP_PROXY_ALLOW_FORWARDED: "true", QUARKUS_HTTP_PROXY_TRUSTED_PROXIES: "192.168.0.0/16" };
  assert.deepEqual(problems(render, true), []);
});

test("only payments-api is held to the proxy settings", () => {
  const render = goodRender();
  render[0].metadata.name = "outbox-relay";
  render[1].spec.scaleTargetRef.name = "outbox-relay";
  container(render).env = container(render).env.filter((e) => !e.name.startsWith("QUARKUS_HTTP_PROXY_"));
  assert.deepEqual(problems(render, true), []);
});

test("a ConfigMap the migration Job reads that the render does not hold is not judged (the base's optional db-tls)", () => {
  const render = goodRender();
  render.splice(5, 1);
  assert.deepEqual(problems(render, true), []);
});

test("a ConfigMap of the same name in another namespace does not stand for the Job's", () => {
  const render = goodRender();
  const elsewhere = structuredClone(render[5]);
  elsewhere.metadata.namespace = "other";
  delete elsewhere.metadata.labels;
  render.push(elsewhere);
  assert.deepEqual(problems(render, true), []);
});

test("a JVM render (prod-jvm) with every image tagged -jvm passes, a digest after the tag too", () => {
  const render = jvmRender();
  assert.deepEqual(problems(render, true, true), []);
  container(render).image += `@sha256:${"a".repeat(64)}`;
  assert.deepEqual(problems(render, true, true), []);
});

for (const [name, mutate] of Object.entries({
  "a native image": (r) => (container(r).image = "registry.example.invalid/payments/api:1.0.0"),
  "an image renamed in prod that prod-jvm did not follow (its tag never applied)": (r) =>
    (r[8].spec.template.spec.containers[0].image = "registry.other.invalid/payments/api:1.0.0"),
  "a digest without the -jvm tag": (r) => (container(r).image = `registry.example.invalid/payments/api@sha256:${"a".repeat(64)}`),
})) {
  test(`refused in a JVM render: ${name}`, () => {
    const render = jvmRender();
    mutate(render);
    const found = problems(render, true, true);
    assert.ok(found.some((p) => p.includes("in a JVM render is not tagged *-jvm")), `got ${JSON.stringify(found)}`);
    assert.deepEqual(problems(render, true, false).filter((p) => p.includes("-jvm")), [], "only JVM renders are held to it");
  });
}

test("egress of other pods and other ports does not concern the webhook check", () => {
  const render = goodRender();
  render.push(egressPolicy({ "payments/postgres-client": "true" }, { ports: [{ protocol: "TCP", port: 5432 }] }));
  render.push(egressPolicy({ "app.kubernetes.io/name": "api" }, { ports: [{ protocol: "TCP", port: 9092 }] }));
  const elsewhere = egressPolicy({}, { ports: [{ protocol: "TCP", port: 443 }] });
  elsewhere.metadata.namespace = "other";
  render.push(elsewhere);
  assert.deepEqual(problems(render, true), []);
});

test("a JVM image with a JVM-sized limit passes", () => {
  const render = goodRender();
  container(render).image = "registry.example.invalid/payments/api:1.0.0-jvm";
  container(render).resources.limits.memory = "768Mi";
  assert.deepEqual(problems(render, true), []);
});

test("dev renders may use non-release tags, releases may not", () => {
  const render = goodRender();
  container(render).image = "registry.example.invalid/payments/api:1.0.0-SNAPSHOT";
  assert.deepEqual(problems(render, false), []);
  assert.equal(problems(render, true).length, 1);
});

test("the command exits 1 on a bad render file and 0 on a good one", () => {
  const dir = mkdtempSync(join(tmpdir(), "policy-"));
  const write = (name, render) => {
    const file = join(dir, name);
    writeFileSync(file, render.map((o) => stringify(o)).join("---\n"));
    return file;
  };
  const script = new URL("./policy.mjs", import.meta.url).pathname;
  const good = write("good.yaml", goodRender());
  execFileSync("node", [script, "--release", good], { stdio: "pipe" });
  const badRender = goodRender();
  container(badRender).image = "registry.example.invalid/payments/api:latest";
  const bad = write("bad.yaml", badRender);
  assert.throws(() => execFileSync("node", [script, "--release", bad], { stdio: "pipe" }), (e) => e.status === 1);
  // --jvm: the good (native) render is refused as a JVM render, the JVM one passes
  assert.throws(() => execFileSync("node", [script, "--jvm", good], { stdio: "pipe" }), (e) => e.status === 1);
  execFileSync("node", [script, "--jvm", write("jvm.yaml", jvmRender())], { stdio: "pipe" });
});

function kafkaRender() {
  return [
    {
      apiVersion: "kafka.strimzi.io/v1beta2",
      kind: "Kafka",
      metadata: { name: "payments-kafka" },
      spec: {
        kafka: {
          config: { "default.replication.factor": 3, "min.insync.replicas": 2, "unclean.leader.election.enable": false },
        },
      },
    },
    {
      apiVersion: "kafka.strimzi.io/v1beta2",
      kind: "KafkaTopic",
      metadata: { name: "payment-events" },
      spec: { partitions: 24, replicas: 3, config: { "min.insync.replicas": 2 } },
    },
  ];
}

test("Kafka with replication 3 and min.insync.replicas 2 passes", () => {
  assert.deepEqual(problems(kafkaRender(), true), []);
});

for (const [name, [spoil, expected]] of Object.entries({
  "a KafkaTopic with 1 replica": [(r) => (r[1].spec.replicas = 1), "KafkaTopic/payment-events: replication 1, below 3"],
  "a KafkaTopic with min.insync.replicas 1": [(r) => (r[1].spec.config["min.insync.replicas"] = 1), "min.insync.replicas 1"],
  "a KafkaTopic without min.insync.replicas": [(r) => delete r[1].spec.config, "min.insync.replicas undefined"],
  "a KafkaTopic that a broker loss stops (min.insync.replicas = replicas)": [
    (r) => (r[1].spec.config["min.insync.replicas"] = 3),
    "min.insync.replicas 3, not at least 2 and below the replication 3",
  ],
  "a Kafka cluster with default replication 1": [
    (r) => (r[0].spec.kafka.config["default.replication.factor"] = 1),
    "Kafka/payments-kafka: replication 1, below 3",
  ],
  "a Kafka cluster with unclean leader election": [
    (r) => (r[0].spec.kafka.config["unclean.leader.election.enable"] = true),
    "unclean.leader.election.enable is not false",
  ],
})) {
  test(`kafka: ${name} fails`, () => {
    const render = kafkaRender();
    spoil(render);
    const found = problems(render, true);
    assert.ok(found.some((p) => p.includes(expected)), `expected "${expected}" in ${JSON.stringify(found)}`);
  });
}
