"""Lazy workers (issue 20, item 2): a protocol client with a token of its own
computes its lease honestly on part of it (tests/wlrun runs the workload's
run hook) and fabricates the rest, with every aggregate the decoder checks
made consistent. gpud's verification refuses the result, charges the
failure to that worker, and the job still ends with gpurun's exact answer
once an honest worker redoes the lease. One test per workload; run one by
name (python3 test_lazy.py officers) or all of them (no argument)."""
import json
import os
import re
import struct
import subprocess
import sys

from harness import (BUILD, Cluster, answer_core, blob, check, reference_answer,
                     run, wait_for)

WLRUN = os.path.join(BUILD, "tests", "wlrun")
BLOB_RESULT = 2


def lazy_upload(cl, workload, fabricate):
    """Claim one lease as worker "lazy", run it honestly, let fabricate(raw)
    replace part of it, upload it. Returns the lease message once gpud has
    logged the verdict, and the reason it gave."""
    _, name, secret = cl.add_token("lazy")
    rw = cl.raw_worker(name=name, secret=secret, workloads=(workload,))
    lease, _ = rw.claim_lease()
    out = os.path.join(cl.dir, "honest.bin")
    r = subprocess.run([WLRUN, workload, json.dumps(lease["params"]), json.dumps(lease["spec"]), out],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "wlrun failed: " + r.stderr)
    honest = open(out, "rb").read()
    raw = fabricate(honest)
    check(raw != honest and len(raw) == len(honest), "the fabrication must change the result, not its size")
    lid, ep = lease["lease"], lease["epoch"]
    rw.send_msg("RESULT", {"lease": lid, "epoch": ep, "units_done": lease["units"], "seconds": 1},
                blob(BLOB_RESULT, workload, lid, ep, raw))
    rw.expect("ACK", timeout=30)
    m = wait_for(lambda: re.search(r"lease failed verification job=%d lease=%d epoch=%d reason=(.*)"
                                   % (lease["job"], lid, ep), cl.log_text("gpud")),
                 60, "the lazy result's verdict")
    check("lease verified job=%d lease=%d epoch=%d " % (lease["job"], lid, ep) not in cl.log_text("gpud"),
          "the lazy result was verified")
    workers = json.loads(cl.ctl("workers", "--json").stdout)
    lazy = [w for w in workers if w["credential"] == "lazy"]
    check(lazy and lazy[0]["failures"] >= 1, "the failure is not charged to the lazy worker: %s" % workers)
    rw.close()
    return lease, m.group(1)


def redo_and_check(cl, job, workload, **ref):
    """An honest worker redoes the lease; the answer is gpurun's and no
    honest worker is charged anything."""
    cl.start_worker("cpu:1")
    cl.wait_job(job, timeout=240)
    res = cl.result(job)
    check(res["state"] == "done", "job not done: %s" % res["state"])
    check(answer_core(res["answer"], workload) == reference_answer(workload, **ref),
          "answer differs from gpurun's")
    for w in json.loads(cl.ctl("workers", "--json").stdout):
        check(w["credential"] == "lazy" or w["failures"] == 0, "honest worker charged: %s" % w)


# -- Officers: values past the middle copied from the first half (rare ones
# made common), counts, first occurrences, rare table and checksum rebuilt.

def officers_fabricate(raw):
    head = struct.unpack_from("<4sIQQQQQIIII", raw, 0)
    magic, ver, frm, to, vbase, fnv_in, _, nprefix, nrare, nrare_in, _ = head
    check(magic == b"OFFR" and frm == 0 and vbase == 0 and nprefix == to, "a first lease below 2^20")
    off = 64 + 2 * 8 * 512 + 12 * nrare
    vals = list(struct.unpack_from("<%dH" % to, raw, off + 2 * nprefix))
    half = to // 2

    def rare(v):
        return bin(v & ~0x11).count("1") % 2 == 0
    for x in range(half, to):
        v = vals[x - half]
        vals[x] = v ^ 2 if rare(v) else v
    counts, first = [0] * 512, [2**64 - 1] * 512
    rares, fnv = [], fnv_in
    for x, v in enumerate(vals):
        counts[v] += 1
        if first[v] == 2**64 - 1:
            first[v] = x
        if rare(v):
            rares.append((x, v))
        for b in (v & 0xff, v >> 8):
            fnv = ((fnv ^ b) * 0x100000001b3) & (2**64 - 1)
    check(len(rares) == nrare and nrare_in == 0, "the fabrication keeps the rare table's size")
    out = struct.pack("<4sIQQQQQIIII", magic, ver, frm, to, vbase, fnv_in, fnv, nprefix, nrare, nrare_in, 0)
    out += struct.pack("<512Q", *counts) + struct.pack("<512Q", *first)
    out += b"".join(struct.pack("<QI", p, v) for p, v in rares)
    out += struct.pack("<%dH" % to, *vals) * 2  # prefix, then the tail (vbase 0)
    return out


def test_lazy_officers(cl: Cluster):
    cl.gpud_args = ["--lease-units", "60000", "--heartbeat", "0.5", "--lease-timeout", "60"]
    cl.start_gpud()
    job = cl.submit("officers", to=60000)
    _, why = lazy_upload(cl, "officers", officers_fabricate)
    check(why.startswith("officers verify:"), "reason: %s" % why)
    redo_and_check(cl, job, "officers", to=60000)


# -- Othello: scores past the middle claimed as draws (moves kept).

def othello_fabricate(raw):
    magic, _, begin, count = struct.unpack_from("<4sIQQ", raw, 0)
    check(magic == b"OTHR", "an Othello result")
    out = bytearray(raw)
    for i in range(count // 2, count):
        out[56 + 2 * i] = 32  # score 0
    return bytes(out)


def test_lazy_othello(cl: Cluster):
    cl.gpud_args = ["--lease-units", "2000", "--heartbeat", "0.5", "--lease-timeout", "60"]
    cl.start_gpud()
    job = cl.submit("othello", random=2000, empties=10, seed=20)
    _, why = lazy_upload(cl, "othello", othello_fabricate)
    check(why.startswith("othello verify:"), "reason: %s" % why)
    redo_and_check(cl, job, "othello", random=2000, empties=10, seed=20)


# -- Sudoku: gangsters past the middle given the W and pieces of gangsters
# of the first half (even, in range, each W still the sum of its pieces).

def sudoku_fabricate(raw):
    magic, _, R, C, P, frm, to, done = struct.unpack_from("<4sIBBHIII", raw, 0)
    check(magic == b"SDKR" and C == 3 and P > 0 and done == to - frm, "a 3-band Sudoku result with pieces")
    out = bytearray(raw)
    half = done // 2
    pieces = 32 + 16 * done
    for i in range(half, done):
        j = i - half
        out[32 + 16 * i:48 + 16 * i] = raw[32 + 16 * j:48 + 16 * j]
        out[pieces + 16 * P * i:pieces + 16 * P * (i + 1)] = raw[pieces + 16 * P * j:pieces + 16 * P * (j + 1)]
    return bytes(out)


def test_lazy_sudoku(cl: Cluster):
    cl.start_gpud()
    job = cl.submit("sudoku", box="3x3")
    _, why = lazy_upload(cl, "sudoku", sudoku_fabricate)
    check(why.startswith("sudoku verify:"), "reason: %s" % why)
    redo_and_check(cl, job, "sudoku", box="3x3")


TESTS = {"officers": test_lazy_officers, "othello": test_lazy_othello, "sudoku": test_lazy_sudoku}

if __name__ == "__main__":
    names = sys.argv[1:] or list(TESTS)
    if len(names) == 1:
        run(TESTS[names[0]])
    failed = [n for n in names
              if subprocess.run([sys.executable, __file__, n]).returncode != 0]
    sys.exit(1 if failed else 0)
