/* othello_tt.c - the transposition table of the exact search.
 *
 * 2^bits buckets of 64 bytes: a spin lock (taken only when the table is
 * shared between threads; held for a few loads and stores) and two
 * entries of 24 bytes keeping the whole position, its score bounds, best
 * move, empties, cost (log2 of the nodes its search took) and generation.
 * Replacement: the entry of the same position is updated (bounds of the
 * same generation narrowed); else an entry of an older generation goes,
 * else the one with fewer empties, then the cheaper one.
 */
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gerr.h"
#include "othello_deep.h"

struct tt_entry {
	uint64_t P, O;
	int8_t lo, hi;
	uint8_t move, empties, cost, pad;
	uint16_t gen;
};

struct tt_bucket {
	alignas(64) atomic_uint lock;
	uint32_t pad;
	struct tt_entry e[2];
};

struct oth_tt {
	void *raw; /* calloc'ed: untouched pages cost nothing */
	struct tt_bucket *b;
	uint64_t mask;
	uint16_t gen;
	int shared;
};

int oth_tt_new(struct oth_tt **ret, int bits, int shared)
{
	struct oth_tt *t = calloc(1, sizeof(*t));
	size_t n = (size_t)1 << bits;

	if (!t)
		return GERR_NOMEM;
	t->raw = calloc(n + 1, sizeof(*t->b));
	if (!t->raw) {
		free(t);
		return GERR_NOMEM;
	}
	t->b = (struct tt_bucket *)(((uintptr_t)t->raw + 63) & ~(uintptr_t)63);
	/* Probes land anywhere: huge pages spare most TLB misses. */
	if (n * sizeof(*t->b) >= ((size_t)4 << 20)) {
		uintptr_t a = ((uintptr_t)t->b + (2u << 20) - 1) &
			      ~(uintptr_t)((2u << 20) - 1);
		uintptr_t z = ((uintptr_t)(t->b + n)) & ~(uintptr_t)((2u << 20) - 1);
		if (z > a)
			madvise((void *)a, z - a, MADV_HUGEPAGE);
	}
	t->mask = n - 1;
	t->gen = 1;
	t->shared = shared;
	*ret = t;
	return 0;
}

void oth_tt_free(struct oth_tt *t)
{
	if (!t)
		return;
	free(t->raw);
	free(t);
}

void oth_tt_next_gen(struct oth_tt *t)
{
	if (++t->gen == 0) { /* wrapped: old stamps would match again */
		memset(t->b, 0, (t->mask + 1) * sizeof(*t->b));
		t->gen = 1;
	}
}

static inline struct tt_bucket *bucket(const struct oth_tt *t, uint64_t P,
				       uint64_t O)
{
	return &t->b[mix64(P ^ mix64(O + OTHELLO_GOLDEN)) & t->mask];
}

void oth_tt_prefetch(const struct oth_tt *t, uint64_t P, uint64_t O)
{
	__builtin_prefetch(bucket(t, P, O));
}

static inline void lock(const struct oth_tt *t, struct tt_bucket *b)
{
	if (!t->shared)
		return;
	while (atomic_exchange_explicit(&b->lock, 1, memory_order_acquire))
		while (atomic_load_explicit(&b->lock, memory_order_relaxed))
			;
}

static inline void unlock(const struct oth_tt *t, struct tt_bucket *b)
{
	if (t->shared)
		atomic_store_explicit(&b->lock, 0, memory_order_release);
}

int oth_tt_probe(struct oth_tt *t, uint64_t P, uint64_t O, int *lo, int *hi,
		 int *move)
{
	struct tt_bucket *b = bucket(t, P, O);
	int found = 0;

	lock(t, b);
	for (int i = 0; i < 2; i++) {
		struct tt_entry *e = &b->e[i];
		if (e->P == P && e->O == O && e->gen == t->gen) {
			*lo = e->lo;
			*hi = e->hi;
			*move = e->move;
			found = 1;
			break;
		}
	}
	unlock(t, b);
	return found;
}

static inline int log2u(uint64_t x)
{
	return 63 - __builtin_clzll(x | 1);
}

void oth_tt_store(struct oth_tt *t, uint64_t P, uint64_t O, int empties,
		  int alpha, int beta, int best, int move, uint64_t nodes)
{
	struct tt_bucket *b = bucket(t, P, O);
	struct tt_entry *e = NULL;
	int cost = log2u(nodes);

	lock(t, b);
	for (int i = 0; i < 2; i++)
		if (b->e[i].P == P && b->e[i].O == O && b->e[i].gen == t->gen)
			e = &b->e[i];
	if (!e) {
		struct tt_entry *x = &b->e[0], *y = &b->e[1];
		int kx = (x->gen == t->gen) * 4096 + x->empties * 64 + x->cost;
		int ky = (y->gen == t->gen) * 4096 + y->empties * 64 + y->cost;
		e = kx <= ky ? x : y;
		e->P = P;
		e->O = O;
		e->gen = t->gen;
		e->lo = -64;
		e->hi = 64;
		e->move = 255;
	}
	if (best > alpha && best < beta) {
		e->lo = e->hi = (int8_t)best;
	} else if (best >= beta) {
		if (best > e->lo)
			e->lo = (int8_t)best;
	} else if (best < e->hi) {
		e->hi = (int8_t)best;
	}
	if (best > alpha && move < 64)
		e->move = (uint8_t)move;
	e->empties = (uint8_t)empties;
	if (cost > e->cost)
		e->cost = (uint8_t)cost;
	unlock(t, b);
}
