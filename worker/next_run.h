/* next_run.h - the run ahead: after a successful run whose workload chains
 * leases (wl->next_lease), the runner thread starts the run of the lease
 * gpud will most likely grant next, before it exists, while an encoder
 * thread compresses the finished run's result (runner.h, invariants 7-9,
 * say what it may and may not do).
 *
 * This header is private to the runner (runner.c and next_run.c); the
 * client sees only runner.h. The run ahead's state lives in struct runner
 * (ahead, ahead_key, ahead_units, adopted, pending, pre, enc_*).
 *
 * Ownership: the encoder thread owns its job (the finished run's identity
 * and output, and r->pre, that output being compressed already) and frees
 * it when it has posted the result. The job's and the result's helpers are
 * result_pack.h's.
 *
 * Threads: next_run_sync and next_run_adopt with r->mu held (next_run_sync
 * on the runner thread, next_run_adopt on the loop thread in
 * runner_start); next_run_start, next_run_take_pending and
 * next_run_join_encoder on the runner thread (next_run_join_encoder also
 * from runner_close once the runner thread is gone); next_run_key on any.
 */
#ifndef GPUD_WORKER_NEXT_RUN_H
#define GPUD_WORKER_NEXT_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include <uv.h>

#include "blob.h"
#include "runner.h"

/* What the wl_run_io callbacks of one run need; lives on the runner
 * thread's stack for the duration of wl->run. */
struct runner_ctx {
	struct runner *r;
	struct runner_job *job; /* lease fields filled in on adoption */
	uint64_t run_id;
	int ahead;              /* this thread's view of r->ahead */
};

/* The state a run ahead starts from while that state's blob is still being
 * encoded, so its hash is not known yet (invariant 8). */
#define NEXT_RUN_PENDING_HASH "0000000000000000000000000000000000000000000000000000000000000000"

/* A run ahead learns here, under mu, that the loop adopted it: from then
 * on it is the lease's run (lease fields filled in). Returns non-zero
 * while the run is still ahead. */
int next_run_sync(struct runner_ctx *ctx);

/* After a successful run of job with output out: start the run ahead
 * (invariant 8). On 1, job is the run ahead, *ret_run_id its id, and the
 * encoder thread owns out and posts res; on 0 nothing changed. */
int next_run_start(struct runner *r, struct runner_job *job, void *out,
		   size_t out_len, const struct runner_result *res,
		   uint64_t *ret_run_id);

/* Wait for the encoder thread of the last result, if any. */
void next_run_join_encoder(struct runner *r);

/* The text a lease is compared with the run ahead's guess by: job, params
 * and spec as canonical JSON. malloc'ed, NULL when out of memory. */
char *next_run_key(uint64_t job, const json_t *params, const json_t *spec);

/* runner_start's first step (mu held): when job is the lease the run ahead
 * guessed, make the run ahead its run (busy, lease fields for
 * next_run_sync) and return 1 with its id in *ret_run_id; otherwise make a
 * run ahead stale and return 0. */
int next_run_adopt(struct runner *r, struct runner_job *job,
		   uint64_t *ret_run_id);

/* The run ahead's own state, asked for as NEXT_RUN_PENDING_HASH (runner
 * thread only): 0 and the bytes (the caller owns them), or GERR_NOTFOUND
 * once taken. */
int next_run_take_pending(struct runner *r, void **ret, size_t *ret_len);

#endif
