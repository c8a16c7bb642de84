"""A worker cannot hoard leases: it holds at most --max-leases-per-worker
at once, a lease whose reported progress stays put for --progress-timeout
is taken back (and the hoarder quarantined after --quarantine-after such
stalls), a heartbeat claiming more units than its lease is refused and
never shown, `gpuctl status` names who holds every lease while another
worker waits, and an honest second worker finishes the job exactly."""
import json
import re
import socket
import time

from harness import (Cluster, RawWorker, check, run)

CAP = 2
STALL_S = 6


class Hoarder(RawWorker):
    """Claims up to the cap and heartbeats its leases with no progress."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.held = {}       # lease -> epoch
        self.stops = 0

    def claim(self, timeout=15):
        self.send_msg("CLAIM", {"rate": 0})
        f = self.recv(timeout)
        check(f is not None, "gpud closed the hoarder's connection")
        if f[0] == "LEASE":
            self.held[f[1]["lease"]] = f[1]["epoch"]
        return f

    def beat(self):
        for lease, epoch in list(self.held.items()):
            self.send_msg("HEARTBEAT", {"lease": lease, "epoch": epoch, "units_done": 0})
            t, msg, _ = self.recv()
            check(t == "HB_ACK", "hoarder heartbeat: %s %s" % (t, msg))
            if msg["action"] == "stop":
                del self.held[lease]
                self.stops += 1


def test_hoard(cl: Cluster):
    units = cl.start_gpud_leases(0.5, "0.3", "2", extra=["--max-leases-per-worker", str(CAP),
                                                         "--progress-timeout", str(STALL_S),
                                                         "--quarantine-after", "3"])
    job = cl.submit("graveler", battles=3 * units, seed=9)
    _, name, secret = cl.add_token("hoarder")
    h = Hoarder(cl.port, name, secret)
    h.login()
    for _ in range(CAP):
        check(h.claim()[0] == "LEASE", "the hoarder's first leases")
    t, msg, _ = h.claim()
    check(t == "NOLEASE" and msg["reason"] ==
          "worker hoarder@raw holds 2 leases, the most one worker may hold (--max-leases-per-worker 2)",
          "a claim over the cap: %s %s" % (t, msg))

    # Progress is bounded by the lease: 9e18 units are refused, not shown.
    lease, epoch = next(iter(h.held.items()))
    h.send_msg("HEARTBEAT", {"lease": lease, "epoch": epoch, "units_done": 9 * 10 ** 18})
    err, _ = h.expect("ERROR")
    check("more than the lease's %d units" % units in err["message"], "oversized progress: %s" % err)
    st = cl.status(job)
    text = cl.ctl("status", str(job)).stdout
    check(st["units_done"] <= st["total_units"] and "9000000" not in text,
          "progress shown past the job: %s\n%s" % (st, text))

    # An honest worker finishes the third lease, then waits: status names
    # who holds every lease.
    cl.start_worker("cpu:1")
    reason, end = "", time.time() + STALL_S
    while "held" not in reason and time.time() < end:
        h.beat()
        reason = cl.status(job)["reason"] or ""
        time.sleep(0.2)
    check(reason == "every lease is held: hoarder@raw holds 2", "status reason: %r" % reason)

    # With no progress, the hoarder loses both leases within the timeout
    # (plus a heartbeat), and the waiting worker takes them.
    t0 = time.time()
    while h.held and time.time() - t0 < STALL_S + 10:
        h.beat()
        time.sleep(0.25)
    check(not h.held and h.stops == CAP, "the hoarder kept %s" % h.held)
    check(len(re.findall(r"lease revoked .*worker=hoarder reason=no progress", cl.log_text("gpud"))) == CAP,
          "revocations not logged")
    # It grabs what it can again, stalls once more and is quarantined.
    try:
        while True:
            t, msg, _ = h.claim()
            if t != "LEASE":
                break
            while h.held:
                h.beat()
                time.sleep(0.25)
    except socket.timeout:
        pass
    cl.check_reference(job, 120, battles=3 * units, seed=9)
    # A worker is a process: the hoarder is token hoarder, instance raw.
    w = {x["name"]: x for x in json.loads(cl.ctl("workers", "--json").stdout)}["hoarder@raw"]
    check(w["credential"] == "hoarder" and w["instance"] == "raw", "hoarder's names: %s" % w)
    check(w["stalls"] >= CAP and w["leases_done"] == 0, "hoarder's record: %s" % w)
    check(w["quarantined"] == (w["stalls"] >= 3), "quarantine after 3 stalls: %s" % w)
    h.close()


if __name__ == "__main__":
    run(test_hoard)
