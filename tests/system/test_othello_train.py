"""The Othello evaluation's training pipeline on a tiny set: the data
script (tools/othello_traindata.sh) gets exact scores from its own gpud and
a CPU worker, the training script (tools/othello_train.py) fits weights
whose held-out error is below that of predicting 0 in every phase, and the
build's generator accepts the weights file it writes and refuses a
truncated one."""
import os
import re
import subprocess
import sys

from harness import BUILD, Cluster, check, run

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def numpy_python():
    """An interpreter with numpy (python3-numpy, tools/deps.sh)."""
    for py in (sys.executable, "/usr/bin/python3"):
        if py and subprocess.run([py, "-c", "import numpy"], capture_output=True).returncode == 0:
            return py
    raise AssertionError("no python3 with numpy (run tools/deps.sh)")


def test_othello_train(cl: Cluster):
    data = os.path.join(cl.dir, "train.obf")
    weights = os.path.join(cl.dir, "eval.w")
    r = subprocess.run([os.path.join(ROOT, "tools", "othello_traindata.sh"), data, "cpu:1", "5",
                        "10:1600", "11:800"], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, BUILD=BUILD))
    check(r.returncode == 0, "othello_traindata.sh failed: " + r.stderr[-2000:])
    check("1600 positions at 10 empties: solved in" in r.stdout, "no timing line: " + r.stdout)
    lines = open(data).read().splitlines()
    check(len(lines) == 2400, "expected 2400 OBF lines, got %d" % len(lines))
    check(all(re.fullmatch(r"[XO-]{64} [XO]; ([A-H][1-8]|PS):[+-]\d\d;", x) for x in lines),
          "not OBF lines with scores: " + lines[0])

    r = subprocess.run([numpy_python(), os.path.join(ROOT, "tools", "othello_train.py"), data,
                        "-o", weights, "--phases", "10-10,11-11"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "othello_train.py failed: " + r.stderr[-2000:])
    print(r.stdout)
    rows = re.findall(r"^(\d+)-(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+) ",
                      r.stdout, re.M)
    check(len(rows) == 2, "expected 2 phase rows: " + r.stdout)
    for lo, hi, ntrain, nheld, mae_tr, mae_held, mae_zero in rows:
        check(int(ntrain) + int(nheld) == (1600 if lo == "10" else 800), "phase sizes: " + lo)
        check(float(mae_held) < float(mae_zero),
              "phase %s-%s: held-out error %s not below predicting 0 (%s)"
              % (lo, hi, mae_held, mae_zero))

    gen = os.path.join(BUILD, "kernels", "othello", "othello_evalgen")
    r = subprocess.run([gen, weights, os.path.join(cl.dir, "w.c")], capture_output=True, text=True)
    check(r.returncode == 0, "the generator refused the new file: " + r.stderr)
    with open(weights, "rb") as f:
        body = f.read()
    with open(weights, "wb") as f:
        f.write(body[:-2])
    r = subprocess.run([gen, weights, os.path.join(cl.dir, "w2.c")], capture_output=True, text=True)
    check(r.returncode == 1 and "bytes, expected" in r.stderr,
          "the generator took a truncated file: " + r.stderr)


if __name__ == "__main__":
    run(test_othello_train)
