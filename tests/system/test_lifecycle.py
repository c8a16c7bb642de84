"""Lifecycles the operator steers (issue 35): a job stopped by its
--time-limit fails with the stated reason and `gpuctl requeue` continues
it, keeping every verified lease (never granted again) until it ends with
gpurun's exact answer; `submit --after` holds a job ("after job N
(running)") until N is done, and fails it when N is cancelled; requeue
refuses a done job, a job whose predecessor failed, and a viewer."""
import re
import time

from harness import Cluster, check, run, wait_for


def grants(cl, job):
    """(lease, epoch) of every grant of job, from gpud's log."""
    return [(int(l), int(e)) for l, e in
            re.findall(r"lease grant job=%d lease=(\d+) epoch=(\d+) " % job, cl.log_text("gpud"))]


def verified_rows(cl, job):
    return cl.db_rows("SELECT id, epoch, result FROM leases WHERE job_id = ? AND state = 3 "
                      "AND replica_of IS NULL ORDER BY id", job)


def state(cl, job):
    return cl.status(job)["state"]


def time_limit_and_requeue(cl, units):
    battles = units * 14
    job = cl.submit("graveler", battles=battles, seed=31, time_limit="3s")
    s = cl.status(job)
    check(s.get("time_limit_s") == 3, "status has no time limit: %s" % s)
    wait_for(lambda: state(cl, job) == "failed", 60, "the time limit to stop job %d" % job)
    s = cl.status(job)
    check("time limit 3s reached" in (s.get("reason") or ""), "reason: %s" % s.get("reason"))
    check(s["ran_s"] >= 3, "ran %s s" % s.get("ran_s"))
    # Held and pending leases stopped; what was verified stays.
    check(cl.db_rows("SELECT count(*) FROM leases WHERE job_id = ? AND state IN (0, 1, 2)", job) == [(0,)],
          "leases still live after the time limit")
    check(cl.db_rows("SELECT count(*) FROM events WHERE job_id = ? AND kind = 'time_limit'", job) == [(1,)],
          "no time_limit event")
    out = cl.ctl("status", str(job)).stdout
    check("time limit 3s reached" in out and re.search(r"time limit 3s \(ran \d+s\)", out),
          "gpuctl status shows no reason or limit: " + out)
    rounds = 0
    kept = {}
    while state(cl, job) != "done":
        check(state(cl, job) == "failed", "job %d is %s" % (job, state(cl, job)))
        for lease, epoch, result in verified_rows(cl, job):
            kept.setdefault(lease, (epoch, result))
        rounds += 1
        check(rounds <= 12, "job %d not done after %d requeues" % (job, rounds))
        r = cl.ctl("requeue", str(job))
        check(re.match(r"job %d: queued \(\d+ lease\(s\) to run again; verified results kept\)" % job,
                       r.stdout), "requeue said: " + r.stdout)
        check(cl.status(job).get("ran_s", 0) < 3, "the time run did not start afresh")
        wait_for(lambda: state(cl, job) in ("failed", "done"), 60, "job %d to stop or end" % job)
    check(rounds >= 1 and kept, "the job never needed a requeue (rounds %d, kept %s)" % (rounds, kept))
    # Nothing verified was computed again: the same grant, the same result.
    now = {lease: (epoch, result) for lease, epoch, result in verified_rows(cl, job)}
    for lease, v in kept.items():
        check(now.get(lease) == v, "verified lease %d changed: %s -> %s" % (lease, v, now.get(lease)))
        check(max(e for l, e in grants(cl, job) if l == lease) == v[0],
              "verified lease %d was granted again" % lease)
    check(cl.db_rows("SELECT count(*) FROM events WHERE job_id = ? AND kind = 'requeue'", job) == [(rounds,)],
          "requeue events")
    cl.check_reference(job, 60, battles=battles, seed=31)
    r = cl.ctl("requeue", str(job), check_rc=False)
    check(r.returncode == 1 and "is done: nothing to requeue" in r.stderr, "requeue of a done job: " + r.stderr)
    return job


def after(cl, units):
    a = cl.submit("graveler", battles=units * 5, seed=41)
    b = int(cl.ctl("submit", "graveler", "--battles", str(units * 2), "--seed", "42",
                   "--after", str(a)).stdout)
    wait_for(lambda: state(cl, a) == "running", 30, "job %d to run" % a)
    s = cl.status(b)
    check(s["state"] == "queued" and s.get("after_job") == a, "job %d: %s" % (b, s))
    check("after job %d (running)" % a in s["reason"], "reason: %s" % s["reason"])
    check("after job %d" % a in cl.ctl("status", str(b)).stdout, "gpuctl status %d" % b)
    cl.check_reference(b, 120, battles=units * 2, seed=42)
    fa, sb = cl.status(a)["finished_at"], cl.status(b)["started_at"]
    check(state(cl, a) == "done" and sb >= fa, "job %d started at %s, before job %d ended at %s" % (b, sb, a, fa))
    cl.check_reference(a, 10, battles=units * 5, seed=41)

    # A predecessor cancelled: the job that waits for it fails, says why.
    c = cl.submit("graveler", battles=units * 40, seed=43)
    d = int(cl.ctl("submit", "graveler", "--battles", str(units * 2), "--seed", "44",
                   "--after", str(c)).stdout)
    wait_for(lambda: state(cl, c) == "running", 30, "job %d to run" % c)
    cl.ctl("cancel", str(c))
    wait_for(lambda: state(cl, d) == "failed", 20, "job %d to fail after job %d's cancel" % (d, c))
    reason = cl.status(d)["reason"]
    check("job %d, which this job was to run after, is cancelled" % c in reason, "reason: " + reason)
    check(not grants(cl, d), "job %d was granted a lease" % d)
    r = cl.ctl("requeue", str(d), check_rc=False)
    check(r.returncode == 1 and "requeue job %d first" % c in r.stderr, "requeue of d: " + r.stderr)
    cl.ctl("requeue", str(c))
    check(cl.ctl("requeue", str(d)).stdout.startswith("job %d: queued" % d), "requeue of d")
    check("after job %d" % c in cl.status(d)["reason"], "d's reason: %s" % cl.status(d)["reason"])
    cl.ctl("cancel", str(c))
    wait_for(lambda: state(cl, d) == "failed", 20, "job %d to fail again" % d)

    # Nothing else to do: an idle worker's claim is told why.
    p = cl.submit("graveler", battles=units * 40, seed=45)
    cl.ctl("pause", str(p))
    q = int(cl.ctl("submit", "graveler", "--battles", "1000", "--after", str(p)).stdout)
    check("after job %d (paused)" % p in cl.status(q)["reason"], "q's reason: %s" % cl.status(q)["reason"])
    wait_for(lambda: "the queued jobs wait for other jobs to be done" in cl.log_text("worker"), 30,
             "the worker to be told that the queue waits for --after")
    cl.ctl("cancel", str(p))
    wait_for(lambda: state(cl, q) == "failed", 20, "job %d to fail after job %d's cancel" % (q, p))

    # Refused at submit: an unknown job, a failed one, a bad limit.
    r = cl.ctl("submit", "graveler", "--battles", "1000", "--after", str(p), check_rc=False)
    check(r.returncode == 1 and "job %d is cancelled: it will never be done" % p in r.stderr,
          "--after a cancelled job: " + r.stderr)
    r = cl.ctl("submit", "graveler", "--battles", "1000", "--after", "999", check_rc=False)
    check(r.returncode == 1 and "no job 999 to run after" in r.stderr, "unknown --after: " + r.stderr)
    for bad in ("0s", "90", "5x", "367d", "1m2h"):
        r = cl.ctl("submit", "graveler", "--battles", "1000", "--time-limit", bad, check_rc=False)
        check(r.returncode == 2 and "--time-limit" in r.stderr, "--time-limit %s: %s" % (bad, r.stderr))


def viewer_refused(cl, job):
    path, _, _ = cl.add_token("looker", role="viewer")
    import subprocess
    from harness import GPUCTL
    r = subprocess.run([GPUCTL, "--connect", "127.0.0.1:%d" % cl.port, "--credential", path,
                        "requeue", str(job)], capture_output=True, text=True, timeout=60)
    check(r.returncode != 0 and "needs an admin credential" in r.stderr, "a viewer's requeue: " + r.stderr)


def test_lifecycle(cl: Cluster):
    units = cl.start_gpud_leases(0.7, "0.3")
    cl.start_worker("cpu:1")
    job = time_limit_and_requeue(cl, units)
    after(cl, units)
    viewer_refused(cl, job)


if __name__ == "__main__":
    run(test_lifecycle)
