"""kill -9 a worker mid-lease: the lease is re-issued after its deadline with
a new epoch and resumes from the last checkpoint; the answer is exact."""
import re

from harness import Cluster, check, run, wait_for


def test_worker_crash(cl: Cluster):
    units = cl.start_gpud_leases(6, "0.3", "1.5")
    job = cl.submit("graveler", battles=units, seed=5)
    w = cl.start_worker("cpu:1", ["--checkpoint-interval", "0.3"])
    wait_for(lambda: re.search(r"checkpoint stored job=%d lease=1 epoch=1 .*units_done=[1-9]" % job,
                               cl.log_text("gpud")), 60, "a checkpoint of lease 1")
    w.kill()
    w.wait()
    wait_for(lambda: "lease expired lease=1" in cl.log_text("gpud"), 30, "the lease to expire")
    cl.start_worker("cpu:1", ["--checkpoint-interval", "0.3"])
    resumed = cl.regrant(job, 2, 30, "the lease re-issued at epoch 2")
    check(resumed > 0, "the re-issued lease did not resume from a checkpoint")
    cl.check_reference(job, 300, battles=units, seed=5,
                       msg="answer after the worker crash differs from the reference")


if __name__ == "__main__":
    run(test_worker_crash)
