"""gpuctl wait and watch ride over a gpud restart (issue 35): kill -9 gpud
twice while `wait JOB --timeout 120` runs, over the Unix socket and over
TCP with a viewer credential (once while the job is nearly done), restart
it a second later: both waits say once per outage that gpud is not
answering, exit 0 when the job ends, and `result` gives the reference
answer. `watch` on a terminal shows the retry line, then the jobs again.
A refusal that is no outage still ends at once (a viewer revoked while its
wait runs: exit 1), and `wait --timeout 3` with gpud gone for good exits
with the timeout's status (6) in about 3 s."""
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import threading
import time

from harness import GPUCTL, Cluster, answer_core, check, reference_answer, run, wait_for

RETRY = "gpud is not answering"


def verified(cl, job):
    try:
        return cl.status(job)["leases"]["verified"]
    except Exception:
        return 0


def restart(cl, down=1.5):
    cl.kill_gpud()
    time.sleep(down)
    cl.start_gpud()


class Tty:
    """A command on a terminal of rows x cols, its output read as it comes."""

    def __init__(self, args, rows=30, cols=160):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        self.out = b""
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while True:
            r, _, _ = select.select([self.master], [], [], 0.2)
            if not r:
                if self.p.poll() is not None:
                    return
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: the terminal's last writer is gone
                return
            if not chunk:
                return
            with self.lock:
                self.out += chunk

    def text(self):
        with self.lock:
            return self.out.decode(errors="replace")

    def close(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(10)
        self.reader.join(10)
        os.close(self.master)
        return self.p.returncode


def test_ride_restart(cl: Cluster):
    units = cl.start_gpud_leases(0.3, "0.5", "3")
    leases = 24
    battles = units * leases
    viewer, _, _ = cl.add_token("rider", role="viewer")
    far = [GPUCTL, "--connect", "127.0.0.1:%d" % cl.port, "--credential", viewer]
    job = cl.submit("graveler", battles=battles, seed=41)
    cl.start_worker("cpu:1", ["--checkpoint-interval", "0.1"])

    errs = [os.path.join(cl.dir, "wait-%s.err" % k) for k in ("local", "far")]
    waits = [subprocess.Popen(base + ["wait", str(job), "--timeout", "120"], stdout=subprocess.DEVNULL,
                              stderr=open(e, "w"))
             for base, e in (([GPUCTL, "--socket", cl.sock], errs[0]), (far, errs[1]))]
    # Both have reached gpud (a wait's first line comes at once in a log).
    wait_for(lambda: all(os.path.getsize(e) > 0 for e in errs), 30, "both waits' first line")
    wait_for(lambda: verified(cl, job) >= 3, 120, "three verified leases")
    restart(cl)
    wait_for(lambda: verified(cl, job) >= leases - 6 or cl.status(job)["state"] == "done", 120,
             "the job nearly done")
    # A fast machine may finish it first: then the waits saw one outage.
    outages = 1 if cl.status(job)["state"] == "done" else 2
    restart(cl)
    for p, e in zip(waits, errs):
        rc = p.wait(150)
        err = open(e).read()
        check(rc == 0, "wait over a gpud restart: exit %d\n%s" % (rc, err))
        check(err.count(RETRY) == outages and "retrying" in err and err.count("gpud answers again") == outages,
              "wait says once per outage that gpud is away, and that it is back:\n" + err)
    ref = reference_answer("graveler", battles=battles, seed=41)
    check(answer_core(cl.result(job)["answer"]) == ref, "answer after two restarts differs from the reference")

    # watch on a terminal: the jobs, the retry line while gpud is away,
    # the jobs again once it is back.
    tty = Tty([GPUCTL, "--socket", cl.sock, "watch", "--interval", "0.2"])
    try:
        row = "graveler"
        wait_for(lambda: row in tty.text(), 20, "watch's first screen")
        cl.kill_gpud()
        wait_for(lambda: RETRY in tty.text(), 20, "watch's retry line")
        check(tty.p.poll() is None, "watch ended when gpud went away: " + tty.text()[-2000:])
        time.sleep(1.5)
        cl.start_gpud()
        wait_for(lambda: row in tty.text().rsplit(RETRY, 1)[1], 30, "watch showing the job again")
        check(tty.p.poll() is None, "watch ended: " + tty.text()[-2000:])
        before, after = tty.text().rsplit(RETRY, 1)
        screen = before.rsplit("\x1b[2J", 1)[1] + RETRY + after.split("\x1b[", 1)[0]
        check("retrying" in screen and "cannot reach gpud" in screen,
              "watch's screen while gpud is away:\n" + screen)
    finally:
        rc = tty.close()
    check(rc in (0, -signal.SIGINT, 128 + signal.SIGINT), "watch after Ctrl-C: %s" % rc)

    # A refusal is no outage: a viewer revoked while its wait runs ends
    # at once with the refusal's status.
    big = cl.submit("graveler", battles=units * 4096, seed=7)
    r = subprocess.Popen(far + ["wait", str(big), "--timeout", "60"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    cl.ctl("token", "revoke", "rider")
    t0 = time.monotonic()
    _, err = r.communicate(timeout=30)
    check(r.returncode == 1 and RETRY not in err and time.monotonic() - t0 < 5,
          "a revoked viewer's wait: exit %d in %.1f s\n%s" % (r.returncode, time.monotonic() - t0, err))

    # gpud gone for good: wait --timeout 3 ends with the timeout's status.
    err_path = os.path.join(cl.dir, "wait-gone.err")
    t0 = time.monotonic()
    p = subprocess.Popen([GPUCTL, "--socket", cl.sock, "wait", str(big), "--timeout", "3"],
                         stdout=subprocess.DEVNULL, stderr=open(err_path, "w"))
    wait_for(lambda: os.path.getsize(err_path) > 0, 10, "wait's first line")
    cl.kill_gpud()
    rc = p.wait(30)
    took = time.monotonic() - t0
    err = open(err_path).read()
    check(rc == 6 and 2.5 < took < 6 and RETRY in err and "timed out waiting for job" in err,
          "wait --timeout 3, gpud gone: exit %d in %.1f s\n%s" % (rc, took, err))


if __name__ == "__main__":
    run(test_ride_restart)
