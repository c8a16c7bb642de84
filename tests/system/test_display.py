"""Worker strings reach gpuctl's text output escaped (issue 20, item 7): a
worker whose device name and release error carry terminal escape
sequences shows them as \\x1b... in gpuctl workers and status; --json keeps
the exact strings as valid JSON with no raw control byte."""
import json

from harness import Cluster, RawWorker, check, run

DEVICE = "cpu\x1b]0;owned\x07\x1b[2J\u009b31m"
ERROR = "boom\x1b[31mRED\r\nfake line\u202e"


class DeviceWorker(RawWorker):
    """A RawWorker that logs in with DEVICE."""

    def send_msg(self, tname, msg, binary=b""):
        if tname == "HELLO":
            msg = dict(msg, device=DEVICE)
        super().send_msg(tname, msg, binary)


def raw_controls(text):
    return [c for c in text if ord(c) < 0x20 and c not in "\n" or 0x7f <= ord(c) <= 0x9f or c == "\u202e"]


def test_display(cl: Cluster):
    cl.start_gpud()
    job = cl.submit("graveler", battles=1 << 24, seed=3)
    rw = cl.raw_worker(DeviceWorker)
    lease, _ = rw.claim_lease()
    rw.send_msg("RELEASE", {"lease": lease["lease"], "epoch": lease["epoch"], "error": ERROR})

    out = cl.ctl("workers").stdout
    check(not raw_controls(out), "raw control characters in gpuctl workers: %r" % out)
    check("cpu\\x1b]0;owned\\x07\\x1b[2J\\u009b31m" in out, "device shown escaped: %r" % out)
    ws = json.loads(cl.ctl("workers", "--json").stdout)
    check(any(w["device"] == DEVICE for w in ws), "--json keeps the exact device name")

    def reason_shown():
        out = cl.ctl("status", str(job)).stdout
        return out if "boom" in out else None
    import time
    end = time.time() + 10
    out = None
    while out is None and time.time() < end:
        out = reason_shown()
        time.sleep(0.1)
    check(out is not None, "the release error reaches status")
    check(not raw_controls(out), "raw control characters in gpuctl status: %r" % out)
    check("boom\\x1b[31mRED\\x0d\\x0afake line\\u202e" in out, "error shown escaped: %r" % out)
    js = cl.ctl("status", str(job), "--json").stdout
    check(not raw_controls(js), "--json output has no raw control character: %r" % js)
    check(ERROR in json.loads(js)[0]["reason"], "--json keeps the exact text")
    rw.close()


if __name__ == "__main__":
    run(test_display)
