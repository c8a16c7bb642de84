/* othello_search.h - the shallow exact search, as inline functions that
 * compile for the host and the device: oth_search_shallow is
 * othello_solve_shallow and the CPU reference of the CUDA kernel, which
 * runs the same search cut into flips (othello_flat.h) with the move
 * order, root rule and helpers below; the GPU test checks they agree.
 *
 * Why iterative: a GPU thread has no cheap recursion (each call spills the
 * frame to local memory and the stack size must be declared); an explicit
 * stack of small frames, indexed by depth, is the same memory traffic with
 * none of the call overhead.
 *
 * The search: fail-soft negamax alpha-beta. Move order: at 7 or more
 * empties, fastest first (fewest opponent replies, corners first on ties);
 * below, parity (squares of quadrants with an odd number of empties first)
 * then a static order (corners, then edges and inner squares, then the
 * squares next to corners). A pass is handled inside the frame (the window
 * is negated and the value negated on return), so the stack depth is at
 * most the number of empties. Nodes with 2 or fewer empties go to
 * straight-line leaf solvers (oth_solve2, oth_last1_at) without a frame or
 * a move generation.
 *
 * Root rule (othello.h, "best move"): a root move on a square below the
 * best move so far is searched with the window (best - 1, 65), so a tie is
 * found exact and the lower square wins; one above with (best, 65).
 */
#ifndef GPUD_OTHELLO_SEARCH_H
#define GPUD_OTHELLO_SEARCH_H

#include "othello.h"

/* Frames needed: at most max(1, empties - 1) (a node with one or no empty
 * takes none); the kernel sets a smaller stack for its bound. */
#ifndef OTH_STACK
#define OTH_STACK (OTHELLO_SHALLOW_MAX + 1)
#endif
#ifndef OTH_FF_MIN
#define OTH_FF_MIN 7
#endif

#define OTH_CORNERS 0x8100000000000081ull
#define OTH_XC 0x42c300000000c342ull /* X and C squares */

/* A child's value val (from the frame's mover's side) taken into frame f
 * (any of the searches' frame types): at the root the best score and the
 * lowest square sq reaching it (the pass when the root passes), below it
 * the best score and alpha. */
#define OTH_FRAME_TAKE(f, val, sq, root)                                   \
	do {                                                               \
		if (root) {                                                \
			if ((val) > (f)->best ||                           \
			    ((val) == (f)->best && (sq) < (f)->bm)) {      \
				(f)->best = (int8_t)(val);                 \
				(f)->bm = (f)->neg ? OTHELLO_MOVE_PASS     \
						   : (int8_t)(sq);         \
			}                                                  \
		} else {                                                   \
			if ((val) > (f)->best)                             \
				(f)->best = (int8_t)(val);                 \
			if ((val) > (f)->alpha)                            \
				(f)->alpha = (int8_t)(val);                \
		}                                                          \
	} while (0)

struct oth_frame {
	uint64_t P, O, moves;
	int8_t alpha, beta, best, bm, cur, neg;
};

OTH_HD uint64_t oth_parity_mask(uint64_t E)
{
	uint64_t m = 0;

	if (oth_popcount(E & 0x000000000f0f0f0full) & 1)
		m |= 0x000000000f0f0f0full;
	if (oth_popcount(E & 0x00000000f0f0f0f0ull) & 1)
		m |= 0x00000000f0f0f0f0ull;
	if (oth_popcount(E & 0x0f0f0f0f00000000ull) & 1)
		m |= 0x0f0f0f0f00000000ull;
	if (oth_popcount(E & 0xf0f0f0f000000000ull) & 1)
		m |= 0xf0f0f0f000000000ull;
	return m;
}

/* The parity order's next move among `moves` (non-empty), par being the
 * parity mask of the node's empties: odd quadrants first, then corners,
 * then squares not next to a corner, lowest square first. */
OTH_HD int oth_pick_parity(uint64_t moves, uint64_t par)
{
	uint64_t m = moves & par;

	if (!m)
		m = moves;
	if (m & OTH_CORNERS)
		m &= OTH_CORNERS;
	else if (m & ~OTH_XC)
		m &= ~OTH_XC;
	return oth_ctz(m);
}

/* The next move to try among `moves` (non-empty). */
OTH_HD int oth_pick(uint64_t P, uint64_t O, uint64_t moves)
{
	uint64_t E = ~(P | O);

	if (oth_popcount(E) >= OTH_FF_MIN && (moves & (moves - 1))) {
		int best = 1000, bsq = 0;
		for (uint64_t m = moves; m; m &= m - 1) {
			int sq = oth_ctz(m);
			uint64_t f = oth_flips(P, O, sq);
			uint64_t np = P | f | (1ull << sq), no = O & ~f;
			uint64_t om = oth_moves(no, np);
			int k = oth_popcount(om) * 4 +
				oth_popcount(om & OTH_CORNERS) * 2 -
				(int)((OTH_CORNERS >> sq) & 1) * 3;
			if (k < best) {
				best = k;
				bsq = sq;
			}
		}
		return bsq;
	}
	return oth_pick_parity(moves, oth_parity_mask(E));
}

/* Leaf solvers for the last two empties: no move generation (the
 * candidate squares are the empties themselves, a move is legal when it
 * flips something), no frame; straight-line code the compiler keeps in
 * registers. Fail-soft alpha-beta like the frames above them. Each call
 * and each last-empty evaluation counts one node. */

/* One empty square sq left: play it (or the opponent does, or nobody). */
OTH_HD int oth_last1_at(uint64_t P, uint64_t O, int sq)
{
	int p = oth_popcount(P);
	int n = oth_popcount(oth_flips(P, O, sq));

	if (n)
		return 2 * (p + n + 1) - 64;
	n = oth_popcount(oth_flips(O, P, sq));
	if (n)
		return 2 * (p - n) - 64;
	/* p + o = 63: no draw; the empty goes to the winner. */
	return p > 31 ? 2 * p - 62 : 2 * p - 64;
}

/* OTH_NO_UNROLL: a loop that runs once per candidate square, with one
 * call site in it, stays a loop on the device, so that inlined code stays
 * small (instruction cache, registers); the host compiler unrolls it
 * anyway. OTH_UNROLL_ALL: a loop of a constant count, unrolled. */
#if defined(__CUDA_ARCH__)
#define OTH_NO_UNROLL _Pragma("unroll 1")
#define OTH_UNROLL_ALL _Pragma("unroll")
#else
#define OTH_NO_UNROLL
#define OTH_UNROLL_ALL
#endif

/* Two empties x1, x2, tried in that order. */
OTH_HD int oth_solve2(uint64_t P, uint64_t O, int alpha, int beta, int x1,
		      int x2, unsigned *n)
{
	int best = -66, v, pass, k;
	uint64_t f, t;

	OTH_NO_UNROLL
	for (pass = 0; pass < 2; pass++) {
		++*n;
		OTH_NO_UNROLL
		for (k = 0; k < 2; k++) {
			f = oth_flips(P, O, x1);
			if (f) {
				++*n;
				v = -oth_last1_at(O & ~f, P | f | (1ull << x1),
						  x2);
				if (v > best) {
					best = v;
					if (v >= beta)
						break;
				}
			}
			v = x1; x1 = x2; x2 = v;
		}
		if (best > -66)
			return pass ? -best : best;
		/* P passes: the opponent's turn on the same board. */
		t = P; P = O; O = t;
		v = alpha; alpha = -beta; beta = -v;
	}
	return oth_final_score(P, O); /* swapped twice: P is P again */
}

/* A node with e <= 2 empties (not the root). */
OTH_HD int oth_solve_small(uint64_t P, uint64_t O, int alpha, int beta,
			   int e, unsigned *n)
{
	if (e == 2) {
		uint64_t E = ~(P | O);
		return oth_solve2(P, O, alpha, beta, oth_ctz(E),
				  oth_ctz(E & (E - 1)), n);
	}
	++*n;
	if (e == 1) {
		uint64_t E = ~(P | O);
		return oth_last1_at(P, O, oth_ctz(E));
	}
	return oth_final_score(P, O);
}

/* Exact score and best move (root rule) of (P, O) with at most
 * OTHELLO_SHALLOW_MAX empties; *nodes is incremented per node.
 *
 * Root rule: a root move on a square above the best move so far must beat
 * the best score to matter, so it is searched with the window (best, 65);
 * one below must reach it, (best - 1, 65). A tie found that way is exact
 * (inside the window) and moves the best move to the lower square; a
 * later improvement makes every earlier move lose. */
OTH_HD int oth_search_shallow(uint64_t P0, uint64_t O0, int *ret_move,
			      uint64_t *nodes)
{
	struct oth_frame st[OTH_STACK];
	int sp = 0, v, neg;
	uint64_t P = P0, O = O0, m;
	int alpha = -66, beta = 65;
	unsigned n = 0;

	for (;;) {
		/* Enter the node (P, O, alpha, beta) at depth sp. */
		if (sp > 0) {
			int e = oth_popcount(~(P | O));
			if (e <= 2) {
				v = oth_solve_small(P, O, alpha, beta, e, &n);
				goto ret;
			}
		}
		n++;
		m = oth_moves(P, O);
		neg = 0;
		if (!m) {
			uint64_t m2 = oth_moves(O, P);
			if (!m2) {
				v = oth_final_score(P, O);
				if (sp == 0) {
					*ret_move = OTHELLO_MOVE_NONE;
					*nodes += n;
					return v;
				}
				goto ret;
			}
			uint64_t t = P; P = O; O = t;
			int a = alpha; alpha = -beta; beta = -a;
			neg = 1;
			m = m2;
		}
		{
			struct oth_frame *f = &st[sp];
			f->P = P;
			f->O = O;
			f->moves = m;
			f->alpha = (int8_t)alpha;
			f->beta = (int8_t)beta;
			f->best = -66;
			f->bm = sp == 0 && neg ? OTHELLO_MOVE_PASS
					       : OTHELLO_MOVE_NONE;
			f->neg = (int8_t)neg;
		}
	descend:
		{
			struct oth_frame *f = &st[sp];
			int sq = oth_pick(f->P, f->O, f->moves);
			uint64_t fl = oth_flips(f->P, f->O, sq);
			int a = f->alpha;
			f->moves &= ~(1ull << sq);
			f->cur = (int8_t)sq;
			P = f->O & ~fl;
			O = f->P | fl | (1ull << sq);
			if (sp == 0)
				a = f->neg || sq > f->bm ? f->best
							 : f->best - 1;
			alpha = -f->beta;
			beta = -a;
			sp++;
			continue;
		}
	ret:
		/* v is the value of the node just left, at depth sp. */
		for (;;) {
			sp--;
			struct oth_frame *f = &st[sp];
			int val = -v;
			OTH_FRAME_TAKE(f, val, f->cur, sp == 0);
			if (f->alpha >= f->beta || !f->moves) {
				v = f->neg ? -f->best : f->best;
				if (sp == 0) {
					*ret_move = f->bm;
					*nodes += n;
					return v;
				}
				continue; /* return to the parent */
			}
			goto descend;
		}
	}
}

#endif
