#!/usr/bin/env python3
"""The tail of a job with and without gpud's takeback (issue 33), on this
machine's CPUs: a Graveler job of 1.5 leases, two workers of one thread
each starting together. Worker B's half lease ends first; without the
takeback A's lease then runs alone, with it gpud cuts A's rest for B.

usage: tools/bench/bench_tail.py BUILD_DIR [LEASE_SECONDS [RUNS]]

Prints one line per run: the job's wall time (first grant to done, gpud's
events), its tail (from the first result, when a worker first has nothing
left, to the job's end), how long a worker sat idle at the end (from the
last result after which it got no lease) and the takeback events; the
answers of every run must agree with gpurun's."""
import os
import sqlite3
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "system"))
if len(sys.argv) > 1:
    os.environ["GPUD_BUILD"] = os.path.abspath(sys.argv[1])

import harness  # noqa: E402


def query(cl, sql, *args):
    db = sqlite3.connect("file:%s/gpud.db?mode=ro" % cl.data, uri=True)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def one_run(takeback, units, seed):
    cl = harness.Cluster("bench-tail")
    try:
        cl.gpud_args = ["--heartbeat", "0.5", "--lease-units", str(units),
                        "--lease-min-seconds", "1" if takeback else "0"]
        cl.start_gpud()
        battles = units + units // 2
        toks = [cl.add_token(n)[0] for n in ("wa", "wb")]
        job = cl.submit("graveler", battles=battles, seed=seed)
        for t in toks:
            cl.start_worker("cpu:1", token_file=t)
        cl.wait_job(job, timeout=600)
        start = query(cl, "SELECT min(ts) FROM events WHERE kind = 'grant' AND job_id = ?", job)[0][0]
        end = query(cl, "SELECT finished_at FROM jobs WHERE id = ?", job)[0][0]
        # The tail: from the first result (a worker has nothing left of
        # its lease) to the job's end. Idle at the end: from the last
        # result after which a worker got no grant.
        first = query(cl, "SELECT min(ts) FROM events WHERE kind = 'result' AND job_id = ?", job)[0][0]
        idle = []
        for (w,) in query(cl, "SELECT DISTINCT worker_id FROM events WHERE job_id = ? AND kind = 'grant'", job):
            last_res = query(cl, "SELECT max(ts) FROM events WHERE job_id = ? AND worker_id = ? "
                             "AND kind = 'result'", job, w)[0][0]
            last_grant = query(cl, "SELECT max(ts) FROM events WHERE job_id = ? AND worker_id = ? "
                               "AND kind = 'grant'", job, w)[0][0]
            if last_res is not None and last_res > last_grant:
                idle.append(last_res)
        cuts = [r[0] for r in query(cl, "SELECT detail FROM events WHERE kind = 'takeback' AND job_id = ?", job)]
        answer = harness.answer_core(cl.result(job)["answer"])
        return end - start, end - first, end - min(idle), cuts, answer, battles
    finally:
        cl.cleanup()


def main():
    lease_s = float(sys.argv[2]) if len(sys.argv) > 2 else 10
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    units = int(harness.cpu_rate() * lease_s) // 256 * 256
    answers = []
    for r in range(runs):
        for takeback in (False, True):
            wall, tail, idle, cuts, answer, battles = one_run(takeback, units, 7)
            answers.append(answer)
            print("run %d takeback %-3s battles %d: wall %.1f s, tail %.1f s, idle at the end %.1f s, "
                  "cuts %s" % (r + 1, "on" if takeback else "off", battles, wall, tail, idle, cuts), flush=True)
    ref = harness.reference_answer("graveler", battles=battles, seed=7)
    print("answers agree with gpurun: %s" % all(a == ref for a in answers))
    return 0 if all(a == ref for a in answers) else 1


if __name__ == "__main__":
    sys.exit(main())
