"""The queue (issue 23): a job with no worker says so; with the only
worker busy on a long job, small jobs show "queued" with a reason; a paused job is "held"; a higher-priority job submitted later runs
before older lower-priority ones, and `gpuctl priority` changes the order;
names show in status and history, which lists finished jobs newest first
with their start, elapsed time, attempts and average rate."""
import re
import json

from harness import Cluster, check, lease_units_for, run, wait_for


def test_queue(cl: Cluster):
    units = lease_units_for(6)
    small = 1 << 20
    cl.gpud_args = ["--lease-units", str(units), "--heartbeat", "0.3"]
    cl.start_gpud()
    long_job = cl.submit("graveler", battles=units, seed=1, name="long-one")
    st = cl.status(long_job)
    check(st["state"] == "queued" and st["reason"].startswith("no eligible worker"),
          "no worker yet: %s" % st)
    cl.start_worker("cpu:1", ["--checkpoint-interval", "1"])
    wait_for(lambda: cl.status(long_job)["state"] == "running", 30, "the long job to run")
    b = cl.submit("graveler", battles=small, seed=2, name="small-b")
    c = cl.submit("graveler", battles=small, seed=3)
    d = cl.submit("graveler", battles=small, seed=4, name="small.d")
    e = cl.submit("graveler", battles=small, seed=5, name="urgent_e", priority=5)
    cl.ctl("pause", str(c))

    st = {j["id"]: j for j in json.loads(cl.ctl("status", "--json").stdout)}
    check(st[long_job]["state"] == "running", "the long job runs: %s" % st[long_job])
    check(st[b]["state"] == "queued" and st[b]["reason"] == "behind job %d" % long_job,
          "b waits behind the long job: %s" % st[b])
    check(st[d]["state"] == "queued" and st[d]["reason"] == "behind job %d" % b,
          "d waits behind b (c is paused, not queued): %s" % st[d])
    check(st[e]["priority"] == 5 and st[e]["reason"] == "behind job %d" % long_job,
          "e, ahead of every queued job, waits for the worker the long job holds: %s" % st[e])
    check(st[c]["state"] == "paused" and st[c]["reason"].startswith("held"), "paused: %s" % st[c])
    check(st[b]["name"] == "small-b" and st[c]["name"] is None and st[b]["priority"] == 0,
          "names and priorities: %s %s" % (st[b], st[c]))
    check(st[b]["started_at"] is None and st[b]["elapsed_s"] == 0 and st[b]["finished_at"] is None,
          "a queued job has not started: %s" % st[b])

    # d jumps ahead of e; c comes back behind b.
    r = cl.ctl("priority", str(d), "10")
    check("priority" in r.stdout, "gpuctl priority: %r" % r.stdout)
    cl.ctl("resume", str(c))
    st = {j["id"]: j for j in json.loads(cl.ctl("status", "--json").stdout)}
    check(st[d]["priority"] == 10 and st[e]["reason"] == "behind job %d" % d,
          "e now waits behind d: %s" % st[e])
    check(st[c]["reason"] == "behind job %d" % b, "c waits behind b: %s" % st[c])
    bad = cl.ctl("priority", str(d), "1001", check_rc=False)
    check(bad.returncode != 0 and "-1000..1000" in bad.stderr, "priority out of range: %r" % bad.stderr)
    bad = cl.ctl("submit", "graveler", "--battles", "1000", "--name", "no spaces", check_rc=False)
    check(bad.returncode != 0 and "name" in bad.stderr and "A-Z a-z 0-9" in bad.stderr, "a bad name: %r" % bad.stderr)

    # The busy worker's rate, in its job's unit, from its heartbeats.
    def worker():
        ws = json.loads(cl.ctl("workers", "--json").stdout)
        return ws[0] if ws and ws[0]["lease"] else None
    wait_for(lambda: worker() and worker()["rate"] > 0, 20, "the worker's live rate")
    w = worker()
    check(w["job"] == long_job and w["job_unit"] == "battles", "the worker's lease: %s" % w)
    check("battles/s" in cl.ctl("workers").stdout, "gpuctl workers shows the rate in battles/s")

    for j in (long_job, b, c, d, e):
        cl.wait_job(j, timeout=300)
    off = cl.submit("graveler", battles=small, seed=6, name="cancelled")
    cl.ctl("cancel", str(off))
    hist = json.loads(cl.ctl("history", "--json").stdout)
    ids = [j["id"] for j in hist]
    check(ids[0] == off and set(ids) == {long_job, b, c, d, e, off}, "history: %s" % ids)
    fin = [j["finished_at"] for j in hist]
    check(fin == sorted(fin, reverse=True), "history is newest first: %s" % fin)
    by = {j["id"]: j for j in hist}
    order = sorted((long_job, b, c, d, e), key=lambda i: by[i]["started_at"])
    check(order == [long_job, d, e, b, c], "run order %s, expected %s" % (order, [long_job, d, e, b, c]))
    for i in (long_job, b, c, d, e):
        j = by[i]
        check(j["state"] == "done" and j["units_done"] == j["total_units"] and j["attempts"] == 1 and
              j["verify_failures"] == 0 and j["elapsed_s"] > 0 and j["avg_rate"] > 0,
              "history of job %d: %s" % (i, j))
    check(by[b]["name"] == "small-b" and by[off]["state"] == "cancelled",
          "history names and states: %s %s" % (by[b], by[off]))
    text = cl.ctl("history").stdout
    check(re.search(r"^\s*%d\s+small-b\s+\S+\s+graveler\s+done\s" % b, text, re.M), "history text: %r" % text)
    # status leaves finished jobs in view for a day; history keeps them.
    shown = json.loads(cl.ctl("status", "--all", "--json").stdout)
    check(len(shown) == 6, "status --all: %d jobs" % len(shown))


if __name__ == "__main__":
    run(test_queue)
