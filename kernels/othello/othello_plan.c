/* othello_plan.c - an Othello job's plan: the params gpuctl's arguments
 * give, the input file of a --file job (checked and canonicalised, with a
 * digest per block for verify), and the leases carved from a cursor. The
 * shapes of params, cursor and spec are in othello_wl.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "othello.h"
#include "othello_cuda.h"
#include "othello_wl.h"

int othello_job_get(const json_t *params, struct othello_job *j, char *err,
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
		if (rc == 0)
			rc = wl_json_u64(params, "block", 0, OTHELLO_BLOCK,
					 &j->block, err, errlen);
		if (rc)
			return rc;
		if (!j->digests || !j->input) {
			gerr_printf(err, errlen, "othello: file job without its input "
				    "(submit with --file F)");
			return GERR_INVAL;
		}
		j->split = json_object_get(params, "split");
		if (j->block < 1 || j->block > OTHELLO_BLOCK ||
		    (j->split && !json_is_object(j->split))) {
			gerr_printf(err, errlen, "othello: params' block or split "
				    "is malformed");
			return GERR_INVAL;
		}
		if (j->n > 0 && strlen(j->digests) !=
		    16 * ((j->n + j->block - 1) / j->block)) {
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
		if (e < 1 || e > OTHELLO_WL_MAX_EMPTIES) {
			gerr_printf(err, errlen, "othello: empties must be 1..%d",
				    OTHELLO_WL_MAX_EMPTIES);
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

int othello_spec_get(const json_t *params, const json_t *spec,
		     struct othello_job *j, uint64_t *begin, uint64_t *count,
		     char *err, size_t errlen)
{
	int rc = othello_job_get(params, j, err, errlen);

	if (rc)
		return rc;
	rc = wl_spec_u64s(spec, "othello", "begin", begin, "count", count, err,
			  errlen);
	if (rc)
		return rc;
	if (*count < 1 || *begin >= j->n || *count > j->n - *begin ||
	    (j->file && *begin % j->block) ||
	    (j->file && *begin + *count != j->n && *count % j->block)) {
		gerr_printf(err, errlen, "othello: bad lease [%" PRIu64 ", +%" PRIu64
			    ") for %" PRIu64 " positions", *begin, *count, j->n);
		return GERR_INVAL;
	}
	return 0;
}

/* One side of a window: absent (open), or even within the scores. */
static int otw_window_side(const json_t *spec, const char *key, int open,
			   int *ret)
{
	const json_t *v = json_object_get(spec, key);
	json_int_t x;

	*ret = open;
	if (!v)
		return 0;
	x = json_integer_value(v);
	if (!json_is_integer(v) || x < -64 || x > 64 || x & 1)
		return GERR_INVAL;
	*ret = (int)x;
	return 0;
}

int othello_spec_window(const struct othello_job *j, const json_t *spec,
			int *ret_alpha, int *ret_beta, char *err,
			size_t errlen)
{
	int a, b;

	if (otw_window_side(spec, "alpha", -65, &a) ||
	    otw_window_side(spec, "beta", 65, &b) || a >= b ||
	    (!j->split && (a != -65 || b != 65))) {
		gerr_printf(err, errlen, "othello: a lease's alpha and beta "
			    "must be even, alpha < beta, and only in split jobs");
		return GERR_INVAL;
	}
	*ret_alpha = a;
	*ret_beta = b;
	return 0;
}

/* --split: 0 (the default: a split job costs several times the nodes of
 * one search, see othello_split.c, so it pays only with many workers),
 * "auto" (OTHELLO_SPLIT_AUTO: split a job of few deep positions) or the
 * plies 1..OTHELLO_SPLIT_MAX_DEPTH. */
#define OTHELLO_SPLIT_AUTO 255
static int otw_split_request(const json_t *args, uint64_t *ret, char *err,
			     size_t errlen)
{
	const json_t *v = json_object_get(args, "split");
	const char *sv = json_string_value(v);

	*ret = sv && strcmp(sv, "auto") == 0 ? OTHELLO_SPLIT_AUTO : 0;
	if (!v || *ret)
		return 0;
	if (wl_json_u64(args, "split", 1, 0, ret, err, errlen) ||
	    *ret > OTHELLO_SPLIT_MAX_DEPTH) {
		gerr_printf(err, errlen, "othello: --split takes auto or the "
			    "plies 0..%d", OTHELLO_SPLIT_MAX_DEPTH);
		return GERR_INVAL;
	}
	return 0;
}

int othello_wl_parse_params(void *ctx, const json_t *args,
			    json_t **ret_params, uint64_t *ret_total_units,
			    char *err, size_t errlen)
{
	static const char *const keys[] = {"random", "empties", "seed", "file",
					   "split", NULL};
	json_t *p;
	uint64_t n = 0, e = 0, seed = 0;
	int has_random, rc;
	char sbuf[32];

	(void)ctx;
	rc = wl_args_check(args, keys, "othello", "--random N --empties E "
			   "--seed S, or --file F [--split PLIES]", err,
			   errlen);
	if (rc)
		return rc;
	has_random = json_object_get(args, "random") != NULL;
	if (has_random && json_object_get(args, "split")) {
		gerr_printf(err, errlen, "othello: --split goes with --file F");
		return GERR_INVAL;
	}
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
		if (json_object_size(args) !=
		    1 + (json_object_get(args, "split") != NULL)) {
			gerr_printf(err, errlen, "othello: --empties and --seed go "
				    "with --random N");
			return GERR_INVAL;
		}
		rc = otw_split_request(args, &n, err, errlen);
		if (rc)
			return rc;
		/* A file job: parse_input fills in the rest. */
		p = json_pack("{s:s, s:I}", "mode", "file", "split_request",
			      (json_int_t)n);
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
	if (e < 1 || e > OTHELLO_WL_MAX_EMPTIES) {
		gerr_printf(err, errlen, "othello: --empties must be 1..%d, got %"
			    PRIu64, OTHELLO_WL_MAX_EMPTIES, e);
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

/* The frontier of roots[0..n) at depth plies as a canonical input (in
 * *canon, its positions in *pos, both replaced) and params' "split" in
 * *ret_split; *ret_split stays NULL when no line reaches the frontier. */
static int otw_split_input(struct othello_pos **pos, uint64_t *n, int *maxe,
			   int depth, void **canon, size_t *canon_len,
			   json_t **ret_split, char *err, size_t errlen)
{
	struct othello_split *sp = NULL;
	const struct othello_pos *fr;
	char *text = NULL, board[68];
	size_t tlen = 0, nf;
	json_t *roots = json_array(), *split = NULL;
	void *nc = NULL;
	size_t nclen = 0;
	uint64_t nn = 0;
	int ne = 0, rc;
	FILE *f;

	*ret_split = NULL;
	if (!roots)
		return GERR_NOMEM;
	rc = othello_split_build(*pos, (size_t)*n, depth, &sp);
	if (rc) {
		json_decref(roots);
		gerr_printf(err, errlen, "othello: --split %d: %s", depth,
			    rc == GERR_TOOBIG ? "more than "
			    "1024 frontier positions (take fewer plies)"
			    : gerr_str(rc));
		return rc;
	}
	nf = othello_split_frontier(sp, &fr);
	if (nf == 0)
		goto out; /* every line ends first: solve the roots */
	for (uint64_t r = 0; r < *n; r++) {
		const struct othello_pos *p = &(*pos)[r];
		othello_format_board(p, board);
		board[66] = '\0'; /* no ';': the expected score is apart */
		if (json_array_append_new(roots, json_pack("[s, o]", board,
			p->expected == OTHELLO_NO_SCORE ? json_null()
			: json_integer(p->expected)))) {
			rc = GERR_NOMEM;
			goto out;
		}
	}
	/* Written as OBF text and read back: one canonical encoder. */
	f = open_memstream(&text, &tlen);
	if (!f) {
		rc = GERR_NOMEM;
		goto out;
	}
	for (size_t k = 0; k < nf; k++) {
		othello_format_board(&fr[k], board);
		fprintf(f, "%s\n", board);
	}
	/* The closing position (see otw_split_carve). */
	fprintf(f, "%.64s X\n", "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"
		"XXXXXXXXXXXXXXXX");
	if (fclose(f) != 0) {
		rc = GERR_NOMEM;
		goto out;
	}
	rc = othello_input_parse(text, tlen, &nc, &nclen, &nn, &ne, err,
				 errlen);
	if (rc)
		goto out;
	split = json_pack("{s:i, s:O, s:i}", "depth", depth, "roots", roots,
			  "root_empties", *maxe);
	struct othello_pos *np = NULL;
	if (!split || (rc = othello_input_read(nc, nclen, 0, 0, &np, err,
					       errlen)) != 0) {
		rc = rc ? rc : GERR_NOMEM;
		goto out;
	}
	free(*pos);
	*pos = np;
	free(*canon);
	*canon = nc;
	nc = NULL;
	*canon_len = nclen;
	*n = nn;
	*maxe = ne;
	*ret_split = split;
	split = NULL;
out:
	othello_split_free(sp);
	json_decref(roots);
	json_decref(split);
	free(text);
	free(nc);
	return rc;
}

int othello_wl_parse_input(void *ctx, const json_t *params, const void *input,
			   size_t len, json_t **ret_params, void **ret_input,
			   size_t *ret_input_len, uint64_t *ret_total_units,
			   char *err, size_t errlen)
{
	const char *mode = json_string_value(json_object_get(params, "mode"));
	void *canon = NULL;
	size_t canon_len = 0;
	uint64_t n = 0, with_exp = 0, req = 0, block;
	struct othello_pos *pos = NULL;
	char *dig = NULL;
	json_t *np = NULL, *split = NULL;
	int maxe = 0, depth = 0, rc;

	(void)ctx;
	if (!mode || strcmp(mode, "file") != 0) {
		gerr_printf(err, errlen, "othello: --random jobs take no input file");
		return GERR_INVAL;
	}
	rc = wl_json_u64(params, "split_request", 0, 0, &req,
			 err, errlen);
	if (rc)
		return rc;
	rc = othello_input_parse(input, len, &canon, &canon_len, &n, &maxe,
				 err, errlen);
	if (rc)
		return rc;
	rc = othello_input_read(canon, canon_len, 0, 0, &pos, err, errlen);
	if (rc)
		goto out;
	for (uint64_t i = 0; i < n; i++)
		with_exp += pos[i].expected != OTHELLO_NO_SCORE;
	if (req == OTHELLO_SPLIT_AUTO) {
		if (n <= OTHELLO_SPLIT_MAX_ROOTS &&
		    maxe >= OTHELLO_SPLIT_AUTO_EMPTIES)
			rc = othello_split_auto_depth(pos, (size_t)n, &depth);
	} else if (req > 0 && n > OTHELLO_SPLIT_MAX_ROOTS) {
		gerr_printf(err, errlen, "othello: --split takes at most %d "
			    "positions, the file has %" PRIu64,
			    OTHELLO_SPLIT_MAX_ROOTS, n);
		rc = GERR_INVAL;
	} else {
		depth = (int)req;
	}
	if (rc == 0 && depth > 0)
		rc = otw_split_input(&pos, &n, &maxe, depth, &canon,
				     &canon_len, &split, err, errlen);
	if (rc)
		goto out;
	block = split ? 1 : OTHELLO_BLOCK;
	size_t nb = (n + block - 1) / block;
	dig = malloc(nb * 16 + 1);
	if (!dig) {
		rc = GERR_NOMEM;
		goto out;
	}
	for (size_t b = 0; b < nb; b++) {
		uint64_t lo = b * block;
		uint64_t k = n - lo < block ? n - lo : block;
		snprintf(dig + 16 * b, 17, "%016" PRIx64,
			 othello_digest(pos + lo, k));
	}
	np = json_deep_copy(params);
	if (!np || (json_object_del(np, "split_request"), 0) ||
	    json_object_set_new(np, "positions", json_integer((json_int_t)n)) ||
	    json_object_set_new(np, "max_empties", json_integer(maxe)) ||
	    json_object_set_new(np, "with_expected",
				json_integer((json_int_t)with_exp)) ||
	    json_object_set_new(np, "digests", json_string(dig)) ||
	    (split && (json_object_set_new(np, "block", json_integer(1)) ||
		       json_object_set(np, "split", split)))) {
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
	json_decref(split);
	free(canon);
	free(pos);
	free(dig);
	return rc;
}

/* Default lease: minutes of a CPU worker's time, all of a 10-empty job on
 * a GPU (fewer, larger leases keep gpud's overhead out of the rate). */
static uint64_t otw_default_units(int empties)
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

/* A split job's next lease: a frontier position that alpha-beta over the
 * bounds merged so far searches now (othello_split_need), with its
 * window, the hardest first, unless its last lease is still out (its
 * window not settled by the bounds: a position is leased once at a time).
 * The planner must say which lease is its last when it carves it, yet
 * whether a position will be needed depends on results still out; so
 * once the bounds settle the roots, the last lease is the closing
 * position (the job's last, a full board: no work), whose merge lets gpud
 * finish the job. Until then, with nothing to lease now, it waits
 * (GERR_AGAIN) for a result out. */
static int otw_split_carve(const struct othello_job *j, const json_t *cursor,
			   const json_t *answer, uint64_t *ret_k, int *ret_a,
			   int *ret_b, char **ret_windows, int *ret_last)
{
	char err[WL_ERRLEN];
	const char *old = json_string_value(json_object_get(cursor, "windows"));
	struct othello_split *sp = NULL;
	uint64_t nf = j->n - 1, next = j->n;
	int8_t *lo = malloc(j->n), *hi = malloc(j->n), *wa = malloc(j->n);
	int8_t *wb = malloc(j->n);
	uint8_t *want = malloc(j->n);
	char *win = malloc(4 * j->n + 1);
	int rc = lo && hi && wa && wb && want && win ? 0 : GERR_NOMEM;

	if (rc == 0 && cursor && (!old || strlen(old) != 4 * j->n))
		rc = GERR_INVAL;
	if (rc == 0)
		rc = othello_split_scores(answer, j->n, lo, hi);
	if (rc == 0)
		rc = othello_split_of(j, &sp, NULL, NULL, err, sizeof(err));
	if (rc == 0 && othello_split_frontier(sp, NULL) != nf)
		rc = GERR_INVAL;
	if (rc == 0)
		rc = othello_split_need(sp, lo, hi, want, wa, wb);
	if (rc)
		goto out;
	if (old)
		memcpy(win, old, 4 * j->n + 1);
	else
		memset(win, '-', 4 * j->n), win[4 * j->n] = '\0';
	for (uint64_t k = 0; next == j->n && k < nf; k++) {
		unsigned la, lb;
		if (!want[k])
			continue;
		if (win[4 * k] != '-') {
			if (sscanf(win + 4 * k, "%2x%2x", &la, &lb) != 2) {
				rc = GERR_INVAL;
				goto out;
			}
			int a = 2 * (int)la - 66, b = 2 * (int)lb - 66;
			if (lo[k] != hi[k] && hi[k] > a && lo[k] < b)
				continue; /* out: its result is not in */
		}
		next = k;
	}
	int last = next == j->n;
	if (last) {
		int8_t sc[OTHELLO_SPLIT_MAX_ROOTS];
		uint8_t mv[OTHELLO_SPLIT_MAX_ROOTS];
		if (win[4 * nf] != '-') {
			rc = GERR_DONE;
			goto out;
		}
		rc = othello_split_combine(sp, lo, hi, sc, mv);
		if (rc)
			goto out; /* GERR_AGAIN: wait for a result out */
		next = nf; /* the closing position */
		wa[nf] = -66;
		wb[nf] = 66;
	}
	char w[5];
	snprintf(w, sizeof(w), "%02x%02x", (wa[next] + 66) / 2,
		 (wb[next] + 66) / 2);
	memcpy(win + 4 * next, w, 4);
	*ret_k = next;
	*ret_last = last;
	*ret_a = wa[next];
	*ret_b = wb[next];
	*ret_windows = win;
	win = NULL;
out:
	othello_split_free(sp);
	free(lo);
	free(hi);
	free(wa);
	free(wb);
	free(want);
	free(win);
	return rc;
}

/* The next lease after the cursor: leases tile [0, n) in order, so the
 * answer and the parts are not needed. */
int othello_wl_carve(void *ctx, const json_t *params, const json_t *cursor,
		     const json_t *answer, const struct wl_parts *parts,
		     uint64_t want_units, json_t **ret_spec,
		     uint64_t *ret_units, json_t **ret_cursor, int *ret_last)
{
	char err[WL_ERRLEN];
	struct othello_job j;
	uint64_t next = 0, size;
	json_t *spec, *cur;

	(void)ctx;
	(void)answer;
	(void)parts;
	if (othello_job_get(params, &j, err, sizeof(err)))
		return GERR_INVAL;
	if (j.split) {
		char *win = NULL;
		int a = -66, b = 66;
		int rc = otw_split_carve(&j, cursor, answer, &next, &a, &b,
					 &win, ret_last);
		if (rc)
			return rc;
		spec = json_pack("{s:I, s:i}", "begin", (json_int_t)next,
				 "count", 1);
		cur = json_pack("{s:s}", "windows", win);
		free(win);
		if (spec && a > -66 &&
		    json_object_set_new(spec, "alpha", json_integer(a)))
			json_decref(spec), spec = NULL;
		if (spec && b < 66 &&
		    json_object_set_new(spec, "beta", json_integer(b)))
			json_decref(spec), spec = NULL;
		if (!spec || !cur) {
			json_decref(spec);
			json_decref(cur);
			return GERR_NOMEM;
		}
		*ret_spec = spec;
		*ret_units = 1;
		*ret_cursor = cur;
		return 0;
	}
	if (cursor && wl_json_u64(cursor, "next", 1, 0, &next, err,
				  sizeof(err)))
		return GERR_INVAL;
	if (next >= j.n)
		return GERR_DONE;
	size = want_units ? want_units : otw_default_units(j.empties);
	if (size > OTHELLO_CUDA_MAX_BATCH)
		size = OTHELLO_CUDA_MAX_BATCH;
	if (j.file) /* whole blocks, so verify can check their digests */
		size = (size + j.block - 1) / j.block * j.block;
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
