/* othello_last.h - exact null-window solvers for the last 1 to 4 empty
 * squares, without move generation: each empty square is tried directly
 * (a move is legal when it flips something), in parity order (squares of
 * quadrants with an odd number of empties first), and a child's value
 * comes straight from the next smaller solver.
 *
 * Every solver takes the position (P to move), a null window (alpha,
 * alpha + 1) and the empty squares in the order to try them, and returns
 * a fail-soft value: > alpha means the score is at least the value, <=
 * alpha at most. oth_last1n is exact. Nodes: one per call of the 2-, 3-
 * and 4-empty solvers (the 1-empty count is a leaf, not a node).
 *
 * Threads: pure functions of their arguments.
 */
#ifndef GPUD_OTHELLO_LAST_H
#define GPUD_OTHELLO_LAST_H

#include "othello.h"

/* Quadrant (0..3) of a square: column >= 4 is bit 0, row >= 4 bit 1. */
static inline int oth_quadrant(int sq)
{
	return ((sq >> 2) & 1) | ((sq >> 4) & 2);
}

/* Exact score with one empty square x. */
static inline int oth_last1n(uint64_t P, uint64_t O, int x)
{
	int p = oth_popcount(P);
	int n = oth_popcount(oth_flips(P, O, x));

	if (n)
		return 2 * (p + n + 1) - 64;
	n = oth_popcount(oth_flips(O, P, x));
	if (n)
		return 2 * (p - n) - 64;
	return p > 31 ? 2 * p - 62 : 2 * p - 64; /* p + o = 63: no draw */
}

static inline int oth_last2(uint64_t P, uint64_t O, int alpha, int x1,
			    int x2, uint64_t *nodes)
{
	uint64_t f;
	int best = -66, v;

	(*nodes)++;
	if ((f = oth_flips(P, O, x1))) {
		best = -oth_last1n(O & ~f, P | f | (1ull << x1), x2);
		if (best > alpha)
			return best;
	}
	if ((f = oth_flips(P, O, x2))) {
		v = -oth_last1n(O & ~f, P | f | (1ull << x2), x1);
		return v > best ? v : best;
	}
	if (best > -66)
		return best;
	/* P passes: the opponent plays, P's value is the smaller. */
	if ((f = oth_flips(O, P, x1))) {
		best = oth_last1n(P & ~f, O | f | (1ull << x1), x2);
		if (best <= alpha)
			return best;
	} else {
		best = 66;
	}
	if ((f = oth_flips(O, P, x2))) {
		v = oth_last1n(P & ~f, O | f | (1ull << x2), x1);
		return v < best ? v : best;
	}
	if (best < 66)
		return best;
	return oth_final_score(P, O);
}

static inline int oth_last3(uint64_t P, uint64_t O, int alpha, int x1,
			    int x2, int x3, int passed, uint64_t *nodes)
{
	uint64_t f;
	int best = -66, v;

	(*nodes)++;
	if ((f = oth_flips(P, O, x1))) {
		best = -oth_last2(O & ~f, P | f | (1ull << x1), -alpha - 1, x2,
				  x3, nodes);
		if (best > alpha)
			return best;
	}
	if ((f = oth_flips(P, O, x2))) {
		v = -oth_last2(O & ~f, P | f | (1ull << x2), -alpha - 1, x1,
			       x3, nodes);
		if (v > best && (best = v) > alpha)
			return best;
	}
	if ((f = oth_flips(P, O, x3))) {
		v = -oth_last2(O & ~f, P | f | (1ull << x3), -alpha - 1, x1,
			       x2, nodes);
		if (v > best)
			best = v;
	}
	if (best > -66)
		return best;
	if (passed)
		return -oth_final_score(O, P);
	return -oth_last3(O, P, -alpha - 1, x1, x2, x3, 1, nodes);
}

static inline int oth_last4(uint64_t P, uint64_t O, int alpha, int x1,
			    int x2, int x3, int x4, int passed,
			    uint64_t *nodes)
{
	uint64_t f;
	int best = -66, v;

	(*nodes)++;
	if ((f = oth_flips(P, O, x1))) {
		best = -oth_last3(O & ~f, P | f | (1ull << x1), -alpha - 1, x2,
				  x3, x4, 0, nodes);
		if (best > alpha)
			return best;
	}
	if ((f = oth_flips(P, O, x2))) {
		v = -oth_last3(O & ~f, P | f | (1ull << x2), -alpha - 1, x1,
			       x3, x4, 0, nodes);
		if (v > best && (best = v) > alpha)
			return best;
	}
	if ((f = oth_flips(P, O, x3))) {
		v = -oth_last3(O & ~f, P | f | (1ull << x3), -alpha - 1, x1,
			       x2, x4, 0, nodes);
		if (v > best && (best = v) > alpha)
			return best;
	}
	if ((f = oth_flips(P, O, x4))) {
		v = -oth_last3(O & ~f, P | f | (1ull << x4), -alpha - 1, x1,
			       x2, x3, 0, nodes);
		if (v > best)
			best = v;
	}
	if (best > -66)
		return best;
	if (passed)
		return -oth_final_score(O, P);
	return -oth_last4(O, P, -alpha - 1, x1, x2, x3, x4, 1, nodes);
}

/* The 4-empty null-window solver from a bare position (exactly 4 empty
 * squares): the squares sorted by parity. With quadrant counts 1+3 or
 * 1+1+2 the lone squares come first; 2+2 and 4 keep square order. */
static inline int oth_solve4(uint64_t P, uint64_t O, int alpha,
			     uint64_t *nodes)
{
	uint64_t E = ~(P | O);
	int x[4], q[4], cnt[4] = {0, 0, 0, 0}, k = 0;

	for (int i = 0; i < 4; i++) {
		x[i] = oth_ctz(E);
		E &= E - 1;
		q[i] = oth_quadrant(x[i]);
		cnt[q[i]]++;
	}
	int s[4];
	for (int i = 0; i < 4; i++)
		if (cnt[q[i]] & 1)
			s[k++] = x[i];
	for (int i = 0; i < 4; i++)
		if (!(cnt[q[i]] & 1))
			s[k++] = x[i];
	return oth_last4(P, O, alpha, s[0], s[1], s[2], s[3], 0, nodes);
}

#endif
