"""A worker with a valid token of its own cannot act on another worker's
lease: its heartbeat, checkpoint, result and release of the victim's lease
are refused with the same bytes as for an epoch never granted or a lease
that does not exist, each is logged with its name and address and counted
against it (`gpuctl workers`), it ends quarantined, and the victim's job
ends with the exact answer."""
import json
import re

from harness import (Cluster, RawWorker, blob, check, run, wait_for)


class Thief(RawWorker):
    def ask(self, tname, lease, epoch, **kw):
        msg = dict({"lease": lease, "epoch": epoch}, **kw)
        binary = b""
        if tname in ("CHECKPOINT", "RESULT"):
            binary = blob(1 if tname == "CHECKPOINT" else 2, "graveler", lease, epoch, b"\0" * 64)
        self.send_msg(tname, msg, binary)
        f = self.recv_raw()
        check(f is not None, "gpud closed the connection")
        return f


def same_shape(a, b, lease_a, lease_b, epoch_a, epoch_b):
    """Frames a and b equal once their echoed lease and epoch are swapped."""
    def norm(f, lease, epoch):
        body = json.loads(f[16:])
        check(body.get("lease") == lease and body.get("epoch") == epoch, "echo: %s" % body)
        body["lease"], body["epoch"] = "L", "E"
        return f[:8], body
    return norm(a, lease_a, epoch_a) == norm(b, lease_b, epoch_b)


def test_foreign_lease(cl: Cluster):
    units = cl.start_gpud_leases(6, "0.3", "2")
    job = cl.submit("graveler", battles=units, seed=5)
    _, name, secret = cl.add_token("thief")
    cl.start_worker("cpu:1", ["--checkpoint-interval", "0.5"])
    m = wait_for(lambda: re.search(r"lease grant job=%d lease=(\d+) epoch=(\d+)" % job, cl.log_text("gpud")),
                 30, "the victim's grant")
    lease, epoch = int(m.group(1)), int(m.group(2))
    thief = Thief(cl.port, name, secret)
    thief.login()

    # Heartbeat: someone else's lease, an epoch never granted, no such lease.
    theirs = hb_theirs = thief.ask("HEARTBEAT", lease, epoch, units_done=units)
    check(json.loads(theirs[16:])["action"] == "stop", "a foreign heartbeat should be told stop")
    future = thief.ask("HEARTBEAT", lease, epoch + 5, units_done=units)
    unknown = thief.ask("HEARTBEAT", lease + 50, epoch, units_done=units)
    check(same_shape(theirs, future, lease, lease, epoch, epoch + 5) and
          same_shape(theirs, unknown, lease, lease + 50, epoch, epoch),
          "heartbeat replies differ: %r %r %r" % (theirs, future, unknown))
    # Uploads of wrong results and a release, the same three ways.
    for what in ("RESULT", "CHECKPOINT", "RELEASE"):
        kw = {"units_done": units, "seconds": 1.0} if what == "RESULT" else \
             {"units_done": 1} if what == "CHECKPOINT" else {}
        theirs = thief.ask(what, lease, epoch, **kw)
        body = json.loads(theirs[16:])
        check(body["message"] == "stale: lease not held by this worker", "%s: %s" % (what, body))
        future = thief.ask(what, lease, epoch + 5, **kw)
        unknown = thief.ask(what, lease + 50, epoch, **kw)
        check(same_shape(theirs, future, lease, lease, epoch, epoch + 5) and
              same_shape(theirs, unknown, lease, lease + 50, epoch, epoch),
              "%s replies differ: %r %r %r" % (what, theirs, future, unknown))
    sent = 12

    # The victim kept its lease and its job ends with the exact answer.
    cl.check_reference(job, 120, battles=units, seed=5)
    wlog = cl.log_text("worker")
    check("lease lost" not in wlog, "the victim lost its lease:\n" + cl.tail("worker"))
    # A finished lease is still not the thief's: the same bytes as before.
    again = thief.ask("HEARTBEAT", lease, epoch, units_done=units)
    check(again == hb_theirs, "reply after the job: %r, before: %r" % (again, hb_theirs))
    sent += 1

    log = cl.log_text("gpud")
    warns = re.findall(r"refused: lease not held by its sender .*worker=thief peer=127\.0\.0\.1", log)
    check(len(warns) == sent, "%d of %d refusals logged with name and peer" % (len(warns), sent))
    check("lease release lease=%d epoch=%d worker=thief rc=0" % (lease, epoch) not in log,
          "the thief's release was accepted")
    workers = {w["credential"]: w for w in json.loads(cl.ctl("workers", "--json").stdout)}
    check(workers["thief"]["foreign_msgs"] == sent and workers["thief"]["quarantined"],
          "thief's record: %s" % workers["thief"])
    victim = workers[cl.token()[0]]
    check(victim["foreign_msgs"] == 0 and not victim["quarantined"], "victim's record: %s" % victim)
    text = cl.ctl("workers").stdout
    check("FOREIGN" in text.splitlines()[0] and re.search(r"thief .* quarantined .* %d " % sent, text),
          "gpuctl workers: " + text)
    thief.send_msg("CLAIM", {"rate": 0})
    nl, _ = thief.expect("NOLEASE")
    check("quarantined" in nl["reason"], "a quarantined thief gets no lease: %s" % nl)
    thief.close()


if __name__ == "__main__":
    run(test_foreign_lease)
