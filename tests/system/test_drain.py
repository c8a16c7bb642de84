"""SIGTERM to gpud drains: workers are told to checkpoint and release, gpud
exits 0 with every lease pending and checkpointed, and after a restart the
job resumes from those checkpoints and finishes exactly."""
import re
import sqlite3

from harness import answer_core, Cluster, check, lease_units_for, reference_answer, run, wait_for


def test_drain(cl: Cluster):
    units = lease_units_for(4)
    cl.gpud_args = ["--lease-units", str(units), "--heartbeat", "0.3", "--lease-timeout", "600",
                    "--drain-seconds", "20"]
    cl.start_gpud()
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
    m = wait_for(lambda: re.search(r"lease grant job=%d lease=1 epoch=2 .*resume_from=(\d+)" % job,
                                   cl.log_text("gpud")), 60, "re-grant after restart")
    check(int(m.group(1)) == ck_units, "resumed from %s, checkpoint was %d" % (m.group(1), ck_units))
    cl.wait_job(job, timeout=300)
    check(answer_core(cl.result(job)["answer"]) == reference_answer("graveler", battles=units, seed=12),
          "answer differs from the reference")


if __name__ == "__main__":
    run(test_drain)
