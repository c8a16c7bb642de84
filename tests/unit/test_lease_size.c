/* test_lease_size.c - a lease is sized for the fleet (sched_claim.c's
 * lease_want, store_rates.c): the worker's share of what is left over the
 * workers that may take it, weighted by the rates gpud measured per
 * worker and workload, between --lease-min-seconds and --lease-seconds of
 * the worker's work; an equal share capped by the planner's default
 * before a rate is known; rates from verified work only; and the grace
 * leases get when gpud starts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "clock.h"
#include "gerr.h"
#include "sched_fx.h"
#include "scheduler.h"
#include "unit_main.h"

#define BATTLES (1ull << 30)

struct fx {
	char dir[64];
	struct store *st;
	struct sched_policy pol;
	json_t *params;
	int64_t job, w1, w2;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	double now = gclock_wall();

	sched_fx_open(f->dir, "size", &f->st);
	f->pol = (struct sched_policy){.lease_target_s = 300, .lease_min_s = 5,
		.lease_timeout_s = 30, .max_failures = 2, .quarantine_after = 5,
		.data_dir = f->dir};
	f->job = sched_fx_graveler(f->st, "1073741824", "7", &f->params);
	assert_int_equal(store_worker_upsert(f->st, "w1", "", "cpu", now, &f->w1), 0);
	assert_int_equal(store_worker_upsert(f->st, "w2", "", "cpu", now, &f->w2), 0);
	assert_int_equal(store_rate_register(f->st, f->w1,
			 "[\"graveler\",\"officers\"]", now), 0);
	assert_int_equal(store_rate_register(f->st, f->w2, "[\"graveler\"]",
					     now), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	sched_fx_close(f->dir, f->st, f->params);
	free(f);
	return 0;
}

/* The units of the lease worker gets (it must get one). */
static uint64_t claim_units(struct fx *f, int64_t worker)
{
	struct sched_claim c = {0};
	uint64_t units;

	c.pol = &f->pol;
	c.worker_id = worker;
	c.workloads_json = strdup("[\"graveler\",\"officers\"]");
	sched_claim(f->st, &c);
	assert_int_equal(c.rc, 0);
	units = c.lease.units;
	sched_claim_clear(&c);
	return units;
}

/* gpud measured rate for worker in job. */
static void note(struct fx *f, int64_t worker, int64_t job, double rate)
{
	assert_int_equal(store_rate_note(f->st, worker, job, rate, 1,
					 gclock_wall()), 0);
}

/* Nobody measured yet: an equal share of the job (the planner's default
 * of 2^32 battles would be the whole job) for each; what the first holds
 * still counts as left, so the second gets as much. */
static void test_probe_is_an_equal_share(void **state)
{
	struct fx *f = *state;

	assert_int_equal(claim_units(f, f->w1), BATTLES / 2);
	assert_int_equal(claim_units(f, f->w2), BATTLES / 2);
}

/* A job larger than the planner's default (2^32 battles): the probe is
 * that default shared by the fleet, so that a CPU's first lease beside a
 * GPU's is short. */
static void test_probe_shares_the_default(void **state)
{
	struct fx *f = *state;
	json_t *big = NULL;

	assert_int_equal(store_job_set_state(f->st, f->job, JOB_CANCELLED,
					     "test", gclock_wall()), 0);
	(void)sched_fx_graveler(f->st, "1000000000000", "9", &big);
	assert_int_equal(claim_units(f, f->w1), 1ull << 31);
	json_decref(big);
}

/* Measured rates weigh the shares: 1 and 3 M battles/s split 2^30 as a
 * quarter and three quarters. */
static void test_share_by_rate(void **state)
{
	struct fx *f = *state;

	note(f, f->w1, f->job, 1e6);
	note(f, f->w2, f->job, 3e6);
	assert_int_equal(claim_units(f, f->w1), BATTLES / 4);
	assert_int_equal(claim_units(f, f->w2), BATTLES / 4 * 3);
}

/* --lease-seconds caps a fast worker's lease; --lease-min-seconds keeps a
 * worker's share from shrinking to nothing while some of the fleet is not
 * measured (counted at the mean); with every rate known a share below it
 * means the job is ending, and is kept, so that a slow worker beside a
 * fast one is no tail. */
static void test_bounds_in_seconds(void **state)
{
	struct fx *f = *state;
	double now = gclock_wall();
	int64_t w3 = 0;
	uint64_t u;

	note(f, f->w1, f->job, 1e6);
	note(f, f->w2, f->job, 1e10);
	u = claim_units(f, f->w1); /* share 1.07e5: the fleet ends in 0.1 s */
	assert_true(u == 1u << 20); /* the planner's least lease */
	assert_int_equal(store_worker_upsert(f->st, "w3", "", "cpu", now, &w3), 0);
	assert_int_equal(store_rate_register(f->st, w3, "[\"graveler\"]", now),
			 0);
	u = claim_units(f, f->w1); /* w3 counts at the mean: the floor */
	assert_true(u >= 5000000 && u < 5000000 + 256);
	f->pol.lease_target_s = 0.01;
	u = claim_units(f, f->w2); /* 0.01 s of 1e10 battles/s */
	assert_true(u >= 100000000 && u < 100000000 + 256);
}

/* A rate measured in one job, of this workload or another, never sizes
 * another job's lease: a workload's units cost what each job makes them
 * cost. */
static void test_rate_per_job(void **state)
{
	struct fx *f = *state;
	json_t *other = NULL;
	int64_t job2 = sched_fx_graveler(f->st, "1024", "8", &other);
	struct store_job j = {0};
	double r = -1;

	assert_int_equal(store_job_get(f->st, job2, &j), 0);
	note(f, f->w1, job2, 1e12);
	assert_int_equal(store_rate_get(f->st, f->w1, f->job, &r), 0);
	assert_true(r == 0);
	/* job2 is the later one: claims take f->job first. */
	assert_int_equal(claim_units(f, f->w1), BATTLES / 2);
	store_job_clear(&j);
	json_decref(other);
}

/* Workers that are offline (and not seen lately) or quarantined are not
 * in the fleet: the one left gets all that is left. */
static void test_fleet_is_who_can_take_it(void **state)
{
	struct fx *f = *state;
	struct store_fleet fl = {0};
	double now = gclock_wall();

	assert_int_equal(store_worker_set_online(f->st, f->w2, 0, now - 3600), 0);
	assert_int_equal(store_rate_fleet(f->st, "graveler", f->job, now - 60, &fl), 0);
	assert_int_equal(fl.workers, 1);
	assert_int_equal(claim_units(f, f->w1), BATTLES);
}

/* A worker counts in the fleet from its first claim, even one that got
 * nothing (no job yet): the job submitted next is shared with it. */
static void test_claim_without_lease_joins_fleet(void **state)
{
	struct fx *f = *state;
	struct sched_claim c = {0};
	struct store_fleet fl = {0};
	double now = gclock_wall();
	int64_t w3 = 0;

	assert_int_equal(store_job_set_state(f->st, f->job, JOB_CANCELLED,
					     "test", now), 0);
	assert_int_equal(store_worker_upsert(f->st, "w3", "", "cpu", now, &w3), 0);
	c.pol = &f->pol;
	c.worker_id = w3;
	c.workloads_json = strdup("[\"graveler\"]");
	sched_claim(f->st, &c);
	assert_int_equal(c.rc, GERR_NOTFOUND);
	sched_claim_clear(&c);
	assert_int_equal(store_rate_fleet(f->st, "graveler", f->job, now - 60, &fl), 0);
	assert_int_equal(fl.workers, 3);
}

/* The rate gpud measures: units since the grant over the time since it,
 * from the lease's own row, never from what the worker says; noted only
 * when the lease is verified (store_rates.c invariant 1). */
static void test_rate_from_the_grant(void **state)
{
	struct fx *f = *state;
	struct store_lease l = {0};
	double now = gclock_wall(), r = 0;

	assert_int_equal(store_lease_insert_leased(f->st, f->job,
			 "{\"begin\":0,\"end\":1000000}", 1000000, f->w1,
			 now + 60, now - 4, &l), 0);
	assert_int_equal(store_lease_set_result(f->st, l.id, l.epoch,
			 "00", 1000000, now - 2), 0);
	assert_int_equal(store_rate_result(f->st, l.id, l.epoch, 400000,
					   now), 0);
	/* A result not verified yet sizes nothing. */
	assert_int_equal(store_rate_get(f->st, f->w1, f->job, &r), 0);
	assert_true(r == 0);
	assert_int_equal(store_lease_set_verified(f->st, l.id, l.epoch, now),
			 0);
	assert_int_equal(store_rate_get(f->st, f->w1, f->job, &r), 0);
	assert_true(r > 99000 && r < 101000);
	store_lease_clear(&l);
}

/* A result too soon after its grant to tell notes nothing, verified or
 * not. */
static void test_rate_too_soon(void **state)
{
	struct fx *f = *state;
	struct store_lease l = {0};
	double now = gclock_wall(), r = 0;

	assert_int_equal(store_lease_insert_leased(f->st, f->job,
			 "{\"begin\":0,\"end\":1000}", 1000, f->w2,
			 now + 60, now, &l), 0);
	assert_int_equal(store_lease_set_result(f->st, l.id, l.epoch, "00",
						1000, now + 0.005), 0);
	assert_int_equal(store_rate_result(f->st, l.id, l.epoch, 1000,
					   now + 0.005), 0);
	assert_int_equal(store_lease_set_verified(f->st, l.id, l.epoch, now),
			 0);
	assert_int_equal(store_rate_get(f->st, f->w2, f->job, &r), 0);
	assert_true(r == 0);
	store_lease_clear(&l);
}

/* A checkpoint's progress, which nothing checks, notes nothing before a
 * verified rate, may lower the rate and never raises it above the
 * verified one (invariant 2): an inflated checkpoint sizes nothing. */
static void test_checkpoint_never_raises(void **state)
{
	struct fx *f = *state;
	struct store_lease l = {0};
	double now = gclock_wall(), r = 0, own = 0, slowest = 0;

	assert_int_equal(store_lease_insert_leased(f->st, f->job,
			 "{\"begin\":0,\"end\":1000000}", 1000000, f->w1,
			 now + 60, now - 1, &l), 0);
	/* 1e6 units in a second claimed: nothing noted. */
	assert_int_equal(store_rate_checkpoint(f->st, l.id, l.epoch, f->w1,
					       1000000, now), 0);
	assert_int_equal(store_rate_get(f->st, f->w1, f->job, &r), 0);
	assert_true(r == 0);
	note(f, f->w1, f->job, 1000);
	assert_int_equal(store_rate_checkpoint(f->st, l.id, l.epoch, f->w1,
					       1000000, now), 0);
	assert_int_equal(store_rate_get(f->st, f->w1, f->job, &r), 0);
	assert_true(r == 1000);
	/* A slow one lowers it: 100 units/s blended in by half. */
	assert_int_equal(store_rate_checkpoint(f->st, l.id, l.epoch, f->w1,
					       100, now), 0);
	assert_int_equal(store_rate_get(f->st, f->w1, f->job, &r), 0);
	assert_true(r > 549 && r < 551);
	assert_int_equal(store_rate_expect(f->st, f->w1, f->job, &own,
					   &slowest), 0);
	assert_true(own == 1000 && slowest == 1000);
	assert_int_equal(store_rate_expect(f->st, f->w2, f->job, &own,
					   &slowest), 0);
	assert_true(own == 0 && slowest == 1000);
	store_lease_clear(&l);
}

/* At start, a held lease lives at least one lease timeout more, and the
 * time gpud was down is no lack of progress. */
static void test_grace_at_start(void **state)
{
	struct fx *f = *state;
	struct store_lease l = {0}, got = {0};
	double now = gclock_wall();

	assert_int_equal(store_lease_insert_leased(f->st, f->job,
			 "{\"begin\":0,\"end\":1000000}", 1000000, f->w1,
			 now - 100, now - 200, &l), 0);
	assert_int_equal(store_lease_grace(f->st, now, now + 30), 0);
	assert_int_equal(store_lease_get(f->st, l.id, &got), 0);
	assert_true(got.deadline >= now + 30);
	assert_int_equal(got.state, LEASE_LEASED);
	store_lease_clear(&l);
	store_lease_clear(&got);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
UNIT_MAIN(T(test_probe_is_an_equal_share), T(test_probe_shares_the_default),
	  T(test_share_by_rate),
	  T(test_bounds_in_seconds), T(test_rate_per_job),
	  T(test_fleet_is_who_can_take_it),
	  T(test_claim_without_lease_joins_fleet), T(test_rate_from_the_grant),
	  T(test_rate_too_soon), T(test_checkpoint_never_raises),
	  T(test_grace_at_start))
