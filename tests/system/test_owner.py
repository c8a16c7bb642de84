"""Jobs' owners, history's filters and a job's events (issue 35): a job
submitted over the Unix socket is its local Unix user's, one submitted by a
remote gpuctl its credential's (USER in status and history, "owner" in
--json, on the page); history's --since/--until/--state/--workload/--user
each narrow in gpud's query and hold together; bad values are refused with
exit 2 and a message; `gpuctl events JOB` lists submit, grant, result,
verified and job_done in order with absolute times, a viewer may read it
(and still not submit); a page link records who made it."""
import json
import math
import os
import pwd
import re
import subprocess
import time

from harness import GPUCTL, Cluster, check, run, wait_for


def remote(cl, cred, *args):
    return subprocess.run([GPUCTL, "--connect", "127.0.0.1:%d" % cl.port, "--credential", cred] + list(args),
                          capture_output=True, text=True, timeout=60)


def ids(r):
    check(r.returncode == 0, "history failed: %s" % r.stderr)
    return [j["id"] for j in json.loads(r.stdout)]


def test_owner(cl: Cluster):
    cl.start_gpud()
    me = pwd.getpwuid(os.getuid()).pw_name
    admin, _, _ = cl.add_token("ops-admin", role="admin")
    viewer, _, _ = cl.add_token("ops-viewer", role="viewer")
    cl.start_worker("cpu:1")

    # Before T: two local jobs of two workloads, done.
    a = cl.submit("graveler", battles=1 << 20, seed=3, name="local-g")
    c = cl.submit("sudoku", box="2x2")
    cl.wait_job(a)
    cl.wait_job(c)
    time.sleep(math.ceil(time.time()) - time.time() + 1.0)
    t_mid = int(time.time())
    time.sleep(1.1)

    # After T: a remote admin's job, done, and one cancelled.
    r = remote(cl, admin, "submit", "graveler", "--battles", str(1 << 20), "--seed", "4")
    check(r.returncode == 0, "admin submit: %s" % r.stderr)
    b = int(r.stdout.strip())
    r = remote(cl, admin, "submit", "graveler", "--battles", str(1 << 40), "--priority", "-5")
    check(r.returncode == 0, "admin submit: %s" % r.stderr)
    d = int(r.stdout.strip())
    cl.wait_job(b)
    check(remote(cl, admin, "cancel", str(d)).returncode == 0, "admin cancel")

    # Owners, over the socket and from afar; status's USER column.
    owners = {j["id"]: j["owner"] for j in json.loads(cl.ctl("status", "--json").stdout)}
    check(owners == {a: me, c: me, b: "ops-admin", d: "ops-admin"}, "owners: %s" % owners)
    out = cl.ctl("status").stdout.split("\n")
    check(out[0].split()[:4] == ["ID", "NAME", "USER", "WORKLOAD"], "status head: " + out[0])
    check(re.search(r"^ *%d +local-g +%s +graveler +done" % (a, re.escape(me)), "\n".join(out), re.M) and
          re.search(r"^ *%d +- +ops-admin +graveler +cancelled" % d, "\n".join(out), re.M),
          "status rows:\n" + "\n".join(out))
    check("user ops-admin" in cl.ctl("status", str(b)).stdout, "status JOB: user")
    r = remote(cl, viewer, "status", "--user", "ops-admin", "--json")
    check(r.returncode == 0 and sorted(j["id"] for j in json.loads(r.stdout)) == [b, d],
          "status --user: %s %s" % (r.stdout, r.stderr))
    r = cl.ctl("status", "--user", "nobody-here", "--format", "id", "--no-header")
    check(r.stdout == "", "status --user nobody: %r" % r.stdout)
    check(cl.db_rows("SELECT owner FROM jobs WHERE id = ?", b) == [("ops-admin",)], "the owner is stored")

    # history: every filter narrows, alone and together, newest first.
    h = lambda *args: ids(cl.ctl("history", "--json", *args, check_rc=False))
    check(h() == [d, b, c, a], "history: %s" % h())
    check(h("--user", "ops-admin") == [d, b], "--user ops-admin")
    check(h("--user", me) == [c, a], "--user me")
    check(h("--state", "cancelled") == [d], "--state cancelled")
    check(h("--state", "done", "--user", "ops-admin") == [b], "--state done --user")
    check(h("--workload", "sudoku") == [c], "--workload sudoku")
    check(h("--workload", "graveler", "--user", me) == [a], "--workload --user")
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t_mid))
    check(h("--since", since) == [d, b], "--since %s: %s" % (since, h("--since", since)))
    check(h("--until", since) == [c, a], "--until %s" % since)
    utc = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t_mid))
    check(h("--since", utc, "--state", "done") == [b], "--since UTC --state")
    check(h("--since", "1h") == [d, b, c, a] and h("--until", "1h ago") == [], "relative times")
    check(h("--since", time.strftime("%Y-%m-%d")) == [d, b, c, a] or time.localtime().tm_hour == 0,
          "--since today")
    check(h("--limit", "1") == [d], "--limit 1")
    r = remote(cl, viewer, "history", "--user", "ops-admin", "--since", since)
    check(r.returncode == 0 and r.stdout.split("\n")[0].split()[:4] == ["ID", "NAME", "USER", "WORKLOAD"]
          and len(r.stdout.strip().split("\n")) == 3, "viewer history table:\n" + r.stdout + r.stderr)
    check("no finished jobs match" in cl.ctl("history", "--user", "nobody-here").stdout, "none match")

    # Bad values: refused before gpud is asked, exit 2, with a message.
    for args, says in ((["--state", "running"], "done, failed or cancelled"),
                       (["--since", "yesterday"], "wants a date"),
                       (["--since", "2026-02-30"], "no such time"),
                       (["--until", "2100-01-01"], "no such time"),
                       (["--since", "1h", "--until", "2h"], "--since must be before --until"),
                       (["--limit", "0"], "--limit"),
                       (["--user", ""], "a user is 1 to 64 bytes"),
                       (["--user", "x" * 65], "a user is 1 to 64 bytes")):
        r = cl.ctl("history", *args, check_rc=False)
        check(r.returncode == 2 and says in r.stderr, "history %s: %d %s" % (args, r.returncode, r.stderr))

    # events: in order, absolute times, kinds; a viewer may read them.
    r = cl.ctl("events", str(a))
    lines = r.stdout.rstrip("\n").split("\n")
    check(lines[0].split() == ["TIME", "KIND", "LEASE", "WORKER", "DETAIL"], "events head: " + lines[0])
    kinds = [l.split()[2] for l in lines[1:]]
    for k in ("submit", "grant", "result", "verified", "job_done"):
        check(k in kinds, "events of job %d lack %s: %s" % (a, k, kinds))
    order = [kinds.index(k) for k in ("submit", "grant", "result", "verified", "job_done")]
    check(order == sorted(order) and kinds[0] == "submit" and kinds[-1] == "job_done",
          "events out of order: %s" % kinds)
    today = time.strftime("%Y-%m-%d")
    check(all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ", l) for l in lines[1:]) and today in lines[1] or
          time.localtime().tm_hour == 0, "absolute times:\n" + r.stdout)
    check(re.search(r" grant +\d+/1 +local@", r.stdout), "a grant names lease/epoch and worker:\n" + r.stdout)
    r = remote(cl, viewer, "events", str(a), "--json")
    ev = json.loads(r.stdout) if r.returncode == 0 else []
    check([e["kind"] for e in ev] == kinds and all(x["ts"] <= y["ts"] for x, y in zip(ev, ev[1:])),
          "viewer events --json: %s %s" % (r.stdout[:300], r.stderr))
    r = remote(cl, viewer, "events", str(d))
    check(r.returncode == 0 and re.search(r" cancel ", r.stdout), "the cancel event: " + r.stdout)
    r = cl.ctl("events", str(a), "--limit", "2", "--no-header")
    check([l.split()[2] for l in r.stdout.strip().split("\n")] == kinds[-2:], "--limit 2: " + r.stdout)
    r = cl.ctl("events", str(a), "--follow", timeout=20)
    check(r.returncode == 0 and "job_done" in r.stdout, "--follow of a finished job ends")
    r = cl.ctl("events", str(a), "--since", "1h ago", "--no-header")
    check(len(r.stdout.strip().split("\n")) == len(kinds), "--since 1h ago")
    check(cl.ctl("events", str(a), "--since", "now", "--no-header").stdout == "", "--since now")
    r = cl.ctl("events", "999", check_rc=False)
    check(r.returncode == 4 and "no job 999" in r.stderr, "events of no job: %d %s" % (r.returncode, r.stderr))
    for args in (["--limit", "0"], ["--limit", "100001"], ["--since", "soon"], ["--json", "--follow"], []):
        r = cl.ctl("events", *([str(a)] if args else []), *args, check_rc=False)
        check(r.returncode == 2 and r.stderr, "events %s: %d %s" % (args, r.returncode, r.stderr))
    r = remote(cl, viewer, "submit", "graveler", "--battles", "1000")
    check(r.returncode == 1 and "needs an admin credential" in r.stderr, "a viewer submits: " + r.stderr)

    # A page link made from afar records its maker's name, not its role.
    if cl.http:
        r = remote(cl, admin, "page-link", "--json")
        check(r.returncode == 0, "page-link: " + r.stderr)
        check(("admin", "ops-admin") in cl.db_rows("SELECT owner, made_by FROM page_keys"),
              "page key's maker: %s" % cl.db_rows("SELECT owner, made_by FROM page_keys"))
        # The page's jobs table shows who.
        from harness import page_link, http_get_key
        _, key = page_link(cl)
        status, _, body = http_get_key(cl, "/", key)
        check(status == 200 and b'<td class="user">ops-admin</td>' in body, "the page's USER column")


if __name__ == "__main__":
    run(test_owner)
