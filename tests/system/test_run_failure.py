"""Run failures count toward --max-failures, and gpud's own damage counts
against no one. A graveler lease that three workers in turn release with
an error (their run failed) fails after --max-failures such runs, and its
job with it, with a reason naming the lease and the last error, instead of
the lease being granted again once a second forever; a lease whose run
failed on a worker is never granted to that worker again, so each run is
on another worker. An Officers job whose stored result blob (the state an
extension starts from) is damaged in gpud's store fails the extension's
run on the worker that fetches it: that is gpud's fault, so no failure is
counted and the job is paused with a reason naming the blob (issue 34)."""
import os
import re
import sqlite3
import time

from harness import Cluster, check, run, wait_for


def damaged_state(cl):
    """The Officers extension: gpud's own damaged blob, nobody charged."""
    w = cl.start_worker("cpu:1", ["--no-run-ahead"])
    job = cl.submit("officers", to=40000)
    cl.wait_job(job, timeout=120)
    # The worker keeps what it computed in its cache: stop it, so the next
    # one must fetch the damaged blob from gpud.
    w.kill()
    w.wait()
    last = cl.db_rows("SELECT result FROM leases WHERE job_id = ? AND state = 3 "
                      "ORDER BY id DESC LIMIT 1", job)[0][0]
    path = os.path.join(cl.data, "blobs", last[:2], last)
    with open(path, "r+b") as f:
        f.seek(100)
        b = f.read(1)
        f.seek(100)
        f.write(bytes([b[0] ^ 0x5A]))

    cl.ctl("extend", str(job), "--to", "60000")
    cl.start_worker("cpu:1", ["--no-run-ahead"])
    st = wait_for(lambda: (lambda s: s if s["state"] not in ("queued", "running") else None)(cl.status(job)),
                  60, "the job to stop being active")
    check(st["state"] == "paused", "job state %s: %s" % (st["state"], st))
    reason = cl.db_rows("SELECT reason FROM jobs WHERE id = ?", job)[0][0] or ""
    check(last[:16] in reason and "spec" in reason and "no worker is charged" in reason,
          "the reason should name gpud's damaged blob: %r" % reason)
    fails = cl.db_rows("SELECT coalesce(sum(failures), 0) FROM leases WHERE job_id = ?", job)[0][0]
    check(fails == 0, "lease failures counted for gpud's own damage: %d" % fails)
    return job


def test_run_failure(cl: Cluster):
    cl.gpud_args = ["--lease-units", "20000", "--heartbeat", "0.3", "--max-failures", "3"]
    cl.start_gpud()
    damaged_state(cl)

    job = cl.submit("graveler", battles=1 << 20, seed=4)
    for i in range(3):
        _, name, secret = cl.add_token("w%d" % i)
        rw = cl.raw_worker(name=name, secret=secret)
        lease, _ = rw.claim_lease()
        rw.send_msg("RELEASE", {"lease": lease["lease"], "epoch": lease["epoch"],
                                "error": "cuda: device lost (run %d)" % i})
        ack, _ = rw.expect("ACK")
        check(ack["what"] == "release", "the release: %s" % ack)
        rw.close()
    st = wait_for(lambda: (lambda s: s if s["state"] not in ("queued", "running") else None)(cl.status(job)),
                  60, "the job to stop being active")
    db = sqlite3.connect("file:%s/gpud.db?mode=ro" % cl.data, uri=True)
    failed = db.execute("SELECT id, failures FROM leases WHERE job_id = ? AND state = 4",
                        (job,)).fetchall()
    db.close()
    check(len(failed) == 1 and failed[0][1] == 3, "failed leases: %s" % failed)
    lease = failed[0][0]
    check(st["state"] == "failed", "job state %s: %s" % (st["state"], st))
    check(re.match(r"lease %d failed 3 times; last: run failed on a worker: cuda: device lost \(run 2\)"
                   % lease, st["reason"] or ""),
          "reason should name the lease and the last error: %r" % st["reason"])
    grants = re.findall(r"lease grant job=%d lease=%d " % (job, lease), cl.log_text("gpud"))
    check(len(grants) == 3, "the lease was granted %d times, want 3" % len(grants))
    by = cl.db_rows("SELECT DISTINCT worker_id FROM events WHERE kind = 'run_failed' "
                    "AND lease_id = ?", lease)
    check(len(by) == 3, "the lease's runs should fail on 3 different workers: %s" % by)
    # And it is not granted again.
    time.sleep(2)
    grants = re.findall(r"lease grant job=%d lease=%d " % (job, lease), cl.log_text("gpud"))
    check(len(grants) == 3, "granted again after the job failed: %d grants" % len(grants))
    check("job failed job=%d lease=%d" % (job, lease) in cl.log_text("gpud"), "no log line for the failed job")


if __name__ == "__main__":
    run(test_run_failure)
