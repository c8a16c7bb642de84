/* Unit tests of othello_step.h, the host build of the CUDA kernel's stepped
 * variants: oth_moves_fast against oth_moves on random boards; the stepped
 * search (leaf 2 and 3, every option) against oth_search_leaf (score, best
 * move, nodes) and the fast CPU solver (score, best move) on generated
 * positions of 1..14 empties; and 32 lanes stepped by the kernel's vote,
 * as a warp runs them, taking positions from a queue.
 *
 * OTHELLO_STEP_SCALE=k multiplies the position counts (the default, 1,
 * runs in a few seconds; 50 checks about 200,000 positions). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "othello/othello.h"
#include "othello/othello_step.h"

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
		uint64_t a = oth_mix64(x += OTHELLO_GOLDEN);
		uint64_t b = oth_mix64(x += OTHELLO_GOLDEN);
		uint64_t c = oth_mix64(x += OTHELLO_GOLDEN);
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

static void test_step_vs_search(void **state)
{
	static const int opts[6] = {0, OTH_STEP_FASTGEN, OTH_STEP_FFONCE,
				    OTH_STEP_FASTGEN | OTH_STEP_FFONCE,
				    OTH_STEP_KEYSORT,
				    OTH_STEP_FASTGEN | OTH_STEP_KEYSORT};
	struct othello_solver *s;
	struct oth_stack *L = malloc(sizeof(*L));
	long total = 0;

	(void)state;
	assert_non_null(L);
	assert_int_equal(othello_solver_new(&s), 0);
	for (int e = 1; e <= 14; e++) {
		for (long i = 0; i < count_at(e); i++) {
			uint64_t P, O;
			int black, m0, m1;
			oth_generate(31 + (uint64_t)e, (uint64_t)i, e, &P, &O,
				     &black);
			assert_int_equal(oth_moves_fast(P, O), oth_moves(P, O));
			int v0 = othello_solver_solve(s, P, O, &m0, NULL);
			for (int leaf = 2; leaf <= 3; leaf++) {
				uint64_t n0 = 0;
				int v1 = oth_search_leaf(P, O, &m1, &n0, leaf);
				assert_int_equal(v1, v0);
				assert_int_equal(m1, m0);
				for (int k = 0; k < 6; k++) {
					uint64_t n1 = 0;
					int m2;
					int v2 = oth_search_step(L, P, O, &m2,
								 &n1, leaf,
								 opts[k]);
					assert_int_equal(v2, v0);
					assert_int_equal(m2, m0);
					assert_int_equal(n1, n0);
				}
			}
			total++;
		}
	}
	printf("stepped search: %ld positions of 1..14 empties, leaf 2 and 3, "
	       "6 options each: same score, move and nodes\n", total);
	othello_solver_free(s);
	free(L);
}

/* 32 lanes, the kernel's loop: a lane that is done takes the next
 * position; each round the vote picks leaf or frame steps. */
static void run_warp(int leaf, int opt, int thresh, int e0, long n)
{
	struct oth_lane *L = calloc(32, sizeof(*L));
	struct oth_stack *S = calloc(32, sizeof(*S));
	long next = 0, *pos = calloc(32, sizeof(long)), rounds = 0;
	int8_t *sc = malloc((size_t)n);
	uint8_t *mv = malloc((size_t)n);

	assert_non_null(L);
	assert_non_null(S);
	for (int l = 0; l < 32; l++)
		L[l].state = OTH_LANE_DONE, pos[l] = -1;
	for (;;) {
		int nleaf = 0, nframe = 0;
		for (int l = 0; l < 32; l++) {
			if (L[l].state == OTH_LANE_DONE) {
				if (pos[l] >= 0) {
					sc[pos[l]] = (int8_t)L[l].v;
					mv[pos[l]] = (uint8_t)L[l].mv;
				}
				if (next < n) {
					uint64_t P, O;
					int black;
					pos[l] = next++;
					oth_generate(7, (uint64_t)pos[l],
						     e0 + (int)(pos[l] % 5), &P,
						     &O, &black);
					oth_lane_start(&L[l], P, O);
				} else {
					L[l].state = OTH_LANE_IDLE;
				}
			}
			if (L[l].state == OTH_LANE_IDLE)
				continue;
			if (oth_lane_wants_leaf(&L[l], leaf))
				nleaf++;
			else
				nframe++;
		}
		if (nleaf + nframe == 0)
			break;
		int do_leaf = oth_vote_leaf(nleaf, nframe, thresh);
		for (int l = 0; l < 32; l++) {
			if (L[l].state == OTH_LANE_IDLE)
				continue;
			int wl = oth_lane_wants_leaf(&L[l], leaf);
			if (do_leaf && wl)
				oth_lane_leaf(&L[l]);
			else if (!do_leaf && !wl)
				oth_lane_frame(&L[l], &S[l], opt);
		}
		/* The kernel sorts the keys of these lanes together. */
		for (int l = 0; l < 32; l++)
			if (L[l].state == OTH_LANE_KEYS)
				oth_lane_keys(&L[l], &S[l], opt);
		rounds++;
	}
	for (long i = 0; i < n; i++) {
		uint64_t P, O, nodes = 0;
		int black, m;
		oth_generate(7, (uint64_t)i, e0 + (int)(i % 5), &P, &O, &black);
		int v = oth_search_leaf(P, O, &m, &nodes, leaf);
		assert_int_equal(sc[i], v);
		assert_int_equal(mv[i], m);
	}
	free(L);
	free(S);
	free(pos);
	free(sc);
	free(mv);
}

static void test_warp_vote(void **state)
{
	(void)state;
	run_warp(2, 0, 16, 4, (long)(300 * scale()));
	run_warp(2, OTH_STEP_FASTGEN | OTH_STEP_FFONCE, 8, 6,
		 (long)(300 * scale()));
	run_warp(3, OTH_STEP_FASTGEN | OTH_STEP_FFONCE, 32, 1,
		 (long)(300 * scale()));
	run_warp(2, OTH_STEP_FASTGEN | OTH_STEP_KEYSORT, 24, 6,
		 (long)(300 * scale()));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_moves_fast),
		cmocka_unit_test(test_step_vs_search),
		cmocka_unit_test(test_warp_vote),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
