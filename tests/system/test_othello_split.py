"""One hard position over many workers: a file job of FFO #1-#3 split 2 plies
deep is leased as its frontier positions to two CPU workers; the roots'
scores are the published ones, both workers held leases, `gpuctl result`
lists the roots, and a worker killed with -9 while it holds a lease loses
nothing (the lease expires, is re-issued, and the answer stays exact)."""
import os
import re
import signal
import time

from harness import Cluster, check, run, wait_for

FFO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "ffo.obf")


def ffo(first, last):
    """FFO lines #first..#last: (line, board with side, score, best moves)."""
    out = []
    for line in open(FFO):
        m = re.search(r"% FFO #(\d+)", line)
        if not m or not first <= int(m.group(1)) <= last:
            continue
        head, rest = line.split(";", 1)
        pairs = re.findall(r"([A-H][1-8]|PS):([+-]\d+)", rest.split("%")[0])
        score = max(int(s) for _, s in pairs)
        out.append((head + ";", " ".join(head.split()), score, {mv for mv, s in pairs if int(s) == score}))
    return out


def test_othello_split(cl: Cluster):
    cl.gpud_args = ["--heartbeat", "0.3", "--lease-timeout", "1.5"]
    cl.start_gpud()
    roots = ffo(1, 3)
    check(len(roots) == 3, "FFO #1-#3 not found in %s" % FFO)
    path = os.path.join(cl.dir, "ffo.obf")
    with open(path, "w") as f:
        f.write("".join(line + "\n" for line, _, _, _ in roots))
    tb, nb, _ = cl.add_token("b")
    a = cl.start_worker("cpu:1")
    cl.start_worker("cpu:1", token_file=tb)
    wait_for(lambda: cl.ctl("workers").stdout.count("online") >= 2, 30, "two workers online")
    # Worker a waits for work, then stops: the lease gpud grants it is
    # held by a process that never answers, and is killed with -9.
    time.sleep(0.5)
    a.send_signal(signal.SIGSTOP)
    t0 = time.time()
    job = int(cl.ctl("submit", "othello", "--file", path, "--split", "2").stdout.strip())
    grants = lambda: re.findall(r"lease grant job=%d lease=(\d+) epoch=(\d+) worker=(\S+)" % job,
                                cl.log_text("gpud"))
    held = wait_for(lambda: [g for g in grants() if g[2] != nb], 20, "a lease granted to worker a")
    lost = held[0][0]
    a.kill()
    a.wait()
    wait_for(lambda: "lease expired lease=%s " % lost in cl.log_text("gpud"), 30, "worker a's lease to expire")
    cl.wait_job(job, timeout=60)
    took = time.time() - t0
    check(("%s" % lost, "2", nb) in grants(), "lease %s was not re-issued to worker b: %s" % (lost, grants()))
    check({g[2] for g in grants()} == {held[0][2], nb}, "both workers held leases: %s" % grants())

    res = cl.result(job)
    ans = res["answer"]
    check(res["state"] == "done", "job not done: %s" % res["state"])
    check(ans["mismatches"] == 0, "roots disagree with FFO: %s" % ans["mismatch_list"])
    check([r[0] for r in ans["roots"]] == [s for _, _, s, _ in roots],
          "root scores %s, published %s" % (ans["roots"], [s for _, _, s, _ in roots]))
    status = cl.status(job)
    total = status["total_units"]
    # One position a lease, some leased again with another window; the
    # closing lease is the last.
    front = ans["frontier"]
    seen = sum(front[4 * k:4 * k + 4] != "0040" for k in range(total - 1))
    check(ans["positions"] == ans["leases"] >= 2 and 0 < seen < total - 1,
          "%s leases on %s of %s frontier positions" % (ans["leases"], seen, total - 1))
    # gpuctl result: the roots as OBF lines, with the summary saying how the
    # job was split.
    r = cl.ctl("result", str(job))
    lines = r.stdout.splitlines()
    check(len(lines) == 3, "result lists %d lines, not the 3 roots: %r" % (len(lines), r.stdout))
    for line, (_, board, score, moves) in zip(lines, roots):
        m = re.fullmatch(r"(.{64} [XO]); ([A-H][1-8]):([+-]\d+);", line)
        check(m is not None, "not an OBF line: %r" % line)
        check(m.group(1) == board, "root %r is not the input's %r" % (m.group(1), board))
        check(int(m.group(3)) == score and m.group(2) in moves,
              "root %s scored %s, published %+d by %s" % (board, line, score, moves))
    check("split 2 plies deep into %d frontier positions" % (total - 1) in r.stderr,
          "summary does not say how the job was split: %s" % r.stderr)
    print("split job: %d leases on %d of %d frontier positions in %.1f s, a worker lost" % (ans["leases"], seen,
                                                                                           total - 1, took))


if __name__ == "__main__":
    run(test_othello_split)
