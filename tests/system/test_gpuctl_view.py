"""gpuctl renders issue 23's control API as the contract fixes it, against a
stand-in gpud on a Unix socket that answers with contract-shaped records:
names, priorities, queued jobs and their reasons, running jobs' rate and
ETA, finished jobs' elapsed time and average rate, "hidden", history with
attempts and verification failures, workers' host, threads and rate in
their job's unit; and that gpuctl's requests carry --all, --limit, --name,
--priority and the priority command as the contract says."""
import json
import os
import re
import socket
import struct
import subprocess
import threading
import time

from harness import GPUCTL, T, Cluster, check, frame, run
from test_gpuctl_cli import on_tty

NOW = time.time()


def job(i, state, **kw):
    j = {"id": i, "name": None, "workload": "graveler", "unit_name": "battles", "state": state,
         "priority": 0, "params": {}, "total_units": 10 ** 8, "units_done": 0, "units_verified": 0,
         "rate": 0.0, "eta_s": None, "reason": None, "damaged": None, "check": "sample",
         "leases": {"pending": 1, "leased": 0, "done": 0, "verified": 0, "failed": 0},
         "replicas": {}, "workers": [], "created_at": NOW - 3600 + i, "submitted_at": NOW - 3600 + i,
         "started_at": None, "finished_at": None, "elapsed_s": 0, "avg_rate": 0, "attempts": 0,
         "verify_failures": 0}
    j.update(kw)
    return j


JOBS = [job(1, "done", name="warmup", total_units=10 ** 9, units_done=10 ** 9, units_verified=10 ** 9,
            started_at=NOW - 3000, finished_at=NOW - 2938, elapsed_s=62.0, avg_rate=1.6e7, attempts=5,
            verify_failures=1),
        job(2, "running", name="big-run", priority=10, total_units=10 ** 9, units_done=382 * 10 ** 6,
            units_running=48 * 10 ** 6, rate=5.49e7, eta_s=600.0, started_at=NOW - 100, elapsed_s=100.0, avg_rate=4.3e6,
            attempts=2, leases={"pending": 3, "leased": 1, "done": 0, "verified": 2, "failed": 0},
            workers=["node7-gpu0"]),
        job(3, "paused", reason="held"),
        job(4, "queued", workload="sudoku", unit_name="gangsters", reason="no eligible worker"),
        job(5, "failed", reason="lease 3 failed 3 times", finished_at=NOW - 50, elapsed_s=30.0,
            started_at=NOW - 80)] + \
       [job(i, "queued", reason="behind job 2", name="sweep-%02d" % i) for i in range(6, 21)]
HISTORY = [JOBS[4], JOBS[0]]
WORKERS = [{"id": 1, "name": "fleet@node7-gpu0", "credential": "fleet",
            "instance": "node7-gpu0", "device": "cuda:0 NVIDIA H100", "online": True,
            "quarantined": False, "failures": 0, "foreign_msgs": 0, "stalls": 0, "leases_done": 12,
            "units_done": 123456789, "rate": 5.49e7, "last_seen": NOW - 2, "lease": 40, "job": 2,
            "job_unit": "battles", "threads": 16, "host": "node7", "trust_after": 0, "trusted": True,
            "streak": 0},
           # An older gpud's row: no credential, shown as "-".
           {"id": 2, "name": "idle-cpu", "device": "cpu", "online": False, "quarantined": False,
            "failures": 0, "foreign_msgs": 0, "stalls": 0, "leases_done": 0, "units_done": 0, "rate": 0,
            "last_seen": NOW - 7200, "lease": None, "job": None, "job_unit": None, "host": "node9",
            "trust_after": 0, "trusted": True, "streak": 0}]


class FakeGpud:
    """Answers CTL_REQ frames on a Unix socket; keeps every request."""

    def __init__(self, path):
        self.requests = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(16)
        threading.Thread(target=self.serve, daemon=True).start()

    def answer(self, req):
        cmd = req.get("cmd")
        if cmd == "status" and "job" in req:
            js = [j for j in JOBS if j["id"] == req["job"]]
            return {"ok": True, "jobs": js} if js else {"ok": False, "error": "no job %d" % req["job"]}
        if cmd == "status":
            return {"ok": True, "jobs": JOBS, "hidden": 0 if req.get("all") else 3}
        if cmd == "history":
            return {"ok": True, "jobs": HISTORY[:req.get("limit", 100)]}
        if cmd == "workers":
            return {"ok": True, "workers": WORKERS}
        if cmd == "submit":
            return {"ok": True, "job": 21}
        if cmd == "priority" and not any(j["id"] == req["job"] for j in JOBS):
            return {"ok": False, "error": "no job %d" % req["job"]}
        if cmd == "priority":
            return {"ok": True, "job": req["job"], "priority": req["priority"]}
        return {"ok": False, "error": "unknown command '%s'" % cmd}

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                f = conn.makefile("rb")
                while True:
                    head = f.read(16)
                    if len(head) < 16:
                        break
                    _, _, _, _, jl, bl = struct.unpack(">IBBHII", head)
                    req = json.loads(f.read(jl))
                    f.read(bl)
                    self.requests.append(req)
                    conn.sendall(frame(T["CTL_REPLY"], self.answer(req)))

    def close(self):
        self.sock.close()


def test_gpuctl_view(cl: Cluster):
    os.makedirs(cl.dir, exist_ok=True)
    path = os.path.join(cl.dir, "fake.sock")
    fake = FakeGpud(path)
    try:
        def ctl(*args):
            return subprocess.run([GPUCTL, "--socket", path] + list(args), capture_output=True,
                                  text=True, timeout=30)

        r = ctl("status")
        out = r.stdout.rstrip("\n").split("\n")
        check(r.returncode == 0 and len(out) == 22, "status: %d lines\n%s%s" % (len(out), r.stdout, r.stderr))
        rows = {int(line.split()[0]): line for line in out[1:21]}
        check(re.search(r"warmup +- +graveler +done +100\.0% of 1\.00 G battles +16\.0 M/s avg +1m02s +-",
                        rows[1]), "a finished job: elapsed and average rate: " + rows[1])
        # Progress from heartbeats, and the part of it that is saved.
        check(re.search(r"big-run +- +graveler +running +43\.0% of 1\.00 G battles \(38\.2% saved\) +54\.9 M/s "
                        r"+1m40s +10m00s", rows[2]), "a running job: progress, rate and ETA: " + rows[2])
        check(re.search(r"paused +0\.0% of 100 M battles +- +- +- +held$", rows[3]), "paused: " + rows[3])
        check(re.search(r"sudoku +queued .* no eligible worker$", rows[4]), "queued: " + rows[4])
        check(all(re.search(r"sweep-%02d .* queued .* behind job 2$" % i, rows[i]) for i in range(6, 21)),
              "queued behind job 2:\n" + "\n".join(out))
        check(out[-1] == "(3 jobs finished more than a day ago: gpuctl status --all)", "footer: " + out[-1])
        starts = {line.index("graveler") for line in out[1:21] if "graveler" in line}
        check(len(starts) == 1, "WORKLOAD column moves:\n" + r.stdout)
        ctl("status", "--all")
        check(fake.requests[-1] == {"cmd": "status", "all": True}, "--all: %s" % fake.requests[-1])
        r = ctl("status", "--state", "queued,paused", "--format", "id,priority,state", "--no-header")
        check(len(r.stdout.split("\n")) == 18 and r.stdout.startswith(" 3  0  paused\n"), "filtered: %r" % r.stdout)

        js = json.loads(ctl("status", "--json", "--state", "running").stdout)
        check([j["id"] for j in js] == [2] and js[0]["rate"] == 5.49e7, "--json --state: %s" % js)
        check(ctl("status", "2", "--format", "id,state", "--no-header").stdout == "2  running\n",
              "status JOB --format: a line")
        long = ctl("status", "2").stdout
        check('job 2 "big-run"  graveler  running' in long and "priority 10" in long and
              "attempts 2" in long and "average 4.30 M/s" in long and "workers: node7-gpu0" in long,
              "status JOB: " + long)

        r = ctl("history", "--limit", "5")
        check(fake.requests[-1] == {"cmd": "history", "limit": 5}, "history request: %s" % fake.requests[-1])
        h = r.stdout.split("\n")
        check(h[0].split() == ["ID", "NAME", "USER", "WORKLOAD", "STATE", "SUBMITTED", "STARTED", "FINISHED",
                               "ELAPSED", "UNITS", "AVG_RATE", "ATTEMPTS", "VFAIL"], "history head: " + h[0])
        check(re.search(r"^ 5 .* failed .* 30s .* 0 battles .* 0 +0$", h[1]) and
              re.search(r"^ 1 +warmup .* done .* 1m02s +1\.00 G battles +16\.0 M/s +5 +1$", h[2]),
              "history rows:\n" + r.stdout)

        w = ctl("workers").stdout
        check(re.search(r"fleet@node7-gpu0 +fleet +online +cuda:0 NVIDIA H100 +16 +40 \(job 2\) +54\.9 M battles/s", w)
              and re.search(r"idle-cpu +- +offline .* 2h00m ago +node9$", w, re.M), "workers:\n" + w)

        r = ctl("submit", "graveler", "--name", "nightly", "--priority", "-3", "--battles", "1e9",
                "--check=full")
        check(r.stdout == "21\n" and fake.requests[-1] == {
            "cmd": "submit", "workload": "graveler", "name": "nightly", "priority": -3,
            "args": {"battles": "1e9", "check": "full"}}, "submit request: %s" % fake.requests[-1])
        r = ctl("priority", "2", "-5")
        check(r.stdout == "job 2: priority -5\n" and
              fake.requests[-1] == {"cmd": "priority", "job": 2, "priority": -5}, "priority: %s" % r.stdout)
        r = ctl("priority", "99", "1")
        check(r.returncode == 4, "priority of no job: %d" % r.returncode)

        rc, screen = on_tty([GPUCTL, "--socket", path, "watch", "--count", "1"], 15, 80)
        lines = screen.replace("\x1b[H\x1b[2J", "").replace("\r", "").rstrip("\n").split("\n")
        check(rc == 0 and len(lines) <= 14 and max(map(len, lines)) <= 80 and
              any(re.fullmatch(r"\+\d+ more", l) for l in lines) and "node7-gpu0" in screen,
              "watch on 15x80:\n" + "\n".join(lines))
    finally:
        fake.close()


if __name__ == "__main__":
    run(test_gpuctl_view)
