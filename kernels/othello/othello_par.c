/* othello_par.c - the solver API (othello.h) and the batch runner.
 *
 * A batch splits by depth. Positions with fewer than DEEP_MIN empties go
 * one per thread (each thread its own small table: a fresh table's pages
 * cost more than these searches, bench/othello.md round 8). Deep ones (and
 * all of them when the batch has fewer positions than threads) are solved
 * one at a time with every thread on the position: one thread runs the
 * search, the others take the moves it shares (young brothers wait,
 * othello_deep.c; asleep while there are none) over one shared table.
 * The calling thread meanwhile polls stop() every POLL_MS, so a revoked
 * lease interrupts a deep search within that; the search's end and a stop
 * wake the sleepers (oth_team_wake).
 *
 * Threads: othello_solve_batch starts and joins its own threads; a struct
 * othello_solver belongs to one thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "gerr.h"
#include "othello_deep.h"
#include "othello_search.h"

#define DEEP_MIN 18
#define DEEP_TT_BITS_MAX 23
#define MAX_THREADS 256
#define POLL_MS 10

struct othello_solver {
	struct oth_tt *tt;
	atomic_int abort; /* never set: a solver runs to the end */
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
	if (oth_tt_new(&s->tt, bits, 0)) {
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
	oth_tt_free(s->tt);
	free(s);
}

static int solver_solve(struct othello_solver *s, uint64_t P, uint64_t O,
			int alpha, int beta, int *ret_move, uint64_t *ret_nodes)
{
	struct oth_search q = {.tt = s->tt, .abort = &s->abort};
	int v;

	oth_tt_next_gen(s->tt); /* node counts independent of order */
	v = oth_deep_root(&q, P, O, alpha, beta, ret_move);
	s->nodes += q.nodes;
	if (ret_nodes)
		*ret_nodes = q.nodes;
	return v;
}

int othello_solver_solve(struct othello_solver *s, uint64_t P, uint64_t O,
			 int *ret_move, uint64_t *ret_nodes)
{
	return solver_solve(s, P, O, -65, 65, ret_move, ret_nodes);
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

/* ---- one position, all threads -------------------------------------------- */

struct par {
	struct oth_tt *tt;
	struct oth_team *team;
	atomic_int abort;
	uint64_t P, O;
	int alpha, beta;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int running, done, score, move;
	uint64_t nodes;
	atomic_int next_id;
};

/* Thread 0 searches the root; the others help in its forks till it is
 * done (or stopped) and sets abort. */
static void *par_thread(void *arg)
{
	struct par *p = arg;
	struct oth_search s = {.tt = p->tt, .abort = &p->abort,
			       .team = p->team};
	int id = atomic_fetch_add(&p->next_id, 1), mv = 0, v = 0;

	if (id == 0) {
		v = oth_deep_root(&s, p->P, p->O, p->alpha, p->beta, &mv);
	} else {
		oth_team_serve(&s);
	}
	pthread_mutex_lock(&p->lock);
	if (id == 0 && !atomic_load(&p->abort)) {
		p->done = 1;
		p->score = v;
		p->move = mv;
		atomic_store(&p->abort, 1); /* the helpers stop */
	}
	if (id == 0 && p->team)
		oth_team_wake(p->team); /* asleep, they see it */
	p->nodes += s.nodes;
	p->running--;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int oth_par_solve(struct oth_tt *tt, struct oth_team *team, uint64_t P,
		  uint64_t O, int alpha, int beta, int threads, int *ret_score,
		  int *ret_move, uint64_t *ret_nodes, int (*stop)(void *),
		  void *opaque)
{
	/* One thread: the plain search. */
	struct par p = {.tt = tt, .team = threads > 1 ? team : NULL, .P = P,
			.O = O, .alpha = alpha, .beta = beta};
	pthread_t tid[MAX_THREADS];
	int started = 0, stopped = 0;

	oth_tt_next_gen(tt);
	atomic_init(&p.abort, 0);
	atomic_init(&p.next_id, 0);
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.cond, NULL);
	pthread_mutex_lock(&p.lock);
	for (int t = 0; t < threads; t++)
		if (pthread_create(&tid[started], NULL, par_thread, &p) == 0)
			started++;
	p.running = started;
	while (p.running > 0) {
		/* pthread_cond_timedwait's deadline is on CLOCK_REALTIME. */
		int64_t ns = gclock_wall_ns() + POLL_MS * 1000000LL;
		struct timespec ts = { .tv_sec = ns / 1000000000,
				       .tv_nsec = ns % 1000000000 };
		pthread_cond_timedwait(&p.cond, &p.lock, &ts);
		if (!p.done && !stopped && stop && stop(opaque)) {
			stopped = 1;
			atomic_store(&p.abort, 1);
			if (p.team)
				oth_team_wake(p.team);
		}
	}
	pthread_mutex_unlock(&p.lock);
	for (int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	pthread_mutex_destroy(&p.lock);
	pthread_cond_destroy(&p.cond);
	*ret_nodes += p.nodes;
	if (!started)
		return GERR_NOMEM;
	if (!p.done)
		return GERR_CANCELLED;
	*ret_score = p.score;
	*ret_move = p.move;
	return 0;
}

/* ---- batch ------------------------------------------------------------------ */

struct batch {
	const uint64_t *P, *O;
	const size_t *idx; /* the positions this pool solves */
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
	int alpha, beta; /* the window */
	size_t poll_mask; /* stop() before every (poll_mask + 1)th position */
};

/* Table buckets (two entries each) for positions of up to e empties: as
 * many nodes as a large table within 0.1% at 10-16 empties (round 8). */
static int tt_bits_for(int e)
{
	return e + 1;
}

static void *batch_thread(void *arg)
{
	struct batch *b = arg;
	struct othello_solver *s;
	size_t k;

	if (othello_solver_new_sized(&s, b->tt_bits)) {
		atomic_store(&b->failed, 1);
		return NULL;
	}
	while ((k = atomic_fetch_add(&b->next, 1)) < b->n) {
		size_t i = b->idx[k];
		int mv;
		if (b->stop && (k & b->poll_mask) == 0) {
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
		b->score[i] = (int8_t)solver_solve(s, b->P[i], b->O[i],
						   b->alpha, b->beta, &mv, NULL);
		b->move[i] = (uint8_t)mv;
	}
	atomic_fetch_add(&b->nodes, s->nodes);
	othello_solver_free(s);
	return NULL;
}

/* The positions idx[0..n) one per thread. */
static int pool_solve(struct batch *b, int threads, int e)
{
	pthread_t tid[MAX_THREADS];
	int started = 0;

	b->tt_bits = tt_bits_for(e);
	b->poll_mask = e >= 14 ? 0 : 63; /* each position: milliseconds */
	if ((size_t)threads > b->n)
		threads = b->n ? (int)b->n : 1;
	for (int t = 1; t < threads; t++)
		if (pthread_create(&tid[started], NULL, batch_thread, b) == 0)
			started++;
	batch_thread(b);
	for (int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	if (atomic_load(&b->failed))
		return GERR_NOMEM;
	if (atomic_load(&b->stopped))
		return GERR_CANCELLED;
	return 0;
}

/* The positions idx[0..n) one at a time on all threads. */
static int deep_solve(struct batch *b, int threads, int e, uint64_t *nodes)
{
	struct oth_tt *tt;
	struct oth_team *team;
	/* Fresh pages and cache misses cost more than a fuller table below
	 * some 24 empties (22 empties: 2^20 buckets 8% faster than 2^23). */
	int bits = e - 2 < 16 ? 16 : e - 2 > DEEP_TT_BITS_MAX ? DEEP_TT_BITS_MAX
							       : e - 2;
	int rc = 0;

	if (oth_team_new(&team))
		return GERR_NOMEM;
	if (oth_tt_new(&tt, bits, threads > 1)) {
		oth_team_free(team);
		return GERR_NOMEM;
	}
	for (size_t k = 0; k < b->n && !rc; k++) {
		size_t i = b->idx[k];
		int sc = 0, mv = 0;
		rc = oth_par_solve(tt, team, b->P[i], b->O[i], b->alpha, b->beta,
			       threads, &sc, &mv, nodes, b->stop, b->opaque);
		b->score[i] = (int8_t)sc;
		b->move[i] = (uint8_t)mv;
	}
	oth_tt_free(tt);
	oth_team_free(team);
	return rc;
}

int othello_solve_batch(const uint64_t *P, const uint64_t *O, size_t n,
			int threads, int8_t *ret_score, uint8_t *ret_move,
			uint64_t *ret_nodes, int (*stop)(void *), void *opaque)
{
	return othello_solve_batch_window(P, O, n, -65, 65, threads, ret_score,
					  ret_move, ret_nodes, stop, opaque);
}

int othello_solve_batch_window(const uint64_t *P, const uint64_t *O, size_t n,
			       int alpha, int beta, int threads,
			       int8_t *ret_score, uint8_t *ret_move,
			       uint64_t *ret_nodes, int (*stop)(void *),
			       void *opaque)
{
	struct batch b = {P, O, NULL, 0, ret_score, ret_move, 0, 0, 0, 0,
			  stop, opaque, PTHREAD_MUTEX_INITIALIZER, 0, alpha,
			  beta, 63};
	if (alpha < -65 || beta > 65 || alpha >= beta)
		return GERR_INVAL;
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	size_t nd = 0, ns = 0;
	int eshallow = 0, edeep = 0, rc = 0;
	uint64_t dnodes = 0;

	if (!idx)
		return GERR_NOMEM;
	if (threads < 1)
		threads = 1;
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	/* Deep positions at the front of idx, the others at the back. */
	for (size_t i = 0; i < n; i++) {
		int e = oth_popcount(~(P[i] | O[i]));
		if (e >= DEEP_MIN || (threads > 1 && n < (size_t)threads)) {
			idx[nd++] = i;
			edeep = e > edeep ? e : edeep;
		} else {
			idx[n - ++ns] = i;
			eshallow = e > eshallow ? e : eshallow;
		}
	}
	if (ns) {
		b.idx = idx + nd;
		b.n = ns;
		rc = pool_solve(&b, threads, eshallow);
	}
	if (nd && !rc) {
		b.idx = idx;
		b.n = nd;
		rc = deep_solve(&b, threads, edeep, &dnodes);
	}
	free(idx);
	if (ret_nodes)
		*ret_nodes = atomic_load(&b.nodes) + dnodes;
	return rc;
}
