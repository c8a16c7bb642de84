"""Configuration files are regular files only (issue 34, item 9): a FIFO
given as the config file froze gpud at SIGHUP (the open waited for a
writer). Now a FIFO or a directory is refused at start at once (by gpud
and gpuworker), and at
SIGHUP the reload is refused with the reason logged while gpud keeps its
running settings and keeps serving; the regular file put back reloads."""
import os
import signal
import subprocess

from harness import GPUD, WORKER, Cluster, check, run, wait_for


def sighup(cl):
    """Signal gpud; the log from its "SIGHUP: reading" to the verdict."""
    before = cl.log_text("gpud").count("SIGHUP: reading")

    def verdict():
        parts = cl.log_text("gpud").split("SIGHUP: reading")
        return len(parts) > before + 1 and "reload:" in parts[-1] and parts[-1]
    cl.gpud.send_signal(signal.SIGHUP)
    return wait_for(verdict, 20, "the reload's verdict")


def test_config_kind(cl: Cluster):
    conf = os.path.join(cl.dir, "gpud.conf")
    fifo = os.path.join(cl.dir, "fifo.conf")
    os.mkfifo(fifo)
    folder = os.path.join(cl.dir, "dir.conf")
    os.mkdir(folder)
    # At start: refused at once, naming the kind.
    for path, kind in ((fifo, "a FIFO"), (folder, "a directory")):
        for prog in (GPUD, WORKER):
            args = [prog, "--config", path] + (["--data", cl.data, "--socket", cl.sock] if prog == GPUD
                                                 else ["--connect", "127.0.0.1:1"])
            try:
                r = subprocess.run(args, capture_output=True, text=True, timeout=10)
            except subprocess.TimeoutExpired:
                check(False, "%s froze on %s" % (os.path.basename(prog), kind))
            check(r.returncode != 0 and "not a regular file (%s)" % kind in r.stderr,
                  "%s refuses %s: %s" % (os.path.basename(prog), kind, r.stderr))

    with open(conf, "w") as f:
        f.write("max-failures = 3\n")
    cl.start_gpud(extra=["--config", conf])
    for path, kind in ((fifo, "a FIFO"), (folder, "a directory")):
        os.rename(conf, conf + ".saved")
        os.symlink(path, conf)  # the name gpud reads now names the FIFO / directory
        verdict = sighup(cl)
        check("not a regular file (%s)" % kind in verdict and "the running settings stay" in verdict,
              "the reload is refused, saying why:\n" + verdict)
        check(cl.gpud.poll() is None and cl.ctl_ok("status"), "gpud keeps serving after %s" % kind)
        os.unlink(conf)
        os.rename(conf + ".saved", conf)
    with open(conf, "w") as f:
        f.write("max-failures = 4\n")
    verdict = sighup(cl)
    check("max-failures = 4 (was 3)" in verdict and "1 setting applied" in verdict,
          "the running settings were kept, and a regular file reloads:\n" + verdict)


if __name__ == "__main__":
    run(test_config_kind)
