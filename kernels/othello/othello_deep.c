/* othello_deep.c - the exact endgame search of one position by one thread.
 *
 * Principal variation search: the root and the nodes of the principal
 * variation (pvs) search their first move with the whole window and the
 * others with a null window (nws), re-searched only when they land inside
 * the window; nearly every node is a null-window node. By empties e:
 *
 *   e <= 4            othello_last.h: no move generation, parity order
 *   5 .. SHALLOW_MAX  nws_shallow: parity order, stability cutoff (also
 *                     of its 4-empty children)
 *   .. OTH_LOCAL_MAX  nws_local: nws's ordering on the thread's own small
 *                     table (othello_deep.h), no ETC, no fork
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
 * A parallel search (othello_par.c): one thread runs this search, the
 * others wait in its team, asleep when there is no work; a null-window
 * node whose first cfg.elders moves did not cut off, a PV node past its
 * first move and the root share their other moves with a few idle
 * threads (young brothers wait: forks, below), over one shared table;
 * *abort ends every thread's search early.
 */
#include <limits.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "othello_fork.h"
#include "othello_eval.h"
#include "othello_last.h"

#define ETC_MIN 12
#define EVAL_MIN 14
#define W_EVAL 10      /* the evaluation's weight against mobility */

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

/* A free thread scans FORK_SPIN times for work before it sleeps. */
#define FORK_SPIN 16
/* The search was stopped, or a fork it works under was cut (another
 * thread's move failed high there or in a fork above: fork_cut sets
 * every fork below). */
static inline int aborted(const struct oth_search *s)
{
	if (atomic_load_explicit(s->abort, memory_order_relaxed))
		return 1;
	return s->fork && atomic_load_explicit(&s->fork->cut,
					       memory_order_relaxed);
}

/* 1 and the cut value in *v when the opponent's stable discs keep P at or
 * below alpha. */
static inline int stability_cut(uint64_t P, uint64_t O, int alpha, int e,
				int *v)
{
	/* Stable discs are a subset of the side's discs: when all of them
	 * could not cut, skip the count. */
	if (alpha >= STAB_MIN[e]) {
		if (64 - 2 * oth_popcount(O) > alpha)
			return 0;
		int ub = 64 - 2 * oth_popcount(oth_stable(O, P));
		if (ub > alpha)
			return 0;
		*v = ub;
		return 1;
	}
	/* Mirrored: P's own stable discs keep it above a very low alpha
	 * (a search of whether P escapes a wipe-out). */
	if (alpha <= -STAB_MIN[e]) {
		if (2 * oth_popcount(P) - 64 <= alpha)
			return 0;
		int lb = 2 * oth_popcount(oth_stable(P, O)) - 64;
		if (lb <= alpha)
			return 0;
		*v = lb;
		return 1;
	}
	return 0;
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
			/* The stability cutoff at 4 empties too (Edax's):
			 * FFO #40-#44 5% fewer nodes, the same time. */
			if (e == 5 &&
			    stability_cut(np, no, -alpha - 1, 4, &v)) {
				v = -v;
				s->nodes++; /* a node of 4 empties */
			} else if (e == 5) {
				v = -oth_solve4(np, no, -alpha - 1, &s->nodes);
			} else {
				v = -nws_shallow(s, np, no, -alpha - 1, e - 1,
						 0);
			}
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
			uint64_t pot, om = oth_moves_pot(x->P, x->O, &pot);
			x->key = ((36 - oth_popcount(om) -
				   oth_popcount(om & CORNERS)) << 15) +
				 (corner_stability(x->O) << 11) +
				 ((36 - oth_popcount(pot)) << 5);
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

/* Plies of the evaluation search that orders a node's moves (-1: none):
 * 0 at 14-17 empties, 1 at 18-20, 2 at 21-23, ... (Edax's steps). */
static inline int sort_depth(int e)
{
	return e < EVAL_MIN ? -1 : e < 18 ? 0 : (e - 15) / 3;
}

/* ---- young brothers wait: a node's moves shared with idle threads --------
 * In a parallel search a null-window node of cfg.min or more empties
 * whose cfg.elders eldest moves did not cut off hands its other moves to
 * the idle threads (a fork). Up to cfg.helpers of them join it; every
 * thread in the fork takes the next move, the first to fail high cuts the
 * fork (the others drop their subtrees, see aborted) and the owner, who
 * also takes moves, waits for its helpers, meanwhile helping the forks
 * below its own. A thread with nothing to do sleeps (team_sleep) till a
 * fork opens, or, as an owner, till its last helper leaves. */

static inline int fork_key(int v, int sq)
{
	return (v + 66) * 64 + sq;
}

static int nws_child(struct oth_search *s, const struct mv *x, int alpha,
		     int e);

/* Take f's moves till none is left, f is cut or the search above is. */
static void fork_work(struct oth_search *s, struct oth_fork *f)
{
	int i;

	while ((i = atomic_fetch_add(&f->next, 1)) < f->n) {
		const struct mv *x = &f->list[i];
		int v = nws_child(s, x, f->alpha[i], f->e);
		if (aborted(s))
			return;
		f->res[i] = v;
		int k = fork_key(v, x->sq), o = atomic_load(&f->best);
		while (k > o && !atomic_compare_exchange_weak(&f->best, &o, k))
			;
		if (v > f->alpha[i]) {
			oth_fork_cut(s->team, f);
			return;
		}
	}
}

/* Join an open fork with moves left and a helper's place free, the
 * deepest-rooted first (under `under` only, for an owner waiting on it),
 * and work there; 1 when it did. */
static int team_help(struct oth_search *s, struct oth_fork *under)
{
	struct oth_team *t = s->team;
	struct oth_fork *g = NULL;
	int ge = -1;

	for (int k = 0; k < OTH_FORKS; k++) {
		struct oth_fork *f = &t->fork[k];
		int fe = atomic_load_explicit(&f->e, memory_order_relaxed);
		if (atomic_load(&f->state) == FORK_OPEN && fe > ge &&
		    atomic_load_explicit(&f->helpers, memory_order_relaxed) <
			    t->cfg.helpers &&
		    atomic_load_explicit(&f->next, memory_order_relaxed) <
			    atomic_load_explicit(&f->n, memory_order_relaxed)) {
			g = f;
			ge = fe;
		}
	}
	if (!g)
		return 0;
	/* Counted first, then checked: an owner closing g waits for us, so
	 * g stays this fork while we are in it. */
	if (atomic_fetch_add(&g->helpers, 1) >= t->cfg.helpers ||
	    atomic_load(&g->state) != FORK_OPEN ||
	    (under && !oth_fork_descends(g, under))) {
		oth_fork_leave(t, g);
		return 0;
	}
	struct oth_fork *up = s->fork;
	atomic_fetch_sub(&t->idle, 1);
	s->fork = g;
	fork_work(s, g);
	s->fork = up;
	atomic_fetch_add(&t->idle, 1);
	oth_fork_leave(t, g);
	return 1;
}

void oth_team_serve(struct oth_search *s)
{
	struct oth_team *t = s->team;

	atomic_fetch_add(&t->idle, 1);
	for (int idle = 0; !atomic_load(s->abort);) {
		unsigned g0 = atomic_load(&t->gen);
		if (team_help(s, NULL))
			idle = 0;
		else if (++idle > FORK_SPIN)
			oth_team_sleep(t, g0, s->abort);
	}
	atomic_fetch_sub(&t->idle, 1);
}

/* Search list[i0..n) with the idle threads, each move with the null
 * window at alpha[i] (alpha[i0..n), or `alpha0` for all when NULL),
 * sorted first; the first to fail high cuts the fork. 1 and the best
 * result in *best, *bm (those given count too) and each move's in
 * res[i0..n) (RES_NONE: cut before its end), or 0 when every fork is
 * taken. The caller checks aborted. */
static int fork_moves(struct oth_search *s, int e, const int *alpha,
		      int alpha0, struct mv *list, int i0, int n, int *best,
		      int *bm, int *res)
{
	struct oth_team *t = s->team;
	struct oth_fork *f = NULL;

	for (int k = 0; k < OTH_FORKS && !f; k++) {
		int z = FORK_FREE;
		if (atomic_load_explicit(&t->fork[k].state,
					 memory_order_relaxed) == FORK_FREE &&
		    atomic_compare_exchange_strong(&t->fork[k].state, &z,
						   FORK_SETUP))
			f = &t->fork[k];
	}
	if (!f)
		return 0;
	for (int i = i0; i < n; i++) {
		pick(list, i, n);
		f->list[i - i0] = list[i];
		f->alpha[i - i0] = alpha ? alpha[i] : alpha0;
		f->res[i - i0] = RES_NONE;
	}
	atomic_store_explicit(&f->n, n - i0, memory_order_relaxed);
	atomic_store_explicit(&f->e, e, memory_order_relaxed);
	f->parent = s->fork;
	atomic_store(&f->next, 0);
	atomic_store(&f->cut, 0);
	oth_fork_link(t, f);
	atomic_store(&f->owner_sleeps, 0);
	atomic_store(&f->best, fork_key(*best, *bm));
	atomic_store(&f->state, FORK_OPEN);
	oth_team_wake(t);

	struct oth_fork *up = s->fork;
	s->fork = f;
	fork_work(s, f);
	atomic_store(&f->state, FORK_CLOSED);
	/* Waiting, the owner counts as idle: the helpers' subtrees fork for
	 * it, and it helps there; with nothing to help it sleeps, woken by
	 * the last helper to leave (fork_leave). */
	if (atomic_load(&f->helpers) > 0) {
		atomic_fetch_add(&t->idle, 1);
		for (int idle = 0;;) {
			unsigned g0 = atomic_load(&t->gen);
			if (atomic_load(&f->helpers) == 0)
				break;
			if (team_help(s, f)) {
				idle = 0;
			} else if (++idle > FORK_SPIN) {
				atomic_store(&f->owner_sleeps, 1);
				if (atomic_load(&f->helpers) > 0)
					oth_team_sleep(t, g0, s->abort);
				atomic_store(&f->owner_sleeps, 0);
			}
		}
		atomic_fetch_sub(&t->idle, 1);
	}
	s->fork = up;
	oth_fork_unlink(t, f);
	int k = atomic_load(&f->best);
	if (res)
		memcpy(res + i0, f->res, (size_t)f->n * sizeof(*res));
	atomic_store(&f->state, FORK_FREE);
	*best = k / 64 - 66;
	*bm = k % 64;
	return 1;
}

/* 1 when a node of e empties with `left` moves still to search should
 * share them. */
static inline int can_fork(const struct oth_search *s, int e, int left)
{
	return s->team && e >= s->team->cfg.min && left >= 2 &&
	       atomic_load_explicit(&s->team->idle, memory_order_relaxed) > 0;
}

/* After a fork of list[i..n) at PV node or root with windows alpha[]:
 * the moves that failed low are done (best, bm updated), the others are
 * moved to list[i..), those that failed high first and keyed FAIL_HIGH
 * (they need the exact search, not the null window again); returns the
 * new n. */
#define FAIL_HIGH INT_MAX /* above every list_moves key */
static int fork_fold(struct mv *list, int i, int n, const int *alpha,
		     const int *res, int *best, int *bm)
{
	struct mv high[MAX_MOVES], rest[MAX_MOVES];
	int nh = 0, nr = 0;

	for (int j = i; j < n; j++) {
		if (res[j] == RES_NONE) {
			rest[nr++] = list[j];
		} else if (res[j] > alpha[j]) {
			high[nh] = list[j];
			high[nh++].key = FAIL_HIGH;
		} else if (res[j] > *best) {
			*best = res[j];
			*bm = list[j].sq;
		}
	}
	memcpy(list + i, high, (size_t)nh * sizeof(*list));
	memcpy(list + i + nh, rest, (size_t)nr * sizeof(*list));
	return i + nh + nr;
}

/* Fork list[i..n) of a PV node or the root at the null windows
 * alpha[i..n) and fold the results (fork_fold): the new n, n itself when
 * every fork is taken, or -1 when the search is aborted. */
static int fork_pv(struct oth_search *s, int e, struct mv *list, int i, int n,
		   const int *alpha, int *best, int *bm)
{
	int res[MAX_MOVES], fb = -66, fm = 0;

	if (!fork_moves(s, e, alpha, 0, list, i, n, &fb, &fm, res))
		return n;
	if (aborted(s))
		return -1;
	return fork_fold(list, i, n, alpha, res, best, bm);
}

/* ---- null-window search with the table ----------------------------------- */

static int nws(struct oth_search *s, uint64_t P, uint64_t O, int alpha,
	       int e, int passed);

/* ---- null-window search with the thread's own table (7..10 empties) ----- */

/* The pair of entries (position, then replacement) of (P, O). */
static inline struct oth_local_entry *local_pair(struct oth_search *s,
						 uint64_t P, uint64_t O)
{
	uint64_t h = (P ^ (O * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;

	return s->local[h >> (64 - OTH_LOCAL_BITS)];
}

/* nws below OTH_LOCAL_MAX + 1 empties: no shared table, no ETC, no fork,
 * no abort check (a subtree this small ends within a millisecond; the
 * caller checks), so every value returned is exact or a true bound. */
static int nws_local(struct oth_search *s, uint64_t P, uint64_t O, int alpha,
		     int e, int passed)
{
	struct mv list[MAX_MOVES];
	struct oth_local_entry *t;
	uint64_t moves;
	int hint = -1, best = -66, bm = 255, v, n;

	s->nodes++;
	if (stability_cut(P, O, alpha, e, &v))
		return v;
	t = local_pair(s, P, O);
	if (t[1].P == P && t[1].O == O)
		t++;
	if (t->P == P && t->O == O) {
		if (t->lo > alpha)
			return t->lo;
		if (t->hi <= alpha)
			return t->hi;
		hint = t->move;
	}
	moves = oth_moves(P, O);
	if (!moves) {
		if (passed)
			return oth_final_score(P, O);
		return -nws_local(s, O, P, -alpha - 1, e, 1);
	}
	n = list_moves(s, P, O, moves, hint, -1, 0, list);
	for (int i = 0; i < n; i++) {
		pick(list, i, n);
		if (e - 1 <= SHALLOW_MAX)
			v = -nws_shallow(s, list[i].P, list[i].O, -alpha - 1,
					 e - 1, 0);
		else
			v = -nws_local(s, list[i].P, list[i].O, -alpha - 1,
				       e - 1, 0);
		if (v > best) {
			best = v;
			bm = list[i].sq;
			if (v > alpha)
				break;
		}
	}
	/* The same position: its bounds narrowed; else the first entry
	 * when it has no more empties, else the second, replaced. */
	if (t->P != P || t->O != O) {
		if (t->e > e)
			t++;
		t->P = P;
		t->e = (uint8_t)e;
		t->O = O;
		t->lo = -64;
		t->hi = 64;
		t->move = 255;
	}
	if (best > alpha) {
		if (best > t->lo)
			t->lo = (int8_t)best;
		t->move = (uint8_t)bm;
	} else if (best < t->hi) {
		t->hi = (int8_t)best;
	}
	return best;
}

static int nws_child(struct oth_search *s, const struct mv *x, int alpha,
		     int e)
{
	if (e - 1 <= SHALLOW_MAX)
		return -nws_shallow(s, x->P, x->O, -alpha - 1, e - 1, 0);
	if (e - 1 <= OTH_LOCAL_MAX)
		return -nws_local(s, x->P, x->O, -alpha - 1, e - 1, 0);
	return -nws(s, x->P, x->O, -alpha - 1, e - 1, 0);
}

static int nws(struct oth_search *s, uint64_t P, uint64_t O, int alpha,
	       int e, int passed)
{
	struct mv list[MAX_MOVES];
	uint64_t moves, n0 = s->nodes;
	int lo, hi, hint = -1, best = -66, bm = OTHELLO_MOVE_NONE, v, n;

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
		       e - 1 > OTH_LOCAL_MAX, list);
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
	for (int i = 0; i < n; i++) {
		/* At any later move too: threads may have turned idle. */
		if (s->team && i >= s->team->cfg.elders &&
		    can_fork(s, e, n - i) &&
		    fork_moves(s, e, NULL, alpha, list, i, n, &best, &bm,
			       NULL)) {
			if (aborted(s))
				return 0;
			break;
		}
		pick(list, i, n);
		v = nws_child(s, &list[i], alpha, e);
		if (aborted(s))
			return 0;
		if (v > best) {
			best = v;
			bm = list[i].sq;
			if (v > alpha)
				break;
		}
	}
	oth_tt_store(s->tt, P, O, e, alpha, alpha + 1, best, bm,
		     s->nodes - n0);
	return best;
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
	for (int i = 0; i < n; i++) {
		const struct mv *x = &list[i];
		int v;
		if (best != -66 && x->key != FAIL_HIGH &&
		    can_fork(s, e, n - i)) {
			int a[MAX_MOVES];
			for (int j = i; j < n; j++)
				a[j] = alpha;
			if ((n = fork_pv(s, e, list, i, n, a, &best, &bm)) < 0)
				return 0;
			if (i == n)
				break;
		}
		if (best == -66) {
			v = -pvs(s, x->P, x->O, -beta, -alpha, e - 1, 0);
		} else {
			/* A move that failed high in a fork: searched again
			 * with the window. */
			v = x->key == FAIL_HIGH ? alpha + 1 :
						  nws_child(s, x, alpha, e);
			if (v > alpha &&
			    ((v < beta && v < 64) || x->key == FAIL_HIGH) &&
			    !aborted(s))
				v = -pvs(s, x->P, x->O, -beta, -alpha, e - 1,
					 0);
		}
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

/* Depth of the evaluation search that orders the root's moves (3 plies
 * at 18-23 empties: 11% fewer nodes than 4 on FFO #40-#44, round 13). */
static inline int root_sort_depth(int e)
{
	return e < 12 ? -1 : e < 18 ? 2 : e < 24 ? 3 : 6;
}

/* The null window a root move on square sq is tested with: below the
 * best move's square a tie must be seen. */
static inline int root_alpha(int sq, int best, int bm, int alpha)
{
	int a = sq < bm ? best - 1 : best;

	return a < alpha ? alpha : a;
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
	for (int i = 0; i < n; i++) {
		const struct mv *x = &list[i];
		int v;
		if (best != -66 && x->key != FAIL_HIGH && e - 1 > SHALLOW_MAX &&
		    s->team && s->team->cfg.root &&
		    can_fork(s, e, n - i)) {
			int a[MAX_MOVES];
			for (int j = i; j < n; j++)
				a[j] = root_alpha(list[j].sq, best, bm, alpha);
			if ((n = fork_pv(s, e, list, i, n, a, &best, &bm)) < 0)
				return 0;
			if (i == n)
				break;
		}
		if (best == -66) {
			v = -pvs(s, x->P, x->O, -beta, -alpha, e - 1, 0);
		} else {
			int a = root_alpha(x->sq, best, bm, alpha);
			if (x->key == FAIL_HIGH) /* in a fork */
				v = a + 1;
			else if (e - 1 <= SHALLOW_MAX)
				v = -ab_small(s, x->P, x->O, -a - 1, -a, e - 1,
					      0);
			else
				v = nws_child(s, x, a, e);
			/* A fail high at 64 is exact: nothing scores more (a
			 * fork's fail high was at another window). */
			if (v > a && (v < 64 || x->key == FAIL_HIGH) &&
			    !aborted(s))
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
