"""Lazy Graveler workers (issue 20, item 2). A worker that computes only
part of its lease honestly and fabricates the rest consistently (segment
records below the true maximum with average sums, a histogram of
Binomial(231, 1/4) expectations that passes every decoder check) is refused
by verification, which recomputes segments drawn with gpud's secret seed
after the upload; so is the attack of the issue (a few segments computed,
everything else expectations). An honest worker then redoes the leases and
the job ends exact. A refused lease is never granted to the worker that
failed it again, even after gpud is killed and restarted: the lazy worker's
second claim gets new work, its third none (both leases wait for another
worker, and gpuctl status says so)."""
import os
import re
import sqlite3
import subprocess

from harness import BUILD, Cluster, RawWorker, blob, check, run, wait_for

FORGE = os.path.join(BUILD, "tests", "system", "graveler_forge")
UNITS = 1 << 22  # 16,384 segments of one chunk per lease
SEED = 4242


def cheat(cl, rw, keep):
    """Claim a lease, upload a result honest on `keep` of its segments;
    returns the lease id once gpud has refused it."""
    rw.send_msg("CLAIM", {"rate": 0})
    lease, _ = rw.expect("LEASE")
    spec = lease["spec"]
    out = os.path.join(cl.dir, "forged-%d-%d.bin" % (lease["lease"], lease["epoch"]))
    r = subprocess.run([FORGE, str(SEED), str(spec["begin"]), str(spec["end"]), str(keep), out],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "graveler_forge failed: %s" % r.stderr)
    raw = open(out, "rb").read()
    units = spec["end"] - spec["begin"]
    rw.send_msg("RESULT", {"lease": lease["lease"], "epoch": lease["epoch"], "units_done": units,
                           "seconds": 1.0}, blob(2, "graveler", lease["lease"], lease["epoch"], raw))
    f = rw.recv()
    check(f is not None and f[0] in ("ACK", "ERROR"), "no reply to the result: %s" % (f,))
    pat = r"lease failed verification job=\d+ lease=%d epoch=%d reason=(.*)" % (lease["lease"], lease["epoch"])
    m = wait_for(lambda: re.search(pat, cl.log_text("gpud")), 30, "the forged result refused")
    check("recomputed" in m.group(1), "refused for another reason: %s" % m.group(1))
    check("lease verified job=" not in cl.log_text("gpud"), "a forged result was verified")
    return lease["lease"]


def test_lazy_graveler(cl: Cluster):
    cl.gpud_args = ["--lease-units", str(UNITS)]
    cl.start_gpud()
    job = cl.submit("graveler", battles=2 * UNITS, seed=SEED)
    _, name, secret = cl.add_token("lazy")
    rw = RawWorker(cl.port, name, secret)
    rw.login()
    first = cheat(cl, rw, 0.5)      # half of the lease computed
    rw.close()
    # Who failed a lease is durable: kill -9 and restart gpud.
    cl.kill_gpud()
    cl.start_gpud()
    rw = RawWorker(cl.port, name, secret)
    rw.login()
    second = cheat(cl, rw, 1024 / 16384.0)  # the attack: 1,024 chunks
    check(second != first, "lease %d was granted again to the worker that failed it" % first)
    # Both leases wait for another worker; the lazy one gets none.
    rw.send_msg("CLAIM", {"rate": 0})
    nl, _ = rw.expect("NOLEASE", timeout=30)
    check("wait for another worker" in nl["reason"], "the lazy worker's refusal: %s" % nl)
    rw.close()
    con = sqlite3.connect("file:%s?mode=ro" % os.path.join(cl.data, "gpud.db"), uri=True)
    try:
        grants = con.execute("SELECT e.lease_id, count(*) FROM events AS e JOIN workers AS w "
                             "ON w.id = e.worker_id WHERE e.kind = 'grant' AND w.credential = ? "
                             "GROUP BY e.lease_id", (name,)).fetchall()
    finally:
        con.close()
    check(sorted(grants) == sorted([(first, 1), (second, 1)]),
          "each lease granted once to the lazy worker: %s" % grants)
    st = cl.status(job)
    check(st["state"] != "done", "job done from forged results")
    check("failed on a worker" in (st.get("reason") or ""), "status reason: %s" % st.get("reason"))
    # An honest worker redoes the refused leases: the exact answer.
    cl.start_worker("cpu:1")
    cl.check_reference(job, 120, battles=2 * UNITS, seed=SEED)


if __name__ == "__main__":
    run(test_lazy_graveler)
