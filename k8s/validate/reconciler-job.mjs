// Checks the reconciler CronJob in rendered manifests: exit code 2 (breaks reported) and 3 (date locked) fail the Job
// at once instead of being retried, and backoffLimit is the value that docs/reconciler.md and docs/deployment.md state.
// A retry of exit 2 would be a second run minutes later: useless (the breaks are still there) and noisy.
// Usage: node reconciler-job.mjs DOCS_DIR FILE... (each FILE the output of `kubectl kustomize`). Exits 1 with the
// reasons when a render (or the docs) is wrong. Before the renders it checks itself: each broken variant of the first
// CronJob found must be refused, so the check cannot silently pass everything.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const CONTAINER = "reconciler";
const NO_RETRY_EXIT_CODES = [2, 3];

/** The one backoffLimit both docs state (every `backoffLimit: N` they contain). */
function documentedBackoffLimit(docsDir) {
  const values = new Set();
  for (const doc of ["reconciler.md", "deployment.md"]) {
    const found = [...readFileSync(`${docsDir}/${doc}`, "utf8").matchAll(/backoffLimit: (\d+)/g)];
    if (found.length === 0) throw new Error(`docs/${doc} does not state the reconciler's backoffLimit`);
    found.forEach((m) => values.add(Number(m[1])));
  }
  if (values.size !== 1) throw new Error(`docs state different backoffLimit values: ${[...values].join(", ")}`);
  return [...values][0];
}

/** The first podFailurePolicy rule that matches a failure of the reconciler container with this exit code. */
function ruleFor(rules, code) {
  return rules.find((rule) => {
    const on = rule.onExitCodes;
    if (!on || (on.containerName && on.containerName !== CONTAINER)) return false;
    const listed = (on.values ?? []).includes(code);
    return on.operator === "In" ? listed : on.operator === "NotIn" && !listed;
  });
}

/** What is wrong with one reconciler CronJob (empty when it is right). */
export function problems(cronJob, backoffLimit) {
  const found = [];
  const job = cronJob.spec?.jobTemplate?.spec ?? {};
  const pod = job.template?.spec ?? {};
  if (cronJob.spec?.concurrencyPolicy !== "Forbid") found.push("concurrencyPolicy is not Forbid");
  if (job.backoffLimit !== backoffLimit) {
    found.push(`backoffLimit is ${job.backoffLimit}, the docs say ${backoffLimit}`);
  }
  if (pod.restartPolicy !== "Never") found.push("restartPolicy is not Never (podFailurePolicy requires it)");
  if (!(pod.containers ?? []).some((c) => c.name === CONTAINER)) found.push(`no container named ${CONTAINER}`);
  const rules = job.podFailurePolicy?.rules ?? [];
  for (const code of NO_RETRY_EXIT_CODES) {
    const rule = ruleFor(rules, code);
    if (rule?.action !== "FailJob") {
      found.push(`exit code ${code}: podFailurePolicy action is ${rule?.action ?? "none (retried)"}, not FailJob`);
    }
  }
  return found;
}

function reconcilerCronJobs(file) {
  return parseAllDocuments(readFileSync(file, "utf8"))
    .map((doc) => doc.toJS())
    .filter((o) => o?.kind === "CronJob" && o.metadata?.name === "reconciler");
}

/** Broken variants of a good CronJob; the check must refuse each. */
function mutants(good) {
  const variants = {
    "without podFailurePolicy": (j) => delete j.spec.jobTemplate.spec.podFailurePolicy,
    "with action Ignore": (j) => j.spec.jobTemplate.spec.podFailurePolicy.rules.forEach((r) => (r.action = "Ignore")),
    "without exit code 2": (j) =>
      j.spec.jobTemplate.spec.podFailurePolicy.rules.forEach((r) => {
        if (r.onExitCodes) r.onExitCodes.values = r.onExitCodes.values.filter((v) => v !== 2);
      }),
    "for another container": (j) =>
      j.spec.jobTemplate.spec.podFailurePolicy.rules.forEach((r) => {
        if (r.onExitCodes) r.onExitCodes.containerName = "sidecar";
      }),
    "with restartPolicy OnFailure": (j) => (j.spec.jobTemplate.spec.template.spec.restartPolicy = "OnFailure"),
    "with another backoffLimit": (j) => (j.spec.jobTemplate.spec.backoffLimit += 1),
  };
  return Object.entries(variants).map(([name, mutate]) => {
    const copy = structuredClone(good);
    mutate(copy);
    return [name, copy];
  });
}

const [docsDir, ...files] = process.argv.slice(2);
let failures = 0;
let backoffLimit;
try {
  backoffLimit = documentedBackoffLimit(docsDir);
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
const all = files.map((file) => [file, reconcilerCronJobs(file)]);

const sample = all.flatMap(([, jobs]) => jobs).find((j) => problems(j, backoffLimit).length === 0);
if (sample) {
  for (const [name, broken] of mutants(sample)) {
    if (problems(broken, backoffLimit).length === 0) {
      console.error(`self-test: a reconciler CronJob ${name} was accepted`);
      failures++;
    }
  }
}
for (const [file, jobs] of all) {
  if (jobs.length !== 1) {
    console.error(`${file}: ${jobs.length} reconciler CronJobs, expected 1`);
    failures++;
  }
  for (const job of jobs) {
    for (const problem of problems(job, backoffLimit)) {
      console.error(`${file}: CronJob/reconciler: ${problem}`);
      failures++;
    }
  }
}
console.log(
  `reconciler CronJob checked in ${files.length} renders (exit codes ${NO_RETRY_EXIT_CODES.join(", ")} fail the Job, ` +
    `backoffLimit ${backoffLimit}): ${failures} problems`,
);
process.exit(failures === 0 && files.length > 0 ? 0 : 1);
