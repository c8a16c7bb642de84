/* test_store_jobs.c - unit tests of daemon/store/store_jobs.c: jobs and the
 * event log (fixture: store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gerr.h"
#include "store_fx.h"

/* ---- jobs ---- */

static void test_jobs(void **state)
{
	struct fx *f = *state;
	struct store *st = f->st;
	struct store_job j, *a;
	size_t n;
	int64_t id1 = 0, id2;

	assert_int_equal(store_job_insert(st, "graveler", "{\"battles\":5}",
					  5, 100.5, &id1), 0);
	id2 = add_job(st, "officers");
	assert_true(id2 > id1);

	assert_int_equal(store_job_get(st, id1, &j), 0);
	assert_int_equal(j.id, id1);
	assert_string_equal(j.workload, "graveler");
	assert_string_equal(j.params, "{\"battles\":5}");
	assert_int_equal(j.state, JOB_ACTIVE);
	assert_int_equal(j.total_units, 5);
	assert_null(j.cursor);
	assert_int_equal(j.carve_done, 0);
	assert_null(j.answer);
	assert_int_equal(j.units_verified, 0);
	assert_true(j.created_at == 100.5);
	assert_true(j.finished_at == 0);
	assert_null(j.reason);
	store_job_clear(&j);
	store_job_clear(NULL);

	assert_int_equal(store_job_get(st, 999, &j), GERR_NOTFOUND);

	assert_int_equal(store_job_set_cursor(st, id1, "{\"next\":3}", 1), 0);
	assert_int_equal(store_job_set_answer(st, id1, "{\"max\":177}", 5), 0);
	assert_int_equal(store_job_set_reason(st, id1, "waiting"), 0);
	assert_int_equal(store_job_get(st, id1, &j), 0);
	assert_string_equal(j.cursor, "{\"next\":3}");
	assert_int_equal(j.carve_done, 1);
	assert_string_equal(j.answer, "{\"max\":177}");
	assert_int_equal(j.units_verified, 5);
	assert_string_equal(j.reason, "waiting");
	store_job_clear(&j);
	assert_int_equal(store_job_set_cursor(st, 999, "{}", 0), GERR_NOTFOUND);
	assert_int_equal(store_job_set_answer(st, 999, "{}", 0), GERR_NOTFOUND);
	assert_int_equal(store_job_set_reason(st, 999, "x"), GERR_NOTFOUND);
	/* JSON columns refuse what is not JSON. */
	assert_int_equal(store_job_set_cursor(st, id1, "{oops", 0), GERR_INVAL);
	assert_int_equal(store_job_set_answer(st, id1, "[1,", 0), GERR_INVAL);
	assert_int_equal(store_job_insert(st, "graveler", "nope", 1, 1.0, &id2),
			 GERR_INVAL);
	assert_int_equal(store_job_get(st, id1, &j), 0);
	assert_string_equal(j.cursor, "{\"next\":3}");
	store_job_clear(&j);

	/* States: paused has no finished_at, done sets it, done is final. */
	assert_int_equal(store_job_set_state(st, id1, JOB_PAUSED, "by user",
					     200.0), 0);
	assert_int_equal(store_job_get(st, id1, &j), 0);
	assert_int_equal(j.state, JOB_PAUSED);
	assert_string_equal(j.reason, "by user");
	assert_true(j.finished_at == 0);
	store_job_clear(&j);
	assert_int_equal(store_job_set_state(st, id1, JOB_ACTIVE, NULL, 201.0),
			 0);
	assert_int_equal(store_job_set_state(st, id1, JOB_DONE, NULL, 300.0), 0);
	assert_int_equal(store_job_set_state(st, id1, JOB_DONE, "again", 400.0),
			 0);
	assert_int_equal(store_job_get(st, id1, &j), 0);
	assert_int_equal(j.state, JOB_DONE);
	assert_true(j.finished_at == 300.0);
	assert_string_equal(j.reason, "again");
	store_job_clear(&j);
	assert_int_equal(store_job_set_state(st, id1, JOB_ACTIVE, NULL, 500.0),
			 GERR_STATE);
	assert_non_null(strstr(store_errmsg(st), "done"));
	assert_int_equal(store_job_set_state(st, id1, (enum job_state)9, NULL,
					     1.0), GERR_INVAL);
	assert_int_equal(store_job_set_state(st, 999, JOB_PAUSED, NULL, 1.0),
			 GERR_NOTFOUND);

	assert_int_equal(store_job_list(st, &a, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(a[0].id, id1);
	assert_int_equal(a[1].id, id2);
	assert_string_equal(a[1].workload, "officers");
	store_job_free_array(a, n);

	assert_string_equal(job_state_name(JOB_CANCELLED), "cancelled");
	assert_string_equal(lease_state_name(LEASE_VERIFIED), "verified");
	assert_string_equal(lease_state_name((enum lease_state)77), "unknown");
}

static void test_job_next_carvable(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t g1 = add_job(st, "graveler");
	int64_t o1 = add_job(st, "officers");
	int64_t g2 = add_job(st, "graveler");
	int64_t id = 0;

	assert_int_equal(store_job_next_carvable(st, "[\"graveler\"]", NULL, &id), 0);
	assert_int_equal(id, g1);
	assert_int_equal(store_job_next_carvable(st,
		"[\"sudoku\",\"officers\"]", NULL, &id), 0);
	assert_int_equal(id, o1);
	/* Excluded jobs (waiting for results) are passed over. */
	char ex[32];
	snprintf(ex, sizeof(ex), "[%lld]", (long long)g1);
	assert_int_equal(store_job_next_carvable(st, "[\"graveler\"]", ex, &id), 0);
	assert_int_equal(id, g2);
	/* carve_done and paused jobs are skipped. */
	assert_int_equal(store_job_set_cursor(st, g1, "{}", 1), 0);
	assert_int_equal(store_job_next_carvable(st, "[\"graveler\"]", NULL, &id), 0);
	assert_int_equal(id, g2);
	assert_int_equal(store_job_set_state(st, g2, JOB_PAUSED, NULL, 1.0), 0);
	id = -1;
	assert_int_equal(store_job_next_carvable(st, "[\"graveler\"]", NULL, &id),
			 GERR_NOTFOUND);
	assert_int_equal(id, -1); /* ret_* untouched on failure */
	assert_int_equal(store_job_next_carvable(st, "[]", NULL, &id), GERR_NOTFOUND);
	assert_int_equal(store_job_next_carvable(st, "graveler", NULL, &id),
			 GERR_INVAL);
	assert_int_equal(store_job_next_carvable(st, "{\"a\":1}", NULL, &id),
			 GERR_INVAL);
	assert_int_equal(store_job_next_carvable(st, "[\"gr", NULL, &id), GERR_INVAL);
}

static void test_events(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	uint64_t n = 99;

	assert_int_equal(store_event_count(st, "claim", 0, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_event(st, 1.0, 1, 10, 1, 7, "claim", NULL), 0);
	assert_int_equal(store_event(st, 2.0, 1, 10, 1, 7, "expire",
				     "deadline"), 0);
	assert_int_equal(store_event(st, 3.0, 1, 10, 2, 8, "claim", NULL), 0);
	assert_int_equal(store_event(st, 4.0, 2, 11, 1, 8, "claim", NULL), 0);
	assert_int_equal(store_event(st, 4.0, 2, 11, 1, 8, NULL, NULL),
			 GERR_INVAL);
	assert_int_equal(store_event_count(st, "claim", 1, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(store_event_count(st, "claim", 0, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(store_event_count(st, "expire", 2, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_event_count(st, NULL, 0, &n), 0);
	assert_int_equal(n, 4);
}

FX_MAIN(T(test_jobs), T(test_job_next_carvable), T(test_events))
