/* test_takeback.c - the tail (sched_hold.c, invariant 7) on a real store
 * and the Graveler workload, without sockets: the decision at a heartbeat
 * (idle claims, a long rest at the holder's rate, no replica group), the
 * cut at the release (the head keeps the lease and its checkpoint, the
 * pieces add up, every piece runs and the job's answer is whole), and
 * the marks that must not cut: a grant that expired, one that finished. */
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
#include "workload.h"

#define BATTLES "2097152" /* one lease of 2^21 */
#define LEASE_UNITS (1u << 21)

struct fx {
	char dir[64];
	struct store *st;
	struct sched_policy pol;
	const struct workload *wl;
	int64_t a, b, job;  /* workers, the job */
	json_t *params;
	int wi;             /* Graveler's registry index */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	const struct workload *const *all = workload_all();

	sched_fx_open(f->dir, "tail", &f->st);
	f->pol = (struct sched_policy){.lease_target_s = 60,
		.lease_min_s = 0.5, .lease_units = LEASE_UNITS,
		.lease_timeout_s = 30, .max_failures = 2,
		.quarantine_after = 5, .data_dir = f->dir};
	f->wl = workload_find("graveler");
	f->job = sched_fx_graveler(f->st, BATTLES, "3", &f->params);
	assert_int_equal(store_worker_upsert(f->st, "a", "", "cpu", 1000, &f->a), 0);
	assert_int_equal(store_worker_upsert(f->st, "b", "", "cpu", 1000, &f->b), 0);
	for (f->wi = 0; all[f->wi] != f->wl; f->wi++)
		assert_non_null(all[f->wi]);
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

static void claim(struct fx *f, int64_t worker, struct sched_claim *c)
{
	memset(c, 0, sizeof(*c));
	c->pol = &f->pol;
	c->worker_id = worker;
	c->workloads_json = strdup("[\"graveler\"]");
	sched_claim(f->st, c);
	assert_int_equal(c->rc, 0);
}

static void heartbeat(struct fx *f, struct sched_heartbeat *h,
		      const struct sched_claim *c, int64_t worker,
		      uint64_t units, uint32_t idle)
{
	memset(h, 0, sizeof(*h));
	h->pol = &f->pol;
	h->worker_id = worker;
	h->lease_id = c->lease.id;
	h->epoch = c->lease.epoch;
	h->units_done = units;
	h->idle[f->wi] = idle;
	sched_heartbeat(f->st, h);
	assert_int_equal(h->rc, 0);
}

static void release(struct fx *f, struct sched_release *r,
		    const struct sched_claim *c, int64_t worker)
{
	memset(r, 0, sizeof(*r));
	r->pol = &f->pol;
	r->worker_id = worker;
	r->lease_id = c->lease.id;
	r->epoch = c->lease.epoch;
	sched_release(f->st, r);
	assert_int_equal(r->rc, 0);
}

/* The run's io: the first checkpoint, asked for at once, and its units. */
struct capture {
	int want;
	void *ckpt;
	size_t len;
	uint64_t units;
};

static void io_progress(void *o, uint64_t u) { (void)o; (void)u; }
static int io_due(void *o) { return ((struct capture *)o)->want; }
static int io_stop(void *o) { (void)o; return 0; }
static int io_ckpt(void *o, const void *b, size_t n, uint64_t u)
{
	struct capture *c = o;

	c->want = 0;
	c->ckpt = malloc(n);
	assert_non_null(c->ckpt);
	memcpy(c->ckpt, b, n);
	c->len = n;
	c->units = u;
	return 0;
}

/* Run the lease c was granted (from the checkpoint it came with), as a
 * result, or as the first checkpoint when want_ckpt; upload it.
 * *ret_units (may be NULL) gets the units uploaded. */
static int run_upload(struct fx *f, const struct sched_claim *c,
		      int64_t worker, int want_ckpt, uint64_t *ret_units)
{
	struct capture cap = {.want = want_ckpt};
	struct wl_run_io io = {&cap, io_progress, io_due, io_ckpt, io_stop,
			       NULL};
	struct wl_device dev = {.kind = WL_DEVICE_CPU, .threads = 1};
	struct sched_upload u = {0};
	struct blob_info info;
	json_t *spec = json_loads(c->lease.spec, 0, NULL);
	uint8_t *ck = NULL;
	size_t ck_len = 0, len = 0;
	void *res = NULL;
	char err[256];
	int rc;

	if (c->checkpoint)
		assert_int_equal(blob_decode(c->checkpoint, c->checkpoint_len,
					     &info, &ck, &ck_len, err,
					     sizeof(err)), 0);
	assert_int_equal(f->wl->run(workload_ctx(f->wl), f->params, spec, ck,
				    ck_len, &dev, &io, &res, &len, err,
				    sizeof(err)), 0);
	free(ck);
	u.pol = &f->pol;
	u.is_result = !want_ckpt;
	u.lease_id = c->lease.id;
	u.worker_id = worker;
	u.epoch = c->lease.epoch;
	u.units_done = want_ckpt ? cap.units : c->lease.units;
	if (want_ckpt) {
		assert_non_null(cap.ckpt);
		free(res);
		res = cap.ckpt;
		len = cap.len;
	} else {
		free(cap.ckpt);
	}
	assert_int_equal(blob_encode(want_ckpt ? BLOB_CHECKPOINT : BLOB_RESULT,
				     "graveler", c->lease.id, c->lease.epoch,
				     res, len, &u.blob, &u.blob_len), 0);
	free(res);
	json_decref(spec);
	sched_upload_load(f->st, &u);
	if (u.rc == 0)
		sched_upload_check(&u);
	if (u.rc == 0)
		sched_upload_commit(f->st, &u);
	rc = u.rc;
	if (ret_units)
		*ret_units = u.units_done;
	sched_upload_clear(&u);
	return rc;
}

/* The stored result of (lease, epoch) verified: 1 passed, 0 refused. */
static int verify(struct fx *f, int64_t lease, uint64_t epoch,
		  int *ret_finished)
{
	return sched_fx_verify(f->st, &f->pol, lease, epoch, ret_finished);
}

static uint64_t events(struct fx *f, const char *kind)
{
	uint64_t n = 0;

	assert_int_equal(store_event_count(f->st, kind, f->job, &n), 0);
	return n;
}

/* Wait past the decision's least span of a grant's rate. */
static void rate_span(void)
{
	usleep(1100 * 1000);
}

/* Two claims wait while A holds the only lease: the heartbeat marks it
 * for three pieces, A checkpoints and releases, the release cuts it at
 * the checkpoint; B resumes the head from A's checkpoint, the others run
 * the rest, and the job's answer is whole and checked. */
static void test_decide_and_cut(void **state)
{
	struct fx *f = *state;
	struct sched_claim ca, cb;
	struct sched_heartbeat h;
	struct sched_release r;
	struct store_lease *ls = NULL;
	struct store_job job = {0};
	uint64_t ck_units = 0, sum = 0;
	size_t n = 0;
	int finished = 0;

	claim(f, f->a, &ca);
	assert_int_equal(ca.lease.units, LEASE_UNITS);
	/* No idle claim, or too early to know A's rate: A keeps it. */
	heartbeat(f, &h, &ca, f->a, 1000, 0);
	assert_int_equal(h.action, MSG_HB_CONTINUE);
	heartbeat(f, &h, &ca, f->a, 1000, 2);
	assert_int_equal(h.action, MSG_HB_CONTINUE);
	rate_span();
	heartbeat(f, &h, &ca, f->a, 2000, 2);
	assert_int_equal(h.action, MSG_HB_GIVE_BACK);
	assert_int_equal(h.takeback, 3);
	/* Asked again until it comes back. */
	heartbeat(f, &h, &ca, f->a, 2000, 0);
	assert_int_equal(h.action, MSG_HB_GIVE_BACK);
	assert_int_equal(run_upload(f, &ca, f->a, 1, &ck_units), 0);
	assert_true(ck_units > 0 && ck_units < LEASE_UNITS);
	release(f, &r, &ca, f->a);
	if (r.pieces != 3)
		fprintf(stderr, "release: %s\n", r.why);
	assert_int_equal(r.pieces, 3);
	assert_int_equal(events(f, "takeback"), 1);

	/* The head keeps the lease and its checkpoint; the pieces add up. */
	assert_int_equal(store_lease_list_job(f->st, f->job, &ls, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(ls[0].id, ca.lease.id);
	assert_int_equal(ls[0].checkpoint_units, ck_units);
	assert_non_null(ls[0].checkpoint);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(ls[i].state, LEASE_PENDING);
		sum += ls[i].units;
	}
	assert_int_equal(sum, LEASE_UNITS);
	/* About a third of the rest each, on chunk boundaries. */
	uint64_t share = (LEASE_UNITS - ck_units) / 3;
	assert_true(ls[0].units >= ck_units + share &&
		    ls[0].units < ck_units + share + 256);
	store_lease_free_array(ls, n);
	assert_int_equal(store_job_get(f->st, f->job, &job), 0);
	assert_int_equal(job.carve_done, 1);
	store_job_clear(&job);

	/* B gets the head and resumes it from A's checkpoint. */
	claim(f, f->b, &cb);
	assert_int_equal(cb.lease.id, ca.lease.id);
	assert_int_equal(cb.lease.epoch, 2);
	assert_non_null(cb.checkpoint);
	assert_int_equal(run_upload(f, &cb, f->b, 0, NULL), 0);
	assert_true(verify(f, cb.lease.id, cb.lease.epoch, &finished));
	assert_int_equal(finished, 0);
	sched_claim_clear(&ca);
	/* A and B take the two other pieces, fresh. */
	for (int i = 0; i < 2; i++) {
		int64_t w = i ? f->b : f->a;
		struct sched_claim c;

		claim(f, w, &c);
		assert_null(c.checkpoint);
		assert_int_equal(run_upload(f, &c, w, 0, NULL), 0);
		assert_true(verify(f, c.lease.id, c.lease.epoch, &finished));
		assert_int_equal(finished, i ? 1 : 0);
		sched_claim_clear(&c);
	}
	assert_int_equal(store_job_get(f->st, f->job, &job), 0);
	assert_int_equal(job.state, JOB_DONE);
	assert_int_equal(job.units_verified, LEASE_UNITS);
	json_t *ans = json_loads(job.answer, 0, NULL);
	assert_int_equal(json_integer_value(json_object_get(ans, "battles")),
			 LEASE_UNITS);
	json_decref(ans);
	store_job_clear(&job);
	sched_claim_clear(&cb);
}

/* What is never taken back: a rest too short at the holder's rate, a
 * replicated job; and marks that must not cut: a grant that expired
 * before its release (the next holder's release keeps the lease whole),
 * one whose job became replicated before the release, one whose holder
 * uploaded its result instead (accepted as usual). */
static void test_no_takeback(void **state)
{
	struct fx *f = *state;
	struct sched_claim c, c2;
	struct sched_heartbeat h;
	struct sched_release r;
	struct store_lease *ls = NULL;
	int64_t *ids = NULL;
	size_t n = 0;
	int finished = 0;

	claim(f, f->a, &c);
	rate_span();
	/* A rest of under 2 x lease_min_s at this rate. */
	heartbeat(f, &h, &c, f->a, LEASE_UNITS - 1000, 4);
	assert_int_equal(h.action, MSG_HB_CONTINUE);
	/* A replicated job's leases stay whole. */
	assert_int_equal(store_job_set_replicate(f->st, f->job, 1), 0);
	heartbeat(f, &h, &c, f->a, 1000, 4);
	assert_int_equal(h.action, MSG_HB_CONTINUE);
	assert_int_equal(store_job_set_replicate(f->st, f->job, 0), 0);
	/* Marked, then expired: the mark was for that grant only. */
	heartbeat(f, &h, &c, f->a, 1000, 1);
	assert_int_equal(h.action, MSG_HB_GIVE_BACK);
	assert_int_equal(store_lease_expire(f->st, gclock_wall() + 1e6, &ids,
					    &n), 0);
	assert_int_equal(n, 1);
	free(ids);
	claim(f, f->b, &c2);
	assert_int_equal(c2.lease.epoch, 2);
	release(f, &r, &c2, f->b);
	assert_int_equal(r.pieces, 0);
	assert_int_equal(events(f, "takeback"), 0);
	sched_claim_clear(&c2);
	/* Marked, then the job replicated before the release: whole. */
	claim(f, f->a, &c2);
	rate_span();
	heartbeat(f, &h, &c2, f->a, 1000, 1);
	assert_int_equal(h.action, MSG_HB_GIVE_BACK);
	assert_int_equal(store_job_set_replicate(f->st, f->job, 1), 0);
	release(f, &r, &c2, f->a);
	assert_int_equal(r.pieces, 0);
	assert_int_equal(events(f, "takeback"), 0);
	assert_int_equal(store_job_set_replicate(f->st, f->job, 0), 0);
	sched_claim_clear(&c2);
	/* Marked, and the holder finished first: its result is taken. */
	claim(f, f->a, &c2);
	rate_span();
	heartbeat(f, &h, &c2, f->a, 1000, 1);
	assert_int_equal(h.action, MSG_HB_GIVE_BACK);
	assert_int_equal(run_upload(f, &c2, f->a, 0, NULL), 0);
	assert_true(verify(f, c2.lease.id, c2.lease.epoch, &finished));
	assert_int_equal(finished, 1);
	assert_int_equal(store_lease_list_job(f->st, f->job, &ls, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ls[0].units, LEASE_UNITS);
	assert_int_equal(ls[0].state, LEASE_VERIFIED);
	store_lease_free_array(ls, n);
	assert_int_equal(events(f, "takeback"), 0);
	sched_claim_clear(&c);
	sched_claim_clear(&c2);
}

#define TS(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

UNIT_MAIN(TS(test_decide_and_cut), TS(test_no_takeback))
