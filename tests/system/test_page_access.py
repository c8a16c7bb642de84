"""Who may see the status page (issue 34, item 9): /api/status answered
any local user, although the control socket refuses them. Now the page,
/api/status, the plots and /metrics answer 401 (with how to get a link)
without a page link; `gpuctl page-link` (an admin's on the socket, a
viewer's over remote gpuctl) gives an address whose /login sets an
HttpOnly, SameSite=Strict cookie; the key also works as a Bearer token; a
wrong, made-up or revoked key is refused; a worker's credential gets no
link; a viewer's --revoke ends the viewers' links only, an admin's every
link. gpud's files hold no key (only hashes): a copy of the data directory
lets nobody in. --http-open serves everything without a key."""
import glob
import json
import os
import re
import subprocess

from harness import GPUCTL, Cluster, check, http_get_key, page_link, run

PATHS = ["/", "/api/status", "/metrics", "/results/job-1/plot.svg"]


def remote(cl, cred, *args):
    return subprocess.run([GPUCTL, "--connect", "127.0.0.1:%d" % cl.port, "--credential", cred] + list(args),
                          capture_output=True, text=True, timeout=60)


def refused(cl, key, why, ended):
    for path in PATHS:
        code, headers, body = http_get_key(cl, path, key)
        check(code == 401, "%s %s: %d" % (why, path, code))
        text = body.decode()
        check(("expired or was revoked" in text) if ended else ("gpuctl page-link" in text),
              "%s %s: the 401 says how to get a link: %r" % (why, path, text))
        check(headers.get("WWW-Authenticate") == 'Bearer realm="gpud"', "%s: %s" % (why, headers))
        check(b"jobs" not in body and b"gpud_" not in body, "%s %s: nothing shown" % (why, path))


def test_page_access(cl: Cluster):
    cl.start_gpud()
    job = cl.submit("graveler", battles=1 << 20, seed=1)
    res = os.path.join(cl.data, "results", "job-%d" % job)
    os.makedirs(res, exist_ok=True)
    with open(os.path.join(res, "plot.svg"), "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>')

    # No key, a malformed one, one gpud never made: 401, nothing shown.
    refused(cl, None, "no key", False)
    refused(cl, "0" * 64, "a made-up key", True)
    code, _, _ = http_get_key(cl, "/metrics", "not-a-key")
    check(code == 401, "a malformed key: %d" % code)
    code, _, _ = http_get_key(cl, "/api/status", None, headers={"Cookie": "gpud_page=" + "a" * 64})
    check(code == 401, "a made-up cookie: %d" % code)

    # The admin's link: a Bearer key, and /login's cookie.
    url, key = page_link(cl, "--valid", "2h")
    check(re.match(r"^http://%s/login\?key=[0-9a-f]{64}$" % re.escape(cl.http), url), "the link: %s" % url)
    for path in PATHS:
        code, _, body = http_get_key(cl, path, key)
        check(code == 200, "%s with the key: %d %r" % (path, code, body[:200]))
    check(json.loads(http_get_key(cl, "/api/status", key)[2])["jobs"][0]["id"] == job, "the job shown")
    code, headers, body = http_get_key(cl, url.split(cl.http, 1)[1], None)
    cookie = headers.get("Set-Cookie", "")
    check(code == 200 and cookie.startswith("gpud_page=%s;" % key), "/login: %d %s" % (code, headers))
    for attr in ("HttpOnly", "SameSite=Strict", "Path=/"):
        check(attr in cookie, "the cookie is %s: %s" % (attr, cookie))
    check("Secure" not in cookie, "no Secure over plain HTTP on loopback: %s" % cookie)
    age = int(re.search(r"Max-Age=(\d+)", cookie).group(1))
    check(7000 < age <= 7200, "the cookie ends with the key: %d s" % age)
    check(b'http-equiv="refresh" content="0;url=/"' in body and headers.get("Referrer-Policy") == "no-referrer",
          "/login moves on to the page: %r %s" % (body, headers))
    code, _, body = http_get_key(cl, "/api/status", None, headers={"Cookie": "gpud_page=" + key})
    check(code == 200 and json.loads(body)["jobs"], "/api/status with the cookie: %d" % code)
    code, _, _ = http_get_key(cl, "/login?key=" + "0" * 64, None)
    check(code == 401, "/login with a key gpud does not hold: %d" % code)
    check(cl.ctl("page-link", "--valid", "30s", check_rc=False).returncode == 2, "--valid below a minute")

    # Nothing in gpud's files lets a copy in: the key is nowhere, its hash is.
    for path in glob.glob(os.path.join(cl.data, "**"), recursive=True):
        if os.path.isfile(path):
            data = open(path, "rb").read()
            check(key.encode() not in data and bytes.fromhex(key) not in data, "the key is in %s" % path)

    # Roles: a viewer's credential over remote gpuctl makes a link; a
    # worker's makes none; a viewer's --revoke ends the viewers' links.
    viewer, _, _ = cl.add_token("ops-viewer", role="viewer")
    worker, _, _ = cl.add_token("w-page", role="worker")
    r = remote(cl, viewer, "page-link", "--json")
    check(r.returncode == 0, "a viewer's page-link: %s" % r.stderr)
    vkey = json.loads(r.stdout)["key"]
    check(http_get_key(cl, "/metrics", vkey)[0] == 200, "the viewer's key works")
    r = remote(cl, worker, "page-link")
    check(r.returncode != 0 and "cannot run gpuctl" in r.stderr, "a worker's page-link: %s" % r.stderr)
    r = remote(cl, viewer, "page-link", "--revoke")
    check(r.returncode == 0 and r.stdout.strip() == "1 page link ended", "the viewer's revoke: %r" % r.stdout)
    check(http_get_key(cl, "/metrics", vkey)[0] == 401, "the viewer's link ended")
    check(http_get_key(cl, "/metrics", key)[0] == 200, "the admin's link still works")
    check(cl.ctl("page-link", "--revoke").stdout.strip() == "1 page link ended", "the admin's revoke")
    refused(cl, key, "a revoked key", True)

    # A restart keeps links (hashes in the database); --http-open needs none.
    url, key = page_link(cl)
    cl.stop_gpud()
    cl.start_gpud()
    check(http_get_key(cl, "/metrics", key)[0] == 200, "a link outlives a restart")
    cl.stop_gpud()
    cl.start_gpud(extra=["--http-open"])
    for path in PATHS:
        code, _, _ = http_get_key(cl, path, None)
        check(code == 200, "--http-open %s: %d" % (path, code))
    # A link made before still leads to the page (no cookie needed).
    code, headers, body = http_get_key(cl, "/login" + url.split("/login", 1)[1], None)
    check(code == 200 and b"<html" in body.lower() and "Set-Cookie" not in headers,
          "/login on an open page: %d %s" % (code, headers))


if __name__ == "__main__":
    run(test_page_access)
