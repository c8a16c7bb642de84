/* officers_cpu.c - the sequence state, the candidate and exact steps, and
 * the fast multi-threaded CPU path.
 *
 * officers_cpu_extend works in chunks: the candidates of a chunk are
 * computed in order on the calling thread (each needs the previous ones),
 * then the exact steps of the chunk, independent of each other, are split
 * among the threads. The first position whose exact value differs from its
 * candidate is a new rare position: the chunk is kept up to it, the value
 * recorded, and the rest recomputed with the larger rare table. Chunks
 * start at one position after a new rare value and double up to
 * CHUNK_MAX, so the region of dense rare values (below 20628) wastes
 * little. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "gerr.h"
#include "officers.h"
#include "workload.h"

#define MASK_WORDS (OFFICERS_VMAX / 64)
#define CHUNK_MAX (1u << 18)
#define PAR_MIN 4096 /* chunks below this run their exact steps inline */

int officers_seq_init(struct officers_seq *s, uint64_t cap)
{
	memset(s, 0, sizeof(*s));
	s->prefix = malloc(OFFICERS_PREFIX * sizeof(uint16_t));
	s->cap = cap ? cap : 1;
	s->vals = big_alloc(s->cap * sizeof(uint16_t)); /* filled once, in order */
	if (!s->prefix || !s->vals) {
		officers_seq_free(s);
		return GERR_NOMEM;
	}
	s->st.fnv = OFFICERS_FNV_BASIS;
	for (unsigned v = 0; v < OFFICERS_VMAX; v++)
		s->st.first[v] = OFFICERS_NONE;
	return 0;
}

int officers_seq_reserve(struct officers_seq *s, uint64_t to)
{
	uint64_t need = to - s->base;
	uint16_t *nv;

	if (to <= s->base + s->cap)
		return 0;
	if (need < s->cap + s->cap / 2)
		need = s->cap + s->cap / 2;
	nv = realloc(s->vals, need * sizeof(uint16_t));
	if (!nv)
		return GERR_NOMEM;
	s->vals = nv;
	s->cap = need;
	return 0;
}

void officers_seq_free(struct officers_seq *s)
{
	free(s->vals);
	free(s->prefix);
	s->vals = NULL;
	s->prefix = NULL;
}

int officers_seq_push(struct officers_seq *s, unsigned v)
{
	uint64_t x = s->n;
	uint16_t w = (uint16_t)v;

	if (v >= OFFICERS_VMAX)
		return GERR_UNSUPPORTED;
	if (x + 1 > s->base + s->cap && officers_seq_reserve(s, x + 1))
		return GERR_NOMEM;
	if (officers_is_rare(v)) {
		if (s->nrare >= OFFICERS_MAX_RARE)
			return GERR_TOOBIG;
		s->rare[s->nrare].pos = x;
		s->rare[s->nrare].val = v;
		s->nrare++;
	}
	s->vals[x - s->base] = w;
	if (x < OFFICERS_PREFIX) {
		s->prefix[x] = w;
		s->nprefix = (uint32_t)(x + 1);
	}
	s->st.fnv = officers_fnv(s->st.fnv, &w, 1);
	s->st.count[v]++;
	if (s->st.first[v] == OFFICERS_NONE)
		s->st.first[v] = x;
	s->n = x + 1;
	return 0;
}

/* Value i for i read by the steps: vals when i >= base, else the prefix.
 * Returns -1 when the run does not hold it. */
static inline int get_checked(const struct officers_seq *s, uint64_t i)
{
	if (i >= s->base)
		return s->vals[i - s->base];
	if (i < s->nprefix)
		return s->prefix[i];
	return -1;
}

static inline unsigned first_common_unmarked(const uint64_t *m)
{
	/* Common values: odd popcount of v & ~0x11. Per 64-bit word w the
	 * pattern of common bits depends only on the parity of bits 6..8 of
	 * the word's base value (bit 4 is ignored, bits 1,2,3,5 vary inside
	 * the word). */
	static const uint64_t common_even = 0x3cc33cc3c33cc33cull;
	for (unsigned w = 0; w < MASK_WORDS; w++) {
		unsigned hi = (unsigned)__builtin_popcount(w) & 1;
		uint64_t common = hi ? ~common_even : common_even;
		uint64_t free_common = ~m[w] & common;
		if (free_common)
			return w * 64 + (unsigned)__builtin_ctzll(free_common);
	}
	return OFFICERS_VMAX;
}

unsigned officers_candidate(const struct officers_seq *s, uint64_t x,
			    uint64_t *m)
{
	uint32_t nr = s->nrare;

	memset(m, 0, MASK_WORDS * sizeof(uint64_t));
	/* Rare positions ascend: those below x, and the fast path where every
	 * G(x-1-p) lies in vals. */
	while (nr > 0 && s->rare[nr - 1].pos >= x)
		nr--;
	if (nr == 0)
		return first_common_unmarked(m);
	if (x - 1 - s->rare[nr - 1].pos >= s->base) {
		const uint16_t *hi = s->vals + (x - 1 - s->base);
		for (uint32_t i = 0; i < nr; i++) {
			unsigned o = s->rare[i].val ^ hi[-(int64_t)s->rare[i].pos];
			m[o >> 6] |= 1ull << (o & 63);
		}
	} else {
		for (uint32_t i = 0; i < nr; i++) {
			int g = get_checked(s, x - 1 - s->rare[i].pos);
			unsigned o;
			if (g < 0)
				return OFFICERS_VMAX + 1; /* not held */
			o = s->rare[i].val ^ (unsigned)g;
			m[o >> 6] |= 1ull << (o & 63);
		}
	}
	return first_common_unmarked(m);
}

static inline unsigned first_unmarked(const uint64_t *m)
{
	for (unsigned w = 0; w < MASK_WORDS; w++)
		if (~m[w])
			return w * 64 + (unsigned)__builtin_ctzll(~m[w]);
	return OFFICERS_VMAX;
}

int officers_exact(const struct officers_seq *s, uint64_t x, unsigned c,
		   const uint64_t *mark, uint64_t *ret_depth)
{
	uint64_t m[MASK_WORDS];
	uint64_t half, amax, a;
	const uint16_t *lo, *hi;
	unsigned missing = 0;

	if (ret_depth)
		*ret_depth = 0;
	if (x < 2)
		return 0;
	if (c > OFFICERS_VMAX)
		return GERR_UNSUPPORTED;
	memcpy(m, mark, sizeof(m));
	for (unsigned v = 0; v < c; v++)
		if (!((m[v >> 6] >> (v & 63)) & 1))
			missing++; /* all rare: every common below c is marked */
	if (missing == 0)
		return (int)c;
	half = (x - 1) / 2;
	/* What the run holds: with base 0, vals has everything before x;
	 * otherwise the prefix for small a and vals for x-1-a >= base. */
	if (s->base == 0) {
		lo = s->vals;
		amax = half;
	} else {
		lo = s->prefix;
		amax = half;
		if (amax > (uint64_t)s->nprefix - 1)
			amax = (uint64_t)s->nprefix - 1;
		if (amax > x - 1 - s->base)
			amax = x - 1 - s->base;
	}
	hi = s->vals + (x - 1 - s->base);
	for (a = 0; a <= amax; a++) {
		unsigned o = lo[a] ^ hi[-(int64_t)a];
		if (o < c && !((m[o >> 6] >> (o & 63)) & 1)) {
			m[o >> 6] |= 1ull << (o & 63);
			if (--missing == 0) {
				if (ret_depth)
					*ret_depth = a + 1;
				return (int)c;
			}
		}
	}
	if (ret_depth)
		*ret_depth = a;
	if (amax < half)
		return GERR_UNSUPPORTED; /* scan deeper than the values held */
	return (int)first_unmarked(m); /* a new rare value */
}

int officers_value(const struct officers_seq *s, uint64_t x)
{
	uint64_t m[MASK_WORDS];
	unsigned c;

	if (x < 2)
		return 0;
	c = officers_candidate(s, x, m);
	if (c > OFFICERS_VMAX)
		return GERR_UNSUPPORTED;
	return officers_exact(s, x, c, m, NULL);
}

/* ---- the threaded chunk step -------------------------------------------- */

struct chunk {
	const struct officers_seq *s;
	uint64_t n0;           /* first position of the chunk */
	uint64_t len;
	const uint64_t *marks; /* len * MASK_WORDS */
	int *exact;            /* len: exact value or negative code */
	int nthreads;
};

struct part {
	struct chunk *ch;
	uint64_t lo, hi;
	pthread_t tid;
};

static void exact_range(struct chunk *ch, uint64_t lo, uint64_t hi)
{
	for (uint64_t i = lo; i < hi; i++) {
		uint64_t x = ch->n0 + i;
		unsigned c = ch->s->vals[x - ch->s->base];
		ch->exact[i] = officers_exact(ch->s, x, c,
					      ch->marks + i * MASK_WORDS, NULL);
	}
}

static void *part_main(void *arg)
{
	struct part *p = arg;

	exact_range(p->ch, p->lo, p->hi);
	return NULL;
}

static int exact_chunk(struct chunk *ch)
{
	struct part parts[64];
	int nt = ch->nthreads, started = 0;

	if (nt > 64)
		nt = 64;
	if (nt <= 1 || ch->len < PAR_MIN) {
		exact_range(ch, 0, ch->len);
		return 0;
	}
	/* Interleaved slices keep the scan depths balanced. */
	for (int t = 0; t < nt; t++) {
		parts[t].ch = ch;
		parts[t].lo = ch->len * (uint64_t)t / (uint64_t)nt;
		parts[t].hi = ch->len * (uint64_t)(t + 1) / (uint64_t)nt;
	}
	for (int t = 1; t < nt; t++) {
		if (pthread_create(&parts[t].tid, NULL, part_main, &parts[t]))
			break;
		started = t;
	}
	/* Whatever did not start runs here. */
	exact_range(ch, parts[0].lo, parts[0].hi);
	for (int t = started + 1; t < nt; t++)
		exact_range(ch, parts[t].lo, parts[t].hi);
	for (int t = 1; t <= started; t++)
		pthread_join(parts[t].tid, NULL);
	return 0;
}

int officers_cpu_extend(struct officers_seq *s, uint64_t to, int threads,
			const struct wl_run_io *io, uint64_t units_base,
			char *err, size_t errlen)
{
	uint64_t chunk = 1;
	uint64_t *marks = NULL;
	int *exact = NULL;
	int rc = 0;

	marks = malloc((size_t)CHUNK_MAX * MASK_WORDS * sizeof(uint64_t));
	exact = malloc((size_t)CHUNK_MAX * sizeof(int));
	if (!marks || !exact) {
		rc = GERR_NOMEM;
		goto out;
	}
	rc = officers_seq_reserve(s, to);
	if (rc)
		goto out;
	while (s->n < to) {
		uint64_t n0 = s->n, len = to - n0, i;
		struct chunk ch;

		if (io && io->should_stop && io->should_stop(io->opaque)) {
			rc = GERR_CANCELLED;
			goto out;
		}
		if (n0 < 2) {
			rc = officers_seq_push(s, 0);
			if (rc)
				goto out;
			continue;
		}
		if (len > chunk)
			len = chunk;
		for (i = 0; i < len; i++) {
			uint64_t x = n0 + i;
			unsigned c = officers_candidate(
				s, x, marks + i * MASK_WORDS);
			if (c >= OFFICERS_VMAX) {
				snprintf(err, errlen, "officers: G(%llu): %s",
					 (unsigned long long)x,
					 c > OFFICERS_VMAX
						 ? "a rare position's partner "
						   "is not held by this run"
						 : "value reaches 512");
				rc = GERR_UNSUPPORTED;
				goto out;
			}
			s->vals[x - s->base] = (uint16_t)c;
		}
		ch.s = s;
		ch.n0 = n0;
		ch.len = len;
		ch.marks = marks;
		ch.exact = exact;
		ch.nthreads = threads;
		exact_chunk(&ch);
		for (i = 0; i < len; i++) {
			uint64_t x = n0 + i;
			unsigned c = s->vals[x - s->base];
			if (exact[i] < 0) {
				snprintf(err, errlen, "officers: G(%llu): the "
					 "exact scan needs values beyond the "
					 "%u-value prefix and tail a run holds",
					 (unsigned long long)x, OFFICERS_PREFIX);
				rc = exact[i];
				goto out;
			}
			rc = officers_seq_push(s, (unsigned)exact[i]);
			if (rc) {
				snprintf(err, errlen, "officers: G(%llu) = %d: "
					 "%s", (unsigned long long)x, exact[i],
					 gerr_str(rc));
				goto out;
			}
			if ((unsigned)exact[i] != c)
				break; /* a new rare value: recompute after */
		}
		if (i < len)
			chunk = 1;
		else if (chunk < CHUNK_MAX)
			chunk *= 2;
		if (io && io->progress)
			io->progress(io->opaque, s->n - units_base);
	}
out:
	free(marks);
	free(exact);
	return rc;
}

void officers_cpu_depths(const struct officers_seq *s, uint64_t from,
			 uint64_t to, uint64_t *ret_sum, uint64_t *ret_max,
			 uint64_t *ret_argmax)
{
	uint64_t m[MASK_WORDS], sum = 0, mx = 0, arg = 0;

	for (uint64_t x = from < 2 ? 2 : from; x < to; x++) {
		uint64_t d;
		unsigned c = officers_candidate(s, x, m);
		if (c >= OFFICERS_VMAX)
			continue;
		officers_exact(s, x, c, m, &d);
		sum += d;
		if (d > mx) {
			mx = d;
			arg = x;
		}
	}
	*ret_sum = sum;
	*ret_max = mx;
	*ret_argmax = arg;
}

void officers_cpu_candidates(struct officers_seq *s, uint64_t len,
			     uint16_t *out)
{
	uint64_t m[MASK_WORDS];

	for (uint64_t i = 0; i < len; i++) {
		uint64_t x = s->n + i;
		unsigned c = x < 2 ? 0 : officers_candidate(s, x, m);
		s->vals[x - s->base] = (uint16_t)c;
		out[i] = (uint16_t)c;
	}
}

int officers_seq_append(struct officers_seq *s, const uint16_t *v,
			uint64_t len)
{
	uint64_t h = s->st.fnv;
	int rc = officers_seq_reserve(s, s->n + len);

	if (rc)
		return rc;
	for (uint64_t i = 0; i < len; i++) {
		unsigned w = v[i];
		uint64_t x = s->n;
		if (w >= OFFICERS_VMAX || officers_is_rare(w) ||
		    x < OFFICERS_PREFIX || s->st.first[w] == OFFICERS_NONE) {
			s->st.fnv = h;
			rc = officers_seq_push(s, w);
			if (rc)
				return rc;
			h = s->st.fnv;
			continue;
		}
		s->vals[x - s->base] = (uint16_t)w;
		h = (h ^ (w & 0xffu)) * OFFICERS_FNV_PRIME;
		h = (h ^ (w >> 8)) * OFFICERS_FNV_PRIME;
		s->st.count[w]++;
		s->n = x + 1;
	}
	s->st.fnv = h;
	return 0;
}
