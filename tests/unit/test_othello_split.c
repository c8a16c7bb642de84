/* Unit tests of Othello subtree leases (othello_split.c and the split path
 * of the workload's hooks): random roots of 10 and 14 empties split 1, 2
 * (and 3) plies deep combine to the direct solve's score and best move,
 * from every frontier score or from windowed leases as YBWC asks them
 * (each answer the exact one clamped to its window) with 1 or 4 leases
 * out, finishing in random orders (and, printed, the nodes and the
 * simulated wall time against the direct solve); shallow
 * roots whose lines pass and end within the split combine to minimax's;
 * the frontier is distinct and hardest first; and a whole split job
 * (parse, carve, run, verify, merge in two orders, finish, text, export)
 * gives the roots' exact scores, with the automatic split's choice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gerr.h"
#include "othello/othello.h"
#include "othello/othello_wl.h"
#include "parts_list.h"
#include "unit_main.h"
#include "workload.h"

extern const struct workload othello_workload;

static struct othello_pos gen(uint64_t seed, uint64_t i, int empties)
{
	uint64_t P, O;
	int black;

	oth_generate(seed, i, empties, &P, &O, &black);
	return (struct othello_pos){black ? P : O, black ? O : P,
				    (uint8_t)black, OTHELLO_NO_SCORE};
}

static uint64_t rs = 5;
static uint64_t rnd(void)
{
	rs += MIX_GOLDEN;
	return mix64(rs);
}

/* What a split's leases cost: leases, nodes, and the simulated wall time
 * (nodes of the longest chain of leases, each worker searching one node a
 * tick). */
struct cost {
	size_t front, leases, distinct;
	uint64_t nodes, span;
};

/* The roots combined from frontier bounds solved as gpud would lease them:
 * `workers` leases out at once, each the window othello_split_need asks,
 * a new one taken only for a position with none out; leases finish in a
 * random order, or in the order their nodes take when `timed`. With no
 * workers every position is solved exactly up front. Each lease's answer
 * is checked against the exact solve clamped to its window. The build's
 * error (GERR_TOOBIG past the frontier's cap). */
static int combine(const struct othello_pos *roots, size_t n, int depth,
		   int workers, int timed, int8_t *sc, uint8_t *mv,
		   struct cost *ret)
{
	struct othello_split *s;
	const struct othello_pos *fr;
	size_t nf, out = 0;
	struct cost c = {0};
	int rc = othello_split_build(roots, n, depth, &s);

	if (rc)
		return rc;
	nf = othello_split_frontier(s, &fr);
	int8_t *all = malloc(nf + 1), *lo = malloc(nf + 1), *hi = malloc(nf + 1);
	int8_t *wa = malloc(nf + 1), *wb = malloc(nf + 1), *fsc = malloc(nf + 1);
	int8_t *fa = malloc(nf + 1), *fb = malloc(nf + 1);
	uint8_t *fm = malloc(nf + 1), *want = malloc(nf + 1);
	uint8_t *busy = calloc(nf + 1, 1), *seen = calloc(nf + 1, 1);
	uint64_t *end = malloc((nf + 1) * 8), now = 0;
	size_t *fly = malloc((nf + 1) * sizeof(*fly));
	for (size_t k = 0; k < nf; k++) {
		uint64_t P, O, nodes;
		othello_pos_pov(&fr[k], &P, &O);
		assert_int_equal(othello_solve_batch(&P, &O, 1, 1, &all[k],
						     &fm[k], &nodes, NULL,
						     NULL), 0);
		lo[k] = workers ? -64 : all[k];
		hi[k] = workers ? 64 : all[k];
		if (!workers)
			c.nodes += nodes;
	}
	for (;;) {
		assert_int_equal(othello_split_need(s, lo, hi, want, wa, wb), 0);
		for (size_t k = 0; k < nf && out < (size_t)workers; k++) {
			if (busy[k] || !want[k])
				continue;
			uint64_t P, O, nodes;
			int a = wa[k] < -64 ? -65 : wa[k];
			int b = wb[k] > 64 ? 65 : wb[k];
			int8_t es = all[k];
			uint8_t em = fm[k];
			assert_true(a < b);
			othello_pos_pov(&fr[k], &P, &O);
			assert_int_equal(othello_solve_batch_window(&P, &O, 1, a,
					 b, 1, &fsc[k], &fm[nf], &nodes, NULL,
					 NULL), 0);
			othello_window_clamp(a, b, &es, &em);
			assert_int_equal(fsc[k], es);
			assert_int_equal(fm[nf], em);
			fa[k] = (int8_t)a;
			fb[k] = (int8_t)b;
			busy[k] = 1;
			c.distinct += !seen[k];
			seen[k] = 1;
			c.nodes += nodes;
			end[k] = now + nodes;
			fly[out++] = k;
		}
		if (out == 0)
			break;
		size_t t = (size_t)(rnd() % out);
		for (size_t u = 0; timed && u < out; u++)
			if (end[fly[u]] < end[fly[t]])
				t = u;
		size_t k = fly[t];
		fly[t] = fly[--out];
		now = end[k] > now ? end[k] : now;
		busy[k] = 0;
		assert_int_equal(othello_split_window(fa[k], fb[k], fsc[k],
						      &lo[k], &hi[k]), 0);
		assert_true(lo[k] <= all[k] && all[k] <= hi[k]);
		c.leases++;
	}
	/* Nothing searched now: the roots are settled. */
	assert_int_equal(othello_split_combine(s, lo, hi, sc, mv), 0);
	if (workers && nf) { /* the same as from every score */
		int8_t sc2[64];
		uint8_t mv2[64];
		assert_int_equal(othello_split_combine(s, all, all, sc2, mv2),
				 0);
		assert_memory_equal(sc, sc2, n);
		assert_memory_equal(mv, mv2, n);
	}
	c.front = nf;
	c.span = workers ? now : c.nodes;
	if (!workers)
		c.leases = c.distinct = nf;
	*ret = c;
	othello_split_free(s);
	free(all);
	free(lo);
	free(hi);
	free(wa);
	free(wb);
	free(fsc);
	free(fa);
	free(fb);
	free(fm);
	free(want);
	free(busy);
	free(seen);
	free(end);
	free(fly);
	return 0;
}

static void test_combine_random(void **state)
{
	enum { N = 12 };
	static const int workers[] = {0, 1, 4};
	struct othello_pos roots[N];
	uint64_t P[N], O[N], dn[N];
	int8_t ds[N], sc[N];
	uint8_t dm[N], mv[N];

	(void)state;
	for (int e = 10; e <= 14; e += 4) {
		for (size_t i = 0; i < N; i++) {
			roots[i] = gen(11, (uint64_t)i, e);
			othello_pos_pov(&roots[i], &P[i], &O[i]);
			assert_int_equal(othello_solve_batch(&P[i], &O[i], 1, 1,
							     &ds[i], &dm[i],
							     &dn[i], NULL,
							     NULL), 0);
		}
		for (int d = 1; d <= (e < 14 ? 3 : 2); d++)
		for (int w = 0; w < 3; w++) {
			size_t together = d < 3 ? N : 1, whole = 0;
			struct cost c, sum = {0};
			uint64_t dsum = 0;
			/* Roots in one tree, and each alone. */
			assert_int_equal(combine(roots, together, d, workers[w],
						 0, sc, mv, &c), 0);
			assert_true(c.front > together);
			for (size_t i = 0; i < together; i++) {
				assert_int_equal(sc[i], ds[i]);
				assert_int_equal(mv[i], dm[i]);
			}
			for (size_t i = 0; i < (d < 3 ? N : 4); i++) {
				if (combine(&roots[i], 1, d, workers[w], w == 2,
					    &sc[i], &mv[i], &c) == GERR_TOOBIG)
					continue; /* over 1024 positions */
				assert_int_equal(sc[i], ds[i]);
				assert_int_equal(mv[i], dm[i]);
				sum.nodes += c.nodes;
				sum.span += c.span;
				sum.leases += c.leases;
				sum.distinct += c.distinct;
				sum.front += c.front;
				dsum += dn[i];
				whole++;
			}
			assert_true(whole >= (d < 3 ? N / 2 : 2));
			if (e == 14)
				printf("split: %zu roots of 14 empties, %d plies, "
				       "%d leases out: %zu leases of %zu of %zu "
				       "frontier positions, %.2fx the direct "
				       "solve's nodes, span %.2fx\n", whole, d,
				       workers[w], sum.leases, sum.distinct,
				       sum.front, (double)sum.nodes /
				       (double)dsum, (double)sum.span /
				       (double)dsum);
		}
	}
}

/* Few empties: lines pass and games end inside the split (leaves scored
 * by gpud, pass edges, roots that must pass). */
static void test_combine_passes(void **state)
{
	int passes = 0, finished = 0;

	(void)state;
	for (uint64_t i = 0; i < 400; i++) {
		struct othello_pos r = gen(5, i, 3 + (int)(i % 5));
		uint64_t P, O;
		int dm, ds;
		othello_pos_pov(&r, &P, &O);
		if (i % 3 == 0) { /* the other side to move: often a pass */
			uint64_t t = P;
			P = O;
			O = t;
			r.black_to_move = !r.black_to_move;
		}
		ds = othello_minimax(P, O, &dm);
		passes += dm == OTHELLO_MOVE_PASS;
		finished += dm == OTHELLO_MOVE_NONE;
		for (int d = 1; d <= 4; d++) {
			int8_t sc;
			uint8_t mv;
			struct cost c;
			assert_int_equal(combine(&r, 1, d, (int)(i % 3), 0, &sc,
						 &mv, &c), 0);
			assert_int_equal(sc, ds);
			assert_int_equal(mv, dm);
		}
	}
	assert_true(passes > 0);
	/* A finished game: a leaf, no frontier, no move. */
	struct othello_pos end = {~1ull, 0, 1, OTHELLO_NO_SCORE};
	int8_t sc;
	uint8_t mv;
	struct cost c;
	assert_int_equal(combine(&end, 1, 2, 1, 0, &sc, &mv, &c), 0);
	assert_int_equal(c.front, 0);
	assert_int_equal(sc, 64);
	assert_int_equal(mv, OTHELLO_MOVE_NONE);
	(void)finished;
}

/* Distinct positions (transpositions solved once), hardest first. */
static void test_frontier(void **state)
{
	struct othello_pos start = {0x0000000810000000ull,
				    0x0000001008000000ull, 1,
				    OTHELLO_NO_SCORE};
	struct othello_split *s;
	const struct othello_pos *fr;
	uint64_t P, O;

	(void)state;
	othello_pos_pov(&start, &P, &O);
	assert_int_equal(othello_split_build(&start, 1, 4, &s), 0);
	size_t nf = othello_split_frontier(s, &fr);
	/* 244 lines of 4 plies from the start reach fewer positions. */
	assert_int_equal(othello_perft(P, O, 4), 244);
	assert_true(nf > 100 && nf < 244);
	for (size_t k = 0; k < nf; k++) {
		int e = 64 - oth_popcount(fr[k].black | fr[k].white);
		assert_int_equal(e, 56);
		assert_int_equal(fr[k].black_to_move, 1);
		for (size_t l = 0; l < k; l++)
			assert_false(fr[l].black == fr[k].black &&
				     fr[l].white == fr[k].white);
		if (k) { /* hardest first: empties, then moves */
			uint64_t p0, o0, p1, o1;
			int e0 = 64 - oth_popcount(fr[k - 1].black |
						   fr[k - 1].white);
			othello_pos_pov(&fr[k - 1], &p0, &o0);
			othello_pos_pov(&fr[k], &p1, &o1);
			assert_true(e0 > e ||
				    (e0 == e && oth_popcount(oth_moves(p0, o0)) >=
						oth_popcount(oth_moves(p1, o1))));
		}
	}
	othello_split_free(s);
	/* The caps: 7 plies, 65 roots. */
	assert_int_equal(othello_split_build(&start, 1, 7, &s), GERR_INVAL);
	assert_int_equal(othello_split_build(&start, 65, 2, &s), GERR_INVAL);
	assert_int_equal(othello_split_build(&start, 1, 6, &s), GERR_TOOBIG);
}

/* ---- a split job through the workload interface -------------------- */

struct mem {
	void *input;
	size_t len;
};

static int mem_fetch(void *o, const char *hash, void **ret, size_t *ret_len)
{
	struct mem *m = o;

	(void)hash;
	*ret = malloc(m->len);
	memcpy(*ret, m->input, m->len);
	*ret_len = m->len;
	return 0;
}

/* Params of a file job of text with args' --split. */
static json_t *file_params(const char *split, const char *text,
			   struct mem *m, uint64_t *ret_total, int want_rc)
{
	const struct workload *W = &othello_workload;
	json_t *args = split ? json_pack("{s:s, s:s}", "file", "f.obf",
					 "split", split)
			     : json_pack("{s:s}", "file", "f.obf");
	json_t *params = NULL, *np = NULL;
	char err[WL_ERRLEN] = "";
	int rc;

	rc = W->parse_params(workload_ctx(W), args, &params, ret_total, err,
			     sizeof(err));
	if (rc == 0)
		rc = W->parse_input(workload_ctx(W), params, text, strlen(text),
				    &np, &m->input, &m->len, ret_total, err,
				    sizeof(err));
	if (rc)
		printf("refused: %s\n", err);
	assert_int_equal(rc, want_rc);
	json_decref(args);
	json_decref(params);
	if (np)
		json_object_set_new(np, "input", json_string("0123"));
	return np;
}

static void test_job_split(void **state)
{
	const struct workload *W = &othello_workload;
	enum { R = 3 };
	struct othello_pos roots[R];
	uint64_t P[R], O[R], nodes, total, units_unused;
	int8_t ds[R];
	uint8_t dm[R];
	char text[R * 90 + 1], err[WL_ERRLEN] = "";
	size_t tl = 0;
	struct mem m;

	(void)state;
	for (int i = 0; i < R; i++) {
		roots[i] = gen(21, (uint64_t)i, 12);
		othello_pos_pov(&roots[i], &P[i], &O[i]);
	}
	assert_int_equal(othello_solve_batch(P, O, R, 1, ds, dm, &nodes, NULL,
					     NULL), 0);
	for (int i = 0; i < R; i++) { /* root 1's expected score is wrong */
		char b[68];
		othello_format_board(&roots[i], b);
		tl += (size_t)sprintf(text + tl, "%.66s; A1:%+d;\n", b,
				      i == 1 ? (ds[i] == 64 ? 62 : ds[i] + 2)
					     : ds[i]);
	}
	json_t *params = file_params("2", text, &m, &total, 0);
	const json_t *split = json_object_get(params, "split");
	assert_non_null(split);
	assert_int_equal(json_integer_value(json_object_get(split, "depth")), 2);
	assert_int_equal(json_array_size(json_object_get(split, "roots")), R);
	assert_int_equal(json_integer_value(json_object_get(params,
							    "positions")),
			 total);
	assert_true(total > 3 * R);
	assert_int_equal(json_integer_value(json_object_get(params,
							    "max_empties")),
			 10); /* the frontier's, 2 plies down */

	/* One frontier position a lease (some windowed, some positions
	 * leased again with another window), two out at once, each merged
	 * when it is done; then every result merged again backwards into a
	 * fresh answer: the same answer. */
	json_t *cursor = NULL, **spec = calloc(4 * total, sizeof(*spec));
	void **res = calloc(4 * total, sizeof(*res));
	size_t *len = calloc(4 * total, sizeof(*len));
	uint8_t *seen = calloc(total, 1);
	uint64_t distinct = 0, windowed = 0;
	struct wl_device dev = {WL_DEVICE_CPU, 0, 1, NULL};
	struct wl_run_io io = {&m, NULL, NULL, NULL, NULL, mem_fetch};
	json_t *fwd = NULL, *rev = NULL, *mg;
	struct parts_list pl;
	uint64_t k = 0, merged = 0, again = 0;
	int last = 0;
	parts_list_init(&pl);
	while (!last || merged < k) {
		json_t *next;
		uint64_t units;
		int rc = last || k - merged == 2 ? GERR_AGAIN :
			W->carve(workload_ctx(W), params, cursor, fwd, &pl.pub,
				 4096, &spec[k], &units, &next, &last);
		if (rc == 0) {
			assert_int_equal(units, 1);
			json_decref(cursor);
			cursor = next;
			assert_int_equal(W->run(workload_ctx(W), params, spec[k],
						NULL, 0, &dev, &io, &res[k],
						&len[k], err, sizeof(err)), 0);
			assert_int_equal(W->verify(workload_ctx(W), params,
						   spec[k], res[k], len[k], 7,
						   err, sizeof(err)), 0);
			uint64_t b = (uint64_t)json_integer_value(
				json_object_get(spec[k], "begin"));
			distinct += !seen[b];
			seen[b] = 1;
			windowed += json_object_get(spec[k], "alpha") ||
				    json_object_get(spec[k], "beta");
			k++;
			assert_true(k <= 4 * total);
			continue;
		}
		assert_int_equal(rc, GERR_AGAIN);
		again += !last && k - merged < 2;
		assert_true(merged < k); /* waits only for a lease out */
		assert_int_equal(W->merge(workload_ctx(W), params, fwd,
					  spec[merged], res[merged],
					  len[merged], "x", &mg, NULL), 0);
		assert_int_equal(parts_list_add(&pl, spec[merged], 1, "x", NULL),
				 0);
		json_decref(fwd);
		fwd = mg;
		merged++;
	}
	printf("split job: %llu leases (%llu windowed) of %llu of %llu "
	       "positions, %llu waits\n", (unsigned long long)k,
	       (unsigned long long)windowed, (unsigned long long)distinct,
	       (unsigned long long)total, (unsigned long long)again);
	assert_true(distinct < total); /* some were ruled out */
	assert_true(windowed > 0);
	free(seen);
	assert_int_equal(W->carve(workload_ctx(W), params, cursor, fwd,
				  &pl.pub, 1, &mg, &units_unused, &mg, &last),
			 GERR_DONE);
	json_decref(cursor);
	for (uint64_t i = k; i-- > 0;) {
		assert_int_equal(W->merge(workload_ctx(W), params, rev, spec[i],
					  res[i], len[i], "x", &mg, NULL), 0);
		json_decref(rev);
		rev = mg;
	}
	/* A result that contradicts those merged is refused: the closing
	 * position (the last lease, a full board of X: +64) said +62. */
	((uint8_t *)res[k - 1])[OTHELLO_RES_HDR] = 63;
	assert_int_equal(W->merge(workload_ctx(W), params, fwd, spec[k - 1],
				  res[k - 1], len[k - 1], "x", &mg, NULL),
			 GERR_VERIFY);
	json_object_del(fwd, "usec");
	json_object_del(rev, "usec");
	assert_true(json_equal(fwd, rev));
	json_t *rl = json_object_get(fwd, "roots");
	assert_int_equal(json_array_size(rl), R);
	for (int i = 0; i < R; i++) {
		json_t *e = json_array_get(rl, (size_t)i);
		assert_int_equal(json_integer_value(json_array_get(e, 0)), ds[i]);
		assert_int_equal(json_integer_value(json_array_get(e, 1)), dm[i]);
	}
	assert_int_equal(json_integer_value(json_object_get(fwd, "mismatches")),
			 1);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(
		json_object_get(fwd, "mismatch_list"), 0), 0)), 1);
	json_object_set_new(fwd, "usec", json_integer(1000));
	assert_int_equal(W->finish(workload_ctx(W), params, fwd, &pl.pub, err,
				   sizeof(err)), 0);
	char *t = W->render_text(workload_ctx(W), params, fwd, &pl.pub);
	assert_non_null(strstr(t, "split 2 plies deep"));
	assert_non_null(strstr(t, "root 2: score"));
	free(t);

	/* The export: the roots, in the file's order, with their scores. */
	struct wl_blob_reader rd = {&m, mem_fetch};
	json_t *args = json_object();
	void *out;
	size_t olen;
	assert_int_equal(W->export_data(workload_ctx(W), params, fwd, &pl.pub,
					"result", args, &rd, &out, &olen, err,
					sizeof(err)), 0);
	char *o = out, *line = o;
	for (int i = 0; i < R; i++) {
		char b[68], mvs[3], want[90];
		othello_format_board(&roots[i], b);
		othello_format_move(dm[i], mvs);
		snprintf(want, sizeof(want), "%s %s:%+03d;\n", b, mvs, ds[i]);
		assert_memory_equal(line, want, strlen(want));
		line += strlen(want);
	}
	assert_int_equal((size_t)(line - o), olen);
	free(out);
	/* Not finished: no roots to export. */
	json_t *part = json_deep_copy(fwd);
	json_object_del(part, "roots");
	assert_int_equal(W->export_data(workload_ctx(W), params, part, &pl.pub,
					"result", args, &rd, &out, &olen, err,
					sizeof(err)), GERR_STATE);
	assert_non_null(strstr(err, "not finished"));
	assert_int_equal(W->finish(workload_ctx(W), params, part, &pl.pub, err,
				   sizeof(err)), GERR_VERIFY);
	json_decref(part);
	json_decref(args);
	parts_list_clear(&pl);
	for (uint64_t i = 0; i < k; i++) {
		json_decref(spec[i]);
		free(res[i]);
	}
	free(spec);
	free(res);
	free(len);
	json_decref(fwd);
	json_decref(rev);
	json_decref(params);
	free(m.input);
}

/* --split auto (also the default, no --split): few deep positions are
 * split to a frontier of at least OTHELLO_SPLIT_TARGET; shallow ones are
 * not; --split 0 never splits. */
static void test_auto(void **state)
{
	char text[4 * 90 + 1], b[68];
	size_t tl = 0;
	uint64_t total;
	struct mem m;
	json_t *p;

	(void)state;
	for (int i = 0; i < 2; i++) {
		/* 12 and 25 empties: 59 s of one core, above
		 * OTHELLO_SPLIT_AUTO_US */
		struct othello_pos r = gen(9, (uint64_t)i, i ? 25 : 12);
		othello_format_board(&r, b);
		tl += (size_t)sprintf(text + tl, "%s\n", b);
	}
	p = file_params("auto", text, &m, &total, 0);
	const json_t *split = json_object_get(p, "split");
	assert_non_null(split);
	assert_true(total >= OTHELLO_SPLIT_TARGET &&
		    total <= OTHELLO_SPLIT_MAX_FRONTIER);
	assert_int_equal(json_integer_value(json_object_get(p, "block")), 1);
	assert_int_equal(json_integer_value(json_object_get(split,
							    "root_empties")),
			 25);
	assert_null(json_object_get(p, "split_request"));
	{
		/* a split job's one-position leases are never cut */
		const struct workload *Wl = &othello_workload;
		json_t *sp = json_pack("{s:i, s:i}", "begin", 0, "count", 1),
		       *h = NULL, *t = NULL;
		uint64_t hu, tu;
		assert_int_equal(Wl->split(workload_ctx(Wl), p, sp, 1, &h, &hu,
					   &t, &tu), GERR_AGAIN);
		assert_int_equal(Wl->split(workload_ctx(Wl), p, sp, 0, &h, &hu,
					   &t, &tu), GERR_AGAIN);
		json_decref(sp);
	}
	json_decref(p);
	free(m.input);
	p = file_params("0", text, &m, &total, 0);
	assert_null(json_object_get(p, "split"));
	assert_int_equal(total, 2);
	json_decref(p);
	free(m.input);
	p = file_params(NULL, text, &m, &total, 0);
	assert_non_null(json_object_get(p, "split"));
	assert_true(total >= OTHELLO_SPLIT_TARGET);
	json_decref(p);
	free(m.input);
	/* Deep but little work in all (14 and 20 empties, 0.6 s): not
	 * split. */
	tl = 0;
	for (int i = 0; i < 2; i++) {
		struct othello_pos q = gen(9, (uint64_t)i, i ? 20 : 14);
		othello_format_board(&q, b);
		tl += (size_t)sprintf(text + tl, "%s\n", b);
	}
	p = file_params(NULL, text, &m, &total, 0);
	assert_null(json_object_get(p, "split"));
	assert_int_equal(total, 2);
	json_decref(p);
	free(m.input);
	/* Shallow: not split by auto. */
	tl = 0;
	struct othello_pos r = gen(9, 5, 12);
	othello_format_board(&r, b);
	sprintf(text, "%s\n", b);
	p = file_params("auto", text, &m, &total, 0);
	assert_null(json_object_get(p, "split"));
	json_decref(p);
	free(m.input);
	/* Bad requests. */
	assert_null(file_params("7", text, &m, &total, GERR_INVAL));
	assert_null(file_params("deep", text, &m, &total, GERR_INVAL));
	const struct workload *W = &othello_workload;
	json_t *args = json_pack("{s:s, s:s, s:s}", "random", "5", "empties",
				 "20", "split", "2");
	char err[WL_ERRLEN];
	assert_int_equal(W->parse_params(workload_ctx(W), args, &p, &total, err,
					 sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, "--split goes with --file"));
	json_decref(args);
}

/* gpud does not re-solve a position deeper than it can afford (the lease
 * would be solved twice on one machine): a made-up score of a 24-empty
 * position passes, left to --check full; its position must still be the
 * input's. */
static void test_verify_deep(void **state)
{
	const struct workload *W = &othello_workload;
	struct othello_pos r = gen(4, 0, 24);
	char text[90], err[WL_ERRLEN];
	uint64_t total;
	struct mem m;
	struct othello_res res;
	void *buf;
	size_t blen;

	(void)state;
	othello_format_board(&r, text);
	strcat(text, "\n");
	json_t *params = file_params("0", text, &m, &total, 0);
	json_t *spec = json_pack("{s:i, s:i}", "begin", 0, "count", 1);
	assert_int_equal(othello_res_init(&res, 0, 1, 1), 0);
	res.done = 1;
	res.score[0] = 64;
	res.move[0] = 0;
	res.pos[0] = r;
	assert_int_equal(othello_res_encode(&res, 0, &buf, &blen), 0);
	assert_int_equal(W->verify(workload_ctx(W), params, spec, buf, blen, 1,
				   err, sizeof(err)), 0);
	free(buf);
	res.pos[0].black ^= 1ull << 63 & ~(r.black | r.white) ? 1ull << 63 : 0;
	res.pos[0].black_to_move ^= 1;
	assert_int_equal(othello_res_encode(&res, 0, &buf, &blen), 0);
	assert_int_equal(W->verify(workload_ctx(W), params, spec, buf, blen, 1,
				   err, sizeof(err)), GERR_VERIFY);
	assert_non_null(strstr(err, "not the input's"));
	free(buf);
	othello_res_clear(&res);
	json_decref(spec);
	json_decref(params);
	free(m.input);
}

UNIT_MAIN(cmocka_unit_test(test_combine_random),
	cmocka_unit_test(test_combine_passes),
	cmocka_unit_test(test_frontier),
	cmocka_unit_test(test_job_split),
	cmocka_unit_test(test_auto),
	cmocka_unit_test(test_verify_deep))
