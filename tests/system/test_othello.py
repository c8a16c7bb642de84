"""Othello through gpud: a small --random job and a --file job on a CPU
worker give exactly gpurun's scores in an answer of constant size; `gpuctl
result JOB` writes them as OBF lines from the job's parts; a file with a bad
line is refused before the job starts, naming the line."""
import os
import subprocess

from harness import GPURUN, Cluster, check, run


def gpurun_export(cl, *args):
    """Scores from gpurun, as (board, move:score) per line, via its JSON
    answer's histogram (gpurun has no export), and the answer itself."""
    r = subprocess.run([GPURUN, "othello"] + list(args) + ["--json"], capture_output=True,
                       text=True, timeout=300)
    check(r.returncode == 0, "gpurun failed: " + r.stderr)
    import json
    return json.loads(r.stdout)["answer"]


def scores_of(text):
    out = []
    for line in text.splitlines():
        board, rest = line.split(";", 1)
        out.append((board.strip(), rest.strip()))
    return out


def test_othello(cl: Cluster):
    cl.gpud_args = ["--lease-units", "400", "--heartbeat", "0.5"]
    cl.start_gpud()
    cl.start_worker("cpu:1")

    # --random: 1000 positions with 9 empties, several leases.
    job = cl.submit("othello", random=1000, empties=9, seed=7)
    cl.wait_job(job, timeout=300)
    res = cl.result(job)
    check(res["state"] == "done", "random job not done: %s" % res["state"])
    ref = gpurun_export(cl, "--random", "1000", "--empties", "9", "--seed", "7")
    check(res["answer"]["hist"] == ref["hist"], "score histogram differs from gpurun's")
    # A constant-size answer: which result holds which positions is in gpud's
    # parts, read by the export below.
    check(sorted(res["answer"]) == ["hist", "leases", "mismatch_list", "mismatches", "nodes",
                                    "positions", "usec"], "answer fields: %s" % sorted(res["answer"]))
    check(res["answer"]["leases"] == 3, "1000 positions in leases of 400: %s" % res["answer"]["leases"])
    r = cl.ctl("result", str(job))
    lines = scores_of(r.stdout)
    check(len(lines) == 1000, "export has %d lines" % len(lines))
    check("score distribution" in r.stderr, "summary on stderr: " + r.stderr)
    for board, rest in lines:
        check(len(board) == 66 and board[-1] in "XO", "bad OBF board: %r" % board)
        check(":" in rest, "no move:score: %r" % rest)

    # --file: the exported positions of the random job (with their scores as
    # expected values), one altered to disagree.
    path = os.path.join(cl.dir, "pos.obf")
    text = r.stdout.splitlines()
    b, s = text[5].split(";", 1)
    mv, sc = s.strip().rstrip(";").split(":")
    wrong = int(sc) + 2 if int(sc) < 64 else int(sc) - 2
    text[5] = "%s; %s:%+d;" % (b, mv, wrong)
    with open(path, "w") as f:
        f.write("% positions\n" + "\n".join(text) + "\n")
    job2 = int(cl.ctl("submit", "othello", "--file", path).stdout.strip())
    cl.wait_job(job2, timeout=300)
    res2 = cl.result(job2)
    check(res2["answer"]["mismatches"] == 1, "one disagreement expected: %s" % res2["answer"]["mismatches"])
    check(res2["answer"]["mismatch_list"][0][0] == 5, "disagreement at position 5: %s" % res2["answer"]["mismatch_list"])
    out2 = cl.ctl("result", str(job2)).stdout
    check(scores_of(out2) == lines, "file job's scores differ from the random job's")
    ref2 = gpurun_export(cl, "--file", path)
    check(res2["answer"]["hist"] == ref2["hist"] and ref2["mismatches"] == 1, "file job differs from gpurun")

    # A bad line is refused with its number before the job exists.
    with open(path, "a") as f:
        f.write("this is not a position\n")
    r = cl.ctl("submit", "othello", "--file", path, check_rc=False)
    check(r.returncode != 0 and "line 1002" in r.stderr, "bad line refusal: %s" % r.stderr)
    check(cl.stop_gpud() == 0, "gpud should exit 0 on SIGTERM")


if __name__ == "__main__":
    run(test_othello)
