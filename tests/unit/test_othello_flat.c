/* Unit tests of othello_flat.h, the host build of the CUDA kernel's
 * search: oth_moves_fast against oth_moves on random boards; the search by
 * flips against oth_search_shallow (score, best move, nodes) and the fast
 * CPU solver (score, best move) on generated positions of 1..14 empties
 * and on positions with passes; and 32 lanes stepped as the kernel's warp
 * runs them (a step for every live lane each round, the keys of the
 * waiting lanes after it), taking positions from a queue, with one to
 * three returns and picks per step (the kernel takes two).
 *
 * OTHELLO_STEP_SCALE=k multiplies the position counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "othello/othello.h"
#include "othello/othello_flat.h"
#include "unit_main.h"

static double scale(void)
{
	const char *s = getenv("OTHELLO_STEP_SCALE");
	double k = s ? atof(s) : 1;

	return k > 0 ? k : 1;
}

static void test_moves_fast(void **state)
{
	uint64_t x = 12345;

	(void)state;
	for (long i = 0; i < (long)(200000 * scale()); i++) {
		uint64_t a = mix64(x += MIX_GOLDEN);
		uint64_t b = mix64(x += MIX_GOLDEN);
		uint64_t c = mix64(x += MIX_GOLDEN);
		/* Dense and sparse boards, either side larger. */
		uint64_t occ = (i & 1) ? a | b : a & ~c;
		uint64_t P = occ & c, O = occ & ~c;
		if (i & 2) {
			uint64_t t = P; P = O; O = t;
		}
		assert_int_equal(oth_moves_fast(P, O), oth_moves(P, O));
	}
}

/* Positions at each empties count: many where they are cheap. */
static long count_at(int e)
{
	static const int n[15] = {0, 400, 400, 400, 400, 400, 400, 400, 400,
				  300, 200, 100, 40, 20, 10};
	return (long)(n[e] * scale());
}

/* One position three ways: the fast solver, oth_search_shallow and flat;
 * and its moves by oth_moves_fast. */
static void check_one(struct othello_solver *s, struct oth_fstack *S,
		      uint64_t P, uint64_t O)
{
	uint64_t n0 = 0;
	int m0, m1;
	int v0 = othello_solver_solve(s, P, O, &m0, NULL);
	int v1 = oth_search_shallow(P, O, &m1, &n0);
	uint64_t n1 = 0;
	int m2, v2 = oth_search_flat(S, P, O, &m2, &n1);

	assert_int_equal(oth_moves_fast(P, O), oth_moves(P, O));
	assert_int_equal(v1, v0);
	assert_int_equal(m1, m0);
	assert_int_equal(v2, v0);
	assert_int_equal(m2, m0);
	assert_int_equal(n1, n0);
}

static void test_flat_vs_search(void **state)
{
	struct othello_solver *s;
	struct oth_fstack *S = malloc(sizeof(*S));
	long total = 0;

	(void)state;
	assert_non_null(S);
	assert_int_equal(othello_solver_new(&s), 0);
	for (int e = 1; e <= 14; e++) {
		for (long i = 0; i < count_at(e); i++) {
			uint64_t P, O;
			int black;
			oth_generate(31 + (uint64_t)e, (uint64_t)i, e, &P, &O,
				     &black);
			check_one(s, S, P, O);
			total++;
		}
	}
	printf("flat search: %ld positions of 1..14 empties: same score, "
	       "move and nodes as oth_search_shallow\n", total);
	othello_solver_free(s);
	free(S);
}

/* Boards where passes are common: random discs, few of one colour, with
 * 0..8 empties; the side to move may have no move, or neither side. */
static void test_flat_passes(void **state)
{
	struct othello_solver *s;
	struct oth_fstack *S = malloc(sizeof(*S));
	uint64_t x = 99;
	long passes = 0, ends = 0;

	(void)state;
	assert_non_null(S);
	assert_int_equal(othello_solver_new(&s), 0);
	for (long i = 0; i < (long)(20000 * scale()); i++) {
		uint64_t a = mix64(x += MIX_GOLDEN);
		uint64_t b = mix64(x += MIX_GOLDEN);
		uint64_t E = 0;
		int e = (int)(i % 9);
		for (int k = 0; k < e; k++)
			E |= 1ull << ((a >> (6 * k)) & 63);
		uint64_t O = ~E & (b & (b >> 7) & (b >> 13)); /* sparse */
		uint64_t P = ~E & ~O;
		if (i & 1) {
			uint64_t t = P; P = O; O = t;
		}
		if (!oth_moves(P, O))
			passes++;
		if (!oth_moves(P, O) && !oth_moves(O, P))
			ends++;
		check_one(s, S, P, O);
	}
	printf("flat search, random boards: %ld with the side to move "
	       "passing, %ld finished\n", passes, ends);
	assert_true(passes > 100);
	assert_true(ends > 100);
	othello_solver_free(s);
	free(S);
}

/* 32 lanes, the kernel's loop: a lane that is done takes the next
 * position (seed, e0 + index % spread empties); each round every live
 * lane takes one step (`parts` returns and picks), then the lanes waiting
 * for keys get them. Checks every answer against oth_search_shallow;
 * returns the rounds. */
static long run_warp(uint64_t seed, int e0, int spread, long n, int parts)
{
	struct oth_flat *F = calloc(32, sizeof(*F));
	struct oth_fstack *S = calloc(32, sizeof(*S));
	long next = 0, *pos = calloc(32, sizeof(long)), rounds = 0;
	int8_t *sc = malloc((size_t)n);
	uint8_t *mv = malloc((size_t)n);

	assert_non_null(F);
	assert_non_null(S);
	assert_non_null(pos);
	for (int l = 0; l < 32; l++) {
		F[l].op = OTH_FLAT_DONE;
		pos[l] = -1;
	}
	for (;;) {
		int live = 0;
		for (int l = 0; l < 32; l++) {
			if (F[l].op != OTH_FLAT_DONE)
				continue;
			F[l].n = 0; /* as the kernel: nodes per position */
			if (pos[l] >= 0) {
				sc[pos[l]] = (int8_t)F[l].v;
				mv[pos[l]] = (uint8_t)F[l].mv;
			}
			if (next < n) {
				uint64_t P, O;
				int black;
				pos[l] = next++;
				oth_generate(seed, (uint64_t)pos[l],
					     e0 + (int)(pos[l] % spread), &P, &O,
					     &black);
				oth_flat_start(&F[l], P, O);
			} else {
				pos[l] = -1;
				F[l].op = OTH_FLAT_IDLE;
			}
		}
		for (int l = 0; l < 32; l++)
			live += F[l].op != OTH_FLAT_IDLE;
		if (!live)
			break;
		for (int l = 0; l < 32; l++)
			if (F[l].op <= OTH_FLAT_NEXT)
				oth_flat_after(&F[l], &S[l],
					       oth_flat_compute(&F[l]), parts);
		for (int l = 0; l < 32; l++)
			if (F[l].op == OTH_FLAT_KEYS)
				oth_flat_keys(&F[l], &S[l]);
		rounds++;
	}
	for (long i = 0; i < n; i++) {
		uint64_t P, O, nodes = 0;
		int black, m;
		oth_generate(seed, (uint64_t)i, e0 + (int)(i % spread), &P, &O,
			     &black);
		int v = oth_search_shallow(P, O, &m, &nodes);
		assert_int_equal(sc[i], v);
		assert_int_equal(mv[i], m);
	}
	free(F);
	free(S);
	free(pos);
	free(sc);
	free(mv);
	return rounds;
}

static void test_flat_warp(void **state)
{
	long n = (long)(300 * scale());

	(void)state;
	for (int parts = 1; parts <= 3; parts++) {
		long r1 = run_warp(7, 1, 5, n, parts);
		long r6 = run_warp(7, 6, 5, n, parts);
		printf("flat warp, %d part(s) per step: %ld positions of "
		       "1..5 empties in %ld rounds, of 6..10 in %ld\n", parts,
		       n, r1, r6);
		assert_true(r1 > 0 && r6 > r1);
	}
}

UNIT_MAIN(cmocka_unit_test(test_moves_fast),
	cmocka_unit_test(test_flat_vs_search),
	cmocka_unit_test(test_flat_passes),
	cmocka_unit_test(test_flat_warp))
