/* sudoku_workload.c - the Sudoku workload behind struct workload: its
 * context, the run of a lease (CPU or CUDA) and checkpoint checks.
 * Parameters and carving are in sudoku_plan.c; merging, the final checks,
 * rendering and exports in sudoku_answer.c.
 *
 * Setups come from the context (sudoku_ctx_setup), opened once per
 * process; the CUDA context keeps the device copies for the worker's
 * lifetime. Verification is in sudoku_verify.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "sudoku.h"
#include "sudoku_count.h"
#include "sudoku_cuda.h"
#include "sudoku_format.h"
#include "sudoku_internal.h"
#include "workload.h"

#define STEP_CUDA 256u
#define STEP_CPU 2u
#define STEP_SMALL 8u /* up to 4x2 and 3x3: microseconds a gangster */

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

/* V of gangsters [a, b) (one set) on CPU or CUDA (4x3 only), and for
 * C == 3 their SUDOKU_PIECES pieces (piece[i * P + j], W = their sum). */
static int compute(const struct sudoku_setup *S, uint32_t a, uint32_t b,
		   int threads, void *cuda, uint64_t (*v)[2],
		   uint64_t (*piece)[2], char *err, size_t errlen)
{
	const uint32_t P = SUDOKU_PIECES;
	int rc;

	if (S->C == 2) {
		rc = sudoku_cnt_range(S, a, b, threads, v);
		if (rc)
			gerr_printf(err, errlen, "sudoku: band counts: %s",
				    gerr_str(rc));
		return rc;
	}
	if (cuda && sudoku_big_shape(S->R, S->C))
		return sudoku_cuda_w_pieces(cuda, S, a, b, P, piece, v, NULL, err,
					    errlen);
	rc = sudoku_w_pieces_cpu(S, NULL, 0, a, b, P, 0, P, threads, piece);
	if (rc) {
		gerr_printf(err, errlen, "sudoku: cpu count: %s", gerr_str(rc));
		return rc;
	}
	for (uint32_t i = 0; i < b - a; i++) {
		v[i][0] = v[i][1] = 0;
		for (uint32_t j = 0; j < P; j++) {
			const uint64_t *x = piece[(size_t)i * P + j];
			v[i][0] += x[0];
			v[i][1] += x[1] + (v[i][0] < x[0]);
		}
	}
	return 0;
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
	void *cuda;
	int R, C, threads, rc, big, legacy;

	rc = wl_device_get(dev, "sudoku", &threads, &cuda, err, errlen);
	if (rc)
		return rc;
	rc = sudoku_wl_spec(ctx, params, spec, &R, &C, &S, SUDOKU_BUILD_T, &from, &to,
		      err, errlen);
	if (rc)
		return rc;
	big = sudoku_big_shape(R, C);
	legacy = json_integer_value(json_object_get(spec, "set")) < 0;
	n = to - from;
	memset(&r, 0, sizeof(r));
	if (checkpoint) {
		rc = sudoku_res_decode(checkpoint, checkpoint_len, 1, &r, err,
				       errlen);
		if (rc == 0)
			rc = sudoku_wl_match_ckpt(&r, R, C, from, to, err,
						  errlen);
		if (rc) {
			free(r.v);
			return rc;
		}
		if (C == 3 && r.pieces != SUDOKU_PIECES) {
			/* from before pieces: nothing of it can be kept */
			free(r.v);
			memset(&r, 0, sizeof(r));
		}
	}
	r.pieces = C == 3 ? SUDOKU_PIECES : 0;
	{
		size_t per = 1 + (size_t)r.pieces;
		uint64_t (*v)[2] = realloc(r.v, (size_t)n * per * sizeof(*v));
		if (!v) {
			free(r.v);
			return GERR_NOMEM;
		}
		/* the pieces move from behind done values to behind n */
		if (r.pieces)
			memmove(v + n, v + r.done,
				(size_t)r.done * r.pieces * sizeof(*v));
		r.v = v;
		r.piece = r.pieces ? v + n : NULL;
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
		else
			b = a + (R == 5 ? (uint32_t)threads /* 1.7 s each */
					: STEP_SMALL);
		if (b > to)
			b = to;
		if (C == 3 && b > S->set_start[sudoku_set_of(S, a) + 1])
			b = S->set_start[sudoku_set_of(S, a) + 1];
		rc = compute(S, a, b, threads, cuda, r.v + r.done,
			     r.piece ? r.piece + (size_t)r.done * r.pieces : NULL,
			     err, errlen);
		if (rc)
			goto out;
		r.done += b - a;
		if (io) {
			io->progress(io->opaque, legacy ? r.done == n : r.done);
			if (r.done < n && io->checkpoint_due(io->opaque)) {
				void *ck;
				size_t cl;
				rc = sudoku_res_encode(&r, 1, &ck, &cl);
				if (rc == 0) {
					rc = io->checkpoint(io->opaque, ck, cl,
							    legacy ? 0 : r.done);
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
		rc = sudoku_wl_match_ckpt(&r, R, C, from, to, err, errlen);
		free(r.v);
	}
	return rc;
}

/* sudoku_format.h's bytes for the lease's gangsters, read from the spec
 * alone (no band tables): at most 16 per gangster and 16 per piece of it
 * after the header. */
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
	*ret_max = SUDOKU_HDR_LEN + 16 * (to - from) * (1 + SUDOKU_PIECES);
	return 0;
}

static const struct wl_param_doc sw_params_doc[] = {
	{ "box", "string", NULL, "the box shape RxC, e.g. 3x3 (the classic "
	  "grid) or 4x3" },
	{ 0 }, /* the end */
};

static const struct wl_export_doc sw_exports_doc[] = {
	{ "counts", "each gangster's count of completions as CSV: the "
	  "header index,count, then an INDEX,COUNT line per gangster" },
	{ 0 }, /* the end */
};

WL_CUDA_HOOKS(sudoku)

const struct workload sudoku_workload = {
	.name = "sudoku",
	WL_NAMED_HOOKS(sudoku),
	.export_data = sudoku_wl_export,
	.unit_name = "gangsters",
	.open = sw_open,
	.close = sw_close,
	.run = sw_run,
	.blob_max = sw_blob_max,
	/* A lease of every gangster. */
	.blob_raw_max = SUDOKU_HDR_LEN +
			16ull * SUDOKU_MAX_GANG * (1 + SUDOKU_PIECES),
	.check_checkpoint = sw_check_checkpoint,
	.split = sudoku_wl_split,
	.plot_name = "sudoku-gangsters.svg",
	.exports = sudoku_wl_exports,
	.description = "Sudoku grids counted exactly: the number of "
		       "completed grids of an RxC-box sudoku, by gangster "
		       "(band classes)",
	.params_doc = sw_params_doc,
	.exports_doc = sw_exports_doc,
};
