"""A worker that finishes its lease while gpud is down keeps its work: gpud
is killed mid-lease and comes back after the lease's deadline has passed;
leases get one lease timeout of grace at start, so the worker, back from
its reconnect backoff, uploads its result and gpud accepts it (the lease
is never granted again) and the answer is exact."""
import time

from harness import Cluster, check, cpu_rate, run, wait_for


def test_restart_grace(cl: Cluster):
    battles = int(cpu_rate() * 3) // 256 * 256
    cl.gpud_args = ["--heartbeat", "1", "--lease-timeout", "8", "--lease-units", str(battles)]
    cl.start_gpud()
    job = cl.submit("graveler", battles=battles, seed=31)
    cl.start_worker("cpu:1")
    wait_for(lambda: cl.db_rows("SELECT count(*) FROM leases WHERE state = 1")[0][0] == 1, 30, "the lease granted")
    time.sleep(1)
    cl.kill_gpud()
    deadline = cl.db_rows("SELECT max(deadline) FROM leases")[0][0]
    # Down past the lease's deadline; the worker finishes meanwhile.
    while time.time() < deadline + 2:
        time.sleep(0.2)
    wait_for(lambda: "run done" in cl.log_text("worker"), 30, "the worker to finish its run")
    cl.start_gpud()
    cl.wait_job(job, timeout=120)
    cl.check_reference(job, 60, battles=battles, seed=31)
    attempts = cl.db_rows("SELECT attempts FROM leases")
    check(attempts == [(1,)], "the finished lease was granted again: %s" % attempts)
    expired = cl.db_rows("SELECT count(*) FROM events WHERE kind = 'expire'")[0][0]
    check(expired == 0, "a lease expired although its worker came back within the grace")


if __name__ == "__main__":
    run(test_restart_grace)
