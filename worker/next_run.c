/* next_run.c - the run ahead (runner.h invariants 7-9, next_run.h): the
 * run of the lease gpud will most likely grant next, started before that
 * lease exists, its result's encoder thread, and its adoption. The early
 * compression of a finished run ahead's result (invariant 9) is result_pack.c's;
 * the finished run ahead's wait for adoption is runner.c's.
 */
#include "next_run.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "blob.h"
#include "gerr.h"
#include "result_pack.h"

/* A result the encoder thread compresses beside the run ahead that starts
 * from it. Owned by the encoder thread once started. */
struct encode_job {
	struct runner *r;
	struct runner_job done;   /* the finished run: identity, params, spec */
	uint64_t ahead_run_id;    /* the run ahead started from out */
	void *out;                /* the finished run's output */
	size_t out_len;
	struct result_pack_pre *pre; /* out, compressed already (or NULL) */
	struct runner_result res;
};

/* A run ahead learns here, under mu, that the loop adopted it (invariant
 * 7): from then on it is the lease's run. Returns non-zero while the run
 * is still ahead. */
int next_run_sync(struct runner_ctx *ctx)
{
	struct runner *r = ctx->r;

	if (ctx->ahead && !r->ahead && r->run_id == ctx->run_id) {
		ctx->ahead = 0;
		ctx->job->lease = r->adopted.lease;
		ctx->job->epoch = r->adopted.epoch;
		ctx->job->units = r->adopted.units;
	}
	return ctx->ahead;
}

/* The encoder thread (invariant 8): encode the finished run's result, then,
 * under mu, give the run ahead its guess (the next spec, now that the blob
 * hash is known) before posting the result, so the loop can adopt it as
 * soon as it has the result. Without a guess the run ahead is made stale. */
static void encoder_main(void *arg)
{
	struct encode_job *e = arg;
	struct runner *r = e->r;
	struct runner_job *done = &e->done;
	char hash[BLOB_HASH_HEX];
	json_t *next = NULL;
	char *key = NULL;

	e->res.rc = result_pack_encode(r, done, e->out, e->out_len, e->pre,
				       &e->res, hash);
	if (e->res.rc == 0 &&
	    done->wl->next_lease(workload_ctx(done->wl), done->params, done->spec, e->out, e->out_len,
				 hash, &next) == 0)
		key = next_run_key(done->job, done->params, next);
	json_decref(next);
	uv_mutex_lock(&r->mu);
	if (r->ahead && r->run_id == e->ahead_run_id) {
		if (key) {
			r->ahead_key = key;
			key = NULL;
		} else {
			r->run_id = ++r->next_run_id;
		}
	}
	uv_mutex_unlock(&r->mu);
	result_pack_post(r, &e->res);
	free(key);
	free(e->out);
	runner_job_clear(done);
	free(e);
}

/* Wait for the encoder thread of the last result, if any. */
void next_run_join_encoder(struct runner *r)
{
	if (r->enc_running) {
		uv_thread_join(&r->enc_thread);
		r->enc_running = 0;
	}
}

/* After a successful run of job with output out: start the run ahead that
 * its result leads to (workload next_lease), from out itself under
 * NEXT_RUN_PENDING_HASH, with a new run id, while the encoder thread
 * encodes the result and posts it (invariant 8). On 1, job is the run ahead and the
 * encoder owns out; on 0 (no run ahead: none follows, a lease is waiting,
 * quit, or no memory) nothing changed. */
int next_run_start(struct runner *r, struct runner_job *job, void *out,
		   size_t out_len, const struct runner_result *res,
		   uint64_t *ret_run_id)
{
	struct encode_job *e = NULL;
	json_t *spec = NULL, *params = NULL, *done_spec = NULL;
	void *pending = NULL;

	if (!r->run_ahead || !job->wl->next_lease ||
	    job->wl->next_lease(workload_ctx(job->wl), job->params, job->spec, out, out_len,
				NEXT_RUN_PENDING_HASH, &spec) != 0)
		return 0;
	e = calloc(1, sizeof(*e));
	pending = big_alloc(out_len);
	params = json_deep_copy(job->params);
	done_spec = json_deep_copy(job->spec);
	if (!e || !pending || !params || !done_spec)
		goto fail;
	big_copy(pending, out, out_len);
	next_run_join_encoder(r);

	uv_mutex_lock(&r->mu);
	if (r->quit || r->has_job) {
		uv_mutex_unlock(&r->mu);
		goto fail;
	}
	*e = (struct encode_job){
		.r = r, .done = *job, .out = out, .out_len = out_len,
		.pre = r->pre, .res = *res,
	};
	r->pre = NULL;
	/* The encoder's copies: the run ahead keeps job's params. */
	e->done.params = params;
	e->done.spec = done_spec;
	e->done.ckpt_blob = NULL;
	e->done.ckpt_blob_len = 0;
	free(r->ahead_key);
	r->ahead_key = NULL; /* set by the encoder: no adoption before */
	r->ahead = 1;
	r->ahead_units = 0;
	r->run_id = *ret_run_id = e->ahead_run_id = ++r->next_run_id;
	uv_mutex_unlock(&r->mu);

	json_decref(job->spec);
	job->spec = spec;
	free(job->ckpt_blob);
	job->ckpt_blob = NULL;
	job->ckpt_blob_len = 0;
	job->lease = job->epoch = job->units = job->units_done = 0;
	r->pending = pending;
	r->pending_len = out_len;
	if (uv_thread_create(&r->enc_thread, encoder_main, e) == 0) {
		r->enc_running = 1;
		return 1;
	}
	/* No thread: encode on this one, then the run ahead starts. */
	encoder_main(e);
	return 1;
fail:
	json_decref(spec);
	json_decref(params);
	json_decref(done_spec);
	free(pending);
	free(e);
	return 0;
}

char *next_run_key(uint64_t job, const json_t *params, const json_t *spec)
{
	json_t *k = json_pack("[I, O, O]", (json_int_t)job, params, spec);
	char *text = k ? json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	json_decref(k);
	return text;
}

/* The lease is the one the run ahead guessed (invariant 7)? Caller holds
 * mu. A lease with a checkpoint resumes from gpud's state instead. */
static int ahead_matches(const struct runner *r, const struct runner_job *job)
{
	char *key;
	int same;

	if (!r->ahead || !r->ahead_key || job->ckpt_blob)
		return 0;
	key = next_run_key(job->job, job->params, job->spec);
	same = key && strcmp(key, r->ahead_key) == 0;
	free(key);
	return same;
}

int next_run_adopt(struct runner *r, struct runner_job *job,
		   uint64_t *ret_run_id)
{
	if (!ahead_matches(r, job)) {
		/* A run ahead that guessed wrong stops: its run id is stale. */
		r->ahead = 0;
		free(r->ahead_key);
		r->ahead_key = NULL;
		return 0;
	}
	/* It becomes this lease's run. */
	r->ahead = 0;
	r->adopted.lease = job->lease;
	r->adopted.epoch = job->epoch;
	r->adopted.units = job->units;
	r->busy = 1;
	r->stop = 0;
	r->ckpt_requested = 0;
	r->last_ckpt_ns = uv_hrtime();
	r->units_done = r->ahead_units;
	*ret_run_id = r->run_id;
	uv_cond_signal(&r->cv); /* it may wait with its output */
	return 1;
}

int next_run_take_pending(struct runner *r, void **ret, size_t *ret_len)
{
	if (!r->pending)
		return GERR_NOTFOUND;
	*ret = r->pending;
	*ret_len = r->pending_len;
	r->pending = NULL;
	return 0;
}
