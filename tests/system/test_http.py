"""The status page and metrics (issue 23), tested for real: `promtool check
metrics` finds nothing wrong in /metrics, whose series match the jobs and
workers; headless Chromium loads the page, runs its script and shows every
job (id, name, state, progress) and the worker; /api/status is the control
API's status plus workers and each job's plots; a plot in DATA/results is
served as SVG while paths outside it, hidden or linked files are not; the
server is read-only (POST 405) and bounded (an oversized request refused;
a 9th connection from one address makes room by closing the oldest idle
one). Everything is fetched with a page link (gpuctl page-link): the
Bearer key for /api/status, /metrics and the plots, the link's address
(its cookie) for Chromium.
Exits 77 only when promtool or chromium is not installed (tools/deps.sh).
GPUD_SCREENSHOT=FILE.png also saves a screenshot of the page."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from harness import Cluster, check, http_get_key, lease_units_for, page_link, run, wait_for

# A stand-in for a plot the plots' writer leaves (issue 23): bars and labels.
SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 420 240">'
       b'<rect width="420" height="240" fill="#fff"/>'
       + b"".join(b'<rect x="%d" y="%d" width="30" height="%d" fill="#2f7de1"/>' % (40 + 40 * i, 200 - h, h)
                  for i, h in enumerate((20, 70, 150, 180, 120, 60, 25, 8, 3)))
       + b'<line x1="35" y1="200" x2="410" y2="200" stroke="#333"/>'
       b'<text x="210" y="228" font-size="13" text-anchor="middle">test plot: max ones per battle</text>'
       b'</svg>')


def submit(cl, name, **kw):
    """A job with --name (gpuctl's once issue 23's queue is in), else without."""
    args = ["submit", "graveler"] + [a for k, v in kw.items() for a in ("--" + k, str(v))]
    r = cl.ctl(*(args + ["--name", name]), check_rc=False)
    if r.returncode != 0:
        r = cl.ctl(*args)
    return int(r.stdout.strip().split()[-1])


def chromium(url, *extra):
    """Chromium headless on url after its script ran: stdout (the DOM)."""
    with tempfile.TemporaryDirectory(prefix="gpud-chromium-") as profile:
        r = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                            "--disable-dev-shm-usage", "--no-first-run", "--user-data-dir=" + profile,
                            "--virtual-time-budget=6000", "--window-size=1400,1000"] + list(extra) + [url],
                           capture_output=True, text=True, timeout=90)
    check(r.returncode == 0, "chromium: %d %s" % (r.returncode, r.stderr[-2000:]))
    return r.stdout


def raw_request(addr, data, key=None):
    """data sent as is (with the Bearer key's header after the request line
    when key is given); everything gpud answers until it closes."""
    if key is not None:
        line, rest = data.split(b"\r\n", 1)
        data = line + b"\r\nAuthorization: Bearer " + key.encode() + b"\r\n" + rest
    host, port = addr.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(data)
        out = b""
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                out += b
        except (ConnectionResetError, socket.timeout):
            pass
    return out


def test_http(cl: Cluster):
    for tool in ("promtool", "chromium"):
        if not shutil.which(tool):
            print("SKIP: %s is not installed (sh tools/deps.sh)" % tool)
            sys.exit(77)
    cl.gpud_args = ["--heartbeat", "0.5", "--lease-units", str(lease_units_for(0.5))]
    cl.start_gpud()
    check(cl.http and re.match(r"^127\.0\.0\.1:\d+$", cl.http), "DATA/gpud.http: %r" % cl.http)
    url, key = page_link(cl)
    check(url == "http://%s/login?key=%s" % (cl.http, key), "the page link: %s" % url)

    def get(path):
        return http_get_key(cl, path, key)
    small = submit(cl, "quick-check", battles=1 << 20, seed=1)
    cl.start_worker("cpu:1")
    cl.wait_job(small, timeout=60)
    big = submit(cl, "long-run", battles=1 << 40, seed=2)
    wait_for(lambda: cl.status(big)["units_done"] > 0, 30, "progress on the long job")
    held = submit(cl, "on-hold", battles=1 << 30, seed=3)
    cl.ctl("pause", str(held))

    # gpud's own plot of the finished job, another one beside it, and what
    # must not be served.
    res = os.path.join(cl.data, "results", "job-%d" % small)
    wait_for(lambda: os.path.exists(os.path.join(res, "graveler-histogram.svg")), 20, "the job's plot")
    with open(os.path.join(res, "counts.svg"), "wb") as f:
        f.write(SVG)
    with open(os.path.join(res, ".hidden.svg"), "wb") as f:
        f.write(SVG)
    os.symlink(os.path.join(cl.data, "gpud.key"), os.path.join(res, "key.svg"))

    # /api/status
    code, headers, body = get("/api/status")
    check(code == 200 and headers["Content-Type"] == "application/json", "api/status: %d %s" % (code, headers))
    api = json.loads(body)
    jobs = {j["id"]: j for j in api["jobs"]}
    check(set(jobs) == {small, big, held}, "api/status jobs: %s" % sorted(jobs))
    check(jobs[small]["plots"] == ["/results/job-%d/counts.svg" % small,
                                   "/results/job-%d/graveler-histogram.svg" % small],
          "plots listed (not the hidden one; the link is a file name only): %s" % jobs[small]["plots"])
    check(jobs[big]["plots"] == [] and jobs[big]["units_done"] > 0, "the long job: %s" % jobs[big])
    check([w["online"] for w in api["workers"]] == [True], "the worker: %s" % api["workers"])
    # The long job's state moves between leases (running, queued): two
    # snapshots taken one after the other must agree within a few tries.
    for _ in range(50):
        ctl_jobs = json.loads(cl.ctl("status", "--json").stdout)
        ctl_states = {j["id"]: j["state"] for j in ctl_jobs}
        api_states = {j["id"]: j["state"] for j in json.loads(get("/api/status")[2])["jobs"]}
        if ctl_states == api_states:
            break
        time.sleep(0.1)
    check(ctl_states == api_states, "the same states as gpuctl status: %s %s" % (ctl_states, api_states))

    # Plots: served as SVG, script forbidden; nothing outside them.
    code, headers, body = get("/results/job-%d/counts.svg" % small)
    check(code == 200 and body == SVG and headers["Content-Type"] == "image/svg+xml"
          and "default-src 'none'" in headers["Content-Security-Policy"], "the plot: %d %s" % (code, headers))
    for path in ["/results/job-%d/key.svg" % small, "/results/job-%d/.hidden.svg" % small,
                 "/results/job-%d/../../gpud.key" % small, "/results/job-%d/%%2e%%2e/x.svg" % small,
                 "/results/job-0%d/counts.svg" % small, "/results/job-%d/counts.txt" % small,
                 "/gpud.key", "/results/"]:
        code, _, body = get(path)
        check(code == 404 and b"gpud-key" not in body, "%s must not be served: %d" % (path, code))

    # Read-only and bounded.
    r = raw_request(cl.http, b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", key)
    check(r.startswith(b"HTTP/1.1 405"), "POST: %r" % r[:80])
    r = raw_request(cl.http, b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n")
    check(r == b"" or re.match(rb"HTTP/1.1 4\d\d", r), "an oversized request is refused: %r" % r[:80])
    code, _, _ = get("/nothing")
    check(code == 404, "unknown path: %d" % code)
    # HTTP_ROOM_PER_IP (8) idle connections from one address: the next
    # one is answered, and the oldest idle one is closed to make room.
    host, port = cl.http.rsplit(":", 1)
    idle = [socket.create_connection((host, int(port)), timeout=10) for _ in range(8)]
    try:
        time.sleep(0.2)
        r = raw_request(cl.http, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", key)
        check(r.startswith(b"HTTP/1.1 200"), "a 9th connection from one address is answered: %r" % r[:80])
        check(idle[0].recv(100) == b"", "the oldest idle connection was closed")
    finally:
        for s in idle:
            s.close()

    # /metrics: promtool's check, and the series of what runs.
    code, headers, body = get("/metrics")
    check(code == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4"), "metrics: %s" % headers)
    r = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True, timeout=30)
    check(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(),
          "promtool check metrics: %d %s %s" % (r.returncode, r.stdout, r.stderr))
    text = body.decode()
    states = {j["state"] for j in ctl_jobs}
    for state in states:
        n = sum(j["state"] == state for j in ctl_jobs)
        check(re.search(r'^gpud_jobs\{state="%s"\} %d$' % (state, n), text, re.M), "jobs %s: %d" % (state, n))
    check(re.search(r'^gpud_job_size_units\{job="%d",.*workload="graveler",unit="battles"\} %d$'
                    % (big, 1 << 40), text, re.M), "the long job's size")
    done = int(re.search(r'^gpud_job_done_units\{job="%d",[^}]*\} (\d+)$' % big, text, re.M).group(1))
    check(0 < done <= cl.status(big)["units_done"], "the long job's progress: %d" % done)
    check(re.search(r'^gpud_job_verified_units\{job="%d",[^}]*\} %d$' % (small, 1 << 20), text, re.M),
          "the small job verified")
    device = api["workers"][0]["device"]
    check(re.search(r'^gpud_workers_online\{device="%s"\} 1$' % re.escape(device), text, re.M),
          "one worker online on %s" % device)
    commits = int(re.search(r"^gpud_db_commit_seconds_count (\d+)$", text, re.M).group(1))
    check(commits > 0, "the worker's claims and heartbeats were committed: %d" % commits)
    check(re.search(r"^gpud_db_commit_seconds_bucket\{le=\"\+Inf\"\} %d$" % commits, text, re.M), "+Inf = count")
    blob_bytes = int(re.search(r"^gpud_blob_stored_bytes (\d+)$", text, re.M).group(1))
    check(blob_bytes > 0, "the small job's results are stored: %d bytes" % blob_bytes)
    check(re.search(r"^gpud_verify_failures_total 0$", text, re.M), "no verification failed")
    check(re.search(r'^gpud_leases\{state="verified"\} [1-9]', text, re.M), "verified leases counted")

    # The page, as a browser renders it once its script ran.
    dom = chromium(url, "--dump-dom")
    check('data-loaded="1"' in dom, "the page's script rendered: %s" % dom[:500])
    for j in ctl_jobs:
        row = re.search(r'<tr id="job-%d" data-state="%s"[^>]*>(.*?)</tr>' % (j["id"], j["state"]), dom, re.S)
        check(row, "job %d's row with state %s: %s" % (j["id"], j["state"], dom[-3000:]))
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]
        check(cells[0] == str(j["id"]) and cells[1] == (j.get("name") or "–") and cells[3] == "graveler",
              "job %d's id, name, workload: %s" % (j["id"], cells[:4]))
        pct = float(re.search(r'class="pct">([\d.]+)%', row.group(1)).group(1))
        want = 100.0 * j["units_done"] / j["total_units"]
        check(abs(pct - want) < 1.0 or j["id"] == big, "job %d's progress %.1f%%, status %.1f%%" % (j["id"], pct, want))
    check(re.search(r'<tr id="job-%d"[^>]*>.*?class="pct">100\.0%%' % small, dom, re.S), "the done job at 100%")
    # A worker is a process: TOKEN@INSTANCE (the default instance HOST:PID).
    check(re.search(r'<tr id="worker-\d+" data-state="online"><td>local@[^<]+:\d+</td><td>%s</td>' % re.escape(device), dom),
          "the worker's row")
    # The finished job's first plot, as a thumbnail linking to its page.
    check('<a href="/job/%d"><img src="/results/job-%d/counts.svg"' % (small, small) in dom, "the plot on the page")
    shot = os.environ.get("GPUD_SCREENSHOT")
    if shot:
        chromium(url, "--screenshot=" + os.path.abspath(shot), "--hide-scrollbars")
        check(os.path.getsize(shot) > 10000, "screenshot written")
    cl.ctl("cancel", str(big))
    cl.ctl("cancel", str(held))


if __name__ == "__main__":
    run(test_http)
