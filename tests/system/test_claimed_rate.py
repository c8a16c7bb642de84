"""Leases are sized by what gpud measured on verified work, never by what a
worker states (issue 34, item 2). A worker that claims as if it ran 1e12
battles a second and inflates every checkpoint's progress to its lease's
end a moment after the grant takes lease after lease of a 1e13-battle
Graveler job: its claims' "rate" is ignored, its checkpoints note no rate,
so every lease it gets is a probe of the planner's default (2^32 battles)
and together they hold a sliver of the job; an honest worker that comes
later gets work at once. Before, the inflated checkpoints measured about
1e11 battles/s and sized the next leases at the largest a lease may be,
until one credential held all ten leases of the job and the honest worker
was told that every lease is held."""
import struct
import time

from harness import Cluster, blob, check, run, wait_for

BATTLES = 10 ** 13
DEFAULT = 1 << 32   # Graveler's default lease (kernels/graveler)
CLAIMS = 12         # more than the ten leases the attack used to take


def empty_checkpoint(seed, begin, end):
    """A Graveler checkpoint at the lease's start (graveler.h's format):
    valid, so gpud accepts it, whatever units_done its message states."""
    nc = (end - 1) // 256 - begin // 256 + 1
    nseg = min(1 << 20, nc)
    head = b"GRVC" + struct.pack("<IQQQIIQ", 3, seed, begin, end, 0, nseg, 2 ** 64 - 1)
    head += b"\0" * (232 * 8) + struct.pack("<Q", begin)
    return head + b"\0" * (9 * nseg)


def beat(liar, held):
    """Heartbeat every lease the liar holds, at its inflated progress;
    forget those gpud took back."""
    for lease, (epoch, units) in list(held.items()):
        liar.send_msg("HEARTBEAT", {"lease": lease, "epoch": epoch, "units_done": units - 256})
        t, msg, _ = liar.recv(15)
        check(t == "HB_ACK", "the liar's heartbeat: %s %s" % (t, msg))
        if msg["action"] != "continue":
            del held[lease]


def test_claimed_rate(cl: Cluster):
    cl.gpud_args = ["--heartbeat", "2", "--lease-min-seconds", "1", "--checkpoint-interval", "1"]
    cl.start_gpud()
    job = cl.submit("graveler", battles=BATTLES, seed=3)
    _, name, secret = cl.add_token("liar")
    liar = cl.raw_worker(name=name, secret=secret)
    held, sizes = {}, []
    for i in range(CLAIMS):
        beat(liar, held)
        liar.send_msg("CLAIM", {"rate": 1e12})
        t, msg, _ = liar.recv(15)
        if t != "LEASE":
            break
        units, spec = msg["units"], msg["spec"]
        held[msg["lease"]] = (msg["epoch"], units)
        sizes.append(units)
        time.sleep(0.05)  # a sample needs 10 ms past the grant
        ck = empty_checkpoint(int(msg["params"]["seed"]), spec["begin"], spec["end"])
        liar.send_msg("CHECKPOINT", {"lease": msg["lease"], "epoch": msg["epoch"],
                                     "units_done": units - 256},
                      blob(1, "graveler", msg["lease"], msg["epoch"], ck))
        ack, _ = liar.expect("ACK", timeout=30)
        check(ack["what"] == "checkpoint", "the inflated checkpoint: %s" % ack)
    check(len(held) == len(sizes) == CLAIMS, "the liar's leases: %s of %s" % (len(held), sizes))
    check(max(sizes) <= DEFAULT, "a lease over the default probe: %s" % sizes)
    check(sum(sizes) <= BATTLES // 100, "the liar holds %d of %d battles" % (sum(sizes), BATTLES))
    liar_id = cl.db_rows("SELECT id FROM workers WHERE name = ?", "liar@raw")[0][0]
    rates = cl.db_rows("SELECT rate, verified FROM job_rates WHERE worker_id = ?", liar_id)
    check(rates == [], "a rate noted from claims and checkpoints: %s" % rates)

    # An honest worker that comes later, while the liar still holds all
    # its leases, gets a new one at once.
    cl.start_worker("cpu:1")

    def honest_grant():
        beat(liar, held)
        return cl.db_rows("SELECT e.detail FROM events AS e JOIN workers AS w ON w.id = e.worker_id "
                          "WHERE e.kind = 'grant' AND e.job_id = ? AND w.name LIKE 'local@%'", job)
    grant = wait_for(honest_grant, 30, "the honest worker's grant", interval=0.5)
    check(len(held) == CLAIMS, "the liar lost leases meanwhile: %d left" % len(held))
    check(grant[0][0].endswith("attempt=1"), "the honest worker's grant: %s" % grant)
    reason = cl.status(job)["reason"] or ""
    check("every lease is held" not in reason, "status: %s" % reason)
    print("liar: %d leases, %d battles (largest %d); honest worker: %s"
          % (len(sizes), sum(sizes), max(sizes), grant[0][0]))
    cl.ctl("cancel", str(job))
    liar.close()


if __name__ == "__main__":
    run(test_claimed_rate)
