/* Unit tests of the move generation and flips the exact solver is built
 * with (compiled here for the solver's cpu_level, so oth_moves, oth_flips
 * and oth_moves_pot are the AVX2 versions of othello_vec.h where the
 * build has AVX2): against a square-by-square walk on every empty square
 * of 1,000,000 random boards, and against the plain 64-bit versions on
 * 4,000,000 more (every density from near-empty to full); the stable
 * discs (othello_stable.h) of both versions, and of the library's
 * oth_stable, bit for bit on random boards and on game positions at 1-30
 * empties. The solver's scores built on them are checked against minimax
 * and the shallow reference in test_othello_deep. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "othello/othello.h"
#include "othello/othello_deep.h"
#include "othello/othello_stable.h"
#include "othello_walk.h"
#include "unit_main.h"

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	r->s += MIX_GOLDEN;
	return mix64(r->s);
}

/* A random board, P & O == 0; the density varies from board to board. */
static void board(struct rng *r, uint64_t *P, uint64_t *O)
{
	uint64_t occ;

	switch (rnd(r) & 3) {
	case 0: occ = rnd(r) & rnd(r); break;
	case 1: occ = rnd(r); break;
	case 2: occ = rnd(r) | rnd(r); break;
	default: occ = rnd(r) | rnd(r) | rnd(r); break;
	}
	*P = occ & rnd(r);
	*O = occ & ~*P;
}

static void test_vs_walk(void **state)
{
	struct rng r = {11};
	uint64_t legal = 0;

	(void)state;
	for (int t = 0; t < 1000000; t++) {
		uint64_t P, O, moves = 0;
		board(&r, &P, &O);
		for (uint64_t e = ~(P | O); e; e &= e - 1) {
			int sq = oth_ctz(e);
			uint64_t f = flips_walk(P, O, sq);
			assert_true(oth_flips(P, O, sq) == f);
			if (f)
				moves |= 1ull << sq;
		}
		assert_true(oth_moves(P, O) == moves);
		legal += (uint64_t)oth_popcount(moves);
		/* Potential mobility: empty squares with an opponent disc
		 * among their up to 8 neighbours, square by square. */
		uint64_t pot = 0, got;
		for (int sq = 0; sq < 64; sq++) {
			int r0 = sq / 8, c0 = sq % 8;
			if ((P | O) >> sq & 1)
				continue;
			for (int r1 = r0 - 1; r1 <= r0 + 1; r1++)
				for (int c1 = c0 - 1; c1 <= c0 + 1; c1++)
					if (r1 >= 0 && r1 < 8 && c1 >= 0 &&
					    c1 < 8 && (O >> (8 * r1 + c1) & 1))
						pot |= 1ull << sq;
		}
		assert_true(oth_moves_pot(P, O, &got) == moves);
		assert_true(got == pot);
	}
	assert_true(legal > 1000000); /* the boards had moves to check */
}

static void test_vs_plain(void **state)
{
	struct rng r = {12};

	(void)state;
	for (int t = 0; t < 4000000; t++) {
		uint64_t P, O;
		board(&r, &P, &O);
		int sq = (int)(rnd(&r) & 63);
		assert_true(oth_moves(P, O) == oth_moves_plain(P, O));
		assert_true(oth_moves(O, P) == oth_moves_plain(O, P));
		if (!((P | O) >> sq & 1))
			assert_true(oth_flips(P, O, sq) ==
				    oth_flips_plain(P, O, sq));
	}
}

/* Edge cases: empty board, one side alone, full lines. */
static void test_edges(void **state)
{
	(void)state;
	assert_true(oth_moves(0, 0) == 0);
	assert_true(oth_moves(~0ull, 0) == 0);
	/* A1 own, B1..G1 opponent: H1 flips the whole row but not wraps. */
	uint64_t P = 1, O = 0x7eull;
	assert_true(oth_flips(P, O, 7) == 0x7eull);
	assert_true(oth_moves(P, O) == 0x80ull);
	/* Column A own at A1, opponent A2..A7: A8 flips the column. */
	P = 1;
	O = 0x0001010101010100ull;
	assert_true(oth_flips(P, O, 56) == O);
	/* H1 own, A2..G2 opponent: no wrap from H1 along the row. */
	assert_true(oth_flips(0x80ull, 0x7f00ull, 15) == 0);
	for (int sq = 0; sq < 64; sq++) {
		uint64_t p = ~(1ull << sq) & 0x8100000000000081ull;
		uint64_t o = ~(1ull << sq) & ~p;
		assert_true(oth_flips(p, o, sq) == flips_walk(p, o, sq));
	}
}

static void test_stable(void **state)
{
	struct rng r = {13};
	uint64_t some = 0;

	(void)state;
	for (int t = 0; t < 1000000; t++) {
		uint64_t P, O;
		if (t & 1) {
			int black;
			oth_generate(13, (uint64_t)t, 1 + t % 30, &P, &O,
				     &black);
		} else {
			board(&r, &P, &O);
		}
		uint64_t s = oth_stable_plain(P, O);
		assert_true(oth_stable_inline(P, O) == s);
		assert_true(oth_stable(P, O) == s);
		assert_true((s & ~P) == 0);
		some += s != 0;
	}
	assert_true(some > 100000); /* boards with stable discs were met */
}

UNIT_MAIN(cmocka_unit_test(test_edges), cmocka_unit_test(test_vs_walk),
	  cmocka_unit_test(test_vs_plain), cmocka_unit_test(test_stable))
