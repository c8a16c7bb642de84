"""Workers read stored blobs by hash (FETCH/BLOB): a result blob comes back
byte for byte; an unknown hash gets an ERROR; a malformed hash closes the
connection. A workload without input files refuses --file."""
import hashlib
import os
import sqlite3

from harness import Cluster, RawWorker, check, run


def test_fetch(cl: Cluster):
    cl.gpud_args = ["--lease-units", str(1 << 20)]
    cl.start_gpud()
    job = cl.submit("graveler", battles=2 << 20, seed=4)
    cl.start_worker("cpu:1")
    cl.wait_job(job, timeout=120)
    db = sqlite3.connect("file:%s/gpud.db?mode=ro" % cl.data, uri=True)
    hashes = [r[0] for r in db.execute("SELECT result FROM leases WHERE result IS NOT NULL")]
    db.close()
    check(len(hashes) == 2, "two stored results expected: %s" % hashes)
    name, secret = cl.token()
    rw = RawWorker(cl.port, name, secret)
    rw.login()
    for h in hashes:
        rw.send_msg("FETCH", {"hash": h})
        msg, data = rw.expect("BLOB")
        check(msg["hash"] == h, "BLOB names another hash: %s" % msg)
        got = hashlib.blake2b(data, digest_size=32).hexdigest()
        check(got == h, "blob content does not match its hash")
    rw.send_msg("FETCH", {"hash": "0" * 64})
    err, _ = rw.expect("ERROR")
    check(err["code"] == -7 and err["hash"] == "0" * 64, "unknown blob: %s" % err)
    rw.send_msg("FETCH", {"hash": "../../etc/passwd"})
    check(rw.closed(), "a malformed hash must close the connection")
    rw.close()
    path = os.path.join(cl.dir, "input.txt")
    with open(path, "w") as f:
        f.write("hello\n")
    r = cl.ctl("submit", "graveler", "--battles", "10", "--file", path, check_rc=False)
    check(r.returncode == 1 and "takes no input file" in r.stderr, "graveler --file: %s" % r.stderr)


if __name__ == "__main__":
    run(test_fetch)
