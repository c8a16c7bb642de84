"""A job completes with exactly the reference answer, over several leases and
two workers, and gpuctl shows it."""
import re

from harness import answer_core, Cluster, check, reference_answer, run, wait_for


def test_complete(cl: Cluster):
    units = cl.start_gpud_leases(0.2, "0.5")
    battles = units * 6 + 12345  # the last lease is a partial one
    job = cl.submit("graveler", battles=battles, seed=20261121)
    st = cl.status(job)
    check(st["state"] == "queued", "a new job with no worker should be queued: %s" % st)
    check("no eligible worker" in (st["reason"] or ""), "status should say why the job is not moving: %s" % st)
    cl.start_worker("cpu:1")
    cl.start_worker("cpu:1")
    cl.wait_job(job, timeout=300)
    res = cl.result(job)
    check(res["state"] == "done", "job not done: %s" % res["state"])
    ref = reference_answer("graveler", battles=battles, seed=20261121)
    check(answer_core(res["answer"]) == ref, "answer differs from the reference:\n%s\n%s" % (res["answer"], ref))
    st = cl.status(job)
    check(st["leases"]["verified"] == 7, "expected 7 verified leases: %s" % st["leases"])
    check(st["units_verified"] == battles, "units_verified %s != %d" % (st["units_verified"], battles))
    text = cl.ctl("status").stdout
    check("100.0%" in text and "done" in text, "status text: " + text)
    text = cl.ctl("result", str(job)).stdout
    check(str(ref["max"]) in text, "result text lacks the maximum: " + text)
    workers = cl.ctl("workers").stdout
    check("local" in workers, "workers list: " + workers)
    watch = cl.ctl("watch", "--count", "2", "--interval", "0.1").stdout
    rows = re.findall(r"^ *%d +- +\S+ +graveler +done " % job, watch, re.M)
    check(len(rows) == 2 and "local" in watch, "watch: " + watch)
    check(cl.stop_gpud() == 0, "gpud should exit 0 on SIGTERM")


if __name__ == "__main__":
    run(test_complete)
