"""The systemd units as meson fills them in: `systemd-analyze verify` finds
no problem in gpud.service and an instance of gpuworker@.service. (gpud's
notify messages are tested in test_ops.py.) Skipped (77) where systemd-analyze
is missing."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "..", "systemd")
BUILD = os.environ.get("GPUD_BUILD", os.path.join(HERE, "..", "..", "build"))


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
            text = text.replace("@BINDIR@", bindir).replace("@DOCDIR@", d)
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
        print("PASS test_units")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
