/* test_store_owner.c - unit tests of a job's owner (migration 019,
 * store_job_set_owner), history's filters in the store's query
 * (store_job_history_filter) and a job's event log in time order
 * (store_event_job) (fixture: store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "gerr.h"
#include "store_events.h"
#include "store_fx.h"

static void jobs_are(struct store_job *a, size_t n, const int64_t *want, size_t nw)
{
	assert_int_equal(n, nw);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(a[i].id, want[i]);
	store_job_free_array(a, n);
}

/* An owner is read back with the job; none reads NULL; bounds. */
static void test_owner(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t a = add_job(st, "graveler"), b = add_job(st, "graveler");
	char long_name[STORE_OWNER_MAX + 2];
	struct store_job j;

	assert_int_equal(store_job_set_owner(st, a, "alice"), 0);
	assert_int_equal(store_job_get(st, a, &j), 0);
	assert_string_equal(j.owner, "alice");
	store_job_clear(&j);
	assert_int_equal(store_job_get(st, b, &j), 0);
	assert_null(j.owner);
	store_job_clear(&j);
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_int_equal(store_job_set_owner(st, b, long_name), GERR_INVAL);
	assert_int_equal(store_job_set_owner(st, b, ""), GERR_INVAL);
	long_name[STORE_OWNER_MAX] = '\0';
	assert_int_equal(store_job_set_owner(st, b, long_name), 0);
	assert_int_equal(store_job_set_owner(st, 999, "bob"), GERR_NOTFOUND);
}

/* Each filter narrows, alone and together; the window is [since, until). */
static void test_history_filter(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t g1 = add_job(st, "graveler"), g2 = add_job(st, "graveler");
	int64_t s1 = add_job(st, "sudoku"), s2 = add_job(st, "sudoku");
	int64_t running = add_job(st, "graveler");
	struct store_job *a;
	size_t n;

	assert_int_equal(store_job_set_owner(st, g1, "alice"), 0);
	assert_int_equal(store_job_set_owner(st, g2, "bob"), 0);
	assert_int_equal(store_job_set_owner(st, s1, "alice"), 0);
	assert_int_equal(store_job_set_owner(st, running, "alice"), 0);
	assert_int_equal(store_job_set_state(st, g1, JOB_DONE, NULL, 100), 0);
	assert_int_equal(store_job_set_state(st, g2, JOB_FAILED, "x", 200), 0);
	assert_int_equal(store_job_set_state(st, s1, JOB_CANCELLED, NULL, 300), 0);
	assert_int_equal(store_job_set_state(st, s2, JOB_DONE, NULL, 400), 0);

	struct store_history_filter f = { .state = -1, .limit = 100 };
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), 0);
	jobs_are(a, n, (int64_t[]){s2, s1, g2, g1}, 4);

	f.since = 200;
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), 0);
	jobs_are(a, n, (int64_t[]){s2, s1, g2}, 3);
	f.until = 400;  /* before, not at */
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), 0);
	jobs_are(a, n, (int64_t[]){s1, g2}, 2);
	f.since = 0;
	f.until = 101;
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), 0);
	jobs_are(a, n, (int64_t[]){g1}, 1);

	f = (struct store_history_filter){ .state = JOB_DONE, .limit = 100 };
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), 0);
	jobs_are(a, n, (int64_t[]){s2, g1}, 2);
	f.workload = "graveler";
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), 0);
	jobs_are(a, n, (int64_t[]){g1}, 1);

	/* The running job of alice's is no history; an owner from before
	 * (NULL) matches no user. */
	f = (struct store_history_filter){ .state = -1, .owner = "alice", .limit = 100 };
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), 0);
	jobs_are(a, n, (int64_t[]){s1, g1}, 2);
	f.workload = "sudoku";
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), 0);
	jobs_are(a, n, (int64_t[]){s1}, 1);
	f.state = JOB_DONE;
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), 0);
	jobs_are(a, n, NULL, 0);
	f = (struct store_history_filter){ .state = -1, .owner = "carol", .limit = 100 };
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), 0);
	jobs_are(a, n, NULL, 0);
	/* A name is a parameter, never SQL. */
	f.owner = "x' OR '1'='1";
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), 0);
	jobs_are(a, n, NULL, 0);

	/* The limit keeps the newest. */
	f = (struct store_history_filter){ .state = -1, .limit = 1 };
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), 0);
	jobs_are(a, n, (int64_t[]){s2}, 1);

	/* Refused: limit 0, a state not finished, a negative time, no filter. */
	f.limit = 0;
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), GERR_INVAL);
	f = (struct store_history_filter){ .state = JOB_ACTIVE, .limit = 9 };
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), GERR_INVAL);
	f = (struct store_history_filter){ .state = -1, .since = -1, .limit = 9 };
	assert_int_equal(store_job_history_filter(st, &f, &a, &n), GERR_INVAL);
	assert_int_equal(store_job_history_filter(st, NULL, &a, &n), GERR_INVAL);
}

static void kinds_are(struct store_event_row *e, size_t n, const char *const *want,
		      size_t nw)
{
	assert_int_equal(n, nw);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(e[i].kind, want[i]);
		if (i)
			assert_true(e[i].id > e[i - 1].id);
	}
	store_event_rows_free(e, n);
}

/* A job's events and its leases' that name no job, oldest first; the
 * newest max; after an id; from a time; with the worker's name. */
static void test_event_job(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler"), other = add_job(st, "graveler");
	int64_t w = add_worker(st, "cpu");
	struct store_lease l = add_lease(st, job, w, 10);
	struct store_lease lo = add_lease(st, other, w, 10);
	struct store_event_row *e;
	size_t n;

	assert_int_equal(store_event(st, 10, job, 0, 0, 0, "submit", "{}"), 0);
	assert_int_equal(store_event(st, 11, other, 0, 0, 0, "submit", "{}"), 0);
	assert_int_equal(store_event(st, 12, job, l.id, 1, w, "grant", NULL), 0);
	assert_int_equal(store_event(st, 13, 0, l.id, 1, 0, "expire", "late"), 0);
	assert_int_equal(store_event(st, 14, 0, lo.id, 1, 0, "expire", "late"), 0);
	assert_int_equal(store_event(st, 15, 0, 0, 0, w, "connect", NULL), 0);
	assert_int_equal(store_event(st, 16, job, l.id, 2, w, "result", NULL), 0);
	assert_int_equal(store_event(st, 17, job, 0, 0, 0, "job_done", NULL), 0);

	assert_int_equal(store_event_job(st, job, 0, 0, 100, &e, &n), 0);
	assert_int_equal(n, 5);
	assert_null(e[0].worker);
	assert_string_equal(e[1].worker, "cpu");
	assert_int_equal(e[1].lease_id, l.id);
	assert_int_equal(e[2].job_id, 0);
	assert_true(e[0].ts == 10 && e[4].ts == 17);
	kinds_are(e, n, (const char *[]){ "submit", "grant", "expire", "result",
		  "job_done" }, 5);

	assert_int_equal(store_event_job(st, job, 0, 0, 2, &e, &n), 0);
	kinds_are(e, n, (const char *[]){ "result", "job_done" }, 2);
	assert_int_equal(store_event_job(st, job, 0, 13, 100, &e, &n), 0);
	assert_int_equal(n, 3);
	int64_t mark = e[0].id;
	kinds_are(e, n, (const char *[]){ "expire", "result", "job_done" }, 3);
	assert_int_equal(store_event_job(st, job, mark, 0, 100, &e, &n), 0);
	kinds_are(e, n, (const char *[]){ "result", "job_done" }, 2);
	assert_int_equal(store_event_job(st, 999, 0, 0, 100, &e, &n), 0);
	assert_int_equal(n, 0);
	store_event_rows_free(e, n);

	assert_int_equal(store_event_job(st, job, 0, 0, 0, &e, &n), GERR_INVAL);
	assert_int_equal(store_event_job(st, job, 0, 0, STORE_EVENTS_JOB_MAX + 1,
					 &e, &n), GERR_INVAL);
	assert_int_equal(store_event_job(st, 0, 0, 0, 10, &e, &n), GERR_INVAL);
	assert_int_equal(store_event_job(st, job, -1, 0, 10, &e, &n), GERR_INVAL);
	store_lease_clear(&l);
	store_lease_clear(&lo);
}

/* Migration 019 on a database from before it: its jobs have no owner,
 * and its page keys no maker. */
static void test_owner_migration(void **state)
{
	struct fx *f = *state;
	int64_t a;
	struct store_job j;
	uint8_t hash[STORE_PAGEKEY_HASH] = { 1 };

	open_old(f, 18);
	a = add_job(f->st, "graveler");
	reopen(f);
	assert_int_equal(store_job_get(f->st, a, &j), 0);
	assert_null(j.owner);
	store_job_clear(&j);
	assert_int_equal(store_job_set_owner(f->st, a, "uid 1000"), 0);
	assert_int_equal(store_pagekey_add(f->st, hash, "viewer", "ann", 1, 2), 0);
	assert_int_equal(store_pagekey_add(f->st, (uint8_t[STORE_PAGEKEY_HASH]){ 2 },
					   "admin", NULL, 1, 2), 0);
}

FX_MAIN(T(test_owner), T(test_history_filter), T(test_event_job),
	T(test_owner_migration))
