/* Unit tests of the lease policy (daemon/sched/, scheduler.h) on a real store and
 * the Graveler workload, without sockets: grant, carve, uploads, stale
 * epochs, verification failure and retry, pause/cancel, expiry, completion;
 * and a held lease's checks: its holder, its progress, the cap per worker,
 * run failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "blob.h"
#include "clock.h"
#include "gerr.h"
#include "sched_fx.h"
#include "scheduler.h"
#include "store.h"
#include "unit_main.h"
#include "workload.h"

#define LEASE_UNITS (1u << 21)

struct fx {
	char dir[64];
	struct store *st;
	struct sched_policy pol;
	const struct workload *wl;
	int64_t worker, job;
	json_t *params;
};

/* The run's io: keeps the first checkpoint the run emits (asked for at once
 * when want_checkpoint is set). */
struct capture {
	int want_checkpoint;
	void *ckpt;
	size_t ckpt_len;
};

static void io_progress(void *o, uint64_t u) { (void)o; (void)u; }
static int io_due(void *o)
{
	struct capture *c = o;
	return c->want_checkpoint && !c->ckpt;
}
static int io_ckpt(void *o, const void *b, size_t n, uint64_t u)
{
	struct capture *c = o;

	(void)u;
	if (!c->ckpt) {
		c->ckpt = malloc(n);
		assert_non_null(c->ckpt);
		memcpy(c->ckpt, b, n);
		c->ckpt_len = n;
	}
	return 0;
}
static int io_stop(void *o) { (void)o; return 0; }

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	sched_fx_open(f->dir, "sched", &f->st);
	f->pol = (struct sched_policy){.lease_target_s = 60, .lease_units = LEASE_UNITS,
		.lease_timeout_s = 30, .max_failures = 2, .quarantine_after = 5,
		.data_dir = f->dir};
	f->wl = workload_find("graveler");
	f->job = sched_fx_graveler(f->st, "6291456", "11", &f->params);
	assert_int_equal(store_worker_upsert(f->st, "w1", "", "cpu", 1000, &f->worker), 0);
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

/* Run the lease on the CPU and wrap the result (or a checkpoint) in a blob. */
static void make_blob(struct fx *f, const struct sched_claim *c, int kind,
		      int tamper, uint8_t **ret, size_t *ret_len)
{
	struct capture cap = {.want_checkpoint = kind == BLOB_CHECKPOINT};
	struct wl_run_io io = {&cap, io_progress, io_due, io_ckpt, io_stop, NULL};
	struct wl_device dev = {.kind = WL_DEVICE_CPU, .threads = 1};
	json_t *spec = json_loads(c->lease.spec, 0, NULL);
	void *res = NULL;
	size_t len = 0;
	char err[256];

	assert_int_equal(f->wl->run(workload_ctx(f->wl), f->params, spec, NULL, 0, &dev, &io, &res, &len,
				    err, sizeof(err)), 0);
	if (kind == BLOB_CHECKPOINT) {
		assert_non_null(cap.ckpt);
		free(res);
		res = cap.ckpt;
		len = cap.ckpt_len;
	}
	if (tamper)
		((uint8_t *)res)[len / 2] ^= 1; /* a wrong count in the body */
	assert_int_equal(blob_encode(kind, "graveler", c->lease.id, c->lease.epoch,
				     res, len, ret, ret_len), 0);
	free(res);
	json_decref(spec);
}

static int upload(struct fx *f, const struct sched_claim *c, uint64_t epoch,
		  int is_result, int tamper)
{
	struct sched_upload u = {0};
	int rc;

	u.pol = &f->pol;
	u.is_result = is_result;
	u.lease_id = c->lease.id;
	u.worker_id = f->worker;
	u.epoch = epoch;
	u.units_done = c->lease.units;
	make_blob(f, c, is_result ? BLOB_RESULT : BLOB_CHECKPOINT, tamper, &u.blob, &u.blob_len);
	sched_upload_load(f->st, &u);
	if (u.rc == 0)
		sched_upload_check(&u);
	if (u.rc == 0)
		sched_upload_commit(f->st, &u);
	rc = u.rc;
	sched_upload_clear(&u);
	return rc;
}

/* The stored result of (lease, epoch) verified: 1 passed, 0 refused. */
static int verify(struct fx *f, int64_t lease, uint64_t epoch,
		  int *ret_finished)
{
	return sched_fx_verify(f->st, &f->pol, lease, epoch, ret_finished);
}

static void test_grant_and_carve(void **state)
{
	struct fx *f = *state;
	struct sched_claim c[4];
	struct store_job job = {0};

	for (int i = 0; i < 3; i++) {
		claim(f, &c[i]);
		assert_int_equal(c[i].rc, 0);
		assert_int_equal(c[i].lease.epoch, 1);
		assert_int_equal(c[i].lease.units, LEASE_UNITS);
		assert_string_equal(c[i].workload, "graveler");
	}
	claim(f, &c[3]);
	assert_int_equal(c[3].rc, GERR_NOTFOUND);
	assert_string_equal(c[3].reason, "every lease is held: w1 holds 3");
	assert_int_equal(store_job_get(f->st, f->job, &job), 0);
	assert_int_equal(job.carve_done, 1);
	store_job_clear(&job);
	for (int i = 0; i < 4; i++)
		sched_claim_clear(&c[i]);
}

/* A job whose planner cannot go on fails alone: the next job still gets
 * its leases. */
static void test_broken_planner_fails_alone(void **state)
{
	struct fx *f = *state;
	struct sched_claim c;
	struct store_job job = {0};
	int64_t second;
	char *text = json_dumps(f->params, JSON_COMPACT);

	assert_int_equal(store_job_insert(f->st, "graveler", text, 6291456, 1001,
					  &second), 0);
	free(text);
	assert_int_equal(store_job_set_cursor(f->st, f->job, "{\"next\":\"x\"}", 0), 0);
	claim(f, &c);
	assert_int_equal(c.rc, 0);
	assert_int_equal(c.lease.job_id, second);
	sched_claim_clear(&c);
	assert_int_equal(store_job_get(f->st, f->job, &job), 0);
	assert_int_equal(job.state, JOB_FAILED);
	assert_non_null(strstr(job.reason, "planner failed"));
	store_job_clear(&job);
}

/* Claims follow the queue: the highest priority first, then the oldest
 * job; a job behind keeps its pending lease while a job ahead can carve;
 * only the first grant sets started_at. */
static void test_claim_queue_order(void **state)
{
	struct fx *f = *state;
	struct sched_claim c;
	struct store_job job = {0};
	int64_t low = f->job, high, same, pend, want[8];
	double started;
	char *text = json_dumps(f->params, JSON_COMPACT);

	claim(f, &c);
	assert_int_equal(c.rc, 0);
	assert_int_equal(c.lease.job_id, low);
	pend = c.lease.id;
	assert_int_equal(store_lease_release(f->st, pend, c.lease.epoch, 1001), 0);
	sched_claim_clear(&c);
	assert_int_equal(store_job_get(f->st, low, &job), 0);
	started = job.started_at;
	assert_true(started > 0);
	store_job_clear(&job);
	assert_int_equal(store_job_insert(f->st, "graveler", text, 6291456, 1001, &high), 0);
	assert_int_equal(store_job_insert(f->st, "graveler", text, 6291456, 1002, &same), 0);
	free(text);
	assert_int_equal(store_job_get(f->st, high, &job), 0);
	assert_true(job.started_at == 0 && job.priority == 0);
	store_job_clear(&job);
	assert_int_equal(store_job_set_priority(f->st, high, 3), 0);
	assert_int_equal(store_job_set_priority(f->st, same, 3), 0);
	/* gpuctl priority: same moves ahead of high. */
	assert_int_equal(store_job_set_priority(f->st, same, 4), 0);
	for (int i = 0; i < 8; i++)
		want[i] = i < 3 ? same : i < 6 ? high : low;
	for (int i = 0; i < 8; i++) {
		claim(f, &c);
		assert_int_equal(c.rc, 0);
		assert_int_equal(c.lease.job_id, want[i]);
		if (i == 6) /* low's pending lease before a new one */
			assert_int_equal(c.lease.id, pend);
		else if (want[i] == low)
			assert_int_not_equal(c.lease.id, pend);
		sched_claim_clear(&c);
	}
	assert_int_equal(store_job_get(f->st, low, &job), 0);
	assert_true(job.started_at == started);
	store_job_clear(&job);
	assert_int_equal(store_job_get(f->st, same, &job), 0);
	assert_true(job.started_at > 0 && job.priority == 4);
	store_job_clear(&job);
}

static void test_result_stale_verify_complete(void **state)
{
	struct fx *f = *state;
	struct sched_claim c[3];
	struct store_job job = {0};
	int finished = 0;

	for (int i = 0; i < 3; i++) {
		claim(f, &c[i]);
		assert_int_equal(c[i].rc, 0);
	}
	/* A stale epoch changes nothing. */
	assert_int_equal(upload(f, &c[0], 2, 1, 0), GERR_STALE);
	assert_int_equal(upload(f, &c[0], 1, 0, 0), 0); /* checkpoint */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(upload(f, &c[i], 1, 1, 0), 0);
		/* After the result, the lease is done: more uploads are stale. */
		assert_int_equal(upload(f, &c[i], 1, 1, 0), GERR_STALE);
	}
	assert_true(verify(f, c[0].lease.id, 1, &finished));
	assert_int_equal(finished, 0);
	assert_true(verify(f, c[1].lease.id, 1, &finished));
	assert_true(verify(f, c[2].lease.id, 1, &finished));
	assert_int_equal(finished, 1);
	assert_int_equal(store_job_get(f->st, f->job, &job), 0);
	assert_int_equal(job.state, JOB_DONE);
	assert_int_equal(job.units_verified, 3 * LEASE_UNITS);
	assert_non_null(job.answer);
	store_job_clear(&job);
	for (int i = 0; i < 3; i++)
		sched_claim_clear(&c[i]);
}

static void test_failed_verification_retries_then_fails(void **state)
{
	struct fx *f = *state;
	struct sched_claim c, again;
	struct store_lease l = {0};
	struct store_worker w = {0};
	struct store_job job = {0};

	claim(f, &c);
	assert_int_equal(upload(f, &c, 1, 1, 1), 0); /* stored, then ... */
	assert_false(verify(f, c.lease.id, 1, NULL)); /* ... refused */
	assert_int_equal(store_lease_get(f->st, c.lease.id, &l), 0);
	assert_int_equal(l.state, LEASE_PENDING);
	assert_int_equal(l.failures, 1);
	store_lease_clear(&l);
	assert_int_equal(store_worker_get(f->st, f->worker, &w), 0);
	assert_int_equal(w.failures, 1);
	store_worker_clear(&w);
	/* Its producer never gets it again: new work instead. */
	claim(f, &again);
	assert_int_equal(again.rc, 0);
	assert_true(again.lease.id != c.lease.id);
	sched_claim_clear(&again);
	/* Another worker's retry is the same lease at the next epoch. */
	assert_int_equal(store_worker_upsert(f->st, "w2", "", "cpu", 1000,
					     &f->worker), 0);
	claim(f, &again);
	assert_int_equal(again.rc, 0);
	assert_int_equal(again.lease.id, c.lease.id);
	assert_int_equal(again.lease.epoch, 2);
	assert_int_equal(upload(f, &again, 2, 1, 1), 0);
	assert_false(verify(f, again.lease.id, 2, NULL));
	assert_int_equal(store_job_get(f->st, f->job, &job), 0);
	assert_int_equal(job.state, JOB_FAILED); /* max_failures = 2 */
	assert_non_null(strstr(job.reason, "failed 2 times; last: verification failed"));
	store_job_clear(&job);
	sched_claim_clear(&c);
	sched_claim_clear(&again);
}

/* The upload of c decoded (is_result, tamper) into *u, with an early
 * check of its bytes in *v the way gpud starts it, before the store. */
static void early_check(struct fx *f, const struct sched_claim *c, int is_result,
			int tamper, struct sched_upload *u, struct sched_verify *v)
{
	memset(u, 0, sizeof(*u));
	memset(v, 0, sizeof(*v));
	u->pol = &f->pol;
	u->is_result = is_result;
	u->lease_id = c->lease.id;
	u->worker_id = f->worker;
	u->epoch = c->lease.epoch;
	u->units_done = c->lease.units;
	make_blob(f, c, is_result ? BLOB_RESULT : BLOB_CHECKPOINT, tamper,
		  &u->blob, &u->blob_len);
	sched_upload_load(f->st, u);
	assert_int_equal(u->rc, 0);
	sched_upload_decode(u);
	assert_int_equal(u->rc, 0);
	if (!is_result) {
		assert_null(u->raw); /* only results are kept for their check */
		return;
	}
	assert_non_null(u->raw);
	v->pol = &f->pol;
	v->lease_id = u->lease_id;
	v->epoch = u->epoch;
	v->seed = 42;
	v->workload = strdup(u->workload);
	v->params = strdup(u->params);
	v->spec = strdup(u->spec);
	v->raw = u->raw;
	v->raw_len = u->raw_len;
	u->raw = NULL;
	sched_verify_check(v);
	assert_int_equal(v->decode_s, 0); /* nothing read back */
}

/* The stored upload's commit, then the early verdict's: the lease after
 * both in *l (the caller clears it); u and v are cleared. */
static void early_commit(struct fx *f, struct sched_upload *u,
			 struct sched_verify *v, int64_t lease_id,
			 struct store_lease *l)
{
	assert_int_equal(u->rc, 0);
	sched_upload_commit(f->st, u);
	assert_int_equal(u->rc, 0);
	sched_verify_load(f->st, v);
	assert_int_equal(v->rc, 0);
	assert_string_equal(v->lease.result, u->hash);
	sched_verify_commit(f->st, v);
	assert_int_equal(v->rc, 0);
	assert_int_equal(store_lease_get(f->st, lease_id, l), 0);
	sched_verify_clear(v);
	sched_upload_clear(u);
}

/* A result checked before it is stored: the verdict commits only once the
 * lease is done at that epoch; a pass merges, a failure retries, and an
 * upload that never got stored leaves the check nothing to commit. */
static void test_early_verification(void **state)
{
	struct fx *f = *state;
	struct sched_claim c[3];
	struct sched_upload u;
	struct sched_verify v;
	struct store_lease l = {0};
	struct store_job job = {0};

	for (int i = 0; i < 3; i++) {
		claim(f, &c[i]);
		assert_int_equal(c[i].rc, 0);
	}
	early_check(f, &c[0], 0, 0, &u, &v); /* a checkpoint keeps no bytes */
	sched_upload_clear(&u);

	early_check(f, &c[0], 1, 0, &u, &v);
	assert_true(v.passed);
	sched_upload_store(&u);
	early_commit(f, &u, &v, c[0].lease.id, &l);
	assert_int_equal(l.state, LEASE_VERIFIED);
	store_lease_clear(&l);

	early_check(f, &c[1], 1, 1, &u, &v);
	assert_false(v.passed);
	sched_upload_check(&u);
	early_commit(f, &u, &v, c[1].lease.id, &l);
	assert_int_equal(l.state, LEASE_PENDING);
	assert_int_equal(l.failures, 1);
	store_lease_clear(&l);

	early_check(f, &c[2], 1, 0, &u, &v);
	assert_true(v.passed);
	sched_verify_load(f->st, &v); /* not stored: still leased */
	assert_int_equal(v.rc, GERR_STALE);
	sched_verify_clear(&v);
	sched_upload_clear(&u);
	assert_int_equal(store_lease_get(f->st, c[2].lease.id, &l), 0);
	assert_int_equal(l.state, LEASE_LEASED);
	store_lease_clear(&l);
	assert_int_equal(store_job_get(f->st, f->job, &job), 0);
	assert_int_equal(job.units_verified, LEASE_UNITS);
	store_job_clear(&job);
	for (int i = 0; i < 3; i++)
		sched_claim_clear(&c[i]);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Decode and store side by side: a result whose stream does not inflate
 * (valid checksums) is stored, then refused, and its file removed; a blob
 * naming another lease is never stored; the lease stays leased. */
static void test_store_beside_decode(void **state)
{
	struct fx *f = *state;
	struct sched_claim c[2];
	struct sched_upload u = {0};
	struct store_lease l = {0};
	char path[256];

	for (int i = 0; i < 2; i++) {
		claim(f, &c[i]);
		assert_int_equal(c[i].rc, 0);
	}
	u.pol = &f->pol;
	u.is_result = 1;
	u.lease_id = c[0].lease.id;
	u.worker_id = f->worker;
	u.epoch = 1;
	u.units_done = c[0].lease.units;
	make_blob(f, &c[0], BLOB_RESULT, 0, &u.blob, &u.blob_len);
	u.blob[u.blob_len - 1] ^= 0x55; /* the stream's Adler-32 */
	put_le32(u.blob + 56, (uint32_t)crc32(0, u.blob + 64,
					      (uInt)(u.blob_len - 64)));
	put_le32(u.blob + 60, (uint32_t)crc32(0, u.blob, 60));
	sched_upload_load(f->st, &u);
	assert_int_equal(u.rc, 0);
	sched_upload_store(&u);
	sched_upload_decode(&u);
	assert_int_equal(u.rc, GERR_CORRUPT);
	assert_true(u.stored);
	snprintf(path, sizeof(path), "%s/blobs/%.2s/%s", f->dir, u.hash, u.hash);
	assert_int_equal(access(path, F_OK), 0);
	assert_true(sched_upload_join(&u));
	assert_int_equal(u.rc, GERR_CORRUPT);
	sched_upload_unstore(&u);
	assert_false(u.stored);
	assert_int_equal(access(path, F_OK), -1);
	sched_upload_clear(&u);

	memset(&u, 0, sizeof(u));
	u.pol = &f->pol;
	u.is_result = 1;
	u.lease_id = c[0].lease.id;
	u.worker_id = f->worker;
	u.epoch = 1;
	u.units_done = c[0].lease.units;
	make_blob(f, &c[1], BLOB_RESULT, 0, &u.blob, &u.blob_len);
	sched_upload_load(f->st, &u);
	assert_int_equal(u.rc, 0);
	sched_upload_store(&u);
	assert_int_equal(u.store_rc, GERR_CORRUPT);
	assert_false(u.stored);
	sched_upload_decode(&u);
	assert_int_equal(u.rc, GERR_CORRUPT);
	assert_false(sched_upload_join(&u));
	sched_upload_clear(&u);

	assert_int_equal(store_lease_get(f->st, c[0].lease.id, &l), 0);
	assert_int_equal(l.state, LEASE_LEASED);
	store_lease_clear(&l);
	assert_int_equal(upload(f, &c[0], 1, 1, 0), 0);
	for (int i = 0; i < 2; i++)
		sched_claim_clear(&c[i]);
}

static void test_heartbeat_pause_cancel_expiry(void **state)
{
	struct fx *f = *state;
	struct sched_claim c, again;
	struct sched_heartbeat h = {0};
	int64_t *ids = NULL;
	size_t n = 0;

	claim(f, &c);
	assert_int_equal(upload(f, &c, 1, 0, 0), 0); /* a checkpoint */
	h.pol = &f->pol;
	h.worker_id = f->worker;
	h.lease_id = c.lease.id;
	h.epoch = 1;
	h.units_done = 10;
	sched_heartbeat(f->st, &h);
	assert_int_equal(h.rc, 0);
	assert_int_equal(h.action, MSG_HB_CONTINUE);
	assert_int_equal(store_job_set_state(f->st, f->job, JOB_PAUSED, NULL, 2000), 0);
	sched_heartbeat(f->st, &h);
	assert_int_equal(h.action, MSG_HB_RELEASE);
	claim(f, &again); /* a paused job grants nothing */
	assert_int_equal(again.rc, GERR_NOTFOUND);
	assert_non_null(strstr(again.reason, "paused"));
	sched_claim_clear(&again);
	assert_int_equal(store_job_set_state(f->st, f->job, JOB_ACTIVE, NULL, 2000), 0);
	/* Expiry puts it back with its checkpoint; the next grant is epoch 2. */
	assert_int_equal(store_lease_expire(f->st, gclock_wall() + 1e6, &ids, &n), 0);
	assert_int_equal(n, 1);
	free(ids);
	claim(f, &again);
	assert_int_equal(again.rc, 0);
	assert_int_equal(again.lease.epoch, 2);
	assert_non_null(again.checkpoint);
	/* The old holder's heartbeat is told to stop. */
	sched_heartbeat(f->st, &h);
	assert_int_equal(h.action, MSG_HB_STOP);
	assert_int_equal(store_job_set_state(f->st, f->job, JOB_CANCELLED, "test", 3000), 0);
	assert_int_equal(store_job_cancel_leases(f->st, f->job, 3000), 0);
	h.epoch = 2;
	sched_heartbeat(f->st, &h);
	assert_int_equal(h.action, MSG_HB_STOP);
	sched_claim_clear(&c);
	sched_claim_clear(&again);
}

/* ---- holders (sched_hold.c) ---- */

static int64_t add_worker2(struct fx *f, const char *name)
{
	int64_t id = 0;

	assert_int_equal(store_worker_upsert(f->st, name, "", "cpu", 1000, &id), 0);
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

/* The load step of an upload (no blob needed: it is refused before). */
static void upload_load(struct fx *f, struct sched_upload *u, int64_t worker,
			int64_t lease, uint64_t epoch, uint64_t units)
{
	memset(u, 0, sizeof(*u));
	u->pol = &f->pol;
	u->is_result = 1;
	u->worker_id = worker;
	u->lease_id = lease;
	u->epoch = epoch;
	u->units_done = units;
	sched_upload_load(f->st, u);
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

/* Someone else's lease, an unknown one and an epoch never granted get
 * the same refusal as a lease of one's own that went stale; only the first
 * three are charged, and the holder's lease is untouched. */
static void test_foreign_refused_alike(void **state)
{
	struct fx *f = *state;
	int64_t thief = add_worker2(f, "thief");
	struct sched_claim c, again, tc;
	struct sched_heartbeat h;
	struct sched_upload u;
	struct sched_release r;
	struct store_lease l;
	struct store_worker w;
	int64_t *ids = NULL, id;
	size_t n = 0;
	uint64_t ev = 0;
	const struct { int64_t lease_delta; uint64_t epoch; } forged[] = {
		{ 0, 1 }, { 0, 2 }, { 999, 1 },
	};

	claim(f, &c);
	assert_int_equal(c.rc, 0);
	id = c.lease.id;
	heartbeat(f, &h, f->worker, id, 1, 5);
	assert_int_equal(h.rc, 0);
	for (size_t i = 0; i < 3; i++) {
		int64_t lid = id + forged[i].lease_delta;

		heartbeat(f, &h, thief, lid, forged[i].epoch, 7);
		assert_int_equal(h.rc, GERR_STALE);
		assert_int_equal(h.action, MSG_HB_STOP);
		assert_true(h.foreign);
		upload_load(f, &u, thief, lid, forged[i].epoch, 7);
		assert_int_equal(u.rc, GERR_STALE);
		assert_string_equal(u.err, SCHED_NOT_HELD);
		assert_true(u.foreign);
		sched_upload_clear(&u);
	}
	release(f, &r, thief, id, 1, "");
	assert_int_equal(r.rc, GERR_STALE);
	assert_true(r.foreign);
	assert_true(r.quarantined); /* 7 charges, quarantine_after 5 */
	w = get_worker(f, thief);
	assert_int_equal(w.foreign_msgs, 7);
	assert_int_equal(w.quarantined, 1);
	store_worker_clear(&w);
	assert_int_equal(store_event_count(f->st, "foreign", 0, &ev), 0);
	assert_int_equal(ev, 7);
	claim(f, &tc);
	tc.worker_id = thief; /* claim() claims as f->worker: again as thief */
	sched_claim(f->st, &tc);
	assert_int_equal(tc.rc, GERR_STATE);
	assert_non_null(strstr(tc.reason, "thief is quarantined"));
	sched_claim_clear(&tc);
	assert_int_equal(store_lease_get(f->st, id, &l), 0);
	assert_int_equal(l.state, LEASE_LEASED);
	assert_int_equal(l.worker_id, f->worker);
	assert_int_equal(l.units_done, 5);
	store_lease_clear(&l);

	/* The holder's own stale epoch: the same reply, nobody charged. */
	assert_int_equal(store_lease_expire(f->st, gclock_wall() + 1e6, &ids, &n), 0);
	free(ids);
	claim(f, &again);
	assert_int_equal(again.lease.epoch, 2);
	heartbeat(f, &h, f->worker, id, 1, 5);
	assert_int_equal(h.rc, GERR_STALE);
	assert_int_equal(h.action, MSG_HB_STOP);
	assert_false(h.foreign);
	upload_load(f, &u, f->worker, id, 1, 5);
	assert_string_equal(u.err, SCHED_NOT_HELD);
	assert_false(u.foreign);
	sched_upload_clear(&u);
	w = get_worker(f, f->worker);
	assert_int_equal(w.foreign_msgs, 0);
	store_worker_clear(&w);
	heartbeat(f, &h, f->worker, id, 2, 5);
	assert_int_equal(h.action, MSG_HB_CONTINUE);
	sched_claim_clear(&c);
	sched_claim_clear(&again);
}

/* Progress is bounded by the lease; a lease whose progress stalls past the
 * timeout is revoked and its holder charged. */
static void test_progress_bounded_and_required(void **state)
{
	struct fx *f = *state;
	struct sched_claim c;
	struct sched_heartbeat h;
	struct sched_upload u;
	struct store_lease l;
	struct store_worker w;

	claim(f, &c);
	heartbeat(f, &h, f->worker, c.lease.id, 1, 9000000000000000000ull);
	assert_int_equal(h.rc, GERR_INVAL);
	assert_non_null(strstr(h.err, "more than the lease's"));
	upload_load(f, &u, f->worker, c.lease.id, 1, LEASE_UNITS + 1);
	assert_int_equal(u.rc, GERR_INVAL);
	sched_upload_clear(&u);
	assert_int_equal(store_lease_get(f->st, c.lease.id, &l), 0);
	assert_int_equal(l.units_done, 0);
	store_lease_clear(&l);

	f->pol.progress_timeout_s = 0.2;
	heartbeat(f, &h, f->worker, c.lease.id, 1, 5);
	assert_int_equal(h.action, MSG_HB_CONTINUE);
	usleep(300000);
	heartbeat(f, &h, f->worker, c.lease.id, 1, 6); /* grew: kept */
	assert_int_equal(h.action, MSG_HB_CONTINUE);
	assert_false(h.revoked);
	usleep(300000);
	heartbeat(f, &h, f->worker, c.lease.id, 1, 6);
	assert_int_equal(h.rc, 0);
	assert_int_equal(h.action, MSG_HB_STOP);
	assert_true(h.revoked);
	assert_non_null(strstr(h.why, "no progress"));
	assert_int_equal(store_lease_get(f->st, c.lease.id, &l), 0);
	assert_int_equal(l.state, LEASE_PENDING);
	assert_int_equal(l.failures, 0);
	store_lease_clear(&l);
	w = get_worker(f, f->worker);
	assert_int_equal(w.stalls, 1);
	store_worker_clear(&w);
	sched_claim_clear(&c);
}

/* A cap per worker; a claim that finds every lease held names who holds
 * what. */
static void test_cap_and_holders(void **state)
{
	struct fx *f = *state;
	int64_t other = add_worker2(f, "w2");
	struct sched_claim c[5];
	char held[256];

	f->pol.max_leases_per_worker = 2;
	for (int i = 0; i < 3; i++)
		claim(f, &c[i]);
	assert_int_equal(c[0].rc, 0);
	assert_int_equal(c[1].rc, 0);
	assert_int_equal(c[2].rc, GERR_STATE);
	assert_string_equal(c[2].reason, "worker w1 holds 2 leases, the most "
			    "one worker may hold (--max-leases-per-worker 2)");
	for (int i = 3; i < 5; i++) {
		claim(f, &c[i]);
		c[i].worker_id = other;
		sched_claim(f->st, &c[i]);
	}
	assert_int_equal(c[3].rc, 0); /* the job's third and last lease */
	assert_int_equal(c[4].rc, GERR_NOTFOUND);
	assert_string_equal(c[4].reason,
			    "every lease is held: w1 holds 2, w2 holds 1");
	sched_holders(f->st, f->job, held, sizeof(held));
	assert_string_equal(held, c[4].reason);
	sched_holders(f->st, f->job, held, 40); /* too small: cut short */
	assert_string_equal(held, "every lease is held: w1 holds 2, ...");
	for (int i = 0; i < 5; i++)
		sched_claim_clear(&c[i]);
}

/* Processes sharing a token are workers of their own (the per-worker cap
 * is each one's); --max-leases-per-credential caps them together. */
static void test_credential_cap(void **state)
{
	struct fx *f = *state;
	int64_t p1 = 0, p2 = 0, solo = 0;
	struct sched_claim c[4];

	assert_int_equal(store_worker_upsert(f->st, "fleet", "n1:1", "cpu",
					     1000, &p1), 0);
	assert_int_equal(store_worker_upsert(f->st, "fleet", "n2:1", "cpu",
					     1000, &p2), 0);
	assert_int_equal(store_worker_upsert(f->st, "solo", "n3:1", "cpu",
					     1000, &solo), 0);
	f->pol.max_leases_per_worker = 1;
	f->pol.max_leases_per_credential = 1;
	f->worker = p1;
	claim(f, &c[0]);
	assert_int_equal(c[0].rc, 0);
	f->worker = p2;
	claim(f, &c[1]);
	assert_int_equal(c[1].rc, GERR_STATE);
	assert_string_equal(c[1].reason, "the workers of token fleet hold 1 "
			    "leases, the most one token may hold "
			    "(--max-leases-per-credential 1)");
	f->worker = solo;
	claim(f, &c[2]);
	assert_int_equal(c[2].rc, 0);
	/* Without the token's cap, each process has its own. */
	f->pol.max_leases_per_credential = 0;
	f->worker = p2;
	claim(f, &c[3]);
	assert_int_equal(c[3].rc, 0);
	assert_true(c[3].lease.id != c[0].lease.id);
	for (int i = 0; i < 4; i++)
		sched_claim_clear(&c[i]);
}

/* A release with an error is a failure of the lease: after max_failures
 * (2 here) the job fails naming the lease and the last error. */
static void test_run_failures_fail_the_job(void **state)
{
	struct fx *f = *state;
	struct sched_claim c;
	struct sched_release r;
	struct store_lease l;
	struct store_job job = {0};
	char want[128];
	int64_t id;

	claim(f, &c);
	release(f, &r, f->worker, c.lease.id, 1, ""); /* a plain release */
	assert_int_equal(r.rc, 0);
	sched_claim_clear(&c);
	claim(f, &c);
	release(f, &r, f->worker, c.lease.id, 2, "fetch: blob corrupt");
	assert_int_equal(r.rc, 0);
	assert_false(r.job_failed);
	assert_int_equal(store_lease_get(f->st, c.lease.id, &l), 0);
	assert_int_equal(l.state, LEASE_PENDING);
	assert_int_equal(l.failures, 1);
	store_lease_clear(&l);
	assert_int_equal(store_job_get(f->st, f->job, &job), 0);
	assert_non_null(strstr(job.reason, "failure 1 of 2"));
	store_job_clear(&job);
	/* The worker it failed on gets other work; another worker gets it. */
	id = c.lease.id;
	sched_claim_clear(&c);
	claim(f, &c);
	assert_int_equal(c.rc, 0);
	assert_true(c.lease.id != id);
	sched_claim_clear(&c);
	assert_int_equal(store_worker_upsert(f->st, "w2", "", "cpu", 1000,
					     &f->worker), 0);
	claim(f, &c);
	assert_int_equal(c.lease.id, id);
	assert_int_equal(c.lease.epoch, 3);
	release(f, &r, f->worker, c.lease.id, 3, "fetch: blob corrupt");
	assert_int_equal(r.rc, 0);
	assert_true(r.job_failed);
	assert_int_equal(store_job_get(f->st, f->job, &job), 0);
	assert_int_equal(job.state, JOB_FAILED);
	snprintf(want, sizeof(want), "lease %lld failed 2 times; last: run "
		 "failed on a worker: fetch: blob corrupt",
		 (long long)c.lease.id);
	assert_string_equal(job.reason, want);
	store_job_clear(&job);
	sched_claim_clear(&c);
}

/* A test on a fresh fixture of its own. */
#define TS(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

UNIT_MAIN(TS(test_grant_and_carve),
	TS(test_broken_planner_fails_alone),
	TS(test_claim_queue_order),
	TS(test_result_stale_verify_complete),
	TS(test_failed_verification_retries_then_fails),
	TS(test_early_verification),
	TS(test_store_beside_decode),
	TS(test_heartbeat_pause_cancel_expiry),
	TS(test_foreign_refused_alike),
	TS(test_progress_bounded_and_required),
	TS(test_cap_and_holders),
	TS(test_credential_cap),
	TS(test_run_failures_fail_the_job))
