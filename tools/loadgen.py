#!/usr/bin/env python3
"""Load generator: many simulated workers on loopback against one gpud.

Each simulated worker is a worker of its own (its own HELLO "instance"): it
opens the secure channel, logs in (HMAC challenge), then, in one of two modes:

  lease ops (default): CLAIM a lease, send --heartbeats HEARTBEATs, RELEASE
      it, as fast as gpud answers: claims, heartbeats and releases per second
      (gpud acknowledges each only after its commit is durable).
  job (--job "WORKLOAD ARGS..."): once every worker is logged in, loadgen
      submits the job and the workers run it as a fleet would: each lease
      is held units / --rate seconds with a HEARTBEAT every heartbeat_s
      (gpud's WELCOME), and its result, computed exactly by the test tool
      wlrun (build/tests/wlrun) so that gpud's verification passes, is
      uploaded. Reports the job's wall time against the ideal (units / the
      sum of the simulated rates), claims and heartbeats per second held,
      and gpud's CPU seconds, busiest thread and peak RSS.

  loadgen.py --connect 127.0.0.1:PORT --token-file FILE [--workers 100]
             [--seconds 10] [--heartbeats 4] [--json]
  loadgen.py --start-gpud BUILD [--gpud-arg=--lease-units=4096 ...]
             --workers 10000 --procs 2 --job "graveler --battles 8e7"
             --rate 2000 [--json] [--out FILE]

--start-gpud runs a private gpud (temporary directory, descriptor limit
raised, --max-connections and --max-connections-per-address sized to
--workers) and stops it at the end. --procs spreads the workers over that
many processes (Python's TLS-less secure channel costs CPU per message).
In lease-ops mode the job to lease from must exist (e.g. gpuctl submit
graveler --battles 1e15 with gpud --lease-units 1048576); with --start-gpud
loadgen submits that one.
"""
import argparse
import asyncio
import json
import os
import resource
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpudchan import Chan  # noqa: E402

MAGIC = 0x47505544
T = {"HELLO": 1, "WELCOME": 4, "CLAIM": 5, "LEASE": 6,
     "NOLEASE": 7, "HEARTBEAT": 8, "HB_ACK": 9, "CHECKPOINT": 10, "RESULT": 11, "ACK": 12,
     "RELEASE": 13, "ERROR": 14}
N = {v: k for k, v in T.items()}
BLOB_RESULT = 2
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


class Stats:
    def __init__(self):
        self.claims = self.heartbeats = self.releases = self.noleases = self.errors = 0
        self.results = self.logins = self.login_fail = self.redone = 0
        self.lat = []
        self.first_error = None

    def fail(self, what):
        self.errors += 1
        if self.first_error is None:
            self.first_error = what


class Conn:
    """Frames over TLS 1.3 (with the credential's key) on an asyncio stream."""

    def __init__(self, r, w, ch):
        self.r, self.w, self.ch, self.buf = r, w, ch, b""

    @classmethod
    async def open(cls, host, port, pin, key, name):
        r, w = await asyncio.open_connection(host, port)
        ch = Chan(pin, key, name)
        w.write(ch.start())
        while not ch.done:
            data = await r.read(65536)
            if not data:
                raise RuntimeError("gpud closed the connection in the TLS handshake")
            out = ch.feed(data)
            if out:
                w.write(out)
        return cls(r, w, ch)

    async def read(self, n):
        while len(self.buf) < n:
            data = await self.r.read(65536)
            if not data:
                raise RuntimeError("gpud closed the connection")
            self.buf += self.ch.open(data)
        out, self.buf = self.buf[:n], self.buf[n:]
        return out


async def send(c, name, msg, binary=b""):
    body = json.dumps(msg).encode()
    c.w.write(c.ch.seal(struct.pack(">IBBHII", MAGIC, 1, T[name], 0, len(body), len(binary)) + body + binary))
    await c.w.drain()


async def recv(c):
    head = await c.read(16)
    magic, ver, ftype, flags, jl, bl = struct.unpack(">IBBHII", head)
    if magic != MAGIC or jl > (1 << 20) or bl > (256 << 20):
        raise RuntimeError("bad frame from gpud")
    body = await c.read(jl)
    if bl:
        await c.read(bl)
    return N.get(ftype, str(ftype)), json.loads(body)


async def expect(c, name):
    got, msg = await recv(c)
    if got != name:
        raise RuntimeError("expected %s, got %s %s" % (name, got, msg))
    return msg


def blob(workload, lease, epoch, raw):
    """A result blob as the worker packs it (common/blob.h), zlib-packed."""
    import zlib
    comp = zlib.compress(raw, 1)
    head = struct.pack("<4sHH16sQQQQI", b"GPBL", 1, BLOB_RESULT, workload.encode().ljust(16, b"\0"),
                       lease, epoch, len(raw), len(comp), zlib.crc32(comp))
    return head + struct.pack("<I", zlib.crc32(head)) + comp


async def login(host, port, cred, instance, workloads, gate):
    name, secret, pin = cred
    async with gate:  # gpud's listen backlog and --login-timeout: a few handshakes at a time
        c = await Conn.open(host, port, pin, secret, name)
        # gpud knows the credential by the key the TLS handshake proved.
        await send(c, "HELLO", {"proto": 1, "worker": name, "device": "cpu", "workloads": workloads,
                                "cuda": False, "threads": 1, "instance": instance})
        welcome = await expect(c, "WELCOME")
    return c, welcome


async def lease_ops(c, stop_at, hb_per_lease, st):
    while time.monotonic() < stop_at:
        t0 = time.monotonic()
        await send(c, "CLAIM", {})
        got, msg = await recv(c)
        if got == "NOLEASE":
            st.noleases += 1
            await asyncio.sleep(0.05)
            continue
        if got != "LEASE":
            st.fail("claim answered %s %s" % (got, msg))
            raise RuntimeError("claim answered %s %s" % (got, msg))
        st.claims += 1
        st.lat.append(time.monotonic() - t0)
        lease, epoch = msg["lease"], msg["epoch"]
        for k in range(hb_per_lease):
            t0 = time.monotonic()
            await send(c, "HEARTBEAT", {"lease": lease, "epoch": epoch, "units_done": k})
            ack = await expect(c, "HB_ACK")
            if ack["action"] != "continue":
                st.fail("heartbeat answered %s" % ack)
            st.heartbeats += 1
            st.lat.append(time.monotonic() - t0)
        await send(c, "RELEASE", {"lease": lease, "epoch": epoch})
        ack = await expect(c, "ACK")
        if ack.get("what") != "release":
            st.fail("release answered %s" % ack)
        st.releases += 1


async def wlrun(a, lease, sem, tmp):
    """The lease's exact result bytes, from the test tool wlrun."""
    out = os.path.join(tmp, "r%d.%d.%d" % (os.getpid(), lease["lease"], lease["epoch"]))
    async with sem:
        p = await asyncio.create_subprocess_exec(
            a.wlrun, lease["workload"], json.dumps(lease["params"]), json.dumps(lease["spec"]), out,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        _, err = await p.communicate()
    if p.returncode != 0:
        raise RuntimeError("wlrun failed on lease %d: %s" % (lease["lease"], err.decode().strip()))
    with open(out, "rb") as f:
        raw = f.read()
    os.unlink(out)
    return raw


async def job_worker(a, c, welcome, st, done, sem, tmp):
    hb = float(welcome["heartbeat_s"])
    while not done.is_set():
        t0 = time.monotonic()
        await send(c, "CLAIM", {})
        got, msg = await recv(c)
        if got == "NOLEASE":
            st.noleases += 1
            try:
                await asyncio.wait_for(done.wait(), min(float(msg.get("retry_s", 1)), a.retry_cap))
            except asyncio.TimeoutError:
                pass
            continue
        if got != "LEASE":
            raise RuntimeError("claim answered %s %s" % (got, msg))
        st.claims += 1
        st.lat.append(time.monotonic() - t0)
        lease, epoch, units = msg["lease"], msg["epoch"], int(msg["units"])
        result = asyncio.ensure_future(wlrun(a, msg, sem, tmp))
        end = time.monotonic() + units / a.rate
        stopped = False
        while True:
            now = time.monotonic()
            if now >= end:
                break
            await asyncio.sleep(min(hb, end - now))
            if time.monotonic() >= end:
                break
            done_units = int(units * (1 - (end - time.monotonic()) * a.rate / units))
            t1 = time.monotonic()
            await send(c, "HEARTBEAT", {"lease": lease, "epoch": epoch,
                                        "units_done": max(0, min(units - 1, done_units))})
            ack = await expect(c, "HB_ACK")
            st.heartbeats += 1
            st.lat.append(time.monotonic() - t1)
            if ack["action"] != "continue":  # taken back, revoked: hand it back whole
                stopped = True
                break
        if stopped:
            result.cancel()
            await send(c, "RELEASE", {"lease": lease, "epoch": epoch})
            await expect(c, "ACK")
            st.releases += 1
            st.redone += 1
            continue
        raw = await result
        await send(c, "RESULT", {"lease": lease, "epoch": epoch, "units_done": units,
                                 "seconds": units / a.rate}, blob(msg["workload"], lease, epoch, raw))
        got, ack = await recv(c)
        if got != "ACK" or ack.get("what") != "result":
            st.fail("result of lease %d answered %s %s" % (lease, got, ack))
            continue
        st.results += 1


def load_cred(path):
    fields = dict(line.split("=", 1) for line in open(path).read().splitlines()
                  if "=" in line and not line.startswith("#"))
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    if "token" in fields:
        sys.exit("loadgen: %s is a credential of the old kind: make a new one (gpuctl token add)" % path)
    return (fields["name"], bytes.fromhex(fields["key"]), bytes.fromhex(fields["gpud-key"]))


def raise_nofile(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(want, soft)), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


async def shard_async(a):
    """One process's workers: indexes shard, shard+procs, ... < workers."""
    host, port = a.connect.rsplit(":", 1)
    cred = load_cred(a.token_file)
    mine = list(range(a.shard, a.workers, a.procs))
    raise_nofile(len(mine) + 256)
    st = Stats()
    gate = asyncio.Semaphore(a.login_parallel)
    workloads = [a.job.split()[0]] if a.job else ["graveler"]
    t0 = time.monotonic()
    logins = await asyncio.gather(*[login(host, int(port), cred, "loadgen-%d/%d" % (os.getpid(), i),
                                          workloads, gate) for i in mine], return_exceptions=True)
    conns = [x for x in logins if not isinstance(x, BaseException)]
    st.logins = len(conns)
    st.login_fail = len(logins) - len(conns)
    bad = [x for x in logins if isinstance(x, BaseException)]
    if bad:
        st.fail("login: %r" % bad[0])
    login_s = time.monotonic() - t0
    if a.parent:  # tell the parent, wait for its go
        print(json.dumps({"ready": st.logins, "login_s": login_s}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    t0 = time.monotonic()
    if a.job:
        done = asyncio.Event()
        sem = asyncio.Semaphore(a.wlrun_parallel)
        tmp = tempfile.mkdtemp(prefix="loadgen-")

        async def watch():  # the parent writes a second line when the job is over
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
            done.set()
        watcher = asyncio.ensure_future(watch())
        tasks = [asyncio.ensure_future(job_worker(a, c, w, st, done, sem, tmp)) for c, w in conns]
        # Over when the job is (a worker may wait on a held NOLEASE) or every worker failed.
        await asyncio.wait([watcher, asyncio.ensure_future(asyncio.gather(*tasks, return_exceptions=True))],
                           return_when=asyncio.FIRST_COMPLETED)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        res = [t.exception() for t in tasks if not t.cancelled() and t.exception() is not None]
        watcher.cancel()
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        stop_at = t0 + a.seconds
        res = await asyncio.gather(*[lease_ops(c, stop_at, a.heartbeats, st) for c, _ in conns],
                                   return_exceptions=True)
    for x in res:
        if isinstance(x, BaseException):
            st.fail(repr(x))
    for c, _ in conns:
        c.w.close()
    return st, time.monotonic() - t0, login_s


def shard_main(a):
    st, dt, login_s = asyncio.run(shard_async(a))
    print(json.dumps({"claims": st.claims, "heartbeats": st.heartbeats, "releases": st.releases,
                      "results": st.results, "noleases": st.noleases, "errors": st.errors,
                      "first_error": st.first_error, "logins": st.logins, "login_fail": st.login_fail,
                      "redone": st.redone, "seconds": dt, "login_s": login_s,
                      "lat": [round(x, 5) for x in st.lat]}), flush=True)


# -- the parent: gpud, shards, the job, gpud's costs --

def proc_cpu(pid):
    """gpud's CPU seconds (user+system), its busiest thread's, peak RSS in MiB."""
    tck = os.sysconf("SC_CLK_TCK")

    def cpu(path):
        f = open(path).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / tck
    total = cpu("/proc/%d/stat" % pid)
    threads = {}
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            name = open("/proc/%d/task/%s/comm" % (pid, t)).read().strip()
            threads[t + ":" + name] = cpu("/proc/%d/task/%s/stat" % (pid, t))
        except OSError:
            pass
    hwm = rss = 0
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) / 1024
        elif line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
    return total, threads, hwm, rss


class Gpud:
    def __init__(self, build, workers, args):
        self.dir = tempfile.mkdtemp(prefix="loadgen-gpud-")
        self.build = build
        want = workers + 512
        cmd = [os.path.join(build, "daemon", "gpud"), "--data", os.path.join(self.dir, "d"),
               "--listen", "127.0.0.1:0", "--socket", os.path.join(self.dir, "s"), "--http", "off",
               "--max-connections", str(workers + 64), "--max-connections-per-address", str(workers + 64),
               "--max-connections-per-credential", str(workers + 64), "--max-prelogin", str(workers + 64),
               "--max-prelogin-per-address", str(workers + 64), "--log-level", "warn"] + list(args)
        self.cmd = cmd
        self.log = open(os.path.join(self.dir, "gpud.log"), "w")
        self.p = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                  preexec_fn=lambda: raise_nofile(want))
        addr = os.path.join(self.dir, "d", "gpud.addr")
        for _ in range(200):
            if os.path.exists(addr) and os.path.exists(os.path.join(self.dir, "s")):
                break
            if self.p.poll() is not None:
                raise RuntimeError("gpud exited: %s" % open(os.path.join(self.dir, "gpud.log")).read())
            time.sleep(0.05)
        self.addr = open(addr).read().strip()
        self.token = os.path.join(self.dir, "d", "local-worker.token")

    def ctl(self, *args):
        r = subprocess.run([os.path.join(self.build, "tools", "gpuctl"), "--socket",
                            os.path.join(self.dir, "s")] + list(args), capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0:
            raise RuntimeError("gpuctl %s: %s" % (" ".join(args), r.stderr.strip()))
        return r.stdout

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def parent_main(a):
    gpud = None
    kids = []
    try:
        if a.start_gpud:
            gpud = Gpud(a.start_gpud, a.workers, a.gpud_arg)
            a.connect, a.token_file = gpud.addr, gpud.token
        if not a.connect or not a.token_file:
            sys.exit("loadgen: --connect and --token-file, or --start-gpud, are needed")
        if a.job and not gpud:
            sys.exit("loadgen: --job needs --start-gpud (it submits the job and watches it)")
        pid = gpud.p.pid if gpud else a.gpud_pid
        me = [sys.executable, os.path.abspath(__file__), "--connect", a.connect, "--token-file", a.token_file,
              "--workers", str(a.workers), "--procs", str(a.procs), "--seconds", str(a.seconds),
              "--heartbeats", str(a.heartbeats), "--rate", str(a.rate), "--wlrun", a.wlrun,
              "--wlrun-parallel", str(a.wlrun_parallel), "--login-parallel", str(a.login_parallel),
              "--retry-cap", str(a.retry_cap), "--parent"] + (["--job", a.job] if a.job else [])
        kids = [subprocess.Popen(me + ["--shard", str(i)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True) for i in range(a.procs)]
        ready = [json.loads(k.stdout.readline() or '{"ready": 0, "login_s": 0}') for k in kids]
        c0 = proc_cpu(pid) if pid else None
        t0 = time.monotonic()
        job = None
        if a.job:
            job = gpud.ctl("submit", *shlex.split(a.job)).strip()
        elif gpud:  # lease ops need a job of many leases to lease from
            gpud.ctl("submit", "graveler", "--battles", "1e15")
        for k in kids:
            k.stdin.write("go\n")
            k.stdin.flush()
        samples = []
        status = None
        if a.job:
            deadline = t0 + a.seconds
            ctl_max = 0
            last_print = t0
            while True:
                time.sleep(0.5)
                t1 = time.monotonic()
                try:
                    status = json.loads(gpud.ctl("status", job, "--json"))[0]
                except subprocess.TimeoutExpired:
                    status = status or {"state": "unknown"}
                ctl_max = max(ctl_max, time.monotonic() - t1)
                if pid:
                    cpu = proc_cpu(pid)
                    samples.append((time.monotonic() - t0, cpu[0], max(cpu[1].values())))
                if a.progress and time.monotonic() - last_print >= 5:
                    last_print = time.monotonic()
                    print("%6.1f s: %s units_done %s verified %s, gpud CPU %.1f s, gpuctl status took %.2f s"
                          % (last_print - t0, status.get("state"), status.get("units_done"),
                             status.get("units_verified"), samples[-1][1] - c0[0] if samples else 0,
                             time.monotonic() - t1 - 0), file=sys.stderr, flush=True)
                if status["state"] in ("done", "failed", "cancelled") or time.monotonic() > deadline:
                    break
            out_ctl = round(ctl_max, 2)
            for k in kids:
                k.stdin.write("done\n")
                k.stdin.flush()
        outs = [json.loads(k.stdout.readline() or "{}") for k in kids]
        for k in kids:
            k.wait(60)
        dt = time.monotonic() - t0
        c1 = proc_cpu(pid) if pid else None
        agg = {k: sum(o.get(k, 0) for o in outs) for k in
               ("claims", "heartbeats", "releases", "results", "noleases", "errors", "logins", "login_fail",
                "redone")}
        first = [o.get("first_error") for o in outs if o.get("first_error")]
        lat = sorted(x for o in outs for x in o.get("lat", []))
        out = {"workers": a.workers, "procs": a.procs, "seconds": round(dt, 2),
               "login_s": round(max(r["login_s"] for r in ready), 2),
               "claims_per_s": round(agg["claims"] / dt), "heartbeats_per_s": round(agg["heartbeats"] / dt),
               "releases_per_s": round(agg["releases"] / dt), "results_per_s": round(agg["results"] / dt, 1),
               "lease_ops_per_s": round((agg["claims"] + agg["heartbeats"] + agg["releases"]
                                         + agg["results"]) / dt),
               "p50_ms": round(1e3 * lat[len(lat) // 2], 2) if lat else None,
               "p99_ms": round(1e3 * lat[int(len(lat) * 0.99)], 2) if lat else None,
               "first_error": first[0] if first else None}
        out.update(agg)
        if c0 and c1:
            busiest = max(c1[1], key=lambda t: c1[1][t] - c0[1].get(t, 0))
            out.update({"gpud_cpu_s": round(c1[0] - c0[0], 2), "gpud_cpu_pct": round(100 * (c1[0] - c0[0]) / dt),
                        "gpud_busiest_thread": busiest.split(":", 1)[1],
                        "gpud_busiest_pct": round(100 * (c1[1][busiest] - c0[1].get(busiest, 0)) / dt),
                        "gpud_peak_rss_mib": round(c1[2], 1), "gpud_rss_mib": round(c1[3], 1)})
            # Saturation: the busiest half-second of gpud's busiest thread.
            if len(samples) > 1:
                peak = max((s2[2] - s1[2]) / (s2[0] - s1[0]) for s1, s2 in zip(samples, samples[1:]))
                out["gpud_busiest_peak_pct"] = round(100 * peak)
        if a.job:
            out["gpuctl_status_max_s"] = out_ctl
            units = int(status.get("total_units") or 0)
            wall = (status.get("finished_at") or 0) - (status.get("created_at") or 0)
            ideal = units / (a.workers * a.rate) if units else None
            out.update({"job": a.job, "job_state": status["state"], "units": units,
                        "job_wall_s": round(wall, 2) if status.get("finished_at") else None,
                        "ideal_s": round(ideal, 2) if ideal else None,
                        "wall_over_ideal": round(wall / ideal, 3) if ideal and status.get("finished_at") else None,
                        "result": gpud.ctl("result", job).strip().splitlines()[:3]
                        if status["state"] == "done" else None})
        if gpud:
            out["gpud_cmd"] = " ".join(shlex.quote(x) for x in gpud.cmd[:1] + gpud.cmd[7:])
        out["loadgen_cmd"] = " ".join(shlex.quote(x) for x in sys.argv)
        text = json.dumps(out)
        if a.out:
            with open(a.out, "a") as f:
                f.write(text + "\n")
        if a.json:
            print(text)
        else:
            print("%(workers)d workers (%(procs)d procs), %(seconds)ss: claims %(claims_per_s)d/s, heartbeats "
                  "%(heartbeats_per_s)d/s, releases %(releases_per_s)d/s, results %(results_per_s)s/s; latency "
                  "p50 %(p50_ms)s ms p99 %(p99_ms)s ms; logins %(logins)d in %(login_s)ss; errors %(errors)d"
                  % out)
            if "gpud_cpu_s" in out:
                print("gpud: %(gpud_cpu_s)s CPU s (%(gpud_cpu_pct)s%%), busiest thread %(gpud_busiest_thread)s "
                      "%(gpud_busiest_pct)s%% (peak %(gpud_busiest_peak_pct)s%%), peak RSS %(gpud_peak_rss_mib)s "
                      "MiB" % dict({"gpud_busiest_peak_pct": "-"}, **out))
            if a.job:
                print("job %(job)s: %(job_state)s, %(units)d units in %(job_wall_s)s s, ideal %(ideal_s)s s "
                      "(x%(wall_over_ideal)s)" % out)
            if out["first_error"]:
                print("first error:", out["first_error"])
        bad = out["errors"] or (a.job and status["state"] != "done")
        return 1 if bad else 0
    finally:
        for k in kids:
            if k.poll() is None:
                k.kill()
                k.wait()
        if gpud:
            gpud.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--connect")
    p.add_argument("--token-file")
    p.add_argument("--workers", type=int, default=100)
    p.add_argument("--procs", type=int, default=1, help="processes to spread the workers over")
    p.add_argument("--seconds", type=float, default=10, help="lease-ops run time; in job mode the timeout")
    p.add_argument("--heartbeats", type=int, default=4)
    p.add_argument("--job", help='job mode: submit this job, e.g. "graveler --battles 8e7"')
    p.add_argument("--rate", type=float, default=1000, help="job mode: units/s of each simulated worker")
    p.add_argument("--wlrun", default=os.path.join(ROOT, "build", "tests", "wlrun"))
    p.add_argument("--wlrun-parallel", type=int, default=1, help="wlrun processes at once, per shard")
    p.add_argument("--login-parallel", type=int, default=64, help="handshakes in flight, per shard")
    p.add_argument("--retry-cap", type=float, default=1.0, help="longest wait after NOLEASE")
    p.add_argument("--start-gpud", metavar="BUILD", help="run a private gpud from this build directory")
    p.add_argument("--gpud-arg", action="append", default=[], help="an argument for that gpud (repeat)")
    p.add_argument("--gpud-pid", type=int, help="measure this gpud's CPU and memory")
    p.add_argument("--out", help="append the JSON line to this file")
    p.add_argument("--json", action="store_true")
    p.add_argument("--progress", action="store_true", help="job mode: a line on stderr every 5 s")
    p.add_argument("--shard", type=int, help=argparse.SUPPRESS)
    p.add_argument("--parent", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if not (1 <= a.workers <= 10000 and 1 <= a.procs <= 64 and 0 < a.seconds <= 3600
            and 0 <= a.heartbeats <= 1000 and a.rate > 0 and 1 <= a.wlrun_parallel <= 64
            and 1 <= a.login_parallel <= 4096 and a.retry_cap > 0):
        p.error("out of range")
    if a.shard is not None:
        if not 0 <= a.shard < a.procs:
            p.error("bad shard")
        shard_main(a)
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # parent_main's finally stops what it started
    sys.exit(parent_main(a))


if __name__ == "__main__":
    main()
