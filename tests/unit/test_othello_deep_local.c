/* Unit tests of the deep search's round-13 pieces (othello_deep.c): the
 * thread's own table for 7..OTH_LOCAL_MAX empties and the evaluation
 * ordering from 14 empties. One struct oth_search is kept across
 * thousands of random positions, so its own table holds entries of
 * earlier roots (they must stay true bounds), on a shared table of the
 * smallest size (constant replacement) and of a usual size; every score
 * and best move must equal the plain minimax reference at 6-9 empties and
 * the shallow exact search (othello_search.h, no table, no evaluation) at
 * 10-14. And a fresh solver's node count does not depend on what it
 * solved before. And oth_stable's faster full lines against the old
 * square-by-square spread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "othello/othello.h"
#include "othello/othello_deep.h"
#include "unit_main.h"

/* One search (kept across positions) on a table of 2^bits buckets. */
struct kept {
	struct oth_search *s;
	atomic_int abort;
};

static void kept_new(struct kept *k, int bits)
{
	k->s = calloc(1, sizeof(*k->s));
	assert_non_null(k->s);
	atomic_init(&k->abort, 0);
	k->s->abort = &k->abort;
	assert_int_equal(oth_tt_new(&k->s->tt, bits, 0), 0);
}

static void kept_free(struct kept *k)
{
	oth_tt_free(k->s->tt);
	free(k->s);
}

/* Solve (P, O) on k (a new table generation, the own table kept). */
static int kept_solve(struct kept *k, uint64_t P, uint64_t O, int *mv)
{
	oth_tt_next_gen(k->s->tt);
	return oth_deep_root(k->s, P, O, -65, 65, mv);
}

static void check_range(int e, int n, uint64_t seed, int minimax)
{
	struct kept tiny, big;

	kept_new(&tiny, 0);
	kept_new(&big, 16);
	for (int i = 0; i < n; i++) {
		uint64_t P, O, nodes = 0;
		int black, m0, m1, m2, v0;
		oth_generate(seed, (uint64_t)i, e, &P, &O, &black);
		if (minimax)
			v0 = othello_minimax(P, O, &m0);
		else
			v0 = othello_solve_shallow(P, O, &m0, &nodes);
		int v1 = kept_solve(&tiny, P, O, &m1);
		int v2 = kept_solve(&big, P, O, &m2);
		assert_int_equal(v1, v0);
		assert_int_equal(m1, m0);
		assert_int_equal(v2, v0);
		assert_int_equal(m2, m0);
	}
	assert_true(tiny.s->nodes > 0 && big.s->nodes > 0);
	kept_free(&tiny);
	kept_free(&big);
}

static void test_local_vs_minimax(void **state)
{
	(void)state;
	check_range(6, 1500, 101, 1);
	check_range(7, 1000, 103, 1);
	check_range(8, 300, 107, 1);
	check_range(9, 40, 109, 1);
}

/* 10-14 empties: the own table under nodes of the shared one, the
 * evaluation ordering from 14. */
static void test_local_vs_shallow(void **state)
{
	(void)state;
	check_range(10, 600, 113, 0);
	check_range(11, 300, 127, 0);
	check_range(12, 120, 131, 0);
	check_range(13, 40, 137, 0);
	check_range(14, 20, 139, 0);
}

/* The solver's own table starts empty for every position: a position's
 * node count is the same first, after others, and again. */
static void test_local_fresh(void **state)
{
	struct othello_solver *s;
	uint64_t P[4], O[4], first[4];

	(void)state;
	assert_int_equal(othello_solver_new(&s), 0);
	for (int i = 0; i < 4; i++) {
		int black, mv;
		oth_generate(149, (uint64_t)i, 12 + i, &P[i], &O[i], &black);
		othello_solver_solve(s, P[i], O[i], &mv, &first[i]);
	}
	for (int i = 3; i >= 0; i--) {
		uint64_t n;
		int mv;
		othello_solver_solve(s, P[i], O[i], &mv, &n);
		assert_int_equal(n, first[i]);
	}
	othello_solver_free(s);
}

/* oth_stable's full lines by doubling against the square-by-square
 * spread (7 steps) it replaced, on random boards of about 8 and 16
 * empties. */
static uint64_t open_ref(uint64_t E, int sh, uint64_t up, uint64_t down)
{
	for (int i = 0; i < 7; i++)
		E |= ((E << sh) & up) | ((E >> sh) & down);
	return E;
}

static uint64_t stable_ref(uint64_t P, uint64_t O)
{
	const uint64_t a = 0x0101010101010101ull, h = 0x8080808080808080ull;
	const uint64_t r1 = 0xffull, r8 = 0xff00000000000000ull;
	uint64_t E = ~(P | O), s = 0, old;
	uint64_t lh = ~open_ref(E, 1, ~a, ~h) | a | h;
	uint64_t lv = ~open_ref(E, 8, ~0ull, ~0ull) | r1 | r8;
	uint64_t l9 = ~open_ref(E, 9, ~a, ~h) | a | h | r1 | r8;
	uint64_t l7 = ~open_ref(E, 7, ~h, ~a) | a | h | r1 | r8;

	do {
		old = s;
		s = P & (lh | ((s << 1) & ~a) | ((s >> 1) & ~h)) &
		    (lv | (s << 8) | (s >> 8)) &
		    (l9 | ((s << 9) & ~a) | ((s >> 9) & ~h)) &
		    (l7 | ((s << 7) & ~h) | ((s >> 7) & ~a));
	} while (s != old);
	return s;
}

static void test_stable_lines(void **state)
{
	uint64_t r = 77;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		r = mix64(r + MIX_GOLDEN);
		uint64_t E = r & mix64(r) & (i & 1 ? ~0ull : mix64(r ^ 1));
		uint64_t P = mix64(r ^ 2) & ~E, O = ~(P | E);
		assert_int_equal(oth_stable(P, O), stable_ref(P, O));
	}
}

UNIT_MAIN(cmocka_unit_test(test_stable_lines),
	cmocka_unit_test(test_local_vs_minimax),
	cmocka_unit_test(test_local_vs_shallow),
	cmocka_unit_test(test_local_fresh))
