/* sudoku_workload.c - the Sudoku workload behind struct workload: its
 * context, the run of a lease (CPU or CUDA), checkpoint checks and
 * verification. Parameters and carving are in sudoku_plan.c; merging, the
 * final checks, rendering and exports in sudoku_answer.c.
 *
 * Setups come from the context (sudoku_ctx_setup), opened once per
 * process; the CUDA context keeps the device copies for the worker's
 * lifetime.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "mix.h"
#include "sudoku.h"
#include "sudoku_count.h"
#include "sudoku_cuda.h"
#include "sudoku_format.h"
#include "sudoku_internal.h"
#include "workload.h"

#define STEP_CUDA 256u
#define STEP_CPU 2u

static int sw_open(void **ret_ctx, char *err, size_t errlen)
{
	struct sudoku_ctx *c;
	int rc = sudoku_ctx_open(&c);

	if (rc) {
		gerr_printf(err, errlen, "sudoku: context: %s", gerr_str(rc));
		return rc;
	}
	*ret_ctx = c;
	return 0;
}

static void sw_close(void *ctx)
{
	sudoku_ctx_close(ctx);
}

/* V of gangsters [a, b) on CPU or CUDA (4x3 only). */
static int compute(const struct sudoku_setup *S, uint32_t a, uint32_t b,
		   int threads, void *cuda, uint64_t (*v)[2], char *err,
		   size_t errlen)
{
	int rc;

	if (S->C == 2) {
		for (uint32_t g = a; g < b; g++) {
			v[g - a][0] = S->cnt[g];
			v[g - a][1] = 0;
		}
		return 0;
	}
	if (cuda && sudoku_big_shape(S->R, S->C))
		return sudoku_cuda_w(cuda, S, a, b, v, NULL, err, errlen);
	rc = sudoku_w_cpu(S, NULL, 0, a, b, threads, v);
	if (rc)
		gerr_printf(err, errlen, "sudoku: cpu count: %s", gerr_str(rc));
	return rc;
}

static int sw_run(void *ctx, const json_t *params, const json_t *spec,
		  const void *checkpoint, size_t checkpoint_len,
		  const struct wl_device *dev, const struct wl_run_io *io,
		  void **ret_result, size_t *ret_result_len, char *err,
		  size_t errlen)
{
	const struct sudoku_setup *S;
	struct sudoku_res r;
	uint32_t from, to, n;
	void *cuda = NULL;
	int R, C, threads = 1, rc, big;

	if (dev) {
		threads = dev->threads > 0 ? dev->threads : 1;
		if (dev->kind == WL_DEVICE_CUDA) {
			cuda = dev->cuda_ctx;
			if (!cuda) {
				gerr_printf(err, errlen, "sudoku: CUDA device "
				       "without a context (cuda_open)");
				return GERR_INVAL;
			}
		}
	}
	rc = sudoku_wl_spec(ctx, params, spec, &R, &C, &S, SUDOKU_BUILD_T, &from, &to,
		      err, errlen);
	if (rc)
		return rc;
	big = sudoku_big_shape(R, C);
	n = to - from;
	memset(&r, 0, sizeof(r));
	if (checkpoint) {
		rc = sudoku_res_decode(checkpoint, checkpoint_len, 1, &r, err,
				       errlen);
		if (rc == 0)
			rc = sudoku_wl_match(&r, R, C, from, to, "checkpoint", err, errlen);
		if (rc) {
			free(r.v);
			return rc;
		}
	}
	{
		uint64_t (*v)[2] = realloc(r.v, (size_t)n * sizeof(*v));
		if (!v) {
			free(r.v);
			return GERR_NOMEM;
		}
		r.v = v;
	}
	r.R = (uint8_t)R;
	r.C = (uint8_t)C;
	r.from = from;
	r.to = to;
	while (r.done < n) {
		uint32_t a = from + r.done, b;
		if (io && io->should_stop(io->opaque)) {
			rc = GERR_CANCELLED;
			goto out;
		}
		b = to;
		if (big)
			b = a + (cuda ? STEP_CUDA : STEP_CPU);
		if (b > to)
			b = to;
		if (C == 3 && b > S->set_start[sudoku_set_of(S, a) + 1])
			b = S->set_start[sudoku_set_of(S, a) + 1];
		rc = compute(S, a, b, threads, cuda, r.v + r.done, err, errlen);
		if (rc)
			goto out;
		r.done += b - a;
		if (io) {
			io->progress(io->opaque, big ? r.done : r.done == n);
			if (r.done < n && io->checkpoint_due(io->opaque)) {
				void *ck;
				size_t cl;
				rc = sudoku_res_encode(&r, 1, &ck, &cl);
				if (rc == 0) {
					rc = io->checkpoint(io->opaque, ck, cl,
							    big ? r.done : 0);
					free(ck);
				}
				if (rc)
					goto out;
			}
		}
	}
	rc = sudoku_res_encode(&r, 0, ret_result, ret_result_len);
	if (rc)
		gerr_printf(err, errlen, "sudoku: encode: %s", gerr_str(rc));
out:
	free(r.v);
	return rc;
}

static int sw_check_checkpoint(void *ctx, const json_t *params, const json_t *spec,
			       const void *bytes, size_t len, char *err,
			       size_t errlen)
{
	const struct sudoku_setup *S;
	struct sudoku_res r;
	uint32_t from, to;
	int R, C;
	int rc = sudoku_wl_spec(ctx, params, spec, &R, &C, &S, 0, &from, &to, err, errlen);

	if (rc)
		return rc;
	rc = sudoku_res_decode(bytes, len, 1, &r, err, errlen);
	if (rc == 0) {
		rc = sudoku_wl_match(&r, R, C, from, to, "checkpoint", err, errlen);
		free(r.v);
	}
	return rc;
}

static int sw_verify(void *ctx, const json_t *params, const json_t *spec,
		     const void *result, size_t len, uint64_t seed, char *err,
		     size_t errlen)
{
	const struct sudoku_setup *S;
	struct sudoku_res r;
	uint32_t from, to, n;
	uint64_t bound[2] = { 0, 0 };
	int R, C, rc;

	rc = sudoku_wl_spec(ctx, params, spec, &R, &C, &S, SUDOKU_BUILD_T, &from, &to,
		      err, errlen);
	if (rc)
		return rc;
	rc = sudoku_res_decode(result, len, 0, &r, err, errlen);
	if (rc)
		return GERR_VERIFY;
	rc = sudoku_wl_match(&r, R, C, from, to, "result", err, errlen);
	if (rc)
		goto out;
	n = to - from;
	if (C == 3 && sudoku_w_bound(S, bound) != 0) {
		bound[0] = bound[1] = UINT64_MAX;
	}
	/* Range and divisibility of every gangster's V. */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t g = from + i;
		if (C == 2 && (r.v[i][0] != S->cnt[g] || r.v[i][1] != 0)) {
			gerr_printf(err, errlen, "sudoku verify: gangster %u: band "
			       "count below %" PRIu64 ", expected %u", g,
			       r.v[i][0], S->cnt[g]);
			rc = GERR_VERIFY;
			goto out;
		}
		if (C == 3 && ((r.v[i][0] & 1) || r.v[i][1] > bound[1] ||
			       (r.v[i][1] == bound[1] && r.v[i][0] > bound[0]))) {
			gerr_printf(err, errlen, "sudoku verify: gangster %u: W = "
			       "(%" PRIu64 ", %" PRIu64 ") is odd or above the "
			       "bound", g, r.v[i][1], r.v[i][0]);
			rc = GERR_VERIFY;
			goto out;
		}
	}
	/* Recount a sample on the CPU: every gangster of a small shape, one
	 * chosen by the seed for 4x3 (7.2e9 multiply-adds). */
	if (C == 3) {
		uint32_t a = 0, b = n;
		if (sudoku_big_shape(R, C)) {
			a = (uint32_t)(mix64(seed) % n);
			b = a + 1;
		}
		for (uint32_t i = a; i < b;) {
			uint32_t g = from + i;
			uint32_t e = from + b;
			if (e > S->set_start[sudoku_set_of(S, g) + 1])
				e = S->set_start[sudoku_set_of(S, g) + 1];
			uint64_t (*w)[2] = malloc((size_t)(e - g) * sizeof(*w));
			if (!w) {
				rc = GERR_NOMEM;
				goto out;
			}
			rc = sudoku_w_cpu(S, NULL, 0, g, e, sudoku_wl_threads(), w);
			for (uint32_t k = 0; rc == 0 && k < e - g; k++)
				if (w[k][0] != r.v[i + k][0] ||
				    w[k][1] != r.v[i + k][1]) {
					gerr_printf(err, errlen, "sudoku verify: "
					       "gangster %u recounts to (%" PRIu64
					       ", %" PRIu64 "), result says (%"
					       PRIu64 ", %" PRIu64 ")", g + k,
					       w[k][1], w[k][0], r.v[i + k][1],
					       r.v[i + k][0]);
					rc = GERR_VERIFY;
				}
			free(w);
			if (rc)
				goto out;
			i += e - g;
		}
	}
out:
	free(r.v);
	return rc;
}


/* sudoku_format.h's bytes for the lease's gangsters, read from the spec
 * alone (no band tables): 16 per gangster after the header. */
static int sw_blob_max(void *ctx, const json_t *params, const json_t *spec,
		       int is_result, uint64_t *ret_max, char *err,
		       size_t errlen)
{
	uint64_t from, to;
	int rc = wl_json_u64(spec, "from", 1, 0, &from, err, errlen);

	(void)ctx, (void)params, (void)is_result;
	if (rc == 0)
		rc = wl_json_u64(spec, "to", 1, 0, &to, err, errlen);
	if (rc)
		return rc;
	if (from >= to || to > SUDOKU_MAX_GANG) {
		gerr_printf(err, errlen, "sudoku: bad lease [%" PRIu64 ", %"
			    PRIu64 ")", from, to);
		return GERR_INVAL;
	}
	*ret_max = SUDOKU_HDR_LEN + 16 * (to - from);
	return 0;
}

WL_CUDA_HOOKS(sudoku)

const struct workload sudoku_workload = {
	.name = "sudoku",
	.unit_name = "gangsters",
	.open = sw_open,
	.close = sw_close,
	.parse_params = sudoku_wl_parse_params,
	.carve = sudoku_wl_carve,
	.run = sw_run,
	.blob_max = sw_blob_max,
	.check_checkpoint = sw_check_checkpoint,
	.verify = sw_verify,
	.merge = sudoku_wl_merge,
	.finish = sudoku_wl_finish,
	.render_text = sudoku_wl_render_text,
	.render_files = NULL,
	.export_data = sudoku_wl_export,
	.exports = sudoku_wl_exports,
	.cuda_open = sudoku_wl_cuda_open,
	.cuda_close = sudoku_wl_cuda_close,
};
