"""The tail (issue 33): a job that is one big lease, held by worker A
alone. Worker B starts and finds nothing; gpud takes back the rest of A's
lease at A's next heartbeat, cuts it, and B gets a piece: the job ends
exact, both workers computed part of it, and in clearly less time than A
alone would take. Then a holder that finishes before it acts on the
takeback (a raw worker that uploads its result instead of releasing) has
its result accepted as usual, and its lease stays whole."""
import os
import time
import zlib

from harness import Cluster, RawWorker, blob, check, cpu_rate, run, wait_for

ALONE_S = 16  # the job's length for one worker of one thread


def events(cl, kind, job):
    return cl.db_rows("SELECT e.ts, w.name, e.detail FROM events AS e LEFT JOIN workers AS w "
                 "ON w.id = e.worker_id WHERE e.kind = ? AND e.job_id = ? ORDER BY e.id", kind, job)


def token(worker):
    """A worker row's token (its name is token@host:pid, one per process)."""
    return worker.split("@")[0]


def tail_shared(cl):
    battles = int(cpu_rate() * ALONE_S) // 256 * 256
    tok_a, _, _ = cl.add_token("wa")
    tok_b, _, _ = cl.add_token("wb")
    t0 = time.time()
    job = cl.submit("graveler", battles=battles, seed=33)
    cl.start_worker("cpu:1", token_file=tok_a)
    wait_for(lambda: events(cl, "grant", job), 20, "A's grant")
    time.sleep(2)
    cl.start_worker("cpu:1", token_file=tok_b)
    cl.wait_job(job, timeout=120)
    wall = time.time() - t0
    cl.check_reference(job, 120, battles=battles, seed=33)
    cuts = events(cl, "takeback", job)
    check(cuts, "no takeback: %s" % cl.tail("gpud"))
    check(token(cuts[0][1]) == "wa", "the takeback was of A's lease: %s" % (cuts,))
    holders = {token(r[1]) for r in events(cl, "grant", job)}
    check(holders == {"wa", "wb"}, "both workers should hold a lease of the job: %s" % holders)
    done = {token(r[0]) for r in cl.db_rows("SELECT DISTINCT w.name FROM leases AS l JOIN workers AS w "
                                "ON w.id = l.worker_id WHERE l.job_id = ? AND l.state = 3", job)}
    check(done == {"wa", "wb"}, "both workers should have computed a verified piece: %s" % done)
    units = cl.db_rows("SELECT sum(units), count(*) FROM leases WHERE job_id = ? AND replica_of IS NULL", job)[0]
    check(units[0] == battles and units[1] >= 2, "the pieces add up to the job: %s" % (units,))
    # Its record and history show the job whole, every piece verified.
    st = cl.status(job)
    check(st["state"] == "done", "status: %s" % st)
    rec = cl.ctl("status", str(job)).stdout
    check("done" in rec and cl.ctl("check").returncode == 0, "status and check: %s" % rec)
    # A alone: the job at the rate the pieces ran at (units past their
    # grant's start over the grant's time to the result, gpud's events):
    # on a shared machine two workers may run slower each than one alone.
    pieces = cl.db_rows("SELECT l.units - l.granted_units, "
                   "(SELECT max(ts) FROM events WHERE kind = 'result' AND lease_id = l.id) - "
                   "(SELECT max(ts) FROM events WHERE kind = 'grant' AND lease_id = l.id) "
                   "FROM leases AS l WHERE l.job_id = ?", job)
    rate = sum(u / t for u, t in pieces) / len(pieces)
    start = events(cl, "grant", job)[0][0]
    end = cl.db_rows("SELECT finished_at FROM jobs WHERE id = ?", job)[0][0]
    alone = battles / rate
    check(end - start < 0.85 * alone, "the job took %.1f s, A alone about %.1f s" % (end - start, alone))
    print("one big lease of %d battles: %.1f s with the takeback (%.1f s with gpuctl), A alone "
          "about %.1f s; cuts: %s" % (battles, end - start, wall, alone, [c[2] for c in cuts]))


def stored_result(cl, job):
    """The decoded bytes of the result stored for a job of one lease."""
    h = cl.db_rows("SELECT result FROM leases WHERE job_id = ?", job)[0][0]
    data = open(os.path.join(cl.data, "blobs", h[:2], h), "rb").read()
    return zlib.decompress(data[64:])


def finished_first(cl):
    """A raw holder told to give back uploads its result instead: taken.
    Its honest result is that of the same lease of an earlier job."""
    battles = 1 << 22
    first = cl.submit("graveler", battles=battles, seed=34)
    cl.wait_job(first, timeout=60)
    raw = stored_result(cl, first)
    for p in cl.workers:  # so that the raw worker gets the job's lease
        p.kill()
        p.wait(10)
    job = cl.submit("graveler", battles=battles, seed=34)
    _, name, secret = cl.add_token("raw")
    rw = RawWorker(cl.port, name, secret)
    rw.login()
    lease, _ = rw.claim_lease()
    check(lease["job"] == job and lease["units"] == battles, "one lease of the job: %s" % lease)
    # A worker whose claim finds nothing: idle.
    tok, _, _ = cl.add_token("idle")
    cl.start_worker("cpu:1", token_file=tok)
    action = None
    deadline = time.time() + 20
    units = 0
    while time.time() < deadline and action != "give_back":
        time.sleep(0.6)
        units += 256
        rw.send_msg("HEARTBEAT", {"lease": lease["lease"], "epoch": lease["epoch"], "units_done": units})
        action = rw.expect("HB_ACK")[0]["action"]
    check(action == "give_back", "gpud should want the lease back: %s" % action)
    rw.send_msg("RESULT", {"lease": lease["lease"], "epoch": lease["epoch"], "units_done": battles,
                           "seconds": 1.0}, blob(2, "graveler", lease["lease"], lease["epoch"], raw))
    ack, _ = rw.expect("ACK", timeout=30)
    check(ack["what"] == "result", "the result acknowledged: %s" % ack)
    rw.close()
    cl.wait_job(job, timeout=60)
    check(cl.result(job)["answer"] == cl.result(first)["answer"], "the answer of the result taken")
    check(not events(cl, "takeback", job), "a finished lease was cut")
    n = cl.db_rows("SELECT count(*) FROM leases WHERE job_id = ?", job)[0][0]
    check(n == 1, "the lease stays whole: %d leases" % n)


def test_takeback(cl: Cluster):
    cl.gpud_args = ["--heartbeat", "0.5", "--lease-min-seconds", "1", "--lease-units", str(1 << 40)]
    cl.start_gpud()
    tail_shared(cl)
    finished_first(cl)


if __name__ == "__main__":
    run(test_takeback)
