"""Hosts that fail apart: gpud and two workers in network namespaces of their
own, joined by veth pairs to a bridge in a fourth namespace, so they talk over
real interfaces with delay and loss on every link (tc netem where the kernel
has it; else loss from an nftables rule and a tbf rate limit). In the middle
of a lease one worker's link is cut (its bridge port down) for longer than
the lease timeout, then restored.

Asserts, for a Graveler and an Officers job on the same gpud: the lease
goes back and is granted to the other worker; the cut-off worker's late
result is refused by its epoch (gpud's "result refused ... stale" line);
the answer is exact (gpurun's for Graveler, the published checksum for
Officers); gpud never blocks (gpuctl status answers within 2 s throughout
the cut). Prints how much work the cut cost (the units the re-issued
lease recomputed beyond its last checkpoint) and the slowest status answer.

The namespaces, named after this process, are removed at the end, pass or
fail. Exit 77 only when network namespaces cannot be made here (not root,
or no ip command).
"""
import os
import re
import shutil
import subprocess
import time

from harness import (Cluster, TestFailure, answer_core, check, cpu_rate, lease_units_for,
                     reference_answer, run, wait_for)

TAG = "gn%d" % (os.getpid() % 100000)
HUB, GPUD_NS = TAG + "hub", TAG + "g"
WORKERS = ("w1", "w2")
SUBNET = "10.77.%d" % (os.getpid() % 250)
GPUD_IP = SUBNET + ".1"
FNV_300000 = "d8b12ff6605e9433"  # test_officers.py's, from officers_ref_values
HEARTBEAT, LEASE_TIMEOUT = 0.3, 1.2


def sh(*args, check_rc=True):
    r = subprocess.run(list(args), capture_output=True, text=True, timeout=30)
    if check_rc and r.returncode != 0:
        raise TestFailure("%s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return r


def ns_of(w):
    return TAG + w


class Net:
    """The namespaces and links; shaping and cutting."""

    def __init__(self):
        self.made = []
        self.shaping = None

    def build(self):
        for ns in [HUB, GPUD_NS] + [ns_of(w) for w in WORKERS]:
            sh("ip", "netns", "add", ns)
            self.made.append(ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", HUB, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", HUB, "link", "set", "br0", "up")
        nodes = [(GPUD_NS, "hg", GPUD_IP)]
        nodes += [(ns_of(w), "h" + w, "%s.%d" % (SUBNET, 11 + i)) for i, w in enumerate(WORKERS)]
        for ns, port, ip in nodes:
            sh("ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port,
               "netns", HUB)
            sh("ip", "-n", HUB, "link", "set", port, "master", "br0")
            sh("ip", "-n", HUB, "link", "set", port, "up")
            sh("ip", "-n", ns, "addr", "add", ip + "/24", "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "eth0", "up")
        for ns, _, _ in nodes:
            self.shape(ns)

    def shape(self, ns):
        """Delay and loss on the node's way out (both ways across a link,
        since every node is shaped)."""
        r = sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "eth0", "root", "netem",
               "delay", "10ms", "5ms", "loss", "1%", check_rc=False)
        if r.returncode == 0:
            self.shaping = "netem: 10 ms +- 5 ms, 1% loss each way"
            return
        # No sch_netem in this kernel: loss from nftables, a rate limit
        # (whose queue delays bursts) from tbf.
        nft = ["ip", "netns", "exec", ns, "nft"]
        sh(*nft, "add table inet shape")
        sh(*nft, "add chain inet shape out { type filter hook output priority 0 ; }")
        sh(*nft, "add rule inet shape out meta l4proto tcp numgen random mod 100 lt 1 drop")
        sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "eth0", "root", "tbf",
           "rate", "20mbit", "burst", "16kb", "latency", "100ms")
        self.shaping = "no netem in this kernel: 1% loss (nftables), 20 Mbit/s (tbf)"

    def cut(self, w, down):
        sh("ip", "-n", HUB, "link", "set", "h" + w, "down" if down else "up")

    def remove(self):
        for ns in reversed(self.made):
            sh("ip", "netns", "del", ns, check_rc=False)
        self.made = []


def netns_missing():
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "tc", "nft"):
        if not shutil.which(tool):
            return "no %s command (Debian: iproute2 nftables)" % tool
    r = subprocess.run(["ip", "netns", "add", TAG + "probe"], capture_output=True, text=True)
    if r.returncode != 0:
        return "ip netns add failed: " + r.stderr.strip()
    subprocess.run(["ip", "netns", "del", TAG + "probe"], capture_output=True)
    return None


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def status_probe(cl, lat):
    """One gpuctl status; its time appended to lat. Fails the test when it
    takes longer than 2 s (gpud blocked)."""
    t = time.time()
    r = cl.ctl("status", "--json", timeout=10)
    lat.append(time.time() - t)
    check(r.returncode == 0, "gpuctl status failed during the cut")
    check(lat[-1] < 2.0, "gpuctl status took %.2fs during the cut: gpud blocked" % lat[-1])


def cut_mid_lease(cl, net, job, units, lat, logs, checkpointed):
    """Cut the worker in the middle of a lease (with a stored checkpoint when
    checkpointed: Officers checkpoints only every 2^20 values on a CPU),
    keep the cut until its lease went back and was granted again and the
    worker has sent its (late) result, restore. Returns (lease, epoch,
    worker, resume_from of the new grant)."""
    log = cl.log_text

    def holder():
        text = log("gpud")
        if checkpointed:
            found = re.finditer(r"checkpoint stored job=%d lease=(\d+) epoch=(\d+) worker=(\w+) "
                                r"units_done=(\d+)" % job, text)
            found = [m for m in found if 0 < int(m.group(4)) < units // 2]
        else:
            found = list(re.finditer(r"lease grant job=%d lease=(\d+) epoch=(\d+) worker=(\w+) "
                                     % job, text))
        for m in found:
            lease, epoch, w = int(m.group(1)), int(m.group(2)), m.group(3)
            if w in logs and "result stored job=%d lease=%d epoch=%d " % (job, lease, epoch) \
                    not in text and "lease granted job=%d lease=%d epoch=%d " % (job, lease, epoch) \
                    in read(logs[w]):
                return lease, epoch, w
        return None
    lease, epoch, w = wait_for(holder, 60, "a worker in the middle of a lease of job %d" % job,
                               interval=0.05)
    other = [x for x in WORKERS if x != w][0]
    net.cut(w, True)
    t_cut = time.time()
    try:
        def regranted():
            status_probe(cl, lat)
            return re.search(r"lease grant job=%d lease=%d epoch=(\d+) worker=%s .*resume_from=(\d+)"
                             % (job, lease, other), log("gpud"))
        m = wait_for(regranted, 60, "lease %d to be granted to %s" % (lease, other), interval=0.1)
        check(int(m.group(1)) > epoch, "the new grant's epoch %s after %d" % (m.group(1), epoch))
        resume_from = int(m.group(2))
        check("lease expired lease=%d" % lease in log("gpud"), "lease %d should have expired" % lease)
        # The cut-off worker goes on and finishes the lease it lost.
        wait_for(lambda: status_probe(cl, lat) or re.search(
            r"result upload job=%d lease=%d epoch=%d " % (job, lease, epoch), read(logs[w])),
            60, "%s to finish its lost lease" % w, interval=0.1)
    finally:
        net.cut(w, False)
    print("netns: job %d: %s cut off for %.1fs" % (job, w, time.time() - t_cut))
    wait_for(lambda: re.search(r"result refused job=\d+ lease=%d epoch=%d worker=%s reason=stale"
                               % (lease, epoch, w), log("gpud")),
             60, "the late result of lease %d epoch %d to be refused" % (lease, epoch))
    return lease, epoch, w, resume_from


def start_workers(cl, tokens, logs):
    for w in WORKERS:
        cl.start_worker("cpu:1", ["--checkpoint-interval", "0.3"], token_file=tokens[w],
                        host=GPUD_IP, prefix=["ip", "netns", "exec", ns_of(w)])
        logs[w] = cl.logs[-1]


def test_netns(cl: Cluster):
    net = Net()
    try:
        net.build()
        print("netns: " + net.shaping)
        gpud_ns = ["ip", "netns", "exec", GPUD_NS]
        timing = ["--heartbeat", str(HEARTBEAT), "--lease-timeout", str(LEASE_TIMEOUT)]
        lat, logs = [], {}

        # Graveler: independent leases of about 2 s, two at a time.
        units = lease_units_for(2)
        battles, seed = 4 * units, 77
        ref = reference_answer("graveler", battles=battles, seed=seed)
        cl.gpud_args = timing + ["--lease-units", str(units)]
        cl.start_gpud(host=GPUD_IP, prefix=gpud_ns)
        tokens = {w: cl.add_token(w)[0] for w in WORKERS}
        job = cl.submit("graveler", battles=battles, seed=seed)
        start_workers(cl, tokens, logs)
        lease, epoch, w, resume = cut_mid_lease(cl, net, job, units, lat, logs, True)
        cl.wait_job(job, timeout=120)
        check(answer_core(cl.result(job)["answer"]) == ref, "Graveler's answer differs from gpurun's")
        lost = units - resume
        print("netns: graveler lease %d (%d units) cut at epoch %d: %d units recomputed "
              "(%.0f%% of the lease, %.2fs of one thread)"
              % (lease, units, epoch, lost, 100.0 * lost / units, lost / cpu_rate()))
        # Officers: extension leases one after another, 100000 values each
        # (gpud restarted for that lease size; the workers log in again).
        check(cl.stop_gpud() == 0, "gpud should exit 0 on SIGTERM")
        cl.gpud_args = timing + ["--lease-units", "100000"]
        cl.start_gpud(host=GPUD_IP, prefix=gpud_ns)
        job = cl.submit("officers", to=300000)
        lease, epoch, w, resume = cut_mid_lease(cl, net, job, 100000, lat, logs, False)
        cl.wait_job(job, timeout=120)
        ans = cl.result(job)["answer"]
        check(ans["n"] == 300000 and ans["fnv"] == FNV_300000,
              "Officers: %s values, checksum %s (published %s)" % (ans["n"], ans["fnv"], FNV_300000))
        print("netns: officers lease %d cut at epoch %d: %d of 100000 values recomputed; "
              "slowest gpuctl status during the cuts %.3fs (%d asked)"
              % (lease, epoch, 100000 - resume, max(lat), len(lat)))
    finally:
        net.remove()


if __name__ == "__main__":
    run(test_netns, missing=netns_missing)
