/* test_store_queue.c - unit tests of daemon/store/store_queue.c and the queue's
 * order in the claim and the carve (migration 010): names, priorities,
 * started_at, the lists of status and history, a job's figures
 * (fixture: store_fx.h). */
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

static void test_name_priority_started(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t id = add_job(st, "graveler");
	struct store_job j;
	char longest[STORE_JOB_NAME_MAX + 2];

	memset(longest, 'a', sizeof(longest));
	longest[STORE_JOB_NAME_MAX] = '\0';
	assert_true(store_job_name_valid(longest));
	assert_true(store_job_name_valid("run-7.b_X"));
	longest[STORE_JOB_NAME_MAX] = 'a';
	longest[STORE_JOB_NAME_MAX + 1] = '\0';
	assert_false(store_job_name_valid(longest));
	assert_false(store_job_name_valid(""));
	assert_false(store_job_name_valid(NULL));
	assert_false(store_job_name_valid("two words"));
	assert_false(store_job_name_valid("a/b"));
	assert_false(store_job_name_valid("caf\xc3\xa9"));

	assert_int_equal(store_job_get(st, id, &j), 0);
	assert_null(j.name);
	assert_int_equal(j.priority, 0);
	assert_true(j.started_at == 0);
	store_job_clear(&j);

	assert_int_equal(store_job_set_name(st, id, "nightly-1"), 0);
	assert_int_equal(store_job_set_name(st, id, "bad name"), GERR_INVAL);
	assert_int_equal(store_job_set_name(st, 999, "x"), GERR_NOTFOUND);
	assert_int_equal(store_job_set_priority(st, id, STORE_PRIORITY_MAX), 0);
	assert_int_equal(store_job_set_priority(st, id, STORE_PRIORITY_MAX + 1),
			 GERR_INVAL);
	assert_int_equal(store_job_set_priority(st, id, STORE_PRIORITY_MIN - 1),
			 GERR_INVAL);
	assert_int_equal(store_job_set_priority(st, 999, 1), GERR_NOTFOUND);
	assert_int_equal(store_job_mark_started(st, id, 50.0), 0);
	assert_int_equal(store_job_mark_started(st, id, 60.0), 0); /* kept */
	assert_int_equal(store_job_get(st, id, &j), 0);
	assert_string_equal(j.name, "nightly-1");
	assert_int_equal(j.priority, STORE_PRIORITY_MAX);
	assert_true(j.started_at == 50.0);
	store_job_clear(&j);
	assert_int_equal(store_job_set_name(st, id, NULL), 0);
	assert_int_equal(store_job_get(st, id, &j), 0);
	assert_null(j.name);
	store_job_clear(&j);
}

/* The claim: highest priority, then the oldest job, then the oldest lease
 * of it; upto bounds the jobs it may take from. */
static void test_claim_order(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t w = add_worker(st, "w1");
	int64_t old = add_job(st, "graveler");
	int64_t mid = add_job(st, "graveler");
	int64_t young = add_job(st, "graveler");
	int64_t o1 = add_pending(st, old, w), o2 = add_pending(st, old, w);
	int64_t m1 = add_pending(st, mid, w);
	int64_t y1 = add_pending(st, young, w);
	int64_t order[] = {y1, m1, o1, o2};
	struct store_rank upto = {0, old};
	struct store_lease l;

	assert_int_equal(store_job_set_priority(st, mid, 2), 0);
	assert_int_equal(store_job_set_priority(st, young, 2), 0);
	assert_int_equal(store_job_set_priority(st, young, 7), 0);
	/* Jobs ranked at or before (0, old): all three, young first. */
	assert_int_equal(store_lease_claim_ranked(st, w, "[\"graveler\"]", &upto,
						  100, 30, &l), 0);
	assert_int_equal(l.id, y1);
	store_lease_clear(&l);
	upto = (struct store_rank){2, 0}; /* ahead of mid: nothing pending */
	assert_int_equal(store_lease_claim_ranked(st, w, "[\"graveler\"]", &upto,
						  100, 30, &l), GERR_NOTFOUND);
	upto.id = mid;
	assert_int_equal(store_lease_claim_ranked(st, w, "[\"graveler\"]", &upto,
						  100, 30, &l), 0);
	assert_int_equal(l.id, m1);
	store_lease_clear(&l);
	for (size_t i = 2; i < sizeof(order) / sizeof(order[0]); i++) {
		assert_int_equal(store_lease_claim_pending(st, w, "[\"graveler\"]",
							   100, 30, &l), 0);
		assert_int_equal(l.id, order[i]);
		assert_int_equal(l.epoch, 2);
		store_lease_clear(&l);
	}
	assert_int_equal(store_lease_claim_pending(st, w, "[\"graveler\"]", 100,
						   30, &l), GERR_NOTFOUND);
}

static void test_next_carvable_order(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t a = add_job(st, "graveler"), b = add_job(st, "graveler");
	int64_t c = add_job(st, "graveler"), id = 0;
	char ex[32];

	assert_int_equal(store_job_set_priority(st, c, -5), 0);
	assert_int_equal(store_job_set_priority(st, b, 1), 0);
	assert_int_equal(store_job_next_carvable(st, "[\"graveler\"]", NULL, &id), 0);
	assert_int_equal(id, b);
	snprintf(ex, sizeof(ex), "[%lld]", (long long)b);
	assert_int_equal(store_job_next_carvable(st, "[\"graveler\"]", ex, &id), 0);
	assert_int_equal(id, a);
	snprintf(ex, sizeof(ex), "[%lld,%lld]", (long long)b, (long long)a);
	assert_int_equal(store_job_next_carvable(st, "[\"graveler\"]", ex, &id), 0);
	assert_int_equal(id, c);
}

/* units_saved: verified and done leases' units + every other primary's
 * checkpoint; units_running: held leases' progress past their checkpoint;
 * replicas count only as attempts. */
static void test_stats(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t w = add_worker(st, "w1");
	int64_t job = add_job(st, "graveler"), rep;
	struct store_lease v = add_lease(st, job, w, 10);
	struct store_lease d = add_lease(st, job, w, 20);
	struct store_lease p = add_lease(st, job, w, 40);
	struct store_lease h = add_lease(st, job, w, 80);
	struct store_job_stats s;
	uint64_t live = 0;

	assert_int_equal(store_lease_set_result(st, v.id, 1, "r1", 10, 30), 0);
	assert_int_equal(store_lease_set_verified(st, v.id, 1, 31), 0);
	/* The merge counts its units in the job (sched_merge.c). */
	assert_int_equal(store_job_set_answer(st, job, "{}", 10), 0);
	assert_int_equal(store_lease_set_result(st, d.id, 1, "r2", 20, 30), 0);
	/* p: a checkpoint at 15, progress to 30, released: 15 kept. */
	assert_int_equal(store_lease_set_checkpoint(st, p.id, 1, "c1", 15, 30, NULL), 0);
	assert_int_equal(store_lease_heartbeat(st, p.id, 1, 30, 500, 31), 0);
	assert_int_equal(store_lease_release(st, p.id, 1, 32), 0);
	/* h: held, a checkpoint at 25, progress to 60. */
	assert_int_equal(store_lease_set_checkpoint(st, h.id, 1, "c2", 25, 30, NULL), 0);
	assert_int_equal(store_lease_heartbeat(st, h.id, 1, 60, 500, 31), 0);
	assert_int_equal(store_lease_insert_replica(st, v.id, 33, &rep), 0);
	assert_int_equal(store_event(st, 34, job, d.id, 1, w, "verify_failed", "x"), 0);
	assert_int_equal(store_event(st, 34, job, d.id, 1, w, "refuted", "x"), 0);
	assert_int_equal(store_event(st, 34, job + 1, d.id, 1, w, "refuted", "x"), 0);

	assert_int_equal(store_job_stats(st, job, &s), 0);
	assert_int_equal(s.units_saved, 10 + 20 + 15 + 25);
	assert_int_equal(s.units_running, 60 - 25);
	assert_int_equal(s.attempts, 4);
	assert_int_equal(s.verify_failures, 2);
	assert_int_equal(store_job_units_progress(st, job, &live), 0);
	assert_int_equal(live, s.units_saved + s.units_running);

	/* The holder dies: the lease expires to its checkpoint, and the saved
	 * units stay as they were. */
	int64_t *ids = NULL;
	size_t n = 0;
	assert_int_equal(store_lease_expire(st, 1000, &ids, &n), 0);
	assert_int_equal(n, 1);
	free(ids);
	assert_int_equal(store_job_stats(st, job, &s), 0);
	assert_int_equal(s.units_saved, 10 + 20 + 15 + 25);
	assert_int_equal(s.units_running, 0);
	store_lease_clear(&v);
	store_lease_clear(&d);
	store_lease_clear(&p);
	store_lease_clear(&h);
}

/* The list a of n jobs is the jobs want, in order; a is freed. */
static void jobs_are(struct store_job *a, size_t n, const int64_t *want,
		     size_t nwant)
{
	assert_int_equal(n, nwant);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(a[i].id, want[i]);
	store_job_free_array(a, n);
}

static void test_recent_and_history(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t active = add_job(st, "graveler"), paused = add_job(st, "graveler");
	int64_t old = add_job(st, "graveler"), done = add_job(st, "graveler");
	int64_t failed = add_job(st, "graveler"), cancelled = add_job(st, "graveler");
	struct store_job *a;
	size_t n;
	uint64_t hidden = 99;

	assert_int_equal(store_job_set_state(st, paused, JOB_PAUSED, NULL, 5), 0);
	assert_int_equal(store_job_set_state(st, old, JOB_DONE, NULL, 100), 0);
	assert_int_equal(store_job_set_state(st, done, JOB_DONE, NULL, 300), 0);
	assert_int_equal(store_job_set_state(st, failed, JOB_FAILED, "x", 200), 0);
	assert_int_equal(store_job_set_state(st, cancelled, JOB_CANCELLED, NULL, 400), 0);

	assert_int_equal(store_job_list_recent(st, 250, &a, &n, &hidden), 0);
	assert_int_equal(hidden, 2);
	jobs_are(a, n, (int64_t[]){active, paused, done, cancelled}, 4);
	assert_int_equal(store_job_list_recent(st, 0, &a, &n, NULL), 0);
	assert_int_equal(n, 6);
	store_job_free_array(a, n);

	assert_int_equal(store_job_history(st, 0, 100, &a, &n), 0);
	jobs_are(a, n, (int64_t[]){cancelled, done, failed, old}, 4);
	assert_int_equal(store_job_history(st, 150, 2, &a, &n), 0);
	jobs_are(a, n, (int64_t[]){cancelled, done}, 2);
	assert_int_equal(store_job_history(st, 0, 0, &a, &n), GERR_INVAL);
}

/* Migration 010 on a database from before it: no names, priority 0, and
 * started_at from each job's first grant in the event log. */
static void test_queue_migration(void **state)
{
	struct fx *f = *state;
	int64_t a, b;
	struct store_job j;

	open_old(f, 9);
	a = add_job(f->st, "graveler");
	b = add_job(f->st, "graveler");
	assert_int_equal(store_event(f->st, 70, a, 1, 1, 1, "grant", NULL), 0);
	assert_int_equal(store_event(f->st, 40, a, 2, 1, 1, "grant", NULL), 0);
	assert_int_equal(store_event(f->st, 30, b, 3, 1, 1, "result", NULL), 0);
	reopen(f);
	assert_int_equal(store_job_get(f->st, a, &j), 0);
	assert_true(j.started_at == 40);
	assert_null(j.name);
	assert_int_equal(j.priority, 0);
	store_job_clear(&j);
	assert_int_equal(store_job_get(f->st, b, &j), 0);
	assert_true(j.started_at == 0);
	store_job_clear(&j);
}

FX_MAIN(T(test_name_priority_started), T(test_claim_order),
	T(test_next_carvable_order), T(test_stats), T(test_recent_and_history),
	T(test_queue_migration))
