/* test_store_events.c - unit tests of daemon/store/store_events.c (the
 * event log read for the status page and /metrics; fixture: store_fx.h):
 * counts by kind from the whole log, then only the rows after the last
 * read, adding up to the same totals; verified and refuted results per
 * bucket with their units per workload; a job's newest events first; the
 * newest of gpud's own events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "store_events.h"
#include "store_fx.h"

static const char *const kinds[] = { "grant", "verified", "verify_failed", "submit" };

static void tally_init(struct store_event_tally *t)
{
	memset(t, 0, sizeof(*t));
	t->kinds = kinds;
	t->n_kinds = 4;
	t->since = 1000.0;
	t->bucket_s = 100.0;
	t->n_buckets = 5;
}

static void test_tally(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler"), w = add_worker(st, "w");
	int64_t l1 = add_verified_lease(st, job, w, 30);
	int64_t l2 = add_verified_lease(st, job, w, 12);
	struct store_event_tally t, again;

	/* Before the window, in buckets 0 and 4, after it; a refutation. */
	assert_int_equal(store_event(st, 900.0, job, l1, 1, w, "verified", NULL), 0);
	assert_int_equal(store_event(st, 1000.0, job, l1, 1, w, "verified", NULL), 0);
	assert_int_equal(store_event(st, 1450.0, job, l2, 1, w, "verified", NULL), 0);
	assert_int_equal(store_event(st, 1499.0, job, l2, 1, w, "verify_failed", "x"), 0);
	assert_int_equal(store_event(st, 1600.0, job, l2, 1, w, "verified", NULL), 0);
	assert_int_equal(store_event(st, 1001.0, job, 0, 0, 0, "other", NULL), 0);
	tally_init(&t);
	assert_int_equal(store_event_since(st, &t), 0);
	assert_true(t.whole);
	assert_int_equal(t.counts[1], 4);   /* verified, the window or not */
	assert_int_equal(t.counts[2], 1);
	assert_int_equal(t.verified[0], 1);
	assert_int_equal(t.verified[4], 1);
	assert_int_equal(t.verified[1] + t.verified[2] + t.verified[3], 0);
	assert_int_equal(t.refuted[4], 1);
	assert_int_equal(t.n_wl, 1);
	assert_string_equal(t.wl[0], "graveler");
	assert_int_equal(t.units[0][0], 30);
	assert_int_equal(t.units[0][4], 12);
	/* Nothing new: nothing added. */
	again = t;
	assert_int_equal(store_event_since(st, &again), 0);
	assert_memory_equal(&again, &t, sizeof(t));
	/* New rows only are added. */
	assert_int_equal(store_event(st, 1200.0, job, l1, 2, w, "grant", NULL), 0);
	assert_int_equal(store_event(st, 1210.0, job, l1, 2, w, "verified", NULL), 0);
	assert_int_equal(store_event_since(st, &again), 0);
	assert_int_equal(again.counts[0], t.counts[0] + 1);
	assert_int_equal(again.counts[1], 5);
	assert_int_equal(again.verified[2], 1);
	assert_int_equal(again.units[0][2], 30);
	assert_true(again.last_id > t.last_id);
	/* A bad tally is refused. */
	tally_init(&t);
	t.n_buckets = STORE_EVENTS_BUCKETS + 1;
	assert_int_equal(store_event_since(st, &t), GERR_INVAL);
}

static void test_list_last(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler"), other = add_job(st, "graveler");
	struct store_event_row *rows = NULL;
	size_t n = 0;
	double at = 0;
	char *detail = NULL;

	for (int i = 0; i < 5; i++)
		assert_int_equal(store_event(st, 10.0 + i, job, i, 1, 0, i % 2 ? "grant" : "result",
					     i == 4 ? "last" : NULL), 0);
	assert_int_equal(store_event(st, 20.0, other, 0, 0, 0, "submit", NULL), 0);
	assert_int_equal(store_event_list(st, job, 3, &rows, &n), 0);
	assert_int_equal(n, 3);
	assert_true(rows[0].id > rows[1].id && rows[1].id > rows[2].id);
	assert_string_equal(rows[0].kind, "result");
	assert_string_equal(rows[0].detail, "last");
	assert_null(rows[1].detail);
	assert_int_equal(rows[0].lease_id, 4);
	assert_true(rows[0].ts == 14.0);
	store_event_rows_free(rows, n);
	/* gpud's own: none yet, then the newest. */
	assert_int_equal(store_event_last(st, "check", &at, &detail), GERR_NOTFOUND);
	assert_int_equal(store_event(st, 30.0, 0, 0, 0, 0, "check", "sound"), 0);
	assert_int_equal(store_event(st, 40.0, 0, 0, 0, 0, "check", "problems found"), 0);
	assert_int_equal(store_event(st, 50.0, job, 0, 0, 0, "check", "a job's, not gpud's"), 0);
	assert_int_equal(store_event_last(st, "check", &at, &detail), 0);
	assert_true(at == 40.0);
	assert_string_equal(detail, "problems found");
	free(detail);
}

FX_MAIN(T(test_tally), T(test_list_last))
