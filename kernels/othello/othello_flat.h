/* othello_flat.h - the search of oth_search_leaf (leaf 2) cut into flips:
 * each step of a lane computes one oth_flips (or, at a node of
 * OTH_FF_MIN or more empties, one move generation) and then the cheap
 * bookkeeping that says what the next flip is.
 *
 * Why: in the stepped search (othello_step.h) a warp's lanes run
 * different code in every round (a leaf solve with one to six flips, a
 * frame step with a move generation and a flip), so a warp instruction
 * ran with about 6 of its 32 threads (bench/othello.md, round 5). Here
 * every lane's step is the same flip, at one call site, so the flip, most
 * of a step's instructions, runs with every live lane of the warp.
 *
 * What changes against oth_lane_frame: a node with 2..OTH_FF_MIN-1 empties
 * (including the ones oth_solve2 solved) is a frame that scans its empty
 * squares in move order and plays the first that flips something
 * (OTH_FLAT_SCAN), instead of generating its moves first; a node with one
 * empty evaluates its last square in one or two flips (oth_last1_at). The
 * move order is the same (a scan visits the legal moves in oth_pick's
 * parity order, ascending squares at 2 empties as oth_solve2), passes are
 * found when a scan finds nothing, and nodes are counted where
 * oth_search_leaf(leaf 2) counts them: same tree, answers and node count.
 * Nodes of OTH_FF_MIN or more empties, and the root, generate their moves
 * (op EXPAND) and sort them by fastest-first keys (op KEYS, computed by the
 * whole warp in othello.cu, or oth_flat_keys on the host).
 */
#ifndef GPUD_OTHELLO_FLAT_H
#define GPUD_OTHELLO_FLAT_H

#include "othello_step.h"

/* What a lane's next step does. TRY: oth_flips(A, B, sq), the move sq of
 * the top frame. LAST_P / LAST_O: the one-empty node below the top frame,
 * (A, B) its board, flips of its player / of its opponent (A and B
 * swapped) at sq. EXPAND: oth_moves(A, B) of the node below the top
 * frame, with the window (alpha, beta). RET: v is the value of the node
 * below the top frame. NEXT: the top frame tries its next move. KEYS: the
 * top frame waits for its sorted keys. WAIT: the root is done, the root
 * moves given to other lanes are not (the tail, below). DONE: v and mv
 * are the position's score and best move. The first three compute a flip, EXPAND a move
 * generation, RET and NEXT nothing: they are what a step left over (a
 * step takes at most one RET and one NEXT, so that no lane keeps its warp
 * waiting through a long return up the stack). */
enum { OTH_FLAT_TRY, OTH_FLAT_LAST_P, OTH_FLAT_LAST_O, OTH_FLAT_EXPAND,
       OTH_FLAT_RET, OTH_FLAT_NEXT, OTH_FLAT_KEYS, OTH_FLAT_DONE,
       OTH_FLAT_IDLE, OTH_FLAT_WAIT };

/* Options of the bookkeeping (oth_flat_after's opt, a constant):
 *   OTH_FLAT_TAIL  a frame whose moves went out as jobs waits for them
 *                  before it returns (the tail, below);
 *   OTH_FLAT_ADJ   a scan tries only the empties next to a disc of the
 *                  side not to move (no other square can be a move): the
 *                  same moves in the same order, fewer failed tries. */
#define OTH_FLAT_TAIL 1
#define OTH_FLAT_ADJ 2

/* fframe.last of a frame that scans its empties (moves: the squares not
 * yet tried, legal or not), in oth_pick's order, or at 2 empties in
 * ascending order (oth_solve2's). Else the next index into its sorted
 * row, or -1 (oth_pick on its legal moves). */
#define OTH_FLAT_SCAN (-2)
#define OTH_FLAT_SCAN2 (-3)

/* A frame: oth_sframe plus par, the parity mask of a scanning frame
 * (oth_parity_mask of its empties, computed once). 40 bytes. */
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
	/* The tail (below): the job slots holding this lane's moves, the
	 * depths of the frames they belong to (a bit each), the slot the lane
	 * solves (-1: its own position), the frame it can give a move of. */
	unsigned mine, jdm;
	int job, post;
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

/* The squares a scan of (P to move, O) tries: the empties, with
 * OTH_FLAT_ADJ only those next to a disc of O (8 directions; the masks
 * keep a shift from wrapping between rows). */
OTH_HD uint64_t oth_flat_scan_set(uint64_t P, uint64_t O, int opt)
{
	uint64_t E = ~(P | O);

	if (opt & OTH_FLAT_ADJ) {
		uint64_t h = O | ((O << 1) & 0xfefefefefefefefeull) |
			     ((O >> 1) & 0x7f7f7f7f7f7f7f7full);
		E &= h | (h << 8) | (h >> 8);
	}
	return E;
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
 * popped, and its own value is the next RET. With the tail (below), a
 * frame whose moves are out as jobs waits for them first. */
OTH_HD void oth_flat_ret(struct oth_flat *F, struct oth_fstack *S, int opt)
{
	struct oth_fframe *t = &F->top;
	int val = -F->v;

	OTH_FRAME_TAKE(t, val, t->cur, F->sp == 0);
	if (t->alpha >= t->beta || !t->moves) {
		if ((opt & OTH_FLAT_TAIL) && ((F->jdm >> F->sp) & 1)) {
			F->op = OTH_FLAT_WAIT; /* its jobs first */
			return;
		}
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
OTH_HD void oth_flat_next(struct oth_flat *F, struct oth_fstack *S, int opt)
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
		t->moves = oth_flat_scan_set(t->P, t->O, opt);
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
 * times (a constant) at most one RET and one NEXT (opt: OTH_FLAT_TAIL,
 * OTH_FLAT_ADJ); what is left is the next step's op. Structured on purpose, each part once per pass: lanes
 * that reach a part from different ops run it together (with jumps
 * between them the compiler ran the same code once per group of lanes
 * that came by a different path, 2-3 threads per instruction, profiled),
 * and no lane's long return up the stack holds its warp. */
OTH_HD void oth_flat_after(struct oth_flat *F, struct oth_fstack *S,
			   uint64_t x, int parts, int opt)
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
						      oth_flat_scan_set(P, O,
									opt),
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
			oth_flat_ret(F, S, opt);
		if (F->op == OTH_FLAT_NEXT)
			oth_flat_next(F, S, opt);
	}
}

/* Op KEYS on the host: the top frame's moves sorted by their keys (as
 * oth_lane_keys), then its first move. othello.cu does this for a warp's
 * lanes together. */
OTH_HD void oth_flat_resume(struct oth_flat *F, struct oth_fstack *S)
{
	struct oth_fframe *t = &F->top;

	F->A = t->P;
	F->B = t->O;
	F->sq = oth_flat_pick(S, t);
	F->op = OTH_FLAT_TRY;
}

OTH_HD void oth_flat_keys(struct oth_flat *F, struct oth_fstack *S)
{
	struct oth_fframe *t = &F->top;
	uint16_t *row = OTH_FF_ROW(S, t);
	int n = 0;

	for (uint64_t m = t->moves; m; m &= m - 1) {
		int k = oth_ff_key(t->P, t->O, oth_ctz(m), OTH_STEP_FASTGEN);
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
 * the kernel: same answers and nodes as oth_search_leaf(leaf 2). opt:
 * OTH_FLAT_ADJ or 0 (a search alone has no jobs). */
OTH_HD int oth_search_flat(struct oth_fstack *S, uint64_t P, uint64_t O,
			   int *ret_move, uint64_t *nodes, int opt)
{
	struct oth_flat F;

	F.n = 0;
	oth_flat_start(&F, P, O);
	while (F.op != OTH_FLAT_DONE) {
		if (F.op == OTH_FLAT_KEYS)
			oth_flat_keys(&F, S);
		else
			oth_flat_after(&F, S, oth_flat_compute(&F), 1, opt);
	}
	*ret_move = F.mv;
	*nodes += F.n;
	return F.v;
}

/* ---- the tail ------------------------------------------------------------
 * When the positions run out, lanes go idle while a few finish the
 * hardest positions alone (bench/othello.md, rounds 5 and 6: about 0.1 s
 * of a 1.1 M batch). Here an idle lane takes a move of a frame that
 * another lane of its warp is still searching, as a job: the position
 * after that move, searched from scratch with the full window (its exact
 * value). The owner gives moves of its shallowest frame of OTH_FF_MIN or
 * more empties with moves left (their moves are legal ones, the root
 * first); when a frame is done with its own moves (or cut off) it waits
 * for its jobs and takes their values as it takes a child's:
 * at the root the greatest value and the lowest square on ties, below it
 * the greatest value into best and alpha. An exact value is a valid
 * bound wherever a fail-soft value is, so the answers are the same. A lane
 * solving a job owns the job's moves in turn, so a hard position spreads
 * over the warp.
 *
 * The board is per warp (shared memory on the device). Each round the
 * warp computes its uniform inputs (oth_tail_plan), then every lane claims
 * or posts with oth_tail_lane and one lane updates the masks
 * (oth_tail_masks). A move is posted only for a lane that is idle and will
 * claim it next round, so every posted job gets solved and no owner waits
 * forever. */
#define OTH_JOBS 32

struct oth_jobs {
	uint64_t P[OTH_JOBS], O[OTH_JOBS];
	int8_t val[OTH_JOBS]; /* the job's exact value, its mover's side */
	uint8_t sq[OTH_JOBS], depth[OTH_JOBS]; /* the move, its frame's depth */
	unsigned posted, taken, done;
};

/* What a warp agrees on before its lanes claim and post: the idle lanes,
 * the lanes that post (the first that can), the job slots to be claimed
 * (the first idle lanes take them in lane order) and the slots to be
 * posted into (the posting lanes fill them in lane order). */
struct oth_tail_round {
	unsigned idle, posters, claimed, filled;
};

/* The k-th (from 0) set bit of m; m has more than k. */
OTH_HD int oth_nth_bit(unsigned m, int k)
{
	for (; k > 0; k--)
		m &= m - 1;
	return oth_ctz(m);
}

/* The first k set bits of m. */
OTH_HD unsigned oth_first_bits(unsigned m, int k)
{
	unsigned r = 0;

	for (; k > 0 && m; k--) {
		r |= m & (0u - m);
		m &= m - 1;
	}
	return r;
}

/* The frame at depth d (d <= sp), by value: the top frame stays in
 * registers on the device. */
OTH_HD struct oth_fframe oth_tail_frame(const struct oth_flat *F,
					const struct oth_fstack *S, int d)
{
	return d == F->sp ? F->top : S->st[d];
}

/* The frame the lane can give a move of now (its depth; -1: none): the
 * lane is searching (not waiting for keys or jobs) and has counted at
 * least min_nodes nodes on its position or job (so that only hard ones
 * are split: a move given away is searched with the full window), the
 * frame is the shallowest with OTH_FF_MIN or more empties and a move left
 * besides the one being searched, not a root that passes (its best move is
 * the pass whatever the values). Sets F->post. */
OTH_HD int oth_tail_post_depth(struct oth_flat *F, const struct oth_fstack *S,
			       unsigned min_nodes)
{
	F->post = -1;
	if (F->op > OTH_FLAT_NEXT || F->n < min_nodes)
		return -1;
	for (int d = 0; d <= F->sp; d++) {
		struct oth_fframe r = oth_tail_frame(F, S, d);
		if (oth_popcount(~(r.P | r.O)) < OTH_FF_MIN)
			break;
		if (r.moves && !(d == 0 && r.neg)) {
			F->post = d;
			break;
		}
	}
	return F->post;
}

OTH_HD void oth_tail_plan(struct oth_tail_round *R, const struct oth_jobs *J,
			  unsigned idle, unsigned posters)
{
	unsigned avail = J->posted & ~J->taken;
	int claims = oth_popcount(idle) < oth_popcount(avail)
			     ? oth_popcount(idle)
			     : oth_popcount(avail);
	int want = oth_popcount(idle) - claims, posts = oth_popcount(posters);

	if (posts > want)
		posts = want;
	if (posts > oth_popcount(~J->posted))
		posts = oth_popcount(~J->posted);
	R->idle = idle;
	R->posters = oth_first_bits(posters, posts);
	R->claimed = oth_first_bits(avail, claims);
	R->filled = oth_first_bits(~J->posted, posts);
}

/* Lane `lane`'s part: an idle lane among the first claims its job and
 * starts it; a posting lane gives the last move in order of its frame
 * F->post (the end of a sorted row, else the highest square) to its
 * slot. */
OTH_HD void oth_tail_lane(const struct oth_tail_round *R, struct oth_jobs *J,
			  struct oth_flat *F, struct oth_fstack *S, int lane)
{
	unsigned below = (1u << lane) - 1;

	if ((R->idle >> lane) & 1) {
		int k = oth_popcount(R->idle & below);
		if (k < oth_popcount(R->claimed)) {
			int slot = oth_nth_bit(R->claimed, k);
			F->job = slot;
			oth_flat_start(F, J->P[slot], J->O[slot]);
		}
	} else if ((R->posters >> lane) & 1) {
		int d = F->post;
		struct oth_fframe r = oth_tail_frame(F, S, d);
		int slot = oth_nth_bit(R->filled,
				       oth_popcount(R->posters & below));
		int sq = r.last >= 0
				 ? OTH_FF_ROW(S, &r)[r.last +
						     oth_popcount(r.moves) - 1]
				 : oth_ctz(oth_highbit(r.moves));
		uint64_t f = oth_flips(r.P, r.O, sq);
		if (d == F->sp)
			F->top.moves &= ~(1ull << sq);
		else
			S->st[d].moves &= ~(1ull << sq);
		J->P[slot] = r.O & ~f;
		J->O[slot] = r.P | f | (1ull << sq);
		J->sq[slot] = (uint8_t)sq;
		J->depth[slot] = (uint8_t)d;
		F->mine |= 1u << slot;
		F->jdm |= 1u << d;
	}
}

/* The masks after the lanes' parts (one lane). */
OTH_HD void oth_tail_masks(const struct oth_tail_round *R, struct oth_jobs *J)
{
	J->taken |= R->claimed;
	J->posted |= R->filled;
}

/* A job done (op DONE, job >= 0): its value to the board; the lane is idle
 * again. The caller ORs the slot into J->done (one bit per lane). */
OTH_HD unsigned oth_tail_job_done(struct oth_jobs *J, struct oth_flat *F)
{
	unsigned bit = 1u << F->job;

	J->val[F->job] = (int8_t)F->v;
	F->job = -1;
	F->op = OTH_FLAT_IDLE;
	return bit;
}

/* op WAIT (the top frame is done with its own moves, some are jobs):
 * once every job of the frame is done, their values join the frame as its
 * children's do, and the frame returns: at the root the position is done,
 * below it the next step returns the frame's value (a RET of a child
 * worth exactly its best, which changes nothing). Returns the slots to
 * free (0 while waiting). */
OTH_HD unsigned oth_tail_merge(const struct oth_jobs *J, struct oth_flat *F)
{
	struct oth_fframe *t = &F->top;
	unsigned here = 0;

	for (unsigned m = F->mine; m; m &= m - 1)
		if (J->depth[oth_ctz(m)] == F->sp)
			here |= m & (0u - m);
	if ((J->done & here) != here)
		return 0;
	for (unsigned m = here; m; m &= m - 1) {
		int s = oth_ctz(m), val = -J->val[s];
		OTH_FRAME_TAKE(t, val, J->sq[s], F->sp == 0);
	}
	F->mine &= ~here;
	F->jdm &= ~(1u << F->sp);
	if (F->sp == 0) { /* a root with jobs has no pass */
		F->v = t->best;
		F->mv = t->bm;
		F->op = OTH_FLAT_DONE;
	} else {
		F->v = -t->best;
		F->op = OTH_FLAT_RET;
	}
	return here;
}

#endif
