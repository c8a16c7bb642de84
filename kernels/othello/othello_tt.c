/* othello_tt.c - the transposition table of the exact search.
 *
 * 2^bits buckets of 64 bytes: a sequence lock (used only when the table
 * is shared between threads) and two entries of 24 bytes keeping the
 * whole position, its score bounds, best move, empties, cost (log2 of the
 * nodes its search took) and generation. Readers never wait and writers
 * never spin: a probe that meets a write takes a miss, a store that meets
 * another drops out (both are optional for an exact search). A spin lock
 * did worse: with more threads than free cores, a thread descheduled
 * holding it stalled every other thread probing that bucket.
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

/* An entry: the position and one word of data (D_* fields), each read
 * and written whole, so that a shared bucket needs no lock to read. */
struct tt_entry {
	uint64_t P, O, d;
};

#define D_LO(d) ((int)(int8_t)((d) & 0xff))
#define D_HI(d) ((int)(int8_t)(((d) >> 8) & 0xff))
#define D_MOVE(d) ((int)(((d) >> 16) & 0xff))
#define D_EMPTIES(d) ((int)(((d) >> 24) & 0xff))
#define D_COST(d) ((int)(((d) >> 32) & 0xff))
#define D_GEN(d) ((uint16_t)((d) >> 40))

static inline uint64_t d_pack(int lo, int hi, int move, int empties,
			      int cost, uint16_t gen)
{
	return (uint64_t)(uint8_t)lo | (uint64_t)(uint8_t)hi << 8 |
	       (uint64_t)(uint8_t)move << 16 |
	       (uint64_t)(uint8_t)empties << 24 |
	       (uint64_t)(uint8_t)cost << 32 | (uint64_t)gen << 40;
}

/* seq: a sequence lock when the table is shared: odd while a writer
 * changes the bucket; a reader that sees it odd or changed takes a miss,
 * a writer that finds it taken drops its store. Nobody waits, so a
 * thread descheduled mid-write (more threads than cores) stalls nobody. */
struct tt_bucket {
	alignas(64) uint64_t seq;
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
	return &t->b[mix64(P ^ mix64(O + MIX_GOLDEN)) & t->mask];
}

void oth_tt_prefetch(const struct oth_tt *t, uint64_t P, uint64_t O)
{
	__builtin_prefetch(bucket(t, P, O));
}

static inline uint64_t ld(const uint64_t *w)
{
	return __atomic_load_n(w, __ATOMIC_RELAXED);
}

static inline void st(uint64_t *w, uint64_t v)
{
	__atomic_store_n(w, v, __ATOMIC_RELAXED);
}

int oth_tt_probe(struct oth_tt *t, uint64_t P, uint64_t O, int *lo, int *hi,
		 int *move)
{
	struct tt_bucket *b = bucket(t, P, O);
	uint64_t s1 = 0, d = 0;
	int found = 0;

	if (t->shared) {
		s1 = __atomic_load_n(&b->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1)
			return 0;
	}
	for (int i = 0; i < 2; i++) {
		struct tt_entry *e = &b->e[i];
		if (ld(&e->P) == P && ld(&e->O) == O) {
			d = ld(&e->d);
			if (D_GEN(d) == t->gen) {
				found = 1;
				break;
			}
		}
	}
	if (t->shared) {
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&b->seq, __ATOMIC_RELAXED) != s1)
			return 0;
	}
	if (found) {
		*lo = D_LO(d);
		*hi = D_HI(d);
		*move = D_MOVE(d);
	}
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
	int cost = log2u(nodes), lo = -64, hi = 64, mv = 255, ecost = 0;
	uint64_t s = 0;

	if (t->shared) {
		s = __atomic_load_n(&b->seq, __ATOMIC_RELAXED);
		if ((s & 1) || !__atomic_compare_exchange_n(&b->seq, &s, s + 1,
							    0, __ATOMIC_ACQUIRE,
							    __ATOMIC_RELAXED))
			return; /* another writer: this store is optional */
		__atomic_thread_fence(__ATOMIC_RELEASE);
	}
	for (int i = 0; i < 2; i++) {
		uint64_t d = ld(&b->e[i].d);
		if (ld(&b->e[i].P) == P && ld(&b->e[i].O) == O &&
		    D_GEN(d) == t->gen) {
			e = &b->e[i];
			lo = D_LO(d);
			hi = D_HI(d);
			mv = D_MOVE(d);
			ecost = D_COST(d);
		}
	}
	if (!e) {
		uint64_t dx = ld(&b->e[0].d), dy = ld(&b->e[1].d);
		int kx = (D_GEN(dx) == t->gen) * 4096 + D_EMPTIES(dx) * 64 +
			 D_COST(dx);
		int ky = (D_GEN(dy) == t->gen) * 4096 + D_EMPTIES(dy) * 64 +
			 D_COST(dy);
		e = kx <= ky ? &b->e[0] : &b->e[1];
		st(&e->P, P);
		st(&e->O, O);
	}
	if (best > alpha && best < beta) {
		lo = hi = best;
	} else if (best >= beta) {
		if (best > lo)
			lo = best;
	} else if (best < hi) {
		hi = best;
	}
	if (best > alpha && move < 64)
		mv = move;
	st(&e->d, d_pack(lo, hi, mv, empties, cost > ecost ? cost : ecost,
			 t->gen));
	if (t->shared)
		__atomic_store_n(&b->seq, s + 2, __ATOMIC_RELEASE);
}
