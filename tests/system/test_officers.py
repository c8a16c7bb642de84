"""An Officers job through gpud and a CPU worker: extension leases in order
(each later lease fetches the previous result as its state), the checksum
against the O(n^2) reference, `gpuctl extend` to push the finished job
further, `gpuctl result JOB --values FROM:TO` for a range of values, and a
job with --check full (gpud's replication: every extension computed again
by a second worker, merged when both agree), the worker running each next
extension ahead of its grant, and gpud killed with -9 in the middle of a
job."""
import sqlite3
import struct

from harness import Cluster, check, run, wait_for

# FNV-1a 64 of G(0..N-1) as uint16 LE, computed with officers_ref_values.
FNV_200000 = "578c9b17d82c6a47"
FNV_300000 = "d8b12ff6605e9433"
FIRST_VALUES = [0, 0, 1, 2, 0, 1, 2, 3, 1, 2, 3, 4, 0, 3, 4, 2, 1, 3, 2, 1]
ZEROS = [0, 1, 4, 12, 20, 30, 46, 72, 98, 124, 150, 176, 314, 408]


def test_officers(cl: Cluster):
    cl.gpud_args = ["--lease-units", "60000", "--heartbeat", "0.5"]
    cl.start_gpud()
    cl.start_worker("cpu:2")
    job = cl.submit("officers", to=200000)
    cl.wait_job(job, timeout=300)
    res = cl.result(job)
    ans = res["answer"]
    check(res["state"] == "done", "job not done: %s" % res["state"])
    check(ans["n"] == 200000, "answer covers %s values" % ans["n"])
    check(ans["fnv"] == FNV_200000, "checksum %s, reference %s" % (ans["fnv"], FNV_200000))
    # The answer keeps no per-lease list: the ranges are the job's parts.
    check(ans["leases"] == 4 and "blobs" not in ans, "expected 4 stored ranges: %s" % ans.get("leases"))
    check(len(ans["rares"]) == 1584 and ans["rares"][-1] == [20627, 277],
          "rare positions: %d, last %s" % (len(ans["rares"]), ans["rares"][-1:]))
    check(ans["zeros"] == ZEROS, "zero positions %s" % ans["zeros"])
    text = cl.ctl("result", str(job)).stdout
    check("rare positions: 1584" in text and FNV_200000 in text, "result text: " + text)
    # The worker ran each next extension ahead, from its own unverified
    # result, and kept it when gpud granted that lease (fixed lease size:
    # every guess after the first lease is right).
    log = cl.log_text("worker")
    check(log.count("run ahead adopted") >= 2, "runs ahead adopted: %d\n%s" % (log.count("run ahead adopted"), cl.tail("worker")))

    cl.ctl("extend", str(job), "--to", "300000")
    cl.wait_job(job, timeout=300)
    ans = cl.result(job)["answer"]
    check(ans["n"] == 300000 and ans["fnv"] == FNV_300000,
          "after extend: %s values, checksum %s (reference %s)" % (ans["n"], ans["fnv"], FNV_300000))

    raw = cl.ctl_bytes("result", str(job), "--values", "0:20")
    check(len(raw) == 40, "export length %d" % len(raw))
    check(list(struct.unpack("<20H", raw)) == FIRST_VALUES, "first values %s" % list(struct.unpack("<20H", raw)))
    raw = cl.ctl_bytes("result", str(job), "--values", "179990:180010")
    check(len(raw) == 40, "export across two leases: %d bytes" % len(raw))

    # --check full: every extension computed a second time by a replica
    # lease on another worker (another token), merged once both agree.
    tb, _, _ = cl.add_token("second")
    cl.start_worker("cpu:1", token_file=tb)
    job2 = cl.submit("officers", to=200000, check="full")
    cl.wait_job(job2, timeout=300)
    res = cl.result(job2)
    check(res["state"] == "done", "checked job not done: %s" % res["state"])
    ans = res["answer"]
    check(res["answer"]["fnv"] == FNV_200000, "checked job's checksum %s" % res["answer"]["fnv"])
    st = cl.status(job2)
    check(ans["leases"] == 4 and st["leases"]["verified"] == 4 and st["replicas"]["verified"] == 4
          and st["units_verified"] == 200000,
          "every range should be merged once and confirmed once: %s ranges, %s" % (ans["leases"], st))

    # kill -9 gpud while the workers run ahead: after the restart the
    # leases come back under new epochs, runs ahead are adopted or dropped,
    # and the values are exact.
    check(cl.stop_gpud() == 0, "gpud should exit 0 on SIGTERM")
    cl.gpud_args = ["--lease-units", "15000", "--heartbeat", "0.5"]
    cl.start_gpud()
    job3 = cl.submit("officers", to=300000)
    wait_for(lambda: cl.status(job3)["leases"]["verified"] >= 3, 120, "three verified leases")
    cl.kill_gpud()
    db = sqlite3.connect("file:%s/gpud.db?mode=ro" % cl.data, uri=True)
    done = db.execute("SELECT count(*) FROM leases WHERE job_id = ? AND state = 3", (job3,)).fetchone()[0]
    db.close()
    check(done < 20, "the job ended before gpud was killed (%d of 20 leases verified)" % done)
    cl.start_gpud()
    cl.wait_job(job3, timeout=300)
    ans = cl.result(job3)["answer"]
    check(ans["n"] == 300000 and ans["fnv"] == FNV_300000,
          "after gpud was killed: %s values, checksum %s" % (ans["n"], ans["fnv"]))
    check(cl.stop_gpud() == 0, "gpud should exit 0 on SIGTERM")


def _ctl_bytes(self, *args):
    import subprocess
    from harness import GPUCTL, TestFailure
    r = subprocess.run([GPUCTL, "--socket", self.sock] + list(args), capture_output=True, timeout=60)
    if r.returncode != 0:
        raise TestFailure("gpuctl %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr.decode(errors="replace")))
    return r.stdout


Cluster.ctl_bytes = _ctl_bytes

if __name__ == "__main__":
    run(test_officers)
