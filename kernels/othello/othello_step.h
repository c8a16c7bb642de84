/* othello_step.h - oth_search_leaf (othello_search.h) cut into steps, so
 * that a warp can choose which kind of step its threads run together.
 *
 * Why: one thread per position, a warp's threads are at different nodes;
 * in oth_search_leaf's loop some run the leaf solver while the others wait,
 * then the others expand a frame while the first wait. Here a thread's
 * search is a state (struct oth_lane: the stack and what comes next) and
 * two step functions: oth_lane_leaf (a node with `leaf` or fewer empties,
 * straight to the leaf solver) and oth_lane_frame (return a value up the
 * stack and descend to the next move, or expand an interior node and
 * descend to its first move). The kernel (othello.cu) votes each round
 * which of the two runs, so the leaf solver runs with many lanes at once.
 * Any order of steps gives the same search: each lane's steps depend only
 * on its own state.
 *
 * Same tree, same answers, same node count as oth_search_leaf(leaf): the
 * move order, windows and root rule are the same code paths. Options
 * (compile-time constants at every call site):
 *   OTH_STEP_FASTGEN  move generation by doubling (oth_moves_fast, 29
 *                     shifts and logic operations per direction pair
 *                     instead of 38), here and in the ordering keys;
 *   OTH_STEP_FFONCE   fastest-first keys computed once when a node with
 *                     >= OTH_FF_MIN empties is expanded (kept in the lane
 *                     as key * 64 + square), each pick the least key
 *                     above the last pick: the order oth_pick gives
 *                     (least key, lowest square on ties; the keys do not
 *                     change between picks) for k move generations per
 *                     node instead of k(k+1)/2.
 *   OTH_STEP_KEYSORT  the same keys, computed in a step of their own (state
 *                     KEYS, oth_lane_keys) and kept sorted, so each pick
 *                     is the next entry of the row: the kernel computes
 *                     the keys of all its lanes in that state together,
 *                     one move per thread (othello.cu), where a lane
 *                     alone ran its k key computations with the other
 *                     threads of its warp waiting.
 */
#ifndef GPUD_OTHELLO_STEP_H
#define GPUD_OTHELLO_STEP_H

#include "othello_search.h"

#define OTH_STEP_FASTGEN 1
#define OTH_STEP_FFONCE 2
#define OTH_STEP_KEYSORT 4

/* A frame's fastest-first row (e >= OTH_FF_MIN empties). */
#define OTH_FF_ROW(S, f)                                                   \
	((S)->ff[oth_popcount(~((f)->P | (f)->O)) - OTH_FF_MIN])

/* Legal moves, as oth_moves, with each direction's run grown by doubling:
 * one step, two steps, then two more steps of two (runs are at most six
 * long); the opposite direction shares the pairs-of-opponent-discs mask
 * (pre >> d is O & (O >> d)). The edge masks do what they do in oth_moves:
 * every square of a non-vertical run is in columns B..G, so no shift of
 * one run square to the next wraps a row. */
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

OTH_HD uint64_t oth_moves_opt(uint64_t P, uint64_t O, int opt)
{
	return (opt & OTH_STEP_FASTGEN) ? oth_moves_fast(P, O)
					: oth_moves(P, O);
}

/* A frame: oth_frame plus `last`, the last fastest-first pick (key * 64 +
 * square; -1: this frame orders by oth_pick). 32 bytes. */
struct oth_sframe {
	uint64_t P, O, moves;
	int8_t alpha, beta, best, bm, cur, neg;
	int16_t last;
};

/* Fastest-first keys of a frame with e >= OTH_FF_MIN empties: row e -
 * OTH_FF_MIN, one entry per move ending with 0xffff (a node has at most
 * e moves); with OTH_STEP_KEYSORT the row holds the moves' squares in
 * the order of their keys and `last` is the index of the next pick. */
#define OTH_FF_ROWS (OTH_STACK - OTH_FF_MIN > 0 ? OTH_STACK - OTH_FF_MIN : 1)
#define OTH_FF_END 0xffffu

enum { OTH_LANE_ENTER, OTH_LANE_RET, OTH_LANE_DONE, OTH_LANE_IDLE,
       OTH_LANE_KEYS };

/* One position's search between steps: the scalars (struct oth_lane,
 * which the device keeps in registers) and the stack (struct oth_stack,
 * indexed, so in local memory; a separate object so that it does not drag
 * the scalars there). state ENTER: the node (P, O, alpha, beta) at depth
 * sp comes next; RET: v is the value of the node just left at depth sp;
 * DONE: v is the score and mv the best move; KEYS: the frame at depth sp
 * was expanded and waits for its sorted keys. n counts nodes. */
struct oth_stack {
	struct oth_sframe st[OTH_STACK];
	uint16_t ff[OTH_FF_ROWS][OTH_STACK];
};

struct oth_lane {
	uint64_t P, O;
	unsigned n;
	int sp, alpha, beta, v, mv, state;
};

OTH_HD void oth_lane_start(struct oth_lane *L, uint64_t P, uint64_t O)
{
	L->P = P;
	L->O = O;
	L->sp = 0;
	L->alpha = -66;
	L->beta = 65;
	L->state = OTH_LANE_ENTER;
}

/* Whether the lane's next step is a leaf solve (the root never is). */
OTH_HD int oth_lane_wants_leaf(const struct oth_lane *L, int leaf)
{
	return L->state == OTH_LANE_ENTER && L->sp > 0 &&
	       oth_popcount(~(L->P | L->O)) <= leaf;
}

OTH_HD void oth_lane_leaf(struct oth_lane *L)
{
	L->v = oth_solve_small(L->P, L->O, L->alpha, L->beta,
			       oth_popcount(~(L->P | L->O)), &L->n);
	L->state = OTH_LANE_RET;
}

/* The fastest-first key of move sq, as oth_pick computes it, as key * 64
 * + square (positive: the key is at least -3). */
OTH_HD int oth_ff_key(uint64_t P, uint64_t O, int sq, int opt)
{
	uint64_t f = oth_flips(P, O, sq);
	uint64_t om = oth_moves_opt(O & ~f, P | f | (1ull << sq), opt);
	int k = oth_popcount(om) * 4 + oth_popcount(om & OTH_CORNERS) * 2 -
		(int)((OTH_CORNERS >> sq) & 1) * 3;
	return (k + 8) * 64 + sq;
}

/* Descend to the next move of the frame at depth sp (state ENTER). */
OTH_HD void oth_lane_descend(struct oth_lane *L, struct oth_stack *S, int sp,
			     int opt)
{
	struct oth_sframe *f = &S->st[sp];
	int sq, a = f->alpha;

	if (f->last >= 0) {
		const uint16_t *row = OTH_FF_ROW(S, f);
		if (opt & OTH_STEP_KEYSORT) {
			sq = row[f->last++];
		} else {
			unsigned c, bc = OTH_FF_END;
			OTH_NO_UNROLL
			for (int r = 0; (c = row[r]) != OTH_FF_END; r++)
				if (c > (unsigned)f->last && c < bc)
					bc = c;
			f->last = (int16_t)bc;
			sq = (int)(bc & 63);
		}
	} else {
		sq = oth_pick(f->P, f->O, f->moves);
	}
	uint64_t fl = oth_flips(f->P, f->O, sq);
	f->moves &= ~(1ull << sq);
	f->cur = (int8_t)sq;
	L->P = f->O & ~fl;
	L->O = f->P | fl | (1ull << sq);
	if (sp == 0)
		a = f->neg || sq > f->bm ? f->best : f->best - 1;
	L->alpha = -f->beta;
	L->beta = -a;
	L->sp = sp + 1;
	L->state = OTH_LANE_ENTER;
}

/* One interior step: state RET, return v up the stack (to the root: state
 * DONE) and descend to the frame's next move; state ENTER with more than
 * `leaf` empties (or the root), expand the node and descend to its first
 * move. The descent leaves state ENTER; with OTH_STEP_KEYSORT, a node
 * that orders its moves by their keys leaves state KEYS instead. */
OTH_HD void oth_lane_frame(struct oth_lane *L, struct oth_stack *S,
			    int opt)
{
	struct oth_sframe *f;
	int sp = L->sp;

	if (L->state == OTH_LANE_RET) {
		int v = L->v;
		for (;;) {
			f = &S->st[--sp];
			int val = -v;
			OTH_FRAME_TAKE(f, val, f->cur, sp == 0);
			if (f->alpha >= f->beta || !f->moves) {
				v = f->neg ? -f->best : f->best;
				if (sp == 0) {
					L->v = v;
					L->mv = f->bm;
					L->sp = 0;
					L->state = OTH_LANE_DONE;
					return;
				}
				continue; /* return to the parent */
			}
			break;
		}
	} else {
		uint64_t P = L->P, O = L->O, m;
		int alpha = L->alpha, beta = L->beta, neg = 0;
		L->n++;
		m = oth_moves_opt(P, O, opt);
		if (!m) {
			uint64_t m2 = oth_moves_opt(O, P, opt);
			if (!m2) {
				L->v = oth_final_score(P, O);
				if (sp == 0) {
					L->mv = OTHELLO_MOVE_NONE;
					L->state = OTH_LANE_DONE;
				} else {
					L->state = OTH_LANE_RET;
				}
				return;
			}
			uint64_t t = P; P = O; O = t;
			int a = alpha; alpha = -beta; beta = -a;
			neg = 1;
			m = m2;
		}
		f = &S->st[sp];
		f->P = P;
		f->O = O;
		f->moves = m;
		f->alpha = (int8_t)alpha;
		f->beta = (int8_t)beta;
		f->best = -66;
		f->bm = sp == 0 && neg ? OTHELLO_MOVE_PASS : OTHELLO_MOVE_NONE;
		f->neg = (int8_t)neg;
		f->last = -1;
		if (opt & (OTH_STEP_FFONCE | OTH_STEP_KEYSORT)) {
			int e = oth_popcount(~(P | O));
			if (e >= OTH_FF_MIN && (m & (m - 1)) &&
			    (opt & OTH_STEP_KEYSORT)) {
				f->last = 0;
				L->state = OTH_LANE_KEYS;
				return;
			}
			if (e >= OTH_FF_MIN && (m & (m - 1))) {
				uint16_t *row = S->ff[e - OTH_FF_MIN];
				int r = 0;
				OTH_NO_UNROLL
				for (; m; m &= m - 1)
					row[r++] = (uint16_t)oth_ff_key(
						P, O, oth_ctz(m), opt);
				row[r] = OTH_FF_END;
				f->last = 0;
			}
		}
	}
	oth_lane_descend(L, S, sp, opt);
}

/* State KEYS: sort the keys of the frame at depth sp into its row, then
 * descend to its first move. The kernel does the same for a warp's lanes
 * together (othello.cu); the keys, unique per frame (key * 64 + square),
 * give one order. */
OTH_HD void oth_lane_keys(struct oth_lane *L, struct oth_stack *S, int opt)
{
	struct oth_sframe *f = &S->st[L->sp];
	uint16_t *row = OTH_FF_ROW(S, f);
	int n = 0;

	for (uint64_t m = f->moves; m; m &= m - 1) {
		int k = oth_ff_key(f->P, f->O, oth_ctz(m), opt), r = n++;
		for (; r > 0 && row[r - 1] > k; r--)
			row[r] = row[r - 1];
		row[r] = (uint16_t)k;
	}
	for (int r = 0; r < n; r++)
		row[r] &= 63;
	oth_lane_descend(L, S, L->sp, opt);
}

/* The warp's vote (othello.cu, and the host's emulation of a warp): run
 * the leaf step this round when at least `thresh` lanes want it, or when
 * no lane wants a frame step; else the frame step. */
OTH_HD int oth_vote_leaf(int nleaf, int nframe, int thresh)
{
	return nleaf > 0 && (nleaf >= thresh || nframe == 0);
}

/* The whole search of one position by steps, the host's reference of the
 * kernel's stepped variants: same answers and nodes as oth_search_leaf. */
OTH_HD int oth_search_step(struct oth_stack *S, uint64_t P, uint64_t O,
			   int *ret_move, uint64_t *nodes, int leaf, int opt)
{
	struct oth_lane L;

	L.n = 0;
	oth_lane_start(&L, P, O);
	while (L.state != OTH_LANE_DONE) {
		if (L.state == OTH_LANE_KEYS)
			oth_lane_keys(&L, S, opt);
		else if (oth_lane_wants_leaf(&L, leaf))
			oth_lane_leaf(&L);
		else
			oth_lane_frame(&L, S, opt);
	}
	*ret_move = L.mv;
	*nodes += L.n;
	return L.v;
}

#endif
