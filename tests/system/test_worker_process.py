"""A worker is one gpuworker process; a credential is whom it acts for.

Two gpuworker processes on one credential are two workers (two rows of
`gpuctl workers`, each TOKEN@INSTANCE) and both get leases of one job under
--max-leases-per-worker 1 (--lease-units makes the job several leases). A
third process of the same credential that sends messages about leases it
was not granted is quarantined alone: the other two keep working and the
job ends with the exact answer. A second login of the same (credential,
instance) replaces the first connection and is the same worker. Then,
with --max-leases-per-credential 1, two processes of one credential hold
one lease together while another credential's process gets its own.
"""
import json
import os
import sqlite3

from harness import (Cluster, RawWorker, check, run, wait_for)


def workers(cl):
    return json.loads(cl.ctl("workers", "--json").stdout)


def granted(cl, job):
    """The worker ids that got a lease of job (gpud's events)."""
    con = sqlite3.connect("file:%s?mode=ro" % os.path.join(cl.data, "gpud.db"), uri=True)
    try:
        return {r[0] for r in con.execute("SELECT DISTINCT worker_id FROM events "
                                          "WHERE kind = 'grant' AND job_id = ?", (job,))}
    finally:
        con.close()


def two_processes(cl):
    units = cl.start_gpud_leases(0.5, "0.3", "2", extra=["--max-leases-per-worker", "1",
                                                         "--quarantine-after", "2"])
    name, secret = cl.token()
    job = cl.submit("graveler", battles=8 * units, seed=21)
    a = cl.start_worker("cpu:1", ["--checkpoint-interval", "0.3"])
    b = cl.start_worker("cpu:1", ["--checkpoint-interval", "0.3", "--instance", "second/cpu"])

    # Two rows: one token, two instances (the default one names the host
    # and the process id).
    def both_online():
        ws = [w for w in workers(cl) if w["online"]]
        return ws if len(ws) == 2 else None
    ws = wait_for(both_online, 30, "two workers online")
    check({w["credential"] for w in ws} == {name}, "one credential: %s" % ws)
    inst = {w["instance"] for w in ws}
    check("second/cpu" in inst and any(i.endswith(":%d" % a.pid) for i in inst),
          "instances: %s" % inst)
    check({w["name"] for w in ws} == {"%s@%s" % (name, i) for i in inst}, "names: %s" % ws)
    text = cl.ctl("workers").stdout
    check("TOKEN" in text.splitlines()[0] and "%s@second/cpu" % name in text, "gpuctl workers:\n" + text)

    # A third process of the token lies about leases it was not granted:
    # it alone is quarantined.
    thief = RawWorker(cl.port, name, secret, instance="thief")
    thief.login()
    for lease in (900, 901):
        thief.send_msg("HEARTBEAT", {"lease": lease, "epoch": 1, "units_done": 1})
        check(thief.recv() is not None, "gpud closed the connection")
    thief.send_msg("CLAIM", {"rate": 0})
    nl, _ = thief.expect("NOLEASE")
    check("quarantined" in nl["reason"] and "%s@thief" % name in nl["reason"],
          "the thief's refusal: %s" % nl)
    thief.close()

    cl.check_reference(job, 180, battles=8 * units, seed=21)
    ids = {w["name"]: w["id"] for w in workers(cl)}
    got = granted(cl, job)
    check(len(got) == 2 and got <= {w["id"] for w in ws},
          "both processes should get leases of the job: %s of %s" % (got, ids))
    by = {w["instance"]: w for w in workers(cl)}
    check(by["thief"]["quarantined"] and by["thief"]["foreign_msgs"] == 2,
          "the thief's record: %s" % by["thief"])
    check(not any(w["quarantined"] for i, w in by.items() if i != "thief"),
          "the honest processes of the token are not quarantined: %s" % by)
    check(all(by[i]["leases_done"] > 0 for i in inst), "both finished leases: %s" % by)

    # The same (token, instance) logging in again replaces the older
    # connection and is the same worker.
    one = RawWorker(cl.port, name, secret, instance="again")
    w1 = one.login()
    two = RawWorker(cl.port, name, secret, instance="again")
    w2 = two.login()
    check(w1["worker_id"] == w2["worker_id"], "one worker: %s %s" % (w1, w2))
    err, _ = one.expect("ERROR")
    check("replaced" in err["message"], "the older connection's notice: %s" % err)
    check(one.closed(5), "the older connection should be closed")
    row = [w for w in workers(cl) if w["instance"] == "again"]
    check(len(row) == 1 and row[0]["online"], "one row, online: %s" % row)
    two.close()
    # Bad instances never log in.
    bad = RawWorker(cl.port, name, secret, instance="a b")
    bad.send_msg("HELLO", {"proto": 1, "worker": name, "instance": "a b", "device": "cpu",
                           "workloads": ["graveler"]})
    check(bad.closed(5), "a bad instance should be refused")
    for p in (a, b):
        p.terminate()
        p.wait(30)


def credential_cap(cl):
    cl.gpud_args = ["--lease-units", str(1 << 20), "--max-leases-per-credential", "1"]
    cl.start_gpud()
    name, secret = cl.token()
    _, other, other_secret = cl.add_token("other")
    cl.submit("graveler", battles=8 << 20, seed=4)
    a = cl.raw_worker(instance="a")
    b = cl.raw_worker(instance="b")
    c = cl.raw_worker(name=other, secret=other_secret, instance="a")
    lease, _ = a.claim_lease()
    b.send_msg("CLAIM", {"rate": 0})
    nl, _ = b.expect("NOLEASE")
    check(nl["reason"] == "the workers of token %s hold 1 leases, the most one token may hold "
          "(--max-leases-per-credential 1)" % name, "b's refusal: %s" % nl)
    c.claim_lease()  # another credential: a cap of its own
    # The token's lease given back, its other process may take one.
    a.send_msg("RELEASE", {"lease": lease["lease"], "epoch": lease["epoch"]})
    a.expect("ACK")
    b.claim_lease()
    for w in (a, b, c):
        w.close()


def test_worker_process(cl: Cluster):
    two_processes(cl)
    sub = Cluster("worker_process_cap")
    try:
        credential_cap(sub)
    except Exception:
        print(sub.tail("gpud"))
        raise
    finally:
        sub.cleanup()


if __name__ == "__main__":
    run(test_worker_process)
