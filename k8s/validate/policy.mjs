// Policy checks on rendered manifests, beyond the schemas of validate.mjs:
// - release renders (every overlay but dev): each container image has a tag or a digest, and no tag is `latest` or a
//   SNAPSHOT;
// - every Deployment: each container has startup, liveness and readiness probes, CPU and memory requests and a memory
//   limit, a hardened securityContext (and the pod runAsNonRoot); a container with a port named `management` is
//   probed and scraped there, not on its serving port;
// - a JVM image (tag ending in -jvm) has a memory limit of at least JVM_MIN_MEMORY_LIMIT (the base's 256Mi is sized
//   for native executables; docs/deployment.md, "Memory");
// - every Deployment has one PodDisruptionBudget that lets a node drain evict a pod at the HPA minimum (or the
//   replica count) yet keeps one running when there are two or more;
// - every CloudNativePG Cluster refuses connections without TLS: its pg_hba has a catch-all `hostnossl ... reject`
//   (CNPG closes the file with `host all all all scram-sha-256`, which accepts them too) and no `host`/`hostnossl`
//   rule that accepts, nor any `trust` rule.
// - the pods of webhook-delivery (label payments/webhook-sender=true) can never reach a private address on 443 or on
//   every port: each egress rule of a NetworkPolicy selecting them that opens 443 (or all ports) names only ipBlocks
//   whose `except` covers every range of PRIVATE_RANGES of their family, IPv4 and IPv6 (docs/deployment.md);
// - every ipBlock's `except` entries are what the API server accepts: strict subsets of its cidr (an IPv4-mapped
//   IPv6 range counts as IPv4 there, so `::/0` cannot except `::ffff:0:0/96`);
// - every Job is labelled app.kubernetes.io/component=migration, and every ConfigMap of the render that it reads
//   carries app.kubernetes.io/component config or migration: the deployment's first apply selects exactly those
//   (docs/deployment.md, step 6), and a ConfigMap it leaves out is missing when the Job starts;
// - payments-api, behind the ingress, limits failed authentications per forwarded client address: its container sets
//   QUARKUS_HTTP_PROXY_PROXY_ADDRESS_FORWARDING and _ALLOW_X_FORWARDED (or _ALLOW_FORWARDED) to true and
//   QUARKUS_HTTP_PROXY_TRUSTED_PROXIES (a value or a key of a ConfigMap in the render) to addresses or CIDRs that all lie
//   in private ranges (without it Quarkus trusts every peer's forwarding headers; docs/deployment.md);
// - Kafka (strimzi-cnpg): every KafkaTopic has 3 or more replicas and min.insync.replicas of at least 2 and below its
//   replicas, and the Kafka cluster's defaults are the same, with no unclean leader election: the settings that
//   scripts/fault-broker-loss.sh tests (a broker killed under acks=all loses nothing and the topics stay writable);
// - JVM renders (prod-jvm): every image is tagged `*-jvm` (a registry or image renamed in prod that prod-jvm did not
//   follow would deploy native images with a JVM's memory).
// Usage: node policy.mjs [--release FILE]... [--jvm FILE]... [FILE]... (each FILE the output of `kubectl kustomize`;
// --jvm is a release render of JVM images). Exits 1 with the reasons. Tested by policy.test.mjs, which feeds it bad
// renders.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const WORKLOAD_KINDS = new Set(["Deployment", "Job", "CronJob", "StatefulSet", "DaemonSet"]);
const PROBES = ["startupProbe", "livenessProbe", "readinessProbe"];
const JVM_MIN_MEMORY_LIMIT = 512 * 1024 * 1024;

/** Bytes of a Kubernetes quantity such as 256Mi, 1Gi, 512M or 1e9 (NaN when unreadable). */
export function bytes(quantity) {
  const m = /^([0-9.e+]+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(quantity ?? ""));
  if (!m) return NaN;
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2]] ?? 1;
  return Number(m[1]) * unit;
}

/** JVM images whose memory limit is below what a JVM needs, in every workload. */
export function memoryProblems(objects) {
  const found = [];
  for (const object of objects.filter((o) => WORKLOAD_KINDS.has(o.kind))) {
    for (const container of allContainers(podSpec(object))) {
      if (!/-jvm$/.test(imageTag(container.image) ?? "")) continue;
      const limit = container.resources?.limits?.memory;
      if (!(bytes(limit) >= JVM_MIN_MEMORY_LIMIT)) {
        found.push(`${object.kind}/${object.metadata?.name}: JVM image ${container.image} with a memory limit of ${limit}, below 512Mi`);
      }
    }
  }
  return found;
}

/** The pod spec of a workload object (CronJob: its Job's template). */
function podSpec(object) {
  if (object.kind === "CronJob") return object.spec?.jobTemplate?.spec?.template?.spec ?? {};
  return object.spec?.template?.spec ?? {};
}

function allContainers(pod) {
  return [...(pod.initContainers ?? []), ...(pod.containers ?? [])];
}

/** The tag of an image reference, `@sha256:…` after it ignored (null when it has none). */
export function imageTag(image) {
  const name = String(image ?? "").split("@")[0];
  const colon = name.lastIndexOf(":");
  return colon > name.lastIndexOf("/") ? name.slice(colon + 1) : null;
}

/** Images of a JVM render (prod-jvm) that are not tagged `*-jvm`: native executables sized for a JVM, or worse. */
export function jvmImageProblems(objects) {
  const found = [];
  for (const object of objects.filter((o) => WORKLOAD_KINDS.has(o.kind))) {
    for (const container of allContainers(podSpec(object))) {
      if (!/-jvm$/.test(imageTag(container.image) ?? "")) {
        found.push(`${object.kind}/${object.metadata?.name}: image ${container.image} in a JVM render is not tagged *-jvm (a name prod-jvm's images: did not follow?)`);
      }
    }
  }
  return found;
}

/** What is wrong with one image reference in a release render (null when it is fine). */
export function imageProblem(image) {
  if (typeof image !== "string" || image.length === 0) return "no image";
  const at = image.indexOf("@");
  if (at >= 0) {
    return /^sha256:[0-9a-f]{64}$/.test(image.slice(at + 1)) ? null : `malformed digest in ${image}`;
  }
  const lastSlash = image.lastIndexOf("/");
  const colon = image.lastIndexOf(":");
  if (colon <= lastSlash) return `image ${image} has neither a tag nor a digest`;
  const tag = image.slice(colon + 1);
  if (tag === "latest") return `image ${image} uses the tag latest`;
  if (/snapshot/i.test(tag)) return `image ${image} is a SNAPSHOT`;
  return null;
}

/** Image problems of every workload in a release render. */
export function imageProblems(objects) {
  const found = [];
  for (const object of objects.filter((o) => WORKLOAD_KINDS.has(o.kind))) {
    for (const container of allContainers(podSpec(object))) {
      const problem = imageProblem(container.image);
      if (problem) found.push(`${object.kind}/${object.metadata?.name}: ${problem}`);
    }
  }
  return found;
}

function probePort(probe) {
  return probe?.httpGet?.port ?? probe?.tcpSocket?.port ?? probe?.grpc?.port;
}

/** Probes, resources, securityContext and management port of one Deployment. */
export function deploymentProblems(deployment) {
  const found = [];
  const pod = podSpec(deployment);
  if (pod.securityContext?.runAsNonRoot !== true) found.push("pod securityContext.runAsNonRoot is not true");
  const annotations = deployment.spec?.template?.metadata?.annotations ?? {};
  for (const c of pod.containers ?? []) {
    const where = `container ${c.name}`;
    for (const probe of PROBES) {
      if (!c[probe]) found.push(`${where}: no ${probe}`);
    }
    if (!c.resources?.requests?.cpu) found.push(`${where}: no CPU request`);
    if (!c.resources?.requests?.memory) found.push(`${where}: no memory request`);
    if (!c.resources?.limits?.memory) found.push(`${where}: no memory limit`);
    const sc = c.securityContext ?? {};
    if (sc.allowPrivilegeEscalation !== false) found.push(`${where}: allowPrivilegeEscalation is not false`);
    if (sc.readOnlyRootFilesystem !== true) found.push(`${where}: readOnlyRootFilesystem is not true`);
    if (!(sc.capabilities?.drop ?? []).includes("ALL")) found.push(`${where}: capabilities do not drop ALL`);
    const management = (c.ports ?? []).find((p) => p.name === "management");
    if (management) {
      for (const probe of PROBES.filter((p) => c[p])) {
        const port = probePort(c[probe]);
        if (port !== "management" && port !== management.containerPort) {
          found.push(`${where}: ${probe} is on port ${port}, not on the management port`);
        }
      }
      if (annotations["prometheus.io/scrape"] === "true" && Number(annotations["prometheus.io/port"]) !== management.containerPort) {
        found.push(`${where}: prometheus.io/port is ${annotations["prometheus.io/port"]}, not the management port`);
      }
    }
  }
  return found;
}

function matches(selector, labels) {
  const wanted = selector?.matchLabels ?? {};
  return Object.keys(wanted).length > 0 && Object.entries(wanted).every(([k, v]) => labels[k] === v);
}

/** Pods a PDB value stands for out of `replicas` ("50%" rounds up for minAvailable, down for maxUnavailable). */
function pods(value, replicas, roundUp) {
  if (typeof value === "string" && value.endsWith("%")) {
    const exact = (Number(value.slice(0, -1)) * replicas) / 100;
    return roundUp ? Math.ceil(exact) : Math.floor(exact);
  }
  return Number(value);
}

/** The PDB of each Deployment, against its HPA minimum (or replicas): one eviction allowed, one pod kept from 2. */
export function disruptionProblems(objects) {
  const found = [];
  const pdbs = objects.filter((o) => o.kind === "PodDisruptionBudget");
  const hpas = objects.filter((o) => o.kind === "HorizontalPodAutoscaler");
  for (const deployment of objects.filter((o) => o.kind === "Deployment")) {
    const name = `Deployment/${deployment.metadata?.name}`;
    const labels = deployment.spec?.template?.metadata?.labels ?? {};
    const mine = pdbs.filter((p) => p.metadata?.namespace === deployment.metadata?.namespace && matches(p.spec?.selector, labels));
    if (mine.length !== 1) {
      found.push(`${name}: ${mine.length} PodDisruptionBudgets select its pods, expected 1`);
      continue;
    }
    const hpa = hpas.find(
      (h) => h.spec?.scaleTargetRef?.kind === "Deployment" && h.spec?.scaleTargetRef?.name === deployment.metadata?.name
        && h.metadata?.namespace === deployment.metadata?.namespace,
    );
    const replicas = hpa ? (hpa.spec?.minReplicas ?? 1) : (deployment.spec?.replicas ?? 1);
    const spec = mine[0].spec ?? {};
    const available = spec.minAvailable !== undefined
      ? pods(spec.minAvailable, replicas, true)
      : replicas - pods(spec.maxUnavailable ?? 1, replicas, false);
    const source = hpa ? `HPA minReplicas ${replicas}` : `replicas ${replicas}`;
    if (available >= replicas) {
      found.push(`${name}: its PDB keeps ${available} of ${source} available, so a node drain can never evict one`);
    } else if (replicas >= 2 && available < 1) {
      found.push(`${name}: its PDB lets every one of ${source} be evicted at once`);
    }
  }
  return found;
}

const IPV4_MASK = /^\d+\.\d+\.\d+\.\d+$/;

/** The fields of one pg_hba line: type, database, user, address and method (local lines have no address). */
function hbaRule(line) {
  const fields = String(line).trim().split(/\s+/);
  const type = fields[0];
  if (type === "local") return { type, database: fields[1], user: fields[2], address: null, method: fields[3] };
  // an IPv4 address may be followed by its mask as a separate field
  const method = IPV4_MASK.test(fields[4] ?? "") && IPV4_MASK.test(fields[3] ?? "") ? fields[5] : fields[4];
  return { type, database: fields[1], user: fields[2], address: fields[3], method };
}

/** CloudNativePG Clusters (postgresql.cnpg.io) that would accept a connection without TLS. */
export function postgresTlsProblems(objects) {
  const found = [];
  const clusters = objects.filter((o) => o.kind === "Cluster" && String(o.apiVersion).startsWith("postgresql.cnpg.io/"));
  for (const cluster of clusters) {
    const name = `Cluster/${cluster.metadata?.name}`;
    const lines = cluster.spec?.postgresql?.pg_hba ?? [];
    const rules = lines.map(hbaRule);
    const catchAll = rules.some((r) => (r.type === "hostnossl" || r.type === "host") && r.database === "all"
      && r.user === "all" && r.address === "all" && r.method === "reject");
    if (!catchAll) {
      found.push(`${name}: no "hostnossl all all all reject" in spec.postgresql.pg_hba, so CNPG's closing "host all all all" rule accepts connections without TLS`);
    }
    rules.forEach((r, i) => {
      if ((r.type === "host" || r.type === "hostnossl") && r.method !== "reject") {
        found.push(`${name}: pg_hba rule "${lines[i]}" accepts connections without TLS (only hostssl rules may accept)`);
      } else if (r.method === "trust") {
        found.push(`${name}: pg_hba rule "${lines[i]}" trusts without a password`);
      }
    });
  }
  return found;
}

/**
 * Keys of a ConfigMap a container reads with envFrom that the container also sets in env: env wins, so the
 * ConfigMap's value never applies (an overlay that put a setting into the wrong ConfigMap).
 */
export function shadowedEnvProblems(objects) {
  const found = [];
  const configMaps = new Map(objects.filter((o) => o.kind === "ConfigMap").map((o) => [o.metadata?.name, o]));
  for (const object of objects.filter((o) => WORKLOAD_KINDS.has(o.kind))) {
    for (const c of allContainers(podSpec(object))) {
      const explicit = new Set((c.env ?? []).map((e) => e.name));
      for (const source of c.envFrom ?? []) {
        const map = configMaps.get(source.configMapRef?.name);
        const prefix = source.prefix ?? "";
        for (const key of Object.keys(map?.data ?? {})) {
          if (explicit.has(prefix + key)) {
            found.push(`${object.kind}/${object.metadata?.name} container ${c.name}: ${prefix + key} from ConfigMap ${map.metadata.name} (envFrom) never applies, the container's env sets it too`);
          }
        }
      }
    }
  }
  return found;
}

/**
 * Ranges a webhook may never be sent to, beside the service's own check (contracts WebhookUrlPolicy): private,
 * shared (CGNAT), link-local (cloud metadata), loopback, unspecified, reserved and multicast IPv4; IPv6 loopback,
 * IPv4-compatible, unique-local, site-local, link-local, multicast, NAT64, IPv4-mapped, 6to4, Teredo and discard-only.
 */
export const PRIVATE_RANGES = [
  "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10", "127.0.0.0/8", "0.0.0.0/8",
  "192.0.0.0/24", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
  "::1/128", "::/96", "fc00::/7", "fec0::/10", "fe80::/10", "ff00::/8", "64:ff9b::/96", "::ffff:0:0/96", "2002::/16",
  "2001::/32", "100::/64",
];

/** An IPv4 address as a number (null when it is not one). */
function ipv4Value(text) {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (!m || m.slice(1).some((o) => Number(o) > 255)) return null;
  return m.slice(1).reduce((a, o) => a * 256n + BigInt(o), 0n);
}

/** An IPv6 address (`::` shortening and a dotted IPv4 tail allowed) as a number (null when it is not one). */
function ipv6Value(text) {
  let address = text;
  if (address.includes(".")) {
    const colon = address.lastIndexOf(":");
    const v4 = ipv4Value(address.slice(colon + 1));
    if (v4 === null) return null;
    address = `${address.slice(0, colon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const groups = halves.map((h) => (h === "" ? [] : h.split(":")));
  const count = groups.reduce((n, g) => n + g.length, 0);
  if (halves.length === 2 ? count > 7 : count !== 8) return null;
  const all = halves.length === 2 ? [...groups[0], ...Array(8 - count).fill("0"), ...groups[1]] : groups[0];
  if (!all.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return null;
  return all.reduce((a, g) => a * 65536n + BigInt(parseInt(g, 16)), 0n);
}

const MAPPED = [0xffffn << 32n, (0xffffn << 32n) + 0xffffffffn]; // ::ffff:0:0/96

/**
 * An IPv4 or IPv6 CIDR as { family, prefix, first, last } (null when it is neither); `mapped` when an IPv6 range
 * lies in ::ffff:0:0/96, which the API server's subset check treats as IPv4.
 */
export function ipRange(cidr) {
  const m = /^([^/]+)\/(\d+)$/.exec(String(cidr));
  if (!m) return null;
  const v4 = ipv4Value(m[1]);
  const family = v4 !== null ? 4 : 6;
  const address = v4 ?? ipv6Value(m[1]);
  const bits = family === 4 ? 32 : 128;
  const prefix = Number(m[2]);
  if (address === null || prefix > bits) return null;
  const size = 1n << BigInt(bits - prefix);
  const first = address - (address % size);
  const last = first + size - 1n;
  return { family, prefix, first, last, mapped: family === 6 && first >= MAPPED[0] && last <= MAPPED[1] };
}

/** Does this egress rule open TCP 443 (a rule without ports opens every port)? */
function opens443(rule) {
  const ports = rule.ports ?? [];
  return ports.length === 0 || ports.some((p) => (p.protocol ?? "TCP") === "TCP" && (p.port === undefined || p.port === 443
    || p.port === "https" || (typeof p.port === "number" && p.port <= 443 && (p.endPort ?? p.port) >= 443)));
}

/** Private ranges that one `to` peer lets through (every range for a peer that is not an ipBlock). */
function leakedRanges(peer) {
  const block = peer.ipBlock;
  const whole = block ? ipRange(block.cidr) : null;
  if (!whole) return block ? [`${block.cidr} (not an IP block)`] : ["pods or namespaces of the cluster"];
  const excepted = (block.except ?? []).map(ipRange).filter((r) => r && r.family === whole.family);
  return PRIVATE_RANGES.filter((range) => {
    const { family, first, last } = ipRange(range);
    const overlaps = family === whole.family && first <= whole.last && last >= whole.first;
    return overlaps && !excepted.some((e) => e.first <= first && e.last >= last);
  });
}

/**
 * ipBlock `except` entries the API server refuses: each must be a strict subset of the cidr (longer prefix, inside
 * it), where an IPv4-mapped IPv6 range counts as IPv4 (Go's net.IPNet.Contains), so no IPv6 cidr contains one.
 */
export function ipBlockProblems(objects) {
  const found = [];
  for (const policy of objects.filter((o) => o.kind === "NetworkPolicy")) {
    const rules = [...(policy.spec?.egress ?? []).map((r) => r.to), ...(policy.spec?.ingress ?? []).map((r) => r.from)];
    for (const block of rules.flatMap((peers) => peers ?? []).map((p) => p.ipBlock).filter(Boolean)) {
      const whole = ipRange(block.cidr);
      if (!whole) {
        found.push(`NetworkPolicy/${policy.metadata?.name}: ipBlock cidr ${block.cidr} is not an IPv4 or IPv6 CIDR`);
        continue;
      }
      for (const except of block.except ?? []) {
        const part = ipRange(except);
        const family = part?.mapped ? 4 : part?.family;
        if (!part || family !== whole.family || part.prefix <= whole.prefix || part.first < whole.first || part.first > whole.last) {
          found.push(`NetworkPolicy/${policy.metadata?.name}: except ${except} of ipBlock ${block.cidr} is not a strict subset of the cidr (the API server refuses it)`);
        }
      }
    }
  }
  return found;
}

/** Egress of the webhook senders (pods labelled payments/webhook-sender=true) that reaches a private range on 443. */
export function webhookEgressProblems(objects) {
  const found = [];
  const policies = objects.filter((o) => o.kind === "NetworkPolicy" && (o.spec?.policyTypes ?? []).includes("Egress"));
  for (const deployment of objects.filter((o) => o.kind === "Deployment")) {
    const labels = deployment.spec?.template?.metadata?.labels ?? {};
    if (labels["payments/webhook-sender"] !== "true") continue;
    for (const policy of policies) {
      const selector = policy.spec?.podSelector ?? {};
      // an empty selector selects every pod; matchExpressions are not evaluated: such a policy counts as selecting
      const selects = Object.keys(selector.matchLabels ?? {}).length === 0 || matches(selector, labels);
      if (!selects || policy.metadata?.namespace !== deployment.metadata?.namespace) continue;
      for (const rule of (policy.spec?.egress ?? []).filter(opens443)) {
        const peers = rule.to ?? [];
        const leaks = peers.length === 0 ? ["every address"] : peers.flatMap(leakedRanges);
        if (leaks.length > 0) {
          found.push(`Deployment/${deployment.metadata?.name}: NetworkPolicy/${policy.metadata?.name} lets the webhook sender reach ${leaks.join(", ")} on port 443`);
        }
      }
    }
  }
  return found;
}

const COMPONENT = "app.kubernetes.io/component";

/** The values of app.kubernetes.io/component that the deployment's first apply selects (docs/deployment.md, step 6). */
export const FIRST_APPLY_COMPONENTS = ["config", "migration"];

/** Names of the ConfigMaps a pod reads: env, envFrom, volumes (projected ones included). */
function configMapsReadBy(pod) {
  const names = new Set();
  for (const c of allContainers(pod)) {
    for (const e of c.env ?? []) if (e.valueFrom?.configMapKeyRef?.name) names.add(e.valueFrom.configMapKeyRef.name);
    for (const e of c.envFrom ?? []) if (e.configMapRef?.name) names.add(e.configMapRef.name);
  }
  for (const v of pod.volumes ?? []) {
    if (v.configMap?.name) names.add(v.configMap.name);
    for (const source of v.projected?.sources ?? []) if (source.configMap?.name) names.add(source.configMap.name);
  }
  return names;
}

/**
 * The migration Job and its settings in the first apply: every Job carries component=migration, and every ConfigMap
 * of the render that it reads carries a component the first apply selects. A ConfigMap the render does not hold (the
 * base's optional payments-db-tls) is not judged.
 */
export function migrationConfigProblems(objects) {
  const found = [];
  const configMaps = objects.filter((o) => o.kind === "ConfigMap");
  for (const job of objects.filter((o) => o.kind === "Job")) {
    const name = `Job/${job.metadata?.name}`;
    if (job.metadata?.labels?.[COMPONENT] !== "migration") {
      found.push(`${name}: not labelled ${COMPONENT}: migration, so the first apply (-l '${COMPONENT} in (${FIRST_APPLY_COMPONENTS.join(",")})') leaves it out`);
    }
    for (const read of configMapsReadBy(podSpec(job))) {
      const map = configMaps.find((m) => m.metadata?.name === read && (m.metadata?.namespace ?? "") === (job.metadata?.namespace ?? ""));
      if (map && !FIRST_APPLY_COMPONENTS.includes(map.metadata?.labels?.[COMPONENT])) {
        found.push(`${name}: reads ConfigMap ${read}, which is not labelled ${COMPONENT}: config, so the first apply leaves it out and the Job starts without it`);
      }
    }
  }
  return found;
}

/** The Deployments that take merchants' requests through the ingress. */
export const INGRESS_BACKENDS = ["payments-api"];

/** Where an ingress controller's pods can live: private IPv4 (RFC 1918), shared (RFC 6598) and unique-local IPv6. */
export const CLUSTER_RANGES = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"];

/** The value of env variable NAME of a container: literal, or from a ConfigMap key in the render (env, then envFrom). */
function envValue(container, name, configMaps, namespace) {
  const map = (ref) => configMaps.find((m) => m.metadata?.name === ref && (m.metadata?.namespace ?? "") === (namespace ?? ""));
  const entry = (container.env ?? []).find((e) => e.name === name);
  if (entry) {
    const ref = entry.valueFrom?.configMapKeyRef;
    return ref ? map(ref.name)?.data?.[ref.key] : entry.value;
  }
  for (const source of container.envFrom ?? []) {
    const prefix = source.prefix ?? "";
    const value = name.startsWith(prefix) ? map(source.configMapRef?.name)?.data?.[name.slice(prefix.length)] : undefined;
    if (value !== undefined) return value;
  }
  return undefined;
}

/**
 * The proxy settings of the ingress backends (INGRESS_BACKENDS): forwarding on, X-Forwarded or Forwarded allowed, and
 * trusted proxies restricted to addresses in CLUSTER_RANGES. Without them every client behind the ingress shares the
 * ingress's address (one client's bad keys answer 429 to all); with forwarding but no trusted proxies any client picks
 * its own address.
 */
export function forwardedClientProblems(objects) {
  const found = [];
  const configMaps = objects.filter((o) => o.kind === "ConfigMap");
  const clusterRanges = CLUSTER_RANGES.map(ipRange);
  for (const deployment of objects.filter((o) => o.kind === "Deployment" && INGRESS_BACKENDS.includes(o.metadata?.name))) {
    for (const c of podSpec(deployment).containers ?? []) {
      const where = `Deployment/${deployment.metadata?.name} container ${c.name}`;
      const value = (name) => envValue(c, name, configMaps, deployment.metadata?.namespace);
      if (value("QUARKUS_HTTP_PROXY_PROXY_ADDRESS_FORWARDING") !== "true") {
        found.push(`${where}: QUARKUS_HTTP_PROXY_PROXY_ADDRESS_FORWARDING is not true, so every client behind the ingress counts as the ingress's address`);
      }
      if (value("QUARKUS_HTTP_PROXY_ALLOW_X_FORWARDED") !== "true" && value("QUARKUS_HTTP_PROXY_ALLOW_FORWARDED") !== "true") {
        found.push(`${where}: neither QUARKUS_HTTP_PROXY_ALLOW_X_FORWARDED nor QUARKUS_HTTP_PROXY_ALLOW_FORWARDED is true, so no forwarded address is read`);
      }
      const trusted = String(value("QUARKUS_HTTP_PROXY_TRUSTED_PROXIES") ?? "").split(",").map((t) => t.trim()).filter(Boolean);
      if (trusted.length === 0) {
        found.push(`${where}: no QUARKUS_HTTP_PROXY_TRUSTED_PROXIES (a value, or a ConfigMap key the render holds), so forwarding headers of every peer are trusted`);
      }
      for (const proxy of trusted) {
        const range = ipRange(proxy.includes("/") ? proxy : `${proxy}/${proxy.includes(":") ? 128 : 32}`);
        const inside = range && clusterRanges.some((r) => r.family === range.family && r.first <= range.first && r.last >= range.last);
        if (!inside) {
          found.push(`${where}: trusted proxy ${proxy} is not an address or CIDR within ${CLUSTER_RANGES.join(", ")}, so clients outside the cluster could choose their address`);
        }
      }
    }
  }
  return found;
}

/** KafkaTopics and Kafka clusters below the replication the broker-loss scenario tests (3 replicas, 2 in sync). */
export function kafkaReplicationProblems(objects) {
  const found = [];
  const check = (where, replicas, minIsr) => {
    if (!(Number(replicas) >= 3)) found.push(`${where}: replication ${replicas}, below 3`);
    if (!(Number(minIsr) >= 2 && Number(minIsr) < Number(replicas))) {
      found.push(`${where}: min.insync.replicas ${minIsr}, not at least 2 and below the replication ${replicas}`);
    }
  };
  for (const topic of objects.filter((o) => o.kind === "KafkaTopic")) {
    check(`KafkaTopic/${topic.metadata?.name}`, topic.spec?.replicas, topic.spec?.config?.["min.insync.replicas"]);
  }
  for (const kafka of objects.filter((o) => o.kind === "Kafka")) {
    const config = kafka.spec?.kafka?.config ?? {};
    const where = `Kafka/${kafka.metadata?.name}`;
    check(where, config["default.replication.factor"], config["min.insync.replicas"]);
    if (String(config["unclean.leader.election.enable"]) !== "false") {
      found.push(`${where}: unclean.leader.election.enable is not false`);
    }
  }
  return found;
}

/** Every problem of one render; `jvm`: a release render of JVM images (prod-jvm). */
export function problems(objects, release, jvm = false) {
  const found = [];
  if (release || jvm) found.push(...imageProblems(objects));
  if (jvm) found.push(...jvmImageProblems(objects));
  for (const deployment of objects.filter((o) => o.kind === "Deployment")) {
    found.push(...deploymentProblems(deployment).map((p) => `Deployment/${deployment.metadata?.name}: ${p}`));
  }
  found.push(...memoryProblems(objects));
  found.push(...disruptionProblems(objects));
  found.push(...postgresTlsProblems(objects));
  found.push(...shadowedEnvProblems(objects));
  found.push(...webhookEgressProblems(objects));
  found.push(...ipBlockProblems(objects));
  found.push(...migrationConfigProblems(objects));
  found.push(...forwardedClientProblems(objects));
  found.push(...kafkaReplicationProblems(objects));
  return found;
}

export function load(file) {
  return parseAllDocuments(readFileSync(file, "utf8"))
    .map((doc) => doc.toJS())
    .filter((o) => o != null);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const renders = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--release") renders.push([args[++i], true, false]);
    else if (args[i] === "--jvm") renders.push([args[++i], true, true]);
    else renders.push([args[i], false, false]);
  }
  let failures = 0;
  for (const [file, release, jvm] of renders) {
    for (const problem of problems(load(file), release, jvm)) {
      console.error(`${file}: ${problem}`);
      failures++;
    }
  }
  const releases = renders.filter(([, r]) => r).length;
  const jvms = renders.filter(([, , j]) => j).length;
  console.log(`policy checked in ${renders.length} renders (${releases} release renders, ${jvms} of JVM images): ${failures} problems`);
  process.exit(failures === 0 && renders.length > 0 ? 0 : 1);
}
