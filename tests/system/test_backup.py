"""`gpuctl backup` taken while a Graveler and an Officers job run, restored
into a new data directory: a new gpud there, with a worker, finishes both
jobs to the same answers as the original. The backup is of the middle of
the jobs (its database has leases not yet verified), its granted leases are
pending in it, its blobs are files of its own (never hard links to the
live ones), and a second backup into the same directory is refused."""
import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess

from harness import GPUCTL, Cluster, answer_core, check, reference_answer, run, wait_for

# FNV-1a 64 of Officers' G(0..199999) (test_officers.py).
FNV_200000 = "578c9b17d82c6a47"
BATTLES = 40 << 20      # 40 leases of 2^20 battles, Graveler's smallest
LEASE_UNITS = 40000     # Officers: 5 extensions to 200000


def verified(cl, job):
    return cl.status(job)["leases"]["verified"]


def outcome(cl, job):
    """What must not depend on where and when the job ran: its result but
    the path of its files. Officers' "state" names the blob of its last
    values, whose header holds the lease's epoch (a lease granted again
    after the restore has a new one): the values themselves are compared."""
    res = cl.result(job)
    res.pop("files")
    if res["workload"] == "officers":
        res["answer"].pop("state")
        r = subprocess.run([GPUCTL, "--socket", cl.sock, "result", str(job), "--values",
                            "0:%d" % res["answer"]["n"]], capture_output=True, timeout=60)
        check(r.returncode == 0 and len(r.stdout) == 2 * res["answer"]["n"],
              "Officers values of job %d: %s" % (job, r.stderr))
        res["values"] = hashlib.sha256(r.stdout).hexdigest()
    return res


def differs(a, b):
    """Where two results differ, in words."""
    out = []
    for k in sorted(set(a) | set(b)):
        if k == "answer" and isinstance(a.get(k), dict) and isinstance(b.get(k), dict):
            out += ["answer." + d for d in differs(a[k], b[k])]
        elif a.get(k) != b.get(k):
            out.append("%s: %s != %s" % (k, json.dumps(a.get(k))[:300], json.dumps(b.get(k))[:300]))
    return out


def test_backup(cl: Cluster):
    cl.gpud_args = ["--lease-units", str(LEASE_UNITS), "--heartbeat", "0.5",
                    "--checkpoint-interval", "0.1"]
    cl.start_gpud()
    off = cl.submit("officers", to=200000)
    grav = cl.submit("graveler", battles=BATTLES, seed=21)
    cl.start_worker("cpu:1", ["--checkpoint-interval", "0.1"])
    wait_for(lambda: verified(cl, off) >= 1 and verified(cl, grav) >= 1, 120,
             "both jobs under way")

    dest = os.path.join(cl.dir, "backup")
    r = cl.ctl("backup", dest, "--json", timeout=120)
    rep = json.loads(r.stdout)
    print("backup:", json.dumps({k: v for k, v in rep.items() if k not in ("problems", "database")}))
    check(rep["verified"] and rep["problems_total"] == 0 and rep["database"] == [],
          "backup not verified: %s" % rep)
    check(rep["path"] == dest and rep["blobs"] >= 2 and rep["bytes"] > rep["database_bytes"],
          "backup reply: %s" % rep)
    check(rep["linked"] + rep["copied"] == rep["blobs"], "every blob reflinked or copied: %s" % rep)
    for sub, _, files in os.walk(os.path.join(dest, "blobs")):
        for f in files:
            check(os.stat(os.path.join(sub, f)).st_nlink == 1, "a blob shares its file: %s" % f)
    check(stat.S_IMODE(os.stat(dest).st_mode) == 0o700, "backup directory not private")
    names = set(os.listdir(dest))
    # Never a credential's secret key: the restored gpud makes its local
    # worker a new one (the worker below logs in with it).
    check({"backup.json", "blobs", "gpud.db"} <= names <= {"backup.json", "blobs", "gpud.db", "gpud.key"},
          "backup holds %s" % sorted(names))
    manifest = json.load(open(os.path.join(dest, "backup.json")))
    check(manifest["database"]["bytes"] == os.path.getsize(os.path.join(dest, "gpud.db"))
          and manifest["blobs"] == rep["blobs"] and manifest["verified"],
          "manifest %s" % manifest)

    # The middle of both jobs: active, leases not verified yet; none still
    # granted (those the snapshot saw are pending again, reason given).
    db = sqlite3.connect("file:%s/gpud.db?mode=ro" % dest, uri=True)
    for job in (off, grav):
        state, total, done = db.execute(
            "SELECT state, total_units, units_verified FROM jobs WHERE id = ?", (job,)).fetchone()
        check(state == 0 and 0 < done < total,
              "job %d in the backup: state %d, %d of %d units verified" % (job, state, done, total))
    granted = db.execute("SELECT count(*) FROM leases WHERE state = 1").fetchone()[0]
    released = db.execute("SELECT count(*) FROM leases WHERE last_error LIKE "
                          "'granted when the backup was taken%'").fetchone()[0]
    db.close()
    check(granted == 0 and released == rep["leases_released"],
          "granted leases in the backup: %d, released %d, reply %d" % (granted, released,
                                                                       rep["leases_released"]))

    again = cl.ctl("backup", dest, check_rc=False)
    check(again.returncode == 1 and "is not empty" in again.stderr,
          "a backup into a non-empty directory: %d %s" % (again.returncode, again.stderr))

    cl.wait_job(grav, timeout=300)
    cl.wait_job(off, timeout=300)
    want = {job: outcome(cl, job) for job in (grav, off)}
    check(cl.stop_gpud() == 0, "gpud should exit 0 on SIGTERM")

    # Restore: a copy of the backup is a data directory.
    cl2 = Cluster("backup_restored")
    try:
        shutil.copytree(dest, cl2.data, symlinks=True)
        cl2.gpud_args = cl.gpud_args
        cl2.start_gpud()
        cl2.start_worker("cpu:1", ["--checkpoint-interval", "0.1"])
        cl2.wait_job(grav, timeout=300)
        cl2.wait_job(off, timeout=300)
        for job in (grav, off):
            got = outcome(cl2, job)
            check(got == want[job], "job %d after the restore differs in %s" % (job, differs(got, want[job])))
        log = cl2.log_text("gpud")
        check("missing" not in log, "the restored gpud misses blobs:\n" + cl2.tail("gpud"))
        check(cl2.stop_gpud() == 0, "the restored gpud should exit 0 on SIGTERM")
    except Exception:
        print(cl2.tail("gpud"))
        print(cl2.tail("worker"))
        raise
    finally:
        cl2.cleanup()
    check(want[off]["answer"]["fnv"] == FNV_200000, "Officers checksum %s" % want[off]["answer"]["fnv"])
    check(answer_core(want[grav]["answer"]) == reference_answer("graveler", battles=BATTLES, seed=21),
          "Graveler answer differs from the reference")


if __name__ == "__main__":
    run(test_backup)
