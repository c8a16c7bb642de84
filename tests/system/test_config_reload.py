"""SIGHUP reloads gpud.conf (issue 21), whole or not at all (issue 34): a
changed lease-units sizes the next lease granted, a changed max-failures is
logged as applied, a key given on the command line (--log-level, from the
harness) keeps its flag's value; a file that changes heartbeat, which needs
a restart, is refused whole, so neither its other keys nor the timeouts
derived from the new heartbeat are applied; a bad file is refused with its
line number while gpud keeps its running settings."""
import os
import re
import signal

from harness import Cluster, check, run, wait_for

A = 1 << 21  # lease-units at start (graveler carves 2^20 at least)
B = 1 << 20  # after the reload


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def grants(cl, job):
    return [int(u) for u in re.findall(r"lease grant job=%d lease=\d+ epoch=\d+ worker=\S+ units=(\d+)" % job,
                                       cl.log_text("gpud"))]


def one_lease(cl, job, n):
    """A worker that takes one lease and exits; the size of grant n."""
    w = cl.start_worker("cpu:1", ["--max-leases", "1"])
    got = wait_for(lambda: len(grants(cl, job)) >= n and grants(cl, job), 60, "lease grant %d" % n)
    check(w.wait(60) == 0, "the worker should exit 0 after its lease")
    return got[n - 1]


def sighup(cl, what):
    before = cl.log_text("gpud").count("SIGHUP: reading")
    cl.gpud.send_signal(signal.SIGHUP)
    wait_for(lambda: cl.log_text("gpud").count("SIGHUP: reading") > before, 20, what)
    return before


def test_config_reload(cl: Cluster):
    conf = os.path.join(cl.dir, "gpud.conf")
    write(conf, "lease-units = %d\nlease-timeout = 600\nmax-failures = 3\nlog-level = debug\n" % A)
    cl.gpud_args = ["--config", conf]
    cl.start_gpud()
    job = cl.submit("graveler", battles=16 * A, seed=7)
    check(one_lease(cl, job, 1) == A, "the first lease has the file's size")

    # A new heartbeat needs a restart: the whole file is refused, the
    # lease-timeout and idle-timeout derived from it (no lease-timeout in
    # the file: 3 x 4 s) above all.
    write(conf, "# changed\nlease-units = %d\nmax-failures = 4\nheartbeat = 4\n" % B)
    sighup(cl, "the reload with a new heartbeat")
    msg = ("reload: heartbeat = 4 (running 5): needs a restart, and a reload is applied whole "
           "or not at all (restart gpud, or set it back); the running settings stay")
    wait_for(lambda: msg in cl.log_text("gpud"), 20, "the refusal")
    log = cl.log_text("gpud").split("SIGHUP: reading")[-1]
    check("reload: lease-timeout" not in log and "reload: idle-timeout" not in log
          and "settings applied" not in log, "applied from a refused reload:\n" + log)
    check(one_lease(cl, job, 2) == A, "a refused reload changes no lease size")

    write(conf, "# changed\nlease-units = %d\nlease-timeout = 600\nmax-failures = 4\n"
          "log-level = error\n" % B)
    sighup(cl, "the reload")
    log = wait_for(lambda: "setting" in cl.log_text("gpud").split("SIGHUP: reading")[-1]
                   and cl.log_text("gpud").split("SIGHUP: reading")[-1], 20, "the reload's lines")
    check("reload: lease-units = %d (was %d)" % (B, A) in log, "lease-units applied:\n" + log)
    check("reload: max-failures = 4 (was 3)" in log, "max-failures applied:\n" + log)
    check("log-level" not in log, "--log-level on the command line wins over the file:\n" + log)
    check("reload: 2 settings applied" in log, "two settings applied:\n" + log)
    check(one_lease(cl, job, 3) == B, "the lease after the reload has the new size")
    # Still debug (the flag's level): a debug line after the reload.
    check("debug" in "\n".join(cl.log_text("gpud").split("SIGHUP: reading")[-1].splitlines()[-20:]),
          "debug lines go on")

    write(conf, "lease-units = 4096\nbogus = 1\n")
    sighup(cl, "the bad reload")
    msg = "reload: %s:2: unknown key 'bogus'; the running settings stay" % conf
    wait_for(lambda: msg in cl.log_text("gpud"), 20, "the bad file's error")
    check(cl.gpud.poll() is None and cl.ctl_ok("status"), "gpud keeps running")
    check(one_lease(cl, job, 4) == B, "a bad file changes nothing")

    # Settings that do not hold together: refused whole, nothing applied.
    write(conf, "lease-units = %d\nlease-timeout = 3\n" % A)
    sighup(cl, "the inconsistent reload")
    wait_for(lambda: "lease-timeout (3) must be longer than heartbeat (5)" in cl.log_text("gpud"),
             20, "the inconsistent file's error")
    check(one_lease(cl, job, 5) == B, "an inconsistent file changes nothing")


if __name__ == "__main__":
    run(test_config_reload)
