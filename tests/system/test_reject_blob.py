"""A result that fails verification leaves no blob behind: its file is
removed once the lease that named it is pending again, and the job then
finishes exactly from a real worker's result."""
import hashlib
import os
import struct
import zlib

from harness import Cluster, check, run, wait_for


def sudoku_result(spec, R=2, C=2):
    """A well-formed 2x2 Sudoku result (sudoku_format.h) with every count
    zero: it decodes, and verification recounts and refuses it."""
    n = spec["to"] - spec["from"]
    head = struct.pack("<4sIBBHIIIQ", b"SDKR", 1, R, C, 0, spec["from"], spec["to"], n, 0)
    return head + b"\0" * (16 * n)


def blob(raw, lease, epoch):
    comp = zlib.compress(raw, 6)
    head = struct.pack("<4sHH16sQQQQI", b"GPBL", 1, 2, b"sudoku".ljust(16, b"\0"),
                       lease, epoch, len(raw), len(comp), zlib.crc32(comp))
    return head + struct.pack("<I", zlib.crc32(head)) + comp


def test_reject_blob(cl: Cluster):
    cl.start_gpud()
    job = cl.submit("sudoku", box="2x2")
    # Another worker than the real one below: a lease is never granted
    # again to a worker that failed it.
    _, name, secret = cl.add_token("forger")
    rw = cl.raw_worker(name=name, secret=secret, workloads=("sudoku",))
    lease, _ = rw.claim_lease()
    b = blob(sudoku_result(lease["spec"]), lease["lease"], lease["epoch"])
    h = hashlib.blake2b(b, digest_size=32).hexdigest()
    path = os.path.join(cl.data, "blobs", h[:2], h)
    rw.send_msg("RESULT", {"lease": lease["lease"], "epoch": lease["epoch"],
                           "units_done": lease["units"], "seconds": 1}, b)
    rw.expect("ACK")
    wait_for(lambda: "lease failed verification job=%d lease=%d" % (job, lease["lease"])
             in cl.log_text("gpud"), 30, "the verification to fail")
    check(not os.path.exists(path), "the rejected result's blob %s is still on disk" % path)
    rw.close()
    # The lease is pending again and a real (other) worker finishes the job.
    cl.start_worker("cpu:1")
    cl.wait_job(job, timeout=120)
    blobs = [f for _, _, fs in os.walk(os.path.join(cl.data, "blobs")) for f in fs]
    check(h not in blobs, "the rejected blob came back")


if __name__ == "__main__":
    run(test_reject_blob)
