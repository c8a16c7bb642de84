#!/usr/bin/env python3
"""check_man.py GROFF GPUD GPUWORKER GPUCTL PAGE... - the man pages render
without a groff warning, and say what the programs do: every option gpud
and gpuworker list in --help, every gpuctl command of `gpuctl help`, and
every exit code gpuctl documents."""
import os
import re
import subprocess
import sys


def fail(msg):
    print("check_man: " + msg)
    sys.exit(1)


def options(exe):
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30)
    return set(re.findall(r"^ {2}(--[a-z][a-z-]*)", out.stdout + out.stderr, re.M))


def main():
    groff, gpud, worker, gpuctl = sys.argv[1:5]
    pages = {os.path.basename(p): p for p in sys.argv[5:]}
    text = {}
    for name, path in pages.items():
        r = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", path], capture_output=True,
                           text=True, timeout=60)
        if r.returncode != 0 or r.stderr.strip():
            fail("%s: groff says %s" % (name, r.stderr.strip() or r.returncode))
        # The source with roff's escaped dashes as plain ones.
        text[name] = open(path).read().replace("\\-", "-")
    for exe, page in ((gpud, "gpud.8"), (worker, "gpuworker.8")):
        opts = options(exe)
        if len(opts) < 5:
            fail("%s --help lists too few options: %s" % (exe, opts))
        for o in sorted(opts):
            if not re.search(r"\.(?:BI|B|BR) %s\b" % re.escape(o), text[page]):
                fail("%s does not document %s" % (page, o))
    help_text = subprocess.run([gpuctl, "help"], capture_output=True, text=True, timeout=30).stdout
    commands = re.findall(r"^ {2}([a-z]+) ", help_text.split("options")[0], re.M)
    if len(commands) < 15:
        fail("gpuctl help lists too few commands: %s" % commands)
    sections = " ".join(re.findall(r"^\.SS (\S+)", text["gpuctl.1"], re.M))
    for c in commands:
        if c != "help" and not re.search(r"(^|[ |])%s\b" % c, sections):
            fail("gpuctl.1 has no section for '%s'" % c)
    codes = text["gpuctl.1"].split(".SH EXIT STATUS")[1].split(".SH")[0]
    for code in range(7):
        if ".B %d\n" % code not in codes or " %d " % code not in help_text.replace(",", " "):
            fail("exit code %d is not documented in both gpuctl.1 and gpuctl help" % code)
    print("check_man: %d pages, %d gpuctl commands, %d gpud and %d gpuworker options"
          % (len(pages), len(commands), len(options(gpud)), len(options(worker))))


if __name__ == "__main__":
    main()
