"""A claim gpud holds for an idle worker (parked until work appears, up to
10 s) can be withdrawn: WITHDRAW gets the NOLEASE at once and leaves the
connection usable, and a worker stopped with SIGTERM while it waits for
work withdraws its claim and exits at once instead of after the park."""
import signal
import re
import socket
import time

from harness import Cluster, RawWorker, check, run, wait_for


def test_withdraw(cl: Cluster):
    cl.start_gpud()
    _, name, secret = cl.add_token("raw")
    rw = RawWorker(cl.port, name, secret)
    rw.login()
    # No jobs: the claim is parked, no answer for now.
    rw.send_msg("CLAIM", {"rate": 0})
    try:
        f = rw.recv(timeout=1.0)
    except socket.timeout:
        f = None
    check(f is None, "a claim with no work should wait, got %s" % (f,))
    t0 = time.time()
    rw.send_msg("WITHDRAW", {"reason": "test stops"})
    msg, _ = rw.expect("NOLEASE", timeout=5)
    took = time.time() - t0
    check("no jobs" in (msg.get("reason") or ""), "the NOLEASE's reason: %s" % msg)
    check(took < 2.0, "NOLEASE %.2f s after WITHDRAW" % took)
    wait_for(lambda: "claim withdrawn worker=raw reason=test stops" in cl.log_text("gpud"), 5,
             "the withdrawal logged")
    # A WITHDRAW with no claim outstanding changes nothing; the next claim
    # is parked again and woken by a new job.
    rw.send_msg("WITHDRAW", {})
    rw.send_msg("CLAIM", {"rate": 0})
    time.sleep(0.5)
    job = cl.submit("graveler", battles=1 << 20, seed=3)
    lease, _ = rw.expect("LEASE", timeout=10)
    check(lease["job"] == job, "lease of job %s: %s" % (job, lease))
    rw.close()
    cl.ctl("cancel", str(job))

    # A real worker, idle, stopped with SIGTERM: out at once.
    w = cl.start_worker("cpu:1")
    wait_for(lambda: re.search(r"debug claim$", cl.log_text("worker"), re.M), 20, "the worker's claim")
    time.sleep(1.0)  # parked by now (gpud holds it up to 10 s)
    t0 = time.time()
    w.send_signal(signal.SIGTERM)
    rc = w.wait(20)
    took = time.time() - t0
    check(rc == 0, "worker exit %s after SIGTERM" % rc)
    check(took < 3.0, "idle worker took %.2f s to exit after SIGTERM" % took)
    wait_for(lambda: "reason=worker stopping" in cl.log_text("gpud"), 5, "the worker's withdrawal logged")


if __name__ == "__main__":
    run(test_withdraw)
