/* test_store_replica.c - unit tests of daemon/store/store_replica.c, the moves of
 * a replica group in daemon/store/store_leases.c, a group's verdict applied
 * (store_replica_apply), and migration 004 (fixture: store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gerr.h"
#include "store_fx.h"

/* A verified lease of job with spec and result hash, granted at t. */
static int64_t add_verified(struct store *st, int64_t job, const char *spec,
			    int64_t worker, const char *hash, double t)
{
	struct store_lease l;
	int64_t id;

	assert_int_equal(store_lease_insert_leased(st, job, spec, 10, worker,
						   99.0, t, &l), 0);
	id = l.id;
	store_lease_clear(&l);
	assert_int_equal(store_lease_set_result(st, id, 1, hash, 10, t + 1), 0);
	assert_int_equal(store_lease_set_verified(st, id, 1, t + 2), 0);
	return id;
}

/* A done lease of job with result hash, from a leased one. */
static struct store_lease add_done(struct store *st, int64_t job,
				   int64_t worker, const char *hash)
{
	struct store_lease l = add_lease(st, job, worker, 10);

	assert_int_equal(store_lease_set_result(st, l.id, l.epoch, hash, 10,
						30.0), 0);
	return l;
}

/* A replica copies its primary; nobody who computed or holds a lease of
 * the group may claim another; replicas count apart from the job. */
static void test_group_and_claim(void **state)
{
	struct fx *f = *state;
	struct store *st = f->st;
	int64_t job = add_job(st, "graveler");
	int64_t w1 = add_worker(st, "w1"), w2 = add_worker(st, "w2");
	struct store_lease p = add_done(st, job, w1, "h1");
	struct store_instance *g = NULL;
	uint64_t c[LEASE_NSTATES], rc[LEASE_NSTATES], waiting = 9, progress;
	int64_t r, r2, of = -1;
	int checked = -1;
	size_t n;

	assert_int_equal(store_lease_insert_replica(st, p.id, 41.0, &r), 0);
	assert_int_equal(store_lease_insert_replica(st, r, 41.0, &r2),
			 GERR_NOTFOUND); /* groups never nest */
	assert_int_equal(store_lease_group(st, p.id, &g, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(g[0].l.id, p.id);
	assert_int_equal(g[0].replica_of, 0);
	assert_int_equal(g[1].l.id, r);
	assert_int_equal(g[1].replica_of, p.id);
	assert_int_equal(g[1].l.state, LEASE_PENDING);
	assert_int_equal(g[1].l.epoch, 0);
	assert_string_equal(g[1].l.spec, p.spec);
	assert_int_equal(g[1].l.units, p.units);
	store_instance_free_array(g, n);
	assert_int_equal(store_lease_replica_of(st, r, &of, &checked), 0);
	assert_int_equal(of, p.id);
	assert_int_equal(checked, 0);
	assert_int_equal(store_replica_waiting(st, job, &waiting), 0);
	assert_int_equal(waiting, 1);
	/* w1 computed the primary: no claim for it; w2's is the replica. */
	assert_int_equal(claim_id(st, w1, NULL), 0);
	assert_int_equal(claim_id(st, w2, NULL), r);
	assert_int_equal(store_lease_counts(st, job, c), 0);
	assert_int_equal(store_replica_counts(st, job, rc), 0);
	assert_int_equal(c[LEASE_DONE], 1);
	assert_int_equal(c[LEASE_LEASED], 0);
	assert_int_equal(rc[LEASE_LEASED], 1);
	assert_int_equal(store_job_units_progress(st, job, &progress), 0);
	assert_int_equal(progress, 10);
	store_lease_clear(&p);
}

/* checked and adopt are done -> done at the same epoch; refute is done ->
 * failed; cancelling a group leaves its checked results alone. */
static void test_group_moves(void **state)
{
	struct fx *f = *state;
	struct store *st = f->st;
	int64_t job = add_job(st, "graveler");
	int64_t w1 = add_worker(st, "w1"), w2 = add_worker(st, "w2");
	struct store_lease p = add_done(st, job, w1, "h1"), l;
	int64_t r, r2, r3;
	int64_t of;
	int checked = 0;

	assert_int_equal(store_lease_set_checked(st, p.id, p.epoch + 1, 42.0),
			 GERR_STALE);
	assert_int_equal(store_lease_set_checked(st, p.id, p.epoch, 42.0), 0);
	assert_int_equal(store_lease_replica_of(st, p.id, &of, &checked), 0);
	assert_int_equal(checked, 1);
	assert_int_equal(store_lease_insert_replica(st, p.id, 43.0, &r), 0);
	assert_int_equal(store_lease_insert_replica(st, p.id, 43.0, &r2), 0);
	assert_int_equal(store_lease_insert_replica(st, p.id, 43.0, &r3), 0);
	assert_int_equal(claim_id(st, w2, NULL), r);
	assert_int_equal(store_lease_set_result(st, r, 1, "h2", 10, 44.0), 0);
	assert_int_equal(store_lease_set_checked(st, r, 1, 44.0), 0);
	assert_int_equal(store_lease_refute(st, r, 1, "outvoted", 45.0), 0);
	get_lease(st, r, &l);
	assert_int_equal(l.state, LEASE_FAILED);
	assert_int_equal(l.worker_id, w2);
	assert_string_equal(l.last_error, "outvoted");
	store_lease_clear(&l);
	assert_int_equal(store_lease_adopt(st, p.id, p.epoch, "h3", 0, 46.0), 0);
	get_lease(st, p.id, &l);
	assert_int_equal(l.state, LEASE_DONE);
	assert_string_equal(l.result, "h3");
	assert_int_equal(l.worker_id, 0);
	store_lease_clear(&l);
	assert_int_equal(claim_id(st, add_worker(st, "w3"), NULL), r2);
	assert_int_equal(store_group_cancel(st, p.id, 47.0), 0);
	get_lease(st, r2, &l);
	assert_int_equal(l.state, LEASE_CANCELLED);
	store_lease_clear(&l);
	get_lease(st, r3, &l);
	assert_int_equal(l.state, LEASE_CANCELLED);
	store_lease_clear(&l);
	get_lease(st, p.id, &l);
	assert_int_equal(l.state, LEASE_DONE); /* primaries are never cancelled */
	store_lease_clear(&l);
	store_lease_clear(&p);
}

/* A confirmed result lengthens the worker's streak; a failure ends it. */
static void test_worker_streak(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t w = add_worker(st, "w1");
	uint32_t s = 9;
	uint64_t c = 9;
	int q = 1;

	assert_int_equal(store_worker_streak(st, w, &s, &c), 0);
	assert_int_equal(s, 0);
	assert_int_equal(c, 0);
	assert_int_equal(store_worker_confirm(st, w), 0);
	assert_int_equal(store_worker_confirm(st, w), 0);
	assert_int_equal(store_worker_streak(st, w, &s, &c), 0);
	assert_int_equal(s, 2);
	assert_int_equal(c, 2);
	assert_int_equal(store_worker_fail(st, w, 0, &q), 0);
	assert_int_equal(q, 0);
	assert_int_equal(store_worker_streak(st, w, &s, &c), 0);
	assert_int_equal(s, 0);
	assert_int_equal(c, 2);
	assert_int_equal(store_worker_confirm(st, 999), GERR_NOTFOUND);
	assert_int_equal(store_worker_streak(st, 999, &s, &c), GERR_NOTFOUND);
}

/* A done lease of the group of primary, claimed by worker, with result
 * hash, checked or not. */
static int64_t add_replica_done(struct store *st, int64_t worker,
				const char *hash, int checked)
{
	struct store_lease l;
	int64_t id = claim_id(st, worker, &l);

	assert_true(id > 0);
	assert_int_equal(store_lease_set_result(st, id, l.epoch, hash, 10,
						44.0), 0);
	if (checked)
		assert_int_equal(store_lease_set_checked(st, id, l.epoch, 44.0),
				 0);
	store_lease_clear(&l);
	return id;
}

static void assert_state(struct store *st, int64_t id, enum lease_state s)
{
	struct store_lease l;

	get_lease(st, id, &l);
	assert_int_equal(l.state, s);
	store_lease_clear(&l);
}

static uint64_t events(struct store *st, const char *kind, int64_t job)
{
	uint64_t n = 9;

	assert_int_equal(store_event_count(st, kind, job, &n), 0);
	return n;
}

static uint32_t streak_of(struct store *st, int64_t w)
{
	uint32_t s = 99;
	uint64_t c;

	assert_int_equal(store_worker_streak(st, w, &s, &c), 0);
	return s;
}

/* A quorum against the primary: the agreeing replicas verified, their
 * workers confirmed, the primary's worker charged and the primary takes
 * the agreed result; the group's open replica cancelled. */
static void test_apply_quorum(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w1 = add_worker(st, "w1"), w2 = add_worker(st, "w2"),
		w3 = add_worker(st, "w3");
	struct store_lease p = add_done(st, job, w1, "h1"), pr = {0};
	struct store_instance *g = NULL;
	unsigned char move[4] = {STORE_REPLICA_REFUTE, STORE_REPLICA_CONFIRM,
				 STORE_REPLICA_CONFIRM, STORE_REPLICA_KEEP};
	struct store_replica_verdict v = {0};
	int64_t r, r2, r3;
	size_t n;

	assert_int_equal(store_lease_set_checked(st, p.id, p.epoch, 42.0), 0);
	assert_int_equal(store_worker_confirm(st, w1), 0);
	assert_int_equal(store_lease_insert_replica(st, p.id, 43.0, &r), 0);
	assert_int_equal(store_lease_insert_replica(st, p.id, 43.0, &r2), 0);
	assert_int_equal(add_replica_done(st, w2, "h2", 1), r);
	assert_int_equal(add_replica_done(st, w3, "h2", 0), r2);
	assert_int_equal(store_lease_insert_replica(st, p.id, 45.0, &r3), 0);
	assert_int_equal(store_lease_group(st, p.id, &g, &n), 0);
	assert_int_equal(n, 4);
	v = (struct store_replica_verdict){.primary = p.id,
		.primary_epoch = p.epoch, .self = &g[2].l, .set_checked = 1,
		.member = g, .move = move, .nmember = n,
		.end = STORE_REPLICA_QUORUM, .nwin = 2, .adopt = 1,
		.quarantine_after = 0};
	assert_int_equal(store_replica_apply(st, &v, 50.0, NULL), GERR_INVAL);
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_replica_apply(st, &v, 50.0, &pr), 0);
	assert_int_equal(store_commit(st), 0);
	assert_int_equal(pr.id, p.id);
	assert_string_equal(pr.result, "h2");
	assert_int_equal(pr.worker_id, 0);
	assert_state(st, r, LEASE_VERIFIED);
	assert_state(st, r2, LEASE_VERIFIED);
	assert_state(st, r3, LEASE_CANCELLED);
	assert_int_equal(streak_of(st, w1), 0);
	assert_int_equal(streak_of(st, w2), 1);
	assert_int_equal(streak_of(st, w3), 1);
	assert_int_equal(events(st, "confirmed", job), 2);
	assert_int_equal(events(st, "refuted", job), 1);
	store_instance_free_array(g, n);
	store_lease_clear(&pr);
	store_lease_clear(&p);
}

/* No agreement: a further replica (the job says why when results
 * disagree), an unreadable result recomputed; at the last result the job
 * fails. */
static void test_apply_more_and_failed(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w1 = add_worker(st, "w1"), w2 = add_worker(st, "w2");
	struct store_lease p = add_done(st, job, w1, "h1");
	struct store_instance *g = NULL;
	unsigned char move[3] = {STORE_REPLICA_KEEP, STORE_REPLICA_KEEP,
				 STORE_REPLICA_KEEP};
	struct store_replica_verdict v;
	struct store_job j;
	int64_t r;
	size_t n;

	assert_int_equal(store_lease_set_checked(st, p.id, p.epoch, 42.0), 0);
	assert_int_equal(store_lease_insert_replica(st, p.id, 43.0, &r), 0);
	assert_int_equal(add_replica_done(st, w2, "h2", 0), r);
	assert_int_equal(store_lease_group(st, p.id, &g, &n), 0);
	assert_int_equal(n, 2);
	v = (struct store_replica_verdict){.primary = p.id, .self = &g[1].l,
		.set_checked = 1, .member = g, .move = move, .nmember = n,
		.end = STORE_REPLICA_MORE, .nchecked = 2};
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_replica_apply(st, &v, 50.0, NULL), 0);
	assert_int_equal(store_commit(st), 0);
	store_instance_free_array(g, n);
	assert_int_equal(store_lease_group(st, p.id, &g, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(g[1].checked, 1);
	assert_int_equal(g[2].l.state, LEASE_PENDING);
	assert_int_equal(events(st, "replica", job), 1);
	assert_int_equal(store_job_get(st, job, &j), 0);
	assert_non_null(strstr(j.reason, "2 results disagree; replica lease"));
	store_job_clear(&j);

	/* The primary unreadable, the job failed: both in one verdict. */
	move[0] = STORE_REPLICA_RECOMPUTE;
	v = (struct store_replica_verdict){.primary = p.id, .self = &g[1].l,
		.member = g, .move = move, .nmember = n,
		.end = STORE_REPLICA_FAILED, .nresults = 3};
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_replica_apply(st, &v, 51.0, NULL), 0);
	assert_int_equal(store_commit(st), 0);
	assert_state(st, p.id, LEASE_PENDING);
	assert_int_equal(store_job_get(st, job, &j), 0);
	assert_int_equal(j.state, JOB_FAILED);
	assert_non_null(strstr(j.reason, ": no two of 3 results agree"));
	store_job_clear(&j);
	assert_int_equal(events(st, "no_quorum", job), 1);
	store_instance_free_array(g, n);
	store_lease_clear(&p);
}

/* Migration 004 on a database with an older gpud's Officers --check full
 * job: replicated from now on, its open check leases cancelled, its units
 * counted once. */
static void test_migration_officers_checks(void **state)
{
	struct fx *f = *state;
	struct store *st;
	int64_t job, plain, w, chk, open_chk;
	struct store_lease l;
	struct store_job j;
	int full = -1;

	open_old(f, 3);
	st = f->st;
	assert_int_equal(store_job_insert(st, "officers",
		"{\"check\":\"full\",\"to\":20}", 40, 10.0, &job), 0);
	assert_int_equal(store_job_insert(st, "officers",
		"{\"check\":\"sample\",\"to\":20}", 20, 10.0, &plain), 0);
	w = add_worker(st, "w1");
	(void)add_verified(st, job, "{\"kind\":\"extend\",\"from\":0,\"to\":10}",
			   w, "a", 20.0);
	chk = add_verified(st, job, "{\"kind\":\"check\",\"from\":0,\"to\":10}",
			   w, "b", 23.0);
	assert_int_equal(store_job_set_answer(st, job, "{\"n\":10}", 20), 0);
	assert_int_equal(store_lease_insert_leased(st, job,
		"{\"kind\":\"check\",\"from\":10,\"to\":20}", 10, w, 99.0, 26.0,
		&l), 0);
	open_chk = l.id;
	store_lease_clear(&l);

	reopen(f); /* applies 004 */
	st = f->st;
	assert_int_equal(store_job_get_replicate(st, job, &full), 0);
	assert_int_equal(full, 1);
	assert_int_equal(store_job_get_replicate(st, plain, &full), 0);
	assert_int_equal(full, 0);
	assert_int_equal(store_job_get(st, job, &j), 0);
	assert_int_equal(j.total_units, 20);
	assert_int_equal(j.units_verified, 10);
	store_job_clear(&j);
	get_lease(st, open_chk, &l);
	assert_int_equal(l.state, LEASE_CANCELLED);
	store_lease_clear(&l);
	get_lease(st, chk, &l);
	assert_int_equal(l.state, LEASE_VERIFIED); /* a merged part stays */
	store_lease_clear(&l);
}

FX_MAIN(T(test_group_and_claim), T(test_group_moves), T(test_worker_streak),
	T(test_apply_quorum), T(test_apply_more_and_failed),
	T(test_migration_officers_checks))
