/* Unit tests of othello_solve_batch_window: on random positions of 8-14
 * empties (and some with the side to move passing), every window's answer
 * is the exact solve's clamped to it (score and move, canonical whatever
 * the search), the full window is othello_solve_batch to the node, a
 * narrower window searches no more nodes in total, and bad windows are
 * refused. Kept apart from the solver's own tests: any solver behind the
 * function must pass it. */
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
#include "unit_main.h"

enum { N = 120, WINDOWS = 24 };

static uint64_t rs = 17;
static uint64_t rnd(void)
{
	rs += MIX_GOLDEN;
	return mix64(rs);
}

/* Random positions of 8-14 empties; every tenth one where the side to
 * move must pass (the other side's turn in a generated position whose
 * other side has no move). */
static void positions(uint64_t *P, uint64_t *O)
{
	uint64_t j = 0;

	for (size_t i = 0; i < N; i++) {
		int black;
		oth_generate(3, i, 8 + (int)(i % 7), &P[i], &O[i], &black);
		while (i % 10 == 0 && (oth_moves(P[i], O[i]) ||
				       !oth_moves(O[i], P[i]))) {
			oth_generate(4, j++, 8 + (int)(i % 7), &O[i], &P[i],
				     &black);
		}
	}
}

static void test_window_clamped(void **state)
{
	static uint64_t P[N], O[N];
	int8_t ds[N], ws[N];
	uint8_t dm[N], wm[N];
	uint64_t dn, wn, nn = 0, exact = 0, low = 0, high = 0, passes = 0;

	(void)state;
	positions(P, O);
	assert_int_equal(othello_solve_batch(P, O, N, 1, ds, dm, &dn, NULL,
					     NULL), 0);
	for (size_t i = 0; i < N; i++)
		passes += dm[i] == OTHELLO_MOVE_PASS;
	/* The full window is the exact solve, node for node. */
	assert_int_equal(othello_solve_batch_window(P, O, N, -65, 65, 1, ws,
						    wm, &wn, NULL, NULL), 0);
	assert_memory_equal(ws, ds, N);
	assert_memory_equal(wm, dm, N);
	assert_int_equal(wn, dn);
	/* Windows round each score (null windows, odd and even bounds, one
	 * side open) and random ones: one window for all positions at a
	 * time, each answer the clamped exact one. */
	for (int t = 0; t < WINDOWS; t++) {
		int a, b;
		if (t < 2 * WINDOWS / 3) { /* about a typical score */
			int c = (int)(rnd() % 33) * 2 - 32, w = 1 + (int)(rnd() % 4);
			a = c - w;
			b = c + (t % 2 ? 1 : w);
			if (t % 7 == 0)
				a = -65;
			if (t % 11 == 0)
				b = 65;
		} else {
			a = (int)(rnd() % 130) - 65;
			b = a + 1 + (int)(rnd() % (uint64_t)(65 - a));
		}
		if (a < -65)
			a = -65;
		if (b > 65)
			b = 65;
		if (a >= b)
			continue;
		assert_int_equal(othello_solve_batch_window(P, O, N, a, b,
							    1 + t % 2, ws, wm,
							    &wn, NULL, NULL), 0);
		for (size_t i = 0; i < N; i++) {
			int8_t s = ds[i];
			uint8_t m = dm[i];
			othello_window_clamp(a, b, &s, &m);
			if (ws[i] != s || wm[i] != m)
				fail_msg("position %zu window (%d, %d): %d %d, "
					 "exact %d %d", i, a, b, ws[i], wm[i],
					 ds[i], dm[i]);
			exact += a < ds[i] && ds[i] < b;
			low += ds[i] <= a;
			high += ds[i] >= b;
		}
		nn += wn;
		/* The narrower, the fewer nodes (in total). */
		if (a > -65 || b < 65)
			assert_true(wn <= dn);
	}
	assert_true(exact > 100 && low > 100 && high > 100 && passes > 0);
	printf("window: %llu exact, %llu below, %llu above; %.2f of the "
	       "exact solve's nodes a window\n", (unsigned long long)exact,
	       (unsigned long long)low, (unsigned long long)high,
	       (double)nn / WINDOWS / (double)dn);
}

/* The null window of an even score: (s - 2, s) says s' < s or s' >= s
 * in one search; (s - 1, s + 1) gives s' == s exactly. */
static void test_null_window(void **state)
{
	static uint64_t P[N], O[N];
	int8_t ds[N], ws[N];
	uint8_t dm[N], wm[N];

	(void)state;
	positions(P, O);
	assert_int_equal(othello_solve_batch(P, O, N, 1, ds, dm, NULL, NULL,
					     NULL), 0);
	for (size_t i = 0; i < N; i++) {
		int s = ds[i];
		for (int d = -2; d <= 2; d += 2) {
			int a = s + d - 2 < -65 ? -65 : s + d - 2, b = s + d;
			if (b > 65)
				b = 65;
			if (a >= b)
				continue; /* below -64: no window */
			/* Odd positions on 2 threads: one position with
			 * every thread (the parallel root). */
			assert_int_equal(othello_solve_batch_window(&P[i], &O[i],
					 1, a, b, 1 + (int)(i & 1), &ws[i], &wm[i],
					 NULL, NULL, NULL), 0);
			assert_int_equal(ws[i], s >= b ? b : a);
			assert_int_equal(wm[i], OTHELLO_MOVE_NONE);
		}
		assert_int_equal(othello_solve_batch_window(&P[i], &O[i], 1,
				 s - 1, s + 1, 1 + (int)(i & 1), &ws[i], &wm[i],
				 NULL, NULL, NULL), 0);
		assert_int_equal(ws[i], s);
		assert_int_equal(wm[i], dm[i]);
	}
}

static void test_bad_window(void **state)
{
	uint64_t P = 0x0000000810000000ull, O = 0x0000001008000000ull;
	int8_t s;
	uint8_t m;

	(void)state;
	assert_int_equal(othello_solve_batch_window(&P, &O, 1, 4, 4, 1, &s, &m,
						    NULL, NULL, NULL),
			 GERR_INVAL);
	assert_int_equal(othello_solve_batch_window(&P, &O, 1, -66, 0, 1, &s,
						    &m, NULL, NULL, NULL),
			 GERR_INVAL);
	assert_int_equal(othello_solve_batch_window(&P, &O, 1, 0, 66, 1, &s, &m,
						    NULL, NULL, NULL),
			 GERR_INVAL);
}

UNIT_MAIN(cmocka_unit_test(test_window_clamped),
	cmocka_unit_test(test_null_window),
	cmocka_unit_test(test_bad_window))
