"""A worker stopped with SIGTERM checkpoints, uploads and releases its lease
at once (no wait for the deadline); pause makes a worker release its lease;
resume continues from the checkpoint; the answer is exact."""
import re
import signal

from harness import Cluster, check, run, wait_for


def test_pause_sigterm(cl: Cluster):
    # A long lease timeout: only an explicit release can free the lease quickly.
    units = cl.start_gpud_leases(6, "0.3", "600")
    job = cl.submit("graveler", battles=units, seed=8)
    w = cl.start_worker("cpu:1", ["--checkpoint-interval", "60"])
    wait_for(lambda: cl.status(job)["units_running"] > 0, 60, "progress")
    w.send_signal(signal.SIGTERM)
    check(w.wait(20) == 0, "worker should exit 0 after SIGTERM")
    log = cl.log_text("gpud")
    check(re.search(r"checkpoint stored job=%d lease=1 epoch=1 " % job, log), "no checkpoint on SIGTERM")
    check("lease release lease=1 epoch=1" in log, "lease not released on SIGTERM")
    check(cl.status(job)["leases"]["pending"] == 1, "lease should be pending at once")
    cl.ctl("pause", str(job))
    w2 = cl.start_worker("cpu:1", ["--checkpoint-interval", "60"])
    st = cl.status(job)
    check(st["state"] == "paused" and "paused" in st["reason"], "status of a paused job: %s" % st)
    cl.ctl("resume", str(job))
    resumed = cl.regrant(job, 2, 30, "re-grant after resume")
    check(resumed > 0, "did not resume from the SIGTERM checkpoint")
    # Pause while it runs: the worker is told to release (checkpoint first).
    wait_for(lambda: cl.status(job)["leases"]["leased"] == 1, 10, "lease held")
    cl.ctl("pause", str(job))
    wait_for(lambda: "lease release lease=1 epoch=2" in cl.log_text("gpud"), 30, "release on pause")
    check(cl.status(job)["leases"]["pending"] == 1, "paused lease should be pending")
    cl.ctl("resume", str(job))
    cl.check_reference(job, 300, battles=units, seed=8)
    check(w2.poll() is None, "worker should keep running")


if __name__ == "__main__":
    run(test_pause_sigterm)
