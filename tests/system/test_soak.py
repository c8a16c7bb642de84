"""Fault-injection soak: jobs of every workload (graveler, officers, othello,
sudoku), several CPU workers behind a proxy that drops connections and adds
delays, and random kill -9 of gpud and of workers, for SOAK_CYCLES cycles
(default 8; loopback only, bounded in time).
At the end every job's answer equals the reference, and the event log shows
that every acknowledged result was kept (its lease verified)."""
import os
import random
import signal
import socket
import sqlite3
import threading
import time

from harness import answer_core, Cluster, check, reference_answer, run, wait_for


class ChaosProxy:
    """TCP proxy on 127.0.0.1 in front of gpud: forwards bytes, and on
    request drops every connection or delays traffic."""

    def __init__(self, target_port_fn):
        self.target = target_port_fn
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(64)
        self.port = self.ls.getsockname()[1]
        self.conns = []
        self.delay = 0.0
        self.lock = threading.Lock()
        self.stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stop:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            try:
                u = socket.create_connection(("127.0.0.1", self.target()), timeout=5)
            except OSError:
                c.close()
                continue
            with self.lock:
                self.conns += [c, u]
            threading.Thread(target=self._pipe, args=(c, u), daemon=True).start()
            threading.Thread(target=self._pipe, args=(u, c), daemon=True).start()

    def _pipe(self, a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                if self.delay:
                    time.sleep(self.delay)
                b.sendall(d)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def drop_all(self):
        with self.lock:
            conns, self.conns = self.conns, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.stop = True
        self.ls.close()
        self.drop_all()


# The jobs the soak keeps running: each ends, is checked against the
# reference and is submitted again, so a long soak is never idle.
def soak_jobs(units):
    return [("graveler", dict(battles=units * 7 + 99, seed=1000)),
            ("graveler", dict(battles=units * 9 + 1, seed=1001)),
            ("othello", dict(random=units // 64, empties=8, seed=77)),
            ("officers", dict(to=120000)),
            ("sudoku", dict(box="2x3"))]


def test_soak(cl: Cluster):
    """SOAK_CYCLES faults (default 8); every kill cycle is a kill -9 of gpud
    or of a worker. SOAK_KILL_ONLY=1 makes every cycle one (the long soak
    of the README's Security section)."""
    cycles = int(os.environ.get("SOAK_CYCLES", "8"))
    kill_only = os.environ.get("SOAK_KILL_ONLY") == "1"
    rng = random.Random(int(os.environ.get("SOAK_SEED", "20261121")))
    units = cl.start_gpud_leases(0.4, "0.3", "2", extra=["--drain-seconds", "0"])
    specs = soak_jobs(units)
    refs = [reference_answer(wl, **p) for wl, p in specs]
    live = {cl.submit(wl, **p): i for i, (wl, p) in enumerate(specs)}
    checked = 0
    proxy = ChaosProxy(lambda: cl.port)

    def worker():
        port, cl.port = cl.port, proxy.port
        try:
            return cl.start_worker("cpu:1", ["--checkpoint-interval", "0.2"])
        finally:
            cl.port = port

    def check_ended(resubmit):
        """Check the jobs that ended (read from the database, so it works
        while gpud is down) and submit each again."""
        nonlocal checked
        ended = dict(cl.db_rows("SELECT id, state FROM jobs WHERE state >= 2"))
        for job in [j for j in live if j in ended]:
            i = live.pop(job)
            wl, p = specs[i]
            check(ended[job] == 2, "job %d (%s) ended in state %d" % (job, wl, ended[job]))
            check(answer_core(cl.result(job)["answer"], wl) == refs[i],
                  "job %d (%s): answer differs from an undisturbed run" % (job, wl))
            checked += 1
            if resubmit:
                live[cl.submit(wl, **p)] = i

    workers = [worker() for _ in range(3)]
    faults = {"kill gpud": 0, "kill worker": 0, "drop connections": 0, "delay": 0, "stop worker": 0}
    kinds = ["kill gpud", "kill worker"] if kill_only else sorted(faults)
    t0 = time.time()
    for _ in range(cycles):
        time.sleep(rng.uniform(0.3, 1.2))
        f = rng.choice(kinds)
        faults[f] += 1
        if f == "kill gpud":
            cl.kill_gpud()
            time.sleep(rng.uniform(0, 0.5))
            cl.start_gpud()
            check_ended(resubmit=kill_only)
        elif f == "kill worker":
            w = rng.choice(workers)
            w.kill()
            w.wait()
            workers.remove(w)
            cl.workers.remove(w)
            workers.append(worker())
        elif f == "drop connections":
            proxy.drop_all()
        elif f == "delay":
            proxy.delay = rng.uniform(0.05, 0.3)
            time.sleep(1)
            proxy.delay = 0
        else:
            w = rng.choice(workers)
            w.send_signal(signal.SIGSTOP)
            time.sleep(rng.uniform(0.5, 3))
            w.send_signal(signal.SIGCONT)
    for job in list(live):
        cl.wait_job(job, timeout=300)
    check_ended(resubmit=False)
    db = sqlite3.connect("file:%s/gpud.db?mode=ro" % cl.data, uri=True)
    acked = {(r[0], r[1]) for r in db.execute("SELECT lease_id, epoch FROM events WHERE kind = 'result'")}
    verified = {(r[0], r[1]) for r in db.execute("SELECT id, epoch FROM leases WHERE state = 3")}
    rejected = {(r[0], r[1]) for r in db.execute("SELECT lease_id, epoch FROM events WHERE kind = 'verify_failed'")}
    db.close()
    lost = acked - verified - rejected
    check(not lost, "acknowledged results lost: %s" % sorted(lost))
    proxy.close()
    print("soak: %d cycles, faults %s, %d jobs checked exact, %d results acknowledged, %.1f s"
          % (cycles, faults, checked, len(acked), time.time() - t0))


if __name__ == "__main__":
    run(test_soak)
