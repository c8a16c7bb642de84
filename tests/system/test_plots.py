"""Plots people can open (issue 23): one small job of each workload on a
CPU worker; when each finishes, gpud writes its plot into the results
directory (--results) by itself, before anyone runs `gpuctl result`, with
modes 0755/0644 although gpud runs under umask 077, readable by another
user; each plot is SVG that parses, with a viewBox, x and y axis labels and
tick numbers people read (no 1e+08), Graveler's with the Binomial(231, 1/4)
expectation curve; `gpuctl result` prints the path and writes a plot that
went missing; `gpuctl export JOB plot` gives the same bytes to anyone with
a viewer's credential; `gpuctl export JOB counts` writes Sudoku's
per-gangster counts as CSV."""
import csv
import io
import os
import re
import stat
import subprocess
import xml.etree.ElementTree as ET

from harness import GPUCTL, Cluster, check, run, wait_for

SVG = "{http://www.w3.org/2000/svg}"
JOBS = [
    ("graveler", {"battles": 3000000, "seed": 5}, "graveler-histogram.svg"),
    ("othello", {"random": 300, "empties": 8, "seed": 3}, "othello-scores.svg"),
    ("sudoku", {"box": "2x3"}, "sudoku-gangsters.svg"),
    ("officers", {"to": 30000}, "officers-values.svg"),
]
# A tick or title number: digits with commas or a point, an SI suffix, or
# N×10 with superscript digits; never an exponent written with e.
EXPONENT = re.compile(r"\d[eE][+-]?\d")


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def check_svg(path, workload):
    root = ET.parse(path).getroot()
    check(root.tag == SVG + "svg", "%s: root %s" % (path, root.tag))
    vb = root.get("viewBox", "").split()
    check(len(vb) == 4 and float(vb[2]) > 0 and float(vb[3]) > 0, "%s: viewBox %r" % (path, vb))
    texts = {}
    for t in root.iter(SVG + "text"):
        texts.setdefault(t.get("class"), []).append("".join(t.itertext()))
    for cls in ("title", "xlabel", "ylabel"):
        check(len(texts.get(cls, [])) == 1 and texts[cls][0].strip(), "%s: %s %s" % (path, cls, texts.get(cls)))
    check(len(texts.get("xtick", [])) >= 2 and len(texts.get("ytick", [])) >= 2,
          "%s: ticks %s %s" % (path, texts.get("xtick"), texts.get("ytick")))
    every = [s for v in texts.values() for s in v] + [t.text or "" for t in root.iter(SVG + "title")]
    for s in every:
        check(not EXPONENT.search(s), "%s: unreadable number in %r" % (path, s))
    bars = [r for r in root.iter(SVG + "rect") if "bar" in (r.get("class") or "").split()]
    check(len(bars) >= 2, "%s: %d bars" % (path, len(bars)))
    if workload == "graveler":
        lines = [p for p in root.iter(SVG + "polyline") if "expected" in (p.get("class") or "").split()]
        check(len(lines) == 1 and len(lines[0].get("points").split()) >= 20,
              "graveler: the expectation curve: %s" % lines)
        check(any("Binomial(231, 1/4)" in s for s in texts.get("legend", [])), "graveler legend: %s" % texts.get("legend"))
        check("paralysed turns" in texts["xlabel"][0] and "battles" in texts["ylabel"][0],
              "graveler labels: %s %s" % (texts["xlabel"], texts["ylabel"]))
    return root


def readable_by_nobody(path):
    """Whether uid/gid 65534 can read path (only checked as root)."""
    def drop():
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    r = subprocess.run(["head", "-c", "5", path], preexec_fn=drop, capture_output=True, text=True, timeout=30)
    return r.returncode == 0 and r.stdout == "<?xml"


def test_plots(cl: Cluster):
    results = os.path.join(cl.dir, "results")
    cl.start_gpud(extra=["--results", results], preexec_fn=lambda: os.umask(0o077))
    check(mode(results) == 0o755, "results directory mode %o" % mode(results))
    cl.start_worker("cpu:2")
    jobs = [(cl.submit(w, **kw), w, name) for w, kw, name in JOBS]
    for job, w, name in jobs:
        cl.wait_job(job, timeout=120)
    # Written at the finish, without gpuctl result.
    for job, w, name in jobs:
        path = os.path.join(results, "job-%d" % job, name)
        wait_for(lambda: os.path.exists(path), 20, "the plot of job %d (%s)" % (job, w))
        check(mode(os.path.dirname(path)) == 0o755 and mode(path) == 0o644,
              "%s: modes %o %o" % (path, mode(os.path.dirname(path)), mode(path)))
        check_svg(path, w)
        if os.geteuid() == 0:
            os.chmod(cl.dir, 0o755)  # mkdtemp's 0700 is the test's, not gpud's
            check(readable_by_nobody(path), "another user cannot read " + path)
        check("plot written job=%d path=%s" % (job, path) in cl.log_text("gpud"), "gpud logs the plot")
        # gpuctl result prints where it is; export plot gives the same bytes.
        r = cl.ctl("result", str(job))
        # Othello's result is its scored positions on stdout; the rest is on stderr.
        out = r.stderr if w == "othello" else r.stdout
        check("files: " + path in out, "result names the plot: " + out[-300:])
        exported = subprocess.run([GPUCTL, "--socket", cl.sock, "export", str(job), "plot"],
                                  capture_output=True, timeout=60).stdout
        check(exported == open(path, "rb").read(), "export plot differs from the file (%d bytes)" % len(exported))
    # A plot that went missing is written again by gpuctl result.
    job, w, name = jobs[0]
    path = os.path.join(results, "job-%d" % job, name)
    os.unlink(path)
    cl.ctl("result", str(job))
    check(os.path.exists(path) and mode(path) == 0o644, "gpuctl result writes a missing plot")
    # Sudoku's per-gangster counts as CSV.
    job = jobs[2][0]
    text = cl.ctl("export", str(job), "counts").stdout
    rows = list(csv.reader(io.StringIO(text)))
    check(rows[0] == ["index", "count"], "CSV header: %s" % rows[0])
    gangsters = cl.result(job)["answer"]["gangsters"]
    check(len(rows) == gangsters + 1, "CSV rows: %d for %d gangsters" % (len(rows) - 1, gangsters))
    for i, (idx, count) in enumerate(rows[1:]):
        check(int(idx) == i and int(count) > 0, "CSV row %d: %s,%s" % (i, idx, count))
    # No plot for what has none.
    r = cl.ctl("export", str(job), "plots", check_rc=False)
    check(r.returncode != 0 and "no export 'plots'" in r.stderr, "unknown export: " + r.stderr)
    check(cl.stop_gpud() == 0, "gpud should exit 0 on SIGTERM")


if __name__ == "__main__":
    run(test_plots)
