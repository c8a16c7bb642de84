/* othello_workload.c - the Othello workload behind struct workload: exact
 * endgame scores of batches of positions. Here: run (a lease's positions
 * solved on the CUDA device, or on CPU threads for those the device does
 * not take) and the struct that names every hook. The job's shapes are in
 * othello_wl.h, the other hooks in othello_plan.c, othello_verify.c,
 * othello_answer.c and othello_export.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "gerr.h"
#include "othello.h"
#include "othello_cuda.h"
#include "othello_wl.h"
#include "workload.h"

#define CPU_STEP 4096u          /* positions between progress reports */

struct otw_stop {
	const struct wl_run_io *io;
};

static int otw_io_stop(void *o)
{
	const struct wl_run_io *io = ((struct otw_stop *)o)->io;
	return io && io->should_stop && io->should_stop(io->opaque);
}

/* Threads for the positions solved on the CPU. A CUDA worker has one
 * thread (it drives the kernel), but the positions too deep for the kernel
 * are its whole lease then: they get every online CPU. */
static int otw_host_threads(const struct wl_device *dev)
{
	long n;

	if (!dev)
		return 1;
	if (dev->kind != WL_DEVICE_CUDA)
		return dev->threads > 0 ? dev->threads : 1;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 && n < 4096 ? (int)n : 1;
}

/* Solve positions [from, to) of r (positions in pos, or generated) in
 * the window (alpha, beta): the device solves exactly, and its answers
 * are clamped to the window (othello_window_clamp), as the CPU's are. */
static int otw_solve_range(const struct othello_job *j,
			   struct othello_res *r,
			   const struct othello_pos *pos, uint64_t from,
			   uint64_t to, int alpha, int beta,
			   const struct wl_device *dev, void *cuda,
			   const struct wl_run_io *io, char *err,
			   size_t errlen)
{
	size_t n = (size_t)(to - from), ng = 0, nc = 0;
	uint64_t *P, *O, nodes = 0;
	size_t *gi, *ci;
	int8_t *sc;
	uint8_t *mv;
	struct otw_stop sctx = {io};
	int rc = 0;

	if (cuda && !j->file && j->empties <= OTHELLO_CUDA_MAX_EMPTIES) {
		/* Generated and solved on the device, straight into r. */
		rc = othello_cuda_solve_random(cuda, j->seed, j->empties,
					       r->begin + from, n,
					       r->score + from, r->move + from,
					       &nodes, NULL, err, errlen);
		if (rc == 0)
			r->nodes += nodes;
		return rc;
	}
	P = malloc(n * 8);
	O = malloc(n * 8);
	gi = malloc(n * sizeof(size_t));
	ci = malloc(n * sizeof(size_t));
	sc = malloc(n);
	mv = malloc(n);
	if (!P || !O || !gi || !ci || !sc || !mv) {
		rc = GERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t p, o;
		if (j->file) {
			othello_pos_pov(&pos[from + i], &p, &o);
		} else {
			int black;
			oth_generate(j->seed, r->begin + from + i, j->empties,
				     &p, &o, &black);
		}
		if (cuda && oth_popcount(~(p | o)) <= OTHELLO_CUDA_MAX_EMPTIES)
			gi[ng++] = i;
		else
			ci[nc++] = i;
		P[i] = p;
		O[i] = o;
	}
	if (ng) {
		uint64_t *gp = malloc(ng * 8), *go = malloc(ng * 8);
		if (!gp || !go) {
			free(gp);
			free(go);
			rc = GERR_NOMEM;
			goto out;
		}
		for (size_t k = 0; k < ng; k++) {
			gp[k] = P[gi[k]];
			go[k] = O[gi[k]];
		}
		rc = othello_cuda_solve(cuda, gp, go, ng, sc, mv, &nodes, NULL,
					err, errlen);
		free(gp);
		free(go);
		if (rc)
			goto out;
		for (size_t k = 0; k < ng; k++) {
			othello_window_clamp(alpha, beta, &sc[k], &mv[k]);
			r->score[from + gi[k]] = sc[k];
			r->move[from + gi[k]] = mv[k];
		}
		r->nodes += nodes;
	}
	if (nc) {
		for (size_t k = 0; k < nc; k++) {
			P[k] = P[ci[k]];
			O[k] = O[ci[k]];
		}
		rc = othello_solve_batch_window(P, O, nc, alpha, beta,
						otw_host_threads(dev), sc, mv,
						&nodes, otw_io_stop, &sctx);
		if (rc == GERR_CANCELLED) {
			gerr_printf(err, errlen, "othello: stopped");
			goto out;
		}
		if (rc)
			goto out;
		for (size_t k = 0; k < nc; k++) {
			r->score[from + ci[k]] = sc[k];
			r->move[from + ci[k]] = mv[k];
		}
		r->nodes += nodes;
	}
out:
	free(P);
	free(O);
	free(gi);
	free(ci);
	free(sc);
	free(mv);
	return rc;
}

static int otw_run(void *ctx, const json_t *params, const json_t *spec,
		  const void *checkpoint, size_t checkpoint_len,
		  const struct wl_device *dev, const struct wl_run_io *io,
		  void **ret_result, size_t *ret_result_len, char *err,
		  size_t errlen)
{
	struct othello_job j;
	uint64_t begin, count;
	struct othello_res r;
	struct othello_pos *pos = NULL;
	void *cuda;
	int rc, alpha, beta;

	(void)ctx;
	rc = othello_spec_get(params, spec, &j, &begin, &count, err, errlen);
	if (rc == 0)
		rc = othello_spec_window(&j, spec, &alpha, &beta, err, errlen);
	if (rc == 0)
		rc = wl_device_get(dev, "othello", NULL, &cuda, err, errlen);
	if (rc)
		return rc;
	if (j.file) {
		void *blob = NULL;
		size_t blen = 0;
		if (!io || !io->fetch) {
			gerr_printf(err, errlen, "othello: file job but no way to "
				    "fetch the input blob");
			return GERR_UNSUPPORTED;
		}
		rc = io->fetch(io->opaque, j.input, &blob, &blen);
		if (rc) {
			gerr_printf(err, errlen, "othello: cannot fetch the input "
				    "%.16s...: %s", j.input, gerr_str(rc));
			return rc;
		}
		rc = othello_input_read(blob, blen, begin, count, &pos, err,
					errlen);
		free(blob);
		if (rc)
			return rc;
	}
	rc = othello_res_init(&r, begin, count, j.file);
	if (rc)
		goto out_pos;
	if (checkpoint) {
		struct othello_res c;
		rc = othello_res_decode(checkpoint, checkpoint_len, 1, &c, err,
					errlen);
		if (rc)
			goto out;
		/* a checkpoint of a lease split later (othello_wl_split) at
		 * or after its done is the head's */
		if (c.begin != begin || c.count < count || c.done > count ||
		    c.with_pos != j.file) {
			othello_res_clear(&c);
			gerr_printf(err, errlen, "othello: checkpoint is for another "
				    "lease");
			rc = GERR_INVAL;
			goto out;
		}
		memcpy(r.score, c.score, c.done);
		memcpy(r.move, c.move, c.done);
		r.done = c.done;
		r.nodes = c.nodes;
		r.usec = c.usec;
		othello_res_clear(&c);
	}
	if (j.file)
		memcpy(r.pos, pos, count * sizeof(*pos));
	while (r.done < count) {
		uint64_t step = cuda ? OTHELLO_CUDA_MAX_BATCH : CPU_STEP;
		uint64_t to = r.done + step < count ? r.done + step : count;
		double t0 = gclock_mono();
		rc = otw_solve_range(&j, &r, pos, r.done, to, alpha, beta, dev,
				     cuda, io, err, errlen);
		if (rc)
			goto out;
		r.usec += (uint64_t)((gclock_mono() - t0) * 1e6);
		r.done = to;
		if (io && io->progress)
			io->progress(io->opaque, r.done);
		if (io && io->should_stop && io->should_stop(io->opaque)) {
			rc = GERR_CANCELLED;
			goto out;
		}
		if (r.done < count && io && io->checkpoint_due &&
		    io->checkpoint && io->checkpoint_due(io->opaque)) {
			void *ck;
			size_t cl;
			rc = othello_res_encode(&r, 1, &ck, &cl);
			if (rc)
				goto out;
			rc = io->checkpoint(io->opaque, ck, cl, r.done);
			free(ck);
			if (rc)
				goto out;
		}
	}
	rc = othello_res_encode(&r, 0, ret_result, ret_result_len);
out:
	othello_res_clear(&r);
out_pos:
	free(pos);
	return rc;
}

/* othello.h's result or checkpoint of the lease's positions, all done. */
static int otw_blob_max(void *ctx, const json_t *params, const json_t *spec,
			int is_result, uint64_t *ret_max, char *err,
			size_t errlen)
{
	struct othello_job j;
	uint64_t begin, count;
	int rc = othello_spec_get(params, spec, &j, &begin, &count, err, errlen);

	(void)ctx, (void)is_result;
	if (rc)
		return rc;
	*ret_max = OTHELLO_RES_HDR +
		   count * (2 + (j.file ? OTHELLO_RES_POS : 0));
	return 0;
}

/* The CPU search is built for GPUD_CPU_LEVEL (meson option cpu_level): on
 * a CPU without it, refuse to start rather than die of an illegal
 * instruction in the middle of a lease. No context. */
static int otw_open(void **ret_ctx, char *err, size_t errlen)
{
	*ret_ctx = NULL;
#ifdef GPUD_CPU_LEVEL
	/* The level's features one by one: clang knows no level names. */
	int ok = 1;
	__builtin_cpu_init();
#if GPUD_CPU_LEVEL_N >= 2
	ok = ok && __builtin_cpu_supports("popcnt") &&
	     __builtin_cpu_supports("sse4.2");
#endif
#if GPUD_CPU_LEVEL_N >= 3
	ok = ok && __builtin_cpu_supports("avx2") &&
	     __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
	     __builtin_cpu_supports("fma");
#endif
	if (!ok) {
		gerr_printf(err, errlen, "this CPU is not %s, which the solver "
			    "was built for (rebuild with meson -Dcpu_level=)",
			    GPUD_CPU_LEVEL);
		return GERR_UNSUPPORTED;
	}
#else
	(void)err;
	(void)errlen;
#endif
	return 0;
}

static const char *const otw_exports[] = {"result", NULL};

static const struct wl_param_doc otw_params_doc[] = {
	{ "random", "integer", NULL, "solve N random positions, 1..12000000 "
	  "(or give --file)" },
	{ "empties", "integer", NULL, "empty squares of each random position, "
	  "1..40 (with --random)" },
	{ "seed", "integer", "0", "the random positions' seed (with --random)" },
	{ "file", "file", NULL, "positions to solve, one Edax/OBF line each, "
	  "instead of --random" },
	{ "split", "string", "auto", "with --file: lease the positions' subtrees "
	  "PLIES (1..6) deep so that many workers share a few deep positions "
	  "(auto: the plies for 32+ subtrees, if at most 64 positions, one "
	  "has 20+ empties and all cost 30+ s of a core; 0: never)" },
	{ 0 }, /* the end */
};

static const struct wl_export_doc otw_exports_doc[] = {
	{ "result", "every position with its exact score, as OBF lines "
	  "(what gpuctl result writes)" },
	{ 0 }, /* the end */
};

WL_CUDA_HOOKS(othello)

const struct workload othello_workload = {
	.name = "othello",
	WL_NAMED_HOOKS(othello),
	.export_data = othello_wl_export,
	.open = otw_open,
	.unit_name = "positions",
	.parse_input = othello_wl_parse_input,
	.run = otw_run,
	.blob_max = otw_blob_max,
	/* A lease of every position a job may hold, each with its line. */
	.blob_raw_max = OTHELLO_RES_HDR +
			OTHELLO_MAX_POSITIONS * (2 + OTHELLO_RES_POS),
	.check_checkpoint = othello_wl_check_checkpoint,
	.split = othello_wl_split,
	.results_agree = othello_wl_results_agree,
	.plot_name = "othello-scores.svg",
	.exports = otw_exports,
	/* 2 bytes per position of nearly independent scores and moves: level
	 * 1 saved 25% of a 1.1 M-position result at 50 ms of the worker's
	 * time and 16 ms of gpud's to inflate, all on the job's critical path. */
	.result_store_raw = 1,
	.description = "Othello endgames solved exactly: the score of "
		       "perfect play for every position, and their "
		       "distribution",
	.params_doc = otw_params_doc,
	.exports_doc = otw_exports_doc,
};
