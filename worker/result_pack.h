/* result_pack.h - a finished run's result, on whichever thread finishes
 * the run: the lease's run (runner.c) and the run ahead's encoder
 * (next_run.c) both use it, and it calls neither (runner.h has the
 * invariants it keeps: 4 and 9). Results are packed per workload (stored
 * raw when wl->result_store_raw, else fast-compressed).
 *
 * Private to the runner (runner.c, next_run.c, result_pack.c); the client
 * sees only runner.h.
 *
 * Ownership: a struct result_pack_pre is owned by the runner thread
 * (r->pre), or by the encoder thread once next_run_start hands it over,
 * until result_pack_encode or result_pack_pre_drop joins and frees it; it
 * reads the output it compresses, which must outlive the join.
 * result_pack_encode puts a malloc'ed blob in res->blob, owned by res (and
 * so by the loop once posted).
 *
 * Threads: result_pack_pre_start and result_pack_pre_drop on the runner
 * thread; result_pack_encode and result_pack_post on the runner thread or
 * the encoder thread, without r->mu held.
 */
#ifndef GPUD_WORKER_RESULT_PACK_H
#define GPUD_WORKER_RESULT_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "blob.h"
#include "runner.h"

/* A run's output compressed on a thread of its own (invariant 9). */
struct result_pack_pre;

/* Start compressing a finished run ahead's output, with lease and epoch 0
 * in the blob's header until result_pack_encode restamps it. NULL when
 * none could start (no memory or thread): the result is then compressed
 * when it is encoded, as any other. out must outlive the join. */
struct result_pack_pre *result_pack_pre_start(const struct runner_job *job,
					      const void *out, size_t out_len);

/* Join p (NULL-safe) and drop its blob; frees p. */
void result_pack_pre_drop(struct result_pack_pre *p);

/* Encode a successful run's output as its result blob (res->blob,
 * res->blob_len; on failure a message in res->err and the GERR_* code),
 * from pre when it is given (taken and freed in every case), and for a
 * chained workload keep the output in the blob cache under the blob's
 * hash (ret_hash; "" for other workloads). Returns 0 or GERR_*. */
int result_pack_encode(struct runner *r, const struct runner_job *job,
		       const void *out, size_t out_len,
		       struct result_pack_pre *pre, struct runner_result *res,
		       char ret_hash[BLOB_HASH_HEX]);

/* Hand a run's output to the loop (r->result, then wake it); takes res's
 * blob. Caller does not hold r->mu. */
void result_pack_post(struct runner *r, const struct runner_result *res);

#endif
