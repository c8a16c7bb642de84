"""Logs for journald (issue 23): with JOURNAL_STREAM naming gpud's stderr
(as systemd sets it), every line starts with its syslog priority (<3>
error, <4> warning, <6> info, <7> debug) and carries no timestamp of
gpud's own; gpuctl's connections, local and remote, log at debug only, so
a `watch` loop adds no info line; a JOURNAL_STREAM that names another file
(inherited from a parent) leaves the plain format. The <3> comes from a
second gpud refused its --http address, which the first one holds."""
import os
import re
import subprocess

from harness import GPUCTL, GPUD, Cluster, check, run, wait_for

PRIO = re.compile(r"^<([3467])>")
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")


def journal_env(path):
    st = os.stat(path)
    return {"JOURNAL_STREAM": "%d:%d" % (st.st_dev, st.st_ino)}


def lines(text):
    return [line for line in text.splitlines() if line]


def test_journald(cl: Cluster):
    # The harness opens this file as gpud's stderr ("wb" keeps the inode).
    log = os.path.join(cl.dir, "gpud-%d.log" % len(cl.logs))
    open(log, "wb").close()
    cl.start_gpud(env=journal_env(log))
    viewer, _, _ = cl.add_token("ops-viewer", role="viewer")
    job = cl.submit("graveler", battles=1 << 20, seed=3)
    cl.start_worker("cpu:1")
    cl.wait_job(job, timeout=60)
    # A warning: the same worker process logging in twice (the newer login
    # closes the older connection).
    twice = [cl.raw_worker(instance="twice") for _ in range(2)]
    wait_for(lambda: "<4>worker local@twice" in cl.log_text("gpud"), 10, "the warning line")
    for w in twice:
        w.close()
    wait_for(lambda: "worker=local reason=peer closed" in cl.log_text("gpud"), 10, "the raw worker's close")

    before = lines(cl.log_text("gpud"))
    for line in before:
        check(PRIO.match(line), "a line without its priority: %r" % line)
        check(not STAMP.search(line), "a timestamp of gpud's own under journald: %r" % line)
    seen = {PRIO.match(line).group(1) for line in before}
    check({"4", "6", "7"} <= seen, "warning, info and debug lines: %s" % sorted(seen))
    check(any(line.startswith("<6>gpud ") and "ready" in line for line in before),
          "the ready line at info: %s" % before[:12])
    check(any(re.match(r"<6>lease verified job=%d" % job, line) for line in before),
          "lease verified at info")

    # gpuctl's routine traffic: a watch loop, status, and a remote viewer.
    r = subprocess.run([GPUCTL, "--socket", cl.sock, "watch", "--interval", "0.1", "--count", "15"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "gpuctl watch: %s" % r.stderr)
    for _ in range(10):
        cl.ctl("status")
        r = subprocess.run([GPUCTL, "--connect", "127.0.0.1:%d" % cl.port, "--credential", viewer, "status"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "remote status: %s" % r.stderr)
    def closes():
        """gpuctl's connections' ends logged, those held back included."""
        n = 0
        for line in lines(cl.log_text("gpud"))[len(before):]:
            m = re.match(r"<7>(\d+) similar messages suppressed in \d+ s: close .* gpuctl=", line)
            n += int(m.group(1)) if m else bool(re.match(r"<7>close .* gpuctl=", line))
        return n
    # A watch, 10 local and 10 remote connections; gpud sees each end a
    # moment after gpuctl exits. The identical local lines pass 10 at a time
    # and are summed up when their 10 s window ends.
    wait_for(lambda: closes() >= 21, 15, "each gpuctl connection's close at debug")
    after = lines(cl.log_text("gpud"))[len(before):]
    check(any(re.match(r"<7>\d+ similar messages suppressed in 10 s: close control gpuctl=\S+ reason=peer closed$", line)
              for line in after), "repeated lines summed up: %s" % after[-5:])
    noisy = [line for line in after if not line.startswith("<7>")]
    check(not noisy, "gpuctl's connections logged above debug: %s" % noisy[:5])
    check(any("gpuctl online token=ops-viewer" in line for line in after), "the remote login at debug")

    # A second gpud whose --http address is taken: refused with <3>.
    other = os.path.join(cl.dir, "other")
    err_path = os.path.join(cl.dir, "other.log")
    with open(err_path, "wb") as err:
        r = subprocess.run([GPUD, "--data", other, "--listen", "127.0.0.1:0", "--socket",
                            os.path.join(cl.dir, "other.sock"), "--http", cl.http, "--config", os.devnull],
                           stdout=subprocess.DEVNULL, stderr=err, env=dict(os.environ, **journal_env(err_path)),
                           timeout=30)
    text = open(err_path).read()
    check(r.returncode != 0, "a taken --http address must stop gpud")
    check(re.search(r"^<3>cannot serve http on %s" % re.escape(cl.http), text, re.M),
          "the error at <3>: %s" % text)
    check(all(PRIO.match(line) for line in lines(text)), "every line prefixed: %s" % text)

    # The variable inherited by a process whose stderr is elsewhere.
    r = subprocess.run([GPUD, "--data", other, "--listen", "127.0.0.1:0", "--socket",
                        os.path.join(cl.dir, "other.sock"), "--http", cl.http, "--config", os.devnull],
                       capture_output=True, text=True, env=dict(os.environ, JOURNAL_STREAM="1:1"), timeout=30)
    check(r.returncode != 0 and not PRIO.search(r.stderr) and STAMP.search(r.stderr)
          and " gpud error cannot serve http" in r.stderr, "plain lines: %s" % r.stderr)


if __name__ == "__main__":
    run(test_journald)
