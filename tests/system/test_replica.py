"""Replication (issue 20): results recomputed by a different worker must
agree before they merge.

(a) `--check full`: a Graveler job on two honest CPU workers ends exact,
    and every lease was computed by two different workers that agreed; the
    replicas count once (units, leases).
(b) `--trust-after 2`: a lying worker uploads an honest worker's result
    with one histogram battle moved between two bins (total and top bin
    unchanged, so the sampled check passes it); replication catches it, a
    third result decides, the liar is charged, and the job ends exact.
(c) kill -9 of gpud while a replica waits (one worker: the job's reason
    says it waits for a second worker); after the restart a second worker
    confirms and the job ends exact.
"""
import json
import os
import sqlite3
import struct
import zlib

from sketch_lattice import kernel_vectors
from harness import (Cluster, answer_core, blob, check, reference_answer,
                     run, wait_for)

LEASE = 1 << 20


def db(cl):
    return sqlite3.connect("file:%s?mode=ro" % os.path.join(cl.data, "gpud.db"), uri=True)


def rows(cl, sql, *args):
    con = db(cl)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def workers(cl):
    """Each token's record: a worker is a process, so the processes of one
    token (a restarted gpuworker is a new one) are summed up."""
    out = {}
    for w in json.loads(cl.ctl("workers", "--json").stdout):
        t = out.get(w["credential"])
        if t is None:
            out[w["credential"]] = dict(w)
            continue
        for k in ("failures", "confirmed", "leases_done"):
            t[k] += w[k]
        t["quarantined"] = t["quarantined"] or w["quarantined"]
        t["trusted"] = t["trusted"] and w["trusted"]
    return out


def worker_id(cl, name):
    """The worker of token name (one process in the scenarios that ask)."""
    r = rows(cl, "SELECT id FROM workers WHERE credential = ?", name)
    check(len(r) <= 1, "token %s has %d workers" % (name, len(r)))
    return r[0][0] if r else None


def check_exact(cl, job, battles, seed):
    got = answer_core(cl.result(job)["answer"])
    want = reference_answer("graveler", battles=battles, seed=seed)
    check(got == want, "job %d's answer differs from the reference" % job)
    st = cl.status(job)
    check(st["units_verified"] == battles,
          "replicas must not count twice: verified %d of %d" % (st["units_verified"], battles))


def check_pairs(cl, job):
    """Every primary lease verified, confirmed by a verified replica computed
    by another worker."""
    prim = rows(cl, "SELECT id, worker_id, state FROM leases WHERE job_id = ? "
                    "AND replica_of IS NULL", job)
    check(prim and all(s == 3 for _, _, s in prim), "primaries not all verified: %s" % prim)
    for pid, pw, _ in prim:
        reps = rows(cl, "SELECT worker_id FROM leases WHERE replica_of = ? AND state = 3", pid)
        check(reps, "lease %d has no agreeing replica" % pid)
        check(all(w != pw for (w,) in reps), "lease %d confirmed by its own worker" % pid)
    return prim


def scenario_full(cl):
    cl.gpud_args = ["--lease-units", str(LEASE)]
    cl.start_gpud()
    tb, nb, _ = cl.add_token("b")
    battles, seed = 6 * LEASE, 11
    job = cl.submit("graveler", battles=battles, seed=seed, check="full")
    cl.start_worker("cpu:1")
    cl.start_worker("cpu:1", token_file=tb)
    cl.wait_job(job, timeout=120)
    check_exact(cl, job, battles, seed)
    prim = check_pairs(cl, job)
    st = cl.status(job)
    check(st["check"] == "full" and st["leases"]["verified"] == len(prim) and
          st["replicas"]["verified"] == len(prim),
          "status should count leases and replicas apart: %s" % st)
    ws = workers(cl)
    for name in (cl.token()[0], nb):
        check(ws[name]["confirmed"] > 0 and ws[name]["leases_done"] > 0,
              "worker %s should have confirmed results: %s" % (name, ws[name]))
    # gpuctl refuses an unknown check mode.
    r = cl.ctl("submit", "graveler", "--battles", "100", "--check", "most", check_rc=False)
    check(r.returncode != 0 and "--check" in r.stderr, "bad --check accepted: %s" % r.stderr)


def lie(raw):
    """The same Graveler result with a few battles moved between bins 52..61
    along a vector of the sketch's kernel (sketch_lattice.py): the
    histogram's total, top bin, sum of counts and sketch (what the segment
    records add up to) stay, so sampled verification passes it."""
    hist = list(struct.unpack_from("<232Q", raw, 48))
    for i, d in enumerate(kernel_vectors(52, 62)[0]):
        check(hist[52 + i] + d >= 0, "lease too small for the lie")
        hist[52 + i] += d
    out = bytearray(raw)
    struct.pack_into("<232Q", out, 48, *hist)
    return bytes(out)


def stored_result(cl, lease_id):
    """The decoded result payload gpud stored for a lease."""
    (h,) = rows(cl, "SELECT result FROM leases WHERE id = ?", lease_id)[0]
    path = None
    for root, _, files in os.walk(os.path.join(cl.data, "blobs")):
        if h in files:
            path = os.path.join(root, h)
    check(path, "result blob %s not found" % h)
    data = open(path, "rb").read()
    return zlib.decompress(data[64:])


def scenario_liar(cl):
    cl.gpud_args = ["--lease-units", str(LEASE), "--trust-after", "2", "--quarantine-after", "1"]
    cl.start_gpud()
    tb, nb, _ = cl.add_token("b")
    _, nl, sl = cl.add_token("liar")
    battles, seed = 4 * LEASE, 5
    job = cl.submit("graveler", battles=battles, seed=seed)
    # An honest worker alone: it is untrusted, so its first result waits
    # for a replica, which it may not take itself.
    a = cl.start_worker("cpu:1", extra=["--max-leases", "1"])
    rep = wait_for(lambda: rows(cl, "SELECT id, replica_of FROM leases WHERE job_id = ? "
                                    "AND replica_of IS NOT NULL AND state = 0", job),
                   60, "a replica of the honest worker's first result")
    rid, pid = rep[0]
    a.wait(30)
    liar = cl.raw_worker(name=nl, secret=sl)
    lease, _ = liar.claim_lease()
    check(lease["lease"] == rid, "the liar should get the replica %d: %s" % (rid, lease))
    raw = lie(stored_result(cl, pid))
    liar.send_msg("RESULT", {"lease": rid, "epoch": lease["epoch"], "units_done": LEASE,
                             "seconds": 1.0}, blob(2, "graveler", rid, lease["epoch"], raw))
    liar.expect("ACK")
    # Two results disagree: a third decides, from a worker that computed
    # neither (b).
    wait_for(lambda: rows(cl, "SELECT id FROM leases WHERE replica_of = ? AND id != ?",
                          pid, rid), 30, "a third result of the disputed lease")
    cl.start_worker("cpu:1", token_file=tb)
    cl.start_worker("cpu:1")
    cl.wait_job(job, timeout=120)
    liar.close()
    check_exact(cl, job, battles, seed)
    lid = worker_id(cl, nl)
    (state, err), = rows(cl, "SELECT state, last_error FROM leases WHERE id = ?", rid)
    check(state == 4 and "outvoted" in (err or ""), "the lie should be outvoted: %s %s" % (state, err))
    check(rows(cl, "SELECT count(*) FROM events WHERE kind = 'refuted' AND worker_id = ?",
               lid)[0][0] == 1, "the liar should be charged once")
    check(rows(cl, "SELECT count(*) FROM leases WHERE replica_of = ? AND state = 3", pid)[0][0] == 1,
          "one further result should have confirmed lease %d" % pid)
    ws = workers(cl)
    check(ws[nl]["failures"] == 1 and ws[nl]["quarantined"] and not ws[nl]["trusted"],
          "the liar should be charged and quarantined: %s" % ws[nl])
    check(ws[cl.token()[0]]["confirmed"] >= 1 and ws[nb]["confirmed"] >= 1,
          "the honest workers' results should be confirmed: %s" % ws)
    out = cl.ctl("workers").stdout
    check("TRUST" in out.splitlines()[0], "gpuctl workers should show trust:\n" + out)


def scenario_crash(cl):
    cl.gpud_args = ["--lease-units", str(LEASE)]
    cl.start_gpud()
    tb, _, _ = cl.add_token("b")
    battles, seed = 2 * LEASE, 9
    job = cl.submit("graveler", battles=battles, seed=seed, check="full")
    w = cl.start_worker("cpu:1")
    # One worker computes every primary; the replicas wait for another.
    wait_for(lambda: "second worker" in (cl.status(job).get("reason") or ""), 60,
             "the reason to say the job waits for a second worker")
    check(rows(cl, "SELECT count(*) FROM leases WHERE job_id = ? AND replica_of IS NULL "
                   "AND state = 2", job)[0][0] == 2, "both primaries should wait, done")
    cl.kill_gpud()
    w.kill()
    cl.start_gpud()
    cl.start_worker("cpu:1", token_file=tb)
    cl.start_worker("cpu:1")
    cl.wait_job(job, timeout=120)
    check_exact(cl, job, battles, seed)
    check_pairs(cl, job)


def test_replica(cl: Cluster):
    scenario_full(cl)
    for scenario in (scenario_liar, scenario_crash):
        sub = Cluster(scenario.__name__)
        try:
            scenario(sub)
        except Exception:
            print(sub.tail("gpud"))
            print(sub.tail("worker"))
            sub.cleanup(keep=True)
            print("logs kept in", sub.dir)
            raise
        sub.cleanup(keep=os.environ.get("GPUD_KEEP") == "1")


if __name__ == "__main__":
    run(test_replica)
