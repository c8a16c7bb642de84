/* test_job_parts.c - daemon/sched/job_parts.c: a job's verified leases as
 * the wl_parts workload hooks read, in both forms. Live: the count taken
 * at open, each get one lookup, past the end GERR_NOTFOUND. Loaded: every
 * part read at once and readable with the store closed. Notes of any JSON
 * type, a spec that is no object GERR_CORRUPT, and clear safe on a zeroed or
 * cleared struct (fixture: store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gerr.h"
#include "job_parts.h"
#include "store_fx.h"
#include "unit_main.h"

/* Part k of jp is lease with units and note (JSON text, NULL for none). */
static void assert_part(struct job_parts *jp, uint64_t k, int64_t lease,
			uint64_t units, const char *note)
{
	struct wl_part p;
	json_t *want;
	char hash[32];

	memset(&p, 0, sizeof(p));
	assert_int_equal(jp->pub.get(jp->pub.opaque, k, &p), 0);
	snprintf(hash, sizeof(hash), "r%lld", (long long)lease);
	assert_string_equal(p.result_hash, hash);
	assert_int_equal(p.units, units);
	/* add_lease's spec, parsed. */
	assert_true(json_is_object(p.spec));
	want = json_loads("{\"r\":[0,10]}", 0, NULL);
	assert_true(json_equal(p.spec, want));
	json_decref(want);
	if (!note) {
		assert_null(p.note);
		return;
	}
	want = json_loads(note, JSON_DECODE_ANY, NULL);
	assert_non_null(p.note);
	assert_true(json_equal(p.note, want));
	json_decref(want);
}

/* Job a with three verified parts in merge order l2, l1, l3; job b with
 * none. */
struct setup {
	int64_t a, b, l1, l2, l3;
};

static struct setup three_parts(struct store *st)
{
	struct setup s;
	int64_t w = add_worker(st, "w1");

	s.a = add_job(st, "graveler");
	s.b = add_job(st, "graveler");
	s.l1 = add_verified_lease(st, s.a, w, 10);
	s.l2 = add_verified_lease(st, s.a, w, 20);
	s.l3 = add_verified_lease(st, s.a, w, 30);
	assert_int_equal(store_part_add(st, s.a, s.l2, "{\"max\":7}"), 0);
	assert_int_equal(store_part_add(st, s.a, s.l1, NULL), 0);
	assert_int_equal(store_part_add(st, s.a, s.l3, "[1,2,3]"), 0);
	return s;
}

static void test_live(void **state)
{
	struct fx *f = *state;
	struct setup s = three_parts(f->st);
	struct job_parts jp;
	struct wl_part p;
	int64_t w2 = add_worker(f->st, "w2");

	assert_int_equal(job_parts_open(&jp, f->st, s.a), 0);
	assert_int_equal(jp.pub.n, 3);
	assert_ptr_equal(jp.pub.opaque, &jp);
	assert_ptr_equal(jp.st, f->st);
	/* In merge order, any order of gets, again and again. */
	assert_part(&jp, 2, s.l3, 30, "[1,2,3]");
	assert_part(&jp, 0, s.l2, 20, "{\"max\":7}");
	assert_part(&jp, 1, s.l1, 10, NULL);
	assert_part(&jp, 0, s.l2, 20, "{\"max\":7}");
	assert_int_equal(jp.pub.get(jp.pub.opaque, 3, &p), GERR_NOTFOUND);
	assert_int_equal(jp.pub.get(jp.pub.opaque, UINT64_MAX, &p), GERR_NOTFOUND);
	/* The count is the one taken at open: a part added since is not
	 * seen until the next open. */
	int64_t l4 = add_verified_lease(f->st, s.a, w2, 40);
	assert_int_equal(store_part_add(f->st, s.a, l4, "4"), 0);
	assert_int_equal(jp.pub.get(jp.pub.opaque, 3, &p), GERR_NOTFOUND);
	job_parts_clear(&jp);
	assert_int_equal(job_parts_open(&jp, f->st, s.a), 0);
	assert_int_equal(jp.pub.n, 4);
	assert_part(&jp, 3, l4, 40, "4");
	job_parts_clear(&jp);
	/* A job without parts, and one that does not exist. */
	assert_int_equal(job_parts_open(&jp, f->st, s.b), 0);
	assert_int_equal(jp.pub.n, 0);
	assert_int_equal(jp.pub.get(jp.pub.opaque, 0, &p), GERR_NOTFOUND);
	job_parts_clear(&jp);
	assert_int_equal(job_parts_open(&jp, f->st, 999), 0);
	assert_int_equal(jp.pub.n, 0);
	job_parts_clear(&jp);
}

static void test_loaded(void **state)
{
	struct fx *f = *state;
	struct setup s = three_parts(f->st);
	struct job_parts jp, empty;
	struct wl_part p;

	assert_int_equal(job_parts_load(&jp, f->st, s.a), 0);
	assert_int_equal(jp.pub.n, 3);
	assert_null(jp.st); /* loaded: no store kept */
	assert_non_null(jp.loaded);
	/* The store closed and opened again: the parts are in memory. */
	reopen(f);
	assert_part(&jp, 1, s.l1, 10, NULL);
	assert_part(&jp, 2, s.l3, 30, "[1,2,3]");
	assert_part(&jp, 0, s.l2, 20, "{\"max\":7}");
	assert_int_equal(jp.pub.get(jp.pub.opaque, 3, &p), GERR_NOTFOUND);
	job_parts_clear(&jp);
	assert_int_equal(jp.pub.n, 0);
	assert_null(jp.loaded);
	/* None: nothing allocated. */
	assert_int_equal(job_parts_load(&empty, f->st, s.b), 0);
	assert_int_equal(empty.pub.n, 0);
	assert_null(empty.loaded);
	assert_int_equal(empty.pub.get(empty.pub.opaque, 0, &p), GERR_NOTFOUND);
	job_parts_clear(&empty);
}

static void test_same_in_both(void **state)
{
	struct fx *f = *state;
	struct setup s = three_parts(f->st);
	struct job_parts live, loaded;

	assert_int_equal(job_parts_open(&live, f->st, s.a), 0);
	assert_int_equal(job_parts_load(&loaded, f->st, s.a), 0);
	assert_int_equal(live.pub.n, loaded.pub.n);
	for (uint64_t k = 0; k < live.pub.n; k++) {
		struct wl_part a, b;

		assert_int_equal(live.pub.get(live.pub.opaque, k, &a), 0);
		assert_int_equal(loaded.pub.get(loaded.pub.opaque, k, &b), 0);
		assert_string_equal(a.result_hash, b.result_hash);
		assert_int_equal(a.units, b.units);
		assert_true(json_equal(a.spec, b.spec));
		assert_true(a.note ? json_equal(a.note, b.note) : !b.note);
	}
	job_parts_clear(&live);
	job_parts_clear(&loaded);
}

/* The store checks its JSON columns with json_valid, so a note or spec it
 * holds is JSON; but a spec that is a bare scalar passes that check and
 * is no spec for job_parts (json_loads without JSON_DECODE_ANY). */
static void test_corrupt(void **state)
{
	struct fx *f = *state;
	int64_t job = add_job(f->st, "graveler"), w = add_worker(f->st, "w");
	int64_t l2 = add_verified_lease(f->st, job, w, 6);
	struct store_lease l;
	struct job_parts jp;
	struct wl_part p;
	char hash[32];

	/* The store refuses a note that is not JSON itself. */
	assert_true(store_part_add(f->st, job, l2, "{not json") < 0);
	assert_int_equal(store_lease_insert_leased(f->st, job, "7", 5, w, 1000.0,
						   20.0, &l), 0);
	snprintf(hash, sizeof(hash), "r%lld", (long long)l.id);
	assert_int_equal(store_lease_set_result(f->st, l.id, l.epoch, hash, 5,
						30.0), 0);
	assert_int_equal(store_lease_set_verified(f->st, l.id, l.epoch, 31.0), 0);
	assert_int_equal(store_part_add(f->st, job, l.id, NULL), 0);
	assert_int_equal(store_part_add(f->st, job, l2, "\"fine\""), 0);
	store_lease_clear(&l);
	assert_int_equal(job_parts_open(&jp, f->st, job), 0);
	assert_int_equal(jp.pub.n, 2);
	assert_int_equal(jp.pub.get(jp.pub.opaque, 0, &p), GERR_CORRUPT);
	/* The next part is still readable, and the bad one stays bad. */
	assert_part(&jp, 1, l2, 6, "\"fine\"");
	assert_int_equal(jp.pub.get(jp.pub.opaque, 0, &p), GERR_CORRUPT);
	job_parts_clear(&jp);
	/* Loaded: the load succeeds (text only); the get fails. */
	assert_int_equal(job_parts_load(&jp, f->st, job), 0);
	assert_int_equal(jp.pub.get(jp.pub.opaque, 0, &p), GERR_CORRUPT);
	assert_part(&jp, 1, l2, 6, "\"fine\"");
	job_parts_clear(&jp);
}

static void test_clear(void **state)
{
	struct fx *f = *state;
	struct job_parts jp;

	/* Zeroed, then cleared twice. */
	memset(&jp, 0, sizeof(jp));
	job_parts_clear(&jp);
	job_parts_clear(&jp);
	/* After a get, everything it held goes (the sanitizer build checks
	 * that nothing leaks). */
	struct setup s = three_parts(f->st);
	assert_int_equal(job_parts_open(&jp, f->st, s.a), 0);
	assert_part(&jp, 0, s.l2, 20, "{\"max\":7}");
	job_parts_clear(&jp);
	assert_null(jp.spec);
	assert_null(jp.note);
	assert_int_equal(jp.pub.n, 0);
	job_parts_clear(&jp);
}

UNIT_MAIN(T(test_live),
	T(test_loaded),
	T(test_same_in_both),
	T(test_corrupt),
	T(test_clear))
