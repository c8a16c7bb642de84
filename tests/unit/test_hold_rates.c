/* test_hold_rates.c - what a holder owes and who is charged
 * (daemon/sched/sched_hold.c invariants 5 and 6): progress at the rate
 * gpud verified (a trickle is a stall), and a run that fails on gpud's own
 * damaged blob charged to no one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "blob.h"
#include "clock.h"
#include "gerr.h"
#include "sched_fx.h"
#include "scheduler.h"
#include "store.h"
#include "unit_main.h"

struct fx {
	char dir[64];
	struct store *st;
	struct sched_policy pol;
	int64_t worker, job;
	json_t *params;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	sched_fx_open(f->dir, "hold", &f->st);
	f->pol = (struct sched_policy){.lease_target_s = 60,
		.lease_units = 1u << 21, .lease_timeout_s = 30,
		.max_failures = 2, .quarantine_after = 5, .data_dir = f->dir};
	f->job = sched_fx_graveler(f->st, "6291456", "11", &f->params);
	assert_int_equal(store_worker_upsert(f->st, "w1", "", "cpu", 1000,
					     &f->worker), 0);
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

static void claim(struct fx *f, struct sched_claim *c)
{
	memset(c, 0, sizeof(*c));
	c->pol = &f->pol;
	c->worker_id = f->worker;
	c->workloads_json = strdup("[\"graveler\"]");
	sched_claim(f->st, c);
}

static int64_t add_worker2(struct fx *f, const char *name)
{
	int64_t id = 0;

	assert_int_equal(store_worker_upsert(f->st, name, "", "cpu", 1000,
					     &id), 0);
	return id;
}

static void heartbeat(struct fx *f, struct sched_heartbeat *h, int64_t worker,
		      int64_t lease, uint64_t epoch, uint64_t units)
{
	memset(h, 0, sizeof(*h));
	h->pol = &f->pol;
	h->worker_id = worker;
	h->lease_id = lease;
	h->epoch = epoch;
	h->units_done = units;
	sched_heartbeat(f->st, h);
}

static void release(struct fx *f, struct sched_release *r, int64_t worker,
		    int64_t lease, uint64_t epoch, const char *error)
{
	memset(r, 0, sizeof(*r));
	r->pol = &f->pol;
	r->worker_id = worker;
	r->lease_id = lease;
	r->epoch = epoch;
	snprintf(r->error, sizeof(r->error), "%s", error);
	sched_release(f->st, r);
}

static struct store_worker get_worker(struct fx *f, int64_t id)
{
	struct store_worker w;

	assert_int_equal(store_worker_get(f->st, id, &w), 0);
	return w;
}

/* Progress at the measured rate (sched_hold.c invariant 5): over each
 * window of the timeout a holder verified at 1000 units/s owes a tenth of
 * what that predicts; a trickle of a unit per heartbeat is a stall like
 * no progress at all, charged alike, and an honest holder's window moves
 * on. A holder not verified in the job owes the job's slowest verified
 * rate over 1e4; with no verified rate at all, growth is enough. */
static void test_trickle_is_a_stall(void **state)
{
	struct fx *f = *state;
	int64_t other = add_worker2(f, "w2");
	struct sched_claim c, c2;
	struct sched_heartbeat h;
	struct store_worker w;

	f->pol.progress_timeout_s = 0.2;
	claim(f, &c);
	heartbeat(f, &h, f->worker, c.lease.id, 1, 1);
	usleep(250000);
	heartbeat(f, &h, f->worker, c.lease.id, 1, 2); /* nobody measured */
	assert_false(h.revoked);
	assert_int_equal(store_rate_note(f->st, f->worker, f->job, 1000, 1,
					 gclock_wall()), 0);
	usleep(250000);
	heartbeat(f, &h, f->worker, c.lease.id, 1, 200); /* 198 >= ~25 */
	assert_false(h.revoked);
	usleep(250000);
	heartbeat(f, &h, f->worker, c.lease.id, 1, 201); /* 1 < ~25 */
	assert_int_equal(h.rc, 0);
	assert_true(h.revoked);
	assert_int_equal(h.action, MSG_HB_STOP);
	assert_non_null(strstr(h.why, "too little progress"));
	assert_non_null(strstr(h.why, "its verified rate in the job"));
	w = get_worker(f, f->worker);
	assert_int_equal(w.stalls, 1);
	store_worker_clear(&w);

	/* The unmeasured: 1e8 units/s verified for w1 is the floor's base,
	 * 1e8 / 1e4 x 0.1 = 1000 units/s owed. */
	assert_int_equal(store_rate_note(f->st, f->worker, f->job, 1e8, 1,
					 gclock_wall()), 0);
	memset(&c2, 0, sizeof(c2));
	c2.pol = &f->pol;
	c2.worker_id = other;
	c2.workloads_json = strdup("[\"graveler\"]");
	sched_claim(f->st, &c2);
	assert_int_equal(c2.rc, 0);
	heartbeat(f, &h, other, c2.lease.id, c2.lease.epoch,
		  c2.lease.units_done + 1);
	usleep(250000);
	heartbeat(f, &h, other, c2.lease.id, c2.lease.epoch,
		  c2.lease.units_done + 2000);
	assert_false(h.revoked);
	usleep(250000);
	heartbeat(f, &h, other, c2.lease.id, c2.lease.epoch,
		  c2.lease.units_done + 2010);
	assert_true(h.revoked);
	assert_non_null(strstr(h.why, "not verified in the job"));
	sched_claim_clear(&c);
	sched_claim_clear(&c2);
}

/* gpud's own damage is no one's failure (sched_hold.c invariant 6): a job
 * whose params name a blob that gpud's store holds damaged pauses at the
 * first error release, naming the blob; the lease goes back uncounted and
 * its worker may take it again. With the blob sound again, an error
 * release counts as before. */
static void test_own_damage_charges_nobody(void **state)
{
	struct fx *f = *state;
	struct sched_claim c;
	struct sched_release r;
	struct store_lease l;
	struct store_job job = {0};
	char hash[BLOB_HASH_HEX], path[256], *text;
	json_t *params = json_deep_copy(f->params);
	int64_t id;
	FILE *fp;

	assert_int_equal(blob_store_put(f->dir, "input", 5, hash), 0);
	json_object_set_new(params, "input", json_string(hash));
	text = json_dumps(params, JSON_COMPACT);
	assert_int_equal(store_job_insert(f->st, "graveler", text, 6291456,
					  1001, &id), 0);
	assert_int_equal(store_job_set_priority(f->st, id, 3), 0);
	free(text);
	json_decref(params);
	snprintf(path, sizeof(path), "%s/blobs/%.2s/%s", f->dir, hash, hash);
	fp = fopen(path, "wb");
	assert_non_null(fp);
	fputs("inptt", fp);
	fclose(fp);

	claim(f, &c);
	assert_int_equal(c.lease.job_id, id);
	release(f, &r, f->worker, c.lease.id, c.lease.epoch, "fetch: corrupt");
	assert_int_equal(r.rc, 0);
	assert_true(r.damaged);
	assert_false(r.job_failed);
	assert_non_null(strstr(r.why, "damaged in gpud's own store"));
	assert_int_equal(store_lease_get(f->st, c.lease.id, &l), 0);
	assert_int_equal(l.state, LEASE_PENDING);
	assert_int_equal(l.failures, 0);
	store_lease_clear(&l);
	assert_int_equal(store_job_get(f->st, id, &job), 0);
	assert_int_equal(job.state, JOB_PAUSED);
	assert_non_null(strstr(job.reason, "no worker is charged"));
	assert_non_null(strstr(job.reason, "params \"input\""));
	store_job_clear(&job);
	sched_claim_clear(&c);

	/* Restored and resumed: the same worker gets the lease back, and an
	 * error of its own counts. */
	unlink(path);
	assert_int_equal(blob_store_put(f->dir, "input", 5, hash), 0);
	assert_int_equal(store_job_set_state(f->st, id, JOB_ACTIVE, NULL,
					     gclock_wall()), 0);
	claim(f, &c);
	assert_int_equal(c.lease.job_id, id);
	release(f, &r, f->worker, c.lease.id, c.lease.epoch, "cuda: lost");
	assert_int_equal(r.rc, 0);
	assert_false(r.damaged);
	assert_int_equal(store_lease_get(f->st, c.lease.id, &l), 0);
	assert_int_equal(l.failures, 1);
	store_lease_clear(&l);
	sched_claim_clear(&c);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
UNIT_MAIN(T(test_trickle_is_a_stall), T(test_own_damage_charges_nobody))
