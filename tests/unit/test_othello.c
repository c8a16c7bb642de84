/* Unit tests of the Othello workload: move generation (perft from the start
 * position and flips against a square-by-square walk), the solvers against
 * the minimax reference and each other, the generator, text parsing with
 * bad lines, the binary formats, and a whole job through the workload
 * interface (parse, carve, run, verify, merge, finish, export) for both a
 * --random and a --file job, plus verification refusing altered results,
 * an answer whose size does not grow with the leases merged, and export
 * refusing parts that do not cover the positions once. */
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
#include "othello_walk.h"
#include "parts_list.h"
#include "unit_main.h"
#include "workload.h"

extern const struct workload othello_workload;

#define START_P 0x0000000810000000ull /* black to move */
#define START_O 0x0000001008000000ull

static uint64_t rs = 77;
static uint64_t rnd(void)
{
	rs += MIX_GOLDEN;
	return mix64(rs);
}

static void test_perft(void **state)
{
	static const uint64_t want[8] = {1, 4, 12, 56, 244, 1396, 8200, 55092};

	(void)state;
	for (int d = 0; d <= 7; d++)
		assert_int_equal(othello_perft(START_P, START_O, d), want[d]);
}

static void test_flips_and_moves(void **state)
{
	(void)state;
	for (int t = 0; t < 3000; t++) {
		uint64_t occ = rnd() & rnd() ? rnd() | rnd() : rnd();
		uint64_t P = occ & rnd(), O = occ & ~P;
		uint64_t moves = 0;
		for (int sq = 0; sq < 64; sq++) {
			uint64_t f = flips_walk(P, O, sq);
			if ((P | O) >> sq & 1)
				continue;
			assert_int_equal(oth_flips(P, O, sq), f);
			if (f)
				moves |= 1ull << sq;
		}
		assert_int_equal(oth_moves(P, O), moves);
	}
}

static void test_solvers_vs_minimax(void **state)
{
	struct othello_solver *s;

	(void)state;
	assert_int_equal(othello_solver_new(&s), 0);
	for (int e = 1; e <= 8; e++) {
		for (uint64_t i = 0; i < (e < 7 ? 300u : 60u); i++) {
			uint64_t P, O, n;
			int black, m0, m1, m2;
			oth_generate(5, i, e, &P, &O, &black);
			assert_int_equal(oth_popcount(~(P | O)), e);
			int v0 = othello_minimax(P, O, &m0);
			int v1 = othello_solve_shallow(P, O, &m1, &n);
			int v2 = othello_solver_solve(s, P, O, &m2, NULL);
			assert_int_equal(v0 % 2, 0);
			assert_int_equal(v1, v0);
			assert_int_equal(v2, v0);
			assert_int_equal(m1, m0);
			assert_int_equal(m2, m0);
		}
	}
	/* Passes and finished games. */
	{
		int m;
		/* Full board: no move, the score is the disc difference. */
		uint64_t P = 0xffffffff00000000ull, O = 0x00000000ffffffffull;
		assert_int_equal(othello_minimax(P, O, &m), 0);
		assert_int_equal(m, OTHELLO_MOVE_NONE);
		assert_int_equal(othello_solver_solve(s, P, O, &m, NULL), 0);
		assert_int_equal(m, OTHELLO_MOVE_NONE);
		/* Only P's discs and one empty: nobody can move, the empty
		 * goes to P: 63 - 0 + 1. */
		P = ~1ull;
		O = 0;
		assert_int_equal(othello_minimax(P, O, &m), 64);
		assert_int_equal(othello_solve_shallow(P, O, &m, NULL), 64);
		assert_int_equal(m, OTHELLO_MOVE_NONE);
		/* P must pass: O plays A1 and flips B1. P: C1..; O: B1. */
		P = 0xfffffffffffffffcull & ~(1ull << 9);
		O = 0x2ull | (1ull << 9);
		int v0 = othello_minimax(P, O, &m);
		int v1 = othello_solver_solve(s, P, O, &m, NULL);
		assert_int_equal(v0, v1);
	}
	othello_solver_free(s);
}

static void test_solvers_agree_deeper(void **state)
{
	struct othello_solver *s;
	int8_t sc[64];
	uint8_t mv[64];
	uint64_t P[64], O[64], nodes = 0;

	(void)state;
	assert_int_equal(othello_solver_new(&s), 0);
	for (int i = 0; i < 64; i++) {
		int black, m1, m2, e = 9 + i % 5;
		oth_generate(11, (uint64_t)i, e, &P[i], &O[i], &black);
		int v1 = othello_solve_shallow(P[i], O[i], &m1, NULL);
		int v2 = othello_solver_solve(s, P[i], O[i], &m2, NULL);
		assert_int_equal(v1, v2);
		assert_int_equal(m1, m2);
		sc[i] = (int8_t)v1;
		mv[i] = (uint8_t)m1;
	}
	int8_t bs[64];
	uint8_t bm[64];
	assert_int_equal(othello_solve_batch(P, O, 64, 2, bs, bm, &nodes, NULL,
					     NULL), 0);
	assert_memory_equal(bs, sc, 64);
	assert_memory_equal(bm, mv, 64);
	assert_true(nodes > 64);
	othello_solver_free(s);
}

static void test_generator(void **state)
{
	uint64_t P1, O1, P2, O2;
	int b1, b2;

	(void)state;
	for (int e = 1; e <= 40; e += 3) {
		oth_generate(42, 1000 + (uint64_t)e, e, &P1, &O1, &b1);
		oth_generate(42, 1000 + (uint64_t)e, e, &P2, &O2, &b2);
		assert_int_equal(P1, P2);
		assert_int_equal(O1, O2);
		assert_int_equal(b1, b2);
		assert_int_equal(oth_popcount(~(P1 | O1)), e);
		assert_int_equal(P1 & O1, 0);
		assert_true(oth_moves(P1, O1) || oth_moves(O1, P1));
	}
	oth_generate(43, 0, 10, &P2, &O2, &b2);
	oth_generate(42, 0, 10, &P1, &O1, &b1);
	assert_true(P1 != P2 || O1 != O2);
}

static const char *GOOD =
	"--XXXXX--OOOXX-O-OOOXXOX-OOOXXXX-OOOXXXX--OOXXXXX---OOOX-------- X; G8:+18; H1:+12;\n"
	"% a comment\n"
	"\n"
	"O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X\n";

static void test_parse(void **state)
{
	struct othello_pos p;
	char err[WL_ERRLEN], buf[68];
	void *blob;
	size_t len;
	uint64_t n;
	int maxe;

	(void)state;
	assert_int_equal(othello_input_parse(GOOD, strlen(GOOD), &blob, &len, &n,
					     &maxe, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	struct othello_pos *pos;
	assert_int_equal(othello_input_read(blob, len, 0, 0, &pos, err,
					    sizeof(err)), 0);
	assert_int_equal(pos[0].expected, 18);
	assert_int_equal(pos[0].black_to_move, 1);
	assert_int_equal(pos[1].expected, OTHELLO_NO_SCORE);
	othello_format_board(&pos[0], buf);
	assert_memory_equal(buf, GOOD, 66);
	free(pos);
	free(blob);

	/* base81: 16 characters; '!' is four empties. */
	char b81[17];
	memset(b81, '!', 16);
	b81[16] = 0;
	b81[6] = (char)('!' + 2 + 1 * 3);     /* squares 24, 25: O, X */
	b81[7] = (char)('!' + 1 * 3 + 2 * 9); /* 29: X, 30: O */
	assert_int_equal(othello_parse_line(b81, 16, &p, err, sizeof(err)), 0);
	assert_int_equal(p.black, (1ull << 25) | (1ull << 29));
	assert_int_equal(p.white, (1ull << 24) | (1ull << 30));

	/* Bad lines: refused with their line numbers, bounded. */
	const char *bad =
		"--XXXXX--OOOXX-O-OOOXXOX-OOOXXXX-OOOXXXX--OOXXXXX---OOOX-------- X\n"
		"--XXXXX--OOOXX-O-OOOXXOX-OOOXXXX-OOOXXXX--OOXXXXX---OOOX----- X\n"
		"--XXXXX--OOOXX-O-OOOXXOX-OOOXXXX-OOOXXXX--OOXXXXX---OOOX-------- Z\n"
		"--XXXXX--OOOXX-O-OOOXXOX-OOOXXXX-OOOXXXX--OOXXXXX---OOOX-------- X; A1:+7;\n";
	err[0] = 0;
	assert_int_equal(othello_input_parse(bad, strlen(bad), &blob, &len, &n,
					     &maxe, err, sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, "3 bad lines"));
	assert_non_null(strstr(err, "line 2:"));
	assert_non_null(strstr(err, "line 3:"));
	assert_non_null(strstr(err, "line 4:"));
	assert_null(strstr(err, "line 1:"));

	/* Many bad lines: the first 10 listed, then a count. */
	char *many = malloc(40 * 8 + 1);
	many[0] = 0;
	for (int i = 0; i < 40; i++)
		strcat(many, "garbage\n");
	assert_int_equal(othello_input_parse(many, strlen(many), &blob, &len, &n,
					     &maxe, err, sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, "40 bad lines"));
	assert_non_null(strstr(err, "and 30 more"));
	assert_true(strlen(err) < WL_ERRLEN);
	free(many);
	assert_int_equal(othello_input_parse("\n\n", 2, &blob, &len, &n, &maxe,
					     err, sizeof(err)), GERR_INVAL);
}

/* A result of the 3 positions from 5, all solved, with their boards. */
static void res3(struct othello_res *r)
{
	assert_int_equal(othello_res_init(r, 5, 3, 1), 0);
	r->done = 3;
	for (int i = 0; i < 3; i++) {
		r->score[i] = (int8_t)(2 * i - 2);
		r->move[i] = (uint8_t)(i * 30);
		r->pos[i].black = 1ull << i;
		r->pos[i].white = 1ull << (10 + i);
		r->pos[i].expected = OTHELLO_NO_SCORE;
	}
}

static void test_result_format(void **state)
{
	struct othello_res r, d;
	void *b;
	size_t len;
	char err[WL_ERRLEN];

	(void)state;
	res3(&r);
	assert_int_equal(othello_res_encode(&r, 0, &b, &len), 0);
	assert_int_equal(othello_res_decode(b, len, 0, &d, err, sizeof(err)), 0);
	assert_int_equal(d.begin, 5);
	assert_memory_equal(d.score, r.score, 3);
	assert_memory_equal(d.move, r.move, 3);
	othello_res_clear(&d);
	assert_int_equal(othello_res_decode(b, len - 1, 0, &d, err, sizeof(err)),
			 GERR_CORRUPT);
	assert_int_equal(othello_res_decode(b, len, 1, &d, err, sizeof(err)),
			 GERR_CORRUPT); /* a result is no checkpoint */
	/* The histogram reader checks what decode checks, copies nothing. */
	uint64_t hist[65];
	assert_int_equal(othello_res_hist(b, len, &d, hist, err, sizeof(err)), 0);
	assert_int_equal(d.begin, 5);
	assert_int_equal(d.count, 3);
	assert_int_equal(d.with_pos, 1);
	assert_null(d.score);
	for (int k = 0; k < 65; k++)
		assert_int_equal(hist[k], k == 31 || k == 32 || k == 33);
	for (int i = 0; i < 3; i++) {
		int sc, mv;
		othello_res_at(b, (uint64_t)i, &sc, &mv);
		assert_int_equal(sc, r.score[i]);
		assert_int_equal(mv, r.move[i]);
	}
	assert_int_equal(othello_res_hist(b, len - 1, &d, hist, err,
					  sizeof(err)), GERR_CORRUPT);
	((uint8_t *)b)[OTHELLO_RES_HDR + 3] = OTHELLO_MOVE_NONE + 1;
	assert_int_equal(othello_res_hist(b, len, &d, hist, err, sizeof(err)),
			 GERR_CORRUPT);
	assert_int_equal(othello_res_decode(b, len, 0, &d, err, sizeof(err)),
			 GERR_CORRUPT);
	((uint8_t *)b)[OTHELLO_RES_HDR + 3] = 30;
	((uint8_t *)b)[OTHELLO_RES_HDR] = 99; /* score byte out of range */
	assert_int_equal(othello_res_decode(b, len, 0, &d, err, sizeof(err)),
			 GERR_CORRUPT);
	assert_int_equal(othello_res_hist(b, len, &d, hist, err, sizeof(err)),
			 GERR_CORRUPT);
	free(b);
	othello_res_clear(&r);
}

/* Replication compares results by their scores (and positions): effort,
 * time and the choice among equally good moves may differ. */
static void test_results_agree(void **state)
{
	struct othello_res r;
	const struct workload *W = &othello_workload;
	void *a, *b, *c;
	size_t alen, blen, clen;

	(void)state;
	res3(&r);
	r.nodes = 10;
	r.usec = 20;
	assert_int_equal(othello_res_encode(&r, 0, &a, &alen), 0);
	r.nodes = 99;
	r.usec = 5;
	r.move[1] = 31;
	assert_int_equal(othello_res_encode(&r, 0, &b, &blen), 0);
	assert_int_equal(W->results_agree(workload_ctx(W), NULL, NULL, a, alen, b,
					  blen), 1);
	r.score[2] = 4;
	assert_int_equal(othello_res_encode(&r, 0, &c, &clen), 0);
	assert_int_equal(W->results_agree(workload_ctx(W), NULL, NULL, a, alen, c,
					  clen), 0);
	assert_int_equal(W->results_agree(workload_ctx(W), NULL, NULL, a, alen, a,
					  alen - 1), 0);
	free(a);
	free(b);
	free(c);
	othello_res_clear(&r);
}

/* Verification solves its sample on several threads: a lease no larger
 * than the sample is checked whole, and one wrong move anywhere in it is
 * found and named, whichever thread solved it. */
static void test_verify_sample(void **state)
{
	const struct workload *W = &othello_workload;
	json_t *args = json_pack("{s:s, s:s, s:s}", "random", "50", "empties",
				 "9", "seed", "4"), *params, *spec, *next;
	struct wl_device dev = {WL_DEVICE_CPU, 0, 2, NULL};
	uint64_t total, units;
	char err[WL_ERRLEN] = "", want[64];
	void *res;
	size_t len;
	int last = 0;

	(void)state;
	assert_int_equal(W->parse_params(workload_ctx(W), args, &params, &total, err,
					 sizeof(err)), 0);
	assert_int_equal(W->carve(workload_ctx(W), params, NULL, NULL, NULL, 0,
				  &spec, &units, &next, &last), 0);
	assert_int_equal(units, 50);
	assert_int_equal(last, 1);
	assert_int_equal(W->run(workload_ctx(W), params, spec, NULL, 0, &dev, NULL, &res, &len,
				err, sizeof(err)), 0);
	for (uint64_t seed = 0; seed < 4; seed++)
		assert_int_equal(W->verify(workload_ctx(W), params, spec, res, len, seed, err,
					   sizeof(err)), 0);
	for (int i = 0; i < 50; i += 7) {
		uint8_t *mv = (uint8_t *)res + OTHELLO_RES_HDR + 2 * i + 1;
		uint8_t keep = *mv;
		int caught = 0;
		*mv = (uint8_t)(keep == 0 ? 1 : keep - 1);
		/* k = ceil(50 / OTHELLO_VERIFY_SHARE) = 2 drawn a seed: some
		 * seed of 200 draws it (P(miss) = 0.96^200 = 3e-4 at most) */
		for (uint64_t seed = 0; !caught && seed < 200; seed++) {
			int rc = W->verify(workload_ctx(W), params, spec, res, len,
					   seed, err, sizeof(err));
			assert_true(rc == 0 || rc == GERR_VERIFY);
			caught = rc == GERR_VERIFY;
		}
		assert_true(caught);
		snprintf(want, sizeof(want), "position %d re-solves", i);
		assert_non_null(strstr(err, want));
		*mv = keep;
	}
	free(res);
	json_decref(spec);
	json_decref(next);
	json_decref(params);
	json_decref(args);
}

/* ---- a whole job through the interface ---------------------------------- */

struct mem {
	char hash[8][65];
	void *bytes[8];
	size_t len[8];
	int n;
};

static int mem_fetch(void *o, const char *hash, void **ret, size_t *ret_len)
{
	struct mem *m = o;
	for (int i = 0; i < m->n; i++)
		if (strcmp(m->hash[i], hash) == 0) {
			*ret = malloc(m->len[i]);
			memcpy(*ret, m->bytes[i], m->len[i]);
			*ret_len = m->len[i];
			return 0;
		}
	return GERR_NOTFOUND;
}

static const char *mem_put(struct mem *m, void *bytes, size_t len)
{
	snprintf(m->hash[m->n], 65, "%064d", m->n + 1);
	m->bytes[m->n] = bytes;
	m->len[m->n] = len;
	return m->hash[m->n++];
}

static int io_due(void *o) { (void)o; return 1; }
static int io_ck(void *o, const void *b, size_t n, uint64_t u)
{
	(void)o; (void)b; (void)n; (void)u;
	return 0;
}

/* Some of a job's parts, by index into all of them: for export and finish
 * given parts that leave positions out or hold some twice. */
struct view {
	struct wl_parts pub;
	const struct wl_parts *of;
	uint64_t map[16];
};

static int view_get(void *o, uint64_t k, struct wl_part *ret)
{
	struct view *v = o;

	if (k >= v->pub.n)
		return GERR_NOTFOUND;
	return v->of->get(v->of->opaque, v->map[k], ret);
}

static void view_init(struct view *v, const struct wl_parts *of,
		      const uint64_t *map, uint64_t n)
{
	assert_true(n <= 16);
	v->pub = (struct wl_parts){v, n, view_get};
	v->of = of;
	memcpy(v->map, map, n * sizeof(*map));
}

/* Export and finish refuse parts that do not cover the job once. */
static void check_bad_parts(json_t *params, const json_t *answer,
			    const struct wl_parts *all, struct mem *m)
{
	const struct workload *W = &othello_workload;
	struct wl_blob_reader rd = {m, mem_fetch};
	json_t *args = json_object();
	char err[WL_ERRLEN] = "";
	uint64_t map[16], n = all->n;
	struct view v;
	void *out = NULL;
	size_t olen;

	assert_true(n >= 2 && n < 16);
	/* The first lease missing: not finished, and said where. */
	for (uint64_t k = 1; k < n; k++)
		map[k - 1] = k;
	view_init(&v, all, map, n - 1);
	assert_int_equal(W->export_data(workload_ctx(W), params, answer, &v.pub,
					"result", args, &rd, &out, &olen, err,
					sizeof(err)), GERR_STATE);
	assert_non_null(strstr(err, "not finished"));
	assert_non_null(strstr(err, "none from position 0"));
	assert_int_equal(W->finish(workload_ctx(W), params, answer, &v.pub, err,
				   sizeof(err)), GERR_VERIFY);
	/* The last lease missing. */
	for (uint64_t k = 0; k < n - 1; k++)
		map[k] = k;
	view_init(&v, all, map, n - 1);
	assert_int_equal(W->export_data(workload_ctx(W), params, answer, &v.pub,
					"result", args, &rd, &out, &olen, err,
					sizeof(err)), GERR_STATE);
	assert_non_null(strstr(err, "not finished"));
	/* A lease twice. */
	for (uint64_t k = 0; k < n; k++)
		map[k] = k;
	map[n] = n / 2;
	view_init(&v, all, map, n + 1);
	assert_int_equal(W->export_data(workload_ctx(W), params, answer, &v.pub,
					"result", args, &rd, &out, &olen, err,
					sizeof(err)), GERR_CORRUPT);
	assert_non_null(strstr(err, "overlap"));
	/* No parts at all. */
	assert_int_equal(W->export_data(workload_ctx(W), params, answer, NULL,
					"result", args, &rd, &out, &olen, err,
					sizeof(err)), GERR_INVAL);
	assert_null(out);
	json_decref(args);
}

/* Runs every lease of the job, keeping its parts as gpud does; returns
 * the export text. */
static char *run_job(json_t *params, struct mem *m, uint64_t want)
{
	const struct workload *W = &othello_workload;
	json_t *cursor = NULL, *answer = NULL;
	struct wl_device dev = {WL_DEVICE_CPU, 0, 2, NULL};
	struct wl_run_io io = {m, NULL, io_due, io_ck, NULL, mem_fetch};
	struct parts_list pl;
	char err[WL_ERRLEN] = "";
	int leases = 0, last = 0;

	parts_list_init(&pl);
	for (;;) {
		json_t *spec, *next, *merged, *note = NULL;
		uint64_t units;
		void *res;
		size_t len;
		int was_last = last;
		int rc = W->carve(workload_ctx(W), params, cursor, answer,
				  &pl.pub, want, &spec, &units, &next, &last);
		if (rc == GERR_DONE)
			break;
		assert_int_equal(rc, 0);
		assert_false(was_last); /* nothing carved after the last */
		rc = W->run(workload_ctx(W), params, spec, NULL, 0, &dev, &io, &res, &len, err,
			    sizeof(err));
		if (rc)
			fprintf(stderr, "run: %s\n", err);
		assert_int_equal(rc, 0);
		assert_int_equal(W->verify(workload_ctx(W), params, spec, res, len, 3, err,
					   sizeof(err)), 0);
		/* A changed score fails verification when sampled: alter
		 * every score. */
		uint8_t *alt = malloc(len);
		memcpy(alt, res, len);
		for (size_t i = 0; i < units; i++)
			alt[OTHELLO_RES_HDR + 2 * i] ^= 1;
		assert_int_equal(W->verify(workload_ctx(W), params, spec, alt, len, 3, err,
					   sizeof(err)), GERR_VERIFY);
		free(alt);
		const char *h = mem_put(m, res, len);
		assert_int_equal(W->merge(workload_ctx(W), params, answer, spec,
					  res, len, h, &merged, &note), 0);
		assert_int_equal(parts_list_add(&pl, spec, units, h, note), 0);
		json_decref(note);
		json_decref(answer);
		answer = merged;
		json_decref(cursor);
		cursor = next;
		json_decref(spec);
		leases++;
	}
	assert_true(last);
	assert_true(leases >= 2);
	/* Which result holds which positions is in the parts only. */
	assert_null(json_object_get(answer, "results"));
	assert_int_equal(json_integer_value(json_object_get(answer, "leases")),
			 leases);
	assert_int_equal(W->finish(workload_ctx(W), params, answer, &pl.pub,
				   err, sizeof(err)), 0);
	char *text = W->render_text(workload_ctx(W), params, answer, &pl.pub);
	assert_non_null(strstr(text, "score distribution"));
	free(text);
	check_bad_parts(params, answer, &pl.pub, m);
	struct wl_blob_reader rd = {m, mem_fetch};
	void *out;
	size_t olen;
	json_t *args = json_object();
	assert_int_equal(W->export_data(workload_ctx(W), params, answer,
					&pl.pub, "result", args, &rd, &out,
					&olen, err, sizeof(err)), 0);
	json_decref(args);
	char *s = realloc(out, olen + 1);
	s[olen] = 0;
	json_decref(answer);
	json_decref(cursor);
	parts_list_clear(&pl);
	return s;
}

/* The answer of many leases is the answer of one lease of the same
 * positions but for the counts of leases and time: its size does not grow
 * with the leases merged. Merged in either order it is the same, and an
 * answer's fields other than its own (an older gpud's "results") are not
 * carried on. */
static void test_answer_constant(void **state)
{
	const struct workload *W = &othello_workload;
	json_t *args = json_pack("{s:s, s:s, s:s}", "random", "512", "empties",
				 "5", "seed", "2"), *params;
	struct wl_device dev = {WL_DEVICE_CPU, 0, 1, NULL};
	char err[WL_ERRLEN] = "";
	uint64_t total;
	enum { K = 128 };
	json_t *spec[K], *one = NULL, *fwd = NULL, *rev = NULL, *one_spec, *m;
	void *res[K], *one_res;
	size_t len[K], one_len, size8 = 0;

	(void)state;
	assert_int_equal(W->parse_params(workload_ctx(W), args, &params, &total,
					 err, sizeof(err)), 0);
	for (int k = 0; k < K; k++) {
		spec[k] = json_pack("{s:i, s:i}", "begin", 4 * k, "count", 4);
		assert_int_equal(W->run(workload_ctx(W), params, spec[k], NULL, 0,
					&dev, NULL, &res[k], &len[k], err,
					sizeof(err)), 0);
	}
	for (int k = 0; k < K; k++) {
		assert_int_equal(W->merge(workload_ctx(W), params, fwd, spec[k],
					  res[k], len[k], "h", &m, NULL), 0);
		json_decref(fwd);
		fwd = m;
		if (k == 7)
			size8 = json_dumpb(fwd, NULL, 0, JSON_COMPACT);
		int r = K - 1 - k;
		assert_int_equal(W->merge(workload_ctx(W), params, rev, spec[r],
					  res[r], len[r], "h", &m, NULL), 0);
		json_decref(rev);
		rev = m;
	}
	one_spec = json_pack("{s:i, s:i}", "begin", 0, "count", 4 * K);
	assert_int_equal(W->run(workload_ctx(W), params, one_spec, NULL, 0, &dev,
				NULL, &one_res, &one_len, err, sizeof(err)), 0);
	assert_int_equal(W->merge(workload_ctx(W), params, NULL, one_spec,
				  one_res, one_len, "h", &one, NULL), 0);
	assert_int_equal(json_integer_value(json_object_get(fwd, "leases")), K);
	assert_int_equal(json_object_size(fwd), json_object_size(one));
	/* 8 leases or 128: a few digits more, not a line per lease. */
	assert_true(json_dumpb(fwd, NULL, 0, JSON_COMPACT) < size8 + 80);
	assert_true(json_equal(fwd, rev));
	const char *per_run[] = {"leases", "usec", "nodes"};
	for (int i = 0; i < 3; i++) {
		json_object_del(fwd, per_run[i]);
		json_object_del(one, per_run[i]);
	}
	assert_true(json_equal(fwd, one));

	/* An answer with a field merge does not know: left behind. */
	json_object_set_new(one, "results", json_pack("{s:[s, i]}", "0", "h", 4));
	json_object_set_new(one, "leases", json_integer(1));
	json_object_set_new(one, "usec", json_integer(0));
	json_object_set_new(one, "nodes", json_integer(0));
	assert_int_equal(W->merge(workload_ctx(W), params, one, spec[0], res[0],
				  len[0], "h", &m, NULL), 0);
	assert_null(json_object_get(m, "results"));
	assert_int_equal(json_integer_value(json_object_get(m, "leases")), 2);
	json_decref(m);
	/* A result that is not the lease's is not merged. */
	assert_int_equal(W->merge(workload_ctx(W), params, NULL, spec[1], res[0],
				  len[0], "h", &m, NULL), GERR_INVAL);

	for (int k = 0; k < K; k++) {
		json_decref(spec[k]);
		free(res[k]);
	}
	free(one_res);
	json_decref(one_spec);
	json_decref(one);
	json_decref(fwd);
	json_decref(rev);
	json_decref(params);
	json_decref(args);
}

/* parse_params refuses args (JSON text) with GERR_INVAL, saying why
 * (NULL: anything). */
static void refused(const char *args, const char *why)
{
	const struct workload *W = &othello_workload;
	json_t *a = json_loads(args, 0, NULL), *params = NULL;
	char err[WL_ERRLEN] = "";
	uint64_t total;

	assert_non_null(a);
	assert_int_equal(W->parse_params(workload_ctx(W), a, &params, &total,
					 err, sizeof(err)), GERR_INVAL);
	if (why)
		assert_non_null(strstr(err, why));
	json_decref(a);
}

static void test_job_random(void **state)
{
	const struct workload *W = &othello_workload;
	json_t *args = json_pack("{s:s, s:s, s:s}", "random", "300", "empties",
				 "8", "seed", "9"), *params;
	uint64_t total;
	char err[WL_ERRLEN];
	struct mem m = {0};

	(void)state;
	assert_int_equal(W->parse_params(workload_ctx(W), args, &params, &total, err,
					 sizeof(err)), 0);
	assert_int_equal(total, 300);
	char *out = run_job(params, &m, 128);
	/* 300 lines, each a parseable position with its score, equal to the
	 * minimax of the generated position. */
	int lines = 0;
	for (char *l = out, *nl; *l; l = nl + 1, lines++) {
		nl = strchr(l, '\n');
		assert_non_null(nl);
		struct othello_pos p;
		assert_int_equal(othello_parse_line(l, (size_t)(nl - l), &p, err,
						    sizeof(err)), 0);
		uint64_t P, O;
		int black, mv;
		oth_generate(9, (uint64_t)lines, 8, &P, &O, &black);
		uint64_t Q, R;
		othello_pos_pov(&p, &Q, &R);
		assert_int_equal(P, Q);
		assert_int_equal(O, R);
		assert_int_equal(p.expected, othello_minimax(P, O, &mv));
	}
	assert_int_equal(lines, 300);
	free(out);
	for (int i = 0; i < m.n; i++)
		free(m.bytes[i]);
	json_decref(params);
	json_decref(args);

	/* Bad parameters. */
	refused("{\"random\": \"10\", \"empties\": \"0\"}", NULL);
	refused("{\"empties\": \"10\"}", NULL);
	/* Neither --random nor a file: refused at submission. */
	refused("{}", "--file");
	refused("{\"random\": \"10\", \"empties\": \"10\", \"bogus\": \"1\"}",
		"bogus");
}

static void test_job_file(void **state)
{
	const struct workload *W = &othello_workload;
	json_t *args = json_pack("{s:s}", "file", "positions.obf"), *params, *np;
	uint64_t total;
	char err[WL_ERRLEN];
	struct mem m = {0};
	char *text = malloc(2500 * 90);
	size_t tl = 0;
	void *canon;
	size_t clen;

	(void)state;
	/* 2100 positions of 1..9 empties, every 7th with a wrong expected
	 * score, in OBF. */
	for (int i = 0; i < 2100; i++) {
		uint64_t P, O;
		int black, mv;
		oth_generate(3, (uint64_t)i, 1 + i % 9, &P, &O, &black);
		struct othello_pos p = {black ? P : O, black ? O : P,
					(uint8_t)black, 0};
		char b[68];
		othello_format_board(&p, b);
		int v = othello_minimax(P, O, &mv);
		if (i % 7 == 0)
			v = v == 64 ? 62 : v + 2;
		tl += (size_t)sprintf(text + tl, "%.66s; A1:%+d;\n", b, v);
	}
	assert_int_equal(W->parse_params(workload_ctx(W), args, &params, &total, err,
					 sizeof(err)), 0);
	assert_int_equal(W->parse_input(workload_ctx(W), params, text, tl, &np, &canon, &clen,
					&total, err, sizeof(err)), 0);
	assert_int_equal(total, 2100);
	const char *h = mem_put(&m, canon, clen);
	json_object_set_new(np, "input", json_string(h));
	char *out = run_job(np, &m, 1000); /* rounds up to whole blocks */
	/* The export holds every input board in order. */
	int lines = 0;
	for (char *l = out, *e = text, *nl; *l; l = nl + 1, lines++) {
		nl = strchr(l, '\n');
		assert_memory_equal(l, e, 66);
		e = strchr(e, '\n') + 1;
	}
	assert_int_equal(lines, 2100);
	free(out);

	/* The disagreements are reported: 300 (every 7th of 2100). */
	json_t *cursor = NULL, *answer = NULL;
	json_t *spec = json_pack("{s:I, s:I}", "begin", (json_int_t)0, "count",
				 (json_int_t)1024);
	struct wl_device dev = {WL_DEVICE_CPU, 0, 1, NULL};
	struct wl_run_io io = {&m, NULL, NULL, NULL, NULL, mem_fetch};
	void *res;
	size_t len;
	assert_int_equal(W->run(workload_ctx(W), np, spec, NULL, 0, &dev, &io, &res, &len, err,
				sizeof(err)), 0);
	assert_int_equal(W->merge(workload_ctx(W), np, NULL, spec, res, len, "x", &answer, NULL), 0);
	assert_int_equal(json_integer_value(json_object_get(answer,
							    "mismatches")),
			 (1023 / 7) + 1);
	assert_int_equal(json_array_size(json_object_get(answer,
							 "mismatch_list")), 100);
	/* Merged in either order, the whole job's list is the lowest 100 of
	 * its 300 disagreements. */
	{
		json_t *sp[3], *fwd = NULL, *rev = NULL, *mg;
		void *rr[3];
		size_t rl[3];
		for (int k = 0; k < 3; k++) {
			sp[k] = json_pack("{s:i, s:i}", "begin", 1024 * k,
					  "count", k < 2 ? 1024 : 2100 - 2048);
			assert_int_equal(W->run(workload_ctx(W), np, sp[k], NULL,
						0, &dev, &io, &rr[k], &rl[k],
						err, sizeof(err)), 0);
		}
		for (int k = 0; k < 3; k++) {
			assert_int_equal(W->merge(workload_ctx(W), np, fwd,
						  sp[k], rr[k], rl[k], "x",
						  &mg, NULL), 0);
			json_decref(fwd);
			fwd = mg;
			assert_int_equal(W->merge(workload_ctx(W), np, rev,
						  sp[2 - k], rr[2 - k],
						  rl[2 - k], "x", &mg, NULL), 0);
			json_decref(rev);
			rev = mg;
		}
		assert_true(json_equal(fwd, rev));
		assert_int_equal(json_integer_value(json_object_get(fwd,
						    "mismatches")), 300);
		json_t *ml = json_object_get(fwd, "mismatch_list");
		assert_int_equal(json_array_size(ml), 100);
		for (size_t i = 0; i < 100; i++)
			assert_int_equal(json_integer_value(json_array_get(
				json_array_get(ml, i), 0)), 7 * (json_int_t)i);
		for (int k = 0; k < 3; k++) {
			json_decref(sp[k]);
			free(rr[k]);
		}
		json_decref(fwd);
		json_decref(rev);
	}
	/* A result for other positions fails the digest check. */
	((uint8_t *)res)[OTHELLO_RES_HDR + 2 * 1024 + 5] ^= 0x40;
	assert_int_equal(W->verify(workload_ctx(W), np, spec, res, len, 1, err, sizeof(err)),
			 GERR_VERIFY);
	assert_non_null(strstr(err, "block 0"));
	free(res);
	json_decref(answer);
	json_decref(cursor);
	json_decref(spec);

	/* A --random job takes no file; a file with bad lines is refused. */
	json_t *rp;
	json_t *ra = json_pack("{s:s, s:s}", "random", "5", "empties", "5");
	assert_int_equal(W->parse_params(workload_ctx(W), ra, &rp, &total, err, sizeof(err)), 0);
	assert_int_equal(W->parse_input(workload_ctx(W), rp, text, tl, &np, &canon, &clen,
					&total, err, sizeof(err)), GERR_INVAL);
	json_decref(rp);
	json_decref(ra);
	char *third = strchr(strchr(text, '\n') + 1, '\n') + 1;
	third[0] = 'Q'; /* line 3 */
	json_t *np2 = NULL;
	int rc = W->parse_input(workload_ctx(W), params, text, tl, &np2, &canon, &clen, &total,
				err, sizeof(err));
	assert_int_equal(rc, GERR_INVAL);
	assert_non_null(strstr(err, "line 3:"));

	for (int i = 0; i < m.n; i++)
		free(m.bytes[i]);
	free(text);
	json_decref(np);
	json_decref(params);
	json_decref(args);
}

UNIT_MAIN(cmocka_unit_test(test_perft),
	cmocka_unit_test(test_flips_and_moves),
	cmocka_unit_test(test_solvers_vs_minimax),
	cmocka_unit_test(test_solvers_agree_deeper),
	cmocka_unit_test(test_generator),
	cmocka_unit_test(test_parse),
	cmocka_unit_test(test_result_format),
	cmocka_unit_test(test_results_agree),
	cmocka_unit_test(test_verify_sample),
	cmocka_unit_test(test_job_random),
	cmocka_unit_test(test_job_file),
	cmocka_unit_test(test_answer_constant))
