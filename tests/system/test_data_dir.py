"""The data directory's standing (issue 20, item 7): a world-writable data
directory is refused with a clear message; when the blobs cannot be
written (a read-only mount under a running gpud), the status reason holds
although database writes (a worker's heartbeats) still succeed, and clears
once the directory takes writes again. The read-only part needs root to
bind-mount (skipped, exit 77, otherwise)."""
import os
import subprocess
import sys
import time

from harness import GPUD, Cluster, check, run, wait_for

STORAGE = "cannot write its data directory"


def test_data_dir(cl: Cluster):
    os.makedirs(cl.data)
    os.chmod(cl.data, 0o777)
    r = subprocess.run([GPUD, "--data", cl.data, "--listen", "127.0.0.1:0", "--socket", cl.sock],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode != 0 and "writable by every user" in r.stderr and "chmod 700" in r.stderr,
          "a 0777 data directory is refused: %d %s" % (r.returncode, r.stderr))
    check(os.listdir(cl.data) == [], "nothing written to the refused directory")
    os.chmod(cl.data, 0o700)

    cl.gpud_args = ["--heartbeat", "0.3", "--lease-timeout", "30"]
    cl.start_gpud()
    job = cl.submit("graveler", battles=1 << 30, seed=9)
    rw = cl.raw_worker()
    lease, _ = rw.claim_lease()
    blobs = os.path.join(cl.data, "blobs")
    os.makedirs(blobs, exist_ok=True)
    if os.geteuid() != 0 or subprocess.run(["mount", "--bind", blobs, blobs], capture_output=True).returncode:
        print("SKIP: the read-only part needs root and bind mounts")
        sys.exit(77)
    try:
        check(subprocess.run(["mount", "-o", "remount,bind,ro", blobs]).returncode == 0, "remount ro")
        # An input file cannot be stored: the reason appears.
        path = os.path.join(cl.dir, "p.obf")
        open(path, "w").write("XOXOXOXO" * 7 + "XOXOX--- X;\n")
        r = cl.ctl("submit", "othello", "--file", path, check_rc=False)
        check(r.returncode == 1 and "cannot store the input" in r.stderr, "submit refused: " + r.stderr)
        check(STORAGE in (cl.status(job)["reason"] or ""), "the storage reason: %s" % cl.status(job)["reason"])
        # Heartbeats commit to the database (whose files are open); the
        # reason holds all the same.
        for i in range(8):
            rw.send_msg("HEARTBEAT", {"lease": lease["lease"], "epoch": lease["epoch"], "units_done": i})
            hb, _ = rw.expect("HB_ACK")
            check(hb["action"] == "continue", "heartbeat: %s" % hb)
            time.sleep(0.3)
        check(STORAGE in (cl.status(job)["reason"] or ""), "the reason must hold while blobs cannot be written")
    finally:
        subprocess.run(["umount", blobs], capture_output=True)
    wait_for(lambda: STORAGE not in (cl.status(job)["reason"] or ""), 10, "the reason to clear")
    check("writable again" in cl.log_text("gpud"), "the log says when it is writable again")
    rw.close()


if __name__ == "__main__":
    run(test_data_dir)
