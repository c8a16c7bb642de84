"""The systemd units as meson fills them in: `systemd-analyze verify` finds
no problem in gpud.service and an instance of gpuworker@.service, and
`systemd-analyze security --offline=yes` rates their exposure at most 3.0
(gpud) and 5.0 (a worker). (gpud's notify messages are tested in
test_ops.py.) Skipped (77) where systemd-analyze is missing."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "..", "systemd")
BUILD = os.environ.get("GPUD_BUILD", os.path.join(HERE, "..", "..", "build"))


# The bounds: systemd-analyze's overall exposure, 0 (safe) to 10.
MAX_EXPOSURE = {"gpud.service": 3.0, "gpuworker@cuda0.service": 5.0}


def check_security(sa, d):
    for unit, bound in MAX_EXPOSURE.items():
        path = os.path.join(d, unit)
        r = subprocess.run([sa, "security", "--offline=yes", "--no-pager", path],
                           capture_output=True, text=True, timeout=60)
        m = re.search(r"Overall exposure level for %s: ([0-9.]+)" % re.escape(unit), r.stdout)
        if not m:
            print("FAIL: systemd-analyze security %s gave no score (%d):\n%s%s"
                  % (unit, r.returncode, r.stdout[-2000:], r.stderr))
            sys.exit(1)
        score = float(m.group(1))
        print("%s: exposure %.1f (at most %.1f)" % (unit, score, bound))
        if score > bound:
            print("FAIL: %s exposure %.1f over %.1f:\n%s" % (unit, score, bound, r.stdout))
            sys.exit(1)


def check_sysusers(d):
    """The sysusers.d entry makes a system user gpud with no login shell."""
    su = shutil.which("systemd-sysusers")
    if not su:
        print("no systemd-sysusers: sysusers.d entry not checked")
        return
    root = os.path.join(d, "root")
    os.makedirs(os.path.join(root, "etc"))
    r = subprocess.run([su, "--root=" + root, os.path.join(SRC, "gpud.sysusers")],
                       capture_output=True, text=True, timeout=60)
    passwd = open(os.path.join(root, "etc", "passwd")).read() if r.returncode == 0 else ""
    m = re.search(r"^gpud:x:(\d+):\d+:[^:]*:/var/lib/gpud:(\S+)$", passwd, re.M)
    if not m or int(m.group(1)) >= 1000 or "nologin" not in m.group(2):
        print("FAIL: systemd-sysusers gave no gpud system user (%d): %s%s%s"
              % (r.returncode, r.stdout, r.stderr, passwd))
        sys.exit(1)


def main():
    sa = shutil.which("systemd-analyze")
    if not sa:
        print("SKIP: no systemd-analyze")
        sys.exit(77)
    d = tempfile.mkdtemp(prefix="gpud-units-")
    try:
        bindir = os.path.join(d, "bin")
        os.makedirs(bindir)
        for name, path in [("gpud", "daemon/gpud"), ("gpuworker", "worker/gpuworker")]:
            os.symlink(os.path.abspath(os.path.join(BUILD, path)), os.path.join(bindir, name))
        units = []
        for tmpl, out in [("gpud.service.in", "gpud.service"), ("gpuworker@.service.in", "gpuworker@.service")]:
            text = open(os.path.join(SRC, tmpl)).read()
            text = text.replace("@BINDIR@", bindir).replace("@DOCDIR@", d).replace("@CONFDIR@", d)
            with open(os.path.join(d, out), "w") as f:
                f.write(text)
        os.symlink(os.path.join(d, "gpuworker@.service"), os.path.join(d, "gpuworker@cuda0.service"))
        units = [os.path.join(d, "gpud.service"), os.path.join(d, "gpuworker@cuda0.service")]
        r = subprocess.run([sa, "verify", "--man=no"] + units, capture_output=True, text=True, timeout=60)
        out = (r.stdout + r.stderr).strip()
        # Lines about this machine's own units are not ours.
        ours = [l for l in out.splitlines() if "gpud" in l or "gpuworker" in l]
        if r.returncode != 0 or ours:
            print("FAIL: systemd-analyze verify:\n" + out)
            sys.exit(1)
        check_security(sa, d)
        check_sysusers(d)
        print("PASS test_units")  # verify, security, sysusers
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
