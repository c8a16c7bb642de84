/* othello_plan.c - an Othello job's plan: the params gpuctl's arguments
 * give, the input file of a --file job (checked and canonicalised, with a
 * digest per block for verify), and the leases carved from a cursor. The
 * shapes of params, cursor and spec are in othello_wl.h.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "othello.h"
#include "othello_cuda.h"
#include "othello_wl.h"

/* Microseconds of one core (this repository's CPU solver, 2-core x86
 * machine, one thread) a position of E empties takes, the mean over random
 * positions (gpurun othello --random N --empties E --device cpu:1; figures
 * and command in bench/othello.md, "Cost by empties"). Between the
 * measured even depths the cost is interpolated geometrically; below 8
 * empties it halves an empty, above 24 it grows 2.5x an empty. */
static const double otw_cost_table[][2] = {
	{ 8, 24.3 }, { 10, 110 }, { 12, 567 }, { 14, 2920 }, { 16, 17500 },
	{ 18, 99800 }, { 20, 565000 }, { 22, 3970000 }, { 24, 23700000 },
};
#define OTW_COST_N (sizeof(otw_cost_table) / sizeof(otw_cost_table[0]))

double othello_cost_us(int e)
{
	const double (*t)[2] = otw_cost_table;

	if (e < 0)
		e = 0;
	if (e > 60)
		e = 60;
	if (e <= t[0][0])
		return t[0][1] / (double)(1u << (int)(t[0][0] - e));
	if (e >= t[OTW_COST_N - 1][0])
		return t[OTW_COST_N - 1][1] *
		       pow(2.5, e - t[OTW_COST_N - 1][0]);
	for (size_t k = 1; k < OTW_COST_N; k++)
		if (e <= t[k][0]) {
			double f = (e - t[k - 1][0]) / (t[k][0] - t[k - 1][0]);
			return t[k - 1][1] * pow(t[k][1] / t[k - 1][1], f);
		}
	return t[OTW_COST_N - 1][1];
}

unsigned othello_cost_code(double us)
{
	double c = ceil(4 * log2(1 + us));
	return c < 0 ? 0 : c > 255 ? 255 : (unsigned)c;
}

double othello_cost_of_code(unsigned code)
{
	return exp2(code / 4.0) - 1;
}

uint64_t othello_block_for(uint64_t n)
{
	uint64_t b = 1;

	while (b < OTHELLO_BLOCK && b * 1024 < n)
		b *= 2;
	return b;
}

static int otw_empties(const struct othello_pos *pos)
{
	uint64_t p, o;

	othello_pos_pov(pos, &p, &o);
	return oth_popcount(~(p | o));
}

/* Block k's cost from params' costs (-1: none kept). */
static int otw_hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
	       c - 'a' + 10 : -1;
}

static double otw_block_cost(const struct othello_job *j, uint64_t k)
{
	int hi, lo;

	if (!j->costs)
		return -1;
	hi = otw_hex(j->costs[2 * k]);
	lo = otw_hex(j->costs[2 * k + 1]);
	return hi < 0 || lo < 0 ? -1 : othello_cost_of_code((unsigned)(hi * 16 + lo));
}

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
		j->costs = json_string_value(json_object_get(params, "costs"));
		if (j->block < 1 || j->block > OTHELLO_BLOCK ||
		    (j->split && !json_is_object(j->split))) {
			gerr_printf(err, errlen, "othello: params' block or split "
				    "is malformed");
			return GERR_INVAL;
		}
		if (j->n > 0 && j->costs && strlen(j->costs) !=
		    2 * ((j->n + j->block - 1) / j->block)) {
			gerr_printf(err, errlen, "othello: params' costs do not "
				    "match %" PRIu64 " positions", j->n);
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

/* --split: "auto" (OTHELLO_SPLIT_AUTO, the default: split a job of few
 * deep positions, at most OTHELLO_SPLIT_MAX_ROOTS with one of
 * OTHELLO_SPLIT_AUTO_EMPTIES or more and OTHELLO_SPLIT_AUTO_US of work in
 * all, whose few leases would leave most of a fleet idle for minutes), 0
 * (never: a split job costs several times the nodes of one search, see
 * othello_split.c) or the plies 1..OTHELLO_SPLIT_MAX_DEPTH. */
#define OTHELLO_SPLIT_AUTO 255
static int otw_split_request(const json_t *args, uint64_t *ret, char *err,
			     size_t errlen)
{
	const json_t *v = json_object_get(args, "split");
	const char *sv = json_string_value(v);

	*ret = !v || (sv && strcmp(sv, "auto") == 0) ? OTHELLO_SPLIT_AUTO : 0;
	if (*ret)
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
	char *dig = NULL, *costs = NULL;
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
		double cost = 0;
		if (n <= OTHELLO_SPLIT_MAX_ROOTS)
			for (uint64_t i = 0; i < n; i++)
				cost += othello_cost_us(otw_empties(&pos[i]));
		if (maxe >= OTHELLO_SPLIT_AUTO_EMPTIES &&
		    cost >= OTHELLO_SPLIT_AUTO_US)
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
	block = split ? 1 : othello_block_for(n);
	size_t nb = (n + block - 1) / block;
	dig = malloc(nb * 16 + 1);
	costs = malloc(nb * 2 + 1);
	if (!dig || !costs) {
		rc = GERR_NOMEM;
		goto out;
	}
	for (size_t b = 0; b < nb; b++) {
		uint64_t lo = b * block;
		uint64_t k = n - lo < block ? n - lo : block;
		double c = 0;
		snprintf(dig + 16 * b, 17, "%016" PRIx64,
			 othello_digest(pos + lo, k));
		for (uint64_t i = lo; i < lo + k; i++)
			c += othello_cost_us(otw_empties(&pos[i]));
		snprintf(costs + 2 * b, 3, "%02x", othello_cost_code(c));
	}
	np = json_deep_copy(params);
	if (!np || (json_object_del(np, "split_request"), 0) ||
	    json_object_set_new(np, "positions", json_integer((json_int_t)n)) ||
	    json_object_set_new(np, "max_empties", json_integer(maxe)) ||
	    json_object_set_new(np, "with_expected",
				json_integer((json_int_t)with_exp)) ||
	    json_object_set_new(np, "digests", json_string(dig)) ||
	    (block != OTHELLO_BLOCK &&
	     json_object_set_new(np, "block", json_integer((json_int_t)block))) ||
	    (!split && json_object_set_new(np, "costs", json_string(costs))) ||
	    (split && json_object_set(np, "split", split))) {
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
	free(costs);
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

/* gpud's probe of a file job (no rate known yet): 10 s of one core, so
 * a small file of deep positions is not all leased to the first worker. */
#define OTW_PROBE_US 10e6

/* A file job's lease from position next (a block's first) priced by
 * cost: whole blocks while their cost stays within want positions at the
 * job's mean cost (for gpud's probe, want is the default lease of the
 * deepest position, at its cost, at most OTW_PROBE_US), at least one
 * block, at most 4x want positions. A block that would take more than
 * half the budget starts a lease of its own, so a deep position (a block
 * of one in a file of up to 1024) goes alone. Costs are read from params
 * (two hex digits a block, on the database thread: 11,719 blocks at most,
 * tens of microseconds); a malformed one counts as nothing. */
static uint64_t otw_priced_size(const struct othello_job *j, uint64_t next,
				uint64_t want, int by_mean)
{
	uint64_t nb = (j->n + j->block - 1) / j->block, b0 = next / j->block;
	double total = 0, budget, acc = 0;
	uint64_t b;

	if (by_mean) {
		for (b = 0; b < nb; b++) {
			double c = otw_block_cost(j, b);
			total += c > 0 ? c : 0;
		}
		budget = (double)want * total / (double)j->n;
	} else {
		budget = (double)want * othello_cost_us(j->empties);
		if (budget > OTW_PROBE_US)
			budget = OTW_PROBE_US;
	}
	for (b = b0; b < nb; b++) {
		double c = otw_block_cost(j, b);
		c = c > 0 ? c : 0;
		if (b > b0 && (acc + c > budget || c > budget / 2 ||
			       (b - b0) * j->block >= want * 4))
			break;
		acc += c;
	}
	return (b - b0) * j->block;
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
	if (j.file && j.costs)
		size = otw_priced_size(&j, next, size, want_units != 0);
	else if (j.file) /* whole blocks, so verify can check their digests */
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

int othello_wl_split(void *ctx, const json_t *params, const json_t *spec,
		     uint64_t at, json_t **ret_head, uint64_t *ret_head_units,
		     json_t **ret_tail, uint64_t *ret_tail_units)
{
	char err[WL_ERRLEN];
	struct othello_job j;
	uint64_t begin, count, cut = at;
	json_t *head, *tail;

	(void)ctx;
	if (othello_spec_get(params, spec, &j, &begin, &count, err,
			     sizeof(err)))
		return GERR_INVAL;
	if (j.split)
		return GERR_AGAIN; /* one position a lease, windowed */
	if (j.file) /* up to the next block: digests are by block */
		cut = (at + j.block - 1) / j.block * j.block;
	if (at == 0 || cut >= count)
		return GERR_AGAIN;
	head = json_pack("{s:I, s:I}", "begin", (json_int_t)begin, "count",
			 (json_int_t)cut);
	tail = json_pack("{s:I, s:I}", "begin", (json_int_t)(begin + cut),
			 "count", (json_int_t)(count - cut));
	if (!head || !tail) {
		json_decref(head);
		json_decref(tail);
		return GERR_NOMEM;
	}
	*ret_head = head;
	*ret_head_units = cut;
	*ret_tail = tail;
	*ret_tail_units = count - cut;
	return 0;
}
