"""One gpud per data directory (issue 20, item 6): a second gpud on the
same directory exits non-zero naming the first's PID, and touches nothing
of the first: its control socket stays, and it still answers after the
second has gone. A gpud of another directory given the same --socket is
refused as well. Once the first stops, the directory is free again."""
import os
import subprocess

from harness import GPUD, Cluster, check, run


def test_lock(cl: Cluster):
    cl.start_gpud()
    first = cl.gpud.pid
    for sock in (cl.sock, os.path.join(cl.data, "gpud.sock")):
        r = subprocess.run([GPUD, "--data", cl.data, "--listen", "127.0.0.1:0", "--socket", sock],
                           capture_output=True, text=True, timeout=30)
        check(r.returncode != 0, "the second gpud must not start")
        check("another gpud (pid %d)" % first in r.stderr, "message names the holder: " + r.stderr)
        check(os.path.exists(cl.sock), "the first gpud's socket must stay")
        check(cl.ctl_ok("status"), "the first gpud must still answer")
    # Another data directory given the same --socket: refused too.
    r = subprocess.run([GPUD, "--data", os.path.join(cl.dir, "other"), "--listen", "127.0.0.1:0",
                        "--socket", cl.sock], capture_output=True, text=True, timeout=30)
    check(r.returncode != 0 and "another process listens on" in r.stderr, "same socket: " + r.stderr)
    check(cl.ctl_ok("status"), "the first gpud must still answer")
    check(cl.gpud.poll() is None, "the first gpud keeps running")
    check(open(os.path.join(cl.data, "gpud.lock")).read().strip() == str(first), "the lock file names the holder")
    cl.stop_gpud()
    cl.start_gpud()
    check(cl.ctl_ok("status"), "after the first stopped, a new gpud starts")


if __name__ == "__main__":
    run(test_lock)
