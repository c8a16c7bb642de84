"""Sudoku through gpud: a 3x3 job on a CPU worker gives gpurun's answer,
its answer holds no per-gangster data, `gpuctl export JOB counts` writes
CSV, a row per gangster read back from the lease results, and the text says
it agrees with the published count (information only). Every shape is
leased in gangster ranges, a GangSet at most a lease: 3x3's 5 sets are 5
leases or more, and a 2x4 job (band counts counted by the leases) gives
the published total."""
from harness import Cluster, answer_core, check, reference_answer, run

ANSWER_KEYS = {"box", "rows", "cols", "gangsters", "done", "leases", "sum", "sets", "total"}


def test_sudoku(cl: Cluster):
    cl.start_gpud()
    cl.start_worker("cpu:1")
    job = cl.submit("sudoku", box="3x3")
    cl.wait_job(job, timeout=300)
    res = cl.result(job)
    ans = res["answer"]
    check(res["state"] == "done", "job not done: %s" % res["state"])
    check(set(ans) == ANSWER_KEYS, "answer keys: %s" % sorted(ans))
    check(ans["total"] == "6670903752021072936960", "3x3 total: %s" % ans["total"])
    check(answer_core(ans, "sudoku") == reference_answer("sudoku", box="3x3"),
          "answer differs from gpurun's")
    check(ans["leases"] >= 5 and ans["gangsters"] == 44,
          "3x3 in %s leases of %s gangsters" % (ans["leases"], ans["gangsters"]))
    text = cl.ctl("result", str(job)).stdout
    check("agrees with the published count" in text, "result text: " + text)

    out = cl.ctl("export", str(job), "counts").stdout.split("\n")
    check(out[0] == "index,count", "export header: %r" % out[0])
    check(out[-1] == "" and len(out) == 46, "export has %d lines" % (len(out) - 2))
    for i, line in enumerate(out[1:-1]):
        idx, w = line.split(",")
        check(int(idx) == i and int(w) > 0 and int(w) % 2 == 0, "export line %r" % line)
    r = cl.ctl("export", str(job), "values", check_rc=False)
    check(r.returncode != 0 and "values" in r.stderr, "unknown export: %s" % r.stderr)
    job2 = cl.submit("sudoku", box="2x4")
    cl.wait_job(job2, timeout=300)
    ans2 = cl.result(job2)["answer"]
    check(ans2["total"] == "29136487207403520" and ans2["leases"] >= 3,
          "2x4: %s in %s leases" % (ans2["total"], ans2["leases"]))
    check(cl.stop_gpud() == 0, "gpud should exit 0 on SIGTERM")


if __name__ == "__main__":
    run(test_sudoku)
