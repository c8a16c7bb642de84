/* result_pack.c - a finished run's result (result_pack.h): packing,
 * compressing (ahead of the lease, invariant 9, or at the end of the run,
 * invariant 4) and posting it to the loop.
 */
#include "result_pack.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blobcache.h"
#include "gerr.h"
#include "proto.h"

/* Owned by the runner thread, then by whoever encodes the result. */
struct result_pack_pre {
	uv_thread_t thread;
	const char *workload;
	enum blob_pack pack;
	const void *out;
	size_t out_len;
	uint8_t *blob;
	size_t blob_len;
	int rc;
};

/* How wl's results are packed (stored raw or fast-compressed). */
static enum blob_pack pack_of(const struct workload *wl)
{
	return wl->result_store_raw ? BLOB_PACK_STORE : BLOB_PACK_FAST;
}

static void pre_main(void *arg)
{
	struct result_pack_pre *p = arg;

	p->rc = blob_encode_pack(BLOB_RESULT, p->workload, 0, 0, p->out,
				 p->out_len, p->pack, &p->blob, &p->blob_len);
}

struct result_pack_pre *result_pack_pre_start(const struct runner_job *job,
					      const void *out, size_t out_len)
{
	struct result_pack_pre *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->workload = job->wl->name;
	p->pack = pack_of(job->wl);
	p->out = out;
	p->out_len = out_len;
	if (uv_thread_create(&p->thread, pre_main, p) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

/* Join p and take its blob (NULL when it failed); frees p. */
static uint8_t *pre_take(struct result_pack_pre *p, size_t *ret_len)
{
	uint8_t *blob;

	uv_thread_join(&p->thread);
	blob = p->rc == 0 ? p->blob : NULL;
	*ret_len = p->blob_len;
	if (!blob)
		free(p->blob);
	free(p);
	return blob;
}

void result_pack_pre_drop(struct result_pack_pre *p)
{
	size_t len;

	if (p)
		free(pre_take(p, &len));
}

/* The cache entry: gpud stores the result under that hash, and the next
 * lease of a chained job (Officers) fetches exactly it, so that fetch is a
 * cache hit. */
int result_pack_encode(struct runner *r, const struct runner_job *job,
		       const void *out, size_t out_len,
		       struct result_pack_pre *pre, struct runner_result *res,
		       char ret_hash[BLOB_HASH_HEX])
{
	/* Compress here, not on the loop thread (invariant 4), unless pre
	 * (which this takes) has already. */
	uint64_t t0 = uv_hrtime(), t1;
	int rc = GERR_INVAL;

	res->blob = pre ? pre_take(pre, &res->blob_len) : NULL;
	if (res->blob)
		rc = blob_restamp(res->blob, res->blob_len, job->lease,
				  job->epoch);
	if (rc != 0) {
		free(res->blob);
		res->blob = NULL;
		rc = blob_encode_pack(BLOB_RESULT, job->wl->name, job->lease,
				      job->epoch, out, out_len,
				      pack_of(job->wl), &res->blob,
				      &res->blob_len);
	}

	if (rc < 0) {
		snprintf(res->err, sizeof(res->err), "cannot encode result: %s",
			 gerr_str(rc));
		return rc;
	}
	if (res->blob_len > PROTO_MAX_BIN) {
		snprintf(res->err, sizeof(res->err),
			 "result blob of %zu bytes exceeds the frame limit",
			 res->blob_len);
		free(res->blob);
		res->blob = NULL;
		res->blob_len = 0;
		return GERR_TOOBIG;
	}
	t1 = uv_hrtime();
	/* Only a chained job's next lease names (and fetches) this result:
	 * other workloads skip the hash and the copy. */
	ret_hash[0] = '\0';
	if (job->wl->next_lease) {
		blob_hash_hex(res->blob, res->blob_len, ret_hash);
		if (blobcache_put(r->cache, ret_hash, out, out_len) == 0)
			LOG_DEBUG(r->log, "own result cached hash=%.16s bytes=%zu",
				  ret_hash, out_len);
	}
	/* Part of every lease's fixed cost: worth seeing per stage. */
	LOG_DEBUG(r->log, "result encoded job=%" PRIu64 " lease=%" PRIu64
		  " raw=%zu blob=%zu compress_s=%.4f hash_cache_s=%.4f",
		  job->job, job->lease, out_len, res->blob_len,
		  (double)(t1 - t0) / 1e9, (double)(uv_hrtime() - t1) / 1e9);
	return 0;
}

void result_pack_post(struct runner *r, const struct runner_result *res)
{
	uv_mutex_lock(&r->mu);
	r->result = *res;
	r->has_result = 1;
	uv_mutex_unlock(&r->mu);
	uv_async_send(&r->async);
}
