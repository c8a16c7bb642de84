"""SIGTERM to gpud drains: workers are told to checkpoint and release, gpud
exits 0 with every lease pending and checkpointed, and after a restart the
job resumes from those checkpoints and finishes exactly."""
import signal
import sqlite3
import time

from harness import Cluster, check, run, wait_for


def test_drain(cl: Cluster):
    units = cl.start_gpud_leases(4, "0.3", "600", extra=["--drain-seconds", "20"])
    job = cl.submit("graveler", battles=units, seed=12)
    cl.start_worker("cpu:1", ["--checkpoint-interval", "600"])
    wait_for(lambda: cl.status(job)["units_running"] > 0, 60, "progress")
    check(cl.stop_gpud() == 0, "gpud should exit 0 after draining")
    log = cl.log_text("gpud")
    check("drain: every lease checkpointed and released" in log, "drain did not complete:\n" + log[-2000:])
    db = sqlite3.connect("file:%s/gpud.db?mode=ro" % cl.data, uri=True)
    state, ck_units = db.execute("SELECT state, checkpoint_units FROM leases WHERE id = 1").fetchone()
    db.close()
    check(state == 0 and ck_units > 0, "lease should be pending with a checkpoint: state %d units %d" % (state, ck_units))
    cl.start_gpud()
    resumed = cl.regrant(job, 2, 60, "re-grant after restart")
    check(resumed == ck_units, "resumed from %d, checkpoint was %d" % (resumed, ck_units))
    cl.check_reference(job, 300, battles=units, seed=12)

    # A second SIGTERM while workers still hold leases stops gpud at once;
    # the drain's end must not stop it a second time (libuv aborts on a
    # handle closed twice).
    for gap in (0.05, 0.5):
        job = cl.submit("graveler", battles=1 << 40, seed=13)
        wait_for(lambda: cl.status(job)["units_running"] > 0, 60, "progress")
        cl.gpud.send_signal(signal.SIGTERM)
        time.sleep(gap)
        cl.gpud.send_signal(signal.SIGTERM)
        rc = cl.gpud.wait(20)
        log = cl.log_text("gpud")
        check(rc == 0 and "Assertion" not in log, "two SIGTERMs %.2f s apart: exit %d\n%s" % (gap, rc, log[-1500:]))
        cl.start_gpud()
        cl.ctl("cancel", str(job))


if __name__ == "__main__":
    run(test_drain)
