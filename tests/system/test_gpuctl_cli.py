"""gpuctl teaches and scales (issue 23): help for every command and
`CMD --help` exit 0, --version, --socket=PATH, every documented exit code,
gpuctl workloads and `submit W --help` from gpud's registry, `export JOB`
listing what it has, an aligned status table with human numbers for a
dozen jobs and its filters, watch fitted to a small terminal, wait's line
redrawn without stale characters, and the bash completion."""
import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time

from harness import GPUCTL, Cluster, check, run

COMPLETION = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                          "gpuctl", "gpuctl-completion.bash")


def on_tty(args, rows, cols, timeout=20):
    """Run args with stdout and stderr on a terminal of rows x cols: (exit
    status, what it wrote)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    out, end = b"", time.time() + timeout
    try:
        while time.time() < end:
            r, _, _ = select.select([master], [], [], 0.2)
            if r:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the terminal's last writer is gone
                    break
                if not chunk:
                    break
                out += chunk
            elif p.poll() is not None:
                break
    finally:
        os.close(master)
        if p.poll() is None:
            p.kill()
        p.wait(10)
    return p.returncode, out.decode(errors="replace")


def check_help(cl):
    r = cl.ctl("help")
    commands = re.findall(r"^  ([a-z]+) ", r.stdout.split("options")[0], re.M)
    check(len(commands) >= 17 and "exit status" in r.stdout, "gpuctl help: " + r.stdout)
    for c in commands:
        for args in (["help", c], [c, "--help"]):
            r = cl.ctl(*args, check_rc=False)
            check(r.returncode == 0 and r.stdout.startswith("usage: gpuctl " + c),
                  "gpuctl %s: %d %r %r" % (" ".join(args), r.returncode, r.stdout[:80], r.stderr))
    r = subprocess.run([GPUCTL, "--version"], capture_output=True, text=True)
    check(r.returncode == 0 and re.fullmatch(r"gpuctl \d+\.\d+\.\d+\n", r.stdout), "--version: %r" % r.stdout)
    r = subprocess.run([GPUCTL, "--socket=" + cl.sock, "status"], capture_output=True, text=True)
    check(r.returncode == 0, "--socket=PATH: %d %s" % (r.returncode, r.stderr))
    for args, msg in ((["status", "--bogus"], "unrecognized option"), (["help", "nosuch"], "no command"),
                      (["status", "--format", "id,nosuch"], "unknown column"),
                      (["status", "--state", "active"], "no state"),
                      (["submit", "graveler", "--priority", "5000", "--battles", "9"], "-1000..1000"),
                      (["submit", "graveler", "--name", "bad name", "--battles", "9"], "--name"),
                      (["priority", "1", "high"], "priority"), (["wait"], "see gpuctl help wait")):
        r = cl.ctl(*args, check_rc=False)
        check(r.returncode == 2 and msg in r.stderr, "%s: %d %r" % (args, r.returncode, r.stderr))


def check_workloads(cl):
    ws = json.loads(cl.ctl("workloads", "--json").stdout)
    names = {w["name"]: w for w in ws}
    check(set(names) == {"graveler", "officers", "othello", "sudoku"}, "workloads: %s" % sorted(names))
    g = names["graveler"]
    check(g["unit_name"] == "battles" and [p["name"] for p in g["params"]] == ["battles", "seed"]
          and g["params"][1]["default"] == "0" and g["params"][0]["default"] is None,
          "graveler: %s" % g)
    check([e["name"] for e in names["officers"]["exports"]] == ["values", "plot"] and
          "--range" in names["officers"]["exports"][0]["help"], "officers exports: %s" % names["officers"])
    text = cl.ctl("workloads").stdout
    check("sudoku (units: gangsters)" in text and "--box VALUE" in text, "workloads text: " + text)
    r = cl.ctl("submit", "graveler", "--help")
    check("--battles N" in r.stdout and "--seed N" in r.stdout and "--priority P" in r.stdout,
          "submit graveler --help: " + r.stdout)
    # A viewer may read them from afar.
    cred, _, _ = cl.add_token("reader", role="viewer")
    r = subprocess.run([GPUCTL, "--connect", "127.0.0.1:%d" % cl.port, "--credential", cred, "workloads",
                        "--json"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and json.loads(r.stdout) == ws, "a viewer's workloads: %s" % r.stderr)
    r = cl.ctl("submit", "nosuch", "--help", check_rc=False)
    check(r.returncode == 2 and "no workload 'nosuch'" in r.stderr, "submit nosuch --help: %r" % r.stderr)


def test_gpuctl_cli(cl: Cluster):
    cl.start_gpud()
    t0 = time.time()
    check_help(cl)
    check_workloads(cl)
    # A dozen jobs, no worker: all queued, none moves.
    jobs = [cl.submit("graveler", battles=int(10 ** (3 + k * 0.6)), seed=k) for k in range(12)]
    off = int(cl.ctl("submit", "officers", "--to", "5000", "--name", "off5k", "--priority", "7").stdout)
    r = cl.ctl("export", str(off))
    check("values" in r.stdout and "--range FROM:TO" in r.stdout, "export JOB lists: " + r.stdout)

    # Exit codes, each as documented: 1 refused, 3 unreachable, 4 no such
    # job, 5 cancelled (wait), 6 timeout (wait).
    codes = [(["submit", "graveler", "--battles", "0"], 1), (["status", "999"], 4),
             (["result", "999"], 4), (["cancel", "999"], 4), (["export", "999"], 4),
             (["wait", str(jobs[0]), "--timeout", "0.3"], 6)]
    for args, want in codes:
        r = cl.ctl(*args, check_rc=False)
        check(r.returncode == want, "gpuctl %s: exit %d, want %d (%s)" % (args, r.returncode, want, r.stderr))
    cl.ctl("cancel", str(jobs[-1]))
    r = cl.ctl("wait", str(jobs[-1]), check_rc=False)
    check(r.returncode == 5 and "cancelled" in r.stderr, "wait on a cancelled job: %d %s" % (r.returncode, r.stderr))
    r = subprocess.run([GPUCTL, "--socket", cl.sock + ".nope", "status"], capture_output=True, text=True)
    check(r.returncode == 3, "unreachable: %d" % r.returncode)

    # The table: one line per job, columns aligned from job 1 to job 13,
    # numbers for people.
    out = cl.ctl("status").stdout.rstrip("\n").split("\n")
    check(len(out) == 14 and out[0].split() == ["ID", "NAME", "USER", "WORKLOAD", "STATE", "PROGRESS", "RATE",
                                                "ELAPSED", "ETA", "REASON"], "status:\n" + "\n".join(out))
    for col in ("WORKLOAD", "STATE", "REASON"):
        at = out[0].index(col)
        check(all(line[at - 1] == " " and line[at] != " " for line in out[1:]),
              "column %s is not aligned:\n%s" % (col, "\n".join(out)))
    check(len({line.index("% of ") for line in out[1:]}) == 1, "progress not aligned:\n" + "\n".join(out))
    text = "\n".join(out)
    check("1.00 k battles" in text and "1.00 M battles" in text and "e+" not in text,
          "human numbers:\n" + text)
    check(re.search(r"^ *%d .* cancelled " % jobs[-1], text, re.M), "cancelled row:\n" + text)
    r = cl.ctl("status", "--state", "cancelled", "--format", "id,state", "--no-header")
    check(r.stdout.split() == [str(jobs[-1]), "cancelled"], "--state filter: %r" % r.stdout)
    check(cl.ctl("status", "--workload", "sudoku").stdout == "no jobs\n", "--workload filter")
    r = cl.ctl("status", "--workload", "officers", "--long")
    check(r.stdout.startswith("job %d" % off) and "leases:" in r.stdout, "--long: " + r.stdout)

    # watch on a 12 x 50 terminal: nothing scrolls, nothing wraps.
    rc, screen = on_tty([GPUCTL, "--socket", cl.sock, "watch", "--count", "1"], 12, 50)
    lines = screen.replace("\x1b[H\x1b[2J", "").replace("\r", "").rstrip("\n").split("\n")
    check(rc == 0 and len(lines) <= 11 and max(len(l) for l in lines) <= 50 and
          re.search(r"^\+\d+ more$", screen.replace("\r", ""), re.M),
          "watch on 12x50 (%d lines):\n%s" % (len(lines), "\n".join(lines)))
    # wait on a terminal: \r, the line, then clear to its end.
    rc, line = on_tty([GPUCTL, "--socket", cl.sock, "wait", str(jobs[1]), "--timeout", "0.5"], 24, 120)
    check(rc == 6 and "\r" in line and "\x1b[K" in line and "job %d queued" % jobs[1] in line,
          "wait on a terminal: %d %r" % (rc, line))

    # bash completion: commands, job ids and workload parameters from gpud.
    def complete(*words):
        script = ('source %s; COMP_WORDS=(gpuctl --socket %s %s); COMP_CWORD=%d; _gpuctl; '
                  'printf "%%s\\n" "${COMPREPLY[@]}"' % (COMPLETION, cl.sock, " ".join(words),
                                                         len(words) + 2))
        env = dict(os.environ, PATH=os.path.dirname(GPUCTL) + ":" + os.environ["PATH"])
        return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env,
                              timeout=30).stdout.split()
    check(complete("st") == ["status"], "complete st: %s" % complete("st"))
    check(complete("cancel", "1") == ["1", "10", "11", "12", "13"], "job ids: %s" % complete("cancel", "1"))
    check(complete("submit", "o") == ["officers", "othello"], "workloads: %s" % complete("submit", "o"))
    check(complete("submit", "graveler", "--b") == ["--battles"], "params: %s" % complete("submit", "graveler", "--b"))
    check(complete("history", "--state", "") == ["done", "failed", "cancelled"],
          "history states: %s" % complete("history", "--state", ""))
    check("running" in complete("status", "--state", "r"), "status states: %s" % complete("status", "--state", "r"))
    print("gpuctl cli: %.1fs" % (time.time() - t0))
    check(cl.gpud.poll() is None, "gpud died")


if __name__ == "__main__":
    run(test_gpuctl_cli)
