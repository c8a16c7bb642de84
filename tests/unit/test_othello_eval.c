/* Unit tests of the move-ordering evaluation (othello_eval.c) and its
 * weights file (othello_evalw.c): the same value on all 8 symmetric
 * boards, deterministic and within +-64 discs; the fast bit gathering
 * equal to a square-by-square reading of each pattern; the committed file
 * loading into exactly the tables built in, and damaged copies refused;
 * hand positions of the right sign; and, on random positions solved
 * exactly, a smaller error than predicting 0. */
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
#include "othello/othello_eval.h"
#include "othello/othello_evalw.h"
#include "unit_main.h"

/* Square s of the board under symmetry g (0..7, as othello_evalw.c). */
static int sym_sq(int g, int s)
{
	if (g >= 4)
		s = 8 * (s & 7) + (s >> 3);
	return othello_evalw_turn(g & 3, s);
}

static uint64_t sym_board(int g, uint64_t b)
{
	uint64_t r = 0;

	for (int s = 0; s < 64; s++)
		if (b >> sym_sq(g, s) & 1)
			r |= 1ull << s;
	return r;
}

static void random_pos(uint64_t i, uint64_t *P, uint64_t *O)
{
	int black;

	oth_generate(42, i, 4 + (int)(i % 50), P, O, &black);
}

static void test_symmetric_bounded(void **state)
{
	uint64_t all = 0;

	(void)state;
	/* The square classes cover the board once, each closed under the
	 * symmetries. */
	for (int c = 0; c < OTH_EVALW_SQ; c++) {
		assert_int_equal(all & OTH_EVALW_SQ_MASK[c], 0);
		all |= OTH_EVALW_SQ_MASK[c];
		for (int g = 0; g < 8; g++)
			assert_true(sym_board(g, OTH_EVALW_SQ_MASK[c]) == OTH_EVALW_SQ_MASK[c]);
	}
	assert_true(all == ~0ull);
	for (uint64_t i = 0; i < 2000; i++) {
		uint64_t P, O;
		random_pos(i, &P, &O);
		int v = othello_eval(P, O);
		assert_int_equal(v, othello_eval(P, O));
		assert_true(v <= 64 * OTHELLO_EVAL_SCALE);
		assert_true(v >= -64 * OTHELLO_EVAL_SCALE);
		for (int g = 1; g < 8; g++)
			assert_int_equal(othello_eval(sym_board(g, P), sym_board(g, O)), v);
	}
}

/* The evaluation read square by square from the pattern list. */
static int eval_slow(uint64_t P, uint64_t O)
{
	static const int off[OTH_EVALW_NPAT] = {
		OTH_EVALW_OFF_E2X, OTH_EVALW_OFF_C3, OTH_EVALW_OFF_L2,
		OTH_EVALW_OFF_L3, OTH_EVALW_OFF_L4, OTH_EVALW_OFF_D8,
		OTH_EVALW_OFF_D7, OTH_EVALW_OFF_D6, OTH_EVALW_OFF_D5,
		OTH_EVALW_OFF_D4,
	};
	int e = 64 - oth_popcount(P | O);
	const int16_t *w = othello_eval_w[othello_eval_phase_of[e < 60 ? e : 60]];
	int v = w[OTH_EVALW_OFF_BIAS];
	int mp = oth_popcount(oth_moves(P, O)), mo = oth_popcount(oth_moves(O, P));

	for (int t = 0; t < OTH_EVALW_NPAT; t++) {
		const struct oth_evalw_pat *p = &OTH_EVALW_PATS[t];
		for (int r = 0; r < p->rots; r++) {
			int idx = 0;
			for (int k = p->n - 1; k >= 0; k--) {
				int s = othello_evalw_turn(r, p->sq[k]);
				idx = 3 * idx + (int)(P >> s & 1) + 2 * (int)(O >> s & 1);
			}
			v += w[off[t] + idx];
		}
	}
	v += w[OTH_EVALW_OFF_MOBP + (mp < 32 ? mp : 31)];
	v += w[OTH_EVALW_OFF_MOBO + (mo < 32 ? mo : 31)];
	for (int sq = 0; sq < 64; sq++) {
		int c = 0;
		while (!(OTH_EVALW_SQ_MASK[c] >> sq & 1))
			c++;
		v += (int)(P >> sq & 1) * w[OTH_EVALW_OFF_SQ + c] +
		     (int)(O >> sq & 1) * w[OTH_EVALW_OFF_SQ + OTH_EVALW_SQ + c];
	}
	return v < -1024 ? -1024 : v > 1024 ? 1024 : v;
}

static void test_fast_equals_slow(void **state)
{
	(void)state;
	assert_true(othello_eval_phases >= 1);
	for (uint64_t i = 0; i < 3000; i++) {
		uint64_t P, O;
		random_pos(i * 7 + 1, &P, &O);
		assert_int_equal(othello_eval(P, O), eval_slow(P, O));
	}
}

static uint8_t *read_weights(size_t *len)
{
	FILE *f = fopen(OTHELLO_EVAL_W_PATH, "rb");
	uint8_t *b = malloc(4u << 20);
	assert_non_null(f);
	assert_non_null(b);
	*len = fread(b, 1, 4u << 20, f);
	fclose(f);
	assert_true(*len > OTH_EVALW_HDR);
	return b;
}

static int load(const uint8_t *b, size_t len)
{
	uint8_t map[61];
	int16_t *w = NULL;
	int phases = 0;
	char err[200] = "";
	int rc = othello_evalw_load(b, len, &phases, map, &w, err, sizeof(err));

	if (rc == 0) {
		assert_int_equal(phases, othello_eval_phases);
		assert_memory_equal(map, othello_eval_phase_of, 61);
		assert_memory_equal(w, othello_eval_w,
				    sizeof(*w) * OTH_EVALW_TOTAL * (size_t)phases);
	} else {
		assert_true(err[0] != 0);
	}
	free(w);
	return rc;
}

/* The committed file is what the build turned into tables; damaged copies
 * are refused. */
static void test_weights_file(void **state)
{
	size_t len, per = othello_evalw_folded() + OTH_EVALW_TAIL;
	uint8_t *b = read_weights(&len), *c = malloc(len);

	(void)state;
	assert_non_null(c);
	assert_int_equal(len, OTH_EVALW_HDR + 2 * per * (size_t)othello_eval_phases);
	assert_int_equal(load(b, len), 0);
	assert_int_equal(load(b, len - 2), GERR_CORRUPT);      /* truncated */
	assert_int_equal(load(b, OTH_EVALW_HDR - 1), GERR_CORRUPT);
	memcpy(c, b, len);
	c[0] = 'X';                                            /* magic */
	assert_int_equal(load(c, len), GERR_CORRUPT);
	memcpy(c, b, len);
	c[8] ^= 1;                                             /* pattern set */
	assert_int_equal(load(c, len), GERR_CORRUPT);
	memcpy(c, b, len);
	c[len - 1] ^= 0x40;                                    /* a weight */
	assert_int_equal(load(c, len), GERR_CORRUPT);
	memcpy(c, b, len);
	c[24 + 30] = 200;                                      /* phase map */
	assert_int_equal(load(c, len), GERR_CORRUPT);
	memcpy(c, b, len);
	c[16] = 0;                                             /* phases */
	assert_int_equal(load(c, len), GERR_CORRUPT);
	free(c);
	free(b);
}

static uint64_t board_of(const char *rows, char who)
{
	uint64_t b = 0;

	for (int s = 0; s < 64; s++)
		if (rows[s] == who)
			b |= 1ull << s;
	return b;
}

/* The side to move (X) holds the 4 corners and most discs: ahead; the
 * same board with the colours swapped: behind. An empty board or one disc
 * (no game reaches them) still reads within the tables. */
static void test_hand_positions(void **state)
{
	static const char *boards[] = {
		"XXXXXXXX" "XXOOOOXX" "XO-OO-OX" "XOO--OOX"
		"XOO--OOX" "XO-OO-OX" "XXOOOOXX" "XXXXXXXX",
		"XXXXXXXX" "XXOOXXXX" "XO-OOX-X" "XOOX-XXX"
		"XXO--OXX" "XO-XOX-X" "XXXOOXXX" "XXXXXXXX",
		"XXXXXXXX" "XXXXXXXX" "XXXXOOXX" "XXO---XX"
		"XXO--OXX" "XXXXXXXX" "XOOOOOOX" "XXXXXXXX",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(boards) / sizeof(boards[0]); i++) {
		uint64_t X = board_of(boards[i], 'X'), O = board_of(boards[i], 'O');
		assert_true(othello_eval(X, O) > 0);
		assert_true(othello_eval(O, X) < 0);
	}
	assert_int_equal(othello_eval(0, 0), eval_slow(0, 0));
	assert_int_equal(othello_eval(1, 0), eval_slow(1, 0));
}

/* On positions the training never saw (another seed), the evaluation
 * predicts exact scores better than 0 does. */
static void test_better_than_zero(void **state)
{
	struct othello_solver *s;
	double err_eval = 0, err_zero = 0;

	(void)state;
	assert_int_equal(othello_solver_new(&s), 0);
	for (uint64_t i = 0; i < 400; i++) {
		uint64_t P, O, nodes;
		int black, move;
		oth_generate(987654321, i, 10 + (int)(i % 3), &P, &O, &black);
		int score = othello_solver_solve(s, P, O, &move, &nodes);
		double e = othello_eval(P, O) / (double)OTHELLO_EVAL_SCALE;
		err_eval += e > score ? e - score : score - e;
		err_zero += score < 0 ? -score : score;
	}
	othello_solver_free(s);
	print_message("mean |error|: eval %.2f, zero %.2f discs\n",
		      err_eval / 400, err_zero / 400);
	assert_true(err_eval < 0.8 * err_zero);
}

UNIT_MAIN(cmocka_unit_test(test_symmetric_bounded),
	cmocka_unit_test(test_fast_equals_slow),
	cmocka_unit_test(test_weights_file),
	cmocka_unit_test(test_hand_positions),
	cmocka_unit_test(test_better_than_zero))
