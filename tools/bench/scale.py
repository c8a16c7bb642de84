#!/usr/bin/env python3
"""scale.py - does one job get faster with more workers? For each job, each
credential mode and each N: a fresh gpud, N CPU workers of one thread
(gpuworker --device cpu:1), one job submitted, its progress polled 5x/s.

  tools/bench/scale.py [--build build] [--n 1,2,4,8,16] [--modes own,shared]
                       [--jobs graveler,sudoku,ffo,othello,officers]
                       [--gpu-mix 0,4,15] [--two-gpus] [--quick]
                       [--job NAME='WORKLOAD ARGS...'] [--timeout 900]
                       [--out bench-scale.json] [--md bench-scale.md]

Modes: "own", each worker its own credential (gpuctl token add wI);
"shared", every worker on the local worker token. Per run it records the
wall time from submit to done (gpud's created_at .. finished_at), the
distinct workers granted a lease (gpud's events table), the time at which
90% of the units were done (first poll with units_done >= 0.9 x total,
since submit), and the answer's science part, which must be the same at
every N (else the run is marked MISMATCH and the exit status is 1).
--gpu-mix K,...: cuda:0 plus K CPU workers on one Graveler job, with each
worker's share of the units. --two-gpus: cuda:0 and cuda:1 on one job.
--quick: small jobs and N 1,2 (a 2-core machine). Prints a markdown table
(with the exact commands) and writes every figure as JSON to --out.
Every process it starts is stopped, also on a timeout or Ctrl-C.
"""
import argparse
import json
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FFO = os.path.join(ROOT, "tests", "data", "ffo.obf")

# name -> (gpuctl submit arguments, FFO lines or None)
JOBS = {
    "graveler": ("graveler --battles 2e9", None),
    "sudoku": ("sudoku --box 2x5", None),
    "ffo": ("othello --file {ffo}", (20, 39)),
    "othello": ("othello --random 20000 --empties 14", None),
    "officers": ("officers --to 2000000 --check full", None),
}
QUICK = {
    "graveler": ("graveler --battles 3e7", None),
    "sudoku": ("sudoku --box 2x3", None),
    "ffo": ("othello --file {ffo}", (1, 8)),
    "othello": ("othello --random 2000 --empties 10", None),
    "officers": ("officers --to 200000 --check full", None),
}
GPU_JOB = "graveler --battles 1e12"
TWO_GPU_JOB = "graveler --battles 1e13"
# The answer's fields that must not depend on how the job was leased
# (tests/system/harness.py's SCIENCE); None: all but "leases".
SCIENCE = {
    "graveler": None,
    "officers": ["n", "fnv", "counts", "first", "max", "rares", "zeros"],
    "othello": ["positions", "hist", "mismatches"],
    "sudoku": ["gangsters", "sum", "total"],
}


class Failed(Exception):
    pass


class Gpud:
    """A private gpud in a temporary directory and its workers; stop() ends all."""

    def __init__(self, build, log_level):
        self.build, self.log_level = build, log_level
        self.dir = tempfile.mkdtemp(prefix="gpud-scale-")
        self.data, self.sock = os.path.join(self.dir, "d"), os.path.join(self.dir, "s")
        self.workers = []
        self.log = open(os.path.join(self.dir, "gpud.log"), "w")
        self.cmd = [os.path.join(build, "daemon", "gpud"), "--data", self.data, "--listen", "127.0.0.1:0",
                    "--socket", self.sock, "--http", "off", "--log-level", log_level]
        self.p = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(300):
            if os.path.exists(os.path.join(self.data, "gpud.addr")) and os.path.exists(self.sock):
                break
            if self.p.poll() is not None:
                raise Failed("gpud exited at start: " + self.tail())
            time.sleep(0.05)
        else:
            raise Failed("gpud did not start: " + self.tail())
        self.addr = open(os.path.join(self.data, "gpud.addr")).read().strip()

    def tail(self, n=2000):
        self.log.flush()
        return open(os.path.join(self.dir, "gpud.log")).read()[-n:]

    def ctl(self, *args, timeout=60):
        r = subprocess.run([os.path.join(self.build, "tools", "gpuctl"), "--socket", self.sock] + list(args),
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise Failed("gpuctl %s: %s" % (" ".join(args), (r.stderr or r.stdout).strip()))
        return r.stdout

    def token(self, name):
        path = os.path.join(self.dir, name + ".token")
        with open(path, "w") as f:
            os.chmod(path, 0o600)
            f.write(self.ctl("token", "add", name))
        return path

    def worker(self, device, token):
        log = open(os.path.join(self.dir, "worker-%d.log" % len(self.workers)), "w")
        p = subprocess.Popen([os.path.join(self.build, "worker", "gpuworker"), "--connect", self.addr,
                              "--token-file", token, "--device", device, "--log-level", self.log_level],
                             stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.workers.append(p)

    def online(self, n, timeout=60):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ws = json.loads(self.ctl("workers", "--json"))
            ws = ws.get("workers", []) if isinstance(ws, dict) else ws
            up = [w for w in ws if w.get("online")]
            if len(up) >= n:
                return
            dead = [p for p in self.workers if p.poll() is not None]
            if dead:
                raise Failed("a worker exited before the job (rc %s)" % dead[0].returncode)
            time.sleep(0.2)
        raise Failed("%d workers not online after %d s" % (n, timeout))

    def stop(self, keep=False):
        for p in self.workers + [self.p]:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.workers + [self.p]:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.log.close()
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def science(answer, workload):
    if isinstance(answer, dict) and "answer" in answer and isinstance(answer["answer"], dict):
        answer = answer["answer"]
    keys = SCIENCE.get(workload)
    if workload == "othello" and "frontier" in answer:
        # A split job's positions are the subtrees it searched, which
        # depend on the order results came in; its roots' scores do not.
        keys = [k for k in keys if k != "positions"]
    if keys is None:
        return {k: v for k, v in answer.items() if k != "leases"}
    return {k: answer.get(k) for k in keys}


def t90_of(db, job, total, created, polls):
    """When 90% of the units were done, in seconds since submit: from the
    results gpud logged (events 'result', each its lease's units), else
    interpolated between the two polls around it."""
    try:
        done = 0
        for ts, units in db.execute("SELECT e.ts, l.units FROM events e JOIN leases l ON l.id = e.lease_id "
                                    "WHERE e.job_id = ? AND e.kind = 'result' ORDER BY e.ts", (job,)):
            done += units or 0
            if total and done >= 0.9 * total:
                return ts - created, "events"
    except sqlite3.Error:
        pass
    for (t0, d0, _), (t1, d1, _) in zip([(created, 0, 0)] + polls, polls):
        if total and d1 >= 0.9 * total:
            f = (0.9 * total - d0) / (d1 - d0) if d1 > d0 else 1
            return t0 + f * (t1 - t0) - created, "polls"
    return polls[-1][0] - created, "end"


def run_job(a, name, submit, devices, mode, ffo_lines=None):
    """One gpud, the workers on devices, one job: the figures of the run."""
    g = Gpud(a.build, a.log_level)
    rec = {"job": name, "submit": submit, "mode": mode, "devices": devices, "n": len(devices)}
    try:
        args = submit
        if ffo_lines:
            path = os.path.join(g.dir, "ffo.obf")
            lines = [ln for ln in open(FFO).read().splitlines() if ln and not ln.startswith("%")]
            with open(path, "w") as f:
                f.write("\n".join(lines[ffo_lines[0] - 1:ffo_lines[1]]) + "\n")
            args = submit.format(ffo=path)
        local = os.path.join(g.data, "local-worker.token")
        for i, dev in enumerate(devices):
            g.worker(dev, g.token("w%d" % (i + 1)) if mode == "own" else local)
        g.online(len(devices))
        workload = args.split()[0]
        job = g.ctl("submit", *shlex.split(args)).strip()
        t_submit = time.time()
        polls = []
        end = time.monotonic() + a.timeout
        while True:
            st = json.loads(g.ctl("status", job, "--json"))[0]
            polls.append((time.time(), st.get("units_done") or 0, st.get("total_units") or 0))
            if st["state"] in ("done", "failed", "cancelled"):
                break
            if time.monotonic() > end:
                raise Failed("timeout after %d s at %s of %s units (raise --timeout)"
                             % (a.timeout, st.get("units_done"), st.get("total_units")))
            if any(p.poll() is not None for p in g.workers):
                raise Failed("a worker exited during the job:\n" + g.tail())
            time.sleep(0.2)
        if st["state"] != "done":
            raise Failed("job %s ended %s: %s\n%s" % (job, st["state"], st.get("reason"), g.tail()))
        created = st.get("created_at") or t_submit
        wall = st["finished_at"] - created
        total = st.get("total_units") or polls[-1][2]
        db = sqlite3.connect("file:%s/gpud.db?mode=ro" % g.data, uri=True)
        t90, how = t90_of(db, int(job), total, created, polls)
        granted = db.execute("SELECT count(DISTINCT worker_id) FROM events WHERE job_id = ? AND kind = 'grant'",
                             (int(job),)).fetchone()[0]
        leases = db.execute("SELECT count(*) FROM events WHERE job_id = ? AND kind = 'grant'",
                            (int(job),)).fetchone()[0]
        # Each worker's share: the units of the leases whose result it uploaded.
        shares = {}
        try:
            for wid, units in db.execute(
                    "SELECT e.worker_id, sum(l.units) FROM events e JOIN leases l ON l.id = e.lease_id "
                    "WHERE e.job_id = ? AND e.kind = 'result' GROUP BY e.worker_id", (int(job),)):
                shares[str(wid)] = units
        except sqlite3.Error:
            pass
        db.close()
        rec.update({"ok": True, "wall_s": round(wall, 3), "t90_s": round(min(t90, wall), 3), "t90_from": how,
                    "tail_frac": round((wall - t90) / wall, 3) if wall > 0 else None,
                    "workers_granted": granted, "leases": leases, "units": total, "shares": shares,
                    "answer": science(json.loads(g.ctl("result", job, "--json")), workload),
                    "cmd": "gpud %s; %d x gpuworker --device %s (%s credentials); gpuctl submit %s"
                           % (" ".join(g.cmd[7:]), len(devices), "/".join(sorted(set(devices))), mode, submit)})
    except (Failed, subprocess.TimeoutExpired, OSError, ValueError, KeyError) as e:
        rec.update({"ok": False, "error": str(e)[-3000:]})
    finally:
        g.stop(keep=a.keep)
    return rec


def fmt(x):
    return "-" if x is None else ("%.2f" % x if isinstance(x, float) else str(x))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--n", default=None, help="worker counts, e.g. 1,2,4,8,16")
    p.add_argument("--modes", default="own,shared")
    p.add_argument("--jobs", default="graveler,sudoku,ffo,othello,officers")
    p.add_argument("--job", action="append", default=[], help="NAME='WORKLOAD ARGS' replaces a job's size")
    p.add_argument("--gpu-mix", default="", help="CPU worker counts beside cuda:0, e.g. 0,4,15")
    p.add_argument("--two-gpus", action="store_true")
    p.add_argument("--gpu-job", default=GPU_JOB, help="the --gpu-mix job (default: %s)" % GPU_JOB)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--timeout", type=float, default=900, help="seconds one job may take")
    p.add_argument("--out", default="bench-scale.json")
    p.add_argument("--md", help="also write the markdown table here")
    p.add_argument("--log-level", default="warn")
    p.add_argument("--keep", action="store_true", help="keep each run's directory (logs, gpud.db)")
    a = p.parse_args()
    jobs = dict(QUICK if a.quick else JOBS)
    for j in a.job:
        k, _, v = j.partition("=")
        if k not in jobs or not v:
            p.error("--job NAME=ARGS with NAME one of " + ",".join(jobs))
        jobs[k] = (v, jobs[k][1])
    ns = [int(x) for x in (a.n or ("1,2" if a.quick else "1,2,4,8,16")).split(",")]
    for exe in ("daemon/gpud", "worker/gpuworker", "tools/gpuctl"):
        if not os.access(os.path.join(a.build, exe), os.X_OK):
            p.error("no %s in %s (build it first)" % (exe, a.build))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # finally: blocks stop what runs
    runs, bad = [], 0
    for name in [j for j in a.jobs.split(",") if j]:
        if name not in jobs:
            p.error("unknown job " + name)
        submit, lines = jobs[name]
        shown = submit.replace("{ffo}", "FFO#%d-#%d.obf" % lines) if lines else submit
        base = None
        for mode in a.modes.split(","):
            one = None
            for n in ns:
                if n < 2 and "--check full" in submit:  # a second worker must confirm each lease
                    print("%s %s n=%d: skipped (--check full needs 2 workers)" % (name, mode, n), file=sys.stderr)
                    continue
                rec = run_job(a, name, submit, ["cpu:1"] * n, mode, lines)
                rec["submit"] = shown
                if rec["ok"]:
                    if base is None:
                        base = rec
                    if one is None:
                        one = rec
                    rec["answer_same"] = rec["answer"] == base["answer"]
                    rec["speedup"] = round(one["wall_s"] / rec["wall_s"], 2) if one else None
                    bad += not rec["answer_same"]
                else:
                    bad += 1
                runs.append(rec)
                print("%s %s n=%d: %s" % (name, mode, n, "wall %.2f s, 90%% at %.2f s, %d workers got leases%s"
                      % (rec["wall_s"], rec["t90_s"], rec["workers_granted"],
                         "" if rec["answer_same"] else ", ANSWER MISMATCH") if rec["ok"] else
                      "FAILED: " + rec["error"]), file=sys.stderr, flush=True)
    for k in [int(x) for x in a.gpu_mix.split(",") if x != ""]:
        rec = run_job(a, "gpu+cpu", a.gpu_job, ["cuda:0"] + ["cpu:1"] * k, "own")
        runs.append(rec)
        bad += not rec["ok"]
    if a.two_gpus:
        rec = run_job(a, "two-gpus", TWO_GPU_JOB, ["cuda:0", "cuda:1"], "own")
        runs.append(rec)
        bad += not rec["ok"]
    with open(a.out, "w") as f:
        json.dump(runs, f, indent=1)
    md = ["| job | credentials | N | wall s | speedup vs the smallest N (same credentials) | 90% done at s | tail (last 10%) / wall "
          "| workers with a lease | leases | answer same | command |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        if not r["ok"]:
            md.append("| %s | %s | %d | FAILED | | | | | | | `%s` %s |" % (r["job"], r["mode"], r["n"], r["submit"],
                                                                     r["error"].splitlines()[0][:200]))
            continue
        md.append("| %s | %s | %d | %.2f | %s | %.2f | %s | %d of %d | %d | %s | `%s` |" % (
            r["job"], r["mode"], r["n"], r["wall_s"], fmt(r.get("speedup")), r["t90_s"], fmt(r["tail_frac"]),
            r["workers_granted"], r["n"], r["leases"], "yes" if r.get("answer_same", True) else "**NO**",
            r["cmd"]))
    mixed = [r for r in runs if r["ok"] and r["job"] in ("gpu+cpu", "two-gpus")]
    if mixed:
        md += ["", "| job | devices | wall s | each worker's share of the units (worker id: units) | command |",
               "|---|---|---|---|---|"]
        for r in mixed:
            md.append("| %s | %s | %.2f | %s | `%s` |" % (r["job"], " ".join(r["devices"]), r["wall_s"],
                                                          ", ".join("%s: %s" % kv for kv in r["shares"].items()),
                                                          r["cmd"]))
    text = "\n".join(md) + "\n"
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    print("raw figures: " + a.out, file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
