"""A damaged store is noticed (issue 20, item 5): temporary files and orphan
blobs are swept at start; gpuctl check names a missing or corrupt result
blob, exits 1 and marks the job damaged in status; a database with a
corrupted page refuses to start and says how to recover; a missing or
empty gpud.db beside existing blobs refuses to start unless --init, which
moves the old files aside."""
import glob
import os
import sqlite3
import subprocess

from harness import GPUD, Cluster, check, lease_units_for, run


def gpud_refused(cl, *extra):
    """Start a gpud that must refuse: its exit status and stderr."""
    r = subprocess.run([GPUD, "--data", cl.data, "--listen", "127.0.0.1:0", "--socket", cl.sock]
                       + list(extra), capture_output=True, text=True, timeout=30)
    check(r.returncode != 0, "gpud should have refused to start:\n" + r.stderr)
    return r.stderr


def results(db_path):
    db = sqlite3.connect(db_path)
    rows = db.execute("SELECT id, result FROM leases WHERE result IS NOT NULL ORDER BY id").fetchall()
    db.close()
    return rows


def blob_path(cl, h):
    return os.path.join(cl.data, "blobs", h[:2], h)


def test_store_damage(cl: Cluster):
    units = lease_units_for(0.2)
    cl.gpud_args = ["--lease-units", str(units)]
    cl.start_gpud()
    job = cl.submit("graveler", battles=units * 3, seed=5)
    cl.start_worker("cpu:1", ["--exit-when-idle"])
    cl.wait_job(job, timeout=120)
    check(cl.ctl("check").returncode == 0, "a sound store checks ok")
    cl.stop_gpud()
    db_path = os.path.join(cl.data, "gpud.db")
    res = results(db_path)
    check(len(res) == 3, "three results: %s" % res)

    # Swept at start: a temporary file and a blob no row names; kept: the
    # results.
    orphan = "ab" + "0" * 62
    os.makedirs(os.path.dirname(blob_path(cl, orphan)), exist_ok=True)
    open(blob_path(cl, orphan), "wb").write(b"orphan")
    tmp = os.path.join(os.path.dirname(blob_path(cl, res[0][1])), ".tmp-%s-0011223344556677" % res[0][1])
    open(tmp, "wb").write(b"half written")
    cl.start_gpud()
    check(not os.path.exists(blob_path(cl, orphan)), "orphan blob should be swept")
    check(not os.path.exists(tmp), "temporary file should be swept")
    check(all(os.path.exists(blob_path(cl, h)) for _, h in res), "referenced results must be kept")
    log = cl.log_text("gpud")
    check("removed orphan blob" in log and "removed temporary file" in log, "the sweep logs what it removed")

    # A corrupt result and a missing one: check names both, exits 1, and
    # status shows the job damaged.
    (l1, h1), (l2, h2) = res[0], res[1]
    saved = open(blob_path(cl, h1), "rb").read()
    with open(blob_path(cl, h1), "r+b") as f:
        f.seek(70)
        f.write(b"\xff\xff")
    os.unlink(blob_path(cl, h2))
    r = cl.ctl("check", check_rc=False)
    check(r.returncode == 1, "check on a damaged store exits 1: %d %s" % (r.returncode, r.stdout))
    check(h1 in r.stdout and "corrupt" in r.stdout, "check names the corrupt blob:\n" + r.stdout)
    check(h2 in r.stdout and "missing" in r.stdout, "check names the missing blob:\n" + r.stdout)
    st = cl.status(job)
    check(st["state"] == "done" and st["damaged"] and
          any(("lease %d" % l) in st["damaged"] for l in (l1, l2)),
          "status shows the damage: %s" % st.get("damaged"))
    text = cl.ctl("status", str(job)).stdout
    check("damaged" in text.split("\n")[0] and "gpuctl check" in text, "status text: " + text)
    # Repaired from a copy: a new check clears the mark.
    open(blob_path(cl, h1), "wb").write(saved)
    r = cl.ctl("check", "--json", check_rc=False)
    check(r.returncode == 1 and h2 in r.stdout and h1 not in r.stdout, "only the missing one is left:\n" + r.stdout)
    cl.stop_gpud()
    cl.start_gpud()
    check("1 blob(s) the database names are missing" in cl.log_text("gpud"), "a warning at start")
    cl.stop_gpud()

    # A missing or empty database beside the blobs is refused.
    os.rename(db_path, db_path + ".away")
    err = gpud_refused(cl)
    check("--init" in err and "backup" in err, "missing database: message says what to do:\n" + err)
    check(not os.path.exists(db_path), "the refused start created no database")
    open(db_path, "wb").close()
    err = gpud_refused(cl)
    check("empty" in err and "--init" in err, "empty database:\n" + err)
    os.rename(db_path + ".away", db_path)

    # A corrupted page of the lease table: refused, with how to recover,
    # and the file left as it was.
    db = sqlite3.connect(db_path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'leases'").fetchone()[0]
    db.close()
    good = open(db_path, "rb").read()
    with open(db_path, "r+b") as f:
        f.seek((root - 1) * page)
        f.write(bytes((i * 37 + 11) & 0xff for i in range(page)))
    before = open(db_path, "rb").read()
    err = gpud_refused(cl)
    check("damaged" in err and ".recover" in err and "backup" in err, "recovery message:\n" + err)
    check(open(db_path, "rb").read() == before, "a refused start must not write the damaged database")
    open(db_path, "wb").write(good)
    cl.start_gpud()
    check(cl.status(job)["state"] == "done", "the restored database serves again")
    cl.stop_gpud()

    # --init starts afresh on purpose, the old blobs moved aside.
    os.unlink(db_path)
    cl.start_gpud(extra=["--init"])
    check(cl.ctl("status").stdout.strip() == "no jobs", "a fresh database")
    moved = glob.glob(os.path.join(cl.data, "blobs.before-init-*"))
    check(len(moved) == 1 and os.path.exists(os.path.join(moved[0], h1[:2], h1)),
          "old blobs moved aside, not deleted: %s" % moved)


if __name__ == "__main__":
    run(test_store_damage)
