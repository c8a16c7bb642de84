"""The status page as a person sees it (issue 35): headless Chromium loads
the page and a job's page with scripts disabled (what the server rendered:
a screenshot before any script runs) and enabled (the script refreshes it
from the same address), and what they show is checked against gpud's state
(gpuctl status, workers, result): every job's row (id, name, state,
progress), the summary strip's figures (jobs by state, workers online,
quarantined), server health (uptime, the database's and blobs' sizes, the
last check and backup, with absolute times), the throughput chart's count
of verified results, thumbnails of only the most recent finished jobs
linking to their page and a link to the rest (/plots lists them all, as
links, never a wall of images); a job's page: its record (state, submitted,
started and ended as absolute UTC times, units, leases by state), its
answer's summary, its plot at full size and its events. The page's text is
never smaller than 12 px.
Exits 77 only when chromium is not installed (tools/deps.sh).
GPUD_SCREENSHOTS=DIR saves page.png, job.png and plots.png there (what
doc/screenshots/ holds). Chromium is driven over the DevTools protocol
(harness.Chromium), which can turn a page's scripts off."""
import json
import os
import re
import shutil
import sys
import time

from harness import Chromium, Cluster, check, http_get_key, lease_units_for, run, wait_for

RECENT = 4  # PAGE_RECENT_PLOTS


def load(br, url, scripts):
    """url in br (scripts on or off): the document as it is then."""
    br.load(url, scripts=scripts)
    return br.html()


# The smallest font size (px) of any element with text of its own, and the
# scale of each plot image as laid out (its rendered width over the SVG's).
MIN_FONT = ("Math.min(...[...document.querySelectorAll('body *')].filter(e => [...e.childNodes]"
            ".some(n => n.nodeType == 3 && n.textContent.trim())).map(e => parseFloat(getComputedStyle(e).fontSize)))")
IMG_SCALES = "[...document.querySelectorAll('main img')].map(i => i.naturalWidth ? i.width / i.naturalWidth : 0)"


def cells(row):
    """The text of each <td> of a row's HTML, tags removed."""
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]


def utc(t):
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(int(t)))


def figure(dom, name):
    m = re.search(r'id="fig-%s" data-value="(\d+)"><b>(\d+)</b>' % name, dom)
    check(m and m.group(1) == m.group(2), "the strip's %s: %s" % (name, m and m.group(0)))
    return int(m.group(1))


def check_main(cl, dom, jobs, workers, finished_with_plots):
    check('id="content"' in dom and 'data-page="main"' in dom, "the main page: %s" % dom[:400])
    for j in jobs:
        m = re.search(r'<tr id="job-%d" data-state="([a-z]+)" data-done="(\d+)" data-running="(\d+)" '
                      r'data-total="(\d+)">(.*?)</tr>' % j["id"], dom, re.S)
        check(m, "job %d's row: %s" % (j["id"], dom[-2000:]))
        check(m.group(1) == j["state"], "job %d's state %s, gpuctl %s" % (j["id"], m.group(1), j["state"]))
        c = cells(m.group(5))
        check(c[0] == str(j["id"]) and c[1] == (j.get("name") or "–") and c[3] == j["workload"],
              "job %d's id, name, workload: %s" % (j["id"], c[:4]))
        check(('href="/job/%d"' % j["id"]) in m.group(5), "job %d's row links to its page" % j["id"])
        check(c[2] == (j.get("owner") or "–"), "job %d's user %s, gpuctl %s" % (j["id"], c[2], j.get("owner")))
        pct = float(re.search(r"([\d.]+)%", c[5]).group(1))
        # Shown: checkpointed + held leases' progress past their checkpoints.
        done, total = int(m.group(2)) + int(m.group(3)), int(m.group(4))
        check(total == j["total_units"] and abs(pct - 100.0 * min(done, total) / total) < 0.06,
              "job %d's progress %s of %d/%d" % (j["id"], c[5], done, total))
        # Absolute beside relative: "YYYY-MM-DD HH:MM:SS UTC (.. ago)".
        check(re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(.* ago\)", c[7]), "job %d submitted: %s" % (j["id"], c[7]))
    check(figure(dom, "online") == sum(w["online"] for w in workers), "workers online")
    check(figure(dom, "quarantined") == sum(bool(w["quarantined"]) for w in workers), "quarantined")
    for w in workers:
        check(re.search(r'<tr id="worker-%d" data-state="%s"' % (w["id"], "online" if w["online"] else "offline"), dom),
              "worker %d's row" % w["id"])
    # Thumbnails: the most recent finished jobs' first plots, each a link
    # to its job's page; the rest behind one link.
    thumbs = re.findall(r'<figure><a href="/job/(\d+)"><img src="/results/job-(\d+)/([^"]+)"', dom)
    newest = sorted(finished_with_plots, key=lambda j: -j["finished_at"])[:RECENT]
    check([int(a) for a, _, _ in thumbs] == [j["id"] for j in newest] and all(a == b for a, b, _ in thumbs),
          "thumbnails of the %d newest finished jobs: %s, want %s" % (RECENT, thumbs, [j["id"] for j in newest]))
    check('href="/plots"' in dom, "the link to every finished job's plots")
    for key in ("uptime", "db", "blobs", "backup", "check", "storage"):
        check('id="health-%s"' % key in dom, "server health: %s" % key)
    check(re.search(r'id="health-check"><time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC</time>', dom),
          "the last check's absolute time")
    check(re.search(r'id="health-backup"><time', dom), "the last backup's time")
    check(re.search(r'id="health-blobs">[\d.]+ [KMG]?i?B in \d+ files', dom), "blob sizes: %s"
          % re.search(r'id="health-blobs">[^<]*', dom).group(0))
    return thumbs


def test_page(cl: Cluster):
    if not shutil.which("chromium"):
        print("SKIP: chromium is not installed (sh tools/deps.sh)")
        sys.exit(77)
    # The page open (--http-open): Chromium needs no cookie between runs.
    cl.gpud_args = ["--heartbeat", "0.5", "--lease-units", str(lease_units_for(0.5)), "--http-open"]
    cl.start_gpud()
    base = "http://%s" % cl.http
    cl.start_worker("cpu:1")
    # Six small jobs finish, each with its plot: the page shows four.
    small = []
    for i in range(6):
        out = cl.ctl("submit", "graveler", "--battles", str(1 << 18), "--seed", str(i + 1),
                     "--name", "small-%d" % i).stdout
        small.append(int(out.strip().split()[-1]))
        cl.wait_job(small[-1], timeout=60)
    for j in small:
        wait_for(lambda: os.path.exists(os.path.join(cl.data, "results", "job-%d" % j, "graveler-histogram.svg")),
                 20, "job %d's plot" % j)
    big = int(cl.ctl("submit", "graveler", "--battles", str(1 << 40), "--seed", "9", "--name",
                     "long-run").stdout.strip().split()[-1])
    wait_for(lambda: cl.status(big)["units_done"] > 0 and (cl.status(big)["rate"] or 0) > 0, 30,
             "progress and a rate on the long job")
    held = int(cl.ctl("submit", "graveler", "--battles", str(1 << 30), "--name", "on-hold").stdout.strip().split()[-1])
    cl.ctl("pause", str(held))
    gone = int(cl.ctl("submit", "graveler", "--battles", str(1 << 30), "--name", "dropped").stdout.strip().split()[-1])
    cl.ctl("cancel", str(gone))
    cl.ctl("check")
    cl.ctl("backup", os.path.join(cl.dir, "backup-1"))

    with Chromium(1400, 1000) as br:
        browse(cl, br, base, small, big, held)


def browse(cl, br, base, small, big, held):
    # Scripts disabled: what the server rendered, compared with gpud's
    # state taken just before and after (the long job moves).
    jobs = json.loads(cl.ctl("status", "--json").stdout)
    workers = json.loads(cl.ctl("workers", "--json").stdout)
    dom = load(br, base + "/", scripts=False)
    after = {j["id"]: j for j in json.loads(cl.ctl("status", "--json").stdout)}
    check("data-loaded" not in dom, "scripts were off")
    finished = [j for j in jobs if j["state"] in ("done", "failed", "cancelled")
                and os.path.isdir(os.path.join(cl.data, "results", "job-%d" % j["id"]))]
    # The long job's progress moves between the two snapshots: its row
    # is checked against the later one.
    m = re.search(r'<tr id="job-%d"[^>]*data-done="(\d+)"' % big, dom)
    check(m and 0 < int(m.group(1)) <= after[big]["units_done"], "the long job's progress: %s" % (m and m.group(0)))
    check_main(cl, dom, [j for j in jobs if j["id"] != big], workers, finished)
    # The strip counts the rows it was rendered with; those are gpud's
    # states (the long job moves between running and queued as its
    # leases end and start: either).
    rows = dict((int(a), b) for a, b in re.findall(r'<tr id="job-(\d+)" data-state="([a-z]+)"', dom))
    check(rows.get(big) in ("running", "queued"), "the long job's state: %s" % rows.get(big))
    check(len(rows) == len(jobs), "a row per job: %s" % rows)
    for state in ("running", "queued", "paused", "done", "failed", "cancelled"):
        want = sum(st == state for st in rows.values())
        check(figure(dom, state) == want, "the strip's %s: %d rows" % (state, want))
        check(want == sum(j["state"] == state for j in jobs if j["id"] != big) + (rows[big] == state),
              "the rows' %s: gpuctl's" % state)
    verified = int(re.search(r'<svg id="chart"[^>]*data-verified="(\d+)"', dom).group(1))
    check(verified >= len(small), "the chart counts the verified results: %d" % verified)
    check(re.search(r'id="fig-rate"><b>[\d.]+ [kMG]? ?battles/s', dom), "the total rate in battles/s: %s"
          % re.search(r'id="fig-rate">.*?</div>', dom).group(0))
    # Readable: no text under 12 px as laid out; thumbnails at two thirds
    # of their plot's size at least (the plots' 12 px labels: 8 px).
    check(br.evaluate(MIN_FONT) >= 12, "the smallest text: %s px" % br.evaluate(MIN_FONT))
    # Nothing to scroll sideways in a 1400 px window.
    wide = br.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    check(wide[0] <= wide[1], "the page is wider than its window: %s" % wide)
    scales = br.evaluate(IMG_SCALES)
    check(len(scales) == RECENT and min(scales) >= 0.66, "thumbnails' scale: %s" % scales)
    shots = os.environ.get("GPUD_SCREENSHOTS")
    if shots:
        os.makedirs(shots, exist_ok=True)
        br.screenshot(os.path.join(shots, "page.png"))

    # Scripts enabled: the script refreshes the page from the same address
    # (data-refreshed counts the swaps) and the rows stay.
    br.load(base + "/", scripts=True)
    wait_for(lambda: re.search(r'data-refreshed="[1-9]', br.html()), 20, "the script's refresh")
    dom2 = br.html()
    check('data-loaded="1"' in dom2, "the script ran")
    for j in jobs:
        check('<tr id="job-%d"' % j["id"] in dom2, "job %d after a refresh" % j["id"])
    # The refreshed page follows gpud: a job paused since shows paused.
    cl.ctl("resume", str(held))
    wait_for(lambda: re.search(r'<tr id="job-%d" data-state="(queued|running)"' % held, br.html()), 20,
             "the resumed job on the refreshed page")
    cl.ctl("pause", str(held))

    # /plots: every finished job with plots, as links, no images.
    pl = load(br, base + "/plots", scripts=False)
    listed = [int(x) for x in re.findall(r'<tr id="plots-(\d+)">', pl)]
    check(sorted(listed) == sorted(j["id"] for j in finished), "/plots lists: %s" % listed)
    check("<img" not in pl, "/plots shows no images")
    if shots:
        br.screenshot(os.path.join(shots, "plots.png"))

    # A job's page, scripts off.
    j = cl.status(small[-1])
    res = cl.ctl("result", str(small[-1])).stdout
    page = load(br, base + "/job/%d" % small[-1], scripts=False)
    rec = dict(re.findall(r'<tr id="rec-([a-z]+)"><th>[^<]*</th><td>(.*?)</td></tr>', page, re.S))
    check(j["state"] in rec.get("state", ""), "the record's state: %s" % rec.get("state"))
    for key, at in (("submitted", j["submitted_at"]), ("started", j["started_at"]), ("ended", j["finished_at"])):
        check(utc(at) in rec.get(key, ""), "%s %s: %s" % (key, utc(at), rec.get(key)))
    check("%d exactly" % j["units_verified"] in rec["units"], "units: %s" % rec["units"])
    for state, n in j["leases"].items():
        check('<span data-state="%s">%s %d</span>' % (state, state, n) in rec["leases"],
              "leases %s %d: %s" % (state, n, rec["leases"]))
    check("battles" in rec["params"] and str(1 << 18) in rec["params"], "params: %s" % rec["params"])
    # gpuctl result: its header line ("job N (graveler): done"), then the
    # answer's text, which the page shows.
    text = res.split("\n", 1)[1].strip()
    check(re.search(r'<pre id="answer">' + re.escape(text.splitlines()[0]), page) and
          all(line.strip() in page for line in text.splitlines()[:8]), "the answer's summary: %s" % text[:200])
    check('<img src="/results/job-%d/graveler-histogram.svg"' % small[-1] in page, "the full-size plot")
    check(br.evaluate(IMG_SCALES) == [1], "the job's plot at full size: %s" % br.evaluate(IMG_SCALES))
    kinds = re.findall(r'<tr><td class="num">\d+</td><td class="when">.*?</td><td>([a-z_]+)</td>', page, re.S)
    for kind in ("submit", "grant", "result", "verified", "job_done"):
        check(kind in kinds, "event %s on the job's page: %s" % (kind, kinds))
    check(br.evaluate(MIN_FONT) >= 12, "the job page's smallest text")
    if shots:
        br.screenshot(os.path.join(shots, "job.png"))
    code, _, _ = http_get_key(cl, "/job/999999", None)
    check(code == 404, "no such job: %d" % code)
    cl.ctl("cancel", str(big))
    cl.ctl("cancel", str(held))


if __name__ == "__main__":
    run(test_page)
