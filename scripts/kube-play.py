#!/usr/bin/env python3
"""Helpers of scripts/kube-play.sh around a rendered overlay (kubectl kustomize output).

  split RENDER DIR      writes the files podman plays, in DIR: secrets.json (the Secrets' data), migrate.yaml (the migration
                        Job's pod template as a Pod), sandbox.yaml and services.yaml (the Deployments, as rendered),
                        reconciler.yaml (the CronJob's pod template as a Pod), each with the render's ConfigMaps; and
                        skipped.txt, the kinds podman 4.3 does not run. Changed only where podman 4.3 cannot run the
                        render as it is: it has no Job or CronJob kind (their pod templates are played as Pods), and
                        its emptyDir volumes are named volumes shared by name (each workload's get its name as prefix,
                        listed in volumes.txt).
  args FILE ARG...      sets the first container's args of the Pod in FILE (the reconciler's run of a given date)
  probes RENDER         prints "deployment kind port path" for every probe (a named port resolved as Kubernetes does)
  check RENDER          asserts with `podman inspect` that every played container runs as the manifest asks: user,
                        read-only root, capabilities dropped, no privilege escalation
"""
import json
import subprocess
import sys

import yaml


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def dump(path, docs):
    with open(path, "w") as f:
        yaml.safe_dump_all(docs, f, sort_keys=False)


def pod_of(name, template):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": template.get("metadata", {}).get("labels", {})},
        "spec": template["spec"],
    }


def pod_specs(docs):
    for d in docs:
        if d["kind"] in ("Deployment", "Job"):
            yield d["spec"]["template"]["spec"]
        elif d["kind"] == "CronJob":
            yield d["spec"]["jobTemplate"]["spec"]["template"]["spec"]


def secret_refs(docs):
    """(name, optional) of every Secret a pod reads: volumes and secretKeyRef"""
    for spec in pod_specs(docs):
        for v in spec.get("volumes", []):
            if "secret" in v:
                yield v["secret"]["secretName"], v["secret"].get("optional", False)
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    yield ref["name"], ref.get("optional", False)


def own_empty_dirs(docs):
    """podman 4.3 plays an emptyDir as a named volume of the volume's name, shared by every pod that names it (each
    service's /tmp would be one directory): each workload's emptyDir volumes get its name as a prefix"""
    for d in docs:
        if d["kind"] not in ("Deployment", "Job", "CronJob"):
            continue
        spec = next(s for s in pod_specs([d]))
        renamed = {}
        for v in spec.get("volumes", []):
            if "emptyDir" in v:
                renamed[v["name"]] = v["name"] = f"{d['metadata']['name']}-{v['name']}"
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            for m in c.get("volumeMounts", []):
                m["name"] = renamed.get(m["name"], m["name"])
        yield from renamed.values()


def split(render, out):
    docs = load(render)
    with open(f"{out}/volumes.txt", "w") as f:
        f.writelines(f"{v}\n" for v in own_empty_dirs(docs))
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    config = by_kind.get("ConfigMap", [])
    # podman 4.3 reads a secretKeyRef from a podman secret holding the JSON of the Secret's data (base64 values);
    # kube-play.sh creates one per Secret from secrets.json
    # kube-play.sh creates one per Secret from secrets.json. podman 4.3 also fails on a missing Secret that the pod
    # names as optional (a volume or a secretKeyRef): such a Secret is created empty, which is what Kubernetes gives
    # the pod for an absent optional Secret (an empty volume, no variable).
    data = {s["metadata"]["name"]: s.get("data", {}) for s in by_kind.get("Secret", [])}
    for name, optional in secret_refs(docs):
        if name not in data:
            if not optional:
                sys.exit(f"the render names the Secret {name}, which it does not hold")
            data[name] = {}
    with open(f"{out}/secrets.json", "w") as f:
        json.dump(data, f)
    [job] = by_kind["Job"]
    dump(f"{out}/migrate.yaml", config + [pod_of(job["metadata"]["name"], job["spec"]["template"])])
    deployments = by_kind["Deployment"]
    dump(f"{out}/sandbox.yaml", config + [d for d in deployments if d["metadata"]["name"] == "psp-sandbox"])
    dump(f"{out}/services.yaml", config + [d for d in deployments if d["metadata"]["name"] != "psp-sandbox"])
    [cron] = by_kind["CronJob"]
    dump(f"{out}/reconciler.yaml", config + [pod_of(cron["metadata"]["name"], cron["spec"]["jobTemplate"]["spec"]["template"])])
    played = {"ConfigMap", "Secret", "Job", "Deployment", "CronJob"}
    with open(f"{out}/skipped.txt", "w") as f:
        for kind, items in sorted(by_kind.items()):
            if kind not in played:
                f.write(f"{kind}: {', '.join(i['metadata']['name'] for i in items)}\n")


def secrets(path, out):
    """writes one file per Secret into out (the content of its podman secret) and prints their names"""
    with open(path) as f:
        for name, data in json.load(f).items():
            with open(f"{out}/{name}.json", "w") as g:
                json.dump(data, g)
            print(name)


def set_args(path, args):
    docs = load(path)
    pod = next(d for d in docs if d["kind"] == "Pod")
    pod["spec"]["containers"][0]["args"] = list(args)
    dump(path, docs)


def workloads(render):
    """(pod name in podman, pod spec) of every workload that stays up: the Deployments."""
    for d in load(render):
        if d["kind"] == "Deployment":
            yield d["metadata"]["name"], d["spec"]["template"]["spec"]


def probes(render):
    for name, spec in workloads(render):
        for c in spec["containers"]:
            ports = {p["name"]: p["containerPort"] for p in c.get("ports", []) if "name" in p}
            for kind in ("startupProbe", "livenessProbe", "readinessProbe"):
                get = c.get(kind, {}).get("httpGet")
                if get:
                    port = get["port"]
                    print(name, kind, ports[port] if isinstance(port, str) else port, get["path"])


def check(render):
    failures = []
    for name, spec in workloads(render):
        pod_ctx = spec.get("securityContext", {})
        for c in spec["containers"]:
            ctx = {**pod_ctx, **c.get("securityContext", {})}
            container = f"{name}-pod-0-{c['name']}"
            [info] = json.loads(subprocess.check_output(["podman", "inspect", container]))
            host, config = info["HostConfig"], info["Config"]
            user = config.get("User", "")
            # what the process has, as the kernel says (podman's EffectiveCaps is empty or absent when none)
            status = subprocess.run(["podman", "exec", container, "cat", "/proc/1/status"], capture_output=True,
                                    text=True).stdout
            cap_eff = next((line.split()[1] for line in status.splitlines() if line.startswith("CapEff:")), "?")
            want_user = str(ctx["runAsUser"]) + (f":{ctx['runAsGroup']}" if "runAsGroup" in ctx else "")
            checks = {
                f"user {want_user}": user == want_user,
                "read-only root": host.get("ReadonlyRootfs") == ctx.get("readOnlyRootFilesystem", False),
                "capabilities dropped": ctx.get("capabilities", {}).get("drop") != ["ALL"]
                or (not info.get("EffectiveCaps") and cap_eff == "0000000000000000"),
                "no privilege escalation": ctx.get("allowPrivilegeEscalation", True)
                or "no-new-privileges" in (host.get("SecurityOpt") or []),
                "running": info["State"]["Status"] == "running",
            }
            bad = [k for k, ok in checks.items() if not ok]
            detail = (f"user {user}, read-only root {host.get('ReadonlyRootfs')}, CapEff {cap_eff}, "
                      f"security options {host.get('SecurityOpt')}")
            print(f"{container}: {'FAILED ' + ', '.join(bad) if bad else 'ok'} ({detail})")
            failures += bad
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    command, *rest = sys.argv[1:]
    {"split": lambda: split(*rest), "args": lambda: set_args(rest[0], rest[1:]), "probes": lambda: probes(*rest),
     "check": lambda: check(*rest), "secrets": lambda: secrets(*rest)}[command]()
