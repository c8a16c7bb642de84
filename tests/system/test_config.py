"""Configuration files (issue 21): every key of gpud and gpuworker
round-trips through a file and `--check-config`; the example files
(etc/*.conf, installed) document every key with its real default and mark
exactly the keys SIGHUP changes; flags win over the file; a bad file is
refused with its line number, and so is a missing --config file. Nothing
is started: --check-config only reads."""
import os
import re
import subprocess

from harness import GPUD, WORKER, Cluster, check, run

ETC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "etc")

# A value for every key, none of them the default. A key missing here
# fails the test: add it with a value of its own.
GPUD_VALUES = [
    ("data", "/srv/gpud-test"),
    ("results", "/srv/gpud-results"),
    ("listen", "[::1]:7711"),
    ("http", "127.0.0.2:7781"),
    ("http-open", "yes"),
    ("socket", "/run/gpud-test.sock"),
    ("heartbeat", "2.5"),
    ("lease-timeout", "30"),
    ("lease-seconds", "120"),
    ("lease-min-seconds", "2"),
    ("lease-units", "1048576"),
    ("checkpoint-interval", "45"),
    ("drain-seconds", "0"),
    ("max-failures", "5"),
    ("quarantine-after", "7"),
    ("max-leases-per-worker", "0"),
    ("max-leases-per-credential", "64"),
    ("progress-timeout", "0"),
    ("trust-after", "2"),
    ("login-timeout", "3.5"),
    ("idle-timeout", "90"),
    ("max-connections", "100"),
    ("max-connections-per-address", "10"),
    ("max-connections-per-credential", "12"),
    ("max-prelogin", "300"),
    ("max-prelogin-per-address", "5"),
    ("frame-memory", "64"),
    ("end-hook", "/bin/true"),
    ("end-hook-timeout", "5"),
    ("end-hook-max", "2"),
    ("log-level", "debug"),
]
WORKER_VALUES = [
    ("connect", "gpud.example.org:7701"),
    ("token-file", "/etc/gpud/worker.token"),
    ("device", "cpu:3"),
    ("instance", "node7/gpu3"),
    ("checkpoint-interval", "0.5"),
    ("log-level", "warn"),
    ("max-leases", "12"),
    ("exit-when-idle", "yes"),
    ("no-run-ahead", "yes"),
]


def checked(prog, *args):
    r = subprocess.run([prog] + list(args) + ["--check-config"], capture_output=True,
                       text=True, timeout=30)
    return r.returncode, r.stdout, r.stderr


def settings(prog, *args):
    """--check-config's `key = value` lines as a list of pairs."""
    rc, out, err = checked(prog, *args)
    check(rc == 0, "%s --check-config %s: %d %s" % (os.path.basename(prog), " ".join(args), rc, err))
    pairs = []
    check(out.startswith("# %s settings: the defaults, " % os.path.basename(prog)),
          "where the settings come from: " + out[:200])
    for line in out.splitlines()[1:]:
        m = re.match(r"^([a-z-]+) = (.*)$", line)
        check(m is not None, "not a key = value line: %r" % line)
        pairs.append((m.group(1), m.group(2)))
    return pairs


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def example(name):
    """The example file's keys (commented out or not), values, and the
    keys whose comment block says [reload]."""
    values, reload, block = {}, set(), ""
    for line in open(os.path.join(ETC, name)):
        m = re.match(r"^#? ?([a-z-]+) = (.*)$", line.rstrip("\n"))
        if m:
            check(m.group(1) not in values, "%s documents %s twice" % (name, m.group(1)))
            values[m.group(1)] = m.group(2)
            if "[reload]" in block:
                reload.add(m.group(1))
            block = ""
        elif line.strip() in ("", "#"):
            block = ""
        else:
            block += line
    return values, reload


def help_reload(prog):
    """The options --help marks [reload]."""
    out = subprocess.run([prog, "--help"], capture_output=True, text=True, timeout=30).stdout
    marked, cur = set(), None
    for line in out.splitlines():
        m = re.match(r"^  --([a-z-]+)", line)
        if m:
            cur = m.group(1)
        elif not line.startswith(" "):
            cur = None  # the legend after the options
        if cur and "[reload]" in line:
            marked.add(cur)
    return marked


def test_examples(cl, prog, name, base, own):
    """Every key documented once, with its real default (but the keys in
    own, which the example sets for the service), [reload] as the program
    says; the file, every key uncommented, reads back the same."""
    values, reload = example(name)
    defaults = dict(settings(prog, "--config", "/dev/null", *base))
    check(set(values) == set(defaults),
          "%s documents %s, the program has %s" % (name, sorted(values), sorted(defaults)))
    for k, v in values.items():
        check(k in own or defaults[k] == v, "%s: %s = %s documented, %s by default" % (name, k, v, defaults[k]))
    uncommented = write(os.path.join(cl.dir, "all-" + name),
                        "".join("%s = %s\n" % kv for kv in values.items()))
    check(dict(settings(prog, "--config", uncommented)) == values, "%s uncommented" % name)
    check(reload == help_reload(prog), "%s marks %s [reload], --help %s"
          % (name, sorted(reload), sorted(help_reload(prog))))


def test_round_trip(cl, prog, values):
    path = write(os.path.join(cl.dir, os.path.basename(prog) + ".conf"),
                 "# every key\n\n" + "".join("%s = %s\n" % kv for kv in values))
    got = settings(prog, "--config", path)
    keys = [k for k, _ in got]
    check(set(keys) == set(k for k, _ in values),
          "keys without a test value: %s" % sorted(set(keys) - set(k for k, _ in values)))
    check(got == values, "round trip:\n%s\nwant\n%s" % (got, values))
    # --check-config's output is a configuration file that reads the same.
    out = subprocess.run([prog, "--config", path, "--check-config"], capture_output=True,
                         text=True, timeout=30).stdout
    again = write(path + ".again", out)
    check(settings(prog, "--config", again) == values, "--check-config's output read again")
    return path


def test_config(cl: Cluster):
    # The files as installed, and the units' command lines with them.
    test_examples(cl, GPUD, "gpud.conf", ["--data", "/x"], ("data", "socket", "results"))
    test_examples(cl, WORKER, "gpuworker.conf",
                  ["--connect", "h:1", "--token-file", "/t", "--device", "cuda:0"],
                  # checkpoint-interval: gpud's by default, which no
                  # value in the file says.
                  ("connect", "token-file", "device", "instance", "checkpoint-interval"))
    unit = dict(settings(WORKER, "--config", os.path.join(ETC, "gpuworker.conf"), "--device", "cuda0"))
    check(unit["device"] == "cuda:0" and unit["connect"] == "127.0.0.1:7700"
          and unit["token-file"] == "/var/lib/gpud/local-worker.token", "gpuworker@cuda0: %s" % unit)
    unit = dict(settings(GPUD, "--config", os.path.join(ETC, "gpud.conf")))
    check(unit["data"] == "/var/lib/gpud" and unit["results"] == "/var/lib/gpud-results",
          "gpud.service's data and results directories: %s" % unit)
    # Without the key, the plots go to DATA/results.
    check(dict(settings(GPUD, "--config", "/dev/null", "--data", "/x"))["results"] == "/x/results",
          "results' default")

    # Every key round-trips.
    gconf = test_round_trip(cl, GPUD, GPUD_VALUES)
    wconf = test_round_trip(cl, WORKER, WORKER_VALUES)

    # Flags win over the file, key by key.
    got = dict(settings(GPUD, "--config", gconf, "--heartbeat", "4", "--log-level", "error"))
    check(got["heartbeat"] == "4" and got["log-level"] == "error", "flags over the file: %s" % got)
    check(got["lease-seconds"] == "120" and got["data"] == "/srv/gpud-test", "the file's others: %s" % got)
    got = dict(settings(WORKER, "--config", wconf, "--device", "cuda1", "--max-leases", "3"))
    check(got["device"] == "cuda:1" and got["max-leases"] == "3" and got["exit-when-idle"] == "yes",
          "worker flags over the file: %s" % got)

    # Bad files: refused with FILE:LINE, nothing printed.
    long_line = "# " + "x" * 1100 + "\n"
    bad = [
        (GPUD, "data = /d\n# comment\nlease-time = 5\n", ":3: unknown key 'lease-time'"),
        (GPUD, "data = /d\nheartbeat = fast\n", ":2: heartbeat wants SECONDS in 0.05..3600, got 'fast'"),
        (GPUD, "data = /d\nmax-failures = 0\n", ":2: max-failures wants an integer in 1..1000, got '0'"),
        (GPUD, "data = /d\nlisten = 7700\n", ":2: listen wants HOST:PORT"),
        (GPUD, "data = /d\nhttp = 7780\n", ":2: http wants HOST:PORT ([ADDR]:PORT for IPv6, port 0..65535) or off"),
        (GPUD, "data = /d\n\n\n" + long_line, ":4: line longer than 1024 bytes"),
        (GPUD, "init = yes\n", ":1: unknown key 'init' (a command-line option only)"),
        (GPUD, "data = /d\ndata = /e\n", ":2: data set again (first on line 1)"),
        (GPUD, "data = /d\nlog-level\n", ":2: expected 'key = value'"),
        (WORKER, "connect = h:1\ndevice = gpu0\n", ":2: device wants cpu, cpu:THREADS (1..4096) or cuda:N"),
        (WORKER, "exit-when-idle = sometimes\n", ":1: exit-when-idle wants yes or no"),
        (WORKER, "connect = h:0\n", ":1: connect wants HOST:PORT"),
    ]
    for i, (prog, text, msg) in enumerate(bad):
        path = write(os.path.join(cl.dir, "bad%d.conf" % i), text)
        rc, out, err = checked(prog, "--config", path)
        check(rc == 2 and out == "" and path + msg in err,
              "%s with %r: rc %d, stderr %r (want %r)" % (os.path.basename(prog), text[:60], rc, err, path + msg))
    # Keys that do not hold together: refused, naming both.
    path = write(os.path.join(cl.dir, "pair.conf"), "data = /d\nheartbeat = 5\nlease-timeout = 3\n")
    rc, out, err = checked(GPUD, "--config", path)
    check(rc == 2 and "lease-timeout (3) must be longer than heartbeat (5)" in err, "pair: %d %s" % (rc, err))
    # A --config file that is missing is an error; no data directory either.
    missing = os.path.join(cl.dir, "missing.conf")
    rc, out, err = checked(GPUD, "--config", missing, "--data", "/d")
    check(rc == 2 and missing + ": No such file" in err, "missing --config: %d %s" % (rc, err))
    rc, out, err = checked(GPUD, "--config", "/dev/null")
    check(rc == 2 and "--data DIR (or data = DIR in the file) is required" in err, "no data: %s" % err)
    rc, out, err = checked(WORKER, "--config", "/dev/null", "--connect", "h:1")
    check(rc == 2 and "--token-file FILE is required" in err, "worker without token: %s" % err)
    # A bad flag still says which.
    rc, out, err = checked(GPUD, "--data", "/d", "--lease-units", "-1")
    check(rc == 2 and "--lease-units wants an integer" in err, "bad flag: %s" % err)
    check(not os.path.exists("/srv/gpud-test") and not os.path.exists("/d"),
          "--check-config must not create the data directory")


if __name__ == "__main__":
    run(test_config)
