// Helpers of k8s/monitoring/check.sh (kept here for the `yaml` package of this directory).
//   node monitoring.mjs rules PROMETHEUSRULE            the PrometheusRule's spec as a Prometheus rules file
//   node monitoring.mjs alerts RULES                    the alert names, one per line
//   node monitoring.mjs force RULES never|always        RULES with every alert's expression replaced by one that never
//                                                       fires, or always does
//   node monitoring.mjs used RULES DASHBOARD...         the metric names the rules' and dashboards' queries read
//   node monitoring.mjs missing USED SCRAPED            the names of USED (one per line) absent from SCRAPED; exit 1 if any
//   node monitoring.mjs selftest                        checks the PromQL name extraction on known expressions
import { readFileSync } from "node:fs";
import { parse, stringify } from "yaml";

const KEYWORDS = new Set([
  "and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan",
]);

// Metric names read by a PromQL expression. Strings, label matchers, ranges and grouping clauses are removed first;
// then an identifier is a metric unless it is a function (followed by "("), a keyword, part of a number or
// duration, or a Grafana variable ($name).
export function metricNames(expr) {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names = new Set();
  for (const match of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const before = stripped[match.index - 1] ?? " ";
    const after = stripped.slice(match.index + match[0].length);
    if (/[0-9.$]/.test(before) || /^\s*\(/.test(after) || KEYWORDS.has(match[0].toLowerCase())) continue;
    names.add(match[0]);
  }
  return names;
}

function ruleExpressions(file) {
  const rules = parse(readFileSync(file, "utf8"));
  return rules.groups.flatMap((group) => group.rules.map((rule) => String(rule.expr)));
}

function dashboardExpressions(file) {
  const exprs = [];
  const walk = (node) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === "object") {
      if (typeof node.expr === "string") exprs.push(node.expr);
      Object.values(node).forEach(walk);
    }
  };
  walk(JSON.parse(readFileSync(file, "utf8")));
  if (exprs.length === 0) throw new Error(`${file}: no query (expr) found`);
  return exprs;
}

function lines(file) {
  return readFileSync(file, "utf8").split("\n").map((l) => l.trim()).filter(Boolean);
}

const [command, ...args] = process.argv.slice(2);
switch (command) {
  case "rules": {
    const object = parse(readFileSync(args[0], "utf8"));
    if (object.kind !== "PrometheusRule" || !Array.isArray(object.spec?.groups)) {
      throw new Error(`${args[0]}: not a PrometheusRule with spec.groups`);
    }
    process.stdout.write(stringify({ groups: object.spec.groups }));
    break;
  }
  case "alerts": {
    const rules = parse(readFileSync(args[0], "utf8"));
    for (const group of rules.groups) for (const rule of group.rules) if (rule.alert) console.log(rule.alert);
    break;
  }
  case "force": {
    const rules = parse(readFileSync(args[0], "utf8"));
    const expr = { never: "vector(1) < 0", always: "vector(1)" }[args[1]];
    if (!expr) throw new Error("force: never or always");
    for (const group of rules.groups) {
      for (const rule of group.rules) if (rule.alert) rule.expr = expr;
    }
    process.stdout.write(stringify(rules));
    break;
  }
  case "used": {
    const [rules, ...dashboards] = args;
    const names = new Set();
    const exprs = [...ruleExpressions(rules), ...dashboards.flatMap(dashboardExpressions)];
    for (const expr of exprs) for (const name of metricNames(expr)) names.add(name);
    console.log([...names].sort().join("\n"));
    break;
  }
  case "missing": {
    const scraped = new Set(lines(args[1]));
    const missing = lines(args[0]).filter((name) => !scraped.has(name));
    if (missing.length > 0) console.log(missing.join("\n"));
    process.exitCode = missing.length > 0 ? 1 : 0;
    break;
  }
  case "selftest": {
    const cases = [
      ['max(outbox_oldest_unsent_age_seconds) > 60', ["outbox_oldest_unsent_age_seconds"]],
      [
        'sum(rate(a_total{outcome="error",x=~"b(c)"}[5m])) / sum by (job, le) (rate(a_total[$__rate_interval])) > 0.05',
        ["a_total"],
      ],
      [
        'histogram_quantile(0.99, sum by (le) (rate(h_bucket{uri=~"/v1/.*"}[5m]))) > 1e3 and on(job) up offset 5m',
        ["h_bucket", "up"],
      ],
      ['time() - max(recon_last_success_timestamp_seconds) > 93600', ["recon_last_success_timestamp_seconds"]],
      ['x_total unless ignoring(instance) group_left(job) y{job="$job"} or vector(0)', ["x_total", "y"]],
    ];
    let failed = 0;
    for (const [expr, expected] of cases) {
      const got = [...metricNames(expr)].sort();
      if (JSON.stringify(got) !== JSON.stringify([...expected].sort())) {
        console.error(`metricNames(${expr}) = ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
        failed++;
      }
    }
    process.exitCode = failed ? 1 : 0;
    break;
  }
  default:
    console.error("usage: node monitoring.mjs rules|alerts|force|used|missing|selftest ...");
    process.exitCode = 2;
}
