"""A stored answer cannot be silently wrong (issue 34, item 6): one digit
changed with the sqlite3 tool inside a finished job's answer, and one
inside a part of another job (its lease's spec), keep the database's
structure, so SQLite's integrity check passes; the digests written with
them catch both. gpuctl check names each and exits 1, status marks the
jobs damaged, gpuctl result refuses both with a clear error, a restarted
gpud logs both at start; the third job, every row and every other answer
are as they were, and putting the digit back makes all sound again. A
running job whose answer is damaged between two merges is never merged
over (the next lease's merge is refused, the job does not finish on the
damaged answer); repaired, a restarted gpud finishes it exactly."""
import json
import os
import subprocess

from harness import Cluster, check, lease_units_for, run, wait_for


def sql(cl, text):
    """Run text with the sqlite3 command-line tool on gpud's database
    (waiting up to 10 s for gpud's write transactions, as gpud runs)."""
    r = subprocess.run(["sqlite3", os.path.join(cl.data, "gpud.db")], input=".timeout 10000\n" + text,
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "sqlite3 failed: %s" % r.stderr)
    return r.stdout


def one_digit_changed(text):
    """text with one digit changed that keeps its JSON valid: a digit that
    follows another one (never a number's first)."""
    for i in range(1, len(text)):
        if text[i].isdigit() and text[i - 1].isdigit():
            return text[:i] + str((int(text[i]) + 1) % 10) + text[i + 1:]
    raise AssertionError("no digit to change in %r" % text)


def quote(text):
    return "'" + text.replace("'", "''") + "'"


def counts(cl):
    return [cl.db_rows("SELECT count(*) FROM %s" % t)[0][0] for t in ("jobs", "leases", "parts", "events")]


def test_digest(cl: Cluster):
    units = lease_units_for(0.2)
    cl.gpud_args = ["--lease-units", str(units)]
    cl.start_gpud()
    jobs = [cl.submit("graveler", battles=units * 2, seed=s) for s in (3, 4, 5)]
    cl.start_worker("cpu:1", ["--exit-when-idle"])
    for j in jobs:
        cl.wait_job(j, timeout=180)
    before = {j: cl.result(j) for j in jobs}
    check(cl.ctl("check").returncode == 0, "a sound store checks ok")
    a, b, c = jobs

    # One digit of job a's answer, one of job b's first part (the spec of
    # its lease), changed while gpud runs.
    answer = cl.db_rows("SELECT answer FROM jobs WHERE id = ?", a)[0][0]
    bad_answer = one_digit_changed(answer)
    lease, spec = cl.db_rows("SELECT l.id, l.spec FROM parts AS p JOIN leases AS l ON l.id = p.lease_id "
                             "WHERE p.job_id = ? AND p.seq = 0", b)[0]
    bad_spec = one_digit_changed(spec)
    sql(cl, "UPDATE jobs SET answer = %s WHERE id = %d;\nUPDATE leases SET spec = %s WHERE id = %d;\n"
        % (quote(bad_answer), a, quote(bad_spec), lease))
    rows = counts(cl)
    check(sql(cl, "PRAGMA integrity_check;").strip() == "ok", "the structure is intact")

    r = cl.ctl("check", check_rc=False)
    check(r.returncode == 1, "check on damaged answers exits 1: %d %s" % (r.returncode, r.stdout))
    check("job %d: its stored answer does not match its digest" % a in r.stdout,
          "check names the damaged answer:\n" + r.stdout)
    check("job %d: part 0 (lease %d) does not match its digest" % (b, lease) in r.stdout,
          "check names the damaged part:\n" + r.stdout)
    check(("job %d:" % c) not in r.stdout, "the sound job is not named:\n" + r.stdout)
    rj = json.loads(cl.ctl("check", "--json", check_rc=False).stdout)
    check(sorted(rj["damaged_jobs"]) == [a, b], "damaged jobs: %s" % rj["damaged_jobs"])
    check(cl.status(a)["damaged"] and cl.status(b)["damaged"] and not cl.status(c).get("damaged"),
          "status marks the damaged jobs only")

    for j, what in ((a, "its stored answer"), (b, "part 0")):
        r = cl.ctl("result", str(j), check_rc=False)
        check(r.returncode != 0, "result of job %d must be refused:\n%s" % (j, r.stdout))
        check("refused" in r.stderr and what in r.stderr and "digest" in r.stderr and "backup" in r.stderr,
              "a clear error for job %d: %s" % (j, r.stderr))
        check(bad_answer not in r.stdout, "nothing of the damaged answer printed")
        r = cl.ctl("export", str(j), "plot", check_rc=False)
        check(r.returncode != 0 and "digest" in r.stderr, "export refused too: %s" % r.stderr)
    check(cl.result(c) == before[c], "the sound job's answer is as it was")

    # The start-up check logs both; nothing else is lost.
    cl.stop_gpud()
    cl.start_gpud()
    log = cl.log_text("gpud")
    check("digest check: job %d: its stored answer does not match its digest" % a in log,
          "start-up logs the damaged answer:\n" + cl.tail("gpud"))
    check("digest check: job %d: part 0 (lease %d)" % (b, lease) in log,
          "start-up logs the damaged part:\n" + cl.tail("gpud"))
    check(counts(cl)[:3] == rows[:3], "no row lost: %s %s" % (counts(cl), rows))
    check(cl.result(c) == before[c], "the sound job's answer after a restart")
    check(cl.ctl("result", str(a), check_rc=False).returncode != 0, "still refused after a restart")

    # The digits put back: sound again, every answer exact.
    sql(cl, "UPDATE jobs SET answer = %s WHERE id = %d;\nUPDATE leases SET spec = %s WHERE id = %d;\n"
        % (quote(answer), a, quote(spec), lease))
    check(cl.ctl("check").returncode == 0, "sound again")
    for j in jobs:
        check(cl.result(j) == before[j], "job %d's answer is exact" % j)

    # A running job: one lease merged, its answer damaged, the next merge
    # refused rather than built on the damage.
    run_job = cl.submit("graveler", battles=units * 2, seed=6)
    w = cl.start_worker("cpu:1", ["--max-leases", "1"])
    wait_for(lambda: cl.status(run_job)["leases"]["verified"] == 1, 120, "the first lease merged")
    check(w.wait(60) == 0, "the one-lease worker exits")
    answer = cl.db_rows("SELECT answer FROM jobs WHERE id = ?", run_job)[0][0]
    sql(cl, "UPDATE jobs SET answer = %s WHERE id = %d;\n" % (quote(one_digit_changed(answer)), run_job))
    cl.start_worker("cpu:1", ["--max-leases", "1"])
    wait_for(lambda: "verification of lease=" in cl.log_text("gpud") and
             "could not complete: corrupt" in cl.log_text("gpud"), 120, "the merge refused")
    st = cl.status(run_job)
    check(st["state"] not in ("done", "failed") and st["leases"]["verified"] == 1,
          "not merged over the damage: %s %s" % (st["state"], st["leases"]))
    # Repaired, and gpud restarted: the held result verifies and merges.
    sql(cl, "UPDATE jobs SET answer = %s WHERE id = %d;\n" % (quote(answer), run_job))
    cl.stop_gpud()
    cl.start_gpud()
    cl.check_reference(run_job, 120, battles=units * 2, seed=6)


if __name__ == "__main__":
    run(test_digest)
