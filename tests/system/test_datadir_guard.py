"""The data directory's guards (issue 34, item 9). The lock is held on the
directory itself: with gpud.lock deleted (or replaced) while gpud runs, a
second gpud on the same directory is still refused and the first keeps
serving. A missing database beside gpud's identity key (deleted before
any blob was stored) is refused with a message saying what is missing and
how to go on; --init starts afresh on purpose, keeping the key."""
import os
import subprocess

from harness import GPUD, Cluster, check, run


def second_gpud(cl, *extra):
    return subprocess.run([GPUD, "--data", cl.data, "--listen", "127.0.0.1:0", "--config", os.devnull,
                           "--socket", os.path.join(cl.dir, "second.sock")] + list(extra),
                          capture_output=True, text=True, timeout=30)


def test_datadir_guard(cl: Cluster):
    cl.start_gpud()
    first = cl.gpud.pid
    lock = os.path.join(cl.data, "gpud.lock")
    os.unlink(lock)
    r = second_gpud(cl)
    check(r.returncode != 0, "a second gpud must not start with gpud.lock deleted:\n" + r.stderr)
    check("another gpud" in r.stderr and "one gpud per data directory" in r.stderr, "why: " + r.stderr)
    check(not os.path.exists(lock), "the refused gpud creates nothing")
    # Replaced by a file naming the first: still refused, naming it.
    open(lock, "w").write("%d\n" % first)
    r = second_gpud(cl)
    check(r.returncode != 0 and ("pid %d" % first) in r.stderr, "names the holder: " + r.stderr)
    check(cl.gpud.poll() is None and cl.ctl_ok("status"), "the first gpud keeps serving")
    check(cl.ctl("status").stdout.strip() == "no jobs", "and nothing was started beside it")

    # No job, no blob: the database deleted beside the identity key.
    key = open(os.path.join(cl.data, "gpud.key"), "rb").read()
    cl.add_token("alice")
    cl.stop_gpud()
    os.unlink(os.path.join(cl.data, "gpud.db"))
    for f in ("gpud.db-wal", "gpud.db-shm"):
        if os.path.exists(os.path.join(cl.data, f)):
            os.unlink(os.path.join(cl.data, f))
    r = second_gpud(cl)
    check(r.returncode != 0, "gpud must refuse a missing database beside its key:\n" + r.stderr)
    check("gpud.db is missing" in r.stderr and "gpud.key" in r.stderr and "--init" in r.stderr
          and "backup" in r.stderr, "the message says what is missing and how to go on: " + r.stderr)
    check(not os.path.exists(os.path.join(cl.data, "gpud.db")), "no fresh database was made")
    # An empty one is the same.
    open(os.path.join(cl.data, "gpud.db"), "wb").close()
    r = second_gpud(cl)
    check(r.returncode != 0 and "gpud.db is empty" in r.stderr, "empty database: " + r.stderr)
    # On purpose: --init, the key kept.
    cl.start_gpud(extra=["--init"])
    check(cl.ctl("status").stdout.strip() == "no jobs", "a fresh database")
    check(open(os.path.join(cl.data, "gpud.key"), "rb").read() == key, "the identity key is kept")
    check("alice" not in cl.ctl("token", "list").stdout, "the lost tokens are gone, as the message said")
    cl.stop_gpud()
    cl.start_gpud()
    check(cl.ctl_ok("status"), "and it starts as usual after")


if __name__ == "__main__":
    run(test_datadir_guard)
