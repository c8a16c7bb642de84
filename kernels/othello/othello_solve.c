/* othello_solve.c - the fast CPU solver and the batch runner.
 *
 * Search: fail-soft negamax alpha-beta with principal variation search
 * (first move with the full window, the others with a null window and a
 * re-search when they land inside it); at the root too, where a move that
 * reaches the best score so far is then searched exactly for the best
 * move's tie rule. The root may search inside a window (a split job's
 * lease, othello_solve_batch_window): its answer is clamped to it. At 7 or more empties the moves are sorted fastest first
 * (fewest opponent replies, corners preferred), the transposition table's
 * move first; below, the shallow order of othello_search.h (parity, then
 * static). The table (2^18 entries of 24 bytes per solver) stores bounds
 * of nodes with >= 8 empties; a stamp per solved position makes clearing
 * it between positions free, so each position is searched from an empty
 * table and node counts do not depend on batch order. (Root null windows
 * and the table from 8 empties instead of 10: 35% fewer nodes at 20
 * empties, bench/othello.md.)
 *
 * Threads: a solver belongs to one thread; othello_solve_batch gives each
 * of its threads one solver and hands out positions with an atomic counter.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "othello.h"
#include "othello_search.h"

#define TT_MIN_EMPTIES 8
#define SHALLOW_CPU 6
#define MAX_MOVES 32

struct tt_entry {
	uint64_t P, O;
	uint32_t stamp;
	int8_t lo, hi;
	uint8_t move, pad;
};

struct othello_solver {
	struct tt_entry *tt;
	uint64_t tt_mask; /* entries - 1 */
	uint32_t stamp;
	uint64_t nodes;
};

int othello_solver_new_sized(struct othello_solver **ret, int bits)
{
	struct othello_solver *s = calloc(1, sizeof(*s));

	if (bits < OTHELLO_TT_BITS_MIN)
		bits = OTHELLO_TT_BITS_MIN;
	if (bits > OTHELLO_TT_BITS)
		bits = OTHELLO_TT_BITS;
	if (!s)
		return GERR_NOMEM;
	s->tt_mask = ((uint64_t)1 << bits) - 1;
	s->tt = calloc(s->tt_mask + 1, sizeof(*s->tt));
	if (!s->tt) {
		free(s);
		return GERR_NOMEM;
	}
	*ret = s;
	return 0;
}

int othello_solver_new(struct othello_solver **ret)
{
	return othello_solver_new_sized(ret, OTHELLO_TT_BITS);
}

void othello_solver_free(struct othello_solver *s)
{
	if (!s)
		return;
	free(s->tt);
	free(s);
}

static inline uint64_t tt_hash(uint64_t P, uint64_t O)
{
	return mix64(P ^ mix64(O + OTHELLO_GOLDEN));
}

/* Up to SHALLOW_CPU empties: plain recursion in the shallow order. */
static int search_small(struct othello_solver *s, uint64_t P, uint64_t O,
			int alpha, int beta, int passed)
{
	uint64_t m, E = ~(P | O);
	int best = -66;

	s->nodes++;
	if (oth_popcount(E) == 1 && !passed)
		return oth_last1(P, O);
	m = oth_moves(P, O);
	if (!m) {
		if (passed)
			return -oth_final_score(O, P);
		return -search_small(s, O, P, -beta, -alpha, 1);
	}
	while (m) {
		int sq = oth_pick(P, O, m);
		uint64_t f = oth_flips(P, O, sq);
		int v;
		m &= ~(1ull << sq);
		v = -search_small(s, O & ~f, P | f | (1ull << sq), -beta,
				  -alpha, 0);
		if (v > best) {
			best = v;
			if (v > alpha) {
				alpha = v;
				if (alpha >= beta)
					break;
			}
		}
	}
	return best;
}

struct mv {
	int sq, key;
	uint64_t f;
};

/* Moves of P sorted fastest first; the table's move `hint` first. */
static int order_moves(uint64_t P, uint64_t O, uint64_t m, int hint,
		       struct mv *list)
{
	int n = 0;

	for (; m; m &= m - 1) {
		int sq = oth_ctz(m);
		uint64_t f = oth_flips(P, O, sq);
		uint64_t np = P | f | (1ull << sq), no = O & ~f;
		uint64_t om = oth_moves(no, np);
		int key = oth_popcount(om) * 4 +
			  oth_popcount(om & OTH_CORNERS) * 2 -
			  (int)((OTH_CORNERS >> sq) & 1) * 3;
		if (sq == hint)
			key = -1000;
		struct mv x = {sq, key, f};
		int j = n++;
		while (j > 0 && list[j - 1].key > key) {
			list[j] = list[j - 1];
			j--;
		}
		list[j] = x;
	}
	return n;
}

static int search(struct othello_solver *s, uint64_t P, uint64_t O,
		  int alpha, int beta, int passed)
{
	int e = oth_popcount(~(P | O));
	struct tt_entry *t = NULL;
	int hint = -1, best = -66, bm = OTHELLO_MOVE_NONE, a0, b0;
	struct mv list[MAX_MOVES];
	uint64_t m;

	if (e <= SHALLOW_CPU)
		return search_small(s, P, O, alpha, beta, passed);
	s->nodes++;
	if (e >= TT_MIN_EMPTIES) {
		t = &s->tt[tt_hash(P, O) & s->tt_mask];
		if (t->stamp == s->stamp && t->P == P && t->O == O) {
			if (t->lo >= beta)
				return t->lo;
			if (t->hi <= alpha)
				return t->hi;
			if (t->lo == t->hi)
				return t->lo;
			if (t->lo > alpha)
				alpha = t->lo;
			if (t->hi < beta)
				beta = t->hi;
			hint = t->move;
		}
	}
	a0 = alpha; /* the window searched decides the bound stored */
	b0 = beta;
	m = oth_moves(P, O);
	if (!m) {
		if (passed)
			return -oth_final_score(O, P);
		return -search(s, O, P, -beta, -alpha, 1);
	}
	int n = order_moves(P, O, m, hint, list);
	for (int i = 0; i < n; i++) {
		uint64_t np = O & ~list[i].f;
		uint64_t no = P | list[i].f | (1ull << list[i].sq);
		int v;
		if (i == 0) {
			v = -search(s, np, no, -beta, -alpha, 0);
		} else {
			v = -search(s, np, no, -alpha - 1, -alpha, 0);
			if (v > alpha && v < beta)
				v = -search(s, np, no, -beta, -v, 0);
		}
		if (v > best) {
			best = v;
			bm = list[i].sq;
			if (v > alpha) {
				alpha = v;
				if (alpha >= beta)
					break;
			}
		}
	}
	if (t) {
		/* Replace always: the newest bound of the current position. */
		if (!(t->stamp == s->stamp && t->P == P && t->O == O)) {
			t->P = P;
			t->O = O;
			t->stamp = s->stamp;
			t->lo = -64;
			t->hi = 64;
		}
		if (best > a0 && best < b0) {
			t->lo = t->hi = (int8_t)best;
		} else if (best >= b0) {
			if (best > t->lo)
				t->lo = (int8_t)best;
		} else if (best < t->hi) {
			t->hi = (int8_t)best;
		}
		t->move = (uint8_t)bm;
	}
	return best;
}

/* The root inside (alpha, beta): the exact score and best move when
 * alpha < score < beta, else alpha (score <= alpha) or beta (score >=
 * beta) with OTHELLO_MOVE_NONE; (-65, 65) is the exact solve. Each move is
 * searched with (max(alpha, best - 1), beta): a null window first, then
 * exactly if it reaches the best so far (the tie rule's lowest square). */
static int solve_root(struct othello_solver *s, uint64_t P, uint64_t O,
		      int alpha, int beta, int *ret_move, uint64_t *ret_nodes)
{
	struct mv list[MAX_MOVES];
	uint64_t m = oth_moves(P, O), n0 = s->nodes;
	int best = -66, bm = OTHELLO_MOVE_NONE, neg = 0, sc;

	if (++s->stamp == 0) { /* wrapped: stale stamps could match */
		memset(s->tt, 0, sizeof(*s->tt) * (s->tt_mask + 1));
		s->stamp = 1;
	}
	s->nodes++;
	if (!m) {
		if (!oth_moves(O, P)) {
			sc = oth_final_score(P, O);
			goto out;
		}
		uint64_t t = P; P = O; O = t;
		m = oth_moves(P, O);
		neg = 1;
		int a = alpha; /* the opponent's window */
		alpha = -beta;
		beta = -a;
	}
	int n = order_moves(P, O, m, -1, list);
	for (int i = 0; i < n; i++) {
		uint64_t np = O & ~list[i].f;
		uint64_t no = P | list[i].f | (1ull << list[i].sq);
		int lo = best - 1 > alpha ? best - 1 : alpha;
		int v = i ? -search(s, np, no, -lo - 1, -lo, 0) : lo + 1;
		/* A null window first: a move that cannot reach the best
		 * score changes nothing; one that can is searched exactly. */
		if (v > lo)
			v = -search(s, np, no, -beta, -lo, 0);
		if (v >= beta) {
			best = beta; /* a lower bound: no move needed */
			bm = OTHELLO_MOVE_NONE;
			break;
		}
		if (v > lo && (v > best || (v == best && list[i].sq < bm))) {
			best = v;
			bm = list[i].sq;
		}
	}
	if (best <= alpha) {
		best = alpha;
		bm = OTHELLO_MOVE_NONE;
	}
	sc = neg ? -best : best;
	bm = neg && bm != OTHELLO_MOVE_NONE ? OTHELLO_MOVE_PASS : bm;
	*ret_move = bm;
	if (ret_nodes)
		*ret_nodes = s->nodes - n0;
	return sc;
out:
	*ret_move = OTHELLO_MOVE_NONE;
	if (ret_nodes)
		*ret_nodes = s->nodes - n0;
	return sc <= alpha ? alpha : sc >= beta ? beta : sc;
}

int othello_solver_solve(struct othello_solver *s, uint64_t P, uint64_t O,
			 int *ret_move, uint64_t *ret_nodes)
{
	return solve_root(s, P, O, -65, 65, ret_move, ret_nodes);
}

int othello_solve_shallow(uint64_t P, uint64_t O, int *ret_move,
			  uint64_t *ret_nodes)
{
	uint64_t n = 0;
	int v = oth_search_shallow(P, O, ret_move, &n);

	if (ret_nodes)
		*ret_nodes = n;
	return v;
}

/* ---- batch ------------------------------------------------------------ */

struct batch {
	const uint64_t *P, *O;
	size_t n;
	int8_t *score;
	uint8_t *move;
	atomic_size_t next;
	atomic_uint_fast64_t nodes;
	atomic_int failed, stopped;
	int (*stop)(void *);
	void *opaque;
	pthread_mutex_t stop_lock; /* stop() is called from one thread at a time */
	int tt_bits;
	int alpha, beta;
};

/* Table size for positions of up to e empties: as many nodes as the full
 * table within 0.1% at 10-16 empties (bench/othello.md, round 8), the
 * full size from 16 empties. */
static int tt_bits_for(int e)
{
	return e + 2;
}

static void *batch_thread(void *arg)
{
	struct batch *b = arg;
	struct othello_solver *s;
	size_t i;

	if (othello_solver_new_sized(&s, b->tt_bits)) {
		atomic_store(&b->failed, 1);
		return NULL;
	}
	while ((i = atomic_fetch_add(&b->next, 1)) < b->n) {
		int mv;
		if (b->stop && (i & 63) == 0) {
			pthread_mutex_lock(&b->stop_lock);
			int st = b->stop(b->opaque);
			pthread_mutex_unlock(&b->stop_lock);
			if (st) {
				atomic_store(&b->stopped, 1);
				break;
			}
		}
		if (atomic_load(&b->stopped))
			break;
		b->score[i] = (int8_t)solve_root(s, b->P[i], b->O[i], b->alpha,
						 b->beta, &mv, NULL);
		b->move[i] = (uint8_t)mv;
	}
	atomic_fetch_add(&b->nodes, s->nodes);
	othello_solver_free(s);
	return NULL;
}

int othello_solve_batch_window(const uint64_t *P, const uint64_t *O,
			       size_t n, int alpha, int beta, int threads,
			       int8_t *ret_score, uint8_t *ret_move,
			       uint64_t *ret_nodes, int (*stop)(void *),
			       void *opaque)
{
	struct batch b = {P, O, n, ret_score, ret_move, 0, 0, 0, 0, stop,
			  opaque, PTHREAD_MUTEX_INITIALIZER, 0, alpha, beta};
	pthread_t tid[256];
	int started = 0, e = 0;

	if (alpha < -65 || beta > 65 || alpha >= beta)
		return GERR_INVAL;
	for (size_t i = 0; i < n; i++) {
		int ei = oth_popcount(~(P[i] | O[i]));
		e = ei > e ? ei : e;
	}
	b.tt_bits = tt_bits_for(e);

	if (threads < 1)
		threads = 1;
	if (threads > 256)
		threads = 256;
	if ((size_t)threads > n)
		threads = n ? (int)n : 1;
	for (int t = 1; t < threads; t++)
		if (pthread_create(&tid[started], NULL, batch_thread, &b) == 0)
			started++;
	batch_thread(&b);
	for (int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	if (ret_nodes)
		*ret_nodes = atomic_load(&b.nodes);
	if (atomic_load(&b.failed))
		return GERR_NOMEM;
	if (atomic_load(&b.stopped))
		return GERR_CANCELLED;
	return 0;
}

int othello_solve_batch(const uint64_t *P, const uint64_t *O, size_t n,
			int threads, int8_t *ret_score, uint8_t *ret_move,
			uint64_t *ret_nodes, int (*stop)(void *), void *opaque)
{
	return othello_solve_batch_window(P, O, n, -65, 65, threads, ret_score,
					  ret_move, ret_nodes, stop, opaque);
}
