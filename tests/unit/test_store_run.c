/* test_store_run.c - the time a job ran (migration 020, store_jobs.c and
 * store_queue.c): a span opens at a grant while none is open and closes
 * when the job pauses or ends, so paused time and the time a job sat
 * done before an extend do not count; and what 020 makes of the jobs of
 * an older database (fixture: store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "gerr.h"
#include "store_fx.h"

static double ran(struct store *st, int64_t job, double now)
{
	struct store_job j = {0};
	double s;

	assert_int_equal(store_job_get(st, job, &j), 0);
	s = store_job_run_seconds(&j, now);
	store_job_clear(&j);
	return s;
}

static void near(double a, double b)
{
	if (fabs(a - b) > 1e-9)
		fail_msg("%.6f, want %.6f", a, b);
}

static void test_spans(void **state)
{
	struct fx *f = *state;
	struct store *st = f->st;
	int64_t job = add_job(st, "graveler"); /* submitted at 10 */

	near(ran(st, job, 100), 0);           /* queued: not started */
	assert_int_equal(store_job_mark_started(st, job, 110), 0);
	near(ran(st, job, 120), 10);
	/* Later grants of the same span change nothing. */
	assert_int_equal(store_job_mark_started(st, job, 125), 0);
	near(ran(st, job, 130), 20);
	/* Paused at 130 for 70 s: not counted. */
	assert_int_equal(store_job_set_state(st, job, JOB_PAUSED, NULL, 130), 0);
	near(ran(st, job, 200), 20);
	/* Resumed at 200, granted at 210: the span opens at the grant. */
	assert_int_equal(store_job_set_state(st, job, JOB_ACTIVE, NULL, 200), 0);
	near(ran(st, job, 210), 20);
	assert_int_equal(store_job_mark_started(st, job, 210), 0);
	assert_int_equal(store_job_set_state(st, job, JOB_DONE, NULL, 230), 0);
	near(ran(st, job, 1000), 40);
	/* Extended at 300 after sitting done, granted at 400, done at 410. */
	assert_int_equal(store_job_extend(st, job, "{\"n\":200}", 200), 0);
	near(ran(st, job, 399), 40);
	assert_int_equal(store_job_mark_started(st, job, 400), 0);
	near(ran(st, job, 405), 45);
	assert_int_equal(store_job_set_state(st, job, JOB_DONE, NULL, 410), 0);
	near(ran(st, job, 5000), 50);
	/* A state set again (the same) closes nothing twice. */
	assert_int_equal(store_job_set_state(st, job, JOB_DONE, "x", 600), 0);
	near(ran(st, job, 5000), 50);
}

/* Run sql on f's database through a connection of its own. */
static void edit(struct fx *f, const char *sql)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* A database from before 020: a finished job ran from its start to its
 * end, an active one runs since its start, a paused one ran until its
 * last pause; a job never started ran nothing. */
static void test_migration(void **state)
{
	struct fx *f = *state;
	struct store *st;

	open_old(f, 18);
	store_close(f->st);
	f->st = NULL;
	edit(f, "INSERT INTO jobs (id, workload, params, state, total_units, "
		"created_at, finished_at, started_at) VALUES "
		"(1, 'graveler', '{}', 2, 10, 100, 190, 110), "
		"(2, 'graveler', '{}', 0, 10, 100, 0, 150), "
		"(3, 'graveler', '{}', 1, 10, 100, 0, 120), "
		"(4, 'graveler', '{}', 1, 10, 100, 0, 120), "
		"(5, 'graveler', '{}', 0, 10, 100, 0, NULL);"
		"INSERT INTO events (ts, job_id, kind) VALUES (130, 3, 'pause'), "
		"(160, 3, 'resume'), (170, 3, 'pause');");
	reopen(f);
	st = f->st;
	near(ran(st, 1, 1000), 80);
	near(ran(st, 2, 1000), 850);
	near(ran(st, 3, 1000), 50);
	near(ran(st, 4, 1000), 0);
	near(ran(st, 5, 1000), 0);
}

FX_MAIN(T(test_spans), T(test_migration))
