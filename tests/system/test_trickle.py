"""A trickle is a stall (issue 34, item 2): a hoarder that adds one unit per
heartbeat keeps its progress growing, which --progress-timeout alone never
took back. Progress is owed at the measured rate: over each window of the
timeout a holder must show a tenth of what its verified rate in the job
predicts, or, not verified there yet, of the job's slowest verified rate
over 1e4. The trickler is revoked and charged with stalls like a hoarder
that shows nothing, the honest worker beside it is never revoked, and the
job ends exactly."""
import json
import re
import time

from harness import Cluster, check, run, wait_for

STALL_S = 3


def test_trickle(cl: Cluster):
    units = cl.start_gpud_leases(0.5, "0.3", "2", extra=["--progress-timeout", str(STALL_S),
                                                        "--quarantine-after", "2"])
    job = cl.submit("graveler", battles=12 * units, seed=13)
    cl.start_worker("cpu:1")
    # The honest worker's first verified lease gives the job a measured rate.
    wait_for(lambda: cl.db_rows("SELECT verified FROM job_rates WHERE job_id = ? AND verified > 0", job),
             60, "a verified rate in the job")
    _, name, secret = cl.add_token("trickler")
    t = cl.raw_worker(name=name, secret=secret)
    t.send_msg("CLAIM", {})
    kind, lease, _ = t.recv(15)
    check(kind == "LEASE", "the trickler's claim: %s %s" % (kind, lease))
    start = lease.get("units_done", 0)
    done, t0, action = start, time.time(), "continue"
    # A trickler ignores gpud's asking for the lease back (give_back: the
    # tail wants it cut for the idle honest worker).
    while action in ("continue", "give_back") and time.time() - t0 < 4 * STALL_S:
        done += 1  # progress that grows, one unit a heartbeat
        t.send_msg("HEARTBEAT", {"lease": lease["lease"], "epoch": lease["epoch"], "units_done": done})
        kind, msg, _ = t.recv(15)
        check(kind == "HB_ACK", "the trickler's heartbeat: %s %s" % (kind, msg))
        action = msg["action"]
        time.sleep(0.3)
    held_s = time.time() - t0
    check(action == "stop", "the trickler kept its lease %.1f s (%d units)" % (held_s, done))
    check(held_s < 2 * STALL_S + 2, "revoked after %.1f s, the timeout is %d s" % (held_s, STALL_S))
    log = cl.log_text("gpud")
    m = re.search(r"lease revoked .*worker=trickler reason=(too little progress[^\n]*)", log)
    check(m and "not verified in the job" in m.group(1), "the revocation's reason: %s" % (m and m.group(1)))
    check(not re.search(r"lease revoked .*worker=local", log), "the honest worker was revoked")
    cl.check_reference(job, 180, battles=12 * units, seed=13)
    w = {x["name"]: x for x in json.loads(cl.ctl("workers", "--json").stdout)}
    check(w["trickler@raw"]["stalls"] == 1 and w["trickler@raw"]["leases_done"] == 0,
          "the trickler's record: %s" % w["trickler@raw"])
    honest = [x for n, x in w.items() if n.startswith("local@")]
    check(honest and honest[0]["stalls"] == 0, "the honest worker's record: %s" % honest)
    print("trickler revoked after %.1f s and %d units: %s" % (held_s, done - start, m.group(1)))
    t.close()


if __name__ == "__main__":
    run(test_trickle)
