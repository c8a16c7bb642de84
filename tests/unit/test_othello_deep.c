/* Unit tests of the exact CPU endgame search (othello_deep.h), each part
 * against a reference: the last move's flip count against oth_flips, the
 * last-1..4 solvers against minimax (null-window
 * answers consistent with the exact score for every window), stability
 * against exhaustive play (a disc called stable never flips), the search
 * against minimax at 6-10 empties and the shallow reference at 11-14
 * (score and lowest best square), table size and reuse (ETC, bounds)
 * never changing a score, the parallel search equal to the sequential
 * one on 2-4 threads, the stop callback ending a deep search, and FFO
 * #1-#19 against their published answers. OTHELLO_DEEP_SCALE=k runs k
 * times the random positions and adds FFO #20-#39. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "gerr.h"
#include "othello/othello.h"
#include "othello/othello_deep.h"
#include "othello/othello_last.h"
#include "unit_main.h"

static int scale(void)
{
	const char *s = getenv("OTHELLO_DEEP_SCALE");
	int k = s ? atoi(s) : 1;

	return k < 1 ? 1 : k > 1000 ? 1000 : k;
}

/* A fail-soft null-window answer v of window (alpha, alpha + 1) against
 * the exact score. */
static void check_nws(int v, int exact, int alpha)
{
	if (exact > alpha) {
		assert_true(v > alpha);
		assert_true(v <= exact);
	} else {
		assert_true(v <= alpha);
		assert_true(v >= exact);
	}
}

static void test_last_solvers(void **state)
{
	(void)state;
	/* The table count of a last move's flips on random filled boards. */
	uint64_t r = 12345;
	for (int i = 0; i < 100000; i++) {
		r = mix64(r + MIX_GOLDEN);
		int x = (int)(r >> 58);
		uint64_t P = mix64(r) & ~(1ull << x), O = ~P & ~(1ull << x);
		assert_int_equal(oth_count_last_flip(P, x),
				 oth_popcount(oth_flips(P, O, x)));
	}
	int n = 2000 * scale();
	for (int e = 1; e <= 4; e++) {
		for (int i = 0; i < n; i++) {
			uint64_t P, O, nodes = 0;
			int black, mv;
			oth_generate(31, (uint64_t)i, e, &P, &O, &black);
			int exact = othello_minimax(P, O, &mv);
			uint64_t E = ~(P | O);
			int x[4];
			for (int k = 0; k < e; k++) {
				x[k] = oth_ctz(E);
				E &= E - 1;
			}
			if (e == 1) {
				assert_int_equal(oth_last1n(P, O, x[0]), exact);
				continue;
			}
			for (int alpha = -65; alpha <= 64; alpha += 3) {
				int v;
				if (e == 2)
					v = oth_last2(P, O, alpha, x[0], x[1],
						      &nodes);
				else if (e == 3)
					v = oth_last3(P, O, alpha, x[0], x[1],
						      x[2], 0, &nodes);
				else
					v = oth_solve4(P, O, alpha, &nodes);
				check_nws(v, exact, alpha);
			}
			assert_true(nodes > 0);
		}
	}
}

/* Play every line from (P, O) (up to `budget` nodes) and check that the
 * discs of sp (P's) and so (O's) keep their colour. */
static void walk_stable(uint64_t P, uint64_t O, uint64_t sp, uint64_t so,
			int passed, long *budget)
{
	assert_int_equal(P & sp, sp);
	assert_int_equal(O & so, so);
	if (--*budget <= 0)
		return;
	uint64_t m = oth_moves(P, O);
	if (!m) {
		if (!passed)
			walk_stable(O, P, so, sp, 1, budget);
		return;
	}
	for (; m; m &= m - 1) {
		int sq = oth_ctz(m);
		uint64_t f = oth_flips(P, O, sq);
		walk_stable(O & ~f, P | f | (1ull << sq), so, sp, 0, budget);
	}
}

static void test_stability(void **state)
{
	int total = 0;

	(void)state;
	for (int i = 0; i < 300 * scale(); i++) {
		uint64_t P, O;
		int black, e = 5 + i % 4;
		long budget = 20000;
		oth_generate(41, (uint64_t)i, e, &P, &O, &black);
		uint64_t sp = oth_stable(P, O), so = oth_stable(O, P);
		assert_int_equal(sp & ~P, 0);
		assert_int_equal(so & ~O, 0);
		total += oth_popcount(sp | so);
		walk_stable(P, O, sp, so, 0, &budget);
	}
	assert_true(total > 1000); /* the test saw many stable discs */
	/* A full board: everything is stable. */
	assert_int_equal(oth_stable(0xffffffff00000000ull, 0xffffffffull),
			 0xffffffff00000000ull);
	/* Only the corner and the edge run from it. */
	assert_int_equal(oth_stable(0x7ull, 0x8ull), 0x7ull);
}

static void test_vs_minimax(void **state)
{
	struct othello_solver *s;

	(void)state;
	assert_int_equal(othello_solver_new(&s), 0);
	for (int e = 6; e <= 10; e++) {
		int n = (e <= 8 ? 1000 : e == 9 ? 60 : 8) * scale();
		for (int i = 0; i < n; i++) {
			uint64_t P, O, nodes;
			int black, m0, m1;
			oth_generate(53, (uint64_t)i, e, &P, &O, &black);
			int v0 = othello_minimax(P, O, &m0);
			int v1 = othello_solver_solve(s, P, O, &m1, &nodes);
			assert_int_equal(v1, v0);
			assert_int_equal(m1, m0);
			assert_true(nodes > 0);
		}
	}
	othello_solver_free(s);
}

/* Against the shallow reference, with the smallest and the default
 * table: replacement, ETC and stored bounds never change an answer. */
static void test_vs_shallow(void **state)
{
	struct othello_solver *big, *tiny;

	(void)state;
	assert_int_equal(othello_solver_new(&big), 0);
	assert_int_equal(othello_solver_new_sized(&tiny, 0), 0);
	for (int e = 11; e <= (scale() > 1 ? 16 : 14); e++) {
		int n = (e <= 12 ? 300 : e == 13 ? 80 : 30) * scale();
		for (int i = 0; i < n; i++) {
			uint64_t P, O;
			int black, m0, m1, m2;
			oth_generate(67, (uint64_t)i, e, &P, &O, &black);
			int v0 = othello_solve_shallow(P, O, &m0, NULL);
			int v1 = othello_solver_solve(big, P, O, &m1, NULL);
			int v2 = othello_solver_solve(tiny, P, O, &m2, NULL);
			assert_int_equal(v1, v0);
			assert_int_equal(m1, m0);
			assert_int_equal(v2, v0);
			assert_int_equal(m2, m0);
		}
	}
	othello_solver_free(big);
	othello_solver_free(tiny);
}

/* One position at a time on 2, 3 and 4 threads (the deep path: fewer
 * positions than threads) against one thread. */
static void test_parallel(void **state)
{
	struct othello_solver *s;

	(void)state;
	assert_int_equal(othello_solver_new(&s), 0);
	for (int i = 0; i < 8 * scale(); i++) {
		uint64_t P, O, nodes = 0;
		int black, m0, e = 14 + i % 5;
		oth_generate(79, (uint64_t)i, e, &P, &O, &black);
		int v0 = othello_solver_solve(s, P, O, &m0, NULL);
		for (int t = 2; t <= 4; t++) {
			int8_t sc;
			uint8_t mv;
			assert_int_equal(othello_solve_batch(&P, &O, 1, t, &sc,
							     &mv, &nodes, NULL,
							     NULL), 0);
			assert_int_equal(sc, v0);
			assert_int_equal(mv, m0);
		}
		assert_true(nodes > 0);
	}
	/* A batch mixing shallow (one per thread) and deep positions. */
	uint64_t P[12], O[12];
	int8_t sc[12];
	uint8_t mv[12];
	for (int i = 0; i < 12; i++) {
		int black;
		oth_generate(83, (uint64_t)i, i < 10 ? 12 : 18, &P[i], &O[i],
			     &black);
	}
	assert_int_equal(othello_solve_batch(P, O, 12, 2, sc, mv, NULL, NULL,
					     NULL), 0);
	for (int i = 0; i < 12; i++) {
		int m;
		assert_int_equal(othello_solver_solve(s, P[i], O[i], &m, NULL),
				 sc[i]);
		assert_int_equal(m, mv[i]);
	}
	othello_solver_free(s);
}

static int stop_now(void *opaque)
{
	(*(int *)opaque)++;
	return 1;
}

/* A deep search asked to stop returns GERR_CANCELLED promptly (about
 * 0.1 s here; the bound leaves room for a loaded machine and ASan). */
static void test_stop(void **state)
{
	uint64_t P, O;
	int black, calls = 0;
	int8_t sc;
	uint8_t mv;
	struct timespec a, b;

	(void)state;
	oth_generate(97, 0, 26, &P, &O, &black);
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(othello_solve_batch(&P, &O, 1, 2, &sc, &mv, NULL,
					     stop_now, &calls),
			 GERR_CANCELLED);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true(calls >= 1);
	double dt = (double)(b.tv_sec - a.tv_sec) +
		    (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
	assert_true(dt < 2.0);
}

/* FFO positions from..to of tests/data/ffo.obf: score and a listed move. */
static void check_ffo(int from, int to)
{
	FILE *f = fopen(FFO_OBF, "r");
	char line[512];
	int seen = 0;
	struct othello_solver *s;

	assert_non_null(f);
	assert_int_equal(othello_solver_new(&s), 0);
	while (fgets(line, sizeof(line), f)) {
		struct othello_pos p;
		char err[128], mvs[4];
		size_t len = strcspn(line, "\r\n");
		line[len] = 0;
		if (othello_parse_line(line, len, &p, err, sizeof(err)) != 0)
			continue;
		const char *h = strstr(line, "% FFO #");
		assert_non_null(h);
		int num = atoi(h + 7);
		if (num < from || num > to)
			continue;
		uint64_t P, O;
		int mv;
		othello_pos_pov(&p, &P, &O);
		int v = othello_solver_solve(s, P, O, &mv, NULL);
		assert_int_equal(v, p.expected);
		othello_format_move(mv, mvs);
		/* The move is listed with the best score ("G8:+18"). */
		char want[16];
		snprintf(want, sizeof(want), "%s:%+d;", mvs, v);
		assert_non_null(strstr(line, want));
		seen++;
	}
	fclose(f);
	othello_solver_free(s);
	assert_int_equal(seen, to - from + 1);
}

static void test_ffo(void **state)
{
	(void)state;
	check_ffo(1, 19);
	if (scale() > 1)
		check_ffo(20, 39);
}

UNIT_MAIN(TIMED(test_last_solvers),
	TIMED(test_stability),
	TIMED(test_vs_minimax),
	TIMED(test_vs_shallow),
	TIMED(test_parallel),
	TIMED(test_stop),
	TIMED(test_ffo))
