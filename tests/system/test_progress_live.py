"""Progress and numbers as an operator sees them (issue 35): a Graveler job
whose worker never checkpoints on its own (--checkpoint-interval 3600)
shows progress from heartbeats at once, marked as not yet saved, in
gpuctl status, /metrics and the page, with no ETA in its first seconds;
a heartbeating worker's SEEN is seconds old; a pause does not count in
ELAPSED; Sudoku jobs count their own gangsters (3x3: 44 in status,
/metrics and the page; 2x5: 355, and it moves); after the switch to the
2x5 job the worker's RATE is in gangsters (or "-"), never the Graveler
job's rate; Officers, Othello and Graveler jobs count values, positions
and battles; an ETA comes once the rate is steady; an extended job's
ELAPSED leaves out the time it sat done."""
import json
import re
import time

from harness import Cluster, check, http_get_key, lease_units_for, page_link, run, wait_for


def row_of(text, job):
    """The line of gpuctl status for job."""
    for line in text.splitlines():
        if re.match(r"\s*%d\s" % job, line):
            return line
    raise AssertionError("no row for job %d in:\n%s" % (job, text))


def metric(text, name, job):
    m = re.search(r'^%s\{job="%d",[^}]*\} ([0-9.e+]+)$' % (name, job), text, re.M)
    return float(m.group(1)) if m else None


def get(cl, path):
    """The body of path on gpud's page, with a page key (made once)."""
    if not hasattr(cl, "page_key"):
        cl.page_key = page_link(cl)[1]
    code, _, body = http_get_key(cl, path, cl.page_key)
    check(code == 200, "GET %s: %d" % (path, code))
    return body.decode()


def workers(cl):
    return json.loads(cl.ctl("workers", "--json").stdout)


def test_progress_live(cl: Cluster):
    units = lease_units_for(6)
    cl.gpud_args = ["--lease-units", str(units), "--heartbeat", "0.5"]
    cl.start_gpud()
    # 2. Each workload counts its own units.
    for wl, kw, unit, total in (("officers", {"to": 5000}, "values", 5000),
                                ("othello", {"random": 8, "empties": 10, "seed": 1}, "positions", 8),
                                ("graveler", {"battles": 1 << 20, "seed": 1}, "battles", 1 << 20)):
        j = cl.submit(wl, **kw)
        st = cl.status(j)
        check(st["total_units"] == total and st["unit_name"] == unit, "%s's units: %s" % (wl, st))
        cl.ctl("cancel", str(j))
    g = cl.submit("graveler", battles=3 * units, seed=35)
    cl.start_worker("cpu:1", ["--checkpoint-interval", "3600"])

    # 1. Progress before any checkpoint: running units, shown and marked.
    st = wait_for(lambda: (lambda s: s if s["units_running"] > 0 else None)(cl.status(g)),
                  60, "progress from heartbeats")
    t_moved = time.time()
    check(st["units_done"] == 0, "a checkpoint came: %s" % st)
    row = row_of(cl.ctl("status").stdout, g)
    pct = float(re.search(r"([0-9.]+)% of", row).group(1))
    check(pct > 0 and "saved)" in row, "status shows no live progress: %r" % row)
    # 3. No ETA in the first seconds (the rate is not steady yet).
    check(st["eta_s"] is None and time.time() - t_moved < 5, "an early ETA: %s" % st)
    check(re.search(r"\s-\s*$", row.split("saved)")[1]) or row.rstrip().endswith("-"),
          "ETA shown early: %r" % row)
    text = get(cl, "/metrics")
    check((metric(text, "gpud_job_running_units", g) or 0) > 0,
          "/metrics has no running units for job %d: %s" % (g, "\n".join(
              x for x in text.splitlines() if "gpud_job_" in x)))
    check(metric(text, "gpud_job_done_units", g) == 0, "done units before a checkpoint")
    page = get(cl, "/")
    m = re.search(r'<tr id="job-%d".*?</tr>' % g, page, re.S)
    check(m and "saved)" in m.group(0) and "unsaved" in m.group(0),
          "the page's row is not marked: %s" % (m.group(0) if m else None))

    # The job's page says why there is no ETA yet.
    wait_for(lambda: cl.status(g)["rate"] > 0, 20, "a rate")
    jp = get(cl, "/job/%d" % g)
    check("ETA when the rate is steady" in jp or cl.status(g)["eta_s"] is not None,
          "the job page while the rate settles: %s" % re.search(r'id="rec-rate".*?</tr>', jp, re.S))

    # 4. SEEN follows the heartbeats (every 0.5 s), not the login.
    time.sleep(4)
    w = workers(cl)[0]
    check(time.time() - w["last_seen"] < 2.5, "last_seen %.1f s ago" % (time.time() - w["last_seen"]))
    check(re.search(r"\b[0-2]s ago", cl.ctl("workers").stdout), "SEEN: %s" % cl.ctl("workers").stdout)

    # 5. ELAPSED does not count a pause.
    cl.ctl("pause", str(g))
    wait_for(lambda: cl.status(g)["leases"]["leased"] == 0, 30, "the release on pause")
    e1 = cl.status(g)["elapsed_s"]
    time.sleep(5)
    e2 = cl.status(g)["elapsed_s"]
    check(abs(e2 - e1) < 0.01, "elapsed moved while paused: %.2f -> %.2f" % (e1, e2))
    cl.ctl("resume", str(g))

    # 2. Sudoku's own units; queued behind the Graveler job.
    s33 = cl.submit("sudoku", box="3x3")
    s25 = cl.submit("sudoku", box="2x5")
    check(cl.status(s33)["total_units"] == 44, "3x3: %s" % cl.status(s33))
    check(cl.status(s25)["total_units"] == 355, "2x5: %s" % cl.status(s25))
    cl.wait_job(g, timeout=240)
    st = cl.status(g)
    ran = st["finished_at"] - st["started_at"]
    check(st["elapsed_s"] <= ran - 4.5, "elapsed %.1f s counts the pause (%.1f s from start to end)"
          % (st["elapsed_s"], ran))
    check(abs(st["avg_rate"] - st["units_done"] / st["elapsed_s"]) < 1e-6 * st["avg_rate"],
          "avg_rate is not over elapsed: %s" % st)
    cl.wait_job(s33, timeout=120)
    check(re.search(r"100\.0% of 44 gangsters", row_of(cl.ctl("status").stdout, s33)),
          "3x3 row: %s" % row_of(cl.ctl("status").stdout, s33))
    check("44 of 44 gangsters" in cl.ctl("result", str(s33)).stdout, "3x3 result")
    check(metric(get(cl, "/metrics"), "gpud_job_size_units", s33) == 44,
          "/metrics size of the 3x3 job")
    check(re.search(r"44 / 44 gangsters", get(cl, "/job/%d" % s33)), "the 3x3 job's page")

    # 4. The switch to the 2x5 job: RATE in gangsters or "-", then it moves.
    wait_for(lambda: workers(cl)[0]["job"] == s25, 60, "the worker on the 2x5 job")
    seen = []
    t0 = time.time()
    while time.time() - t0 < 8:
        w = workers(cl)[0]
        text = cl.ctl("workers").stdout
        if w["job"] == s25:
            check(w["rate"] < 100, "RATE on the 2x5 job is another job's: %s" % w)
            check("battles/s" not in text and ("gangsters/s" in text or " - " in text),
                  "RATE column: %s" % text)
            seen.append(w["rate"])
        time.sleep(0.5)
    check(seen, "the worker left the 2x5 job")
    # Measured there: in gangsters.
    wait_for(lambda: (lambda w: w["job"] == s25 and w["rate"] > 0)(workers(cl)[0]), 60,
             "the worker's rate in the 2x5 job")
    check(re.search(r"[0-9.]+ gangsters/s", cl.ctl("workers").stdout), "RATE in gangsters: %s"
          % cl.ctl("workers").stdout)
    wait_for(lambda: (lambda s: s["units_done"] + s["units_running"] >= 2)(cl.status(s25)),
             60, "the 2x5 job to move")
    row = row_of(cl.ctl("status").stdout, s25)
    check(re.search(r"[1-9][0-9.]*% of 355 gangsters|0\.[1-9]% of 355 gangsters", row),
          "2x5 row: %r" % row)
    # 3. Once the rate is steady, an ETA: the units left at that rate.
    st = wait_for(lambda: (lambda s: s if s["eta_s"] is not None else None)(cl.status(s25)),
                  90, "an ETA once the rate is steady")
    left = st["total_units"] - st["units_done"] - st["units_running"]
    check(st["rate"] > 0 and abs(st["eta_s"] - left / st["rate"]) <= 0.05 * st["eta_s"] + 2,
          "ETA is not the units left at the rate: %s" % st)
    cl.ctl("cancel", str(s25))

    # 5. An extended job's ELAPSED leaves out the time it sat finished.
    o = cl.submit("officers", to=100000)
    cl.wait_job(o, timeout=120)
    time.sleep(4)
    cl.ctl("extend", str(o), "--to", "200000")
    cl.wait_job(o, timeout=120)
    st = cl.status(o)
    ran = st["finished_at"] - st["started_at"]
    check(st["elapsed_s"] <= ran - 3.5, "elapsed %.1f s counts the time it sat done (%.1f s from "
          "start to end)" % (st["elapsed_s"], ran))
    print("2x5 rates %s; extended job: elapsed %.1f s of %.1f" % (seen[:4], st["elapsed_s"], ran))


if __name__ == "__main__":
    run(test_progress_live)
