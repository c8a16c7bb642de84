/* runjob.h - what one run's job and result need, on whichever thread
 * finishes the run: the lease's run (runner.c) and the run ahead's encoder
 * (runahead.c) both use it, and it calls neither (runner.h has the
 * invariants it keeps: 4 and 9). Results are packed per workload (stored
 * raw when wl->result_store_raw, else fast-compressed).
 *
 * Private to the runner (runner.c, runahead.c, runjob.c); the client sees
 * only runner.h.
 *
 * Ownership: runjob_clear frees what a struct runner_job owns (params and
 * spec references, checkpoint blob). A struct runjob_pre is owned by the
 * runner thread (r->pre), or by the encoder thread once runahead_start
 * hands it over, until runjob_encode_result or runjob_pre_drop joins and
 * frees it; it reads the output it compresses, which must
 * outlive the join. runjob_encode_result puts a malloc'ed blob in
 * res->blob, owned by res (and so by the loop once posted).
 *
 * Threads: runjob_clear on any thread (the job's owner's);
 * runjob_pre_start and runjob_pre_drop on the runner thread;
 * runjob_encode_result and runjob_post_result on the runner thread or the
 * encoder thread, without r->mu held.
 */
#ifndef GPUD_WORKER_RUNJOB_H
#define GPUD_WORKER_RUNJOB_H

#include <stddef.h>
#include <stdint.h>

#include "blob.h"
#include "runner.h"

/* A run's output compressed on a thread of its own (invariant 9). */
struct runjob_pre;

/* Free what job owns and zero it; NULL fields are fine. */
void runjob_clear(struct runner_job *job);

/* Start compressing a finished run ahead's output, with lease and epoch 0
 * in the blob's header until runjob_encode_result restamps it. NULL when
 * none could start (no memory or thread): the result is then compressed
 * when it is encoded, as any other. out must outlive the join. */
struct runjob_pre *runjob_pre_start(const struct runner_job *job,
				    const void *out, size_t out_len);

/* Join p (NULL-safe) and drop its blob; frees p. */
void runjob_pre_drop(struct runjob_pre *p);

/* Encode a successful run's output as its result blob (res->blob,
 * res->blob_len; on failure a message in res->err and the GERR_* code),
 * from pre when it is given (taken and freed in every case), and for a
 * chained workload keep the output in the blob cache under the blob's
 * hash (ret_hash; "" for other workloads). Returns 0 or GERR_*. */
int runjob_encode_result(struct runner *r, const struct runner_job *job,
			 const void *out, size_t out_len,
			 struct runjob_pre *pre, struct runner_result *res,
			 char ret_hash[BLOB_HASH_HEX]);

/* Hand a run's output to the loop (r->result, then wake it); takes res's
 * blob. Caller does not hold r->mu. */
void runjob_post_result(struct runner *r, const struct runner_result *res);

#endif
