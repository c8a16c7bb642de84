/* othello_workload.c - the Othello workload behind struct workload: exact
 * endgame scores of batches of positions.
 *
 * params  random: {"mode": "random", "positions": N, "empties": E,
 *                  "seed": "S"}
 *         file:   {"mode": "file", "positions": N, "max_empties": E,
 *                  "with_expected": k, "digests": "<16 hex per block>",
 *                  "input": "<hash>" (added by gpud), "input_name": ...}
 * cursor  {"next": n}: positions [0, n) are leased
 * spec    {"begin": b, "count": c}: one lease; in file jobs b is a
 *         multiple of OTHELLO_BLOCK and the lease covers whole blocks
 *         (the last block of the job may be short)
 * answer  {"positions": n, "leases": k, "hist": [65 counts of score/2+32],
 *          "nodes": x, "usec": t, "mismatches": m,
 *          "mismatch_list": [[index, expected, score], ...] (the lowest
 *          100 indices), "results": {"<begin>": ["<hash>", count], ...}}
 *
 * Verification: the result must be for the lease (begin, count, positions
 * included exactly in file jobs); in file jobs every block's digest of
 * positions and expected scores must match params' (so a worker cannot
 * solve other positions or alter the expected scores); a sample of
 * positions, drawn from the injected seed, is re-solved on the CPU and
 * must match score and best move exactly. The sample shrinks with the
 * empties (a 22-empty position costs the coordinator seconds).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gerr.h"
#include "othello.h"
#include "othello_cuda.h"
#include "workload.h"

#define MAX_EMPTIES 40          /* random jobs; files may hold anything */
#define MISMATCH_LIST 100
#define CPU_STEP 4096u          /* positions between progress reports */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- params and spec ---------------------------------------------------- */

struct job {
	int file;
	uint64_t n, seed;
	int empties; /* random: E; file: the largest */
	const char *digests, *input;
};

static int get_job(const json_t *params, struct job *j, char *err,
		   size_t errlen)
{
	const char *mode;
	uint64_t e = 0;
	int rc;

	memset(j, 0, sizeof(*j));
	if (!json_is_object(params)) {
		gerr_printf(err, errlen, "othello: params must be an object");
		return GERR_INVAL;
	}
	mode = json_string_value(json_object_get(params, "mode"));
	if (!mode || (strcmp(mode, "random") && strcmp(mode, "file"))) {
		gerr_printf(err, errlen, "othello: params need mode random or file");
		return GERR_INVAL;
	}
	j->file = strcmp(mode, "file") == 0;
	if (j->file) {
		j->digests = json_string_value(json_object_get(params, "digests"));
		j->input = json_string_value(json_object_get(params, "input"));
		rc = wl_json_u64(params, "positions", 1, 0, &j->n, err, errlen);
		if (rc == 0)
			rc = wl_json_u64(params, "max_empties", 1, 0, &e, err,
					 errlen);
		if (rc)
			return rc;
		if (!j->digests || !j->input) {
			gerr_printf(err, errlen, "othello: file job without its input "
			       "(submit with --file F)");
			return GERR_INVAL;
		}
		if (strlen(j->digests) !=
		    16 * ((j->n + OTHELLO_BLOCK - 1) / OTHELLO_BLOCK)) {
			gerr_printf(err, errlen, "othello: params' digests do not "
			       "match %" PRIu64 " positions", j->n);
			return GERR_INVAL;
		}
	} else {
		rc = wl_json_u64(params, "positions", 1, 0, &j->n, err, errlen);
		if (rc == 0)
			rc = wl_json_u64(params, "empties", 1, 0, &e, err, errlen);
		if (rc == 0)
			rc = wl_json_u64(params, "seed", 0, 0, &j->seed, err,
					 errlen);
		if (rc)
			return rc;
		if (e < 1 || e > MAX_EMPTIES) {
			gerr_printf(err, errlen, "othello: empties must be 1..%d",
			       MAX_EMPTIES);
			return GERR_INVAL;
		}
	}
	if (j->n < 1 || j->n > OTHELLO_MAX_POSITIONS || e > 60) {
		gerr_printf(err, errlen, "othello: positions must be 1..%llu",
		       (unsigned long long)OTHELLO_MAX_POSITIONS);
		return GERR_INVAL;
	}
	j->empties = (int)e;
	return 0;
}

static int get_spec(const json_t *params, const json_t *spec, struct job *j,
		    uint64_t *begin, uint64_t *count, char *err, size_t errlen)
{
	int rc = get_job(params, j, err, errlen);

	if (rc)
		return rc;
	if (!json_is_object(spec)) {
		gerr_printf(err, errlen, "othello: spec must be an object");
		return GERR_INVAL;
	}
	rc = wl_json_u64(spec, "begin", 1, 0, begin, err, errlen);
	if (rc == 0)
		rc = wl_json_u64(spec, "count", 1, 0, count, err, errlen);
	if (rc)
		return rc;
	if (*count < 1 || *begin >= j->n || *count > j->n - *begin ||
	    (j->file && *begin % OTHELLO_BLOCK) ||
	    (j->file && *begin + *count != j->n && *count % OTHELLO_BLOCK)) {
		gerr_printf(err, errlen, "othello: bad lease [%" PRIu64 ", +%" PRIu64
		       ") for %" PRIu64 " positions", *begin, *count, j->n);
		return GERR_INVAL;
	}
	return 0;
}

static int otw_parse_params(void *ctx, const json_t *args, json_t **ret_params,
			   uint64_t *ret_total_units, char *err, size_t errlen)
{
	const char *key;
	json_t *val, *p;
	uint64_t n = 0, e = 0, seed = 0;
	int has_random, rc;
	char sbuf[32];

	if (!json_is_object(args)) {
		gerr_printf(err, errlen, "othello: arguments must be an object");
		return GERR_INVAL;
	}
	json_object_foreach((json_t *)args, key, val) {
		if (strcmp(key, "random") && strcmp(key, "empties") &&
		    strcmp(key, "seed") && strcmp(key, "file")) {
			gerr_printf(err, errlen, "othello: unknown parameter '%s' "
			       "(takes --random N --empties E --seed S, or "
			       "--file F)", key);
			return GERR_INVAL;
		}
	}
	has_random = json_object_get(args, "random") != NULL;
	if (has_random && json_object_get(args, "file")) {
		gerr_printf(err, errlen, "othello: give --random N or --file F, not both");
		return GERR_INVAL;
	}
	if (!has_random) {
		/* gpud passes the name of the submitted file as "file". */
		if (!json_is_string(json_object_get(args, "file"))) {
			gerr_printf(err, errlen, "othello: needs --random N --empties E "
			       "[--seed S] or --file F");
			return GERR_INVAL;
		}
		if (json_object_size(args) != 1) {
			gerr_printf(err, errlen, "othello: --empties and --seed go "
			       "with --random N");
			return GERR_INVAL;
		}
		/* A file job: parse_input fills in the rest. */
		p = json_pack("{s:s}", "mode", "file");
		if (!p)
			return GERR_NOMEM;
		*ret_params = p;
		*ret_total_units = 0;
		return 0;
	}
	rc = wl_json_u64(args, "random", 1, 0, &n, err, errlen);
	if (rc == 0)
		rc = wl_json_u64(args, "empties", 1, 0, &e, err, errlen);
	if (rc == 0)
		rc = wl_json_u64(args, "seed", 0, 0, &seed, err, errlen);
	if (rc)
		return rc;
	if (n < 1 || n > OTHELLO_MAX_POSITIONS) {
		gerr_printf(err, errlen, "othello: --random must be 1..%llu, got %"
		       PRIu64, (unsigned long long)OTHELLO_MAX_POSITIONS, n);
		return GERR_INVAL;
	}
	if (e < 1 || e > MAX_EMPTIES) {
		gerr_printf(err, errlen, "othello: --empties must be 1..%d, got %"
		       PRIu64, MAX_EMPTIES, e);
		return GERR_INVAL;
	}
	snprintf(sbuf, sizeof(sbuf), "%" PRIu64, seed);
	p = json_pack("{s:s, s:I, s:I, s:s}", "mode", "random", "positions",
		      (json_int_t)n, "empties", (json_int_t)e, "seed", sbuf);
	if (!p)
		return GERR_NOMEM;
	*ret_params = p;
	*ret_total_units = n;
	return 0;
}

static int otw_parse_input(void *ctx, const json_t *params, const void *input,
			  size_t len, json_t **ret_params, void **ret_input,
			  size_t *ret_input_len, uint64_t *ret_total_units,
			  char *err, size_t errlen)
{
	const char *mode = json_string_value(json_object_get(params, "mode"));
	void *canon = NULL;
	size_t canon_len = 0;
	uint64_t n = 0, with_exp = 0;
	struct othello_pos *pos = NULL;
	char *dig = NULL;
	json_t *np = NULL;
	int maxe = 0, rc;

	if (!mode || strcmp(mode, "file") != 0) {
		gerr_printf(err, errlen, "othello: --random jobs take no input file");
		return GERR_INVAL;
	}
	rc = othello_input_parse(input, len, &canon, &canon_len, &n, &maxe,
				 err, errlen);
	if (rc)
		return rc;
	rc = othello_input_read(canon, canon_len, 0, 0, &pos, err, errlen);
	if (rc)
		goto out;
	size_t nb = (n + OTHELLO_BLOCK - 1) / OTHELLO_BLOCK;
	dig = malloc(nb * 16 + 1);
	if (!dig) {
		rc = GERR_NOMEM;
		goto out;
	}
	for (size_t b = 0; b < nb; b++) {
		uint64_t lo = b * OTHELLO_BLOCK;
		uint64_t k = n - lo < OTHELLO_BLOCK ? n - lo : OTHELLO_BLOCK;
		snprintf(dig + 16 * b, 17, "%016" PRIx64,
			 othello_digest(pos + lo, k));
	}
	for (uint64_t i = 0; i < n; i++)
		with_exp += pos[i].expected != OTHELLO_NO_SCORE;
	np = json_deep_copy(params);
	if (!np || json_object_set_new(np, "positions", json_integer((json_int_t)n)) ||
	    json_object_set_new(np, "max_empties", json_integer(maxe)) ||
	    json_object_set_new(np, "with_expected",
				json_integer((json_int_t)with_exp)) ||
	    json_object_set_new(np, "digests", json_string(dig))) {
		rc = GERR_NOMEM;
		goto out;
	}
	*ret_params = np;
	np = NULL;
	*ret_input = canon;
	canon = NULL;
	*ret_input_len = canon_len;
	*ret_total_units = n;
out:
	json_decref(np);
	free(canon);
	free(pos);
	free(dig);
	return rc;
}

/* Default lease: minutes of a CPU worker's time, all of a 10-empty job on
 * a GPU (fewer, larger leases keep gpud's overhead out of the rate). */
static uint64_t default_units(int empties)
{
	if (empties <= 12)
		return 1ull << 21;
	if (empties <= 14)
		return 1ull << 17;
	if (empties <= 16)
		return 1ull << 14;
	if (empties <= 18)
		return 1ull << 12;
	if (empties <= 20)
		return 1ull << 10;
	if (empties <= 22)
		return 256;
	if (empties <= 24)
		return 64;
	return 16;
}

static int otw_carve(void *ctx, const json_t *params, const json_t *cursor,
		    const json_t *answer, const struct wl_parts *parts, uint64_t want_units,
		    json_t **ret_spec, uint64_t *ret_units, json_t **ret_cursor, int *ret_last)
{
	char err[WL_ERRLEN];
	struct job j;
	uint64_t next = 0, size;
	json_t *spec, *cur;

	(void)answer;
	if (get_job(params, &j, err, sizeof(err)))
		return GERR_INVAL;
	if (cursor && wl_json_u64(cursor, "next", 1, 0, &next, err,
				  sizeof(err)))
		return GERR_INVAL;
	if (next >= j.n)
		return GERR_DONE;
	size = want_units ? want_units : default_units(j.empties);
	if (size > OTHELLO_CUDA_MAX_BATCH)
		size = OTHELLO_CUDA_MAX_BATCH;
	if (j.file) /* whole blocks, so verify can check their digests */
		size = (size + OTHELLO_BLOCK - 1) / OTHELLO_BLOCK * OTHELLO_BLOCK;
	if (size > j.n - next)
		size = j.n - next;
	spec = json_pack("{s:I, s:I}", "begin", (json_int_t)next, "count",
			 (json_int_t)size);
	cur = json_pack("{s:I}", "next", (json_int_t)(next + size));
	if (!spec || !cur) {
		json_decref(spec);
		json_decref(cur);
		return GERR_NOMEM;
	}
	*ret_spec = spec;
	*ret_units = size;
	*ret_cursor = cur;
	*ret_last = next + size == j.n;
	return 0;
}

/* ---- run ------------------------------------------------------------------ */

struct stop_ctx {
	const struct wl_run_io *io;
};

static int io_stop(void *o)
{
	const struct wl_run_io *io = ((struct stop_ctx *)o)->io;
	return io && io->should_stop && io->should_stop(io->opaque);
}

/* Solve positions [from, to) of r (positions in pos, or generated). */
static int solve_range(const struct job *j, struct othello_res *r,
		       const struct othello_pos *pos, uint64_t from,
		       uint64_t to, const struct wl_device *dev, void *cuda,
		       const struct wl_run_io *io, char *err, size_t errlen)
{
	size_t n = (size_t)(to - from), ng = 0, nc = 0;
	uint64_t *P, *O, nodes = 0;
	size_t *gi, *ci;
	int8_t *sc;
	uint8_t *mv;
	struct stop_ctx sctx = {io};
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
		rc = othello_solve_batch(P, O, nc, dev ? dev->threads : 1, sc,
					 mv, &nodes, io_stop, &sctx);
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
	struct job j;
	uint64_t begin, count;
	struct othello_res r;
	struct othello_pos *pos = NULL;
	void *cuda = NULL;
	int rc;

	rc = get_spec(params, spec, &j, &begin, &count, err, errlen);
	if (rc)
		return rc;
	if (dev && dev->kind == WL_DEVICE_CUDA) {
		cuda = dev->cuda_ctx;
		if (!cuda) {
			gerr_printf(err, errlen, "othello: CUDA device without a "
			       "context (cuda_open)");
			return GERR_INVAL;
		}
	}
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
		if (c.begin != begin || c.count != count || c.with_pos != j.file) {
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
		double t0 = now_s();
		rc = solve_range(&j, &r, pos, r.done, to, dev, cuda, io, err,
				 errlen);
		if (rc)
			goto out;
		r.usec += (uint64_t)((now_s() - t0) * 1e6);
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

static int otw_check_checkpoint(void *ctx, const json_t *params, const json_t *spec,
			       const void *bytes, size_t len, char *err,
			       size_t errlen)
{
	struct job j;
	uint64_t begin, count;
	struct othello_res c;
	int rc = get_spec(params, spec, &j, &begin, &count, err, errlen);

	if (rc)
		return rc;
	rc = othello_res_decode(bytes, len, 1, &c, err, errlen);
	if (rc)
		return rc;
	if (c.begin != begin || c.count != count || c.with_pos != j.file) {
		gerr_printf(err, errlen, "othello: checkpoint is for another lease");
		rc = GERR_INVAL;
	}
	othello_res_clear(&c);
	return rc;
}

/* ---- verify --------------------------------------------------------------- */

static unsigned sample_size(int empties)
{
	if (empties <= 14)
		return 64;
	if (empties <= 18)
		return 16;
	if (empties <= 22)
		return 4;
	return 1;
}

/* Threads for a sample of k: the cores, at most 8 (gpud runs other
 * verifications and its loop beside it). */
static int verify_threads(unsigned k)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = cpus > 1 ? (int)(cpus < 8 ? cpus : 8) : 1;

	return (unsigned)n < k ? n : (int)k;
}

static int check_digests(const struct job *j, const struct othello_res *r,
			 char *err, size_t errlen)
{
	for (uint64_t lo = 0; lo < r->count; lo += OTHELLO_BLOCK) {
		uint64_t k = r->count - lo < OTHELLO_BLOCK ? r->count - lo
							   : OTHELLO_BLOCK;
		uint64_t b = (r->begin + lo) / OTHELLO_BLOCK;
		char hex[17];
		snprintf(hex, sizeof(hex), "%016" PRIx64,
			 othello_digest(r->pos + lo, k));
		if (memcmp(hex, j->digests + 16 * b, 16) != 0) {
			gerr_printf(err, errlen, "othello verify: positions of block "
			       "%" PRIu64 " are not the input's", b);
			return GERR_VERIFY;
		}
	}
	return 0;
}

static int otw_verify(void *ctx, const json_t *params, const json_t *spec,
		     const void *result, size_t len, uint64_t seed, char *err,
		     size_t errlen)
{
	struct job j;
	uint64_t begin, count;
	struct othello_res r;
	uint64_t hist[65];
	int rc = get_spec(params, spec, &j, &begin, &count, err, errlen);

	if (rc)
		return rc;
	/* Checked whole; only file jobs need the positions copied out. */
	rc = othello_res_hist(result, len, &r, hist, err, errlen);
	if (rc == 0 && r.with_pos)
		rc = othello_res_decode(result, len, 0, &r, err, errlen);
	if (rc)
		return GERR_VERIFY;
	if (r.begin != begin || r.count != count || r.with_pos != j.file) {
		gerr_printf(err, errlen, "othello verify: result is for [%" PRIu64
		       ", +%" PRIu64 ")%s, lease is [%" PRIu64 ", +%" PRIu64 ")",
		       r.begin, r.count, r.with_pos ? " with positions" : "",
		       begin, count);
		rc = GERR_VERIFY;
		goto out;
	}
	if (j.file && (rc = check_digests(&j, &r, err, errlen)) != 0)
		goto out;
	/* The sample is solved on several threads: verification is on the
	 * job's critical path (a 10-empty sample of 64 is ~13 ms on one). */
	unsigned want = sample_size(j.empties); /* at most 64 */
	unsigned k = count < want ? (unsigned)count : want;
	uint64_t idx[64], P[64], O[64], nodes;
	int8_t sc[64];
	uint8_t mv[64];
	uint64_t h = oth_mix64(seed ^ begin);
	for (unsigned t = 0; t < k; t++) {
		uint64_t i;
		if (count <= want) {
			i = t;
		} else {
			h += OTHELLO_GOLDEN;
			i = oth_mix64(h) % count;
		}
		idx[t] = i;
		if (j.file) {
			othello_pos_pov(&r.pos[i], &P[t], &O[t]);
		} else {
			int black;
			oth_generate(j.seed, begin + i, j.empties, &P[t], &O[t],
				     &black);
		}
	}
	rc = othello_solve_batch(P, O, k, verify_threads(k), sc, mv, &nodes,
				 NULL, NULL);
	if (rc)
		goto out;
	for (unsigned t = 0; t < k; t++) {
		uint64_t i = idx[t];
		int score, move;
		othello_res_at(result, i, &score, &move);
		if (sc[t] != score || mv[t] != move) {
			gerr_printf(err, errlen, "othello verify: position %" PRIu64
			       " re-solves to %+d (move %d), result claims %+d "
			       "(move %d)", begin + i, sc[t], mv[t], score, move);
			rc = GERR_VERIFY;
			goto out;
		}
	}
out:
	othello_res_clear(&r);
	return rc;
}

/* ---- merge, finish, render -------------------------------------------------- */

static json_t *new_answer(void)
{
	json_t *hist = json_array();

	for (int b = 0; hist && b < 65; b++)
		json_array_append_new(hist, json_integer(0));
	return json_pack("{s:I, s:I, s:o, s:I, s:I, s:I, s:[], s:{}}",
			 "positions", (json_int_t)0, "leases", (json_int_t)0,
			 "hist", hist, "nodes", (json_int_t)0, "usec",
			 (json_int_t)0, "mismatches", (json_int_t)0,
			 "mismatch_list", "results");
}

static void add_int(json_t *obj, const char *key, json_int_t d)
{
	json_int_t v = json_integer_value(json_object_get(obj, key));
	json_object_set_new(obj, key, json_integer(v + d));
}

static int cmp_mm(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_array_get(*(json_t *const *)a, 0));
	json_int_t y = json_integer_value(json_array_get(*(json_t *const *)b, 0));
	return (x > y) - (x < y);
}

static int otw_merge(void *ctx, const json_t *params, const json_t *answer,
		    const json_t *spec, const void *result, size_t len,
		    const char *result_hash, json_t **ret_answer, json_t **ret_note)
{
	char err[WL_ERRLEN], key[32];
	struct othello_res r;
	json_t *a, *hist, *list, *res;
	int rc;

	(void)params;
	(void)spec;
	/* Count in an array, then touch the 65 JSON integers once: a lease
	 * of a million positions cost the coordinator tens of milliseconds
	 * in per-position JSON updates. Only file jobs need the positions
	 * decoded (expected scores); the histogram reads the bytes as they
	 * are. */
	uint64_t cnt[65];
	rc = othello_res_hist(result, len, &r, cnt, err, sizeof(err));
	if (rc == 0 && r.with_pos)
		rc = othello_res_decode(result, len, 0, &r, err, sizeof(err));
	if (rc)
		return rc;
	a = answer ? json_deep_copy(answer) : new_answer();
	hist = json_object_get(a, "hist");
	list = json_object_get(a, "mismatch_list");
	res = json_object_get(a, "results");
	if (!a || !json_is_array(hist) || json_array_size(hist) != 65 ||
	    !json_is_array(list) || !json_is_object(res)) {
		json_decref(a);
		othello_res_clear(&r);
		return GERR_INVAL;
	}
	for (size_t b = 0; b < 65; b++) {
		json_t *e = json_array_get(hist, b);
		if (cnt[b])
			json_integer_set(e, json_integer_value(e) +
					 (json_int_t)cnt[b]);
	}
	for (uint64_t i = 0; r.with_pos && i < r.count; i++) {
		if (r.pos[i].expected != OTHELLO_NO_SCORE &&
		    r.pos[i].expected != r.score[i]) {
			add_int(a, "mismatches", 1);
			json_array_append_new(list, json_pack("[I, i, i]",
				(json_int_t)(r.begin + i),
				(int)r.pos[i].expected, (int)r.score[i]));
		}
	}
	/* Keep the lowest indices: the same list whatever the merge order. */
	if (json_array_size(list) > MISMATCH_LIST) {
		size_t n = json_array_size(list);
		json_t **v = malloc(n * sizeof(*v));
		json_t *nl = json_array();
		for (size_t i = 0; v && i < n; i++)
			v[i] = json_array_get(list, i);
		if (v && nl) {
			qsort(v, n, sizeof(*v), cmp_mm);
			for (size_t i = 0; i < MISMATCH_LIST; i++)
				json_array_append(nl, v[i]);
			json_object_set(a, "mismatch_list", nl);
		}
		json_decref(nl);
		free(v);
	}
	add_int(a, "positions", (json_int_t)r.count);
	add_int(a, "leases", 1);
	add_int(a, "nodes", (json_int_t)r.nodes);
	add_int(a, "usec", (json_int_t)r.usec);
	snprintf(key, sizeof(key), "%" PRIu64, r.begin);
	json_object_set_new(res, key, json_pack("[s, I]", result_hash ? result_hash : "",
						(json_int_t)r.count));
	othello_res_clear(&r);
	*ret_answer = a;
	return 0;
}

/* The stored results in order of begin; checks they tile [0, n). */
struct slice {
	uint64_t begin, count;
	const char *hash;
};

static int cmp_slice(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;
	return (x->begin > y->begin) - (x->begin < y->begin);
}

static int slices(const json_t *answer, uint64_t n, struct slice **ret,
		  size_t *ret_n, char *err, size_t errlen)
{
	const json_t *res = json_object_get(answer, "results");
	const char *key;
	json_t *val;
	size_t k = 0, cap = json_object_size(res);
	struct slice *s = calloc(cap ? cap : 1, sizeof(*s));
	uint64_t at = 0;

	if (!s)
		return GERR_NOMEM;
	json_object_foreach((json_t *)res, key, val) {
		s[k].begin = strtoull(key, NULL, 10);
		s[k].hash = json_string_value(json_array_get(val, 0));
		s[k].count = (uint64_t)json_integer_value(json_array_get(val, 1));
		k++;
	}
	qsort(s, k, sizeof(*s), cmp_slice);
	for (size_t i = 0; i < k; i++) {
		if (s[i].begin != at || !s[i].hash) {
			free(s);
			gerr_printf(err, errlen, "othello: results do not cover "
			       "position %" PRIu64, at);
			return GERR_VERIFY;
		}
		at += s[i].count;
	}
	if (at != n) {
		free(s);
		gerr_printf(err, errlen, "othello: results cover %" PRIu64 " of %"
		       PRIu64 " positions", at, n);
		return GERR_VERIFY;
	}
	*ret = s;
	*ret_n = k;
	return 0;
}

static int otw_finish(void *ctx, const json_t *params, const json_t *answer, const struct wl_parts *parts, char *err,
		     size_t errlen)
{
	struct job j;
	struct slice *s = NULL;
	size_t k;
	uint64_t total = 0;
	int rc = get_job(params, &j, err, errlen);

	if (rc)
		return rc;
	if (!answer) {
		gerr_printf(err, errlen, "othello finish: no answer");
		return GERR_INVAL;
	}
	const json_t *hist = json_object_get(answer, "hist");
	for (size_t b = 0; b < json_array_size(hist); b++)
		total += (uint64_t)json_integer_value(json_array_get(hist, b));
	if (total != j.n ||
	    (uint64_t)json_integer_value(json_object_get(answer, "positions")) != j.n) {
		gerr_printf(err, errlen, "othello finish: %" PRIu64 " scores for %"
		       PRIu64 " positions", total, j.n);
		return GERR_VERIFY;
	}
	rc = slices(answer, j.n, &s, &k, err, errlen);
	free(s);
	return rc;
}

static char *otw_render_text(void *ctx, const json_t *params, const json_t *answer, const struct wl_parts *parts)
{
	char err[WL_ERRLEN], *buf = NULL;
	size_t len = 0;
	struct job j;
	FILE *f;

	if (get_job(params, &j, err, sizeof(err)) || !answer)
		return strdup("othello: no answer yet\n");
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	const json_t *hist = json_object_get(answer, "hist");
	uint64_t n = (uint64_t)json_integer_value(json_object_get(answer, "positions"));
	double usec = (double)json_integer_value(json_object_get(answer, "usec"));
	double nodes = (double)json_integer_value(json_object_get(answer, "nodes"));
	uint64_t win = 0, draw = 0, loss = 0, peak = 1;
	double sum = 0;
	for (int b = 0; b < 65; b++) {
		uint64_t c = (uint64_t)json_integer_value(json_array_get(hist, (size_t)b));
		int sc = 2 * b - 64;
		sum += (double)sc * (double)c;
		if (sc > 0)
			win += c;
		else if (sc < 0)
			loss += c;
		else
			draw += c;
		if (c > peak)
			peak = c;
	}
	if (j.file)
		fprintf(f, "othello: %" PRIu64 " of %" PRIu64 " positions from "
			"a file (up to %d empties)\n", n, j.n, j.empties);
	else
		fprintf(f, "othello: %" PRIu64 " of %" PRIu64 " random positions"
			" with %d empties, seed %" PRIu64 "\n", n, j.n,
			j.empties, j.seed);
	if (n) {
		fprintf(f, "side to move: %" PRIu64 " wins, %" PRIu64 " draws, %"
			PRIu64 " losses; mean score %+.3f\n", win, draw, loss,
			sum / (double)n);
		if (usec > 0)
			fprintf(f, "solve rate: %.4g positions/s, %.4g nodes/s "
				"(device time %.3f s, %.4g nodes)\n",
				(double)n / (usec * 1e-6), nodes / (usec * 1e-6),
				usec * 1e-6, nodes);
		fprintf(f, "score distribution (score: positions):\n");
		for (int b = 0; b < 65; b++) {
			uint64_t c = (uint64_t)json_integer_value(json_array_get(hist, (size_t)b));
			if (!c)
				continue;
			int w = (int)(40.0 * (double)c / (double)peak + 0.999);
			fprintf(f, "%+4d %12" PRIu64 " %.*s\n", 2 * b - 64, c, w,
				"########################################");
		}
	}
	json_int_t mm = json_integer_value(json_object_get(answer, "mismatches"));
	if (j.file) {
		json_int_t we = json_integer_value(json_object_get(params, "with_expected"));
		fprintf(f, "expected scores in the input: %lld; disagreements: "
			"%lld\n", (long long)we, (long long)mm);
		size_t i;
		json_t *e;
		json_array_foreach(json_object_get(answer, "mismatch_list"), i, e) {
			if (i >= 20) {
				fprintf(f, "  ... (answer lists %zu)\n",
					json_array_size(json_object_get(answer, "mismatch_list")));
				break;
			}
			fprintf(f, "  position %lld (line order): expected %+lld, "
				"solved %+lld\n",
				(long long)json_integer_value(json_array_get(e, 0)),
				(long long)json_integer_value(json_array_get(e, 1)),
				(long long)json_integer_value(json_array_get(e, 2)));
		}
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- export ----------------------------------------------------------------- */

static int otw_export(void *ctx, const json_t *params, const json_t *answer, const struct wl_parts *parts,
		     const char *what, const json_t *args,
		     const struct wl_blob_reader *rd, void **ret,
		     size_t *ret_len, char *err, size_t errlen)
{
	struct job j;
	struct slice *s = NULL;
	size_t k = 0, olen = 0;
	struct othello_pos *in = NULL;
	char *obuf = NULL;
	FILE *f = NULL;
	int rc = get_job(params, &j, err, errlen);

	(void)args;
	if (rc)
		return rc;
	if (strcmp(what, "result") != 0) {
		gerr_printf(err, errlen, "othello: no export '%s'", what);
		return GERR_INVAL;
	}
	if (!answer) {
		gerr_printf(err, errlen, "othello: no results yet");
		return GERR_NOTFOUND;
	}
	rc = slices(answer, j.n, &s, &k, err, errlen);
	if (rc) {
		gerr_printf(err, errlen, "othello: the job is not finished");
		return GERR_STATE;
	}
	if (j.file) {
		void *blob = NULL;
		size_t blen = 0;
		rc = rd->fetch(rd->opaque, j.input, &blob, &blen);
		if (rc) {
			gerr_printf(err, errlen, "othello: cannot read the input: %s",
			       gerr_str(rc));
			goto out;
		}
		rc = othello_input_read(blob, blen, 0, 0, &in, err, errlen);
		free(blob);
		if (rc)
			goto out;
	}
	f = open_memstream(&obuf, &olen);
	if (!f) {
		rc = GERR_NOMEM;
		goto out;
	}
	for (size_t t = 0; t < k; t++) {
		void *blob = NULL;
		size_t blen = 0;
		struct othello_res r;
		rc = rd->fetch(rd->opaque, s[t].hash, &blob, &blen);
		if (rc) {
			gerr_printf(err, errlen, "othello: cannot read result %.16s: %s",
			       s[t].hash, gerr_str(rc));
			goto out;
		}
		rc = othello_res_decode(blob, blen, 0, &r, err, errlen);
		free(blob);
		if (rc)
			goto out;
		if (r.begin != s[t].begin || r.count != s[t].count) {
			othello_res_clear(&r);
			gerr_printf(err, errlen, "othello: result %.16s is for another "
			       "slice", s[t].hash);
			rc = GERR_CORRUPT;
			goto out;
		}
		for (uint64_t i = 0; i < r.count; i++) {
			struct othello_pos p;
			char board[68], mv[3];
			if (j.file) {
				p = in[r.begin + i];
			} else {
				uint64_t P, O;
				int black;
				oth_generate(j.seed, r.begin + i, j.empties, &P,
					     &O, &black);
				p.black = black ? P : O;
				p.white = black ? O : P;
				p.black_to_move = (uint8_t)black;
			}
			othello_format_board(&p, board);
			othello_format_move(r.move[i], mv);
			fprintf(f, "%s %s:%+03d;\n", board, mv, r.score[i]);
		}
		othello_res_clear(&r);
	}
	if (fclose(f) != 0) {
		f = NULL;
		rc = GERR_NOMEM;
		goto out;
	}
	f = NULL;
	*ret = obuf;
	*ret_len = olen;
	obuf = NULL;
out:
	if (f)
		fclose(f);
	free(obuf);
	free(in);
	free(s);
	return rc;
}

static const char *const otw_exports[] = {"result", NULL};

WL_CUDA_HOOKS(othello)

const struct workload othello_workload = {
	.name = "othello",
	.unit_name = "positions",
	.parse_params = otw_parse_params,
	.parse_input = otw_parse_input,
	.carve = otw_carve,
	.run = otw_run,
	.check_checkpoint = otw_check_checkpoint,
	.verify = otw_verify,
	.merge = otw_merge,
	.finish = otw_finish,
	.render_text = otw_render_text,
	.render_files = NULL,
	.export_data = otw_export,
	.exports = otw_exports,
	.cuda_open = othello_wl_cuda_open,
	.cuda_close = othello_wl_cuda_close,
	/* 2 bytes per position of nearly independent scores and moves: level
	 * 1 saved 25% of a 1.1 M-position result at 50 ms of the worker's
	 * time and 16 ms of gpud's to inflate, all on the job's critical path. */
	.result_store_raw = 1,
};
