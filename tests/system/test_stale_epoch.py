"""A worker that lost its lease (deadline passed, re-issued with a new epoch)
can never overwrite it: its heartbeat is told to stop and its result and
checkpoint are refused as stale."""
from harness import Cluster, blob, check, run, wait_for


def test_stale_epoch(cl: Cluster):
    cl.gpud_args = ["--lease-units", str(1 << 20), "--heartbeat", "0.2", "--lease-timeout", "1"]
    cl.start_gpud()
    job = cl.submit("graveler", battles=1 << 20, seed=1)
    a = cl.raw_worker()
    lease, _ = a.claim_lease()
    check(lease["epoch"] == 1, "first grant should be epoch 1: %s" % lease)
    # a stops heartbeating; the lease expires and b gets it at epoch 2.
    wait_for(lambda: "lease expired lease=%d" % lease["lease"] in cl.log_text("gpud"), 20, "expiry")
    b = cl.raw_worker(instance="b")  # another process of the token
    lease_b, _ = b.claim_lease()
    check(lease_b["lease"] == lease["lease"] and lease_b["epoch"] == 2,
          "the expired lease should be re-issued at epoch 2: %s" % lease_b)
    # a comes back with epoch 1: heartbeat -> stop, result and checkpoint -> stale.
    a.send_msg("HEARTBEAT", {"lease": lease["lease"], "epoch": 1, "units_done": 5})
    hb, _ = a.expect("HB_ACK")
    check(hb["action"] == "stop", "stale heartbeat should be told to stop: %s" % hb)
    res = blob(2, "graveler", lease["lease"], 1, b"\0" * 64)
    a.send_msg("RESULT", {"lease": lease["lease"], "epoch": 1, "units_done": 1 << 20, "seconds": 1.0}, res)
    err, _ = a.expect("ERROR")
    check("stale" in err["message"], "result with a stale epoch should be refused as stale: %s" % err)
    ck = blob(1, "graveler", lease["lease"], 1, b"\0" * 64)
    a.send_msg("CHECKPOINT", {"lease": lease["lease"], "epoch": 1, "units_done": 7}, ck)
    err, _ = a.expect("ERROR")
    check("stale" in err["message"], "checkpoint with a stale epoch should be refused: %s" % err)
    # b's heartbeat at epoch 2 still holds the lease.
    b.send_msg("HEARTBEAT", {"lease": lease["lease"], "epoch": 2, "units_done": 0})
    hb, _ = b.expect("HB_ACK")
    check(hb["action"] == "continue", "the current holder should continue: %s" % hb)
    a.close()
    b.close()
    # A real worker finishes the job once b's lease expires.
    cl.start_worker("cpu:1")
    cl.wait_job(job, timeout=120)


if __name__ == "__main__":
    run(test_stale_epoch)
