"""A full disk under the data directory: gpud says so clearly (log, status
reason), stops granting new work, refuses what it cannot store without
losing anything already stored, and once space is back the job finishes
exactly and the database is intact. Needs root to mount a small tmpfs
(skipped, exit 77, otherwise)."""
import os
import sqlite3
import subprocess
import sys

from harness import Cluster, check, run, wait_for


def fill(path):
    """Write until the file system is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError:
        pass
    finally:
        os.close(fd)


def test_disk_full(cl: Cluster):
    mnt = os.path.join(cl.dir, "small")
    os.makedirs(mnt)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", mnt],
                                           capture_output=True).returncode != 0:
        print("SKIP: cannot mount a small tmpfs here")
        sys.exit(77)
    try:
        cl.data = os.path.join(mnt, "data")
        units = cl.start_gpud_leases(0.5, "0.3", "30")
        job = cl.submit("graveler", battles=units * 12, seed=31)
        cl.start_worker("cpu:1", ["--checkpoint-interval", "0.2"])
        wait_for(lambda: cl.status(job)["leases"]["verified"] >= 2, 60, "two verified leases")
        filler = os.path.join(mnt, "filler")
        fill(filler)
        wait_for(lambda: "cannot write the data directory" in cl.log_text("gpud"), 30, "a clear log line")
        st = wait_for(lambda: (lambda s: s if "disk full" in (s["reason"] or "") else None)(cl.status(job)),
                      30, "status reason saying the disk is full")
        check(cl.gpud.poll() is None, "gpud must not die on a full disk")
        r = cl.ctl("submit", "graveler", "--battles", "1000", check_rc=False)
        check(r.returncode == 1 and "cannot store the job" in r.stderr, "submit on a full disk: %s" % r.stderr)
        os.unlink(filler)
        cl.check_reference(job, 300, battles=units * 12, seed=31,
                           msg="answer differs after the disk was full")
        cl.stop_gpud()
        db = sqlite3.connect(os.path.join(cl.data, "gpud.db"))
        check(db.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "database damaged")
        db.close()
    finally:
        for p in cl.workers + ([cl.gpud] if cl.gpud else []):
            if p.poll() is None:
                p.kill()
                p.wait()
        subprocess.run(["umount", "-l", mnt], capture_output=True)


if __name__ == "__main__":
    run(test_disk_full)
