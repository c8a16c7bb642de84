"""Run failures count toward --max-failures: an Officers job whose stored
result blob is damaged, then extended, fails the extension's run on every
worker (the state it starts from does not fetch); after --max-failures such
runs the job fails with a reason naming the lease and the last error,
instead of the lease being granted again once a second forever. A lease
whose run failed on a worker is never granted to that worker again, so
each of the --max-failures runs is on another worker."""
import os
import re
import sqlite3
import time

from harness import Cluster, check, run, wait_for


def test_run_failure(cl: Cluster):
    cl.gpud_args = ["--lease-units", "20000", "--heartbeat", "0.3", "--max-failures", "3"]
    cl.start_gpud()
    w = cl.start_worker("cpu:1", ["--no-run-ahead"])
    job = cl.submit("officers", to=40000)
    cl.wait_job(job, timeout=120)
    # The worker keeps what it computed in its cache: stop it, so the next
    # one must fetch the damaged blob from gpud.
    w.kill()
    w.wait()
    db = sqlite3.connect("file:%s/gpud.db?mode=ro" % cl.data, uri=True)
    last = db.execute("SELECT result FROM leases WHERE job_id = ? AND state = 3 "
                      "ORDER BY id DESC LIMIT 1", (job,)).fetchone()[0]
    db.close()
    path = os.path.join(cl.data, "blobs", last[:2], last)
    with open(path, "r+b") as f:
        f.seek(100)
        b = f.read(1)
        f.seek(100)
        f.write(bytes([b[0] ^ 0x5A]))

    cl.ctl("extend", str(job), "--to", "60000")
    for i in range(3):
        tf, _, _ = cl.add_token("w%d" % i)
        cl.start_worker("cpu:1", ["--no-run-ahead"], token_file=tf)
    st = wait_for(lambda: (lambda s: s if s["state"] not in ("queued", "running") else None)(cl.status(job)),
                  60, "the job to stop being active")
    db = sqlite3.connect("file:%s/gpud.db?mode=ro" % cl.data, uri=True)
    failed = db.execute("SELECT id, failures FROM leases WHERE job_id = ? AND state = 4",
                        (job,)).fetchall()
    db.close()
    check(len(failed) == 1 and failed[0][1] == 3, "failed leases: %s" % failed)
    lease = failed[0][0]
    check(st["state"] == "failed", "job state %s: %s" % (st["state"], st))
    check(re.match(r"lease %d failed 3 times; last: run failed on a worker: .+" % lease, st["reason"] or ""),
          "reason should name the lease and the last error: %r" % st["reason"])
    grants = re.findall(r"lease grant job=%d lease=%d " % (job, lease), cl.log_text("gpud"))
    check(len(grants) == 3, "the lease was granted %d times, want 3" % len(grants))
    db = sqlite3.connect("file:%s/gpud.db?mode=ro" % cl.data, uri=True)
    by = db.execute("SELECT DISTINCT worker_id FROM events WHERE kind = 'run_failed' "
                    "AND lease_id = ?", (lease,)).fetchall()
    db.close()
    check(len(by) == 3, "the lease's runs should fail on 3 different workers: %s" % by)
    # And it is not granted again.
    time.sleep(2)
    grants = re.findall(r"lease grant job=%d lease=%d " % (job, lease), cl.log_text("gpud"))
    check(len(grants) == 3, "granted again after the job failed: %d grants" % len(grants))
    check("job failed job=%d lease=%d" % (job, lease) in cl.log_text("gpud"), "no log line for the failed job")


if __name__ == "__main__":
    run(test_run_failure)
