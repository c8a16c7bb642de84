"""gpuctl's output where it goes (issue 35, "the first five minutes"):

- a reader that stops early (`gpuctl export ... | head`, `gpuctl watch |
  head`): gpuctl ends quietly with exit 0, no "Broken pipe";
- binary to a terminal: `result --values` and `export JOB values` refuse
  (exit 2) and say to redirect; the same to a file are the exact bytes;
- the help and error texts say what exists: the Sudoku counts export is
  CSV (and is), `export values` takes --range (and says so when it is
  missing);
- `watch` on a small terminal lists running and queued jobs first, the
  finished ones last (cut off first), on the stand-in gpud of
  test_gpuctl_view.py."""
import os
import re
import subprocess

from harness import GPUCTL, Cluster, check, run
from test_gpuctl_cli import on_tty
from test_gpuctl_view import FakeGpud

N = 100000  # Officers values: 200 kB, more than a pipe holds


def stops_early(args, keep):
    """Run args with stdout on a pipe whose reader takes keep bytes and
    closes it: (exit status, stderr, the bytes read)."""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    got = p.stdout.read(keep)
    p.stdout.close()
    err = p.stderr.read().decode(errors="replace")
    p.wait(60)
    return p.returncode, err, got


def test_gpuctl_output(cl: Cluster):
    cl.gpud_args = ["--heartbeat", "0.5"]
    cl.start_gpud()
    cl.start_worker("cpu:2")
    off = cl.submit("officers", to=N)
    sud = cl.submit("sudoku", box="2x3")
    cl.wait_job(off, timeout=300)
    cl.wait_job(sud, timeout=300)
    ctl = [GPUCTL, "--socket", cl.sock]

    # To a file: every value, 2 bytes each.
    path = os.path.join(cl.dir, "values.bin")
    with open(path, "wb") as f:
        r = subprocess.run(ctl + ["result", str(off), "--values", "0:%d" % N], stdout=f,
                           stderr=subprocess.PIPE, timeout=60)
    check(r.returncode == 0 and os.path.getsize(path) == 2 * N,
          "result --values > file: %d, %d bytes %r" % (r.returncode, os.path.getsize(path), r.stderr))
    values = open(path, "rb").read()
    r = subprocess.run(ctl + ["export", str(off), "values", "--range", "0:%d" % N],
                       capture_output=True, timeout=60)
    check(r.returncode == 0 and r.stdout == values, "export values to a pipe: %d, %d bytes %r"
          % (r.returncode, len(r.stdout), r.stderr))

    # To a terminal: refused, before anything is written, with the way out.
    rc, screen = on_tty(ctl + ["result", str(off), "--values", "0:%d" % N], 24, 80)
    check(rc == 2 and "redirect" in screen and "> FILE" in screen and len(screen) < 400,
          "result --values on a terminal: %d %r" % (rc, screen[:400]))
    rc, screen = on_tty(ctl + ["export", str(off), "values", "--range", "0:1000"], 24, 80)
    check(rc == 2 and "binary" in screen and "redirect" in screen and len(screen) < 400,
          "export values on a terminal: %d %r" % (rc, screen[:400]))
    # Text is fine on a terminal: the counts are CSV.
    rc, screen = on_tty(ctl + ["export", str(sud), "counts"], 24, 80)
    check(rc == 0 and screen.replace("\r", "").startswith("index,count\n"),
          "counts on a terminal: %d %r" % (rc, screen[:200]))

    # A reader that stops: quiet, exit 0.
    rc, err, got = stops_early(ctl + ["export", str(off), "values", "--range", "0:%d" % N], 10)
    check(rc == 0 and err == "" and got == values[:10],
          "export | head: exit %d, stderr %r" % (rc, err))
    rc, err, got = stops_early(ctl + ["result", str(off), "--values", "0:%d" % N], 1)
    check(rc == 0 and err == "", "result --values | head: exit %d, stderr %r" % (rc, err))
    rc, err, got = stops_early(ctl + ["watch", "--interval", "0.1"], 1)
    check(rc == 0 and err == "", "watch | head: exit %d, stderr %r" % (rc, err))

    # The counts export is what its help says: CSV, index,count.
    help_text = cl.ctl("export", str(sud)).stdout
    check("CSV" in help_text and "index,count" in help_text and "INDEX W" not in help_text,
          "counts' help: " + help_text)
    csv = cl.ctl("export", str(sud), "counts").stdout.split("\n")
    check(csv[0] == "index,count" and all(re.fullmatch(r"\d+,\d+", l) for l in csv[1:] if l),
          "counts export: %r" % csv[:5])
    # export values names its option when it is missing or misspelt.
    for args in (["values"], ["values", "--values", "0:10"]):
        r = cl.ctl("export", str(off), *args, check_rc=False)
        check(r.returncode != 0 and "--range FROM:TO" in r.stderr,
              "export %s: %d %r" % (" ".join(args), r.returncode, r.stderr))
    r = cl.ctl("help", "export")
    check("--range" in r.stdout and "CSV" in r.stdout, "help export: " + r.stdout)

    # watch on a small terminal: what moves first.
    path = os.path.join(cl.dir, "fake.sock")
    fake = FakeGpud(path)
    try:
        rc, screen = on_tty([GPUCTL, "--socket", path, "watch", "--count", "1"], 12, 100)
    finally:
        fake.close()
    lines = screen.replace("\x1b[H\x1b[2J", "").replace("\r", "").split("\n")
    rows = [l for l in lines if re.match(r"\s*\d+\s", l) and ("graveler" in l or "sudoku" in l)]
    check(rc == 0 and rows and "big-run" in rows[0],
          "watch: the running job first:\n" + "\n".join(lines))
    check("warmup" not in screen and not any(re.search(r" (done|failed) ", l) for l in rows) and
          any(re.fullmatch(r"\+\d+ more", l.strip()) for l in lines),
          "watch: finished jobs after the live ones, cut first:\n" + "\n".join(lines))


if __name__ == "__main__":
    run(test_gpuctl_output)
