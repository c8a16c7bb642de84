"""The first five minutes (issue 35): gpud, its page's port and the demo.

In a network namespace of its own, where 127.0.0.1:7780 (the page's
default address) is taken by a listener of the test's, the stand-in for
another gpud's page:
- gpud started without --http starts all the same: a warning naming the
  address, no page (no DATA/gpud.http), gpuctl answers;
- an --http that was asked for (the option, or the key in a file) and
  cannot bind is an error naming the address, and gpud exits 1;
- tools/demo.sh (on the build under test) runs to the answer, its page on
  a free port whose address it prints.
Outside it: a brand-new data directory's first start logs no warning or
error; a new identity key on a directory with credentials still warns, and
counts them; `--check-config` refuses `listen = localhost:7700` (gpud binds
numeric addresses only), as gpud itself does, with the same message.

Exit 77 when network namespaces cannot be made here (not root, no ip)."""
import os
import re
import shutil
import subprocess
import time

from harness import BUILD, GPUD, Cluster, check, run, wait_for

NS = "gfm%d" % (os.getpid() % 100000)
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ALARM = re.compile(r" gpud (warn|error) ")


def sh(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=30)


def netns_missing():
    if os.geteuid() != 0:
        return "network namespaces need root"
    if not shutil.which("ip"):
        return "no ip command (Debian: iproute2)"
    r = sh("ip", "netns", "add", NS + "p")
    if r.returncode != 0:
        return "ip netns add failed: " + r.stderr.strip()
    sh("ip", "netns", "del", NS + "p")
    return None


def start_plain(cl, extra=(), prefix=()):
    """gpud on cl's data directory as an operator starts it: no --http
    unless extra says one. Returns the process once it serves, or once it
    exited."""
    addr = os.path.join(cl.data, "gpud.addr")
    if os.path.exists(addr):
        os.unlink(addr)
    args = list(prefix) + [GPUD, "--data", cl.data, "--listen", "127.0.0.1:0", "--socket", cl.sock,
                           "--log-level", "info", "--config", os.devnull] + list(extra)
    cl.gpud = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=cl._log("gpud"))
    wait_for(lambda: os.path.exists(addr) or cl.gpud.poll() is not None, 30, "gpud to listen or exit")
    if cl.gpud.poll() is None:
        wait_for(lambda: cl.ctl_ok("status"), 20, "gpud control socket")
    return cl.gpud


def last_log(cl):
    with open(cl.logs[-1], "rb") as f:
        return f.read().decode(errors="replace")


def in_netns(cl):
    inside = ["ip", "netns", "exec", NS]
    check(sh("ip", "netns", "add", NS).returncode == 0, "ip netns add " + NS)
    try:
        check(sh("ip", "-n", NS, "link", "set", "lo", "up").returncode == 0, "lo up")
        # The stand-in for another gpud's page on the default address.
        blocker = subprocess.Popen(inside + [
            "python3", "-c", "import socket, sys, time\n"
            "s = socket.socket(); s.bind(('127.0.0.1', 7780)); s.listen(4)\n"
            "print('bound', flush=True); time.sleep(600)"], stdout=subprocess.PIPE, text=True)
        try:
            check(blocker.stdout.readline().strip() == "bound", "the stand-in bound 7780")
            port_taken(cl, inside)
            demo(cl, inside)
        finally:
            blocker.kill()
            blocker.wait(10)
    finally:
        sh("ip", "netns", "del", NS)


def port_taken(cl, inside):
    p = start_plain(cl, prefix=inside)
    log = last_log(cl)
    check(p.poll() is None, "gpud with its default page port taken exited:\n" + log)
    check(re.search(r" gpud warn no status page: its default address 127\.0\.0\.1:7780 is taken", log),
          "a warning naming the address:\n" + log)
    check(not os.path.exists(os.path.join(cl.data, "gpud.http")), "no page, no DATA/gpud.http")
    check(" gpud error " not in log, "no error:\n" + log)
    check(cl.ctl("status").returncode == 0, "gpuctl answers")
    r = cl.ctl("page-link", check_rc=False)
    check(r.returncode == 1 and "127.0.0.1:7780 was taken when it started" in r.stderr,
          "page-link without the page: %d %r" % (r.returncode, r.stderr))
    check(cl.stop_gpud() == 0, "gpud stops cleanly")

    # Asked for and taken: an error naming it, gpud exits 1.
    conf = os.path.join(cl.dir, "http.conf")
    with open(conf, "w") as f:
        f.write("http = 127.0.0.1:7780\n")
    for extra in (["--http", "127.0.0.1:7780"], ["--config", conf]):
        p = start_plain(cl, extra=extra, prefix=inside)
        rc = p.wait(30)
        log = last_log(cl)
        check(rc == 1 and re.search(r" gpud error cannot serve http on 127\.0\.0\.1:7780 ", log),
              "%s: exit %s, log:\n%s" % (" ".join(extra), rc, log))


def demo(cl, inside):
    data = os.path.join(cl.dir, "demo-data")
    env = dict(os.environ, GPUD_BUILD=os.path.abspath(BUILD), GPUD_DEMO_DATA=data)
    r = subprocess.run(inside + ["sh", os.path.join(ROOT, "tools", "demo.sh"), "2e6"], env=env,
                       capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    check(r.returncode == 0, "demo.sh exit %d:\n%s" % (r.returncode, out))
    m = re.search(r"^status page: http://127\.0\.0\.1:(\d+)/", r.stdout, re.M)
    check(m and m.group(1) != "7780", "the demo prints its page's address, not 7780's:\n" + out)
    check(re.search(r"^job 1 \(graveler\): done$", r.stdout, re.M), "the demo's answer:\n" + out)
    check(not ALARM.search(out), "the demo's gpud and worker warned:\n" + out)


def test_first_minutes(cl: Cluster):
    # A brand-new directory: nothing alarming.
    start_plain(cl, extra=["--http", "127.0.0.1:0"])
    log = last_log(cl)
    check(not ALARM.search(log), "a new directory's first start warns:\n" + log)
    check("made the identity key" in log, "the new key is said, quietly:\n" + log)
    # A new key beside credentials made before: that is worth a warning.
    cl.add_token("w1")
    check(cl.stop_gpud() == 0, "gpud stops")
    os.unlink(os.path.join(cl.data, "gpud.key"))
    start_plain(cl, extra=["--http", "127.0.0.1:0"])
    log = last_log(cl)
    check(re.search(r" gpud warn made a new identity key .*: the 1 credential\(s\) made before", log),
          "a new key with a credential out there:\n" + log)
    check(cl.stop_gpud() == 0, "gpud stops")

    # localhost: refused by --check-config, as by gpud, the same way.
    conf = os.path.join(cl.dir, "localhost.conf")
    with open(conf, "w") as f:
        f.write("data = %s\nlisten = localhost:7700\n" % cl.data)
    for args in (["--config", conf, "--check-config"], ["--config", conf],
                 ["--config", os.devnull, "--data", cl.data, "--listen", "localhost:0", "--check-config"]):
        r = subprocess.run([GPUD] + args, capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and "wants a numeric address, not a name (127.0.0.1:PORT for localhost"
              in r.stderr, "gpud %s: %d %r" % (" ".join(args), r.returncode, r.stderr))
    r = subprocess.run([GPUD, "--help"], capture_output=True, text=True, timeout=30)
    check("numeric address" in r.stdout and "skipped with a warning when taken" in r.stdout,
          "gpud --help on listen and http: " + r.stdout)

    in_netns(cl)


if __name__ == "__main__":
    run(test_first_minutes, missing=netns_missing)
