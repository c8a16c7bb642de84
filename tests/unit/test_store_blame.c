/* test_store_blame.c - what gpud's store does with a lease the job's final
 * check blamed (issue 34): store_lease_unverify (verified -> pending, or
 * failed at --max-failures, its checkpoint dropped and its producer
 * recorded) and store_part_remove (the last part takes the hole's seq).
 * Fixture: store_fx.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gerr.h"
#include "store_fx.h"

/* The lease id of part seq of job. */
static int64_t part_lease(struct store *st, int64_t job, uint64_t seq)
{
	struct store_part p;
	int64_t id;

	assert_int_equal(store_part_get(st, job, seq, &p), 0);
	id = p.lease_id;
	store_part_clear(&p);
	return id;
}

static void test_unverify(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "liar"), w2 = add_worker(st, "honest");
	struct store_lease l = add_lease(st, job, w, 10), g;
	enum lease_state ns = LEASE_LEASED;

	assert_int_equal(store_lease_set_checkpoint(st, l.id, l.epoch, "c1", 4,
						    20.0, NULL), 0);
	assert_int_equal(store_lease_set_result(st, l.id, l.epoch, "r1", 10,
						30.0), 0);
	/* Only a verified lease at its epoch is blamed. */
	assert_int_equal(store_lease_unverify(st, l.id, l.epoch, "x", 3, 31.0,
					      &ns), GERR_STALE);
	assert_int_equal(store_lease_set_verified(st, l.id, l.epoch, 31.0), 0);
	assert_int_equal(store_lease_unverify(st, l.id, l.epoch + 1, "x", 3,
					      31.0, &ns), GERR_STALE);
	assert_int_equal(store_lease_unverify(st, l.id, l.epoch, "final check",
					      3, 32.0, &ns), 0);
	assert_int_equal(ns, LEASE_PENDING);
	get_lease(st, l.id, &g);
	assert_int_equal(g.state, LEASE_PENDING);
	assert_int_equal(g.failures, 1);
	assert_null(g.result);
	assert_null(g.checkpoint); /* the producer's: started afresh */
	assert_int_equal(g.checkpoint_units, 0);
	assert_int_equal(g.worker_id, 0);
	assert_str_or_null(g.last_error, "final check");
	store_lease_clear(&g);
	/* Never granted to its producer again; another worker takes it. */
	assert_int_equal(claim_id(st, w, NULL), 0);
	assert_int_equal(claim_id(st, w2, &g), l.id);
	assert_int_equal(g.units_done, 0);
	store_lease_clear(&g);
	store_lease_clear(&l);
}

static void test_unverify_fails_at_max(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "liar");
	int64_t id = add_verified_lease(st, job, w, 10);
	struct store_lease g;
	enum lease_state ns = LEASE_PENDING;

	get_lease(st, id, &g);
	assert_int_equal(store_lease_unverify(st, id, g.epoch, "final check", 1,
					      32.0, &ns), 0);
	assert_int_equal(ns, LEASE_FAILED);
	store_lease_clear(&g);
	get_lease(st, id, &g);
	assert_int_equal(g.state, LEASE_FAILED);
	store_lease_clear(&g);
}

static void test_part_remove(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler"), other = add_job(st, "graveler");
	int64_t w = add_worker(st, "w");
	int64_t id[4];
	uint64_t n = 0;

	for (int i = 0; i < 4; i++) {
		id[i] = add_verified_lease(st, job, w, 10);
		assert_int_equal(store_part_add(st, job, id[i], NULL), 0);
	}
	/* A lease of another job, or none, is no part of it. */
	assert_int_equal(store_part_remove(st, other, id[1]), GERR_NOTFOUND);
	assert_int_equal(store_part_remove(st, job, 9999), GERR_NOTFOUND);
	/* The hole at seq 1 is taken by the last part. */
	assert_int_equal(store_part_remove(st, job, id[1]), 0);
	assert_int_equal(store_part_count(st, job, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(part_lease(st, job, 0), id[0]);
	assert_int_equal(part_lease(st, job, 1), id[3]);
	assert_int_equal(part_lease(st, job, 2), id[2]);
	/* The last one leaves no hole. */
	assert_int_equal(store_part_remove(st, job, id[2]), 0);
	assert_int_equal(store_part_count(st, job, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(part_lease(st, job, 1), id[3]);
	/* A removed part's lease may be a part again once verified again. */
	assert_int_equal(store_part_add(st, job, id[1], NULL), 0);
	assert_int_equal(part_lease(st, job, 2), id[1]);
}

FX_MAIN(T(test_unverify), T(test_unverify_fails_at_max),
	T(test_part_remove))
