/* test_store_lifecycle.c - unit tests of daemon/store/store_lifecycle.c
 * (migration 021): a job that waits for another (the claim and the carve
 * skip it; it fails with its predecessor), the time-limit tick, the
 * 'job_end' events of the schema's trigger, and requeue keeping what was
 * verified (fixture: store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "store_fx.h"
#include "store_lifecycle.h"

static enum job_state job_state(struct store *st, int64_t id, char **reason)
{
	struct store_job j;
	enum job_state s;

	assert_int_equal(store_job_get(st, id, &j), 0);
	s = j.state;
	if (reason)
		*reason = j.reason ? strdup(j.reason) : NULL;
	store_job_clear(&j);
	return s;
}

static void test_after(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t w = add_worker(st, "cpu");
	int64_t a = add_job(st, "graveler"), b = add_job(st, "graveler"), id = 0;
	struct store_lifecycle lc;

	assert_int_equal(store_job_set_lifecycle(st, b, 999, 0), GERR_NOTFOUND);
	assert_non_null(strstr(store_errmsg(st), "no job 999 to run after"));
	assert_int_equal(store_job_set_lifecycle(st, a, b, 0), GERR_INVAL);
	assert_int_equal(store_job_set_lifecycle(st, b, b, 0), GERR_INVAL);
	assert_int_equal(store_job_set_lifecycle(st, b, a, 0.5), GERR_INVAL);
	assert_int_equal(store_job_set_lifecycle(st, b, a, 367.0 * 86400), GERR_INVAL);
	assert_int_equal(store_job_set_lifecycle(st, b, a, 60), 0);
	assert_int_equal(store_job_lifecycle_get(st, b, &lc), 0);
	assert_int_equal(lc.after_job, a);
	assert_int_equal(lc.after_state, JOB_ACTIVE);
	assert_true(lc.time_limit == 60 && lc.ran_s == 0);
	assert_int_equal(store_job_lifecycle_get(st, a, &lc), 0);
	assert_int_equal(lc.after_job, 0);
	assert_int_equal(lc.after_state, JOB_NSTATES);
	assert_int_equal(store_job_lifecycle_get(st, 999, &lc), GERR_NOTFOUND);

	/* b's pending lease waits while a is not done; a's comes first. */
	int64_t lb = add_pending(st, b, w);
	assert_int_equal(store_job_set_state(st, a, JOB_PAUSED, NULL, 20), 0);
	assert_int_equal(claim_id(st, w, NULL), 0);
	assert_int_equal(store_job_next_carvable(st, "[\"graveler\"]", NULL, &id),
			 GERR_NOTFOUND);
	assert_int_equal(store_job_set_state(st, a, JOB_DONE, NULL, 30), 0);
	assert_int_equal(store_job_next_carvable(st, "[\"graveler\"]", NULL, &id), 0);
	assert_int_equal(id, b);
	assert_int_equal(claim_id(st, w, NULL), lb);
}

static void test_dependents_and_ends(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t a = add_job(st, "graveler"), b = add_job(st, "graveler"),
		c = add_job(st, "graveler"), last = -1;
	struct store_job_end *ends = NULL;
	size_t n = 0;
	uint64_t k = 0;
	char *reason = NULL;

	assert_int_equal(store_event_last_id(st, &last), 0);
	assert_int_equal(store_job_set_lifecycle(st, b, a, 0), 0);
	assert_int_equal(store_job_set_lifecycle(st, c, b, 0), 0);
	assert_int_equal(store_job_fail_dependents(st, a, 40, &k), 0);
	assert_int_equal(k, 0); /* a is active: nothing to fail */
	assert_int_equal(store_job_set_state(st, a, JOB_CANCELLED, "by hand", 41), 0);
	assert_int_equal(store_job_fail_dependents(st, a, 42, &k), 0);
	assert_int_equal(k, 1);
	assert_int_equal(job_state(st, b, &reason), JOB_FAILED);
	assert_non_null(reason);
	assert_non_null(strstr(reason, "job 1, which this job was to run after, is cancelled"));
	free(reason);
	assert_int_equal(job_state(st, c, NULL), JOB_ACTIVE);
	/* Every end is an event, whichever call ended the job. */
	assert_int_equal(store_job_ends(st, last, 10, &ends, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ends[0].job_id, a);
	assert_string_equal(ends[0].state, "cancelled");
	assert_string_equal(ends[0].workload, "graveler");
	assert_null(ends[0].name);
	assert_int_equal(ends[1].job_id, b);
	assert_string_equal(ends[1].state, "failed");
	assert_true(ends[1].event_id > ends[0].event_id);
	last = ends[1].event_id;
	store_job_end_free_array(ends, n);
	/* The chain's next link; 0: every failed or cancelled job's. */
	assert_int_equal(store_job_fail_dependents(st, 0, 43, &k), 0);
	assert_int_equal(k, 1);
	assert_int_equal(job_state(st, c, NULL), JOB_FAILED);
	assert_int_equal(store_job_ends(st, last, 10, &ends, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ends[0].job_id, c);
	store_job_end_free_array(ends, n);
	/* An end is recorded once: a failed job failing again adds none. */
	assert_int_equal(store_job_set_state(st, c, JOB_FAILED, "again", 44), 0);
	assert_int_equal(store_job_ends(st, last, 10, &ends, &n), 0);
	assert_int_equal(n, 1);
	store_job_end_free_array(ends, n);
	assert_int_equal(store_job_ends(st, 0, 0, &ends, &n), GERR_INVAL);
}

static void test_tick(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t w = add_worker(st, "cpu");
	int64_t j = add_job(st, "graveler"), idle = add_job(st, "graveler"),
		paused = add_job(st, "graveler"), stopped[STORE_TICK_MAX];
	struct store_lifecycle lc;
	struct store_lease l;
	size_t n = 9;
	uint64_t ev = 0;
	char *reason = NULL;

	assert_int_equal(store_job_set_lifecycle(st, j, 0, 5), 0);
	assert_int_equal(store_job_set_lifecycle(st, idle, 0, 1), 0);
	assert_int_equal(store_job_set_lifecycle(st, paused, 0, 1), 0);
	int64_t v = add_verified_lease(st, j, w, 10);
	struct store_lease held = add_lease(st, j, w, 10);
	assert_int_equal(store_job_mark_started(st, j, 20), 0);
	assert_int_equal(store_job_mark_started(st, paused, 20), 0);
	assert_int_equal(store_job_set_state(st, paused, JOB_PAUSED, NULL, 21), 0);

	assert_int_equal(store_lifecycle_tick(st, 50, 2, stopped, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_lifecycle_tick(st, 51, 2.5, stopped, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_job_lifecycle_get(st, j, &lc), 0);
	assert_true(lc.ran_s == 4.5);
	/* Not started (queued) and paused jobs are not charged. */
	assert_int_equal(store_job_lifecycle_get(st, idle, &lc), 0);
	assert_true(lc.ran_s == 0);
	assert_int_equal(store_job_lifecycle_get(st, paused, &lc), 0);
	assert_true(lc.ran_s == 0);
	assert_int_equal(store_lifecycle_tick(st, 52, 1, stopped, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(stopped[0], j);
	assert_int_equal(job_state(st, j, &reason), JOB_FAILED);
	assert_non_null(strstr(reason, "time limit 5s reached"));
	free(reason);
	get_lease(st, held.id, &l);
	assert_int_equal(l.state, LEASE_CANCELLED);
	store_lease_clear(&l);
	get_lease(st, v, &l);
	assert_int_equal(l.state, LEASE_VERIFIED);
	store_lease_clear(&l);
	assert_int_equal(store_event_count(st, "time_limit", j, &ev), 0);
	assert_int_equal(ev, 1);
	assert_int_equal(store_lifecycle_tick(st, 53, -1, stopped, &n), GERR_INVAL);
	store_lease_clear(&held);
}

static void test_requeue(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t w = add_worker(st, "cpu");
	int64_t j = add_job(st, "graveler");
	struct store_lease before, l, held;
	struct store_lifecycle lc;
	uint64_t n = 0;
	int64_t v, stopped[STORE_TICK_MAX];
	size_t ns = 0;

	assert_int_equal(store_job_requeue(st, j, 60, &n), GERR_STATE);
	assert_non_null(strstr(store_errmsg(st), "not failed or cancelled"));
	assert_int_equal(store_job_requeue(st, 999, 60, &n), GERR_NOTFOUND);
	assert_int_equal(store_job_set_lifecycle(st, j, 0, 1), 0);
	v = add_verified_lease(st, j, w, 10);
	held = add_lease(st, j, w, 10);
	assert_int_equal(store_job_mark_started(st, j, 20), 0);
	assert_int_equal(store_lifecycle_tick(st, 50, 2, stopped, &ns), 0);
	assert_int_equal(ns, 1);
	get_lease(st, v, &before);

	assert_int_equal(store_job_requeue(st, j, 60, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(job_state(st, j, NULL), JOB_ACTIVE);
	assert_int_equal(store_job_lifecycle_get(st, j, &lc), 0);
	assert_true(lc.ran_s == 0 && lc.time_limit == 1);
	get_lease(st, v, &l);
	assert_lease_equal(&l, &before); /* verified: untouched */
	store_lease_clear(&l);
	get_lease(st, held.id, &l);
	assert_int_equal(l.state, LEASE_PENDING);
	assert_int_equal(l.failures, 0);
	assert_null(l.result);
	assert_int_equal(l.worker_id, 0);
	assert_int_equal(l.epoch, held.epoch); /* the next claim moves it */
	store_lease_clear(&l);
	struct store_job jr;
	assert_int_equal(store_job_get(st, j, &jr), 0);
	assert_null(jr.reason);
	assert_true(jr.finished_at == 0);
	store_job_clear(&jr);
	assert_int_equal(claim_id(st, w, NULL), held.id);
	store_lease_clear(&before);
	store_lease_clear(&held);

	/* A failed job's pending lease: its failures and failers forgotten. */
	int64_t g = add_job(st, "graveler");
	struct store_lease gl = add_lease(st, g, w, 10);
	enum lease_state ls;
	assert_int_equal(store_lease_run_failed(st, gl.id, gl.epoch, "boom", 5, 61, &ls), 0);
	assert_int_equal(ls, LEASE_PENDING);
	assert_int_equal(store_job_set_state(st, g, JOB_FAILED, "failed", 62), 0);
	assert_int_equal(store_job_requeue(st, g, 63, &n), 0);
	assert_int_equal(n, 1);
	get_lease(st, gl.id, &l);
	assert_int_equal(l.state, LEASE_PENDING);
	assert_int_equal(l.failures, 0);
	store_lease_clear(&l);
	assert_int_equal(claim_id(st, w, NULL), gl.id); /* its failer may again */
	store_lease_clear(&gl);

	/* Done: refused. Every lease verified and carved: refused. */
	int64_t d = add_job(st, "graveler");
	assert_int_equal(store_job_set_state(st, d, JOB_DONE, NULL, 70), 0);
	assert_int_equal(store_job_requeue(st, d, 71, &n), GERR_STATE);
	assert_non_null(strstr(store_errmsg(st), "is done"));
	int64_t f = add_job(st, "graveler");
	add_verified_lease(st, f, w, 10);
	assert_int_equal(store_job_set_cursor(st, f, NULL, 1), 0);
	assert_int_equal(store_job_set_state(st, f, JOB_FAILED, "final check", 72), 0);
	assert_int_equal(store_job_requeue(st, f, 73, &n), GERR_STATE);
	assert_non_null(strstr(store_errmsg(st), "every lease"));
	/* Its predecessor cancelled: that first. */
	int64_t p = add_job(st, "graveler"), q = add_job(st, "graveler");
	assert_int_equal(store_job_set_lifecycle(st, q, p, 0), 0);
	assert_int_equal(store_job_set_state(st, p, JOB_CANCELLED, NULL, 74), 0);
	assert_int_equal(store_job_fail_dependents(st, p, 75, NULL), 0);
	assert_int_equal(store_job_requeue(st, q, 76, &n), GERR_STATE);
	assert_non_null(strstr(store_errmsg(st), "requeue job"));
	assert_int_equal(store_job_requeue(st, p, 77, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_job_requeue(st, q, 78, &n), 0);
}

FX_MAIN(T(test_after), T(test_dependents_and_ends), T(test_tick), T(test_requeue))
