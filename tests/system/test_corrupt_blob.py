"""A corrupted checkpoint or result is refused with a clear error, the
previous good checkpoint is kept, and the job still finishes exactly."""
import hashlib
import os
import re
import struct
import zlib

from harness import Cluster, check, run, wait_for


def recrc(b):
    """Fix both CRCs so only the deeper checks (zlib, lengths) can object."""
    b = bytearray(b)
    struct.pack_into("<I", b, 56, zlib.crc32(bytes(b[64:])))
    struct.pack_into("<I", b, 60, zlib.crc32(bytes(b[:60])))
    return bytes(b)


def test_corrupt_blob(cl: Cluster):
    units = cl.start_gpud_leases(4, "0.3", "1.5")
    job = cl.submit("graveler", battles=units, seed=77)
    w = cl.start_worker("cpu:1", ["--checkpoint-interval", "0.3"])
    m = wait_for(lambda: re.search(r"checkpoint stored job=%d lease=1 epoch=1 .*units_done=([1-9]\d*)" % job,
                                   cl.log_text("gpud")), 60, "a checkpoint")
    w.kill()
    w.wait()
    wait_for(lambda: "lease expired lease=1" in cl.log_text("gpud"), 30, "expiry")
    rw = cl.raw_worker()
    lease, ck = rw.claim_lease()
    check(len(ck) > 64 and lease["units_done"] > 0, "the lease should come with its checkpoint")
    good_units = lease["units_done"]
    # Re-label the good checkpoint for this epoch, then break it in three ways.
    relabel = bytearray(ck)
    struct.pack_into("<Q", relabel, 32, lease["epoch"])
    relabel = recrc(relabel)
    flipped = bytearray(relabel)
    flipped[-3] ^= 0x40
    cases = {
        "payload bit flip (CRC stale)": bytes(flipped),
        "payload bit flip (CRC fixed)": recrc(flipped),
        "truncated": relabel[:-5],
        "wrong kind": recrc(relabel[:6] + b"\2\0" + relabel[8:]),
    }
    for what, bad in cases.items():
        rw.send_msg("CHECKPOINT", {"lease": lease["lease"], "epoch": lease["epoch"], "units_done": good_units + 1}, bad)
        err, _ = rw.expect("ERROR")
        check(err["code"] != 0 and err["message"], "%s: expected a clear error, got %s" % (what, err))
    rw.send_msg("RESULT", {"lease": lease["lease"], "epoch": lease["epoch"], "units_done": units, "seconds": 1}, cases["truncated"])
    err, _ = rw.expect("ERROR")
    check(err["message"], "corrupt result should be refused")
    # A result whose header and CRCs are right but whose stream does not
    # inflate: gpud stores results beside their decode, so the file is
    # written, then the upload refused and the file removed.
    bad_result = bytearray(recrc(relabel[:6] + b"\2\0" + relabel[8:]))
    bad_result[-3] ^= 0x40
    bad_result = recrc(bad_result)
    rw.send_msg("RESULT", {"lease": lease["lease"], "epoch": lease["epoch"], "units_done": units, "seconds": 1}, bad_result)
    err, _ = rw.expect("ERROR")
    check(err["message"], "a result that does not inflate should be refused")
    h = hashlib.blake2b(bad_result, digest_size=32).hexdigest()
    check(not os.path.exists(os.path.join(cl.data, "blobs", h[:2], h)),
          "the refused result's file should be removed")
    # The connection survives refusals; the lease still holds.
    rw.send_msg("HEARTBEAT", {"lease": lease["lease"], "epoch": lease["epoch"], "units_done": good_units})
    hb, _ = rw.expect("HB_ACK")
    check(hb["action"] == "continue", "heartbeat after refusals: %s" % hb)
    rw.close()
    # The next holder resumes from the same good checkpoint.
    cl.start_worker("cpu:1", ["--checkpoint-interval", "0.3"])
    resumed = cl.regrant(job, 3, 30, "re-issue at epoch 3")
    check(resumed == good_units, "previous checkpoint not kept: resume_from=%d, want %d" % (resumed, good_units))
    cl.check_reference(job, 300, battles=units, seed=77)


if __name__ == "__main__":
    run(test_corrupt_blob)
