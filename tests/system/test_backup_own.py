"""A backup shares nothing with the live directory (issue 34, item 9):
backups hard-linked blobs, so damage to a live blob damaged the backup
too. Now a live result blob damaged after a backup is the live store's
alone: gpuctl check names it there, while the backup, restored into a new
directory, checks sound and serves the exact answer. A backup taken of a
damaged answer (one digit changed outside gpud) says so (exit 1)."""
import json
import os
import shutil
import subprocess

from harness import Cluster, check, lease_units_for, run


def test_backup_own(cl: Cluster):
    units = lease_units_for(0.2)
    cl.gpud_args = ["--lease-units", str(units)]
    cl.start_gpud()
    job = cl.submit("graveler", battles=units * 2, seed=9)
    cl.start_worker("cpu:1", ["--exit-when-idle"])
    cl.wait_job(job, timeout=180)
    want = cl.result(job)
    want.pop("files")

    dest = os.path.join(cl.dir, "backup")
    rep = json.loads(cl.ctl("backup", dest, "--json", timeout=120).stdout)
    check(rep["verified"] and rep["linked"] + rep["copied"] == rep["blobs"] >= 2, "backup: %s" % rep)
    hashes = [h for (h,) in cl.db_rows("SELECT result FROM leases WHERE result IS NOT NULL ORDER BY id")]
    live = os.path.join(cl.data, "blobs", hashes[0][:2], hashes[0])
    kept = os.path.join(dest, "blobs", hashes[0][:2], hashes[0])
    check(os.stat(live).st_ino != os.stat(kept).st_ino, "the backup's blob is a file of its own")
    good = open(kept, "rb").read()
    with open(live, "r+b") as f:  # damage in place, as a bad disk would
        f.seek(80)
        b = f.read(1)
        f.seek(80)
        f.write(bytes([b[0] ^ 0xff]))
    r = cl.ctl("check", check_rc=False)
    check(r.returncode == 1 and hashes[0] in r.stdout and "corrupt" in r.stdout,
          "the live store's damage is named:\n" + r.stdout)
    check(open(kept, "rb").read() == good, "the backup's blob is untouched")

    # A damaged answer: the backup of it says so.
    answer = cl.db_rows("SELECT answer FROM jobs WHERE id = ?", job)[0][0]
    i = next(k for k in range(1, len(answer)) if answer[k].isdigit() and answer[k - 1].isdigit())
    bad = answer[:i] + str((int(answer[i]) + 1) % 10) + answer[i + 1:]
    # (sqlite3 waits up to 10 s for gpud's write transactions: gpud runs.)
    r = subprocess.run(["sqlite3", os.path.join(cl.data, "gpud.db")], timeout=30, capture_output=True,
                       input=".timeout 10000\nUPDATE jobs SET answer = '%s' WHERE id = %d;"
                       % (bad.replace("'", "''"), job), text=True)
    check(r.returncode == 0, "sqlite3 failed: %s" % r.stderr)
    r = cl.ctl("backup", os.path.join(cl.dir, "backup2"), check_rc=False, timeout=120)
    check(r.returncode == 1 and ("job %d: its stored answer does not match its digest" % job) in r.stdout
          and "NOT SOUND" in r.stdout, "a backup of a damaged answer says so:\n" + r.stdout)
    cl.stop_gpud()

    # The first backup, restored: sound, the exact answer.
    cl2 = Cluster("backup_own_restored")
    try:
        shutil.copytree(dest, cl2.data, symlinks=True)
        cl2.start_gpud()
        r = cl2.ctl("check")
        check("problem" in r.stdout and "0 problem(s)" in r.stdout, "the restored store is sound:\n" + r.stdout)
        got = cl2.result(job)
        got.pop("files")
        check(got == want, "the restored answer is exact: %s != %s" % (got, want))
        cl2.stop_gpud()
    finally:
        cl2.cleanup()


if __name__ == "__main__":
    run(test_backup_own)
