#!/usr/bin/env python3
"""check_scripts.py - the scripts around the build do what they say
(issue 35), run on copies with stand-in commands, so nothing is installed,
built or tested for real:

- tools/deps.sh installs what building and running need, and with --test
  also what the tests need; the demo asks for the first, tools/test.sh and
  .ci/run for the second, and .ci/run runs the README's test command;
- tools/test.sh runs every stage when one fails, lists each failure at the
  end and exits 1; exits 0 with "all tests passed" when none fails; scales
  time limits (meson's --timeout-multiplier), more in the sanitizer builds;
- the README's "How it works" points to doc/DESIGN.md, and every Markdown
  file the README names is in the repository.

Usage: check_scripts.py  (exit 0 passed, 1 failed)
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TEST_ONLY = {"libcmocka-dev", "clang", "slurmctld", "slurmd", "munge", "prometheus",
             "chromium", "python3-cryptography", "openssl", "groff-base", "sqlite3"}
BUILD_NEEDS = {"meson", "ninja-build", "gcc", "pkg-config", "libuv1-dev", "libsqlite3-dev",
               "zlib1g-dev", "libjansson-dev", "libsodium-dev", "libmicrohttpd-dev", "libgnutls28-dev"}
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def stub(bindir, name, body):
    path = os.path.join(bindir, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)


def copy_tree(tmp, name):
    """A repository of the scripts alone, tmp/name; returns its root."""
    repo = os.path.join(tmp, name)
    os.makedirs(os.path.join(repo, "tools"))
    os.makedirs(os.path.join(repo, ".ci"))
    for rel in ("tools/deps.sh", "tools/test.sh", "tools/demo.sh", ".ci/run"):
        shutil.copy(os.path.join(ROOT, rel), os.path.join(repo, rel))
    return repo


def script(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def code_lines(text):
    return [l.strip() for l in text.splitlines() if l.strip() and not l.strip().startswith("#")]


def deps(tmp):
    repo = copy_tree(tmp, "deps")
    env = dict(os.environ)

    def listed(*args):
        r = subprocess.run(["sh", "tools/deps.sh", "--list"] + list(args), cwd=repo, env=env,
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 0, "deps.sh --list %s: %d %s" % (args, r.returncode, r.stderr))
        return set(r.stdout.split())

    build, test = listed(), listed("--test")
    check(BUILD_NEEDS <= build, "deps.sh lacks what the build needs: %s" % (BUILD_NEEDS - build))
    check(not (build & TEST_ONLY), "deps.sh without --test installs the tests' %s" % (build & TEST_ONLY))
    check(build < test and TEST_ONLY <= test, "deps.sh --test lacks %s" % (TEST_ONLY - test))
    r = subprocess.run(["sh", "tools/deps.sh", "--bogus"], cwd=repo, capture_output=True, text=True)
    check(r.returncode == 2 and "usage" in r.stderr, "deps.sh --bogus: %d %r" % (r.returncode, r.stderr))

    # Nothing installed: apt-get is asked for exactly the set.
    bindir = os.path.join(tmp, "bin-deps")
    os.makedirs(bindir)
    log = os.path.join(tmp, "apt.log")
    stub(bindir, "dpkg-query", "exit 1")
    stub(bindir, "apt-get", 'echo "$@" >> %s' % log)
    stub(bindir, "sudo", '"$@"')
    env["PATH"] = bindir + os.pathsep + os.environ["PATH"]
    for args, want in (([], build), (["--test"], test)):
        if os.path.exists(log):
            os.unlink(log)
        r = subprocess.run(["sh", "tools/deps.sh"] + args, cwd=repo, env=env, capture_output=True,
                           text=True, timeout=30)
        asked = open(log).read().split() if os.path.exists(log) else []
        check(r.returncode == 0 and set(a for a in asked if not a.startswith("-")) - {"install"} == want,
              "deps.sh %s asked apt-get for %s" % (args, asked))

    # Who asks for what.
    demo = [l for l in code_lines(script("tools/demo.sh")) if "deps.sh" in l]
    check(demo == ["sh tools/deps.sh"], "demo.sh installs %s" % demo)
    for rel in ("tools/test.sh", ".ci/run"):
        calls = [l for l in code_lines(script(rel)) if "deps.sh" in l]
        check(calls and all("--test" in l for l in calls), "%s asks deps.sh for %s" % (rel, calls))
    ci = code_lines(script(".ci/run"))
    check(ci[-1] == "exec sh tools/test.sh" and "tools/test.sh" in script("README.md"),
          ".ci/run ends with the README's test command: %s" % ci[-1:])


def test_sh(tmp):
    repo = copy_tree(tmp, "test")
    bindir = os.path.join(tmp, "bin-test")
    os.makedirs(bindir)
    log = os.path.join(tmp, "calls.log")
    # meson fails the normal build's unit tests when FAIL_UNIT is set, and
    # the ASan build's setup when FAIL_ASAN_SETUP is set; ninja never.
    stub(bindir, "meson", 'echo "meson $*" >> %s\n'
         'case "$*" in\n'
         '*"-C build "*"--suite unit"*) [ -n "${FAIL_UNIT:-}" ] && exit 3 ;;\n'
         '"setup build-asan"*) [ -n "${FAIL_ASAN_SETUP:-}" ] && exit 4 ;;\n'
         'esac\nexit 0' % log)
    stub(bindir, "ninja", 'echo "ninja $*" >> %s' % log)
    stub(bindir, "dpkg-query", "echo 'install ok installed'")
    stub(bindir, "apt-get", "exit 99")
    stub(bindir, "nproc", "echo 2")
    base = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
    base.pop("TEST_TIMEOUT_SCALE", None)
    base.pop("SANITIZER_TIMEOUT_SCALE", None)

    def go(**env):
        if os.path.exists(log):
            os.unlink(log)
        r = subprocess.run(["sh", "tools/test.sh"], cwd=repo, env=dict(base, **env),
                           capture_output=True, text=True, timeout=60)
        return r, open(log).read().splitlines() if os.path.exists(log) else []

    r, calls = go()
    check(r.returncode == 0 and r.stdout.rstrip().endswith("all tests passed"),
          "test.sh with nothing failing: %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    tests = [c for c in calls if c.startswith("meson test")]
    check(len(tests) == 6, "test.sh runs 6 test stages: %s" % tests)
    for c in tests:
        sanitized = any(d in c for d in ("build-asan", "build-tsan", "build-fuzz"))
        want = "--timeout-multiplier %d" % (4 if sanitized else 1)
        check(want in c, "%s: wants %s" % (c, want))
    r, calls = go(TEST_TIMEOUT_SCALE="3", SANITIZER_TIMEOUT_SCALE="5")
    check(any("build-asan" in c and "--timeout-multiplier 15" in c for c in calls) and
          any("-C build " in c and "--timeout-multiplier 3" in c for c in calls),
          "the scales multiply: %s" % calls)

    # Two stages fail: every later stage still runs, both are listed.
    r, calls = go(FAIL_UNIT="1", FAIL_ASAN_SETUP="1")
    out = r.stdout
    check(r.returncode == 1, "test.sh with failures exits %d" % r.returncode)
    check(sum(c.startswith("meson test") for c in calls) == 6 and
          any("build-fuzz" in c and "--suite fuzz" in c for c in calls),
          "every stage ran after a failure: %s" % calls)
    summary = out[out.rfind("these stages failed"):] if "these stages failed" in out else ""
    check("build: unit and gpu tests (exit 3)" in summary and "asan: setup (exit 4)" in summary and
          "all tests passed" not in out, "the failures, listed at the end:\n" + out)


def readme_links():
    """The README's "How it works" points to the design in the repository,
    and every Markdown file it names is one of the repository's."""
    import re
    text = script("README.md")
    section = text[text.find("## How it works"):]
    section = section[:section.find("\n## ", 4)]
    check("`doc/DESIGN.md`" in section, "How it works does not name doc/DESIGN.md")
    for name in sorted(set(re.findall(r"`([^`\s]+\.md)`", text))):
        path = os.path.normpath(os.path.join(ROOT, name))
        check(path.startswith(os.path.normpath(ROOT) + os.sep) and os.path.isfile(path),
              "README.md names %s, which is not a file of the repository" % name)


def main():
    tmp = tempfile.mkdtemp(prefix="check-scripts-")
    try:
        deps(tmp)
        test_sh(tmp)
        readme_links()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    print("check_scripts: %s" % ("ok" if not failures else "%d failed" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
