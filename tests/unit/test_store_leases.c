/* test_store_leases.c - unit tests of daemon/store/store_leases.c and
 * store_lease_rows.c: lease rows, the state machine, epochs, expiry,
 * rejection, cancel (fixture: store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "store_fx.h"

/* ---- leases ---- */

static void test_lease_life_cycle(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1");
	struct store_lease l = add_lease(st, job, w, 10), g;
	uint64_t counts[LEASE_NSTATES], units = 0;
	char *old = (char *)"untouched";

	assert_int_equal(l.job_id, job);
	assert_string_equal(l.spec, "{\"r\":[0,10]}");
	assert_int_equal(l.units, 10);
	assert_int_equal(l.state, LEASE_LEASED);
	assert_int_equal(l.epoch, 1);
	assert_int_equal(l.attempts, 1);
	assert_int_equal(l.failures, 0);
	assert_int_equal(l.worker_id, w);
	assert_true(l.deadline == 1000.0);
	assert_null(l.checkpoint);
	assert_null(l.result);

	assert_int_equal(store_lease_heartbeat(st, l.id, 1, 3, 1100.0, 30.0), 0);
	get_lease(st, l.id, &g);
	assert_int_equal(g.units_done, 3);
	assert_true(g.deadline == 1100.0);
	assert_true(g.updated_at == 30.0);
	store_lease_clear(&g);
	assert_int_equal(store_job_units_progress(st, job, &units), 0);
	assert_int_equal(units, 3);

	assert_int_equal(store_lease_set_checkpoint(st, l.id, 1, "aa", 4, 31.0,
						    &old), 0);
	assert_null(old);
	assert_int_equal(store_lease_set_checkpoint(st, l.id, 1, "bb", 6, 32.0,
						    &old), 0);
	assert_string_equal(old, "aa");
	free(old);
	/* The same content again: nothing to delete. */
	assert_int_equal(store_lease_set_checkpoint(st, l.id, 1, "bb", 6, 33.0,
						    &old), 0);
	assert_null(old);
	assert_int_equal(store_lease_set_checkpoint(st, l.id, 1, "cc", 7, 34.0,
						    NULL), 0);
	get_lease(st, l.id, &g);
	assert_string_equal(g.checkpoint, "cc");
	assert_int_equal(g.checkpoint_units, 7);
	assert_int_equal(g.units_done, 7);
	store_lease_clear(&g);

	assert_int_equal(store_lease_set_result(st, l.id, 1, "rr", 10, 40.0), 0);
	get_lease(st, l.id, &g);
	assert_int_equal(g.state, LEASE_DONE);
	assert_string_equal(g.result, "rr");
	assert_int_equal(g.units_done, 10);
	assert_int_equal(g.worker_id, w); /* the producer is kept */
	store_lease_clear(&g);

	assert_int_equal(store_lease_counts(st, job, counts), 0);
	assert_int_equal(counts[LEASE_DONE], 1);
	assert_int_equal(counts[LEASE_LEASED], 0);

	assert_int_equal(store_lease_set_verified(st, l.id, 1, 50.0), 0);
	/* The merge counts its units in the job (sched_merge.c). */
	assert_int_equal(store_job_set_answer(st, job, "{}", 10), 0);
	get_lease(st, l.id, &g);
	assert_int_equal(g.state, LEASE_VERIFIED);
	assert_int_equal(g.epoch, 1);
	store_lease_clear(&g);

	/* A second lease, still leased, adds its progress. */
	store_lease_clear(&l);
	l = add_lease(st, job, w, 20);
	assert_int_equal(store_lease_heartbeat(st, l.id, 1, 5, 1100.0, 51.0), 0);
	assert_int_equal(store_job_units_progress(st, job, &units), 0);
	assert_int_equal(units, 15);
	assert_int_equal(store_lease_counts(st, job, counts), 0);
	assert_int_equal(counts[LEASE_VERIFIED], 1);
	assert_int_equal(counts[LEASE_LEASED], 1);
	assert_int_equal(counts[LEASE_PENDING], 0);

	{
		struct store_lease *a;
		size_t n;

		assert_int_equal(store_lease_list_job(st, job, &a, &n), 0);
		assert_int_equal(n, 2);
		assert_int_equal(a[0].state, LEASE_VERIFIED);
		assert_int_equal(a[1].id, l.id);
		store_lease_free_array(a, n);
		assert_int_equal(store_lease_list_state(st, LEASE_LEASED, &a,
							&n), 0);
		assert_int_equal(n, 1);
		assert_int_equal(a[0].id, l.id);
		store_lease_free_array(a, n);
		assert_int_equal(store_lease_list_state(st, LEASE_FAILED, &a,
							&n), 0);
		assert_int_equal(n, 0);
		store_lease_free_array(a, n);
	}
	assert_int_equal(store_lease_insert_leased(st, job, "{", 1, w, 1.0,
						   1.0, &g), GERR_INVAL);
	/* Insert for a missing job or worker. */
	assert_int_equal(store_lease_insert_leased(st, 999, "{}", 1, w, 1.0,
						   1.0, &g), GERR_NOTFOUND);
	assert_int_equal(store_lease_insert_leased(st, job, "{}", 1, 999, 1.0,
						   1.0, &g), GERR_NOTFOUND);
	store_lease_clear(&l);
}

/* A claim takes the oldest pending lease of a wanted workload's active
 * job; a paused job's leases wait. */
static void test_claim_order_and_filter(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t gj = add_job(st, "graveler"), oj = add_job(st, "officers");
	int64_t pj = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1"), w2 = add_worker(st, "w2");
	int64_t p_paused = add_pending(st, pj, w);  /* lowest id */
	int64_t g1 = add_pending(st, gj, w);
	int64_t o1 = add_pending(st, oj, w);
	int64_t g2 = add_pending(st, gj, w);
	struct store_lease l, keep = { .id = -5 };

	assert_int_equal(store_job_set_state(st, pj, JOB_PAUSED, NULL, 1.0), 0);

	assert_int_equal(claim_at(st, w2, "[\"officers\"]", 500.0, 60.0, NULL),
			 o1);

	assert_int_equal(store_lease_claim_pending(st, w2, "[\"graveler\"]",
						   500.0, 61.0, &l), 0);
	assert_int_equal(l.id, g1); /* oldest, paused job skipped */
	assert_int_equal(l.state, LEASE_LEASED);
	assert_int_equal(l.epoch, 2);
	assert_int_equal(l.attempts, 2);
	assert_int_equal(l.worker_id, w2);
	assert_true(l.deadline == 500.0);
	assert_true(l.updated_at == 61.0);
	store_lease_clear(&l);

	assert_int_equal(claim_at(st, w2, "[\"sudoku\",\"graveler\"]", 500.0,
				  62.0, NULL), g2);

	/* Nothing left but the paused job's lease. */
	assert_int_equal(store_lease_claim_pending(st, w2, "[\"graveler\"]",
						   500.0, 63.0, &keep),
			 GERR_NOTFOUND);
	assert_int_equal(keep.id, -5);
	assert_int_equal(store_lease_claim_pending(st, w2, "[]", 500.0, 63.0,
						   &keep), GERR_NOTFOUND);
	assert_int_equal(store_lease_claim_pending(st, w2, "graveler", 500.0,
						   63.0, &keep), GERR_INVAL);
	assert_int_equal(keep.id, -5);

	/* Resumed, its lease is claimable. */
	assert_int_equal(store_job_set_state(st, pj, JOB_ACTIVE, NULL, 2.0), 0);
	assert_int_equal(claim_at(st, w2, "[\"graveler\"]", 500.0, 64.0, NULL),
			 p_paused);
	assert_int_equal(claim_at(st, w2, "[\"graveler\"]", 500.0, 64.0, NULL),
			 0);
}

static void test_stale_epochs_change_nothing(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1");
	int64_t id = add_pending(st, job, w);
	struct store_lease l, before, after;
	enum lease_state ns = LEASE_NSTATES;
	char *old = (char *)"untouched";

	assert_int_equal(store_lease_claim_pending(st, w, "[\"graveler\"]",
						   900.0, 70.0, &l), 0);
	assert_int_equal(l.id, id);
	assert_int_equal(l.epoch, 2);
	assert_int_equal(store_lease_set_checkpoint(st, id, 2, "ck", 4, 71.0,
						    NULL), 0);
	get_lease(st, id, &before);

	/* The previous holder (epoch 1) and a future epoch are both stale. */
	for (uint64_t e = 1; e <= 3; e += 2) {
		assert_int_equal(store_lease_heartbeat(st, id, e, 9, 2000.0,
						       80.0), GERR_STALE);
		assert_non_null(strstr(store_errmsg(st), "epoch"));
		assert_int_equal(store_lease_set_checkpoint(st, id, e, "x", 9,
							    80.0, &old),
				 GERR_STALE);
		assert_string_equal(old, "untouched");
		assert_int_equal(store_lease_set_result(st, id, e, "r", 9,
							80.0), GERR_STALE);
		assert_int_equal(store_lease_release(st, id, e, 80.0),
				 GERR_STALE);
		assert_int_equal(store_lease_set_verified(st, id, e, 80.0),
				 GERR_STALE);
		assert_int_equal(store_lease_reject(st, id, e, "bad", 3, 80.0,
						    &ns), GERR_STALE);
		assert_int_equal(ns, LEASE_NSTATES);
	}
	assert_int_equal(store_lease_heartbeat(st, id, UINT64_MAX, 9, 2000.0,
					       80.0), GERR_STALE);
	/* Right epoch, wrong state: a leased lease is not done. */
	assert_int_equal(store_lease_set_verified(st, id, 2, 80.0), GERR_STALE);
	assert_int_equal(store_lease_reject(st, id, 2, "bad", 3, 80.0, &ns),
			 GERR_STALE);
	/* No such lease. */
	assert_int_equal(store_lease_heartbeat(st, 999, 1, 9, 2000.0, 80.0),
			 GERR_STALE);
	get_lease(st, id, &after);
	assert_lease_equal(&before, &after);
	store_lease_clear(&after);

	/* Done: the holder's own epoch is now stale for leased-only calls. */
	assert_int_equal(store_lease_set_result(st, id, 2, "res", 10, 81.0), 0);
	store_lease_clear(&before);
	get_lease(st, id, &before);
	assert_int_equal(store_lease_heartbeat(st, id, 2, 9, 2000.0, 82.0),
			 GERR_STALE);
	assert_int_equal(store_lease_set_checkpoint(st, id, 2, "x", 9, 82.0,
						    &old), GERR_STALE);
	assert_int_equal(store_lease_set_result(st, id, 2, "r2", 10, 82.0),
			 GERR_STALE);
	assert_int_equal(store_lease_release(st, id, 2, 82.0), GERR_STALE);
	assert_int_equal(store_lease_set_verified(st, id, 1, 82.0), GERR_STALE);
	get_lease(st, id, &after);
	assert_lease_equal(&before, &after);
	assert_string_equal(after.result, "res");
	store_lease_clear(&after);
	store_lease_clear(&before);
	store_lease_clear(&l);
}

static void test_transition_table(void **state)
{
	static const int allowed[LEASE_NSTATES][LEASE_NSTATES] = {
		/* to: pend leas done veri fail canc */
		[LEASE_PENDING] = { 0, 1, 0, 0, 0, 1 },
		[LEASE_LEASED] = { 1, 1, 1, 0, 1, 1 },
		[LEASE_DONE] = { 1, 0, 1, 1, 1, 1 }, /* done -> done: replication */
		[LEASE_VERIFIED] = { 1, 0, 0, 0, 1, 0 }, /* blamed at finish */
		[LEASE_FAILED] = { 0 },
		[LEASE_CANCELLED] = { 0 },
	};
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1");
	struct store_lease l = add_lease(st, job, w, 10), g;
	uint64_t counts[LEASE_NSTATES];

	for (int a = 0; a < LEASE_NSTATES; a++)
		for (int b = 0; b < LEASE_NSTATES; b++)
			assert_int_equal(store_lease_move_allowed(a, b),
					 allowed[a][b]);
	assert_int_equal(store_lease_move_allowed(-1, LEASE_LEASED), 0);
	assert_int_equal(store_lease_move_allowed(LEASE_PENDING, 6), 0);

	/* Final states refuse every call, and cancel leaves them alone. */
	assert_int_equal(store_lease_set_result(st, l.id, 1, "r", 10, 1.0), 0);
	assert_int_equal(store_lease_set_verified(st, l.id, 1, 2.0), 0);
	assert_int_equal(store_lease_set_verified(st, l.id, 1, 3.0), GERR_STALE);
	assert_int_equal(store_lease_reject(st, l.id, 1, "x", 3, 3.0, NULL),
			 GERR_STALE);
	assert_int_equal(store_lease_release(st, l.id, 1, 3.0), GERR_STALE);
	assert_int_equal(store_job_cancel_leases(st, job, 4.0), 0);
	get_lease(st, l.id, &g);
	assert_int_equal(g.state, LEASE_VERIFIED);
	store_lease_clear(&g);
	assert_int_equal(store_lease_counts(st, job, counts), 0);
	assert_int_equal(counts[LEASE_VERIFIED], 1);
	assert_int_equal(counts[LEASE_CANCELLED], 0);
	store_lease_clear(&l);
}

static void test_expiry_reissues_with_checkpoint(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1"), w2 = add_worker(st, "w2");
	struct store_lease a = add_lease(st, job, w, 10); /* deadline 1000 */
	struct store_lease b = add_lease(st, job, w, 10), g;
	int64_t *ids = NULL;
	size_t n = 99;

	assert_int_equal(store_lease_set_checkpoint(st, a.id, 1, "ck-a", 40,
						    30.0, NULL), 0);
	assert_int_equal(store_lease_heartbeat(st, a.id, 1, 55, 100.0, 31.0), 0);

	assert_int_equal(store_lease_expire(st, 50.0, &ids, &n), 0);
	assert_int_equal(n, 0);
	free(ids);
	assert_int_equal(store_lease_expire(st, 100.0, &ids, &n), 0);
	assert_int_equal(n, 0); /* deadline < now, strictly */
	free(ids);
	assert_int_equal(store_lease_expire(st, 150.0, &ids, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], a.id);
	free(ids);

	get_lease(st, a.id, &g);
	assert_int_equal(g.state, LEASE_PENDING);
	assert_int_equal(g.epoch, 1);
	assert_int_equal(g.worker_id, 0);
	assert_string_equal(g.checkpoint, "ck-a");
	assert_int_equal(g.checkpoint_units, 40);
	assert_int_equal(g.units_done, 40);
	store_lease_clear(&g);
	get_lease(st, b.id, &g);
	assert_int_equal(g.state, LEASE_LEASED);
	store_lease_clear(&g);

	/* The old holder is fenced off. */
	assert_int_equal(store_lease_heartbeat(st, a.id, 1, 60, 2000.0, 151.0),
			 GERR_STALE);
	assert_int_equal(store_lease_set_result(st, a.id, 1, "r", 10, 151.0),
			 GERR_STALE);

	assert_int_equal(store_lease_claim_pending(st, w2, "[\"graveler\"]",
						   3000.0, 152.0, &g), 0);
	assert_int_equal(g.id, a.id);
	assert_int_equal(g.epoch, 2);
	assert_int_equal(g.attempts, 2);
	assert_int_equal(g.worker_id, w2);
	assert_string_equal(g.checkpoint, "ck-a");
	assert_int_equal(g.units_done, 40);
	store_lease_clear(&g);
	assert_int_equal(store_lease_heartbeat(st, a.id, 2, 60, 3000.0, 153.0),
			 0);

	/* Release behaves like expiry. */
	assert_int_equal(store_lease_release(st, a.id, 2, 154.0), 0);
	get_lease(st, a.id, &g);
	assert_int_equal(g.state, LEASE_PENDING);
	assert_int_equal(g.epoch, 2);
	assert_string_equal(g.checkpoint, "ck-a");
	assert_int_equal(g.units_done, 40);
	store_lease_clear(&g);

	store_lease_clear(&a);
	store_lease_clear(&b);
}

typedef int (*fail_fn)(struct store *st, int64_t id, uint64_t epoch,
		       const char *reason, uint32_t max_failures, double now,
		       enum lease_state *ret_state);

/* Lease id at epoch failed by fail_lease (max 2) for reason: it is in
 * state with failures, no result, its checkpoint ("ck", 5 units) kept and
 * worker the holder it names (0: none). */
static void failed_as(struct store *st, fail_fn fail_lease, int64_t id,
		      uint64_t epoch, const char *reason,
		      enum lease_state state, uint32_t failures,
		      int64_t worker)
{
	enum lease_state ns = LEASE_NSTATES;
	struct store_lease g;

	assert_int_equal(fail_lease(st, id, epoch, reason, 2, 3.0, &ns), 0);
	assert_int_equal(ns, state);
	get_lease(st, id, &g);
	assert_int_equal(g.state, state);
	assert_int_equal(g.failures, failures);
	assert_null(g.result);
	assert_string_equal(g.checkpoint, "ck");
	assert_int_equal(g.units_done, 5);
	assert_int_equal(g.worker_id, worker);
	assert_string_equal(g.last_error, reason);
	store_lease_clear(&g);
}

/* A lease failed twice by fail_lease (max 2), from done (a result that failed
 * verification) or from leased (a run that failed on its holder): pending
 * from its checkpoint with its producer kept from it, then failed, which
 * is final. */
static void fail_twice(struct store *st, fail_fn fail_lease, int from_done)
{
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1"), w2 = add_worker(st, "w2");
	struct store_lease l = add_lease(st, job, w, 10), g;

	assert_int_equal(store_lease_set_checkpoint(st, l.id, 1, "ck", 5, 1.0,
						    NULL), 0);
	if (from_done)
		assert_int_equal(store_lease_set_result(st, l.id, 1, "r1", 10,
							2.0), 0);
	else
		assert_int_equal(store_lease_heartbeat(st, l.id, 1, 7, 100.0,
						       2.0), 0);
	failed_as(st, fail_lease, l.id, 1, "histogram off", LEASE_PENDING, 1,
		  0);
	/* Its epoch is over: the same call again is stale. */
	assert_int_equal(fail_lease(st, l.id, 1, "x", 2, 3.0, NULL), GERR_STALE);

	/* Its producer never gets it again; another worker does. */
	assert_int_equal(claim_id(st, w, NULL), 0);
	assert_int_equal(claim_id(st, w2, &g), l.id);
	assert_int_equal(g.epoch, 2);
	store_lease_clear(&g);
	if (from_done)
		assert_int_equal(store_lease_set_result(st, l.id, 2, "r2", 10,
							5.0), 0);
	failed_as(st, fail_lease, l.id, 2, "max wrong", LEASE_FAILED, 2, w2);
	/* Failed is final. */
	assert_int_equal(claim_id(st, w, NULL), 0);
	assert_int_equal(fail_lease(st, l.id, 2, "x", 2, 7.0, NULL), GERR_STALE);
	store_lease_clear(&l);
}

static void test_reject_then_failed(void **state)
{
	fail_twice(((struct fx *)*state)->st, store_lease_reject, 1);
}

static void test_cancel(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler"), other = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1");
	int64_t pend = add_pending(st, job, w);
	struct store_lease leased = add_lease(st, job, w, 10);
	struct store_lease done = add_lease(st, job, w, 10);
	struct store_lease ver = add_lease(st, job, w, 10);
	struct store_lease oth = add_lease(st, other, w, 10), g;
	uint64_t counts[LEASE_NSTATES];

	assert_int_equal(store_lease_set_result(st, done.id, 1, "r", 10, 1.0), 0);
	assert_int_equal(store_lease_set_result(st, ver.id, 1, "v", 10, 1.0), 0);
	assert_int_equal(store_lease_set_verified(st, ver.id, 1, 2.0), 0);

	assert_int_equal(store_job_cancel_leases(st, job, 3.0), 0);
	assert_int_equal(store_lease_counts(st, job, counts), 0);
	assert_int_equal(counts[LEASE_CANCELLED], 3);
	assert_int_equal(counts[LEASE_VERIFIED], 1);
	assert_int_equal(counts[LEASE_PENDING] + counts[LEASE_LEASED] +
			 counts[LEASE_DONE], 0);
	get_lease(st, pend, &g);
	assert_int_equal(g.state, LEASE_CANCELLED);
	assert_true(g.updated_at == 3.0);
	store_lease_clear(&g);
	get_lease(st, oth.id, &g);
	assert_int_equal(g.state, LEASE_LEASED); /* another job: untouched */
	store_lease_clear(&g);

	/* The cancelled holder is fenced off. */
	assert_int_equal(store_lease_heartbeat(st, leased.id, 1, 1, 9.0, 4.0),
			 GERR_STALE);
	assert_int_equal(store_lease_set_verified(st, done.id, 1, 4.0),
			 GERR_STALE);
	assert_int_equal(store_job_cancel_leases(st, 999, 4.0), GERR_NOTFOUND);
	store_lease_clear(&leased);
	store_lease_clear(&done);
	store_lease_clear(&ver);
	store_lease_clear(&oth);
}

/* A run that failed on its holder is a failure of the lease, counted as
 * failed verifications are; only a leased lease's run can fail. */
static void test_run_failed_then_failed(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	struct store_lease l;

	fail_twice(st, store_lease_run_failed, 0);
	l = add_lease(st, job, add_worker(st, "w3"), 10);
	assert_int_equal(store_lease_set_result(st, l.id, 1, "r", 10, 7.0), 0);
	assert_int_equal(store_lease_run_failed(st, l.id, 1, "x", 2, 8.0, NULL),
			 GERR_STALE);
	store_lease_clear(&l);
}

/* The progress requirement's record: the most units reported under the
 * grant and when that last grew; revoke; a claim starts it afresh. */
static void test_progress_and_revoke(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1");
	struct store_lease l = add_lease(st, job, w, 10), g;
	uint64_t best = 99;
	double at = 99;

	assert_int_equal(store_lease_progress(st, l.id, &best, &at), 0);
	assert_int_equal(best, 0);
	assert_true(at == 0);
	/* The first report starts the clock, even with no units. */
	assert_int_equal(store_lease_heartbeat(st, l.id, 1, 0, 100.0, 30.0), 0);
	assert_int_equal(store_lease_progress(st, l.id, &best, &at), 0);
	assert_true(best == 0 && at == 30.0);
	assert_int_equal(store_lease_heartbeat(st, l.id, 1, 3, 100.0, 31.0), 0);
	assert_int_equal(store_lease_heartbeat(st, l.id, 1, 3, 100.0, 40.0), 0);
	assert_int_equal(store_lease_progress(st, l.id, &best, &at), 0);
	assert_true(best == 3 && at == 31.0);
	/* Going back and forth is no progress. */
	assert_int_equal(store_lease_heartbeat(st, l.id, 1, 1, 100.0, 45.0), 0);
	assert_int_equal(store_lease_heartbeat(st, l.id, 1, 3, 100.0, 46.0), 0);
	assert_int_equal(store_lease_progress(st, l.id, &best, &at), 0);
	assert_true(best == 3 && at == 31.0);
	assert_int_equal(store_lease_set_checkpoint(st, l.id, 1, "ck", 6, 50.0,
						    NULL), 0);
	assert_int_equal(store_lease_progress(st, l.id, &best, &at), 0);
	assert_true(best == 6 && at == 50.0);

	assert_int_equal(store_lease_revoke(st, l.id, 1, "no progress", 60.0),
			 0);
	get_lease(st, l.id, &g);
	assert_int_equal(g.state, LEASE_PENDING);
	assert_int_equal(g.worker_id, 0);
	assert_int_equal(g.units_done, 6);
	assert_int_equal(g.failures, 0);
	assert_string_equal(g.last_error, "no progress");
	store_lease_clear(&g);
	assert_int_equal(store_lease_revoke(st, l.id, 1, "x", 61.0), GERR_STALE);
	assert_int_equal(store_lease_claim_pending(st, w, "[\"graveler\"]",
						   100.0, 62.0, &g), 0);
	store_lease_clear(&g);
	assert_int_equal(store_lease_progress(st, l.id, &best, &at), 0);
	assert_true(best == 6 && at == 0);
	assert_int_equal(store_lease_progress(st, 999, &best, &at),
			 GERR_NOTFOUND);
	store_lease_clear(&l);
}

/* Who holds what: per worker, most first; all active jobs or one job. */
static void test_held_and_holders(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler"), other = add_job(st, "graveler");
	int64_t a = add_worker(st, "alice"), b = add_worker(st, "bob");
	int64_t c = add_worker(st, "carol");
	struct store_lease l[5];
	struct store_holder *h;
	size_t n;
	uint64_t held = 9;

	l[0] = add_lease(st, job, b, 10);
	l[1] = add_lease(st, job, a, 10);
	l[2] = add_lease(st, job, a, 10);
	l[3] = add_lease(st, other, a, 10);
	l[4] = add_lease(st, job, c, 10);
	assert_int_equal(store_lease_set_result(st, l[4].id, 1, "r", 10, 1.0),
			 0);
	assert_int_equal(store_lease_held_count(st, a, &held), 0);
	assert_int_equal(held, 3);
	assert_int_equal(store_lease_held_count(st, c, &held), 0);
	assert_int_equal(held, 0); /* done is not held */

	assert_int_equal(store_lease_holders(st, job, &h, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(h[0].name, "alice");
	assert_int_equal(h[0].leases, 2);
	assert_string_equal(h[1].name, "bob");
	assert_int_equal(h[1].leases, 1);
	store_holder_free_array(h, n);
	assert_int_equal(store_lease_holders(st, 0, &h, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(h[0].leases, 3);
	store_holder_free_array(h, n);
	/* Every active job: a paused one is left out, unless named. */
	assert_int_equal(store_job_set_state(st, other, JOB_PAUSED, NULL, 2.0),
			 0);
	assert_int_equal(store_lease_holders(st, 0, &h, &n), 0);
	assert_int_equal(h[0].leases, 2);
	store_holder_free_array(h, n);
	assert_int_equal(store_lease_holders(st, other, &h, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(h[0].name, "alice");
	store_holder_free_array(h, n);
	assert_int_equal(store_lease_holders(st, 999, &h, &n), 0);
	assert_int_equal(n, 0);
	store_holder_free_array(h, n);
	for (int i = 0; i < 5; i++)
		store_lease_clear(&l[i]);
}

FX_MAIN(T(test_lease_life_cycle), T(test_claim_order_and_filter),
	T(test_stale_epochs_change_nothing), T(test_transition_table),
	T(test_expiry_reissues_with_checkpoint), T(test_reject_then_failed),
	T(test_cancel), T(test_run_failed_then_failed),
	T(test_progress_and_revoke), T(test_held_and_holders))
