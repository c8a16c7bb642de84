/* othello_flat.h - the search of oth_search_shallow (othello_search.h)
 * cut into flips, the form the CUDA kernel runs (othello.cu): each step
 * of a lane computes one oth_flips (or, at a node of OTH_FF_MIN or more
 * empties, one move generation) and then the cheap bookkeeping that says
 * what the next flip is.
 *
 * Why: one thread per position, a warp's lanes are at different nodes; a
 * recursive-style loop (a leaf solve here, a frame expansion there) runs
 * each kind of node with the few lanes that are at one, about 6 of 32
 * threads per instruction (bench/othello.md). Here every lane's step is
 * the same flip, at one call site, so the flip, most of a step's
 * instructions, runs with every live lane of the warp.
 *
 * What changes against oth_search_shallow: a node with 2..OTH_FF_MIN-1
 * empties (including the ones oth_solve2 solves) is a frame that scans its
 * empty squares next to an opponent disc in move order and plays the first
 * that flips something (OTH_FLAT_SCAN), instead of generating its moves
 * first; a node with one empty evaluates its last square in one or two
 * flips (oth_last1_at). The move order is the same (a scan visits the
 * legal moves in oth_pick's parity order, ascending squares at 2 empties
 * as oth_solve2), passes are found when a scan finds nothing, and nodes
 * are counted where oth_search_shallow counts them: same tree, answers and
 * node count. Nodes of OTH_FF_MIN or more empties, and the root, generate
 * their moves (op EXPAND) and sort them by fastest-first keys (op KEYS,
 * computed by the whole warp in othello.cu, or oth_flat_keys on the host).
 */
#ifndef GPUD_OTHELLO_FLAT_H
#define GPUD_OTHELLO_FLAT_H

#include "othello_search.h"

/* A frame's fastest-first row (e >= OTH_FF_MIN empties). */
#define OTH_FF_ROW(S, f)                                                   \
	((S)->ff[oth_popcount(~((f)->P | (f)->O)) - OTH_FF_MIN])
#define OTH_FF_ROWS (OTH_STACK - OTH_FF_MIN > 0 ? OTH_STACK - OTH_FF_MIN : 1)

/* Legal moves, as oth_moves, with each direction's run grown by doubling:
 * one step, two steps, then two more steps of two (runs are at most six
 * long); the opposite direction shares the pairs-of-opponent-discs mask
 * (pre >> d is O & (O >> d)). About 29 operations per direction pair
 * instead of 38. The edge masks do what they do in oth_moves: every
 * square of a non-vertical run is in columns B..G, so no shift of one run
 * square to the next wraps a row. */
OTH_HD uint64_t oth_moves_fast(uint64_t P, uint64_t O)
{
	const uint64_t inner = O & 0x7e7e7e7e7e7e7e7eull;
	uint64_t moves = 0, fl, fr, pl, pr;

#define OTH_DIR2(D, M)                                                     \
	fl = (M) & (P << (D));                                             \
	fr = (M) & (P >> (D));                                             \
	fl |= (M) & (fl << (D));                                           \
	fr |= (M) & (fr >> (D));                                           \
	pl = (M) & ((M) << (D));                                           \
	pr = pl >> (D);                                                    \
	fl |= pl & (fl << (2 * (D)));                                      \
	fr |= pr & (fr >> (2 * (D)));                                      \
	fl |= pl & (fl << (2 * (D)));                                      \
	fr |= pr & (fr >> (2 * (D)));                                      \
	moves |= (fl << (D)) | (fr >> (D));
	OTH_DIR2(1, inner)
	OTH_DIR2(8, O)
	OTH_DIR2(7, inner)
	OTH_DIR2(9, inner)
#undef OTH_DIR2
	return moves & ~(P | O);
}

/* The fastest-first key of move sq, as oth_pick computes it, as key * 64
 * + square (positive: the key is at least -3), so that keys are unique
 * per frame and sorting them gives oth_pick's order. */
OTH_HD int oth_ff_key(uint64_t P, uint64_t O, int sq)
{
	uint64_t f = oth_flips(P, O, sq);
	uint64_t om = oth_moves_fast(O & ~f, P | f | (1ull << sq));
	int k = oth_popcount(om) * 4 + oth_popcount(om & OTH_CORNERS) * 2 -
		(int)((OTH_CORNERS >> sq) & 1) * 3;
	return (k + 8) * 64 + sq;
}

/* What a lane's next step does. TRY: oth_flips(A, B, sq), the move sq of
 * the top frame. LAST_P / LAST_O: the one-empty node below the top frame,
 * (A, B) its board, flips of its player / of its opponent (A and B
 * swapped) at sq. EXPAND: oth_moves(A, B) of the node below the top
 * frame, with the window (alpha, beta). RET: v is the value of the node
 * below the top frame. NEXT: the top frame tries its next move. KEYS: the
 * top frame waits for its sorted keys. DONE: v and mv are the
 * position's score and best move. IDLE: no position left (the kernel's
 * lanes). The first three compute a flip, EXPAND a move generation, RET
 * and NEXT nothing: they are what a step left over (a step takes at most
 * `parts` RETs and NEXTs, so that no lane keeps its warp waiting through
 * a long return up the stack). */
enum { OTH_FLAT_TRY, OTH_FLAT_LAST_P, OTH_FLAT_LAST_O, OTH_FLAT_EXPAND,
       OTH_FLAT_RET, OTH_FLAT_NEXT, OTH_FLAT_KEYS, OTH_FLAT_DONE,
       OTH_FLAT_IDLE };

/* fframe.last of a frame that scans its empties (moves: the squares not
 * yet tried, legal or not, oth_flat_scan_set), in oth_pick's order, or at 2 empties in
 * ascending order (oth_solve2's). Else the next index into its sorted
 * row, or -1 (oth_pick on its legal moves). */
#define OTH_FLAT_SCAN (-2)
#define OTH_FLAT_SCAN2 (-3)

/* A frame: oth_frame (othello_search.h) plus last (above) and par, the
 * parity mask of a scanning frame (oth_parity_mask of its empties,
 * computed once). 40 bytes. */
struct oth_fframe {
	uint64_t P, O, moves, par;
	int8_t alpha, beta, best, bm, cur, neg;
	int16_t last;
};

struct oth_fstack {
	struct oth_fframe st[OTH_STACK];
	uint16_t ff[OTH_FF_ROWS][OTH_STACK];
};

/* A lane. The top frame (depth sp; -1: none yet) is kept here, in
 * registers on the device: a step reads and writes it without touching
 * the stack. The frames below it are in the stack. */
struct oth_flat {
	struct oth_fframe top;
	uint64_t A, B;
	unsigned n;
	int sp, sq, op, alpha, beta, v, mv;
};

OTH_HD void oth_flat_start(struct oth_flat *F, uint64_t P, uint64_t O)
{
	F->A = P;
	F->B = O;
	F->sp = -1;
	F->alpha = -66;
	F->beta = 65;
	F->op = OTH_FLAT_EXPAND;
}

/* The heavy part of a step: what oth_flat_after takes as x. */
OTH_HD uint64_t oth_flat_compute(const struct oth_flat *F)
{
	if (F->op < OTH_FLAT_EXPAND)
		return oth_flips(F->A, F->B, F->sq);
	return F->op == OTH_FLAT_EXPAND ? oth_moves_fast(F->A, F->B) : 0;
}

/* The next move to try of the frame f (moves not empty), taken out of
 * moves. A scan's order is oth_pick's below OTH_FF_MIN empties. */
OTH_HD int oth_flat_pick(struct oth_fstack *S, struct oth_fframe *f)
{
	int sq;

	if (f->last >= 0) {
		sq = OTH_FF_ROW(S, f)[f->last++];
	} else if (f->last == OTH_FLAT_SCAN) {
		sq = oth_pick_parity(f->moves, f->par);
	} else if (f->last == OTH_FLAT_SCAN2) {
		sq = oth_ctz(f->moves);
	} else {
		sq = oth_pick(f->P, f->O, f->moves);
	}
	f->moves &= ~(1ull << sq);
	return sq;
}

/* The squares a scan of (P to move, O) tries: the empties next to a disc
 * of O (8 directions; the masks keep a shift from wrapping between rows).
 * No other square can be a move: the same moves in the same order as a
 * scan of every empty, fewer failed tries. */
OTH_HD uint64_t oth_flat_scan_set(uint64_t P, uint64_t O)
{
	uint64_t E = ~(P | O);
	uint64_t h = O | ((O << 1) & 0xfefefefefefefefeull) |
		     ((O >> 1) & 0x7f7f7f7f7f7f7f7full);

	return E & (h | (h << 8) | (h >> 8));
}

/* A new top frame: the old one goes to the stack. */
OTH_HD void oth_flat_push(struct oth_flat *F, struct oth_fstack *S,
			  uint64_t P, uint64_t O, uint64_t moves, int alpha,
			  int beta, int neg, int last)
{
	struct oth_fframe *t = &F->top;

	if (F->sp >= 0)
		S->st[F->sp] = *t;
	F->sp++;
	t->P = P;
	t->O = O;
	t->moves = moves;
	t->par = last == OTH_FLAT_SCAN ? oth_parity_mask(~(P | O)) : 0;
	t->alpha = (int8_t)alpha;
	t->beta = (int8_t)beta;
	t->best = -66;
	t->bm = F->sp == 0 && neg ? OTHELLO_MOVE_PASS : OTHELLO_MOVE_NONE;
	t->neg = (int8_t)neg;
	t->last = (int16_t)last;
}

/* RET: v (F->v), the value of the node below the top frame, goes into the
 * top frame; on a cutoff or after its last move the frame is done and
 * popped, and its own value is the next RET. */
OTH_HD void oth_flat_ret(struct oth_flat *F, struct oth_fstack *S)
{
	struct oth_fframe *t = &F->top;
	int val = -F->v;

	OTH_FRAME_TAKE(t, val, t->cur, F->sp == 0);
	if (t->alpha >= t->beta || !t->moves) {
		F->v = t->neg ? -t->best : t->best;
		if (F->sp == 0) {
			F->mv = t->bm;
			F->op = OTH_FLAT_DONE;
		} else {
			*t = S->st[--F->sp];
		}
	} else {
		F->op = OTH_FLAT_NEXT;
	}
}

/* NEXT: the top frame's next move (TRY); a scan that found no move passes
 * (NEXT again, on the swapped board); one that tried every square is
 * done: popped, its value the next RET. */
OTH_HD void oth_flat_next(struct oth_flat *F, struct oth_fstack *S)
{
	struct oth_fframe *t = &F->top;

	if (t->moves) {
		F->A = t->P;
		F->B = t->O;
		F->sq = oth_flat_pick(S, t);
		F->op = OTH_FLAT_TRY;
	} else if (t->best <= -66 && !t->neg) {
		uint64_t u = t->P;
		int8_t a = t->alpha;
		t->P = t->O;
		t->O = u;
		t->alpha = (int8_t)-t->beta;
		t->beta = (int8_t)-a;
		t->neg = 1;
		t->moves = oth_flat_scan_set(t->P, t->O);
		if (t->last == OTH_FLAT_SCAN2) /* oth_solve2's count */
			F->n++;
	} else { /* its value, or neither side could move */
		F->v = t->best > -66 ? (t->neg ? -t->best : t->best)
				     : oth_final_score(t->O, t->P);
		*t = S->st[--F->sp];
		F->op = OTH_FLAT_RET;
	}
}

/* The bookkeeping of a step, x being oth_flat_compute's result: leaves
 * the lane at its next op. First the op's own outcome, then `parts`
 * times (a constant) at most one RET and one NEXT; what is left is the
 * next step's op. Structured on purpose, each part once per pass: lanes
 * that reach a part from different ops run it together (with jumps
 * between them the compiler ran the same code once per group of lanes
 * that came by a different path, 2-3 threads per instruction, profiled),
 * and no lane's long return up the stack holds its warp. */
OTH_HD void oth_flat_after(struct oth_flat *F, struct oth_fstack *S,
			   uint64_t x, int parts)
{
	struct oth_fframe *t = &F->top;
	int v = F->v, op = F->op;

	F->op = OTH_FLAT_RET; /* unless the op says otherwise: v goes up */
	if (op == OTH_FLAT_EXPAND) {
		uint64_t P = F->A, O = F->B, m = x;
		int alpha = F->alpha, beta = F->beta, neg = 0;
		F->n++;
		if (!m) {
			m = oth_moves_fast(O, P);
			if (m) { /* a pass: the opponent moves on this board */
				uint64_t u = P; P = O; O = u;
				int a = alpha; alpha = -beta; beta = -a;
				neg = 1;
			}
		}
		if (!m) { /* neither side can move */
			v = oth_final_score(P, O);
			if (F->sp < 0) {
				F->v = v;
				F->mv = OTHELLO_MOVE_NONE;
				F->op = OTH_FLAT_DONE;
				return;
			}
		} else {
			int keys = oth_popcount(~(P | O)) >= OTH_FF_MIN &&
				   (m & (m - 1));
			oth_flat_push(F, S, P, O, m, alpha, beta, neg,
				      keys ? 0 : -1);
			F->op = keys ? OTH_FLAT_KEYS : OTH_FLAT_NEXT;
		}
	} else if (op == OTH_FLAT_TRY) {
		if (!x) {
			F->op = OTH_FLAT_NEXT;
		} else { /* enter the node the move leads to */
			int sq = F->sq, a = t->alpha;
			uint64_t P = t->O & ~x, O = t->P | x | (1ull << sq);
			if (F->sp == 0) /* the root rule */
				a = t->neg || sq > t->bm ? t->best
							 : t->best - 1;
			t->cur = (int8_t)sq;
			int alpha = -t->beta, beta = -a;
			int e = oth_popcount(~(P | O));
			F->A = P;
			F->B = O;
			if (e >= OTH_FF_MIN) {
				F->alpha = alpha;
				F->beta = beta;
				F->op = OTH_FLAT_EXPAND;
			} else {
				F->n++;
				if (e == 1) {
					F->sq = oth_ctz(~(P | O));
					F->op = OTH_FLAT_LAST_P;
				} else if (e == 0) {
					v = oth_final_score(P, O);
				} else {
					oth_flat_push(F, S, P, O,
						      oth_flat_scan_set(P, O),
						      alpha, beta, 0,
						      e == 2 ? OTH_FLAT_SCAN2
							     : OTH_FLAT_SCAN);
					F->op = OTH_FLAT_NEXT;
				}
			}
		}
	} else if (op == OTH_FLAT_LAST_P) {
		if (x) {
			v = 2 * (oth_popcount(F->A) + oth_popcount(x) + 1) - 64;
		} else { /* the opponent's flips on the same square */
			uint64_t u = F->A; F->A = F->B; F->B = u;
			F->op = OTH_FLAT_LAST_O;
		}
	} else if (op == OTH_FLAT_LAST_O) { /* (A, B): the opponent's side */
		int p = oth_popcount(F->B), k = oth_popcount(x);
		if (k)
			v = 2 * (p - k) - 64;
		else /* p + o = 63: the empty goes to the winner */
			v = p > 31 ? 2 * p - 62 : 2 * p - 64;
	} else if (op == OTH_FLAT_NEXT) {
		F->op = OTH_FLAT_NEXT;
	}
	F->v = v;
	OTH_UNROLL_ALL
	for (int k = 0; k < parts; k++) {
		if (F->op == OTH_FLAT_RET)
			oth_flat_ret(F, S);
		if (F->op == OTH_FLAT_NEXT)
			oth_flat_next(F, S);
	}
}

/* After op KEYS, the top frame's row sorted: its first move (TRY). */
OTH_HD void oth_flat_resume(struct oth_flat *F, struct oth_fstack *S)
{
	struct oth_fframe *t = &F->top;

	F->A = t->P;
	F->B = t->O;
	F->sq = oth_flat_pick(S, t);
	F->op = OTH_FLAT_TRY;
}

/* Op KEYS on the host: the top frame's moves sorted by their keys into
 * its row (insertion sort), then its first move. othello.cu does this for
 * a warp's lanes together (oth_warp_keys); the keys, unique per frame,
 * give one order. */
OTH_HD void oth_flat_keys(struct oth_flat *F, struct oth_fstack *S)
{
	struct oth_fframe *t = &F->top;
	uint16_t *row = OTH_FF_ROW(S, t);
	int n = 0;

	for (uint64_t m = t->moves; m; m &= m - 1) {
		int k = oth_ff_key(t->P, t->O, oth_ctz(m));
		int r = n++;
		for (; r > 0 && row[r - 1] > k; r--)
			row[r] = row[r - 1];
		row[r] = (uint16_t)k;
	}
	for (int r = 0; r < n; r++)
		row[r] &= 63;
	oth_flat_resume(F, S);
}

/* The whole search of one position by flat steps, the host's reference of
 * the kernel: same answers and nodes as oth_search_shallow. */
OTH_HD int oth_search_flat(struct oth_fstack *S, uint64_t P, uint64_t O,
			   int *ret_move, uint64_t *nodes)
{
	struct oth_flat F;

	F.n = 0;
	oth_flat_start(&F, P, O);
	while (F.op != OTH_FLAT_DONE) {
		if (F.op == OTH_FLAT_KEYS)
			oth_flat_keys(&F, S);
		else
			oth_flat_after(&F, S, oth_flat_compute(&F), 1);
	}
	*ret_move = F.mv;
	*nodes += F.n;
	return F.v;
}

#endif
