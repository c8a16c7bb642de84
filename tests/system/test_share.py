"""Two workers share one job: with gpud's default lease sizes (no
--lease-units), each gets a lease of it, and the job takes at most 0.65x
the time one worker alone takes for a job of the same size; both answers
are exact. Workers checkpoint at gpud's --checkpoint-interval."""
import time

from harness import Cluster, check, cpu_rate, run, wait_for


def granted_to(cl, job):
    """The workers that got a lease of job (gpud's events)."""
    return {r[0] for r in cl.db_rows("SELECT DISTINCT worker_id FROM events "
                                "WHERE kind = 'grant' AND job_id = ?", job)}


def online(cl):
    return cl.db_rows("SELECT count(*) FROM workers WHERE online = 1")[0][0]


def timed_job(cl, battles, seed, exact=True):
    t0 = time.time()
    job = cl.submit("graveler", battles=battles, seed=seed)
    cl.wait_job(job, timeout=300)
    wall = time.time() - t0
    if exact:
        cl.check_reference(job, 60, battles=battles, seed=seed)
    return job, wall


def test_share(cl: Cluster):
    cl.gpud_args = ["--heartbeat", "0.5", "--lease-min-seconds", "1", "--checkpoint-interval", "1"]
    cl.start_gpud()
    battles = int(cpu_rate() * 6) // 256 * 256
    tok_a, _, _ = cl.add_token("wa")
    tok_b, _, _ = cl.add_token("wb")
    cl.start_worker("cpu:1", token_file=tok_a)
    job1, alone = timed_job(cl, battles, 5)
    check(len(granted_to(cl, job1)) == 1, "one worker, one holder")
    # gpud's --checkpoint-interval reaches a worker that sets none.
    ckpts = cl.log_text("worker").count("checkpoint stored")
    check(ckpts >= 3, "a 6 s lease at gpud's 1 s cadence: %d checkpoints" % ckpts)
    cl.start_worker("cpu:1", token_file=tok_b)
    wait_for(lambda: online(cl) >= 2, 20, "two workers online")
    time.sleep(1)  # both claims parked: the job's first grants see the fleet
    # The best of up to three shared runs: a busy machine's other load
    # can take the second core for a while.
    walls = []
    for seed in (6, 7, 8):
        job2, shared = timed_job(cl, battles, seed, exact=seed == 6)
        holders = granted_to(cl, job2)
        check(len(holders) == 2, "both workers should get a lease of the job: %s" % holders)
        walls.append(shared)
        if shared <= 0.65 * alone:
            break
    shared = min(walls)
    check(shared <= 0.65 * alone, "two workers took %s s, one alone %.2f s (more than 0.65x)" % (walls, alone))
    print("one worker %.2f s, two workers %.2f s (%.2fx)" % (alone, shared, shared / alone))


if __name__ == "__main__":
    run(test_share)
