"""Progress never goes backwards (issue 23): a Graveler job's worker is
paused, resumed and killed (-9) mid-job while a thread samples
`gpuctl status --json`. units_done never decreases, and whenever no lease
is held it equals the verified and done units plus the checkpoints stored
in the database."""
import sqlite3
import threading
import time

from harness import Cluster, check, run, wait_for


def stored(cl, job):
    """(leases held, verified + done units + stored checkpoints) from the
    database, as gpud committed them."""
    db = sqlite3.connect("file:%s/gpud.db?mode=ro" % cl.data, uri=True, timeout=10)
    try:
        return db.execute("SELECT coalesce(sum(state = 1), 0), coalesce(sum(CASE WHEN state IN (2, 3) "
                          "THEN units ELSE checkpoint_units END), 0) FROM leases "
                          "WHERE job_id = ? AND replica_of IS NULL", (job,)).fetchone()
    finally:
        db.close()


def quiet_check(cl, job, what):
    """No lease held: status equals the database's sum (read before and
    after, so that nothing moved in between)."""
    before = stored(cl, job)
    st = cl.status(job)
    after = stored(cl, job)
    check(before == after and before[0] == 0 and st["units_running"] == 0,
          "%s: not quiet: %s %s %s" % (what, before, after, st["leases"]))
    check(st["units_done"] == before[1], "%s: units_done %d, stored checkpoints and results %d"
          % (what, st["units_done"], before[1]))
    return st["units_done"]


class Sampler(threading.Thread):
    """units_done of one job, every 50 ms, until stopped."""

    def __init__(self, cl, job):
        super().__init__(daemon=True)
        self.cl, self.job = cl, job
        self.samples = []
        self.error = None
        self.stop = threading.Event()

    def run(self):
        try:
            while not self.stop.is_set():
                st = self.cl.status(self.job)
                self.samples.append((time.time(), st["units_done"], st["state"]))
                time.sleep(0.05)
        except Exception as e:  # reported by the test
            self.error = e


def test_progress(cl: Cluster):
    units = cl.start_gpud_leases(3, "0.3", "1.5")
    job = cl.submit("graveler", battles=3 * units, seed=21)
    sampler = Sampler(cl, job)
    sampler.start()
    try:
        w = cl.start_worker("cpu:1", ["--checkpoint-interval", "0.3"])
        wait_for(lambda: cl.status(job)["units_done"] > 0, 60, "a first checkpoint")

        # Pause: the worker checkpoints and releases; the work is kept.
        cl.ctl("pause", str(job))
        wait_for(lambda: cl.status(job)["leases"]["leased"] == 0, 30, "the release on pause")
        paused = quiet_check(cl, job, "paused")
        check(paused > 0, "a paused job shows the checkpoint it resumes from")
        st = cl.status(job)
        check(st["state"] == "paused" and st["reason"].startswith("held"), "paused: %s" % st)

        cl.ctl("resume", str(job))
        wait_for(lambda: cl.status(job)["units_done"] > paused, 60, "progress after resume")

        # kill -9: the lease expires back to pending at its checkpoint.
        w.kill()
        w.wait()
        wait_for(lambda: "lease expired" in cl.log_text("gpud"), 30, "the lease to expire")
        wait_for(lambda: cl.status(job)["leases"]["leased"] == 0, 30, "no lease held")
        killed = quiet_check(cl, job, "after the kill")
        st = cl.status(job)
        check(st["state"] == "queued" and st["reason"].startswith("no eligible worker"),
              "a job without workers: %s" % st)

        cl.start_worker("cpu:1", ["--checkpoint-interval", "0.3"])
        cl.wait_job(job, timeout=300)
        final = quiet_check(cl, job, "done")
        check(final == 3 * units and killed <= final, "final %d of %d" % (final, 3 * units))
    finally:
        sampler.stop.set()
        sampler.join(30)
    check(sampler.error is None, "sampling status failed: %s" % sampler.error)
    s = sampler.samples
    check(len(s) >= 20, "too few samples: %d" % len(s))
    for (t0, a, s0), (t1, b, s1) in zip(s, s[1:]):
        check(b >= a, "units_done went back from %d (%s) to %d (%s) at +%.2fs"
              % (a, s0, b, s1, t1 - s[0][0]))
    states = {x[2] for x in s}
    check({"running", "paused", "queued"} <= states, "states seen: %s" % states)
    print("samples %d, paused at %d, after the kill %d, final %d" % (len(s), paused, killed, final))


if __name__ == "__main__":
    run(test_progress)
