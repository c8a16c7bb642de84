/* runner.c - the runner thread (see runner.h for the invariants): the
 * lease's run, its wl_run_io callbacks (progress, checkpoint cadence,
 * fetches), a finished run ahead's wait for adoption, and the loop
 * thread's API. The rest of the run ahead is next_run.c's; packing and
 * posting the result is result_pack.c's. */
#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "blobcache.h"
#include "gerr.h"
#include "proto.h"
#include "next_run.h"
#include "result_pack.h"
#include "runner.h"

#define BIT(s) (1u << (s))
/* Between checkpoints until gpud's cadence is known (WELCOME). */
#define RUNNER_CKPT_DEFAULT_S 60.0

static const char *const fetch_names[RUNNER_FETCH_COUNT] = {
	"idle", "posted", "asked", "answered",
};

static const unsigned fetch_next[RUNNER_FETCH_COUNT] = {
	[RUNNER_FETCH_IDLE] = BIT(RUNNER_FETCH_POSTED),
	[RUNNER_FETCH_POSTED] = BIT(RUNNER_FETCH_ASKED) | BIT(RUNNER_FETCH_IDLE),
	[RUNNER_FETCH_ASKED] = BIT(RUNNER_FETCH_ANSWERED) |
			       BIT(RUNNER_FETCH_IDLE),
	[RUNNER_FETCH_ANSWERED] = BIT(RUNNER_FETCH_IDLE),
};

/* Move the fetch state; caller holds mu. */
static void fetch_move(struct runner *r, enum runner_fetch_state to)
{
	assert(fetch_next[r->fetch_state] & BIT(to));
	LOG_DEBUG(r->log, "fetch %s -> %s hash=%.16s",
		  fetch_names[r->fetch_state], fetch_names[to], r->fetch_hash);
	r->fetch_state = to;
}

/* Back to IDLE, dropping an answer nobody took; caller holds mu. */
static void fetch_reset(struct runner *r)
{
	if (r->fetch_state == RUNNER_FETCH_IDLE)
		return;
	free(r->fetch_blob);
	r->fetch_blob = NULL;
	r->fetch_blob_len = 0;
	r->fetch_rc = 0;
	fetch_move(r, RUNNER_FETCH_IDLE);
	r->fetch_hash[0] = '\0';
}

/* ---- wl_run_io callbacks: runner thread ---- */

/* The run is no longer wanted: quit, a stop, or (ahead) a lease came that
 * is not the one it guessed. Caller holds mu. */
static int run_stopped(struct runner_ctx *ctx)
{
	struct runner *r = ctx->r;

	next_run_sync(ctx);
	return r->quit || r->run_id != ctx->run_id || r->stop;
}

static void io_progress(void *opaque, uint64_t units_done)
{
	struct runner_ctx *ctx = opaque;
	struct runner *r = ctx->r;

	uv_mutex_lock(&r->mu);
	if (r->run_id == ctx->run_id) {
		/* While ahead, the loop may still report the last lease. */
		if (next_run_sync(ctx))
			r->ahead_units = units_done;
		else
			r->units_done = units_done;
	}
	uv_mutex_unlock(&r->mu);
}

static int io_checkpoint_due(void *opaque)
{
	struct runner_ctx *ctx = opaque;
	struct runner *r = ctx->r;
	uint64_t now = uv_hrtime();
	int due;

	uv_mutex_lock(&r->mu);
	/* A run ahead has no lease to checkpoint for. */
	due = !run_stopped(ctx) && !ctx->ahead &&
	      (r->ckpt_requested ||
	       now - r->last_ckpt_ns >= r->ckpt_interval_ns);
	uv_mutex_unlock(&r->mu);
	return due;
}

static int io_should_stop(void *opaque)
{
	struct runner_ctx *ctx = opaque;
	struct runner *r = ctx->r;
	int stop;

	uv_mutex_lock(&r->mu);
	stop = run_stopped(ctx);
	uv_mutex_unlock(&r->mu);
	return stop;
}

static int io_checkpoint(void *opaque, const void *bytes, size_t len,
			 uint64_t units_done)
{
	struct runner_ctx *ctx = opaque;
	struct runner *r = ctx->r;
	const struct runner_job *job = ctx->job;
	uint8_t *blob = NULL;
	size_t blob_len = 0;
	int rc, stop, ahead;

	uv_mutex_lock(&r->mu);
	stop = run_stopped(ctx);
	ahead = ctx->ahead; /* synced by run_stopped() */
	uv_mutex_unlock(&r->mu);
	if (stop)
		return GERR_CANCELLED;
	if (ahead)
		return 0; /* no lease yet: nothing to upload it to */
	/* Compress here, not on the loop thread (invariant 4). */
	rc = blob_encode(BLOB_CHECKPOINT, job->wl->name, job->lease, job->epoch,
			 bytes, len, &blob, &blob_len);
	if (rc < 0) {
		LOG_WARN(r->log, "checkpoint encode failed job=%" PRIu64
			 " lease=%" PRIu64 " epoch=%" PRIu64 ": %s", job->job,
			 job->lease, job->epoch, gerr_str(rc));
		return rc;
	}
	if (blob_len > PROTO_MAX_BIN) {
		LOG_WARN(r->log, "checkpoint too big to upload job=%" PRIu64
			 " lease=%" PRIu64 " epoch=%" PRIu64 " bytes=%zu",
			 job->job, job->lease, job->epoch, blob_len);
		free(blob);
		return GERR_TOOBIG;
	}

	uv_mutex_lock(&r->mu);
	if (run_stopped(ctx)) {
		uv_mutex_unlock(&r->mu);
		free(blob);
		return GERR_CANCELLED;
	}
	/* Only the newest checkpoint matters: replace one the loop has not
	 * taken yet. */
	if (r->has_ckpt)
		free(r->ckpt.blob);
	r->ckpt = (struct runner_ckpt){
		.run_id = ctx->run_id,
		.blob = blob,
		.blob_len = blob_len,
		.units_done = units_done,
		.requested = r->ckpt_requested,
	};
	r->has_ckpt = 1;
	r->ckpt_requested = 0;
	r->last_ckpt_ns = uv_hrtime();
	r->units_done = units_done;
	uv_mutex_unlock(&r->mu);

	LOG_DEBUG(r->log, "checkpoint made job=%" PRIu64 " lease=%" PRIu64
		  " epoch=%" PRIu64 " units_done=%" PRIu64 " raw=%zu blob=%zu",
		  job->job, job->lease, job->epoch, units_done, len, blob_len);
	uv_async_send(&r->async);
	return 0;
}

/* 64 lowercase hex digits, as gpud names blobs. */
static int hash_valid(const char *hash)
{
	if (!hash)
		return 0;
	for (size_t i = 0; i < BLOB_HASH_HEX - 1; i++)
		if (!((hash[i] >= '0' && hash[i] <= '9') ||
		      (hash[i] >= 'a' && hash[i] <= 'f')))
			return 0;
	return hash[BLOB_HASH_HEX - 1] == '\0';
}

/* Ask the loop for a blob and wait for gpud's answer (invariant 5). On 0
 * *ret_blob is the blob as received (malloc'ed). */
static int fetch_wait(struct runner *r, const char *hash, uint8_t **ret_blob,
		      size_t *ret_len)
{
	int rc;

	uv_mutex_lock(&r->mu);
	if (r->stop || r->quit) {
		uv_mutex_unlock(&r->mu);
		return GERR_CANCELLED;
	}
	assert(r->fetch_state == RUNNER_FETCH_IDLE);
	memcpy(r->fetch_hash, hash, BLOB_HASH_HEX);
	fetch_move(r, RUNNER_FETCH_POSTED);
	uv_async_send(&r->async);
	while (r->fetch_state != RUNNER_FETCH_ANSWERED && !r->stop && !r->quit)
		uv_cond_wait(&r->cv, &r->mu);
	/* Invariant 6: a stop wins over an answer that came with it. */
	if (r->stop || r->quit) {
		rc = GERR_CANCELLED;
	} else {
		rc = r->fetch_rc;
		if (rc == 0) {
			*ret_blob = r->fetch_blob;
			*ret_len = r->fetch_blob_len;
			r->fetch_blob = NULL;
		}
	}
	fetch_reset(r);
	uv_mutex_unlock(&r->mu);
	return rc;
}

static int io_fetch(void *opaque, const char *hash, void **ret,
		    size_t *ret_len)
{
	struct runner_ctx *ctx = opaque;
	struct runner *r = ctx->r;
	const struct runner_job *job = ctx->job;
	struct blob_info info;
	char got[BLOB_HASH_HEX], err[256] = "";
	uint8_t *blob = NULL, *raw = NULL;
	size_t blob_len = 0, raw_len = 0;
	uint64_t t0 = uv_hrtime();
	int rc;

	if (!hash_valid(hash)) {
		LOG_WARN(r->log, "fetch refused: not a blob hash (64 lowercase "
			 "hex digits) job=%" PRIu64 " lease=%" PRIu64
			 " epoch=%" PRIu64, job->job, job->lease, job->epoch);
		return GERR_INVAL;
	}
	if (io_should_stop(opaque))
		return GERR_CANCELLED;
	if (strcmp(hash, NEXT_RUN_PENDING_HASH) == 0)
		return next_run_take_pending(r, ret, ret_len);
	rc = blobcache_get(r->cache, hash, ret, ret_len);
	if (rc != GERR_NOTFOUND) {
		if (rc == 0)
			LOG_DEBUG(r->log, "fetch hash=%.16s bytes=%zu from cache "
				  "job=%" PRIu64 " lease=%" PRIu64, hash,
				  *ret_len, job->job, job->lease);
		return rc;
	}
	uv_mutex_lock(&r->mu);
	rc = next_run_sync(ctx);
	uv_mutex_unlock(&r->mu);
	if (rc)
		return GERR_NOTFOUND; /* no lease to ask gpud under */

	LOG_DEBUG(r->log, "fetch hash=%.16s from gpud job=%" PRIu64
		  " lease=%" PRIu64 " epoch=%" PRIu64, hash, job->job,
		  job->lease, job->epoch);
	rc = fetch_wait(r, hash, &blob, &blob_len);
	if (rc < 0) {
		LOG_DEBUG(r->log, "fetch hash=%.16s failed: %s", hash,
			  gerr_str(rc));
		return rc;
	}
	/* Hash and inflate here, not on the loop thread (invariant 4). The
	 * hash check catches a wrong or damaged blob whose own CRCs agree. */
	blob_hash_hex(blob, blob_len, got);
	if (strcmp(got, hash) != 0) {
		LOG_WARN(r->log, "fetched blob does not match its hash "
			 "asked=%.16s got=%.16s bytes=%zu", hash, got, blob_len);
		free(blob);
		return GERR_CORRUPT;
	}
	rc = blob_decode(blob, blob_len, &info, &raw, &raw_len, err,
			 sizeof(err));
	free(blob);
	if (rc < 0) {
		LOG_WARN(r->log, "fetched blob hash=%.16s is corrupt: %s", hash,
			 err[0] ? err : gerr_str(rc));
		return rc;
	}
	LOG_DEBUG(r->log, "fetch hash=%.16s bytes=%zu blob=%zu seconds=%.3f "
		  "job=%" PRIu64 " lease=%" PRIu64, hash, raw_len, blob_len,
		  (double)(uv_hrtime() - t0) / 1e9, job->job, job->lease);
	/* Not kept when too big or out of memory: the next lease fetches
	 * again, which is slower but correct. */
	rc = blobcache_put(r->cache, hash, raw, raw_len);
	if (rc < 0)
		LOG_DEBUG(r->log, "fetched blob not cached hash=%.16s: %s", hash,
			  gerr_str(rc));
	*ret = raw;
	*ret_len = raw_len;
	return 0;
}

/* ---- the run: runner thread ---- */

/* Decode the checkpoint gpud sent with the lease. A bad one is not fatal:
 * the lease is simply run from the start. Returns 1 when *ret_raw is set. */
static int decode_checkpoint(struct runner *r, const struct runner_job *job,
			     uint8_t **ret_raw, size_t *ret_len)
{
	struct blob_info info;
	char err[256] = "";
	uint8_t *raw = NULL;
	size_t raw_len = 0;
	int rc;

	if (!job->ckpt_blob || job->ckpt_blob_len == 0)
		return 0;
	rc = blob_decode(job->ckpt_blob, job->ckpt_blob_len, &info, &raw,
			 &raw_len, err, sizeof(err));
	if (rc == 0 && info.kind != BLOB_CHECKPOINT)
		snprintf(err, sizeof(err), "blob is not a checkpoint");
	else if (rc == 0 && strcmp(info.workload, job->wl->name) != 0)
		snprintf(err, sizeof(err), "checkpoint is for workload '%s'",
			 info.workload);
	else if (rc == 0 && info.lease != job->lease)
		snprintf(err, sizeof(err), "checkpoint is for lease %" PRIu64,
			 info.lease);
	else if (rc == 0) {
		*ret_raw = raw;
		*ret_len = raw_len;
		return 1;
	}
	free(raw);
	LOG_WARN(r->log, "bad checkpoint, running from scratch job=%" PRIu64
		 " lease=%" PRIu64 " epoch=%" PRIu64 ": %s", job->job,
		 job->lease, job->epoch, err[0] ? err : gerr_str(rc));
	return 0;
}

/* A finished run ahead waits here until the loop adopts it (returns 1) or
 * it is no longer wanted (0). Caller holds mu. */
static int wait_adopted(struct runner_ctx *ctx)
{
	struct runner *r = ctx->r;

	while (next_run_sync(ctx) && !run_stopped(ctx))
		uv_cond_wait(&r->cv, &r->mu);
	return !run_stopped(ctx);
}

/* Run job (ahead: no lease yet, invariant 7). Returns 1 when *res is to be
 * posted to the loop, 0 when a run ahead ended unadopted (nothing to post).
 * On a successful run (res->rc 0) *ret_out holds its output, not yet
 * encoded (caller frees). */
static int run_one(struct runner *r, struct runner_job *job, uint64_t run_id,
		   int ahead, struct runner_result *res, void **ret_out,
		   size_t *ret_out_len)
{
	struct runner_ctx ctx = { .r = r, .job = job, .run_id = run_id,
			       .ahead = ahead };
	const struct wl_run_io io = {
		.opaque = &ctx,
		.progress = io_progress,
		.checkpoint_due = io_checkpoint_due,
		.checkpoint = io_checkpoint,
		.should_stop = io_should_stop,
		.fetch = io_fetch,
	};
	uint64_t t0 = uv_hrtime();
	uint64_t start_units = 0, units_now;
	uint8_t *raw = NULL;
	size_t raw_len = 0;
	void *out = NULL;
	size_t out_len = 0;
	int rc, post;

	memset(res, 0, sizeof(*res));
	res->run_id = run_id;
	if (decode_checkpoint(r, job, &raw, &raw_len))
		start_units = job->units_done;
	uv_mutex_lock(&r->mu);
	if (r->run_id == run_id && !ahead)
		r->units_done = start_units;
	uv_mutex_unlock(&r->mu);

	LOG_INFO(r->log, "run %s job=%" PRIu64 " lease=%" PRIu64
		 " epoch=%" PRIu64 " workload=%s units=%" PRIu64
		 " resume_at=%" PRIu64, ahead ? "ahead" : "start", job->job,
		 job->lease, job->epoch, job->wl->name, job->units,
		 start_units);
	rc = job->wl->run(workload_ctx(job->wl), job->params, job->spec, raw, raw_len, &job->dev, &io,
			  &out, &out_len, res->err, sizeof(res->err));
	free(raw);
	free(r->pending); /* a run ahead that never fetched its state */
	r->pending = NULL;
	/* The run's own time, not the wait for adoption. */
	res->seconds = (double)(uv_hrtime() - t0) / 1e9;
	if (rc == 0 && ahead)
		r->pre = result_pack_pre_start(job, out, out_len);

	uv_mutex_lock(&r->mu);
	next_run_sync(&ctx); /* adopted since its last callback? */
	if (rc == 0 && ctx.ahead)
		post = wait_adopted(&ctx);
	else
		post = !ctx.ahead;
	units_now = r->units_done;
	uv_mutex_unlock(&r->mu);
	if (!post) {
		LOG_INFO(r->log, "run ahead dropped job=%" PRIu64 ": %s",
			 job->job, rc ? gerr_str(rc) : "another lease came");
		result_pack_pre_drop(r->pre);
		r->pre = NULL;
		free(out);
		return 0;
	}

	if (rc == 0) {
		*ret_out = out;
		*ret_out_len = out_len;
	} else {
		if (res->err[0] == '\0')
			snprintf(res->err, sizeof(res->err), "%s",
				 gerr_str(rc));
		free(out);
	}
	res->rc = rc;
	res->units_done = rc == 0 ? job->units : units_now;
	res->units_run = res->units_done > start_units
			 ? res->units_done - start_units : 0;
	return 1;
}

static void runner_main(void *arg)
{
	struct runner *r = arg;

	for (;;) {
		struct runner_job job;
		struct runner_result res;
		uint64_t run_id;
		int ahead = 0;

		uv_mutex_lock(&r->mu);
		while (!r->quit && !r->has_job)
			uv_cond_wait(&r->cv, &r->mu);
		if (r->quit) {
			uv_mutex_unlock(&r->mu);
			break;
		}
		job = r->job;
		memset(&r->job, 0, sizeof(r->job));
		r->has_job = 0;
		run_id = r->run_id;
		uv_mutex_unlock(&r->mu);

		/* The lease, then the run ahead each result leads to, for as
		 * long as the loop adopts them. */
		for (;;) {
			void *out = NULL;
			size_t out_len = 0;
			char hash[BLOB_HASH_HEX];

			if (!run_one(r, &job, run_id, ahead, &res, &out,
				     &out_len))
				break;
			ahead = res.rc == 0 &&
				next_run_start(r, &job, out, out_len, &res, &run_id);
			if (ahead)
				continue; /* the encoder posts res */
			if (res.rc == 0)
				res.rc = result_pack_encode(r, &job, out, out_len,
							    r->pre, &res, hash);
			else
				result_pack_pre_drop(r->pre);
			r->pre = NULL;
			free(out);
			result_pack_post(r, &res);
			break;
		}
		runner_job_clear(&job);
	}
}

/* ---- loop thread API ---- */

static void on_async(uv_async_t *h)
{
	struct runner *r = h->data;

	r->wake(r->wake_opaque);
}

int runner_init(struct runner *r, uv_loop_t *loop, const struct glog *log,
		double ckpt_interval_s, int run_ahead, runner_wake_fn wake,
		void *opaque)
{
	sigset_t all, old;
	uint64_t mem;
	int rc;

	memset(r, 0, sizeof(*r));
	r->log = log;
	r->ckpt_interval_ns = (uint64_t)(ckpt_interval_s * 1e9);
	if (!r->ckpt_interval_ns)
		r->ckpt_interval_ns = (uint64_t)(RUNNER_CKPT_DEFAULT_S * 1e9);
	r->run_ahead = run_ahead;
	r->wake = wake;
	r->wake_opaque = opaque;
	mem = uv_get_total_memory();
	if (uv_get_constrained_memory() > 0 &&
	    uv_get_constrained_memory() < mem)
		mem = uv_get_constrained_memory(); /* a cgroup limit */
	if (blobcache_new(blobcache_default_cap(mem), &r->cache) < 0)
		return GERR_NOMEM;
	if (uv_mutex_init(&r->mu) != 0) {
		blobcache_free(r->cache);
		return GERR_NOMEM;
	}
	if (uv_cond_init(&r->cv) != 0) {
		uv_mutex_destroy(&r->mu);
		blobcache_free(r->cache);
		return GERR_NOMEM;
	}
	if (uv_async_init(loop, &r->async, on_async) != 0) {
		uv_cond_destroy(&r->cv);
		uv_mutex_destroy(&r->mu);
		blobcache_free(r->cache);
		return GERR_NOMEM;
	}
	r->async.data = r;
	/* Signals belong to the loop thread (uv_signal_t); a workload's
	 * system calls should not see EINTR. The new thread inherits the
	 * blocked mask. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = uv_thread_create(&r->thread, runner_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		uv_close((uv_handle_t *)&r->async, NULL);
		uv_cond_destroy(&r->cv);
		uv_mutex_destroy(&r->mu);
		blobcache_free(r->cache);
		return GERR_NOMEM;
	}
	r->started = 1;
	LOG_DEBUG(log, "blob cache capacity=%zu bytes", blobcache_default_cap(mem));
	return 0;
}

void runner_close(struct runner *r)
{
	if (!r || !r->started)
		return;
	uv_mutex_lock(&r->mu);
	r->quit = 1;
	r->stop = 1;
	/* Wakes the thread whether it waits for a job or for a fetch. */
	uv_cond_signal(&r->cv);
	uv_mutex_unlock(&r->mu);
	uv_thread_join(&r->thread);
	next_run_join_encoder(r); /* it may post one last result: freed below */
	r->started = 0;
	free(r->pending);
	r->pending = NULL;

	fetch_reset(r); /* the thread is gone: no lock needed */
	blobcache_free(r->cache);
	r->cache = NULL;

	if (r->has_job)
		runner_job_clear(&r->job);
	free(r->ahead_key);
	r->ahead_key = NULL;
	if (r->has_ckpt)
		free(r->ckpt.blob);
	if (r->has_result)
		free(r->result.blob);
	r->has_job = r->has_ckpt = r->has_result = 0;
	uv_close((uv_handle_t *)&r->async, NULL);
	uv_cond_destroy(&r->cv);
	uv_mutex_destroy(&r->mu);
}

int runner_start(struct runner *r, struct runner_job *job,
		 uint64_t *ret_run_id)
{
	uv_mutex_lock(&r->mu);
	if (r->busy || r->quit) {
		uv_mutex_unlock(&r->mu);
		return GERR_STATE;
	}
	if (next_run_adopt(r, job, ret_run_id)) {
		uv_mutex_unlock(&r->mu);
		LOG_INFO(r->log, "run ahead adopted job=%" PRIu64 " lease=%"
			 PRIu64 " epoch=%" PRIu64 " units_done=%" PRIu64,
			 job->job, job->lease, job->epoch, r->ahead_units);
		runner_job_clear(job);
		return 0;
	}
	/* Outputs of an older run that the loop never took are dropped. */
	if (r->has_ckpt) {
		free(r->ckpt.blob);
		r->has_ckpt = 0;
	}
	r->job = *job;
	r->has_job = 1;
	r->run_id = ++r->next_run_id;
	r->busy = 1;
	r->stop = 0;
	r->ckpt_requested = 0;
	r->last_ckpt_ns = uv_hrtime();
	r->units_done = job->units_done;
	*ret_run_id = r->run_id;
	uv_cond_signal(&r->cv);
	uv_mutex_unlock(&r->mu);
	memset(job, 0, sizeof(*job));
	return 0;
}

void runner_stop(struct runner *r)
{
	uv_mutex_lock(&r->mu);
	if (r->busy) {
		r->stop = 1;
		/* A run blocked in a fetch returns at once (invariant 6). */
		uv_cond_signal(&r->cv);
	}
	uv_mutex_unlock(&r->mu);
}

void runner_set_checkpoint_interval(struct runner *r, double seconds)
{
	if (!(seconds > 0))
		return;
	uv_mutex_lock(&r->mu);
	r->ckpt_interval_ns = (uint64_t)(seconds * 1e9);
	uv_mutex_unlock(&r->mu);
}

void runner_request_checkpoint(struct runner *r)
{
	uv_mutex_lock(&r->mu);
	if (r->busy)
		r->ckpt_requested = 1;
	uv_mutex_unlock(&r->mu);
}

int runner_busy(struct runner *r)
{
	int busy;

	uv_mutex_lock(&r->mu);
	busy = r->busy;
	uv_mutex_unlock(&r->mu);
	return busy;
}

uint64_t runner_units_done(struct runner *r)
{
	uint64_t u;

	uv_mutex_lock(&r->mu);
	u = r->units_done;
	uv_mutex_unlock(&r->mu);
	return u;
}

/* Move an output waiting in *slot (size bytes, *has set) to ret, leaving
 * the slot empty; 0 when none waits. mu held. */
static int take_output(int *has, void *slot, void *ret, size_t size)
{
	if (!*has)
		return 0;
	memcpy(ret, slot, size);
	memset(slot, 0, size);
	*has = 0;
	return 1;
}

int runner_take_checkpoint(struct runner *r, struct runner_ckpt *ret)
{
	int got;

	uv_mutex_lock(&r->mu);
	got = take_output(&r->has_ckpt, &r->ckpt, ret, sizeof(*ret));
	uv_mutex_unlock(&r->mu);
	return got;
}

int runner_take_result(struct runner *r, struct runner_result *ret)
{
	int got;

	uv_mutex_lock(&r->mu);
	got = take_output(&r->has_result, &r->result, ret, sizeof(*ret));
	if (got) {
		r->busy = 0;
		r->stop = 0;
		r->ckpt_requested = 0;
	}
	uv_mutex_unlock(&r->mu);
	return got;
}

int runner_take_fetch(struct runner *r, char ret_hash[BLOB_HASH_HEX])
{
	int got;

	uv_mutex_lock(&r->mu);
	got = r->fetch_state == RUNNER_FETCH_POSTED;
	if (got) {
		memcpy(ret_hash, r->fetch_hash, BLOB_HASH_HEX);
		fetch_move(r, RUNNER_FETCH_ASKED);
	}
	uv_mutex_unlock(&r->mu);
	return got;
}

int runner_fetch_done(struct runner *r, const char *hash, int rc,
		      uint8_t *blob, size_t len)
{
	int taken;

	uv_mutex_lock(&r->mu);
	taken = r->fetch_state == RUNNER_FETCH_ASKED &&
		strcmp(r->fetch_hash, hash) == 0;
	if (taken) {
		r->fetch_rc = rc;
		r->fetch_blob = rc == 0 ? blob : NULL;
		r->fetch_blob_len = rc == 0 ? len : 0;
		if (rc == 0)
			blob = NULL;
		fetch_move(r, RUNNER_FETCH_ANSWERED);
		uv_cond_signal(&r->cv);
	}
	uv_mutex_unlock(&r->mu);
	free(blob);
	return taken;
}
