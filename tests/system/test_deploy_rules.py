"""The example monitoring under deploy/ (issue 35): `promtool check rules`
passes on deploy/prometheus/gpud-alerts.yml; `promtool test rules` fires
the alerts that matter on made-up series (no worker online while jobs wait,
results rejected, storage error) and keeps them quiet otherwise; and every
metric the alert rules and the Grafana dashboard (deploy/grafana/
gpud-dashboard.json) name is one a running gpud exports on /metrics, with
the labels their matchers use (instance and job are Prometheus's own, as
is `up`).
Exits 77 only when promtool is not installed (tools/deps.sh)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from harness import Cluster, check, http_get_key, lease_units_for, page_link, run, wait_for

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
RULES = os.path.join(SRC, "deploy", "prometheus", "gpud-alerts.yml")
DASHBOARD = os.path.join(SRC, "deploy", "grafana", "gpud-dashboard.json")
PROMETHEUS_OWN = {"up"}              # series Prometheus makes itself
TARGET_LABELS = {"instance", "job"}  # labels the scrape adds
KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
            "offset", "bool", "inf", "nan"}

UNIT_TEST = """
rule_files: [%(rules)s]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'gpud_jobs{job="gpud",instance="a",state="queued"}'
        values: '2x20'
      - series: 'gpud_jobs{job="gpud",instance="a",state="running"}'
        values: '0x20'
      - series: 'gpud_workers{job="gpud",instance="a",standing="online"}'
        values: '1 1 1 0x17'
      - series: 'gpud_results_rejected_total{job="gpud",instance="a",why="verification"}'
        values: '0 0 0 0 0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1'
      - series: 'gpud_storage_error{job="gpud",instance="a"}'
        values: '0x5 1x15'
    alert_rule_test:
      - eval_time: 2m
        alertname: GpudNoWorkerWhileJobsWait
        exp_alerts: []
      - eval_time: 15m
        alertname: GpudNoWorkerWhileJobsWait
        exp_alerts:
          - exp_labels: { severity: warning, instance: a }
            exp_annotations:
              summary: "Jobs wait on a and no worker is online"
              description: "Start workers (gpuworker) or look at why they cannot log in (gpud's log, gpuctl workers)."
      - eval_time: 4m
        alertname: GpudResultsRejected
        exp_alerts: []
      - eval_time: 8m
        alertname: GpudResultsRejected
        exp_alerts:
          - exp_labels: { severity: warning, instance: a }
            exp_annotations:
              summary: "gpud on a refuted 1 result(s) in the last 30 minutes"
              description: "A worker's result failed verification or disagreed with its replica: a faulty device or a forged result. gpuctl workers shows its failures; quarantine follows."
      - eval_time: 4m
        alertname: GpudStorageError
        exp_alerts: []
      - eval_time: 10m
        alertname: GpudStorageError
        exp_alerts:
          - exp_labels: { severity: critical, job: gpud, instance: a }
            exp_annotations:
              summary: "gpud cannot write its data directory"
              description: "Disk full, permissions or I/O errors: new work has stopped until a write succeeds (gpuctl status says why)."
"""


def exprs():
    """(where, PromQL) of every rule and dashboard query."""
    out = []
    with open(RULES) as f:
        for n, line in enumerate(f, 1):
            m = re.match(r"\s*expr:\s*(.+)$", line)
            if m:
                out.append(("%s:%d" % (os.path.basename(RULES), n), m.group(1)))
    with open(DASHBOARD) as f:
        dash = json.load(f)
    for p in dash["panels"]:
        for t in p["targets"]:
            out.append(("dashboard panel %r" % p["title"], t["expr"]))
    for v in dash["templating"]["list"]:
        if v.get("type") == "query":
            out.append(("dashboard variable %s" % v["name"], v["query"]))
    return out


def metrics_named(expr):
    """{metric: {labels its matchers use}} of a PromQL expression."""
    found = {}
    e = re.sub(r"label_values\([^)]*\)", " ", expr)           # below
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', e)               # strings
    e = re.sub(r"\[[^\]]*\]", "", e)                         # ranges
    e = re.sub(r"(?<![\w:])\d+(\.\d+)?([eE][+-]?\d+)?", "0", e)  # numbers
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    for m in re.finditer(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?\s*(\()?", e):
        name, matchers, call = m.group(1), m.group(2), m.group(3)
        if call or name in KEYWORDS or re.match(r"^\d", name):
            continue
        labels = set(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)", matchers or ""))
        found.setdefault(name, set()).update(labels)
    # label_values(METRIC, label): METRIC is a metric, label one of its labels.
    for m in re.finditer(r"label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_]+)\s*\)", expr):
        found.setdefault(m.group(1), set()).add(m.group(2))
    return found


def test_deploy_rules(cl: Cluster):
    if not shutil.which("promtool"):
        print("SKIP: promtool is not installed (sh tools/deps.sh)")
        sys.exit(77)
    r = subprocess.run(["promtool", "check", "rules", RULES], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "SUCCESS" in r.stdout, "promtool check rules: %s %s" % (r.stdout, r.stderr))
    with tempfile.TemporaryDirectory(prefix="gpud-rules-") as tmp:
        test_file = os.path.join(tmp, "test.yml")
        with open(test_file, "w") as f:
            f.write(UNIT_TEST % {"rules": json.dumps(RULES)})
        r = subprocess.run(["promtool", "test", "rules", test_file], capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "promtool test rules: %s %s" % (r.stdout, r.stderr))

    # A gpud with a finished job, a check and a backup: every family it has.
    cl.gpud_args = ["--heartbeat", "0.5", "--lease-units", str(lease_units_for(0.5))]
    cl.start_gpud()
    cl.start_worker("cpu:1")
    job = int(cl.ctl("submit", "graveler", "--battles", str(1 << 18)).stdout.strip().split()[-1])
    cl.wait_job(job, timeout=60)
    cl.ctl("check")
    cl.ctl("backup", os.path.join(cl.dir, "backup"))
    # A running job with an ETA: the per-job series.
    big = int(cl.ctl("submit", "graveler", "--battles", str(1 << 40)).stdout.strip().split()[-1])
    wait_for(lambda: cl.status(big).get("eta_s"), 60, "the long job's ETA")
    _, key = page_link(cl)
    code, _, body = http_get_key(cl, "/metrics", key)
    check(code == 200, "/metrics: %d" % code)
    text = body.decode()
    families = set(re.findall(r"^# TYPE (\S+) \S+$", text, re.M))
    labels = {}
    for m in re.finditer(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? ", text, re.M):
        labels.setdefault(m.group(1), set()).update(re.findall(r'([a-zA-Z_]+)="', m.group(2) or ""))

    def family(name):
        for suffix in ("_bucket", "_sum", "_count"):
            if name.endswith(suffix) and name[:-len(suffix)] in families:
                return name[:-len(suffix)]
        return name if name in families else None

    named = 0
    for where, expr in exprs():
        for name, used in metrics_named(expr).items():
            named += 1
            if name in PROMETHEUS_OWN:
                continue
            check(family(name), "%s names %s, which gpud does not export: %s" % (where, name, expr))
            missing = used - TARGET_LABELS - labels.get(name, set())
            check(not missing, "%s: %s has no label %s" % (where, name, sorted(missing)))
    check(named >= 30, "the rules and dashboard name metrics: %d" % named)
    for needed in ("process_start_time_seconds", "gpud_leases_granted_total", "gpud_results_rejected_total",
                   "gpud_last_backup_timestamp_seconds", "gpud_last_check_timestamp_seconds"):
        check(needed in families, "gpud exports %s" % needed)
    cl.ctl("cancel", str(big))


if __name__ == "__main__":
    run(test_deploy_rules)
