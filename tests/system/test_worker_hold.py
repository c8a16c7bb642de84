"""The operator's hold on workers (issue 35): `gpuctl worker drain NAME`
lets a worker finish the lease it holds and grants it no more (its claims
answered "drained by the operator"), while the job ends exact on the other
worker; the drain outlasts a gpud restart, is shown in `gpuctl workers`,
and `gpuctl worker resume` gives the worker work again. `gpuctl worker
forgive` lets a quarantined worker out with its counts reset. A worker
whose credential is revoked exits at once with status 6 and says why, and
so does one started with it."""
import json
import re
import time

from harness import Cluster, RawWorker, check, run, wait_for

REFUSED = 6  # gpuworker's exit status for a refused credential


def workers(cl):
    return {w["name"]: w for w in json.loads(cl.ctl("workers", "--json").stdout)}


def grants(cl, name, job):
    """The leases of job granted to the workers of credential name, in
    gpud's log."""
    return [int(m) for m in re.findall(r"lease grant job=%d lease=(\d+) epoch=\d+ worker=%s "
                                       % (job, re.escape(name)), cl.log_text("gpud"))]


def verified(cl, lease):
    return cl.db_rows("SELECT state FROM leases WHERE id = ?", lease) == [(3,)]


def drain_and_resume(cl, units):
    alpha_file, alpha, _ = cl.add_token("alpha")
    beta_file, beta, _ = cl.add_token("beta")
    cl.start_worker("cpu:1", ["--instance", "a1"], token_file=alpha_file)
    cl.start_worker("cpu:1", ["--instance", "b1"], token_file=beta_file)
    job = cl.submit("graveler", battles=units * 14, seed=21)
    a, b = alpha + "@a1", beta + "@b1"

    # Drain alpha while it holds a lease: that lease is its last.
    wait_for(lambda: workers(cl).get(a, {}).get("lease"), 60, "alpha to hold a lease")
    r = cl.ctl("worker", "drain", a)
    check("1 worker" in r.stdout and "drained" in r.stdout, "drain said: " + r.stdout)
    ws = workers(cl)
    check(ws[a]["drained"] and not ws[b]["drained"], "drained flags: %s" % ws)
    check(re.search(r"^\s*\d+\s+%s\s+alpha\s+drained\s" % re.escape(a), cl.ctl("workers").stdout, re.M),
          "gpuctl workers STATE: " + cl.ctl("workers").stdout)
    before = grants(cl, alpha, job)
    check(before, "alpha was granted nothing before the drain")
    held = before[-1]
    cl.wait_job(job, timeout=300)
    check(grants(cl, alpha, job) == before, "a drained worker was granted %s after %s"
          % (grants(cl, alpha, job), before))
    check(verified(cl, held), "the drained worker's last lease %d was not verified" % held)
    check(len(grants(cl, beta, job)) > 0, "beta did the rest")
    cl.check_reference(job, 60, battles=units * 14, seed=21)
    wait_for(lambda: "drained by the operator" in cl.log_text("worker"), 30,
             "alpha's claims answered 'drained by the operator'")

    # Durable: still drained after a gpud restart.
    check(cl.stop_gpud() == 0, "gpud did not stop cleanly")
    cl.start_gpud()
    wait_for(lambda: workers(cl).get(a, {}).get("online"), 60, "alpha to reconnect")
    check(workers(cl)[a]["drained"], "the drain did not outlast a restart")
    # beta drained too, by its credential (every process of it): job2
    # waits for whoever is resumed, so alpha's grants are the resume's.
    check("1 worker" in cl.ctl("worker", "drain", "beta").stdout, "drain by credential")
    check(workers(cl)[b]["drained"], "drain by credential did not drain beta@b1")
    job2 = cl.submit("graveler", battles=units * 8, seed=22)
    time.sleep(3)
    check(not grants(cl, alpha, job2) and not grants(cl, beta, job2),
          "a drained worker was granted a lease after the restart")
    r = cl.ctl("worker", "resume", a)
    check("resumed" in r.stdout, "resume said: " + r.stdout)
    check(not workers(cl)[a]["drained"], "resume did not undo the drain")
    wait_for(lambda: grants(cl, alpha, job2), 60, "alpha to be granted work again")
    cl.ctl("worker", "resume", "beta")
    cl.check_reference(job2, 300, battles=units * 8, seed=22)
    events = cl.db_rows("SELECT kind, detail FROM events WHERE kind LIKE 'worker_%' ORDER BY id")
    check(events == [("worker_drain", a), ("worker_drain", "beta"), ("worker_resume", a),
                     ("worker_resume", "beta")], "events: %s" % events)
    r = cl.ctl("worker", "drain", "nobody@x", check_rc=False)
    check(r.returncode == 1 and "no worker named 'nobody@x'" in r.stderr, "unknown: %s" % r.stderr)
    r = cl.ctl("worker", "halt", a, check_rc=False)
    check(r.returncode == 2, "a bad verb is a usage error: %d" % r.returncode)


def forgive(cl):
    """A worker quarantined for messages about leases it was never
    granted (as test_foreign_lease.py makes one) is let out."""
    _, name, secret = cl.add_token("thief")
    thief = RawWorker(cl.port, name, secret)
    thief.login()
    for k in range(3):
        thief.send_msg("HEARTBEAT", {"lease": 9000 + k, "epoch": 1, "units_done": 1})
        check(thief.recv_raw() is not None, "gpud closed the thief's connection")
    w = workers(cl)["thief@raw"]
    check(w["quarantined"] and w["foreign_msgs"] == 3, "thief not quarantined: %s" % w)
    thief.send_msg("CLAIM", {})
    nl, _ = thief.expect("NOLEASE", timeout=20)
    check("quarantined" in nl["reason"], "a quarantined worker's claim: %s" % nl)
    check("quarantined" in cl.ctl("workers").stdout, "gpuctl workers shows no quarantine")
    r = cl.ctl("worker", "forgive", "thief@raw")
    check("forgiven" in r.stdout, "forgive said: " + r.stdout)
    w = workers(cl)["thief@raw"]
    check(not w["quarantined"] and w["foreign_msgs"] == 0 and w["failures"] == 0 and w["stalls"] == 0,
          "forgive did not reset: %s" % w)
    check(cl.db_rows("SELECT detail FROM events WHERE kind = 'worker_forgive'") == [("thief@raw",)],
          "forgive not logged as an event")
    # Its claims are answered as anyone's again (no jobs: parked, then NOLEASE).
    thief.send_msg("CLAIM", {})
    nl, _ = thief.expect("NOLEASE", timeout=20)
    check("quarantined" not in nl["reason"], "still refused after forgive: %s" % nl)
    thief.close()


def revoked(cl):
    """Revoked while connected: exit 6 within seconds, a plain message;
    started again with it: the same, at once."""
    path, name, _ = cl.add_token("gamma")
    p = cl.start_worker("cpu:1", ["--instance", "g1"], token_file=path)
    wait_for(lambda: workers(cl).get("gamma@g1", {}).get("online"), 30, "gamma to log in")
    log = cl.logs[-1]
    cl.ctl("token", "revoke", "gamma")
    t0 = time.time()
    rc = p.wait(15)
    check(rc == REFUSED, "a revoked worker exited %s, not %d" % (rc, REFUSED))
    check(time.time() - t0 < 10, "a revoked worker took %.1f s to exit" % (time.time() - t0))
    text = open(log).read()
    check("gpud refused credential 'gamma'" in text and "Not retrying" in text
          and "gpuctl token add NAME" in text, "message:\n" + text[-1500:])
    p = cl.start_worker("cpu:1", ["--instance", "g2"], token_file=path)
    rc = p.wait(15)
    text = open(cl.logs[-1]).read()
    check(rc == REFUSED and "unknown or revoked" in text, "restart with a revoked credential: rc %s\n%s"
          % (rc, text[-1500:]))


def test_worker_hold(cl: Cluster):
    units = cl.start_gpud_leases(1.0, "0.3", extra=["--quarantine-after", "3"])
    drain_and_resume(cl, units)
    forgive(cl)
    revoked(cl)


if __name__ == "__main__":
    run(test_worker_hold)
