/* graveler.h - the Graveler workload's plain-C core: the battle generator,
 * the reference and fast battle counts, the range runner, and the binary
 * result/checkpoint formats.
 *
 * The problem
 *   N battles of 231 turns; a turn is paralysed when two random bits are both
 *   1 (P = 1/4). Answer: the largest paralysed count, the smallest battle
 *   index reaching it, and the histogram of counts (232 bins).
 *
 * The generator (this definition IS the job's answer; changing any constant
 * below changes every result, so it is versioned with the formats)
 *   1. Battles are grouped in chunks of GRAVELER_CHUNK = 256 consecutive
 *      indices: battle i lives in chunk i / 256 at position j = i % 256.
 *   2. Each chunk has its own stream seeded with
 *        h = mix64(mix64(S ^ GRAVELER_SEED_SALT) + chunk * MIX_GOLDEN)
 *      where mix64 is the splitmix64 finaliser (mix.h; a bijection of 64-bit
 *      words) and MIX_GOLDEN is odd, so for one job seed distinct chunks get distinct
 *      seeds. The stream is MWC64X (a lag-1 multiply-with-carry generator,
 *      base 2^32, multiplier A = 4294883355, state x = low 32 bits of h,
 *      c = high 32 bits reduced below A; the forbidden states are avoided):
 *        step: z = A * x + c (64-bit); x = low32(z); c = high32(z);
 *        output o = x ^ c.
 *   3. Battle j of a chunk uses outputs 15j .. 15j+14 (o0..o14), i.e. the
 *      j-th window of 15 words: turns 32k + b (k < 7, b < 32) are paralysed
 *      when bit b of o(2k) and bit b of o(2k+1) are both 1; turns 224 + b
 *      (b < 7) when bits b and 16 + b of o14 are both 1. That is exactly
 *      462 random bits per battle.
 *   Any battle is a pure function of (S, i): reseed its chunk and run 15*j
 *   steps (at most 3825, microseconds) - that is how the coordinator checks
 *   a claimed battle.
 *
 * Why this is statistically sound for this use
 *   - MWC with base b = 2^32 and multiplier A is equivalent to a prime
 *     modulus LCG (m = A*2^32 - 1, multiplier 2^-32 mod m) whose outputs are
 *     the most significant digits of the state, so every output bit
 *     position is balanced and full period; it is not a power-of-two LCG,
 *     whose low bits are periodic. MWC64X additionally xors the carry into
 *     the output, and it is published as passing TestU01's BigCrush. Its
 *     period is (m - 1) / 2, about 2^63.
 *   - Each chunk starts at an independent, well-mixed point of that cycle
 *     (splitmix64 finaliser), so battles in different chunks are as
 *     independent as two random windows of a 2^63 cycle; battles in the
 *     same chunk are consecutive non-overlapping windows of one BigCrush
 *     stream. Streams overlap only by the birthday bound: the fraction of
 *     battles in an overlapping chunk is about 30 N / 2^63 (3e-9 for 1e9
 *     battles, 3e-3 for the 1e15 ceiling of the parameters).
 *   - Each battle's count is a sum of 231 ANDs of two output bits; a
 *     defect would show as a departure from Binomial(231, 1/4), which
 *     finish() tests on every job.
 *
 * Threads: every function here is reentrant; nothing has global state.
 * Ownership: callers own every struct passed in; nothing is kept.
 */
#ifndef GPUD_GRAVELER_H
#define GPUD_GRAVELER_H

#include <stddef.h>
#include <stdint.h>

#include "mix.h"

#ifdef __CUDACC__
#define GRAVELER_HD __host__ __device__ __forceinline__
#else
#define GRAVELER_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define GRAVELER_TURNS 231
#define GRAVELER_BINS 232              /* counts 0..231 */
#define GRAVELER_CHUNK 256u            /* battles per generator stream */
#define GRAVELER_WORDS 15u             /* 32-bit outputs per battle */
#define GRAVELER_MWC_A 4294883355u     /* MWC64X multiplier */
#define GRAVELER_SEED_SALT 0x6772617665006c72ull
#define GRAVELER_MAX_BATTLES 1000000000000000ull /* 1e15 */
/* Segments of a lease (see "Segments" below) and the largest lease the
 * formats take. Verification recomputes K + 1 segments whatever the lease
 * size, so segments of at most 2^20 (+ 256) battles keep it near a second
 * of one CPU core per lease, and a segment's sum (< 231 * (2^20 + 256))
 * fits its u32 record; 2^20 segments of 9 bytes make a 9.4 MB result. */
#define GRAVELER_SEGMENTS (1u << 20)
#define GRAVELER_MAX_LEASE (1ull << 40)
/* The sketch's words (see "Segments"): one pseudo-random u32 per count. */
#define GRAVELER_SKETCH_SALT 0x736b657463680001ull

/* ---- the generator ---------------------------------------------------- */

/* The starting MWC state of a chunk's stream. */
GRAVELER_HD void graveler_chunk_seed(uint64_t seed, uint64_t chunk,
				     uint32_t *x, uint32_t *c)
{
	uint64_t h = mix64(mix64(seed ^ GRAVELER_SEED_SALT) +
			   chunk * MIX_GOLDEN);
	uint32_t cx = (uint32_t)h, cc = (uint32_t)(h >> 32);

	if (cc >= GRAVELER_MWC_A)
		cc -= GRAVELER_MWC_A; /* carry must be below A */
	if (cx == 0 && cc == 0)
		cc = 1; /* (0, 0) is a fixed point */
	*x = cx;
	*c = cc;
}

/* One MWC64X step; returns the output word. */
GRAVELER_HD uint32_t graveler_mwc_next(uint32_t *x, uint32_t *c)
{
	uint64_t z = (uint64_t)GRAVELER_MWC_A * *x + *c;

	*x = (uint32_t)z;
	*c = (uint32_t)(z >> 32);
	return *x ^ *c;
}

/* The sketch word of a battle with count n (n < GRAVELER_BINS): the top
 * half of mix64(salt + n), public and fixed. A segment's sketch is the sum
 * of its battles' words mod 2^32, so a histogram's is the sum over bins of
 * hist[b] * word(b): linear in the histogram (graveler_hist_sketch). */
GRAVELER_HD uint32_t graveler_sketch_word(unsigned n)
{
	return (uint32_t)(mix64(GRAVELER_SKETCH_SALT + n) >> 32);
}

/* ---- counting ------------------------------------------------------------ */

/* Paralysed turns of the reference definition, turn by turn. Slow and
 * obviously correct: reseeds the chunk and skips to the battle. */
unsigned graveler_battle_count_ref(uint64_t seed, uint64_t battle);

/* The same number, fast: word-wise popcounts. */
unsigned graveler_battle_count(uint64_t seed, uint64_t battle);

/* Max count over the battles of chunk `chunk` that lie in [begin, end);
 * *ret_first gets the first index reaching it. The chunk must intersect
 * the range. */
unsigned graveler_chunk_max(uint64_t seed, uint64_t chunk, uint64_t begin,
			    uint64_t end, uint64_t *ret_first);

/* ---- segments -----------------------------------------------------------
 * A lease's chunks (those meeting [begin, end)) are split into
 * S = min(GRAVELER_SEGMENTS, nchunks) contiguous runs spread evenly:
 * segment k holds chunks c0 + k * nc / S .. c0 + (k + 1) * nc / S - 1
 * (c0 = begin / 256, nc the chunk count). A result commits to each
 * segment's max count, the sum of its battles' counts (mod 2^32, which
 * never wraps for a lease <= GRAVELER_MAX_LEASE) and the sum of their
 * sketch words (mod 2^32), so the coordinator can recompute segments it
 * picks after the upload and compare exactly, and the decoder ties the
 * histogram to the records: the segments' sketches add up to the
 * histogram's (README, Security: what this does and does not bind). */
uint32_t graveler_nsegments(uint64_t begin, uint64_t end);
/* First chunk of segment k (k <= S; k == S gives one past the last). */
uint64_t graveler_segment_chunk(uint64_t begin, uint64_t end, uint32_t k);
/* The segment holding chunk ch (a chunk meeting the lease). */
uint32_t graveler_chunk_segment(uint64_t begin, uint64_t end, uint64_t ch);

/* One segment's record, as recomputed. */
struct graveler_rec {
	uint32_t max, sum, sketch;
	uint64_t first; /* the first battle reaching max */
};

/* Recompute segment k of the lease [begin, end) on one thread. */
void graveler_segment_eval(uint64_t seed, uint64_t begin, uint64_t end,
			   uint32_t k, struct graveler_rec *ret);

/* Frames. The head of a cut lease (its first part, [begin, end) of a
 * lease [begin, frame)) keeps that lease's segments: those of
 * [begin, frame) meeting [begin, end), the last one clipped at end, so a
 * checkpoint of the lease is one of its head. Every other lease is its
 * own frame (frame == end), and the functions without a frame are these
 * with frame = end. The frame is the spec's ("frame"), never in a blob. */
uint32_t graveler_nsegments_framed(uint64_t begin, uint64_t end,
				   uint64_t frame);
void graveler_segment_eval_framed(uint64_t seed, uint64_t begin,
				  uint64_t end, uint64_t frame, uint32_t k,
				  struct graveler_rec *ret);

/* The sketch of a histogram: sum of hist[b] * word(b) mod 2^32. */
uint32_t graveler_hist_sketch(const uint64_t *hist);

/* ---- accumulated state of a lease (checkpoint and result) ------------- */

/* The lease [begin, end) is walked in order; [begin, next) is done. max/first
 * describe the done part (first == GRAVELER_NONE while nothing is done).
 * seg_max[k] / seg_sum[k] / seg_sk[k] cover the done battles of segment
 * k < nseg (0 before any); entries from nseg on are undefined. About 9 MB:
 * allocate it, never put it on a stack. */
#define GRAVELER_NONE UINT64_MAX
struct graveler_acc {
	uint64_t seed, begin, end, next;
	uint64_t frame;           /* the segments' frame (>= end; "Frames") */
	uint32_t max;
	uint64_t first;
	uint64_t hist[GRAVELER_BINS];
	uint32_t nseg;
	uint8_t seg_max[GRAVELER_SEGMENTS];
	uint32_t seg_sum[GRAVELER_SEGMENTS];
	uint32_t seg_sk[GRAVELER_SEGMENTS];
};

void graveler_acc_init(struct graveler_acc *acc, uint64_t seed, uint64_t begin,
		       uint64_t end);
void graveler_acc_init_framed(struct graveler_acc *acc, uint64_t seed,
			      uint64_t begin, uint64_t end, uint64_t frame);

/* Fold the chunk maxima, sums and sketches of a step (chunks c_lo,
 * c_lo + 1, ..., n of them, all meeting the lease) into the segment
 * records. */
void graveler_acc_fold_chunks(struct graveler_acc *acc, uint64_t c_lo,
			      uint64_t n, const uint8_t *cmax,
			      const uint32_t *csum, const uint32_t *csk);

/* The end of the next step from acc->next: at most `want` battles, ending on
 * a chunk boundary or at the lease end, so a chunk never spans two steps. */
uint64_t graveler_step_end(const struct graveler_acc *acc, uint64_t want);

/* Advance acc->next to `to` (from graveler_step_end) on the CPU with
 * `threads` threads. Returns 0 or GERR_NOMEM. */
int graveler_cpu_step(struct graveler_acc *acc, uint64_t to, int threads);

/* Merge the max/first of a later range into acc (ranges arrive in order). */
void graveler_acc_take_max(struct graveler_acc *acc, uint32_t max,
			   uint64_t first);

/* Run acc to its end on CPU (cuda == NULL) or through a CUDA context
 * (struct graveler_cuda *), honouring io (may be NULL): progress after each
 * step, a checkpoint (graveler_ckpt_encode bytes) when checkpoint_due(),
 * GERR_CANCELLED when should_stop(). */
struct wl_run_io;
int graveler_run(struct graveler_acc *acc, int threads, void *cuda,
		 const struct wl_run_io *io, char *err, size_t errlen);

/* ---- binary formats ------------------------------------------------------
 * All integers little-endian, no padding beyond what is listed.
 *
 * Result (version 3), 1912 + 9 * nseg bytes:
 *   0   4  magic "GRVR"
 *   4   4  u32 version = 3
 *   8   8  u64 seed
 *   16  8  u64 begin
 *   24  8  u64 end          (begin < end <= 1e15, end - begin <= 2^40)
 *   32  4  u32 max          (<= 231)
 *   36  4  u32 nseg         (== graveler_nsegments_framed(begin, end,
 *                            frame), frame the lease's)
 *   40  8  u64 first        (begin <= first < end)
 *   48  1856 u64 hist[232]
 *   1904 8 u64 reserved (0)
 *   1912 nseg u8 segment maxima
 *   1912 + nseg, 4 * nseg u32 segment sums
 *   1912 + 5 * nseg, 4 * nseg u32 segment sketches
 *
 * Version 2 (before the sketches, 5 bytes a segment) is refused by the
 * decoders; graveler_ckpt_outdated and graveler_result_outdated name it.
 *
 * Checkpoint (version 3): magic "GRVC", same layout with `next` at
 * offset 1904 in place of reserved (begin <= next <= end, next a chunk
 * boundary or begin or end), first = UINT64_MAX when next == begin; the
 * records cover the done battles (0 for segments not started).
 *
 * Decoders check magic, version, exact length, bounds and internal
 * consistency: histogram total == next - begin, max == top nonzero bin ==
 * the largest segment max, sum of the segment sums == sum of b * hist[b],
 * sum of the segment sketches == graveler_hist_sketch(hist) (mod 2^32),
 * each segment's max and sum possible for its done battles, first inside
 * the first segment whose max is max; they never trust a length field.
 */
#define GRAVELER_FMT_VERSION 3u
#define GRAVELER_HDR_LEN 1912u
#define GRAVELER_RECORD_LEN 9u
#define GRAVELER_RESULT_MAXLEN \
	(GRAVELER_HDR_LEN + GRAVELER_RECORD_LEN * GRAVELER_SEGMENTS)
#define GRAVELER_CKPT_MAXLEN GRAVELER_RESULT_MAXLEN

/* Encode into a malloc'ed buffer. Returns 0 or GERR_NOMEM / GERR_INVAL
 * (result of an unfinished acc). */
int graveler_result_encode(const struct graveler_acc *acc, void **ret,
			   size_t *ret_len);
int graveler_ckpt_encode(const struct graveler_acc *acc, void **ret,
			 size_t *ret_len);
/* Decode into *acc (next = end for a result; its contents are undefined
 * on error). GERR_CORRUPT with a message on any defect. */
int graveler_result_decode(const void *buf, size_t len,
			   struct graveler_acc *acc, char *err, size_t errlen);
int graveler_ckpt_decode(const void *buf, size_t len, struct graveler_acc *acc,
			 char *err, size_t errlen);
/* The same for a lease of frame frame (0: the blob's end), whose records
 * follow its segments (a blob of [begin, e) decodes under any frame
 * >= e, its nseg and records checked against that frame's). */
int graveler_result_decode_framed(const void *buf, size_t len, uint64_t frame,
				  struct graveler_acc *acc, char *err,
				  size_t errlen);
int graveler_ckpt_decode_framed(const void *buf, size_t len, uint64_t frame,
				struct graveler_acc *acc, char *err,
				size_t errlen);
/* Whether buf is a checkpoint of an earlier format version (one written
 * before an upgrade, which a run may drop and start the lease afresh). */
int graveler_ckpt_outdated(const void *buf, size_t len);
/* The same for a result (one uploaded or stored before an upgrade: gpud
 * has it computed again, charging no one). */
int graveler_result_outdated(const void *buf, size_t len);

/* ---- statistics ------------------------------------------------------- */

/* P(X = k) for X ~ Binomial(231, 1/4). */
double graveler_binom_pmf(unsigned k);
/* Chi-square goodness of fit of hist against Binomial(231, 1/4) with tails
 * pooled to expected counts >= 10; *ret_df degrees of freedom; returns the
 * statistic and *ret_z its Wilson-Hilferty normal score. */
double graveler_chi2(const uint64_t *hist, int *ret_df, double *ret_z);
/* log10 of P(max of n battles >= m) and of P(max <= m). */
void graveler_max_tails(uint64_t n, unsigned m, double *ret_log10_ge,
			double *ret_log10_le);

#ifdef __cplusplus
}
#endif

#endif
