/* officers.h - the Officers workload's plain-C core: Grundy values of the
 * octal game 0.6, the O(n^2) reference, the fast exact CPU path, the running
 * statistics and the binary result format.
 *
 * The problem
 *   G(0) = G(1) = 0 and for n >= 2
 *     G(n) = mex { G(a) ^ G(n-1-a) : 0 <= a <= (n-1)/2 }.
 *   A value v is rare when popcount(v & ~0x11) is even, common otherwise.
 *   common ^ common = rare, so a common option of G(n) needs a rare value
 *   at one end of its pair.
 *
 * The exact two-step algorithm (used by every fast path; the reference is
 * the plain definition)
 *   1. candidate: mark r ^ G(n-1-p) for every known rare position p < n
 *      (value r); the candidate c is the smallest common value not marked.
 *      No other pair can produce a common value, so c is G(n) unless a rare
 *      value below c is missing from the options.
 *   2. exact step: every rare value below c not yet marked must be hit by
 *      some pair G(a) ^ G(n-1-a); scan a = 0, 1, ... and stop as soon as all
 *      are hit (then G(n) = c). If the scan reaches the midpoint (n-1)/2
 *      with some still missing, G(n) is the smallest missing one: a NEW rare
 *      position, which joins the rare table before n+1 is computed.
 *   The scan reads G(0..k) and G(n-1-k..n-1) for a depth k that averages a
 *   few thousand; a run keeps OFFICERS_PREFIX values from G(0) and at least
 *   OFFICERS_TAIL values before its frontier, and refuses (GERR_UNSUPPORTED,
 *   with the position) a scan that would need more.
 *
 * Limits: values must stay below OFFICERS_VMAX = 512 (all known values do;
 * the largest below 2^21 is G(1274955) = 319); at most OFFICERS_MAX_RARE rare
 * positions (1584 are known).
 *
 * Threads: every function here is reentrant; nothing has global state.
 * Ownership: callers own every struct passed in; nothing is kept.
 */
#ifndef GPUD_OFFICERS_H
#define GPUD_OFFICERS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OFFICERS_VMAX 512u
#define OFFICERS_MAX_RARE 4096u
#define OFFICERS_PREFIX (1u << 20)   /* values kept from G(0) */
#define OFFICERS_TAIL (1u << 20)     /* values kept before a frontier */
#define OFFICERS_MAX_N (1ull << 48)  /* largest --to */
#define OFFICERS_NONE UINT64_MAX
#define OFFICERS_FNV_BASIS 0xcbf29ce484222325ull
#define OFFICERS_FNV_PRIME 0x100000001b3ull
#define OFFICERS_MAX_ZEROS 64u

static inline int officers_is_rare(unsigned v)
{
	return (__builtin_popcount(v & ~0x11u) & 1) == 0;
}

/* FNV-1a 64 over the values as uint16 little-endian. */
static inline uint64_t officers_fnv(uint64_t h, const uint16_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h = (h ^ (v[i] & 0xffu)) * OFFICERS_FNV_PRIME;
		h = (h ^ (v[i] >> 8)) * OFFICERS_FNV_PRIME;
	}
	return h;
}

/* ---- the reference ------------------------------------------------------ */

/* G(0..n-1) by the definition, O(n^2). Returns 0 or GERR_UNSUPPORTED when a
 * value reaches OFFICERS_VMAX. */
int officers_ref_values(uint16_t *out, uint64_t n);

/* ---- the sequence state a run advances ------------------------------------ */

struct officers_rare {
	uint64_t pos;
	uint32_t val;
};

/* Running statistics over G(0..n-1). */
struct officers_stats {
	uint64_t fnv;                     /* FNV-1a 64 of G(0..n-1) */
	uint64_t count[OFFICERS_VMAX];
	uint64_t first[OFFICERS_VMAX];    /* OFFICERS_NONE when not seen */
};

/* G(0..n-1) known exactly. The run holds the prefix G(0..nprefix-1),
 * nprefix = min(n, OFFICERS_PREFIX), and the values G(base..n-1) in vals
 * (capacity cap values, so positions up to base + cap). */
struct officers_seq {
	uint64_t n, base, cap;
	uint16_t *vals;
	uint16_t *prefix;                 /* OFFICERS_PREFIX entries */
	uint32_t nprefix;
	uint32_t nrare;
	struct officers_rare rare[OFFICERS_MAX_RARE];
	struct officers_stats st;
};

/* An empty sequence at n = 0 with room for positions [0, cap). */
int officers_seq_init(struct officers_seq *s, uint64_t cap);
/* Make room for positions up to `to` (keeps base). GERR_NOMEM. */
int officers_seq_reserve(struct officers_seq *s, uint64_t to);
/* Frees the arrays; accepts a zeroed struct. */
void officers_seq_free(struct officers_seq *s);

/* Append G(n) = v (already known exact): stats, prefix, rare table. Returns
 * 0, GERR_TOOBIG (rare table full) or GERR_UNSUPPORTED (v >= VMAX). */
int officers_seq_push(struct officers_seq *s, unsigned v);

/* Append len values known exact (officers_seq_push for each, faster). */
int officers_seq_append(struct officers_seq *s, const uint16_t *v,
			uint64_t len);

/* Value at position i (i < nprefix or base <= i < n). */
static inline unsigned officers_seq_get(const struct officers_seq *s,
					uint64_t i)
{
	return i < s->nprefix ? s->prefix[i] : s->vals[i - s->base];
}

/* The candidate of position x from the rare table and G(x-1-p); vals_at(i)
 * reads through officers_seq_get. Mask of marked values in ret_mark
 * (OFFICERS_VMAX / 64 words). */
unsigned officers_candidate(const struct officers_seq *s, uint64_t x,
			    uint64_t *ret_mark);

/* The exact step at x given its candidate c (values before x as in s, x may
 * be beyond s->n when the caller holds candidates there: they are read from
 * vals). Returns the exact G(x) (== c, or a smaller rare value: new rare),
 * or -GERR_UNSUPPORTED-style negative codes when the scan needs values the
 * run does not hold. *ret_depth (may be NULL) gets the pairs scanned. */
int officers_exact(const struct officers_seq *s, uint64_t x, unsigned c,
		   const uint64_t *mark, uint64_t *ret_depth);

/* The exact G(x) (candidate + exact step). Negative GERR_* on failure. */
int officers_value(const struct officers_seq *s, uint64_t x);

/* Advance s to n = to on the CPU with `threads` threads (progress reports
 * s->n - units_base): candidates for a
 * chunk sequentially, exact steps for the chunk in parallel; a new rare
 * value at p keeps [n, p), records p and continues from p + 1. Returns 0,
 * GERR_NOMEM, GERR_UNSUPPORTED (limits above; err says where),
 * GERR_CANCELLED (should_stop; s consistent at some n). io may be NULL. */
struct wl_run_io;
int officers_cpu_extend(struct officers_seq *s, uint64_t to, int threads,
			const struct wl_run_io *io, uint64_t units_base,
			char *err, size_t errlen);

/* Statistics of the scan depth during the last officers_cpu_extend are not
 * kept; officers_cpu_depths measures them over [from, to) of a sequence
 * that already holds those values (for benchmarks). */
void officers_cpu_depths(const struct officers_seq *s, uint64_t from,
			 uint64_t to, uint64_t *ret_sum, uint64_t *ret_max,
			 uint64_t *ret_argmax);

/* ---- the result of an extension lease (also the next lease's state) ----
 * All integers little-endian.
 *   0    4   magic "OFFR"
 *   4    4   u32 version = 1
 *   8    8   u64 from  F
 *   16   8   u64 to    T        (F < T <= OFFICERS_MAX_N)
 *   24   8   u64 vbase          = F - min(F, OFFICERS_TAIL)
 *   32   8   u64 fnv_in         FNV-1a of G(0..F-1)
 *   40   8   u64 fnv_out        FNV-1a of G(0..T-1)
 *   48   4   u32 nprefix        = min(T, OFFICERS_PREFIX)
 *   52   4   u32 nrare          rare positions below T
 *   56   4   u32 nrare_in       of which below F
 *   60   4   u32 reserved (0)
 *   64   8*512  u64 count[v]    over G(0..T-1)
 *   4160 8*512  u64 first[v]    over G(0..T-1), UINT64_MAX none
 *   8256 12*nrare  rare table: u64 pos, u32 value (ascending positions)
 *   ...  2*nprefix  u16 G(0..nprefix-1)
 *   ...  2*(T-vbase) u16 G(vbase..T-1)
 * The blob layer compresses it. A decoder checks magic, version, the exact
 * length, bounds, ascending rare positions with rare values, and that every
 * value below VMAX.
 */
#define OFFICERS_FMT_VERSION 1u
#define OFFICERS_HDR_LEN 8256u

struct officers_result {
	uint64_t from, to, vbase, fnv_in, fnv_out;
	uint32_t nprefix, nrare, nrare_in;
	const uint64_t *count_le, *first_le; /* into the buffer (LE) */
	const uint8_t *rare_le;
	const uint16_t *prefix, *vals;        /* LE u16, maybe unaligned */
	const uint8_t *buf;
};

/* Parse a result (pointers into buf; buf must outlive r). GERR_CORRUPT. */
int officers_result_parse(const void *buf, size_t len,
			  struct officers_result *r, char *err, size_t errlen);

/* Encode s (at n = to) as the result of lease [from, to) whose input had
 * fnv_in and nrare_in. malloc'ed. */
int officers_result_encode(const struct officers_seq *s, uint64_t from,
			   uint64_t fnv_in, uint32_t nrare_in, void **ret,
			   size_t *ret_len);

/* Rebuild the sequence at n = r->to from a parsed result, holding the
 * values from keep_from (raised to r->vbase; lowered where needed to keep
 * OFFICERS_TAIL values before r->to), with room for positions up to
 * cap_to. A run continuing after r keeps only its own history (keep_from
 * = its lease's vbase), not r's whole range. */
int officers_seq_from_result(struct officers_seq *s,
			     const struct officers_result *r, uint64_t keep_from,
			     uint64_t cap_to);

/* Value i of a parsed result (vbase <= i < to, or i < nprefix). */
unsigned officers_result_get(const struct officers_result *r, uint64_t i);

/* Digest of the state at a frontier: FNV-1a over n, fnv, counts, firsts,
 * the rare table, the prefix min(n, PREFIX) and the tail
 * G(max(0, n-TAIL)..n-1). d_* accessors let it be computed from a sequence
 * or from a result's input or output side. */
uint64_t officers_seq_digest(const struct officers_seq *s);
/* side 0: the input state at from (counts rebuilt by subtracting the
 * lease's values), side 1: the output state at to. */
uint64_t officers_result_digest(const struct officers_result *r, int side);
/* Digest of the empty state (n = 0), the input of the first lease. */
uint64_t officers_empty_digest(void);

/* Candidates only (no exact step, no new rare values) for positions
 * [s->n, s->n + len), written to out and to s->vals (s->n unchanged; room
 * must be reserved). The reference the CUDA candidate kernel is tested
 * against. */
void officers_cpu_candidates(struct officers_seq *s, uint64_t len,
			     uint16_t *out);

#ifdef __cplusplus
}
#endif

#endif
