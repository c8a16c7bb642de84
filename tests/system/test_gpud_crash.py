"""kill -9 gpud in the middle of a job, restart it on the same data: the job
completes with the identical answer and every acknowledged result is kept."""
import sqlite3

from harness import answer_core, Cluster, check, reference_answer, run, wait_for


def verified(cl, job):
    try:
        return cl.status(job)["leases"]["verified"]
    except Exception:
        return 0


def test_gpud_crash(cl: Cluster):
    units = cl.start_gpud_leases(0.3, "0.5", "3")
    battles = units * 16
    job = cl.submit("graveler", battles=battles, seed=99)
    cl.start_worker("cpu:1", ["--checkpoint-interval", "0.1"])
    wait_for(lambda: verified(cl, job) >= 3, 120, "three verified leases")
    for round_ in range(2):
        cl.kill_gpud()
        db = sqlite3.connect("file:%s/gpud.db?mode=ro" % cl.data, uri=True)
        acked = {r[0] for r in db.execute("SELECT lease_id FROM events WHERE kind='result'")}
        db.close()
        cl.start_gpud()
        db = sqlite3.connect("file:%s/gpud.db?mode=ro" % cl.data, uri=True)
        states = dict(db.execute("SELECT id, state FROM leases"))
        db.close()
        for lease in acked:
            check(states.get(lease) in (2, 3),  # done, verified
                  "acknowledged result of lease %s lost after the crash: %s" % (lease, states.get(lease)))
        if round_ == 0:
            wait_for(lambda: verified(cl, job) >= 8, 120, "more verified leases after restart")
    cl.wait_job(job, timeout=300)
    ref = reference_answer("graveler", battles=battles, seed=99)
    res = cl.result(job)
    check(answer_core(res["answer"]) == ref, "answer after crashes differs from the reference")
    check(cl.status(job)["units_verified"] == battles, "not every battle verified exactly once")


if __name__ == "__main__":
    run(test_gpud_crash)
