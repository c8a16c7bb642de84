"""A Graveler histogram reshaped by a lying worker (issue 34, items 1 and 2).

The worker computes its leases honestly, then changes only the histogram:
 - 300 battles moved from bin 57 into 56 and 58 (count, top bin and count
   sum kept): refused at verification, whose decoder finds that the
   segments' sketches no longer add up to the histogram's;
 - a large reshape along a vector of the sketch's kernel (found by lattice
   reduction, tests/system/sketch_lattice.py), which keeps every check of
   the records: verified, then blamed by the job's final check (the lease's
   own histogram does not fit Binomial(231, 1/4)), sent back to pending
   with its worker charged, computed again by an honest worker, and the job
   ends with the exact answer; nothing else is computed twice."""
import os
import re
import subprocess

from harness import BUILD, Cluster, RawWorker, blob, check, run, wait_for
from sketch_lattice import kernel_vectors

FORGE = os.path.join(BUILD, "tests", "system", "graveler_forge")
UNITS = 1 << 20
SEED = 3434
LO, HI = 52, 64   # the bins the reshape moves battles between
MULT = 2000       # the kernel vector times this: thousands of battles a bin


def lie(cl, rw, mode):
    """Claim a lease, upload an honest result with its histogram changed
    (graveler_forge mode); returns (lease, epoch)."""
    rw.send_msg("CLAIM", {"rate": 0})
    lease, _ = rw.expect("LEASE")
    spec = lease["spec"]
    out = os.path.join(cl.dir, "lie-%d-%d.bin" % (lease["lease"], lease["epoch"]))
    r = subprocess.run([FORGE, str(SEED), str(spec["begin"]), str(spec["end"]), mode, out],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "graveler_forge %s failed: %s %s" % (mode, r.stdout, r.stderr))
    raw = open(out, "rb").read()
    rw.send_msg("RESULT", {"lease": lease["lease"], "epoch": lease["epoch"],
                           "units_done": spec["end"] - spec["begin"], "seconds": 1.0},
                blob(2, "graveler", lease["lease"], lease["epoch"], raw))
    f = rw.recv()
    check(f is not None and f[0] in ("ACK", "ERROR"), "no reply to the result: %s" % (f,))
    return lease["lease"], lease["epoch"], r.stdout.strip()


def test_blame_graveler(cl: Cluster):
    vec = kernel_vectors(LO, HI)[0]
    cl.gpud_args = ["--lease-units", str(UNITS)]
    cl.start_gpud()
    job = cl.submit("graveler", battles=2 * UNITS, seed=SEED)
    _, name, secret = cl.add_token("liar")
    rw = RawWorker(cl.port, name, secret)
    rw.login()
    # The attack: refused by the sketch at verification.
    first, e1, said = lie(cl, rw, "move300")
    check(said == "decodes" or "sketches" in said, "forge: %s" % said)
    pat = r"lease failed verification job=\d+ lease=%d epoch=%d reason=(.*)" % (first, e1)
    m = wait_for(lambda: re.search(pat, cl.log_text("gpud")), 30, "the 300-battle move refused")
    check("sketches" in m.group(1), "refused for another reason: %s" % m.group(1))
    # A reshape in the sketch's kernel passes every record check.
    second, e2, said = lie(cl, rw, "reshape:%d:%d:%s" % (LO, MULT, ",".join(map(str, vec))))
    check(said == "decodes", "the kernel reshape must decode: %s" % said)
    wait_for(lambda: re.search(r"lease verified job=\d+ lease=%d epoch=%d" % (second, e2),
                               cl.log_text("gpud")), 30, "the kernel reshape verified")
    rw.close()
    # An honest worker computes the first lease; the final check fails and
    # blames the reshaped one, which it then computes again.
    cl.start_worker("cpu:1")
    cl.check_reference(job, 180, battles=2 * UNITS, seed=SEED)
    blamed = cl.db_rows("SELECT lease_id, detail FROM events WHERE kind = 'final_check_blamed' "
                        "AND job_id = ?", job)
    check([b[0] for b in blamed] == [second], "blamed: %s" % (blamed,))
    check("Binomial" in blamed[0][1], "blame reason: %s" % blamed[0][1])
    fails = cl.db_rows("SELECT lease_id FROM lease_failures AS f JOIN workers AS w "
                       "ON w.id = f.worker_id WHERE w.credential = ?", name)
    check(sorted(f[0] for f in fails) == sorted([first, second]),
          "the liar charged for both leases: %s" % (fails,))
    # Each lease computed once more, no other.
    grants = cl.db_rows("SELECT lease_id, count(*) FROM events WHERE kind = 'grant' AND job_id = ? "
                        "GROUP BY lease_id ORDER BY lease_id", job)
    check(grants == sorted([(first, 2), (second, 2)]), "grants: %s" % (grants,))
    st = cl.status(job)
    check(st["state"] == "done", "job state: %s" % st)


if __name__ == "__main__":
    run(test_blame_graveler)
