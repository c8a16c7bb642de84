/* graveler_ref.c - the reference battle, single-battle counts, the lease
 * accumulator, the binary formats and the statistics of the Graveler
 * workload. See graveler.h for the generator's definition. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "le.h"
#include "graveler.h"

/* Skip to battle j of a chunk: 15 * j steps. */
static void seek_battle(uint64_t seed, uint64_t battle, uint32_t *x,
			uint32_t *c)
{
	uint64_t j = battle % GRAVELER_CHUNK;

	graveler_chunk_seed(seed, battle / GRAVELER_CHUNK, x, c);
	for (uint64_t s = 0; s < j * GRAVELER_WORDS; s++)
		(void)graveler_mwc_next(x, c);
}

unsigned graveler_battle_count_ref(uint64_t seed, uint64_t battle)
{
	uint32_t x, c, o[GRAVELER_WORDS];
	unsigned count = 0;

	seek_battle(seed, battle, &x, &c);
	for (unsigned k = 0; k < GRAVELER_WORDS; k++)
		o[k] = graveler_mwc_next(&x, &c);
	/* Straight from the definition, one turn at a time. */
	for (unsigned t = 0; t < GRAVELER_TURNS; t++) {
		unsigned a, b;
		if (t < 224) {
			unsigned k = t / 32, bit = t % 32;
			a = (o[2 * k] >> bit) & 1;
			b = (o[2 * k + 1] >> bit) & 1;
		} else {
			unsigned bit = t - 224;
			a = (o[14] >> bit) & 1;
			b = (o[14] >> (16 + bit)) & 1;
		}
		if (a && b)
			count++;
	}
	return count;
}

/* The 15 outputs of one battle from the running state, counted word-wise. */
static inline unsigned battle_fast(uint32_t *x, uint32_t *c)
{
	uint32_t o[GRAVELER_WORDS];
	unsigned n = 0;

	for (unsigned k = 0; k < GRAVELER_WORDS; k++)
		o[k] = graveler_mwc_next(x, c);
	for (unsigned k = 0; k < 7; k++)
		n += (unsigned)__builtin_popcount(o[2 * k] & o[2 * k + 1]);
	n += (unsigned)__builtin_popcount(o[14] & (o[14] >> 16) & 0x7fu);
	return n;
}

unsigned graveler_battle_count(uint64_t seed, uint64_t battle)
{
	uint32_t x, c;

	seek_battle(seed, battle, &x, &c);
	return battle_fast(&x, &c);
}

/* Max, sum and first max of the battles of chunk `chunk` inside
 * [begin, end); first stays GRAVELER_NONE when none is. A POPCNT clone
 * where the CPU has it: a lease of one-chunk segments is verified here. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("popcnt", "default")))
#endif
static unsigned chunk_eval(uint64_t seed, uint64_t chunk, uint64_t begin,
			   uint64_t end, uint32_t *ret_sum, uint32_t *ret_sk,
			   uint64_t *ret_first)
{
	uint64_t base = chunk * GRAVELER_CHUNK;
	uint32_t x, c, sum = 0, sk = 0;
	unsigned best = 0;
	uint64_t first = GRAVELER_NONE;

	graveler_chunk_seed(seed, chunk, &x, &c);
	for (uint64_t j = 0; j < GRAVELER_CHUNK; j++) {
		uint64_t i = base + j;
		unsigned n;
		if (i >= end)
			break;
		n = battle_fast(&x, &c);
		if (i < begin)
			continue;
		sum += n;
		sk += graveler_sketch_word(n);
		if (first == GRAVELER_NONE || n > best) {
			best = n;
			first = i;
		}
	}
	if (ret_sum)
		*ret_sum = sum;
	if (ret_sk)
		*ret_sk = sk;
	if (ret_first)
		*ret_first = first;
	return best;
}

unsigned graveler_chunk_max(uint64_t seed, uint64_t chunk, uint64_t begin,
			    uint64_t end, uint64_t *ret_first)
{
	return chunk_eval(seed, chunk, begin, end, NULL, NULL, ret_first);
}

/* ---- segments ------------------------------------------------------------ */

static uint64_t lease_chunks(uint64_t begin, uint64_t end)
{
	return (end - 1) / GRAVELER_CHUNK - begin / GRAVELER_CHUNK + 1;
}

uint32_t graveler_nsegments(uint64_t begin, uint64_t end)
{
	uint64_t nc;

	if (end <= begin)
		return 0;
	nc = lease_chunks(begin, end);
	return nc < GRAVELER_SEGMENTS ? (uint32_t)nc : GRAVELER_SEGMENTS;
}

/* nc < 1e15 / 256 < 2^42 and k <= 2^20: the products below fit in 64
 * bits. */
uint64_t graveler_segment_chunk(uint64_t begin, uint64_t end, uint32_t k)
{
	return begin / GRAVELER_CHUNK +
	       (uint64_t)k * lease_chunks(begin, end) /
		       graveler_nsegments(begin, end);
}

uint32_t graveler_chunk_segment(uint64_t begin, uint64_t end, uint64_t ch)
{
	uint64_t r = ch - begin / GRAVELER_CHUNK;

	/* The largest k with k * nc / S <= r. */
	return (uint32_t)(((r + 1) * graveler_nsegments(begin, end) - 1) /
			  lease_chunks(begin, end));
}

uint32_t graveler_nsegments_framed(uint64_t begin, uint64_t end,
				   uint64_t frame)
{
	if (end <= begin)
		return 0;
	if (frame <= end)
		return graveler_nsegments(begin, end);
	return graveler_chunk_segment(begin, frame,
				      (end - 1) / GRAVELER_CHUNK) + 1;
}

/* LANES whole chunks at once on one thread: their MWC chains are
 * independent, so interleaving them hides the multiply latency of a single
 * chain; on x86-64 a POPCNT clone is picked at load time where the CPU has
 * it (baseline x86-64 lacks it). Together about 2x one chunk at a time:
 * this is the coordinator's verification cost. */
#define LANES 8
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("popcnt", "default")))
#endif
static void chunks_eval(uint64_t seed, uint64_t ch, const uint32_t *word,
			uint32_t *max, uint32_t *sum, uint32_t *sk,
			uint64_t *first)
{
	uint32_t x[LANES], c[LANES], m[LANES] = {0}, s[LANES] = {0};
	uint32_t k[LANES] = {0};
	unsigned at[LANES] = {0};

	for (int l = 0; l < LANES; l++)
		graveler_chunk_seed(seed, ch + (uint64_t)l, &x[l], &c[l]);
	for (unsigned j = 0; j < GRAVELER_CHUNK; j++) {
		for (int l = 0; l < LANES; l++) {
			uint32_t o[GRAVELER_WORDS];
			for (unsigned w = 0; w < GRAVELER_WORDS; w++)
				o[w] = graveler_mwc_next(&x[l], &c[l]);
			/* Spelt out so that each is one POPCNT. */
			unsigned n = (unsigned)__builtin_popcount(o[0] & o[1]) +
				(unsigned)__builtin_popcount(o[2] & o[3]) +
				(unsigned)__builtin_popcount(o[4] & o[5]) +
				(unsigned)__builtin_popcount(o[6] & o[7]) +
				(unsigned)__builtin_popcount(o[8] & o[9]) +
				(unsigned)__builtin_popcount(o[10] & o[11]) +
				(unsigned)__builtin_popcount(o[12] & o[13]) +
				(unsigned)__builtin_popcount(o[14] &
							     (o[14] >> 16) &
							     0x7fu);
			s[l] += n;
			k[l] += word[n];
			if (n > m[l]) {
				m[l] = n;
				at[l] = j;
			}
		}
	}
	for (int l = 0; l < LANES; l++) {
		max[l] = m[l];
		sum[l] = s[l];
		sk[l] = k[l];
		first[l] = (ch + (uint64_t)l) * GRAVELER_CHUNK + at[l];
	}
}

void graveler_segment_eval(uint64_t seed, uint64_t begin, uint64_t end,
			   uint32_t k, struct graveler_rec *ret)
{
	graveler_segment_eval_framed(seed, begin, end, end, k, ret);
}

void graveler_segment_eval_framed(uint64_t seed, uint64_t begin,
				  uint64_t end, uint64_t frame, uint32_t k,
				  struct graveler_rec *ret)
{
	uint64_t fr = frame > end ? frame : end;
	uint64_t lo = graveler_segment_chunk(begin, fr, k);
	uint64_t hi = graveler_segment_chunk(begin, fr, k + 1);
	uint32_t max = 0, sum = 0, sketch = 0;
	uint64_t first = GRAVELER_NONE;
	uint32_t word[GRAVELER_BINS];

	if (hi > (end - 1) / GRAVELER_CHUNK + 1) /* the frame's, past end */
		hi = (end - 1) / GRAVELER_CHUNK + 1;
	for (unsigned b = 0; b < GRAVELER_BINS; b++)
		word[b] = graveler_sketch_word(b);

	for (uint64_t ch = lo; ch < hi;) {
		uint32_t m[LANES], s[LANES], kk[LANES];
		uint64_t f[LANES];
		int n = 1;
		if (ch * GRAVELER_CHUNK >= begin && hi - ch >= LANES &&
		    (ch + LANES) * GRAVELER_CHUNK <= end) {
			chunks_eval(seed, ch, word, m, s, kk, f);
			n = LANES;
		} else {
			m[0] = chunk_eval(seed, ch, begin, end, &s[0], &kk[0],
					  &f[0]);
		}
		for (int l = 0; l < n; l++) {
			sum += s[l];
			sketch += kk[l];
			if (f[l] != GRAVELER_NONE &&
			    (first == GRAVELER_NONE || m[l] > max)) {
				max = m[l];
				first = f[l];
			}
		}
		ch += (uint64_t)n;
	}
	ret->max = max;
	ret->sum = sum;
	ret->sketch = sketch;
	ret->first = first;
}

uint32_t graveler_hist_sketch(const uint64_t *hist)
{
	uint32_t s = 0;

	for (unsigned b = 0; b < GRAVELER_BINS; b++)
		s += (uint32_t)hist[b] * graveler_sketch_word(b);
	return s;
}

/* ---- accumulator ----------------------------------------------------- */

void graveler_acc_init(struct graveler_acc *acc, uint64_t seed, uint64_t begin,
		       uint64_t end)
{
	graveler_acc_init_framed(acc, seed, begin, end, end);
}

void graveler_acc_init_framed(struct graveler_acc *acc, uint64_t seed,
			      uint64_t begin, uint64_t end, uint64_t frame)
{
	/* Records past nseg are never read: a small lease touches a few
	 * pages of the 9 MB, not all of them. */
	memset(acc, 0, offsetof(struct graveler_acc, seg_max));
	acc->seed = seed;
	acc->begin = begin;
	acc->end = end;
	acc->frame = frame > end ? frame : end;
	acc->next = begin;
	acc->first = GRAVELER_NONE;
	acc->nseg = graveler_nsegments_framed(begin, end, acc->frame);
	memset(acc->seg_max, 0, acc->nseg);
	memset(acc->seg_sum, 0, acc->nseg * sizeof(acc->seg_sum[0]));
	memset(acc->seg_sk, 0, acc->nseg * sizeof(acc->seg_sk[0]));
}

void graveler_acc_fold_chunks(struct graveler_acc *acc, uint64_t c_lo,
			      uint64_t n, const uint8_t *cmax,
			      const uint32_t *csum, const uint32_t *csk)
{
	uint32_t k;
	uint64_t k_end;

	if (n == 0)
		return;
	/* Walk the segments alongside the chunks: one division per step. */
	k = graveler_chunk_segment(acc->begin, acc->frame, c_lo);
	k_end = graveler_segment_chunk(acc->begin, acc->frame, k + 1);
	for (uint64_t i = 0; i < n; i++) {
		while (c_lo + i >= k_end) {
			k++;
			k_end = graveler_segment_chunk(acc->begin, acc->frame,
						       k + 1);
		}
		if (cmax[i] > acc->seg_max[k])
			acc->seg_max[k] = cmax[i];
		acc->seg_sum[k] += csum[i];
		acc->seg_sk[k] += csk[i];
	}
}

uint64_t graveler_step_end(const struct graveler_acc *acc, uint64_t want)
{
	uint64_t to;

	if (want < GRAVELER_CHUNK)
		want = GRAVELER_CHUNK;
	if (acc->end - acc->next <= want)
		return acc->end;
	to = acc->next + want;
	to -= to % GRAVELER_CHUNK;
	if (to <= acc->next)
		to = acc->next + GRAVELER_CHUNK - acc->next % GRAVELER_CHUNK;
	return to < acc->end ? to : acc->end;
}

void graveler_acc_take_max(struct graveler_acc *acc, uint32_t max,
			   uint64_t first)
{
	if (first == GRAVELER_NONE)
		return;
	if (acc->first == GRAVELER_NONE || max > acc->max ||
	    (max == acc->max && first < acc->first)) {
		acc->max = max;
		acc->first = first;
	}
}

/* ---- formats ------------------------------------------------------------ */

static int encode(const struct graveler_acc *acc, int ckpt, void **ret,
		  size_t *ret_len)
{
	size_t ns = acc->nseg;
	size_t len = GRAVELER_HDR_LEN + GRAVELER_RECORD_LEN * ns;
	uint8_t *p;

	if (ns > GRAVELER_SEGMENTS)
		return GERR_INVAL;
	if (!ckpt && (acc->next != acc->end || acc->first == GRAVELER_NONE))
		return GERR_INVAL;
	p = calloc(1, len);
	if (!p)
		return GERR_NOMEM;
	le_put_head(p, ckpt ? "GRVC" : "GRVR", GRAVELER_FMT_VERSION);
	le_put64(p + 8, acc->seed);
	le_put64(p + 16, acc->begin);
	le_put64(p + 24, acc->end);
	le_put32(p + 32, acc->max);
	le_put32(p + 36, acc->nseg);
	le_put64(p + 40, acc->first);
	for (unsigned b = 0; b < GRAVELER_BINS; b++)
		le_put64(p + 48 + 8 * b, acc->hist[b]);
	le_put64(p + 1904, ckpt ? acc->next : 0);
	memcpy(p + GRAVELER_HDR_LEN, acc->seg_max, ns);
	for (size_t k = 0; k < ns; k++) {
		le_put32(p + GRAVELER_HDR_LEN + ns + 4 * k, acc->seg_sum[k]);
		le_put32(p + GRAVELER_HDR_LEN + 5 * ns + 4 * k, acc->seg_sk[k]);
	}
	*ret = p;
	*ret_len = len;
	return 0;
}

int graveler_result_encode(const struct graveler_acc *acc, void **ret,
			   size_t *ret_len)
{
	return encode(acc, 0, ret, ret_len);
}

int graveler_ckpt_encode(const struct graveler_acc *acc, void **ret,
			 size_t *ret_len)
{
	return encode(acc, 1, ret, ret_len);
}

#define BAD(...)                                          \
	do {                                              \
		snprintf(err, errlen, __VA_ARGS__);       \
		return GERR_CORRUPT;                      \
	} while (0)

/* Records against the header: each segment's max and sum possible for
 * its done battles, the largest max equal to max, the sums adding up to
 * the histogram's, and no segment before first's reaching max. */
static int check_records(const struct graveler_acc *a, const char *what,
			 char *err, size_t errlen)
{
	uint64_t hsum = 0, rsum = 0;
	uint32_t top = 0, kf = 0, rsk = 0;
	int any = a->next > a->begin;
	/* Segment bounds as graveler_segment_chunk, one division each: up to
	 * 2^20 segments per decode. */
	const uint64_t c0 = a->begin / GRAVELER_CHUNK;
	const uint64_t nc = lease_chunks(a->begin, a->frame);
	const uint64_t ns = graveler_nsegments(a->begin, a->frame);
	uint64_t c_next = c0; /* first chunk of segment k */

	for (unsigned b = 0; b < GRAVELER_BINS; b++)
		hsum += (uint64_t)b * a->hist[b];
	if (any)
		kf = graveler_chunk_segment(a->begin, a->frame,
					    a->first / GRAVELER_CHUNK);
	for (uint32_t k = 0; k < a->nseg; k++) {
		uint64_t lo = c_next * GRAVELER_CHUNK, hi, nb;
		uint32_t m = a->seg_max[k], s = a->seg_sum[k];

		c_next = c0 + (uint64_t)(k + 1) * nc / ns;
		hi = c_next * GRAVELER_CHUNK;
		if (lo < a->begin)
			lo = a->begin;
		if (hi > a->next)
			hi = a->next;
		nb = hi > lo ? hi - lo : 0;
		if (nb == 0 && (m != 0 || s != 0))
			BAD("graveler %s: segment %u has a record but no done "
			    "battles", what, k);
		if (nb && (m > GRAVELER_TURNS || s < m ||
			   (uint64_t)s > (uint64_t)m * nb))
			BAD("graveler %s: segment %u: max %u sum %u impossible "
			    "for %llu battles", what, k, m, s,
			    (unsigned long long)nb);
		if (any && k < kf && m >= a->max)
			BAD("graveler %s: segment %u reaches max %u before "
			    "first %llu", what, k, a->max,
			    (unsigned long long)a->first);
		if (m > top)
			top = m;
		rsum += s;
		rsk += a->seg_sk[k];
	}
	if (any && (top != a->max || a->seg_max[kf] != a->max))
		BAD("graveler %s: segment maxima (top %u, first's segment %u) "
		    "disagree with max %u", what, top, a->seg_max[kf], a->max);
	if (rsum != hsum)
		BAD("graveler %s: segment sums add up to %llu, histogram to "
		    "%llu", what, (unsigned long long)rsum,
		    (unsigned long long)hsum);
	if (rsk != graveler_hist_sketch(a->hist))
		BAD("graveler %s: segment sketches add up to %08x, the "
		    "histogram's is %08x", what, rsk,
		    graveler_hist_sketch(a->hist));
	return 0;
}

/* Decodes into *a (allocated by the caller), which holds garbage on
 * error; frame is the lease's (0: the blob's end). */
static int decode(const void *buf, size_t len, int ckpt, uint64_t frame,
		  struct graveler_acc *a, char *err, size_t errlen)
{
	const uint8_t *p = buf;
	uint64_t total = 0;
	int top = -1;
	const char *what = ckpt ? "checkpoint" : "result";

	if (!buf || len < GRAVELER_HDR_LEN)
		BAD("graveler %s too short (%zu bytes)", what, len);
	if (memcmp(p, ckpt ? "GRVC" : "GRVR", 4) != 0)
		BAD("graveler %s: bad magic", what);
	if (le_get32(p + 4) != GRAVELER_FMT_VERSION)
		BAD("graveler %s: unsupported version %u", what, le_get32(p + 4));
	memset(a, 0, offsetof(struct graveler_acc, seg_max));
	a->seed = le_get64(p + 8);
	a->begin = le_get64(p + 16);
	a->end = le_get64(p + 24);
	a->max = le_get32(p + 32);
	a->nseg = le_get32(p + 36);
	a->first = le_get64(p + 40);
	for (unsigned b = 0; b < GRAVELER_BINS; b++)
		a->hist[b] = le_get64(p + 48 + 8 * b);
	a->next = ckpt ? le_get64(p + 1904) : a->end;
	if (a->begin >= a->end || a->end > GRAVELER_MAX_BATTLES ||
	    a->end - a->begin > GRAVELER_MAX_LEASE)
		BAD("graveler %s: bad range [%llu, %llu)", what,
		    (unsigned long long)a->begin, (unsigned long long)a->end);
	a->frame = frame ? frame : a->end;
	if (a->frame < a->end || a->frame - a->begin > GRAVELER_MAX_LEASE)
		BAD("graveler %s: range [%llu, %llu) outside its frame %llu",
		    what, (unsigned long long)a->begin,
		    (unsigned long long)a->end, (unsigned long long)a->frame);
	if (a->nseg != graveler_nsegments_framed(a->begin, a->end, a->frame))
		BAD("graveler %s: %u segments, expected %u", what, a->nseg,
		    graveler_nsegments_framed(a->begin, a->end, a->frame));
	if (len != GRAVELER_HDR_LEN + (size_t)GRAVELER_RECORD_LEN * a->nseg)
		BAD("graveler %s: length %zu does not match its %u segments",
		    what, len, a->nseg);
	if (!ckpt && le_get64(p + 1904) != 0)
		BAD("graveler result: reserved field not zero");
	if (a->next < a->begin || a->next > a->end)
		BAD("graveler checkpoint: next %llu outside the lease",
		    (unsigned long long)a->next);
	if (a->next != a->begin && a->next != a->end &&
	    a->next % GRAVELER_CHUNK != 0)
		BAD("graveler checkpoint: next %llu not on a chunk boundary",
		    (unsigned long long)a->next);
	for (unsigned b = 0; b < GRAVELER_BINS; b++) {
		if (a->hist[b] > GRAVELER_MAX_BATTLES)
			BAD("graveler %s: histogram bin %u too large", what, b);
		total += a->hist[b];
		if (a->hist[b])
			top = (int)b;
	}
	if (total != a->next - a->begin)
		BAD("graveler %s: histogram holds %llu battles, expected %llu",
		    what, (unsigned long long)total,
		    (unsigned long long)(a->next - a->begin));
	if (a->next == a->begin) {
		if (a->first != GRAVELER_NONE || a->max != 0)
			BAD("graveler checkpoint: max set before any battle");
	} else {
		if ((int)a->max != top)
			BAD("graveler %s: max %u but the top histogram bin is %d",
			    what, a->max, top);
		if (a->first < a->begin || a->first >= a->next)
			BAD("graveler %s: first %llu outside the done range",
			    what, (unsigned long long)a->first);
	}
	memcpy(a->seg_max, p + GRAVELER_HDR_LEN, a->nseg);
	for (uint32_t k = 0; k < a->nseg; k++) {
		a->seg_sum[k] = le_get32(p + GRAVELER_HDR_LEN + a->nseg + 4 * k);
		a->seg_sk[k] = le_get32(p + GRAVELER_HDR_LEN +
					5 * (size_t)a->nseg + 4 * k);
	}
	return check_records(a, what, err, errlen);
}

int graveler_result_decode(const void *buf, size_t len,
			   struct graveler_acc *acc, char *err, size_t errlen)
{
	return decode(buf, len, 0, 0, acc, err, errlen);
}

int graveler_ckpt_decode(const void *buf, size_t len, struct graveler_acc *acc,
			 char *err, size_t errlen)
{
	return decode(buf, len, 1, 0, acc, err, errlen);
}

int graveler_result_decode_framed(const void *buf, size_t len, uint64_t frame,
				  struct graveler_acc *acc, char *err,
				  size_t errlen)
{
	return decode(buf, len, 0, frame, acc, err, errlen);
}

int graveler_ckpt_decode_framed(const void *buf, size_t len, uint64_t frame,
				struct graveler_acc *acc, char *err,
				size_t errlen)
{
	return decode(buf, len, 1, frame, acc, err, errlen);
}

int graveler_ckpt_outdated(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	return buf && len >= 8 && memcmp(p, "GRVC", 4) == 0 &&
	       le_get32(p + 4) < GRAVELER_FMT_VERSION;
}

int graveler_result_outdated(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	return buf && len >= 8 && memcmp(p, "GRVR", 4) == 0 &&
	       le_get32(p + 4) < GRAVELER_FMT_VERSION;
}

/* ---- statistics ------------------------------------------------------- */

double graveler_binom_pmf(unsigned k)
{
	const double n = GRAVELER_TURNS;

	if (k > GRAVELER_TURNS)
		return 0.0;
	return exp(lgamma(n + 1) - lgamma(k + 1.0) - lgamma(n - k + 1) +
		   k * log(0.25) + (n - k) * log(0.75));
}

double graveler_chi2(const uint64_t *hist, int *ret_df, double *ret_z)
{
	uint64_t n = 0;
	double chi2 = 0, pmf[GRAVELER_BINS];
	unsigned lo, hi;
	int cells = 0;

	for (unsigned b = 0; b < GRAVELER_BINS; b++) {
		n += hist[b];
		pmf[b] = graveler_binom_pmf(b);
	}
	/* Pool each tail until its expectation reaches 10. */
	{
		double e = 0, o = 0;
		for (lo = 0; lo < GRAVELER_BINS - 1; lo++) {
			e += pmf[lo] * (double)n;
			o += (double)hist[lo];
			if (e >= 10)
				break;
		}
		double eh = 0, oh = 0;
		for (hi = GRAVELER_BINS - 1; hi > lo + 1; hi--) {
			eh += pmf[hi] * (double)n;
			oh += (double)hist[hi];
			if (eh >= 10)
				break;
		}
		if (hi <= lo + 1) {
			/* Too few battles for a test: no cells. */
			if (ret_df)
				*ret_df = 0;
			if (ret_z)
				*ret_z = 0;
			return 0;
		}
		chi2 += (o - e) * (o - e) / e;
		chi2 += (oh - eh) * (oh - eh) / eh;
		cells = 2;
	}
	for (unsigned b = lo + 1; b < hi; b++) {
		double e = pmf[b] * (double)n, o = (double)hist[b];
		chi2 += (o - e) * (o - e) / e;
		cells++;
	}
	int df = cells - 1;
	if (ret_df)
		*ret_df = df;
	if (ret_z) {
		double v = 2.0 / (9.0 * df);
		*ret_z = (cbrt(chi2 / df) - (1 - v)) / sqrt(v);
	}
	return chi2;
}

void graveler_max_tails(uint64_t n, unsigned m, double *ret_log10_ge,
			double *ret_log10_le)
{
	/* P(X >= m) and P(X > m) for one battle, summed from the far tail so
	 * tiny tails keep their precision. */
	double ge = 0, gt;
	for (unsigned k = GRAVELER_TURNS; k > m; k--)
		ge += graveler_binom_pmf(k);
	gt = ge;
	ge += graveler_binom_pmf(m);
	/* P(max >= m) = 1 - (1 - ge)^n; P(max <= m) = (1 - gt)^n. */
	double l_lt = (double)n * log1p(-(ge < 1 ? ge : 1 - 1e-300));
	double p_ge = -expm1(l_lt);
	if (ret_log10_ge)
		*ret_log10_ge = p_ge > 0 ? log10(p_ge) : -400;
	if (ret_log10_le)
		*ret_log10_le = (double)n * log1p(-gt) / log(10.0);
}
