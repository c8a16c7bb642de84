"""Operations: gpud speaks systemd's notify protocol (READY, STATUS,
WATCHDOG, STOPPING), and worker tokens can be listed and revoked, a revoked
token's worker being cut off at once and refused afterwards."""
import json
import os
import signal
import socket
import time

from harness import Cluster, check, run, wait_for


def test_ops(cl: Cluster):
    path = os.path.join(cl.dir, "notify.sock")
    ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns.bind(path)
    ns.settimeout(0.2)
    got = []

    def drain():
        try:
            while True:
                got.append(ns.recv(4096).decode())
        except socket.timeout:
            pass
        return got

    cl.start_gpud(env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "4000000"})
    wait_for(lambda: any("READY=1" in m for m in drain()), 10, "READY=1")
    wait_for(lambda: any(m.startswith("STATUS=jobs:") for m in drain()), 15, "a STATUS line")
    wait_for(lambda: any("WATCHDOG=1" in m for m in drain()), 10, "a watchdog ping")
    # A second token for a worker on "another machine".
    tf, _, _ = cl.add_token("box2")
    w = cl.start_worker("cpu:1", token_file=tf)
    wait_for(lambda: "box2" in cl.ctl("workers").stdout and "online" in cl.ctl("workers").stdout, 20, "box2 online")
    listing = cl.ctl("token", "list").stdout
    check("box2" in listing and "local" in listing and "revoked" not in listing, "token list: " + listing)
    cl.ctl("token", "revoke", "box2")
    wait_for(lambda: "close" in cl.log_text("gpud") and "token revoked" in cl.log_text("gpud"), 10, "the worker cut off")
    # Cut off, it exits with gpuworker's status for a refused credential
    # (6) rather than retrying; started again, it is refused at login.
    check(w.wait(15) == 6, "a revoked worker should exit 6, not %s" % w.returncode)
    w = cl.start_worker("cpu:1", token_file=tf)
    wait_for(lambda: "bad token" in cl.log_text("gpud"), 20, "the revoked token refused at login")
    check(w.wait(15) == 6, "a worker with a revoked token should exit 6, not %s" % w.returncode)
    workers = json.loads(cl.ctl("workers", "--json").stdout)
    check(not any(x["credential"] == "box2" and x["online"] for x in workers), "revoked worker still online: %s" % workers)
    check("revoked" in cl.ctl("token", "list").stdout, "list should mark the token revoked")
    r = cl.ctl("token", "revoke", "nosuch", check_rc=False)
    check(r.returncode == 1 and "no token named" in r.stderr, "revoking an unknown token: " + r.stderr)
    w.kill()
    cl.gpud.send_signal(signal.SIGTERM)
    check(cl.gpud.wait(20) == 0, "gpud should stop cleanly")
    check(any("STOPPING=1" in m for m in drain()), "STOPPING=1 on SIGTERM")
    ns.close()


if __name__ == "__main__":
    run(test_ops)
