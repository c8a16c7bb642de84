/* test_store_refail.c - a lease that failed on a worker (its result failed
 * verification, or its run failed there) is never granted to that worker
 * again, across a reopen (daemon/store/store_leases.c, migration 007; fixture:
 * store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gerr.h"
#include "store_fx.h"

static void waiting_is(struct store *st, int64_t job, uint64_t n,
		       uint64_t failed)
{
	uint64_t w = 99, f = 99;

	assert_int_equal(store_replica_waiting(st, job, &w), 0);
	assert_int_equal(store_lease_failed_waiting(st, job, &f), 0);
	assert_int_equal(w, n);
	assert_int_equal(f, failed);
}

/* A rejected result's producer never gets the lease again, nor does the
 * next worker whose run of it failed; a third worker does. */
static void test_failed_by_not_granted(void **state)
{
	struct fx *f = *state;
	int64_t job = add_job(f->st, "graveler");
	int64_t w1 = add_worker(f->st, "w1"), w2 = add_worker(f->st, "w2");
	int64_t w3 = add_worker(f->st, "w3");
	struct store_lease l = add_lease(f->st, job, w1, 10), g = {0};
	enum lease_state ns = LEASE_FAILED;

	assert_int_equal(store_lease_set_result(f->st, l.id, l.epoch, "h1", 10,
						30.0), 0);
	waiting_is(f->st, job, 0, 0);
	assert_int_equal(store_lease_reject(f->st, l.id, l.epoch, "bad", 5,
					    31.0, &ns), 0);
	assert_int_equal(ns, LEASE_PENDING);
	waiting_is(f->st, job, 1, 1);
	assert_int_equal(claim_id(f->st, w1, NULL), 0);
	reopen(f);
	assert_int_equal(claim_id(f->st, w1, NULL), 0);
	waiting_is(f->st, job, 1, 1);
	assert_int_equal(claim_id(f->st, w2, &g), l.id);
	assert_int_equal(g.worker_id, w2);
	assert_int_equal(store_lease_run_failed(f->st, g.id, g.epoch, "oom", 5,
						41.0, &ns), 0);
	assert_int_equal(ns, LEASE_PENDING);
	store_lease_clear(&g);
	reopen(f);
	assert_int_equal(claim_id(f->st, w1, NULL), 0);
	assert_int_equal(claim_id(f->st, w2, NULL), 0);
	assert_int_equal(claim_id(f->st, w3, NULL), l.id);
	waiting_is(f->st, job, 0, 0);
	store_lease_clear(&l);
}

/* A job's lease held by worker "w1", whose run failed at the lease's epoch
 * + skew: the store answers want. */
struct failed_run {
	int64_t job, w1;
	struct store_lease l;
};

static void fail_run(struct fx *f, struct failed_run *o, uint64_t skew,
		     int want)
{
	o->job = add_job(f->st, "graveler");
	o->w1 = add_worker(f->st, "w1");
	o->l = add_lease(f->st, o->job, o->w1, 10);
	assert_int_equal(store_lease_run_failed(f->st, o->l.id,
						o->l.epoch + skew, "oom", 5,
						31.0, NULL), want);
}

/* Only the failed lease is kept from its worker: another pending lease of
 * the same job is still granted to it. */
static void test_other_leases_granted(void **state)
{
	struct fx *f = *state;
	struct failed_run o;
	int64_t other;

	fail_run(f, &o, 0, 0);
	other = add_pending(f->st, o.job, o.w1);
	waiting_is(f->st, o.job, 1, 1);
	assert_int_equal(claim_id(f->st, o.w1, NULL), other);
	assert_int_equal(claim_id(f->st, o.w1, NULL), 0);
	store_lease_clear(&o.l);
}

/* A stale failure (wrong epoch) records no one: the worker may still take
 * the lease once it is pending again. */
static void test_stale_failure_records_no_one(void **state)
{
	struct fx *f = *state;
	struct failed_run o;

	fail_run(f, &o, 1, GERR_STALE);
	assert_int_equal(store_lease_release(f->st, o.l.id, o.l.epoch, 32.0),
			 0);
	waiting_is(f->st, o.job, 0, 0);
	assert_int_equal(claim_id(f->st, o.w1, NULL), o.l.id);
	store_lease_clear(&o.l);
}

FX_MAIN(T(test_failed_by_not_granted), T(test_other_leases_granted),
	T(test_stale_failure_records_no_one))
