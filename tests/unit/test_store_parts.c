/* test_store_parts.c - unit tests of daemon/store/store_parts.c and its
 * migration 003 (fixture: store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gerr.h"
#include "store_fx.h"

static uint64_t part_count(struct store *st, int64_t job)
{
	uint64_t n = 12345;

	assert_int_equal(store_part_count(st, job, &n), 0);
	return n;
}

/* Part seq of job is lease (spec and units as add_lease, result "r<id>")
 * with note (NULL for none). */
static void assert_part(struct store *st, int64_t job, uint64_t seq,
			int64_t lease, uint64_t units, const char *note)
{
	struct store_part p;
	char hash[32];

	snprintf(hash, sizeof(hash), "r%lld", (long long)lease);
	assert_int_equal(store_part_get(st, job, seq, &p), 0);
	assert_int_equal(p.lease_id, lease);
	assert_string_equal(p.spec, "{\"r\":[0,10]}");
	assert_int_equal(p.units, units);
	assert_string_equal(p.result, hash);
	assert_str_or_null(p.note, note);
	store_part_clear(&p);
}

static void test_parts_add_get(void **state)
{
	struct fx *f = *state;
	struct store *st = f->st;
	int64_t a = add_job(st, "graveler"), b = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1");
	int64_t a1 = add_verified_lease(st, a, w, 10);
	int64_t a2 = add_verified_lease(st, a, w, 20);
	int64_t b1 = add_verified_lease(st, b, w, 30);
	struct store_lease a3 = add_lease(st, a, w, 40);
	struct store_part keep = { .lease_id = -5 };

	assert_int_equal(part_count(st, a), 0);
	assert_int_equal(store_part_get(st, a, 0, &keep), GERR_NOTFOUND);

	/* Merge order, not lease order: a2 first. */
	assert_int_equal(store_part_add(st, a, a2, "{\"max\":7}"), 0);
	assert_int_equal(store_part_add(st, a, a1, NULL), 0);
	assert_int_equal(part_count(st, a), 2);
	assert_int_equal(part_count(st, b), 0);
	assert_int_equal(part_count(st, 999), 0);
	assert_part(st, a, 0, a2, 20, "{\"max\":7}");
	assert_part(st, a, 1, a1, 10, NULL);

	/* Past the end; ret untouched. */
	assert_int_equal(store_part_get(st, a, 2, &keep), GERR_NOTFOUND);
	assert_non_null(strstr(store_errmsg(st), "no part 2"));
	assert_int_equal(store_part_get(st, a, UINT64_MAX, &keep),
			 GERR_NOTFOUND);
	assert_int_equal(store_part_get(st, 999, 0, &keep), GERR_NOTFOUND);
	assert_int_equal(keep.lease_id, -5);
	assert_null(keep.spec);

	/* A lease is a part once. */
	assert_int_equal(store_part_add(st, a, a2, NULL), GERR_STATE);
	assert_non_null(strstr(store_errmsg(st), "already"));
	assert_int_equal(store_part_add(st, a, a1, "{}"), GERR_STATE);
	/* Only a verified lease of the job. */
	assert_int_equal(store_part_add(st, a, a3.id, NULL), GERR_STATE);
	assert_non_null(strstr(store_errmsg(st), "leased"));
	assert_int_equal(store_lease_set_result(st, a3.id, 1, "r-a3", 40, 40.0),
			 0);
	assert_int_equal(store_part_add(st, a, a3.id, NULL), GERR_STATE);
	assert_non_null(strstr(store_errmsg(st), "done"));
	assert_int_equal(store_part_add(st, a, b1, NULL), GERR_INVAL);
	assert_int_equal(store_part_add(st, 999, a1, NULL), GERR_INVAL);
	assert_int_equal(store_part_add(st, a, 999, NULL), GERR_NOTFOUND);
	/* The note is JSON or NULL. */
	assert_int_equal(store_part_add(st, b, b1, "{oops"), GERR_INVAL);
	assert_int_equal(part_count(st, a), 2);
	assert_int_equal(part_count(st, b), 0);

	assert_int_equal(store_part_add(st, b, b1, "[1,2]"), 0);
	assert_int_equal(part_count(st, b), 1);
	assert_part(st, b, 0, b1, 30, "[1,2]");

	assert_int_equal(store_part_count(st, a, NULL), GERR_INVAL);
	assert_int_equal(store_part_get(st, a, 0, NULL), GERR_INVAL);
	store_part_clear(NULL);

	/* Durable, and still in order. */
	reopen(f);
	st = f->st;
	assert_int_equal(part_count(st, a), 2);
	assert_part(st, a, 0, a2, 20, "{\"max\":7}");
	assert_part(st, a, 1, a1, 10, NULL);
	assert_part(st, b, 0, b1, 30, "[1,2]");
	store_lease_clear(&a3);
}

/* A rejected lease is no part (its result is cleared); verified on a
 * later attempt, it is, with the new result. */
static void test_parts_after_reject(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1"), w2 = add_worker(st, "w2");
	struct store_lease l = add_lease(st, job, w, 10), g;
	char hash[32];

	assert_int_equal(store_lease_set_result(st, l.id, 1, "bad", 10, 1.0),
			 0);
	assert_int_equal(store_lease_reject(st, l.id, 1, "wrong", 3, 2.0,
					    NULL), 0);
	assert_int_equal(store_part_add(st, job, l.id, NULL), GERR_STATE);
	assert_int_equal(store_lease_claim_pending(st, w2, "[\"graveler\"]",
						   100.0, 3.0, &g), 0);
	assert_int_equal(g.id, l.id);
	snprintf(hash, sizeof(hash), "r%lld", (long long)l.id);
	assert_int_equal(store_lease_set_result(st, l.id, 2, hash, 10, 4.0), 0);
	assert_int_equal(store_lease_set_verified(st, l.id, 2, 5.0), 0);
	assert_int_equal(store_part_add(st, job, l.id, "{\"n\":1}"), 0);
	assert_part(st, job, 0, l.id, 10, "{\"n\":1}");
	store_lease_clear(&g);
	store_lease_clear(&l);
}

/* Transactions undo a part; extending or cancelling the job keeps them. */
static void test_parts_tx_extend_cancel(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1");
	int64_t l1 = add_verified_lease(st, job, w, 10);
	int64_t l2 = add_verified_lease(st, job, w, 10);
	int64_t pend = add_pending(st, job, w);
	struct store_job j;

	assert_int_equal(store_part_add(st, job, l1, NULL), 0);
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_part_add(st, job, l2, NULL), 0);
	assert_int_equal(part_count(st, job), 2);
	store_rollback(st);
	assert_int_equal(part_count(st, job), 1);
	/* Inside a batch, a failing add undoes only itself. */
	assert_int_equal(store_batch_begin(st), 0);
	assert_int_equal(store_part_add(st, job, l1, NULL), GERR_STATE);
	assert_int_equal(store_part_add(st, job, l2, "{}"), 0);
	assert_int_equal(store_batch_commit(st), 0);
	assert_int_equal(part_count(st, job), 2);
	assert_part(st, job, 1, l2, 10, "{}");

	assert_int_equal(store_job_set_state(st, job, JOB_DONE, NULL, 50.0), 0);
	assert_int_equal(store_job_extend(st, job, "{\"n\":200}", 200), 0);
	assert_int_equal(part_count(st, job), 2);
	assert_part(st, job, 0, l1, 10, NULL);
	assert_int_equal(store_job_cancel_leases(st, job, 60.0), 0);
	assert_int_equal(store_job_set_state(st, job, JOB_CANCELLED, "user",
					     60.0), 0);
	assert_int_equal(store_job_get(st, job, &j), 0);
	assert_int_equal(j.state, JOB_CANCELLED);
	store_job_clear(&j);
	assert_int_equal(part_count(st, job), 2);
	assert_part(st, job, 0, l1, 10, NULL);
	assert_part(st, job, 1, l2, 10, "{}");
	assert_int_equal(store_part_add(st, job, pend, NULL), GERR_STATE);
}

/* Migration 003 on a database from before it: each job's verified leases
 * become its parts in lease id order (not verification order), without
 * notes; other leases do not. */
static void test_parts_migration(void **state)
{
	struct fx *f = *state;
	struct store *st;
	int64_t a, b, w, a1, b1, a2, a3, b2, a4, a5;
	struct store_lease l;
	uint64_t n = 77;
	char hash[32];

	open_old(f, 2);
	st = f->st;
	a = add_job(st, "graveler");
	b = add_job(st, "officers");
	w = add_worker(st, "w1");
	l = add_lease(st, a, w, 11); /* verified last, below */
	a1 = l.id;
	store_lease_clear(&l);
	b1 = add_verified_lease(st, b, w, 12);
	l = add_lease(st, a, w, 13); /* done, not verified */
	a2 = l.id;
	snprintf(hash, sizeof(hash), "r%lld", (long long)a2);
	assert_int_equal(store_lease_set_result(st, a2, 1, hash, 13, 32.0), 0);
	store_lease_clear(&l);
	a3 = add_verified_lease(st, a, w, 14);
	b2 = add_verified_lease(st, b, w, 15);
	a4 = add_verified_lease(st, a, w, 16);
	/* Pending, no result (as a rejected one; a reject itself records its
	 * producer in migration 007's table, which this schema lacks). */
	l = add_lease(st, a, w, 17);
	a5 = l.id;
	assert_int_equal(store_lease_release(st, a5, 1, 34.0), 0);
	store_lease_clear(&l);
	snprintf(hash, sizeof(hash), "r%lld", (long long)a1);
	assert_int_equal(store_lease_set_result(st, a1, 1, hash, 11, 35.0), 0);
	assert_int_equal(store_lease_set_verified(st, a1, 1, 36.0), 0);
	/* Version 2 has no parts table. */
	assert_int_equal(store_part_count(st, a, &n), GERR_DB);
	assert_int_equal(n, 77);
	assert_int_equal(store_part_add(st, a, a3, NULL), GERR_DB);

	reopen(f); /* applies 003 */
	st = f->st;
	assert_int_equal(part_count(st, a), 3);
	assert_part(st, a, 0, a1, 11, NULL);
	assert_part(st, a, 1, a3, 14, NULL);
	assert_part(st, a, 2, a4, 16, NULL);
	assert_int_equal(part_count(st, b), 2);
	assert_part(st, b, 0, b1, 12, NULL);
	assert_part(st, b, 1, b2, 15, NULL);
	assert_int_equal(store_part_add(st, a, a3, NULL), GERR_STATE);
	assert_int_equal(store_part_add(st, a, a2, NULL), GERR_STATE);
	assert_int_equal(store_part_add(st, a, a5, NULL), GERR_STATE);
	/* Merging goes on after the migrated parts. */
	assert_int_equal(store_lease_set_verified(st, a2, 1, 37.0), 0);
	assert_int_equal(store_part_add(st, a, a2, "{\"late\":true}"), 0);
	assert_int_equal(part_count(st, a), 4);
	assert_part(st, a, 3, a2, 13, "{\"late\":true}");

	/* Applied once: reopening adds nothing. */
	reopen(f);
	assert_int_equal(part_count(f->st, a), 4);
	assert_int_equal(part_count(f->st, b), 2);
	assert_part(f->st, a, 0, a1, 11, NULL);
}

FX_MAIN(T(test_parts_add_get), T(test_parts_after_reject),
	T(test_parts_tx_extend_cancel), T(test_parts_migration))
