"""Deep Othello checked by default (issue 34, item 8): gpud never re-solves
a position above 22 empties, so verification draws a secret spot replica
(WL_VERIFY_SPOT) for a lease of d of them with probability min(1, d / 32).

A protocol client ("liar") claims the only lease of a file job of 40 such
positions (d >= 32: the draw is certain) and uploads the honest result
with every score made up. Two honest workers of other credentials are in
the fleet: the lease waits for a replica, the two honest results outvote
the lie, the liar is charged, and the job ends with gpurun's answer.

Then, with the liar alone in a fresh cluster, the same lie merges (nobody
could answer a replica: event spot_skipped) instead of waiting forever.

The positions hold discs of one colour only: the game is over, so the
honest workers solve them at once however many squares are empty.
"""
import json
import os
import re
import subprocess
import zlib

from harness import (BUILD, Cluster, answer_core, blob, check,
                     reference_answer, run, wait_for)

WLRUN = os.path.join(BUILD, "tests", "wlrun")
DEEP = 40  # positions above 22 empties in the lease


def write_positions(path):
    """DEEP one-colour boards of 23 to 28 empties (fixed places)."""
    lines, h = [], 34
    for i in range(DEEP):
        b = ["X"] * 64
        e = 23 + i % 6
        while b.count("-") < e:
            h = (h * 6364136223846793005 + 1442695040888963407) % 2**64
            b[(h >> 33) % 64] = "-"
        lines.append("".join(b) + (" X" if i % 2 == 0 else " O"))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def stored_blob(cl, h):
    """A blob gpud stored, decoded (the workload's bytes)."""
    for root, _, files in os.walk(os.path.join(cl.data, "blobs")):
        if h in files:
            data = open(os.path.join(root, h), "rb").read()
            return zlib.decompress(data[64:])
    check(False, "blob %s not found" % h)


def liar_upload(cl, job, before_upload=lambda: None):
    """The liar claims the job's one lease, runs it honestly (wlrun, with
    the job's input), makes every score a draw and, after before_upload(),
    uploads it. Returns the lease message and the liar's connection."""
    _, name, secret = cl.add_token("liar")
    rw = cl.raw_worker(name=name, secret=secret, workloads=("othello",))
    lease, _ = rw.claim_lease()
    check(lease["job"] == job and lease["spec"]["count"] == DEEP,
          "one lease of all %d positions: %s" % (DEEP, lease["spec"]))
    inp = os.path.join(cl.dir, "input.bin")
    h = lease["params"]["input"]
    with open(inp, "wb") as f:
        f.write(stored_blob(cl, h))
    out = os.path.join(cl.dir, "honest.bin")
    r = subprocess.run([WLRUN, "othello", json.dumps(lease["params"]), json.dumps(lease["spec"]),
                        out, "--blob", h, inp], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "wlrun failed: " + r.stderr)
    raw = bytearray(open(out, "rb").read())
    check(raw[:4] == b"OTHR", "an Othello result")
    for i in range(DEEP):
        check(raw[56 + 2 * i] in (0, 64), "a finished game scores +-64")
        raw[56 + 2 * i] = 32  # score 0: every answer made up
    before_upload()
    lid, ep = lease["lease"], lease["epoch"]
    rw.send_msg("RESULT", {"lease": lid, "epoch": ep, "units_done": lease["units"], "seconds": 1},
                blob(2, "othello", lid, ep, bytes(raw)))
    rw.expect("ACK", timeout=30)
    return lease, rw


def submit(cl, path):
    return int(cl.ctl("submit", "othello", "--file", path, "--split", "0").stdout.strip())


def registered(cl, n):
    return cl.db_rows("SELECT count(*) FROM worker_workloads WHERE workload = 'othello'")[0][0] >= n


def scenario_caught(cl):
    cl.gpud_args = ["--lease-units", "64", "--heartbeat", "0.5", "--lease-timeout", "60",
                    "--quarantine-after", "1"]
    cl.start_gpud()
    path = os.path.join(cl.dir, "deep.obf")
    write_positions(path)
    job = submit(cl, path)
    tb, _, _ = cl.add_token("b")

    def honest_fleet():
        # They find the lease held, but join the workload's fleet.
        cl.start_worker("cpu:1")
        cl.start_worker("cpu:1", token_file=tb)
        wait_for(lambda: registered(cl, 3), 30, "the honest workers in the fleet")
    lease, rw = liar_upload(cl, job, honest_fleet)
    lid = lease["lease"]
    cl.wait_job(job, timeout=120)
    rw.close()
    res = cl.result(job)
    check(res["state"] == "done", "job not done: %s" % res["state"])
    check(answer_core(res["answer"], "othello") == reference_answer("othello", file=path, split=0),
          "answer differs from gpurun's")
    text = cl.log_text("gpud")
    check(re.search(r"lease checked, waits for another worker's result to agree job=%d lease=%d "
                    % (job, lid), text), "the lie should have waited for a spot replica")
    (state, err), = cl.db_rows("SELECT state, last_error FROM leases WHERE id = ?", lid)
    check(state == 3, "the primary takes the agreed result: state %s" % state)
    reps = cl.db_rows("SELECT state, worker_id FROM leases WHERE replica_of = ?", lid)
    check(len(reps) == 2 and all(s == 3 for s, _ in reps), "two agreeing replicas: %s" % reps)
    check(cl.db_rows("SELECT count(*) FROM events WHERE kind = 'spot_skipped'")[0][0] == 0,
          "no spot replica may be skipped with honest workers present")
    workers = {w["credential"]: w for w in json.loads(cl.ctl("workers", "--json").stdout)}
    check(workers["liar"]["failures"] == 1 and workers["liar"]["quarantined"],
          "the liar should be charged: %s" % workers["liar"])
    for c, w in workers.items():
        check(c == "liar" or w["failures"] == 0, "honest worker charged: %s" % w)


def scenario_alone(cl):
    cl.gpud_args = ["--lease-units", "64", "--heartbeat", "0.5", "--lease-timeout", "60"]
    cl.start_gpud()
    path = os.path.join(cl.dir, "deep.obf")
    write_positions(path)
    job = submit(cl, path)
    lease, rw = liar_upload(cl, job)
    cl.wait_job(job, timeout=60)
    rw.close()
    ev = cl.db_rows("SELECT lease_id FROM events WHERE kind = 'spot_skipped'")
    check(ev == [(lease["lease"],)], "one spot_skipped event for the lease: %s" % ev)
    check(not cl.db_rows("SELECT id FROM leases WHERE replica_of IS NOT NULL"),
          "no replica may be asked for when nobody could answer it")


def test_spot(cl: Cluster):
    scenario_caught(cl)
    sub = Cluster("spot_alone")
    try:
        scenario_alone(sub)
    except Exception:
        print(sub.tail("gpud"))
        sub.cleanup(keep=True)
        print("logs kept in", sub.dir)
        raise
    sub.cleanup(keep=os.environ.get("GPUD_KEEP") == "1")


if __name__ == "__main__":
    run(test_spot)
