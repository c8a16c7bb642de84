"""gpud's own damaged input is charged to nobody (issue 34, item 9). An
Othello job's input file, stored by gpud as a blob, is damaged on disk
after submission: the worker that fetches it for a lease is refused, its
run fails and it releases the lease with the error. gpud finds its own
copy damaged, so no lease failure and no worker failure are counted (before,
each worker's failed run counted against the lease until the job failed
with the workers blamed); the job is paused with a reason naming the blob
and how to repair it. Restored from a copy and resumed, the job finishes
with the answer gpurun computes from the same file."""
import json
import os
import subprocess

from harness import GPURUN, Cluster, check, run, wait_for


def blob_path(cl, h):
    return os.path.join(cl.data, "blobs", h[:2], h)


def test_input_damage(cl: Cluster):
    cl.gpud_args = ["--lease-units", "100", "--heartbeat", "0.5", "--max-failures", "2"]
    cl.start_gpud()
    w = cl.start_worker("cpu:1")
    # A file of positions: a small random job's export.
    job0 = cl.submit("othello", random=300, empties=8, seed=5)
    cl.wait_job(job0, timeout=300)
    path = os.path.join(cl.dir, "pos.obf")
    with open(path, "w") as f:
        f.write(cl.ctl("result", str(job0)).stdout)
    w.kill()
    w.wait()

    job = int(cl.ctl("submit", "othello", "--file", path).stdout.strip())
    h = json.loads(cl.db_rows("SELECT params FROM jobs WHERE id = ?", job)[0][0])["input"]
    saved = open(blob_path(cl, h), "rb").read()
    with open(blob_path(cl, h), "r+b") as f:
        f.seek(70)
        f.write(b"\xff\xff")
    cl.start_worker("cpu:1")
    st = wait_for(lambda: (lambda s: s["state"] == "paused" and s)(cl.status(job)), 60,
                  "the job paused for its damaged input")
    reason = cl.db_rows("SELECT reason FROM jobs WHERE id = ?", job)[0][0] or ""
    check(h[:16] in reason and "damaged in gpud's own store" in reason and "no worker is charged" in reason
          and "gpuctl resume %d" % job in reason, "the job's reason: %s" % reason)
    check(st["reason"] == reason, "gpuctl status shows gpud's reason: %s" % st["reason"])
    check("job paused job=%d" % job in cl.log_text("gpud"), "gpud's log names the pause")
    ev = cl.db_rows("SELECT count(*) FROM events WHERE job_id = ? AND kind = 'blob_damaged'", job)[0][0]
    check(ev >= 1, "no blob_damaged event")
    # Nobody charged: no lease failure, no worker failure, no exclusion.
    fails = cl.db_rows("SELECT coalesce(sum(failures), 0) FROM leases WHERE job_id = ?", job)[0][0]
    check(fails == 0, "lease failures counted: %d" % fails)
    check(cl.db_rows("SELECT count(*) FROM lease_failures AS f JOIN leases AS l ON l.id = f.lease_id "
                     "WHERE l.job_id = ?", job)[0][0] == 0, "a worker was excluded from a lease")
    check(cl.db_rows("SELECT count(*) FROM events WHERE job_id = ? AND kind = 'run_failed'", job)[0][0] == 0,
          "a run failure was recorded")
    for x in json.loads(cl.ctl("workers", "--json").stdout):
        check(x["failures"] == 0 and not x["quarantined"], "a worker charged: %s" % x)

    # Repaired from a copy and resumed: the job finishes exactly.
    with open(blob_path(cl, h), "wb") as f:
        f.write(saved)
    cl.ctl("resume", str(job))
    cl.wait_job(job, timeout=300)
    r = subprocess.run([GPURUN, "othello", "--file", path, "--json"], capture_output=True, text=True,
                       timeout=300)
    check(r.returncode == 0, "gpurun: " + r.stderr)
    check(cl.result(job)["answer"]["hist"] == json.loads(r.stdout)["answer"]["hist"],
          "the answer differs from gpurun's")
    print("paused: %s" % reason)


if __name__ == "__main__":
    run(test_input_damage)
