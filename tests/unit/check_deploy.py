#!/usr/bin/env python3
"""The cluster recipes in deploy/ parse and say what the README promises.

Kubernetes (no cluster here, so this is what is checked): every manifest
parses as YAML; gpud is a one-replica StatefulSet with its data directory on
a volume claim, its control socket in that directory and a readiness probe
that asks gpud itself (gpuctl status); the worker is an Indexed Job with
nvidia.com/gpu limits, a grace period long enough for a checkpoint, the
token from a Secret readable by its owner only (copied by an init container
into a memory emptyDir, as the Secret's file is group-readable under
fsGroup), not root (runAsNonRoot, a numeric user and group, no privilege
escalation, a read-only root file system, writes to an emptyDir),
--exit-when-idle, its pod name from the downward API (its default instance:
one worker per pod on one shared credential), and gpud's Service as its
address.

Slurm: the sbatch script passes bash -n, asks for a job array with
--requeue and a signal before the time limit, runs gpuworker with
--exit-when-idle in the background and waits for it.

Exit 77 when python3-yaml is missing.
"""
import os
import re
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed")
    sys.exit(77)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
K8S = os.path.join(ROOT, "deploy", "kubernetes")
SBATCH = os.path.join(ROOT, "deploy", "slurm", "gpuworker.sbatch")


def check(cond, msg):
    if not cond:
        print("FAIL: " + msg)
        sys.exit(1)


def load(name):
    with open(os.path.join(K8S, name)) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    check(docs, "%s has no documents" % name)
    for d in docs:
        check(isinstance(d, dict) and d.get("apiVersion") and d.get("kind")
              and d.get("metadata", {}).get("name"), "%s: a document without apiVersion, kind or name" % name)
    return {d["kind"]: d for d in docs}


def arg_after(cmd, flag):
    check(flag in cmd, "%s missing from %s" % (flag, cmd))
    return cmd[cmd.index(flag) + 1]


def check_kubernetes():
    names = sorted(n for n in os.listdir(K8S) if n.endswith((".yaml", ".yml")))
    check(names == ["gpud.yaml", "gpuworker.yaml"], "manifests: %s" % names)
    gpud, worker = load("gpud.yaml"), load("gpuworker.yaml")

    svc, sts = gpud.get("Service"), gpud.get("StatefulSet")
    check(svc and sts, "gpud.yaml should hold a Service and a StatefulSet")
    check(sts["spec"]["replicas"] == 1, "gpud runs as exactly one replica")
    claims = [c["metadata"]["name"] for c in sts["spec"].get("volumeClaimTemplates", [])]
    pod = sts["spec"]["template"]["spec"]
    c = pod["containers"][0]
    mounts = {m["name"]: m["mountPath"] for m in c.get("volumeMounts", [])}
    data = arg_after(c["command"], "--data")
    check(claims and all(n in mounts for n in claims), "the data directory's claim is mounted: %s" % mounts)
    check(any(data.startswith(p.rstrip("/") + "/") or data == p for p in mounts.values()),
          "--data %s lies on the claim (%s)" % (data, mounts))
    sock = arg_after(c["command"], "--socket")
    probe = c["readinessProbe"]["exec"]["command"]
    check(probe[0] == "gpuctl" and arg_after(probe, "--socket") == sock and "status" in probe,
          "readiness asks gpud itself over its socket: %s" % probe)
    port = arg_after(c["command"], "--listen").rsplit(":", 1)[1]
    check(any(str(p["containerPort"]) == port for p in c["ports"]), "the listen port is the container's")
    check(sts["spec"]["selector"]["matchLabels"].items() <= svc["spec"]["selector"].items(),
          "the Service selects gpud's pod")

    job = worker.get("Job")
    check(job and job["spec"]["completionMode"] == "Indexed", "the worker is an Indexed Job")
    wpod = job["spec"]["template"]["spec"]
    check(wpod["terminationGracePeriodSeconds"] >= 60,
          "the grace period leaves time for a checkpoint: %s" % wpod["terminationGracePeriodSeconds"])
    wc = wpod["containers"][0]
    check(wc["resources"]["limits"].get("nvidia.com/gpu") == 1, "one GPU per worker pod")
    cmd = wc["command"]
    check(cmd[0] == "gpuworker" and "--exit-when-idle" in cmd, "gpuworker --exit-when-idle: %s" % cmd)
    host, wport = arg_after(cmd, "--connect").rsplit(":", 1)
    check(host == svc["metadata"]["name"] and any(str(p["port"]) == wport for p in svc["spec"]["ports"]),
          "workers connect to gpud's Service: %s" % cmd)
    token = arg_after(cmd, "--token-file")
    vols = {v["name"]: v for v in wpod["volumes"]}
    wm = {m["mountPath"]: m["name"] for m in wc["volumeMounts"]}
    vol = vols[wm[os.path.dirname(token)]]
    check("emptyDir" in vol and vol["emptyDir"].get("medium") == "Memory",
          "the token lies in a memory emptyDir: %s" % vol)
    inits = wpod.get("initContainers", [])
    filler = [i for i in inits if any(m["name"] == wm[os.path.dirname(token)] and
                                      m["mountPath"] == os.path.dirname(token) and not m.get("readOnly")
                                      for m in i.get("volumeMounts", []))]
    check(len(filler) == 1, "one init container writes the token: %s" % inits)
    script = " ".join(filler[0]["command"])
    check("umask 077" in script and token in script, "the token copy is owner-only: %s" % script)
    secrets = [vols[m["name"]] for m in filler[0]["volumeMounts"] if "secret" in vols[m["name"]]]
    check(len(secrets) == 1 and (secrets[0]["secret"]["defaultMode"] & 0o077) == 0,
          "the token comes from a Secret readable by its owner only: %s" % secrets)
    psc = wpod.get("securityContext", {})
    check(psc.get("runAsNonRoot") is True and isinstance(psc.get("runAsUser"), int) and
          psc["runAsUser"] > 0 and isinstance(psc.get("runAsGroup"), int) and psc["runAsGroup"] > 0,
          "the worker pod runs as a numeric non-root user and group: %s" % psc)
    for c in [wc] + inits:
        sc = c.get("securityContext", {})
        check(sc.get("allowPrivilegeEscalation") is False and sc.get("readOnlyRootFilesystem") is True,
              "%s: no privilege escalation, a read-only root: %s" % (c["name"], sc))
        check(sc.get("runAsUser", 1) != 0, "%s runs as root" % c["name"])
    writable = [m for m in wc["volumeMounts"] if not m.get("readOnly")]
    check(writable and all("emptyDir" in vols[m["name"]] for m in writable),
          "the worker writes only to emptyDirs: %s" % writable)
    env = {e["name"]: e for e in wc.get("env", [])}
    check(env.get("POD_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
          == "metadata.name", "POD_NAME from the downward API")


def check_slurm():
    r = subprocess.run(["bash", "-n", SBATCH], capture_output=True, text=True)
    check(r.returncode == 0, "bash -n gpuworker.sbatch: " + r.stderr)
    with open(SBATCH) as f:
        text = f.read()
    opts = re.findall(r"^#SBATCH (\S+)", text, re.M)
    for want in ("--array=", "--requeue", "--signal=B:", "--gres=gpu:1"):
        check(any(o.startswith(want) for o in opts), "#SBATCH %s missing: %s" % (want, opts))
    check(re.search(r"--exit-when-idle.*&\s*$", text, re.M) and re.search(r"^\s*wait \"\$pid\"", text, re.M),
          "gpuworker runs in the background with --exit-when-idle and the script waits for it")


check_kubernetes()
check_slurm()
print("deploy: manifests and sbatch script check out")
