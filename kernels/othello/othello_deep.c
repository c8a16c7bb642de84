/* othello_deep.c - the exact endgame search of one position by one thread.
 *
 * Principal variation search: the root and the nodes of the principal
 * variation (pvs) search their first move with the whole window and the
 * others with a null window (nws), re-searched only when they land inside
 * the window; nearly every node is a null-window node. By empties e:
 *
 *   e <= 4            othello_last.h: no move generation, parity order
 *   5 .. SHALLOW_MAX  nws_shallow: parity order, stability cutoff
 *   above             nws: the table (bounds and best move), stability
 *                     cutoff, enhanced transposition cutoff (children
 *                     probed in the table first) from ETC_MIN, moves sorted
 *                     by the table move, then fewest opponent moves
 *                     (corners count twice), corner stability and the
 *                     opponent's potential mobility; from EVAL_MIN also by
 *                     a shallow search of othello_eval. At the root every
 *                     move is ordered by a deeper such search.
 *
 * The scores are exact whatever the order: the evaluation never decides a
 * value. Root tie rule (othello.h): a move on a square below the best so
 * far is tested against best - 1, so a tie is seen and the lower square
 * wins.
 *
 * A parallel search (othello_par.c) runs this search on every thread with
 * one shared table; `busy` defers the children another thread is
 * searching (ABDADA), a thread unwinds from a subtree the table shows is
 * decided above it, the root's best move is shared (root_best) and *abort
 * ends every thread's search early.
 */
#include "othello_deep.h"
#include "othello_eval.h"
#include "othello_last.h"

#define SHALLOW_MAX 6  /* no table at or below: it costs more than it saves */
#define ETC_MIN 12
#define EVAL_MIN 16
#define BUSY_MIN 12    /* ABDADA deferral at or above */
#define MAX_MOVES 34
#define W_EVAL 9       /* the evaluation's weight against mobility */

#define CORNERS 0x8100000000000081ull
#define XC_SQ 0x42c300000000c342ull /* X and C squares */

/* Stability cutoff tried only when alpha is at least this (by empties,
 * Edax's thresholds): below, a cut is too rare to pay for the count. */
static const int8_t STAB_MIN[61] = {
	99, 99, 99, 99, 6, 8, 10, 12, 14, 16, 20, 22, 24, 26, 28, 30,
	32, 34, 36, 38, 40, 42, 44, 46, 48, 48, 50, 50, 52, 52, 54, 54,
	56, 56, 58, 58, 60, 60, 62, 62, 64, 64, 64, 64, 64, 64, 64, 64,
	64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
};

struct mv {
	uint64_t P, O; /* the child, its mover first */
	int sq, key;
};

static inline int aborted(const struct oth_search *s)
{
	return atomic_load_explicit(s->abort, memory_order_relaxed) != 0;
}

/* 1 and the cut value in *v when the opponent's stable discs keep P at or
 * below alpha. */
static inline int stability_cut(uint64_t P, uint64_t O, int alpha, int e,
				int *v)
{
	if (alpha < STAB_MIN[e])
		return 0;
	int ub = 64 - 2 * oth_popcount(oth_stable(O, P));
	if (ub > alpha)
		return 0;
	*v = ub;
	return 1;
}

/* ---- shallow null-window search ------------------------------------------ */

static int nws_shallow(struct oth_search *s, uint64_t P, uint64_t O,
		       int alpha, int e, int passed)
{
	static const uint64_t QUAD[4] = {
		0x000000000f0f0f0full, 0x00000000f0f0f0f0ull,
		0x0f0f0f0f00000000ull, 0xf0f0f0f000000000ull};
	uint64_t E = ~(P | O), par = 0;
	int best = -66, v;

	s->nodes++;
	if (stability_cut(P, O, alpha, e, &v))
		return v;
	for (int q = 0; q < 4; q++)
		if (oth_popcount(E & QUAD[q]) & 1)
			par |= QUAD[q];
	const uint64_t cls[6] = {
		par & CORNERS, par & ~(CORNERS | XC_SQ), par & XC_SQ,
		~par & CORNERS, ~par & ~(CORNERS | XC_SQ), ~par & XC_SQ,
	};
	/* The empty squares tried directly: cheaper than a move generation
	 * with this few of them. */
	for (int c = 0; c < 6; c++) {
		for (uint64_t m = E & cls[c]; m; m &= m - 1) {
			int sq = oth_ctz(m);
			uint64_t f = oth_flips_near(P, O, sq);
			if (!f)
				continue;
			uint64_t np = O & ~f, no = P | f | (1ull << sq);
			if (e == 5)
				v = -oth_solve4(np, no, -alpha - 1, &s->nodes);
			else
				v = -nws_shallow(s, np, no, -alpha - 1, e - 1,
						 0);
			if (v > best) {
				best = v;
				if (v > alpha)
					return v;
			}
		}
	}
	if (best > -66)
		return best;
	if (passed)
		return oth_final_score(P, O);
	return -nws_shallow(s, O, P, -alpha - 1, e, 1);
}

/* ---- move ordering -------------------------------------------------------- */

/* Plain alpha-beta on othello_eval, `depth` plies: the ordering's guess
 * of a position's value from its mover's side (eval units). */
static int eval_search(struct oth_search *s, uint64_t P, uint64_t O,
		       int alpha, int beta, int depth, int passed)
{
	uint64_t moves;
	int best = -100000;

	s->nodes++;
	if (depth <= 0)
		return othello_eval(P, O);
	if (depth >= 3 && aborted(s))
		return 0; /* the root's deep orderings: stop promptly */
	moves = oth_moves(P, O);
	if (!moves) {
		if (passed)
			return oth_final_score(P, O) * OTHELLO_EVAL_SCALE;
		return -eval_search(s, O, P, -beta, -alpha, depth, 1);
	}
	for (; moves; moves &= moves - 1) {
		int sq = oth_ctz(moves);
		uint64_t f = oth_flips(P, O, sq);
		int v = -eval_search(s, O & ~f, P | f | (1ull << sq), -beta,
				     -alpha, depth - 1, 0);
		if (v > best) {
			best = v;
			if (v > alpha && (alpha = v) >= beta)
				break;
		}
	}
	return best;
}

static inline uint64_t neighbours(uint64_t b)
{
	const uint64_t l = 0xfefefefefefefefeull, r = 0x7f7f7f7f7f7f7f7full;

	return ((b << 1) & l) | ((b >> 1) & r) | (b << 8) | (b >> 8) |
	       ((b << 9) & l) | ((b >> 9) & r) | ((b << 7) & r) |
	       ((b >> 7) & l);
}

/* P's corners and the edge squares next to a corner of P. */
static inline int corner_stability(uint64_t P)
{
	uint64_t st = ((((0x0100000000000001ull & P) << 1) |
			((0x8000000000000080ull & P) >> 1) |
			((0x0000000000000081ull & P) << 8) |
			((0x8100000000000000ull & P) >> 8) | CORNERS) &
		       P);
	return oth_popcount(st);
}

/* The moves of P with their children, keyed best first: the table move
 * `hint`, a wipe-out, then few opponent moves, our stable corners, few
 * opponent potential moves; with eval_depth >= 0 also a shallow
 * evaluation. */
static int list_moves(struct oth_search *s, uint64_t P, uint64_t O,
		      uint64_t moves, int hint, int eval_depth, int prefetch,
		      struct mv *list)
{
	int n = 0;

	for (; moves; moves &= moves - 1) {
		struct mv *x = &list[n++];
		int sq = oth_ctz(moves);
		uint64_t f = oth_flips(P, O, sq);
		x->sq = sq;
		x->P = O & ~f;
		x->O = P | f | (1ull << sq);
		if (prefetch)
			oth_tt_prefetch(s->tt, x->P, x->O);
		if (sq == hint) {
			x->key = 1 << 30;
		} else if (!x->P) {
			x->key = 1 << 29;
		} else {
			uint64_t om = oth_moves(x->P, x->O);
			uint64_t E = ~(x->P | x->O);
			x->key = ((36 - oth_popcount(om) -
				   oth_popcount(om & CORNERS)) << 15) +
				 (corner_stability(x->O) << 11) +
				 ((36 - oth_popcount(neighbours(x->O) & E))
				  << 5);
			if (eval_depth >= 0) {
				int v = eval_search(s, x->P, x->O, -100000,
						    100000, eval_depth, 0);
				x->key += (64 * OTHELLO_EVAL_SCALE - v) << W_EVAL;
			}
		}
	}
	return n;
}

/* Move the best-keyed of list[i..n) to i. */
static inline void pick(struct mv *list, int i, int n)
{
	int b = i;

	for (int j = i + 1; j < n; j++)
		if (list[j].key > list[b].key)
			b = j;
	if (b != i) {
		struct mv t = list[i];
		list[i] = list[b];
		list[b] = t;
	}
}

static inline int sort_depth(int e)
{
	return e < EVAL_MIN ? -1 : (e - EVAL_MIN) / 4;
}

/* ---- ABDADA --------------------------------------------------------------- */

static inline uint64_t child_key(const struct mv *x)
{
	return mix64(x->P ^ mix64(x->O + OTHELLO_GOLDEN)) | 1;
}

static inline _Atomic uint64_t *busy_slot(struct oth_search *s, uint64_t k)
{
	return &s->busy[k >> (64 - OTH_BUSY_BITS)];
}

static inline int is_busy(struct oth_search *s, uint64_t k)
{
	return atomic_load_explicit(busy_slot(s, k), memory_order_relaxed) ==
	       k;
}

/* A slot taken stays with its key till cleared: the marks of the nodes
 * near the root, taken first and held longest, are never overwritten by
 * the many short-lived ones below (a colliding child goes unmarked). */
static inline void set_busy(struct oth_search *s, uint64_t k)
{
	uint64_t x = 0;

	atomic_compare_exchange_strong_explicit(busy_slot(s, k), &x, k,
						memory_order_relaxed,
						memory_order_relaxed);
}

static inline void clear_busy(struct oth_search *s, uint64_t k)
{
	uint64_t x = k;

	atomic_compare_exchange_strong_explicit(busy_slot(s, k), &x, 0,
						memory_order_relaxed,
						memory_order_relaxed);
}

/* 1 and the bound in *v when the table now decides the null window
 * (alpha, alpha + 1) of (P, O). */
static inline int decided(struct oth_search *s, uint64_t P, uint64_t O,
			  int alpha, int *v)
{
	int lo, hi, m;

	if (!oth_tt_probe(s->tt, P, O, &lo, &hi, &m))
		return 0;
	*v = lo > alpha ? lo : hi;
	return lo > alpha || hi <= alpha;
}

/* 1 when the table now decides one of the nodes on s's stack: s->unwind
 * names the one nearest the root (index + 1), s->unwind_v its bound. */
static int ancestor_decided(struct oth_search *s)
{
	for (int i = 0; i < s->sp; i++) {
		int v;
		if (decided(s, s->stack[i].P, s->stack[i].O,
			    s->stack[i].alpha, &v)) {
			s->unwind = i + 1;
			s->unwind_v = v;
			return 1;
		}
	}
	return 0;
}

/* ---- null-window search with the table ----------------------------------- */

static int nws(struct oth_search *s, uint64_t P, uint64_t O, int alpha,
	       int e, int passed);

static inline int nws_child(struct oth_search *s, const struct mv *x,
			    int alpha, int e)
{
	if (e - 1 <= SHALLOW_MAX)
		return -nws_shallow(s, x->P, x->O, -alpha - 1, e - 1, 0);
	return -nws(s, x->P, x->O, -alpha - 1, e - 1, 0);
}

static int nws_body(struct oth_search *s, uint64_t P, uint64_t O, int alpha,
		    int e, int passed)
{
	struct mv list[MAX_MOVES];
	uint64_t moves, n0 = s->nodes;
	int lo, hi, hint = -1, best = -66, bm = OTHELLO_MOVE_NONE, v, n;
	int defer[MAX_MOVES], nd = 0;

	if (aborted(s))
		return 0;
	s->nodes++;
	if (stability_cut(P, O, alpha, e, &v))
		return v;
	if (oth_tt_probe(s->tt, P, O, &lo, &hi, &hint)) {
		if (lo > alpha)
			return lo;
		if (hi <= alpha)
			return hi;
	}
	moves = oth_moves(P, O);
	if (!moves) {
		if (passed)
			return oth_final_score(P, O);
		return -nws(s, O, P, -alpha - 1, e, 1);
	}
	n = list_moves(s, P, O, moves, hint, sort_depth(e),
		       e - 1 > SHALLOW_MAX, list);
	if (e >= ETC_MIN) {
		for (int i = 0; i < n; i++) {
			int cm;
			if (oth_tt_probe(s->tt, list[i].P, list[i].O, &lo, &hi,
					 &cm) && -hi > alpha) {
				oth_tt_store(s->tt, P, O, e, alpha, alpha + 1,
					     -hi, list[i].sq, 1);
				return -hi;
			}
		}
	}
	int par = s->busy && e >= BUSY_MIN;
	for (int i = 0; i < n; i++) {
		pick(list, i, n);
		uint64_t k = 0;
		if (par) {
			if (i > 0 && ancestor_decided(s))
				return 0;
			k = child_key(&list[i]);
			if (i > 0 && is_busy(s, k)) {
				defer[nd++] = i;
				continue;
			}
			set_busy(s, k);
		}
		v = nws_child(s, &list[i], alpha, e);
		if (par)
			clear_busy(s, k);
		if (aborted(s) || s->unwind)
			return 0;
		if (v > best) {
			best = v;
			bm = list[i].sq;
			if (v > alpha)
				goto done;
		}
	}
	for (int j = 0; j < nd; j++) {
		if (ancestor_decided(s))
			return 0;
		v = nws_child(s, &list[defer[j]], alpha, e);
		if (aborted(s) || s->unwind)
			return 0;
		if (v > best) {
			best = v;
			bm = list[defer[j]].sq;
			if (v > alpha)
				break;
		}
	}
done:
	oth_tt_store(s->tt, P, O, e, alpha, alpha + 1, best, bm,
		     s->nodes - n0);
	return best;
}

/* In a parallel search the null-window nodes of BUSY_MIN+ empties a
 * thread is in are kept on its stack: when another thread's result in the
 * table decides one of them (a cutoff by a sibling it searched), this
 * thread unwinds to that node at once instead of finishing a subtree
 * nobody needs. */
static int nws(struct oth_search *s, uint64_t P, uint64_t O, int alpha,
	       int e, int passed)
{
	if (!s->busy || e < BUSY_MIN || s->sp >= OTH_STACK)
		return nws_body(s, P, O, alpha, e, passed);
	int i = s->sp++;
	s->stack[i].P = P;
	s->stack[i].O = O;
	s->stack[i].alpha = alpha;
	int v = nws_body(s, P, O, alpha, e, passed);
	s->sp--;
	if (s->unwind == i + 1) {
		s->unwind = 0;
		v = s->unwind_v;
	}
	return v;
}

/* ---- principal variation ---------------------------------------------------- */

/* Fail-soft alpha-beta with a window, for the few PV nodes with few
 * empties. */
static int ab_small(struct oth_search *s, uint64_t P, uint64_t O, int alpha,
		    int beta, int e, int passed)
{
	uint64_t moves;
	int best = -66;

	s->nodes++;
	if (e == 1 && !passed)
		return oth_last1n(P, O, oth_ctz(~(P | O)));
	moves = oth_moves(P, O);
	if (!moves) {
		if (passed)
			return oth_final_score(P, O);
		return -ab_small(s, O, P, -beta, -alpha, e, 1);
	}
	for (; moves; moves &= moves - 1) {
		int sq = oth_ctz(moves);
		uint64_t f = oth_flips(P, O, sq);
		int v = -ab_small(s, O & ~f, P | f | (1ull << sq), -beta,
				  -alpha, e - 1, 0);
		if (v > best) {
			best = v;
			if (v > alpha && (alpha = v) >= beta)
				break;
		}
	}
	return best;
}

static int pvs(struct oth_search *s, uint64_t P, uint64_t O, int alpha,
	       int beta, int e, int passed)
{
	struct mv list[MAX_MOVES];
	uint64_t moves, n0 = s->nodes;
	int lo, hi, hint = -1, best = -66, bm = OTHELLO_MOVE_NONE, n;
	int a0 = alpha, b0 = beta;

	if (e <= SHALLOW_MAX)
		return ab_small(s, P, O, alpha, beta, e, passed);
	if (aborted(s))
		return 0;
	s->nodes++;
	if (oth_tt_probe(s->tt, P, O, &lo, &hi, &hint)) {
		if (lo >= beta)
			return lo;
		if (hi <= alpha)
			return hi;
		if (lo == hi)
			return lo;
		if (lo > alpha)
			alpha = lo;
		if (hi < beta)
			beta = hi;
		a0 = alpha;
		b0 = beta;
	}
	moves = oth_moves(P, O);
	if (!moves) {
		if (passed)
			return oth_final_score(P, O);
		return -pvs(s, O, P, -beta, -alpha, e, 1);
	}
	n = list_moves(s, P, O, moves, hint, sort_depth(e) + 1,
		       e - 1 > SHALLOW_MAX, list);
	for (int i = 0; i < n; i++)
		pick(list, i, n);
	int par = s->busy && e >= BUSY_MIN, defer[MAX_MOVES], nd = 0;
	for (int j = 0; j < n + nd; j++) {
		int i = j < n ? j : defer[j - n], v;
		const struct mv *x = &list[i];
		uint64_t k = 0;
		if (par && j < n) {
			k = child_key(x);
			if (j > 0 && is_busy(s, k)) {
				defer[nd++] = i;
				continue;
			}
			set_busy(s, k);
		}
		if (best == -66) {
			v = -pvs(s, x->P, x->O, -beta, -alpha, e - 1, 0);
		} else {
			v = nws_child(s, x, alpha, e);
			if (v > alpha && v < beta && !aborted(s))
				v = -pvs(s, x->P, x->O, -beta, -alpha, e - 1,
					 0);
		}
		if (k)
			clear_busy(s, k);
		if (aborted(s))
			return 0;
		if (v > best) {
			best = v;
			bm = x->sq;
			if (v > alpha && (alpha = v) >= beta)
				break;
		}
	}
	oth_tt_store(s->tt, P, O, e, a0, b0, best, bm, s->nodes - n0);
	return best;
}

/* ---- root ------------------------------------------------------------------ */

/* A root result as one int ordered like the tie rule: higher score, then
 * lower square. */
static inline int root_key(int v, int sq)
{
	return (v + 64) * 64 + 63 - sq;
}

/* Shares (best, bm) with the other threads and takes theirs when better:
 * each is the exact score of a move, or a bound outside the window (below
 * alpha: the tests start at alpha anyway; at or above beta: the root is
 * decided), so any thread may search the rest against it (a thread searching with an older, lower best would only
 * re-search moves that the others already beat). */
static inline void root_share(struct oth_search *s, int *best, int *bm)
{
	if (!s->root_best)
		return;
	int k = *best == -66 ? -1 : root_key(*best, *bm);
	int o = atomic_load_explicit(s->root_best, memory_order_relaxed);
	while (k > o && !atomic_compare_exchange_weak_explicit(
				s->root_best, &o, k, memory_order_relaxed,
				memory_order_relaxed))
		;
	if (o > k) {
		*best = o / 64 - 64;
		*bm = 63 - o % 64;
	}
}

/* Depth of the evaluation search that orders the root's moves. */
static inline int root_sort_depth(int e)
{
	return e < 12 ? -1 : e < 18 ? 2 : e < 24 ? 4 : 6;
}

int oth_deep_root(struct oth_search *s, uint64_t P, uint64_t O, int alpha,
		  int beta, int *ret_move)
{
	struct mv list[MAX_MOVES];
	uint64_t moves = oth_moves(P, O);
	int e = oth_popcount(~(P | O)), best = -66, bm = OTHELLO_MOVE_NONE;
	int neg = 0, n;

	s->nodes++;
	if (!moves) {
		if (!oth_moves(O, P)) {
			int v = oth_final_score(P, O);
			*ret_move = OTHELLO_MOVE_NONE;
			return v <= alpha ? alpha : v >= beta ? beta : v;
		}
		uint64_t t = P;
		int a = alpha;
		P = O;
		O = t;
		alpha = -beta;
		beta = -a;
		moves = oth_moves(P, O);
		neg = 1;
	}
	n = list_moves(s, P, O, moves, -1, root_sort_depth(e),
		       e - 1 > SHALLOW_MAX, list);
	if (aborted(s))
		return 0;
	for (int i = 0; i < n; i++)
		pick(list, i, n);
	/* The root's moves in order on every thread, never deferred: they
	 * split below. A thread taking the next root move meanwhile would
	 * search it against the eldest's score, before the move being
	 * searched (often the real best) raises it, and fail high into a
	 * full re-search (bench/othello.md round 10). */
	for (int i = 0; i < n; i++) {
		const struct mv *x = &list[i];
		int v;
		if (i > 0) {
			/* Another thread's result may be a bound at or
			 * above beta: then the window is decided. */
			root_share(s, &best, &bm);
			if (best >= beta)
				break;
		}
		if (best == -66) {
			v = -pvs(s, x->P, x->O, -beta, -alpha, e - 1, 0);
		} else {
			/* Below the best move's square a tie must be seen. */
			int a = x->sq < bm ? best - 1 : best;
			if (a < alpha)
				a = alpha;
			v = e - 1 <= SHALLOW_MAX ?
				    -ab_small(s, x->P, x->O, -a - 1, -a, e - 1,
					      0) :
				    nws_child(s, x, a, e);
			if (v > a && !aborted(s))
				v = -pvs(s, x->P, x->O, -beta, -a, e - 1, 0);
		}
		if (aborted(s))
			return 0;
		if (v > best || (v == best && x->sq < bm)) {
			best = v;
			bm = x->sq;
		}
		if (best >= beta)
			break;
	}
	if (best <= alpha || best >= beta) { /* a bound: clamped */
		best = best <= alpha ? alpha : beta;
		bm = OTHELLO_MOVE_NONE;
	}
	*ret_move = neg && bm != OTHELLO_MOVE_NONE ? OTHELLO_MOVE_PASS : bm;
	return neg ? -best : best;
}
