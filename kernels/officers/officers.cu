/* officers.cu - the Officers CUDA kernels behind officers_cuda.h.
 *
 * Candidate kernel: frontier iteration. Positions [c, c + K) after the
 * frontier c (everything before c is exact) hold guesses. Every round, all
 * K positions are recomputed at once from the current guesses (one CTA per
 * 32 positions, its 32 warps each taking every 32nd rare position; the 32
 * lanes of a warp read the same rare entry from constant memory and 32
 * consecutive values from a shared-memory ring). If the first position whose
 * value changed in the round is y, every position up to y is exact: y's
 * inputs before it did not change, so they were exact, by induction from c.
 * The frontier moves to y + 1 (or c + K when nothing changed). Reads may see
 * a neighbour's value of this round or of the last: the argument needs only
 * that every value read equals the round's start value where that one was
 * already final, which both do. All CTAs are resident (cooperative launch)
 * and meet at a grid barrier once per round. Measured (H200, K = 4224):
 * 362 positions become final per round, a round takes 11.3 us. The mask
 * updates are shared-memory atomics whose result is unused (no load-store
 * chain per lookup): with plain read-modify-write and 8 warps per CTA a
 * round took 24 us.
 *
 * Exact kernel: one warp per position. It recomputes the rare part of the
 * options (so it checks the candidate independently: a candidate that is not
 * the smallest unmarked common value is flagged), then scans pairs a = lane,
 * lane + 32, ... until every rare value below the candidate is hit. Flags go
 * to the host, which decides those positions on the CPU.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_check.h"
#include "gerr.h"
#include "officers.h"
#include "officers_cuda.h"
#include "workload.h"

#define RING_BITS 15
#define RING (1u << RING_BITS)
#define RMASK (RING - 1)
#define CPOS 32    /* positions per CTA */
#define CSLICES 32 /* warps per CTA */
#define CTHREADS (CPOS * CSLICES)
#define MW 16      /* 32-bit words of a 512-bit mask */
#define NONE32 0xffffffffu
#define EXACT_WARPS 8

__constant__ uint32_t c_rpos[OFFICERS_MAX_RARE];
__constant__ uint16_t c_rval[OFFICERS_MAX_RARE];

struct sync_block {
	unsigned count;
	unsigned gen;
	unsigned first[3];
	unsigned rounds;
};

struct officers_cuda {
	int device, poisoned, nblocks, sms;
	cudaStream_t stream;
	cudaEvent_t ev[4];
	uint16_t *d_buf[2];     /* TAIL + CHUNK values */
	uint16_t *d_prefix;     /* OFFICERS_PREFIX values */
	uint8_t *d_status[2];
	struct sync_block *d_sync;
	uint16_t *h_vals[2];    /* pinned, CHUNK */
	uint8_t *h_status[2];   /* pinned, CHUNK */
	uint32_t *h_rpos;
	uint16_t *h_rval;
	uint32_t *d_rpos;
	uint16_t *d_rval;
	uint32_t rare_uploaded;
	int prefix_uploaded;
	int kernel;               /* OFFICERS_CAND_* */
	int last_split;           /* the chunk in flight ran split_kernel */
	unsigned near_d, far_blocks;
	unsigned chunk;           /* extend: positions per chunk */
	unsigned helpers;         /* warp kernel: helper warps */
	uint32_t *d_farm;         /* split: far masks, SFR * SFB * MW */
	struct split_sync *d_ssync;
	struct split_sync *h_ssync; /* pinned: the last chunk's */
	char name[256];
};

/* ---- device code ------------------------------------------------------ */

/* Common values among v = 32 k + b: popcount(k) + popcount(b & 0xe) odd. */
__device__ __forceinline__ uint32_t common32(unsigned k)
{
	return (__popc(k) & 1) ? ~0xc33cc33cu : 0xc33cc33cu;
}

__device__ __forceinline__ void grid_barrier(struct sync_block *sb,
					     unsigned nblocks)
{
	__syncthreads();
	if (threadIdx.x == 0) {
		volatile unsigned *gen = &sb->gen;
		unsigned g = *gen;
		__threadfence();
		if (atomicAdd(&sb->count, 1u) == nblocks - 1) {
			sb->count = 0;
			__threadfence();
			atomicAdd(&sb->gen, 1u);
		} else {
			while (*gen == g)
				;
		}
		__threadfence();
	}
	__syncthreads();
}

/* buf holds positions dbase + i; [n0off, n1off) are computed, the rest is
 * exact history with at least maxpos + 1 values before n0off. */
__global__ void __launch_bounds__(CTHREADS, 1)
cand_kernel(uint16_t *buf, unsigned n0off, unsigned n1off, unsigned nrare,
	    unsigned maxpos, struct sync_block *sb)
{
	extern __shared__ uint32_t sh[];
	uint16_t *ring = (uint16_t *)sh;                     /* RING */
	uint32_t *mask = sh + RING / 2;                      /* [32][16][32] */
	uint32_t *comb = mask + CSLICES * MW * CPOS;         /* [16][32] */
	const unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	const unsigned K = gridDim.x * CPOS, nb = gridDim.x;
	unsigned c = n0off, lo = n0off - 1 - maxpos, round = 0;

	while (c < n1off) {
		unsigned e = c + K < n1off ? c + K : n1off;
		unsigned x = c + blockIdx.x * CPOS + lane;

		for (unsigned i = lo + threadIdx.x; i < e; i += CTHREADS)
			ring[i & RMASK] = __ldcg(buf + i);
		for (unsigned k = 0; k < MW; k++)
			mask[(w * MW + k) * CPOS + lane] = 0;
		__syncthreads();
		if (c + blockIdx.x * CPOS < e) {
			uint32_t *col = mask + w * MW * CPOS + lane;
			for (unsigned j = w; j < nrare; j += CSLICES) {
				unsigned o = c_rval[j] ^
					     ring[(x - 1 - c_rpos[j]) & RMASK];
				atomicOr(&col[(o >> 5) * CPOS], 1u << (o & 31));
			}
		}
		__syncthreads();
		if (w < MW) {
			uint32_t m = 0;
			for (unsigned s = 0; s < CSLICES; s++)
				m |= mask[(s * MW + w) * CPOS + lane];
			comb[w * CPOS + lane] = m;
		}
		if (blockIdx.x == 0 && threadIdx.x == 0)
			sb->first[(round + 1) % 3] = NONE32;
		__syncthreads();
		if (w == 0 && x < e) {
			unsigned v = OFFICERS_VMAX;
			for (unsigned k = 0; k < MW; k++) {
				uint32_t f = ~comb[k * CPOS + lane] & common32(k);
				if (f) {
					v = k * 32 + __ffs(f) - 1;
					break;
				}
			}
			if (v != ring[x & RMASK]) {
				buf[x] = (uint16_t)v;
				atomicMin(&sb->first[round % 3], x);
			}
		}
		grid_barrier(sb, nb);
		unsigned f = *(volatile unsigned *)&sb->first[round % 3];
		lo = c;
		c = f == NONE32 ? e : f + 1;
		round++;
	}
	if (blockIdx.x == 0 && threadIdx.x == 0)
		sb->rounds = round;
}

static __device__ __forceinline__ void exact_one(const uint16_t *buf, const uint16_t *lo,
				       unsigned lo_len,
				       unsigned long long dbase,
				       unsigned n0off, unsigned idx,
				       unsigned nrare, const uint32_t *g_rpos,
				       const uint16_t *g_rval, uint8_t *status)
{
	__shared__ uint32_t smask[EXACT_WARPS][MW];
	__shared__ uint32_t need[EXACT_WARPS][MW];
	const unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	unsigned xo, c, missing = 0, bad = 0;
	unsigned long long x, half, amax;

	xo = n0off + idx;
	x = dbase + xo;
	c = buf[xo];
	if (lane < MW)
		smask[w][lane] = 0;
	__syncwarp();
	for (unsigned j = lane; j < nrare; j += 32) {
		unsigned o = g_rval[j] ^ buf[xo - 1 - g_rpos[j]];
		atomicOr(&smask[w][o >> 5], 1u << (o & 31));
	}
	__syncwarp();
	if (lane < MW) {
		uint32_t m = smask[w][lane], com = common32(lane), below;
		below = c >= 32 * (lane + 1) ? 0xffffffffu
		      : c <= 32 * lane      ? 0u
					    : (1u << (c - 32 * lane)) - 1;
		/* every common value below c marked, c itself common and not */
		if ((~m & com & below) != 0)
			bad = 1;
		if (c / 32 == lane &&
		    (!((com >> (c & 31)) & 1) || ((m >> (c & 31)) & 1)))
			bad = 1;
		need[w][lane] = ~m & ~com & below;
		missing = __popc(~m & ~com & below);
	}
	if (c >= OFFICERS_VMAX)
		bad = 1;
	bad = __any_sync(0xffffffffu, bad);
	for (int off = 16; off > 0; off >>= 1)
		missing += __shfl_xor_sync(0xffffffffu, missing, off);
	__syncwarp();
	if (bad) {
		if (lane == 0)
			status[idx] = 2;
		return;
	}
	if (missing == 0) {
		if (lane == 0)
			status[idx] = 0;
		return;
	}
	half = (x - 1) / 2;
	amax = half;
	if (dbase != 0) {
		if (amax > (unsigned long long)lo_len - 1)
			amax = lo_len - 1;
		if (amax > x - 1 - dbase)
			amax = x - 1 - dbase;
	}
	const uint16_t *hi = buf + (xo - 1);
	for (unsigned long long a0 = 0; a0 <= amax; a0 += 32) {
		unsigned long long a = a0 + lane;
		int hit = 0;
		unsigned o = 0;
		if (a <= amax) {
			o = lo[a] ^ hi[-(long long)a];
			hit = o < c && ((need[w][o >> 5] >> (o & 31)) & 1);
		}
		if (__any_sync(0xffffffffu, hit)) {
			unsigned got = 0;
			if (hit) {
				uint32_t bit = 1u << (o & 31);
				got = atomicAnd(&need[w][o >> 5], ~bit) & bit;
			}
			missing -= __popc(__ballot_sync(0xffffffffu, got != 0));
			__syncwarp();
			if (missing == 0) {
				if (lane == 0)
					status[idx] = 0;
				return;
			}
		}
	}
	if (lane == 0)
		status[idx] = 1;
}

/* One warp per position x = n0off + warp; lo is the array of G(0..) the
 * scan reads for small a (buf itself when dbase == 0). */
__global__ void __launch_bounds__(EXACT_WARPS * 32)
exact_kernel(const uint16_t *buf, const uint16_t *lo, unsigned lo_len,
	     unsigned long long dbase, unsigned n0off, unsigned len,
	     unsigned nrare, const uint32_t *g_rpos, const uint16_t *g_rval,
	     uint8_t *status)
{
	const unsigned w = threadIdx.x >> 5;
	const unsigned nw = gridDim.x * EXACT_WARPS;

	/* Warps take positions in turn: scan depths vary a lot. */
	for (unsigned idx = blockIdx.x * EXACT_WARPS + w; idx < len; idx += nw)
		exact_one(buf, lo, lo_len, dbase, n0off, idx, nrare, g_rpos,
			  g_rval, status);
}

/* ---- split candidate kernel ----------------------------------------------
 * The frontier iteration above recomputes all 1,584 lookups of every window
 * position every round, though a lookup whose source is final never
 * changes. Here each lookup is done once, except those whose source is
 * still a guess:
 *   near CTA (block 0): the frontier iteration on a window of SK positions,
 *     alone, so a round needs no grid barrier. It keeps per position a mask
 *     `fin` of the options from final sources: rare r < D are added when
 *     their source becomes final (or from the history at the start), rare
 *     r >= D come from the far CTAs. Each round only redoes the lookups
 *     whose source is inside the window (r < d for the position at offset
 *     d), from the pair list built once.
 *   far CTAs (blocks 1..F): for batches of SFB positions, the options of
 *     rare r >= D, once the frontier has passed every source (x - 1 - D);
 *     they land in a ring of SFR batches in global memory with a ready
 *     word each. D >= SK + SFB keeps the far CTAs ahead of the window: a
 *     batch's sources are final before it enters the window.
 * The frontier argument is unchanged: a position's mask holds exactly the
 * options from the current values, so the first changed position y and
 * everything before it are exact. Spins give up after 2 s (stalled), which
 * the host reports as a device error instead of hanging.
 * Measured (H100, 2026-11-23): bit-identical, 77.7 values per round as the
 * CPU simulation said, but a round costs 11.6-16.6 K cycles of the near CTA
 * (D = 512: A 3.5 K, B 2.5 K, C 5.4 K; C grows by ~42 cycles per near rare
 * position: shared-atomic scatter into fin), so 13 M values/s at best
 * against the frontier kernel's 31 M/s. Not the default. */
#define SK 256       /* window positions */
#define SFRN 2048    /* fin ring positions: >= SK + D */
#define SFB 32       /* far batch positions */
#define SFR 64       /* far ring batches: SFR * SFB >= D + 2 * SFB */
#define SPAIRS 13312 /* window pairs (r < d < SK) */
#define SNEAR 1024   /* near rare positions (r < D) */
#define SPIN_NS 2000000000ull

struct split_sync {
	unsigned frontier; /* near CTA: offsets below are final in buf */
	unsigned stalled;  /* a spin ran out of time */
	unsigned rounds, far_waits;
	unsigned long long cycles[4]; /* near CTA: A, wait, B, C */
	unsigned ready[SFR]; /* batch + 1 held in each far ring slot */
};

#define SHMEM_SPLIT_NEAR                                                     \
	(SK * 2 + (SFRN * MW + SK * MW + SPAIRS + SNEAR) * 4)
#define SHMEM_SPLIT_FAR (RING * 2 + CSLICES * MW * SFB * 4)
#define SHMEM_SPLIT                                                          \
	(SHMEM_SPLIT_NEAR > SHMEM_SPLIT_FAR ? SHMEM_SPLIT_NEAR : SHMEM_SPLIT_FAR)

__device__ __forceinline__ unsigned long long gtimer(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* Spin until *p >= want: 0, or -1 when stalled (here or elsewhere). */
__device__ static int spin_ge(const unsigned *p, unsigned want,
			      struct split_sync *ss, unsigned *spun)
{
	unsigned long long t0 = 0;
	unsigned n = 0;

	while (*(const volatile unsigned *)p < want) {
		if ((++n & 255) != 0)
			continue;
		unsigned long long t = gtimer();
		if (*(volatile unsigned *)&ss->stalled)
			return -1;
		if (!t0) {
			t0 = t;
		} else if (t - t0 > SPIN_NS) {
			atomicExch(&ss->stalled, 1u);
			return -1;
		}
	}
	__threadfence(); /* acquire: what was written before *p */
	if (n)
		*spun = 1;
	return 0;
}

__device__ static void split_far(uint16_t *buf, unsigned n0, unsigned n1,
				 unsigned nrare, unsigned nnear, unsigned D,
				 unsigned maxpos, uint32_t *farm,
				 struct split_sync *ss, uint32_t *sh)
{
	uint16_t *ring = (uint16_t *)sh;
	uint32_t *mask = sh + RING / 2; /* [CSLICES][MW][SFB] */
	__shared__ int s_abort;
	const unsigned t = threadIdx.x, lane = t & 31, w = t >> 5;
	const unsigned nbat = (n1 - n0 + SFB - 1) / SFB;
	unsigned hi = 0, spun = 0;

	for (unsigned b = blockIdx.x - 1; b < nbat; b += gridDim.x - 1) {
		unsigned x0 = n0 + b * SFB;
		unsigned xe = x0 + SFB < n1 ? x0 + SFB : n1;
		unsigned from = x0 - 1 - maxpos, to = xe - 1 - D;

		if (t == 0)
			s_abort = spin_ge(&ss->frontier, to, ss, &spun);
		for (unsigned i = t; i < CSLICES * MW * SFB; i += CTHREADS)
			mask[i] = 0;
		__syncthreads();
		if (s_abort)
			return;
		if (hi < from)
			hi = from;
		for (unsigned i = hi + t; i < to; i += CTHREADS)
			ring[i & RMASK] = __ldcg(buf + i);
		hi = to;
		__syncthreads();
		unsigned x = x0 + lane;
		if (x < xe) {
			uint32_t *col = mask + w * MW * SFB + lane;
			for (unsigned j = nnear + w; j < nrare; j += CSLICES) {
				unsigned o = (c_rval[j] ^
					      ring[(x - 1 - c_rpos[j]) & RMASK]) &
					     (OFFICERS_VMAX - 1);
				atomicOr(&col[(o >> 5) * SFB], 1u << (o & 31));
			}
		}
		__syncthreads();
		if (w < MW) {
			uint32_t m = 0;
			for (unsigned s = 0; s < CSLICES; s++)
				m |= mask[(s * MW + w) * SFB + lane];
			farm[((b % SFR) * SFB + lane) * MW + w] = m;
			__threadfence();
		}
		__syncthreads();
		if (t == 0)
			*(volatile unsigned *)&ss->ready[b % SFR] = b + 1;
	}
}

/* Barrier of the near CTA's 31 compute warps (warp 31 runs on its own). */
__device__ __forceinline__ void near_sync(void)
{
	asm volatile("bar.sync 1, %0;" ::"n"(CTHREADS - 32) : "memory");
}

/* Warp 31 of the near CTA: ORs each far batch into fin as soon as it is
 * ready (ahead of the window, off the rounds' path), announces how far it
 * got in *merged, and publishes the compute warps' frontier *cur to the far
 * CTAs (the fence makes the finals in buf visible first). */
__device__ static void near_feeder(unsigned n0, unsigned n1,
				   const uint32_t *farm, struct split_sync *ss,
				   uint32_t *fin, volatile unsigned *cur,
				   volatile unsigned *merged,
				   volatile int *abort)
{
	const unsigned lane = threadIdx.x & 31, full = 0xffffffffu;
	unsigned mh = n0, pub = n0, n = 0;
	unsigned long long t0 = 0;

	/* Lane 0 reads what decides the loop, the warp follows it. */
	for (;;) {
		unsigned c = __shfl_sync(full, *cur, 0);
		int stop = __shfl_sync(full, *abort, 0);
		__threadfence_block();
		if (stop)
			return;
		if (c > pub) {
			if (lane == 0) {
				__threadfence();
				*(volatile unsigned *)&ss->frontier = c;
			}
			pub = c;
			t0 = 0;
		}
		if (mh >= n1) {
			if (pub >= n1)
				return;
			continue;
		}
		unsigned b = (mh - n0) / SFB, slot = b % SFR;
		unsigned x0 = n0 + b * SFB;
		unsigned rd = __shfl_sync(
			full, *(const volatile unsigned *)&ss->ready[slot], 0);
		if (rd < b + 1) {
			if ((++n & 255) == 0) {
				int late = 0;
				if (lane == 0) {
					unsigned long long t = gtimer();
					if (*(volatile unsigned *)&ss->stalled)
						late = 1;
					else if (!t0)
						t0 = t;
					else if (t - t0 > SPIN_NS)
						late = 1;
					if (late) {
						atomicExch(&ss->stalled, 1u);
						*abort = 1;
					}
				}
				if (__shfl_sync(full, late, 0))
					return;
			}
			continue;
		}
		__threadfence();
		unsigned x = x0 + lane;
		if (x >= mh && x < n1) {
			const uint4 *src = (const uint4 *)(farm + (slot * SFB + lane) *
							   MW);
			uint4 q[MW / 4];
			for (int k = 0; k < MW / 4; k++)
				q[k] = __ldcg(src + k);
			uint32_t *dst = fin + (x & (SFRN - 1)) * MW;
			for (int k = 0; k < MW / 4; k++) {
				atomicOr(dst + 4 * k, q[k].x);
				atomicOr(dst + 4 * k + 1, q[k].y);
				atomicOr(dst + 4 * k + 2, q[k].z);
				atomicOr(dst + 4 * k + 3, q[k].w);
			}
		}
		mh = x0 + SFB < n1 ? x0 + SFB : n1;
		__threadfence_block();
		__syncwarp();
		if (lane == 0)
			*merged = mh;
		t0 = 0;
	}
}

__device__ static void split_near(uint16_t *buf, unsigned n0, unsigned n1,
				  unsigned nnear, unsigned D,
				  const uint32_t *farm, struct split_sync *ss,
				  uint32_t *sh)
{
	uint16_t *gv = (uint16_t *)sh;               /* [SK] guesses */
	uint32_t *fin = sh + SK / 2;                 /* [SFRN][MW] */
	uint32_t *wm = fin + SFRN * MW;              /* [SK][MW] */
	uint32_t *pairs = wm + SK * MW;              /* d | r << 8 | rv << 16 */
	uint32_t *rn = pairs + SPAIRS;               /* r | rv << 16 */
	__shared__ unsigned s_cnt[SK], s_off[SK], s_first, s_npairs;
	__shared__ volatile unsigned s_cur, s_merged;
	__shared__ volatile int s_abort;
	const unsigned t = threadIdx.x, lane = t & 31, w = t >> 5;
	const unsigned NT = CTHREADS - 32; /* compute threads */
	unsigned c = n0, rounds = 0, waits = 0;
	long long tph[4] = {0, 0, 0, 0}, tc = 0;

	for (unsigned j = t; j < nnear; j += CTHREADS)
		rn[j] = c_rpos[j] | ((unsigned)c_rval[j] << 16);
	for (unsigned i = t; i < SFRN * MW; i += CTHREADS)
		fin[i] = 0;
	for (unsigned i = t; i < SK * MW; i += CTHREADS)
		wm[i] = 0;
	for (unsigned i = t; i < SK; i += CTHREADS)
		gv[i] = 0;
	if (t == 0) {
		s_first = NONE32;
		s_abort = 0;
		s_cur = n0;
		s_merged = n0;
	}
	__syncthreads();
	if (t < SK) {
		unsigned k = 0;
		while (k < nnear && (rn[k] & 0xffff) < t)
			k++;
		s_cnt[t] = k;
	}
	__syncthreads();
	if (t == 0) {
		unsigned sum = 0;
		for (unsigned d = 0; d < SK; d++) {
			s_off[d] = sum;
			sum += s_cnt[d];
		}
		s_npairs = sum;
	}
	__syncthreads();
	if (t < SK)
		for (unsigned k = 0; k < s_cnt[t]; k++)
			pairs[s_off[t] + k] = t | (rn[k] & 0xffff) << 8 |
					      (rn[k] >> 16) << 16;
	/* options of [n0, n0 + D) from the history */
	for (unsigned x = n0 + w; x < n0 + D && x < n1; x += CSLICES)
		for (unsigned j = lane; j < nnear; j += 32) {
			unsigned s = x - 1 - (rn[j] & 0xffff);
			if (s < n0) {
				unsigned o = ((rn[j] >> 16) ^ __ldcg(buf + s)) &
					     (OFFICERS_VMAX - 1);
				atomicOr(&fin[(x & (SFRN - 1)) * MW + (o >> 5)],
					 1u << (o & 31));
			}
		}
	__syncthreads();
	if (w == CSLICES - 1) {
		near_feeder(n0, n1, farm, ss, fin, &s_cur, &s_merged, &s_abort);
		return;
	}
	const unsigned npairs = s_npairs;

	while (c < n1) {
		unsigned e = c + SK < n1 ? c + SK : n1;

		if (t == 0)
			tc = clock64();
		/* A: the lookups whose source is in the window. */
		for (unsigned p = t; p < npairs; p += NT) {
			unsigned pr = pairs[p], x = c + (pr & 0xff);
			if (x < e) {
				unsigned s = x - 1 - ((pr >> 8) & 0xff);
				unsigned o = ((pr >> 16) ^ gv[s & (SK - 1)]) &
					     (OFFICERS_VMAX - 1);
				atomicOr(&wm[(x & (SK - 1)) * MW + (o >> 5)],
					 1u << (o & 31));
			}
		}
		if (t == 0) {
			unsigned spun = 0;
			while (s_merged < e && !s_abort)
				spun = 1;
			waits += spun;
			__threadfence_block();
			long long now = clock64();
			tph[0] += now - tc;
			tc = now;
		}
		near_sync();
		if (s_abort)
			break;
		if (t == 0) {
			long long now = clock64();
			tph[1] += now - tc;
			tc = now;
		}
		/* B: masks, mex, changes (16 lanes per position). */
		for (unsigned i = t; i < SK * MW; i += NT) {
			unsigned slot = i / MW, k = i % MW;
			unsigned x = c + ((slot - c) & (SK - 1));
			int valid = x < e;
			uint32_t m = wm[i] | fin[(x & (SFRN - 1)) * MW + k];
			wm[i] = 0;
			uint32_t f = valid ? ~m & common32(k) : 0;
			unsigned bal = __ballot_sync(0xffffffffu, f != 0);
			unsigned hb = (bal >> (lane & 16)) & 0xffff;
			if (valid && k == (hb ? __ffs(hb) - 1 : 0)) {
				unsigned v = hb ? k * 32 + __ffs(f) - 1
						: OFFICERS_VMAX;
				if (v != gv[slot]) {
					gv[slot] = (uint16_t)v;
					atomicMin(&s_first, x - c);
				}
			}
		}
		near_sync();
		if (t == 0) {
			long long now = clock64();
			tph[2] += now - tc;
			tc = now;
		}
		/* C: the new finals: to buf, their options into fin, their
		 * fin slots cleared for positions SFRN on. */
		unsigned y = s_first;
		unsigned cn = y == NONE32 ? e : c + y + 1;
		for (unsigned x = c + t; x < cn; x += NT)
			buf[x] = gv[x & (SK - 1)];
		for (unsigned i = t; i < (cn - c) * MW; i += NT)
			fin[((c + i / MW) & (SFRN - 1)) * MW + i % MW] = 0;
		for (unsigned s = c + w; s < cn; s += CSLICES - 1) {
			unsigned g = gv[s & (SK - 1)];
			for (unsigned j = lane; j < nnear; j += 32) {
				unsigned x = s + 1 + (rn[j] & 0xffff);
				if (x >= cn && x < n1) {
					unsigned o = ((rn[j] >> 16) ^ g) &
						     (OFFICERS_VMAX - 1);
					atomicOr(&fin[(x & (SFRN - 1)) * MW +
						      (o >> 5)],
						 1u << (o & 31));
				}
			}
		}
		c = cn;
		rounds++;
		near_sync();
		if (t == 0) {
			s_first = NONE32;
			__threadfence_block();
			s_cur = c; /* the feeder publishes it */
			long long now = clock64();
			tph[3] += now - tc;
		}
	}
	if (t == 0) {
		ss->rounds = rounds;
		ss->far_waits = waits;
		for (int k = 0; k < 4; k++)
			ss->cycles[k] = (unsigned long long)tph[k];
	}
}

/* Block 0 is the near CTA, the others far CTAs; all resident (cooperative
 * launch), 1 CTA per SM. */
__global__ void __launch_bounds__(CTHREADS, 1)
split_kernel(uint16_t *buf, unsigned n0off, unsigned n1off, unsigned nrare,
	     unsigned nnear, unsigned D, unsigned maxpos, uint32_t *farm,
	     struct split_sync *ss)
{
	extern __shared__ uint32_t sh[];

	if (blockIdx.x == 0)
		split_near(buf, n0off, n1off, nnear, D, farm, ss, sh);
	else
		split_far(buf, n0off, n1off, nrare, nnear, D, maxpos, farm, ss,
			  sh);
}

/* ---- warp candidate kernel -------------------------------------------------
 * The split kernel's near CTA spent 12 K cycles a round on shared atomics
 * and barriers. Here one warp iterates a window of WK = 32 positions (a lane
 * each) with no atomics and no barrier:
 *   the options from rare r < K2 are redone every round (25 lookups a lane:
 *   the guess of lane - 1 - r by shuffle, or a final value from vring);
 *   everything else is final before the position enters the window and is
 *   boiled down by helper warps to Z(x), the 31 smallest common values not
 *   among those options, and T(x)[v], the index of v in Z(x) (31: not in
 *   it). The candidate is then Z(x)[first index no lookup hit]: at most
 *   25 of the 31 can be hit.
 * Helper warps (the rest of the CTA) add, for each new final source, the
 * options of rare K2 <= r < D into F, merge the far CTAs' masks (r >= D,
 * split_far) into F, publish the frontier, and prepare Z/T once F(x) is
 * complete (sources <= x - 1 - K2 all final and added). The near warp
 * waits for `prepared` to cover its window; helpers may lag 64 positions
 * (K2 - WK) without stalling it. Same frontier argument as above. */
#define WK 32         /* window (one warp) */
#define WK2 96        /* lookups redone every round: rare r < WK2 */
#define WFR 1024      /* F ring positions: > D + WK2 */
#define WFS 17        /* F row stride (words): rows start in other banks */
#define WTR 128       /* Z/T ring positions: >= WK2 + WK */
#define WZN 31        /* Z entries; T's 31 means none */
#define WVR 1024      /* final values ring */
#define WNEARMAX 1024 /* rare r < D */

#define SHMEM_WARP_NEAR                                                      \
	(WVR * 2 + WFR * WFS * 4 + WTR * 512 + WTR * 32 * 2 + WNEARMAX * 4)
#define SHMEM_WARP                                                           \
	(SHMEM_WARP_NEAR > SHMEM_SPLIT_FAR ? SHMEM_WARP_NEAR : SHMEM_SPLIT_FAR)

struct warp_shared {
	volatile unsigned final_to; /* near warp: offsets below are final */
	volatile unsigned prepared; /* helpers: Z/T ready below */
	volatile int abort;
};

/* Helper barrier (warps 1..nh). */
__device__ __forceinline__ void helper_sync(unsigned nh)
{
	asm volatile("bar.sync 2, %0;" ::"r"(nh * 32) : "memory");
}

__device__ static void warp_near(uint16_t *buf, unsigned n0, unsigned n1,
				 unsigned nk2, struct split_sync *ss,
				 uint16_t *vring, const uint8_t *T,
				 const uint16_t *Z, const uint32_t *rn,
				 struct warp_shared *ws)
{
	const unsigned lane = threadIdx.x & 31, full = 0xffffffffu;
	unsigned c = n0, g = 0, rounds = 0, waits = 0;

	while (c < n1) {
		unsigned e = c + WK < n1 ? c + WK : n1, x = c + lane;
		if (ws->prepared < e) {
			unsigned long long t0 = gtimer();
			waits++;
			while (ws->prepared < e) {
				if (ws->abort)
					return;
				if (gtimer() - t0 > SPIN_NS) {
					ws->abort = 1;
					if (lane == 0)
						atomicExch(&ss->stalled, 1u);
					return;
				}
			}
		}
		__threadfence_block();
		const uint8_t *tx = T + (x & (WTR - 1)) * 512;
		uint32_t mask = 0;
#pragma unroll 5
		for (unsigned k = 0; k < nk2; k++) {
			unsigned rk = rn[k], r = rk & 0xffff;
			unsigned up = __shfl_up_sync(full, g, r + 1);
			unsigned src = lane > r ? up
					: vring[(x - 1 - r) & (WVR - 1)];
			unsigned o = ((rk >> 16) ^ src) & (OFFICERS_VMAX - 1);
			mask |= 1u << tx[o];
		}
		unsigned v = Z[(x & (WTR - 1)) * 32 + __ffs(~mask) - 1];
		int ch = x < e && v != g;
		unsigned bal = __ballot_sync(full, ch);
		unsigned adv = bal ? __ffs(bal) : e - c;
		if (x < e)
			g = v;
		if (lane < adv) {
			buf[x] = (uint16_t)g;
			vring[x & (WVR - 1)] = (uint16_t)g;
		}
		__syncwarp();
		__threadfence_block();
		if (lane == 0)
			ws->final_to = c + adv;
		g = __shfl_down_sync(full, g, adv & 31);
		c += adv;
		rounds++;
	}
	if (lane == 0) {
		ss->rounds = rounds;
		ss->far_waits = waits;
	}
}

/* Warps 1..31 of the near CTA (see above). */
__device__ static void warp_helpers(uint16_t *buf, unsigned n0, unsigned n1,
				    unsigned nk2, unsigned nnear,
				    const uint32_t *farm, struct split_sync *ss,
				    uint16_t *vring, uint32_t *F, uint8_t *T,
				    uint16_t *Z, const uint32_t *rn,
				    struct warp_shared *ws, unsigned NH)
{
	const unsigned t = threadIdx.x - 32, lane = t & 31, hw = t >> 5;
	const unsigned full = 0xffffffffu;
	const unsigned nm = nnear - nk2; /* rare K2 <= r < D */
	unsigned P = n0, prep = n0, fm = n0, pub = n0;
	unsigned P_last = n0;
	__shared__ unsigned s_fm, s_hi;
	__shared__ int s_stop;
	unsigned long long t0 = 0;
	(void)buf;

	if (t == 0)
		s_fm = n0;
	for (;;) {
		/* one reading of the near warp's progress for all helpers */
		if (t == 0) {
			s_hi = ws->final_to;
			s_stop = ws->abort;
			__threadfence_block();
		}
		helper_sync(NH);
		unsigned hi = s_hi;
		if (s_stop)
			return;
		/* the frontier for the far CTAs (finals are in buf) */
		if (t == 0 && hi > pub) {
			__threadfence();
			*(volatile unsigned *)&ss->frontier = hi;
		}
		pub = hi;
		/* options of rare K2 <= r < D from the new finals */
		for (unsigned s = P + hw; s < hi; s += NH) {
			unsigned gs = vring[s & (WVR - 1)];
			for (unsigned j = lane; j < nm; j += 32) {
				unsigned rj = rn[nk2 + j];
				unsigned x = s + 1 + (rj & 0xffff);
				if (x < n1) {
					unsigned o = ((rj >> 16) ^ gs) &
						     (OFFICERS_VMAX - 1);
					atomicOr(&F[(x & (WFR - 1)) * WFS + (o >> 5)],
						 1u << (o & 31));
				}
			}
		}
		/* warp 1 merges the far batches that are ready */
		if (hw == 0) {
			unsigned lim = hi + WFR - WK2 - WK < n1 ? hi + WFR - WK2 - WK
								 : n1;
			while (fm < lim) {
				unsigned b = (fm - n0) / SFB, slot = b % SFR;
				unsigned rd = __shfl_sync(
					full,
					*(const volatile unsigned *)&ss->ready[slot],
					0);
				if (rd < b + 1)
					break;
				__threadfence();
				unsigned x = n0 + b * SFB + lane;
				if (x >= fm && x < n1) {
					const uint4 *src = (const uint4 *)(farm +
						(slot * SFB + lane) * MW);
					uint4 q[MW / 4];
					for (int k = 0; k < MW / 4; k++)
						q[k] = __ldcg(src + k);
					uint32_t *dst = F + (x & (WFR - 1)) * WFS;
					for (int k = 0; k < MW / 4; k++) {
						atomicOr(dst + 4 * k, q[k].x);
						atomicOr(dst + 4 * k + 1, q[k].y);
						atomicOr(dst + 4 * k + 2, q[k].z);
						atomicOr(dst + 4 * k + 3, q[k].w);
					}
				}
				fm = n0 + (b + 1) * SFB < n1 ? n0 + (b + 1) * SFB
							     : n1;
			}
			if (lane == 0)
				s_fm = fm;
		}
		helper_sync(NH);
		P = hi;
		/* Z/T of the positions whose F is complete: a warp each */
		unsigned pe = P + WK2;
		if (pe > s_fm)
			pe = s_fm;
		if (pe > n1)
			pe = n1;
		for (unsigned x = prep + hw; x < pe; x += NH) {
			uint32_t *row = F + (x & (WFR - 1)) * WFS;
			uint8_t *tx = T + (x & (WTR - 1)) * 512;
			uint16_t *zx = Z + (x & (WTR - 1)) * 32;
			uint32_t f = 0;
			if (lane < WZN)
				zx[lane] = OFFICERS_VMAX; /* fewer zeros */
			if (lane < MW) {
				f = ~row[lane] & common32(lane);
				row[lane] = 0; /* the slot's next position */
			}
			((uint32_t *)tx)[lane] = 0x1f1f1f1fu;
			((uint32_t *)tx)[lane + 32] = 0x1f1f1f1fu;
			((uint32_t *)tx)[lane + 64] = 0x1f1f1f1fu;
			((uint32_t *)tx)[lane + 96] = 0x1f1f1f1fu;
			unsigned cnt = __popc(f), pre = cnt;
			for (int d = 1; d < 32; d <<= 1) {
				unsigned y = __shfl_up_sync(full, pre, d);
				if ((int)lane >= d)
					pre += y;
			}
			pre -= cnt; /* zeros in the words before this one */
			__syncwarp();
			while (f && pre < WZN) {
				unsigned bit = __ffs(f) - 1, z = lane * 32 + bit;
				f &= f - 1;
				zx[pre] = (uint16_t)z;
				tx[z] = (uint8_t)pre;
				pre++;
			}
		}
		helper_sync(NH);
		int moved = hi > P_last || pe > prep;
		if (pe > prep) {
			prep = pe;
			if (t == 0) {
				__threadfence_block();
				ws->prepared = prep;
			}
		}
		if (prep >= n1 && P >= n1)
			return;
		/* idle helpers would take issue slots from the near warp */
		if (!moved)
			__nanosleep(200);
		P_last = hi;
		if (t == 0) {
			/* no progress for SPIN_NS: stalled */
			unsigned long long now = gtimer();
			if (moved)
				t0 = 0;
			if (!t0)
				t0 = now;
			else if (now - t0 > SPIN_NS) {
				atomicExch(&ss->stalled, 1u);
				ws->abort = 1;
			}
		}
	}
}

__device__ static void warp_block(uint16_t *buf, unsigned n0, unsigned n1,
				  unsigned nnear, unsigned nk2, unsigned D,
				  unsigned nh, const uint32_t *farm,
				  struct split_sync *ss, uint32_t *sh)
{
	uint16_t *vring = (uint16_t *)sh;                       /* WVR */
	uint32_t *F = sh + WVR / 2;                             /* WFR x WFS */
	uint8_t *T = (uint8_t *)(F + WFR * WFS);                /* WTR x 512 */
	uint16_t *Z = (uint16_t *)(T + WTR * 512);              /* WTR x 32 */
	uint32_t *rn = (uint32_t *)(Z + WTR * 32);              /* nnear */
	__shared__ struct warp_shared ws;
	const unsigned t = threadIdx.x, lane = t & 31, w = t >> 5;

	for (unsigned j = t; j < nnear; j += CTHREADS)
		rn[j] = c_rpos[j] | ((unsigned)c_rval[j] << 16);
	for (unsigned i = t; i < WFR * WFS; i += CTHREADS)
		F[i] = 0;
	for (unsigned i = t; i < WVR; i += CTHREADS)
		vring[(n0 - WVR + i) & (WVR - 1)] = __ldcg(buf + n0 - WVR + i);
	if (t == 0) {
		ws.final_to = n0;
		ws.prepared = n0;
		ws.abort = 0;
	}
	__syncthreads();
	/* options of rare K2 <= r < D from the history, for [n0, n0 + D) */
	for (unsigned x = n0 + w; x < n0 + D && x < n1; x += CSLICES)
		for (unsigned j = nk2 + lane; j < nnear; j += 32) {
			unsigned s = x - 1 - (rn[j] & 0xffff);
			if (s < n0) {
				unsigned o = ((rn[j] >> 16) ^ __ldcg(buf + s)) &
					     (OFFICERS_VMAX - 1);
				atomicOr(&F[(x & (WFR - 1)) * WFS + (o >> 5)],
					 1u << (o & 31));
			}
		}
	__syncthreads();
	/* warps past the helpers leave: they would only take issue slots */
	if (w == 0)
		warp_near(buf, n0, n1, nk2, ss, vring, T, Z, rn, &ws);
	else if (w <= nh)
		warp_helpers(buf, n0, n1, nk2, nnear, farm, ss, vring, F, T, Z,
			     rn, &ws, nh);
}

/* Block 0: the near warp and its helpers; the others far CTAs (split_far);
 * all resident (cooperative launch). */
__global__ void __launch_bounds__(CTHREADS, 1)
warp_kernel(uint16_t *buf, unsigned n0off, unsigned n1off, unsigned nrare,
	    unsigned nnear, unsigned nk2, unsigned D, unsigned nh,
	    unsigned maxpos, uint32_t *farm, struct split_sync *ss)
{
	extern __shared__ uint32_t sh[];

	if (blockIdx.x == 0)
		warp_block(buf, n0off, n1off, nnear, nk2, D, nh, farm, ss, sh);
	else
		split_far(buf, n0off, n1off, nrare, nnear, D, maxpos, farm, ss,
			  sh);
}

/* ---- host side ---------------------------------------------------------- */

#define CK(call, what) CUDA_CK("officers", call, what)

#define SHMEM_CAND (RING * 2 + (CSLICES * MW * CPOS + MW * CPOS) * 4)
#define BUF_LEN ((size_t)OFFICERS_TAIL + OFFICERS_CUDA_CHUNK)

extern "C" int officers_cuda_device_count(void)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess)
		return 0;
	return n;
}

extern "C" void officers_cuda_close(struct officers_cuda *ctx)
{
	if (!ctx)
		return;
	cudaSetDevice(ctx->device);
	for (int i = 0; i < 2; i++) {
		cudaFree(ctx->d_buf[i]);
		cudaFree(ctx->d_status[i]);
		cudaFreeHost(ctx->h_vals[i]);
		cudaFreeHost(ctx->h_status[i]);
	}
	cudaFree(ctx->d_prefix);
	cudaFree(ctx->d_sync);
	cudaFree(ctx->d_rpos);
	cudaFree(ctx->d_rval);
	cudaFree(ctx->d_farm);
	cudaFree(ctx->d_ssync);
	cudaFreeHost(ctx->h_ssync);
	cudaFreeHost(ctx->h_rpos);
	cudaFreeHost(ctx->h_rval);
	for (int i = 0; i < 4; i++)
		if (ctx->ev[i])
			cudaEventDestroy(ctx->ev[i]);
	if (ctx->stream)
		cudaStreamDestroy(ctx->stream);
	free(ctx);
}

extern "C" int officers_cuda_open(int index, struct officers_cuda **ret,
				  char *err, size_t errlen)
{
	struct officers_cuda *ctx = NULL;
	cudaDeviceProp prop;
	int n = officers_cuda_device_count(), per_sm = 0, coop = 0;

	if (index < 0 || index >= n) {
		snprintf(err, errlen, "officers cuda: no device %d (%d found)",
			 index, n);
		return GERR_UNSUPPORTED;
	}
	ctx = (struct officers_cuda *)calloc(1, sizeof(*ctx));
	if (!ctx)
		return GERR_NOMEM;
	ctx->device = index;
	cudaError_t e = cudaSetDevice(index);
	if (e == cudaSuccess)
		e = cudaGetDeviceProperties(&prop, index);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch,
					   index);
	if (e == cudaSuccess)
		e = cudaFuncSetAttribute(cand_kernel,
					 cudaFuncAttributeMaxDynamicSharedMemorySize,
					 SHMEM_CAND);
	if (e == cudaSuccess)
		e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
			&per_sm, cand_kernel, CTHREADS, SHMEM_CAND);
	if (e == cudaSuccess)
		e = cudaFuncSetAttribute(split_kernel,
					 cudaFuncAttributeMaxDynamicSharedMemorySize,
					 SHMEM_SPLIT);
	if (e == cudaSuccess && per_sm >= 1)
		e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
			&per_sm, split_kernel, CTHREADS, SHMEM_SPLIT);
	if (e == cudaSuccess)
		e = cudaFuncSetAttribute(warp_kernel,
					 cudaFuncAttributeMaxDynamicSharedMemorySize,
					 SHMEM_WARP);
	if (e == cudaSuccess && per_sm >= 1)
		e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
			&per_sm, warp_kernel, CTHREADS, SHMEM_WARP);
	if (e == cudaSuccess && (!coop || per_sm < 1)) {
		snprintf(err, errlen, "officers cuda: device %d cannot run the "
			 "cooperative candidate kernel", index);
		free(ctx);
		return GERR_UNSUPPORTED;
	}
	if (e == cudaSuccess) {
		ctx->sms = prop.multiProcessorCount;
		/* One CTA per SM: K = 32 * SMs positions per round. */
		ctx->nblocks = prop.multiProcessorCount;
		ctx->kernel = OFFICERS_CAND_FRONTIER;
		ctx->near_d = OFFICERS_SPLIT_NEAR;
		ctx->far_blocks = (unsigned)prop.multiProcessorCount - 1;
		ctx->chunk = OFFICERS_CUDA_CHUNK;
		ctx->helpers = OFFICERS_WARP_HELPERS;
		snprintf(ctx->name, sizeof(ctx->name), "%s", prop.name);
		e = cudaStreamCreateWithFlags(&ctx->stream,
					      cudaStreamNonBlocking);
	}
	for (int i = 0; e == cudaSuccess && i < 4; i++)
		e = cudaEventCreate(&ctx->ev[i]);
	for (int i = 0; e == cudaSuccess && i < 2; i++) {
		e = cudaMalloc((void **)&ctx->d_buf[i], BUF_LEN * 2);
		if (e == cudaSuccess)
			e = cudaMalloc((void **)&ctx->d_status[i],
				       OFFICERS_CUDA_CHUNK);
		if (e == cudaSuccess)
			e = cudaMallocHost((void **)&ctx->h_vals[i],
					   OFFICERS_CUDA_CHUNK * 2);
		if (e == cudaSuccess)
			e = cudaMallocHost((void **)&ctx->h_status[i],
					   OFFICERS_CUDA_CHUNK);
	}
	if (e == cudaSuccess)
		e = cudaMalloc((void **)&ctx->d_prefix, OFFICERS_PREFIX * 2);
	if (e == cudaSuccess)
		e = cudaMalloc((void **)&ctx->d_sync, sizeof(struct sync_block));
	if (e == cudaSuccess)
		e = cudaMalloc((void **)&ctx->d_rpos, OFFICERS_MAX_RARE * 4);
	if (e == cudaSuccess)
		e = cudaMalloc((void **)&ctx->d_rval, OFFICERS_MAX_RARE * 2);
	if (e == cudaSuccess)
		e = cudaMallocHost((void **)&ctx->h_rpos,
				   OFFICERS_MAX_RARE * 4);
	if (e == cudaSuccess)
		e = cudaMallocHost((void **)&ctx->h_rval,
				   OFFICERS_MAX_RARE * 2);
	if (e == cudaSuccess)
		e = cudaMalloc((void **)&ctx->d_farm,
			       (size_t)SFR * SFB * MW * 4);
	if (e == cudaSuccess)
		e = cudaMalloc((void **)&ctx->d_ssync, sizeof(struct split_sync));
	if (e == cudaSuccess)
		e = cudaMallocHost((void **)&ctx->h_ssync,
				   sizeof(struct split_sync));
	if (e != cudaSuccess) {
		snprintf(err, errlen, "officers cuda: open device %d: %s", index,
			 cudaGetErrorString(e));
		officers_cuda_close(ctx);
		return GERR_DEVICE;
	}
	*ret = ctx;
	return 0;
}

extern "C" int officers_cuda_device_name(struct officers_cuda *ctx,
					 char *buf, size_t len)
{
	if (!ctx)
		return GERR_INVAL;
	if (ctx->kernel == OFFICERS_CAND_SPLIT)
		snprintf(buf, len, "%s (%d SMs, split candidate kernel: window "
			 "%d, near r < %u, %u far CTAs)", ctx->name, ctx->sms,
			 SK, ctx->near_d, ctx->far_blocks);
	else if (ctx->kernel == OFFICERS_CAND_WARP)
		snprintf(buf, len, "%s (%d SMs, warp candidate kernel: window "
			 "%d, redone r < %d, near r < %u, %u helper warps, %u "
			 "far CTAs)", ctx->name, ctx->sms, WK, WK2, ctx->near_d,
			 ctx->helpers, ctx->far_blocks);
	else
		snprintf(buf, len, "%s (%d SMs, frontier candidate kernel: K = "
			 "%d)", ctx->name, ctx->sms, ctx->nblocks * CPOS);
	return 0;
}

extern "C" int officers_cuda_tune(struct officers_cuda *ctx,
				  const struct officers_cuda_tuning *t)
{
	unsigned near_d = t->near ? t->near : OFFICERS_SPLIT_NEAR;
	unsigned far = t->far_blocks ? t->far_blocks : (unsigned)ctx->sms - 1;
	unsigned chunk = t->chunk ? t->chunk : OFFICERS_CUDA_CHUNK;
	unsigned helpers = t->helpers ? t->helpers : OFFICERS_WARP_HELPERS;

	if (t->kernel != OFFICERS_CAND_FRONTIER &&
	    t->kernel != OFFICERS_CAND_SPLIT && t->kernel != OFFICERS_CAND_WARP)
		return GERR_INVAL;
	if (t->kernel == OFFICERS_CAND_WARP && near_d + WK2 + WK + 64 > WFR)
		return GERR_INVAL;
	/* the far CTAs stay ahead of the window only with near >= SK + SFB;
	 * the fin ring holds SK + near positions */
	if (near_d < SK + SFB || near_d > SFRN - SK ||
	    far > (unsigned)ctx->sms - 1 || chunk > OFFICERS_CUDA_CHUNK ||
	    helpers > CSLICES - 1)
		return GERR_INVAL;
	ctx->kernel = t->kernel;
	ctx->near_d = near_d;
	ctx->far_blocks = far;
	ctx->chunk = chunk;
	ctx->helpers = helpers;
	return 0;
}

static unsigned hist_of(uint64_t n)
{
	return (unsigned)(n < OFFICERS_TAIL ? n : OFFICERS_TAIL);
}

/* Can the GPU take positions from s->n? The ring must hold the rare
 * partners of a whole window, the history the farthest partner. */
static int gpu_ok(const struct officers_cuda *ctx,
		  const struct officers_seq *s)
{
	uint64_t maxpos = s->nrare ? s->rare[s->nrare - 1].pos : 0;

	return s->n >= OFFICERS_CUDA_MIN_N && s->nrare > 0 &&
	       maxpos + 1 + (uint64_t)CPOS * ctx->nblocks + 64 <= RING &&
	       maxpos < hist_of(s->n) && s->n - hist_of(s->n) >= s->base;
}

/* Persistent exact grid: 8 CTAs of 8 warps per SM, fewer for short runs. */
static unsigned exact_blocks(const struct officers_cuda *ctx, uint64_t len)
{
	uint64_t want = (len + EXACT_WARPS - 1) / EXACT_WARPS;
	uint64_t full = (uint64_t)ctx->sms * 8;

	return (unsigned)(want < full ? want : full);
}

static int upload_rares(struct officers_cuda *ctx, const struct officers_seq *s,
			char *err, size_t errlen)
{
	if (ctx->rare_uploaded == s->nrare)
		return 0;
	for (uint32_t i = 0; i < s->nrare; i++) {
		ctx->h_rpos[i] = (uint32_t)s->rare[i].pos;
		ctx->h_rval[i] = (uint16_t)s->rare[i].val;
	}
	CK(cudaMemcpyToSymbolAsync(c_rpos, ctx->h_rpos, 4 * s->nrare, 0,
				   cudaMemcpyHostToDevice, ctx->stream),
	   "rare table");
	CK(cudaMemcpyToSymbolAsync(c_rval, ctx->h_rval, 2 * s->nrare, 0,
				   cudaMemcpyHostToDevice, ctx->stream),
	   "rare table");
	CK(cudaMemcpyAsync(ctx->d_rpos, ctx->h_rpos, 4 * s->nrare,
			   cudaMemcpyHostToDevice, ctx->stream), "rare table");
	CK(cudaMemcpyAsync(ctx->d_rval, ctx->h_rval, 2 * s->nrare,
			   cudaMemcpyHostToDevice, ctx->stream), "rare table");
	CK(cudaStreamSynchronize(ctx->stream), "rare table");
	ctx->rare_uploaded = s->nrare;
	return 0;
}

/* Enqueue chunk [n, n + len) on buffer b whose first hist values (dbase =
 * n - hist) are in place: candidates, exact, copies back. */
static int enqueue_chunk(struct officers_cuda *ctx, int b,
			 const struct officers_seq *s, uint64_t n,
			 unsigned hist, unsigned len, int do_exact, char *err,
			 size_t errlen)
{
	unsigned maxpos = (unsigned)s->rare[s->nrare - 1].pos;
	unsigned n0off = hist, n1off = hist + len, nrare = s->nrare;
	uint16_t *buf = ctx->d_buf[b];
	struct sync_block *sb = ctx->d_sync;
	uint64_t dbase = n - hist;
	void *args[] = {&buf, &n0off, &n1off, &nrare, &maxpos, &sb};
	unsigned nb = (unsigned)ctx->nblocks;

	CK(cudaMemsetAsync(buf + hist, 0, (size_t)len * 2, ctx->stream),
	   "memset");
	CK(cudaMemsetAsync(sb, 0xff, sizeof(*sb), ctx->stream), "memset");
	CK(cudaMemsetAsync(sb, 0, 2 * sizeof(unsigned), ctx->stream),
	   "memset");
	unsigned nnear = 0, npairs = 0, D = ctx->near_d;
	for (uint32_t j = 0; j < s->nrare && s->rare[j].pos < D; j++) {
		nnear++;
		if (s->rare[j].pos < SK)
			npairs += SK - 1 - (unsigned)s->rare[j].pos;
	}
	unsigned nk2 = 0;
	for (uint32_t j = 0; j < s->nrare && s->rare[j].pos < WK2; j++)
		nk2++;
	int split = ctx->kernel == OFFICERS_CAND_SPLIT && nnear <= SNEAR &&
		    npairs <= SPAIRS;
	int warp = ctx->kernel == OFFICERS_CAND_WARP && nnear <= WNEARMAX &&
		   nk2 <= 32 && D + WK2 + WK + 64 <= WFR;
	CK(cudaEventRecord(ctx->ev[0], ctx->stream), "event");
	if (split || warp) {
		struct split_sync init;
		uint32_t *farm = ctx->d_farm;
		struct split_sync *ss = ctx->d_ssync;
		void *sargs[] = {&buf, &n0off, &n1off, &nrare, &nnear, &D,
				 &maxpos, &farm, &ss};
		memset(&init, 0, sizeof(init));
		init.frontier = n0off;
		/* pageable source: staged before the call returns */
		CK(cudaMemcpyAsync(ss, &init, sizeof(init),
				   cudaMemcpyHostToDevice, ctx->stream),
		   "split sync");
		unsigned nh = ctx->helpers;
		void *wargs[] = {&buf, &n0off, &n1off, &nrare, &nnear, &nk2,
				 &D, &nh, &maxpos, &farm, &ss};
		if (warp)
			CK(cudaLaunchCooperativeKernel((void *)warp_kernel,
						       dim3(1 + ctx->far_blocks),
						       dim3(CTHREADS), wargs,
						       SHMEM_WARP, ctx->stream),
			   "candidate kernel");
		else
			CK(cudaLaunchCooperativeKernel((void *)split_kernel,
						       dim3(1 + ctx->far_blocks),
						       dim3(CTHREADS), sargs,
						       SHMEM_SPLIT, ctx->stream),
			   "candidate kernel");
		CK(cudaMemcpyAsync(ctx->h_ssync, ss, sizeof(*ss),
				   cudaMemcpyDeviceToHost, ctx->stream),
		   "split sync");
	} else {
		memset(ctx->h_ssync, 0, sizeof(*ctx->h_ssync));
		CK(cudaLaunchCooperativeKernel((void *)cand_kernel, dim3(nb),
					       dim3(CTHREADS), args, SHMEM_CAND,
					       ctx->stream),
		   "candidate kernel");
	}
	ctx->last_split = split || warp;
	CK(cudaEventRecord(ctx->ev[1], ctx->stream), "event");
	if (do_exact) {
		const uint16_t *lo = dbase == 0 ? buf : ctx->d_prefix;
		unsigned lo_len = dbase == 0 ? n1off : OFFICERS_PREFIX;
		exact_kernel<<<exact_blocks(ctx, len), EXACT_WARPS * 32, 0,
			       ctx->stream>>>(buf, lo, lo_len, dbase, n0off,
					      len, nrare, ctx->d_rpos,
					      ctx->d_rval, ctx->d_status[b]);
		CK(cudaGetLastError(), "exact kernel");
		CK(cudaMemcpyAsync(ctx->h_status[b], ctx->d_status[b], len,
				   cudaMemcpyDeviceToHost, ctx->stream),
		   "copy");
	}
	CK(cudaEventRecord(ctx->ev[2], ctx->stream), "event");
	CK(cudaMemcpyAsync(ctx->h_vals[b], buf + hist, (size_t)len * 2,
			   cudaMemcpyDeviceToHost, ctx->stream),
	   "copy");
	CK(cudaEventRecord(ctx->ev[3], ctx->stream), "event");
	return 0;
}

static int upload_history(struct officers_cuda *ctx, int b,
			  const struct officers_seq *s, unsigned hist,
			  char *err, size_t errlen)
{
	uint64_t dbase = s->n - hist;

	CK(cudaMemcpyAsync(ctx->d_buf[b], s->vals + (dbase - s->base),
			   (size_t)hist * 2, cudaMemcpyHostToDevice,
			   ctx->stream),
	   "upload");
	if (dbase > 0 && !ctx->prefix_uploaded) {
		CK(cudaMemcpyAsync(ctx->d_prefix, s->prefix,
				   OFFICERS_PREFIX * 2, cudaMemcpyHostToDevice,
				   ctx->stream),
		   "upload");
		ctx->prefix_uploaded = 1;
	}
	return 0;
}

static int wait_chunk(struct officers_cuda *ctx,
		      struct officers_cuda_times *t, char *err, size_t errlen)
{
	float a = 0, b = 0;

	CK(cudaEventSynchronize(ctx->ev[3]), "chunk");
	if (ctx->last_split && ctx->h_ssync->stalled) {
		ctx->poisoned = 1;
		snprintf(err, errlen, "officers cuda: the split candidate "
			 "kernel stalled (a CTA waited over 2 s)");
		return GERR_DEVICE;
	}
	if (t && ctx->last_split) {
		t->rounds += ctx->h_ssync->rounds;
		t->far_waits += ctx->h_ssync->far_waits;
		for (int k = 0; k < 4; k++)
			t->near_cycles[k] += ctx->h_ssync->cycles[k];
	}
	if (t) {
		CK(cudaEventElapsedTime(&a, ctx->ev[0], ctx->ev[1]), "timing");
		CK(cudaEventElapsedTime(&b, ctx->ev[1], ctx->ev[2]), "timing");
		t->cand_ms += a;
		t->exact_ms += b;
	}
	return 0;
}

extern "C" int officers_cuda_candidates(struct officers_cuda *ctx,
					const struct officers_seq *s,
					uint64_t len, uint16_t *out,
					struct officers_cuda_times *times,
					char *err, size_t errlen)
{
	int rc;
	unsigned hist = hist_of(s->n);
	struct sync_block sb;

	if (ctx->poisoned) {
		snprintf(err, errlen, "officers cuda: context poisoned");
		return GERR_DEVICE;
	}
	if (!gpu_ok(ctx, s) || len > OFFICERS_CUDA_CHUNK || len == 0) {
		snprintf(err, errlen, "officers cuda: chunk not for the GPU");
		return GERR_INVAL;
	}
	CK(cudaSetDevice(ctx->device), "set device");
	if ((rc = upload_rares(ctx, s, err, errlen)) ||
	    (rc = upload_history(ctx, 0, s, hist, err, errlen)) ||
	    (rc = enqueue_chunk(ctx, 0, s, s->n, hist, (unsigned)len, 0, err,
				errlen)) ||
	    (rc = wait_chunk(ctx, times, err, errlen)))
		return rc;
	CK(cudaMemcpy(&sb, ctx->d_sync, sizeof(sb), cudaMemcpyDeviceToHost),
	   "copy");
	if (times) {
		if (!ctx->last_split)
			times->rounds += sb.rounds;
		times->values += len;
	}
	memcpy(out, ctx->h_vals[0], len * 2);
	return 0;
}

extern "C" int officers_cuda_exact(struct officers_cuda *ctx,
				   const struct officers_seq *s, uint64_t len,
				   uint8_t *status,
				   struct officers_cuda_times *times,
				   char *err, size_t errlen)
{
	unsigned hist = hist_of(s->n);
	uint64_t dbase = s->n - hist;
	float ms = 0;
	int rc;

	if (ctx->poisoned) {
		snprintf(err, errlen, "officers cuda: context poisoned");
		return GERR_DEVICE;
	}
	if (!gpu_ok(ctx, s) || len > OFFICERS_CUDA_CHUNK || len == 0) {
		snprintf(err, errlen, "officers cuda: chunk not for the GPU");
		return GERR_INVAL;
	}
	CK(cudaSetDevice(ctx->device), "set device");
	if ((rc = upload_rares(ctx, s, err, errlen)))
		return rc;
	/* history and the candidates after it, from s->vals */
	CK(cudaMemcpyAsync(ctx->d_buf[0], s->vals + (dbase - s->base),
			   (size_t)(hist + len) * 2, cudaMemcpyHostToDevice,
			   ctx->stream),
	   "upload");
	if (dbase > 0 && !ctx->prefix_uploaded) {
		CK(cudaMemcpyAsync(ctx->d_prefix, s->prefix,
				   OFFICERS_PREFIX * 2, cudaMemcpyHostToDevice,
				   ctx->stream),
		   "upload");
		ctx->prefix_uploaded = 1;
	}
	CK(cudaEventRecord(ctx->ev[1], ctx->stream), "event");
	exact_kernel<<<exact_blocks(ctx, len), EXACT_WARPS * 32, 0,
		       ctx->stream>>>(
		ctx->d_buf[0], dbase == 0 ? ctx->d_buf[0] : ctx->d_prefix,
		dbase == 0 ? (unsigned)(hist + len) : OFFICERS_PREFIX, dbase,
		hist, (unsigned)len, s->nrare, ctx->d_rpos, ctx->d_rval,
		ctx->d_status[0]);
	CK(cudaGetLastError(), "exact kernel");
	CK(cudaEventRecord(ctx->ev[2], ctx->stream), "event");
	CK(cudaMemcpyAsync(status, ctx->d_status[0], len,
			   cudaMemcpyDeviceToHost, ctx->stream),
	   "copy");
	CK(cudaStreamSynchronize(ctx->stream), "exact");
	CK(cudaEventElapsedTime(&ms, ctx->ev[1], ctx->ev[2]), "timing");
	if (times) {
		times->exact_ms += ms;
		times->values += len;
	}
	return 0;
}

extern "C" int officers_cuda_extend(struct officers_cuda *ctx,
				    struct officers_seq *s, uint64_t to,
				    int threads, const struct wl_run_io *io,
				    uint64_t units_base,
				    struct officers_cuda_times *times,
				    char *err, size_t errlen)
{
	int rc = 0, cur = -1; /* buffer of the chunk in flight */
	uint64_t cur_n = 0;
	unsigned cur_len = 0, cur_hist = 0;

	if (ctx->poisoned) {
		snprintf(err, errlen, "officers cuda: context poisoned");
		return GERR_DEVICE;
	}
	CK(cudaSetDevice(ctx->device), "set device");
	rc = officers_seq_reserve(s, to);
	if (rc)
		return rc;
	while (s->n < to || cur >= 0) {
		if (cur < 0) {
			/* Nothing in flight: CPU where the GPU does not
			 * apply, else start a chunk from host values. */
			if (!gpu_ok(ctx, s)) {
				uint64_t t = s->n < OFFICERS_CUDA_MIN_N
						     ? OFFICERS_CUDA_MIN_N
						     : s->n + 65536;
				if (t > to)
					t = to;
				rc = officers_cpu_extend(s, t, threads, io,
							 units_base, err,
							 errlen);
				if (rc)
					return rc;
				continue;
			}
			cur_hist = hist_of(s->n);
			cur_len = (unsigned)(to - s->n < ctx->chunk
						     ? to - s->n
						     : ctx->chunk);
			cur_n = s->n;
			cur = 0;
			if ((rc = upload_rares(ctx, s, err, errlen)) ||
			    (rc = upload_history(ctx, 0, s, cur_hist, err,
						 errlen)) ||
			    (rc = enqueue_chunk(ctx, 0, s, cur_n, cur_hist,
						cur_len, 1, err, errlen)))
				return rc;
		}
		rc = wait_chunk(ctx, times, err, errlen);
		if (rc)
			return rc;
		/* First position the exact kernel did not confirm. */
		const uint8_t *st = ctx->h_status[cur];
		const uint16_t *hv = ctx->h_vals[cur];
		unsigned flag = cur_len;
		for (unsigned i = 0; i < cur_len; i++)
			if (st[i]) {
				flag = i;
				break;
			}
		int b = cur, next = -1;
		uint64_t next_n = cur_n + cur_len;
		unsigned next_len = 0, next_hist = 0;
		/* Launch the next chunk from the device copy before folding
		 * this one on the host. */
		if (flag == cur_len && next_n < to) {
			unsigned have = cur_hist + cur_len;
			next_hist = hist_of(next_n);
			next_len = (unsigned)(to - next_n < ctx->chunk
						      ? to - next_n
						      : ctx->chunk);
			next = 1 - b;
			CK(cudaMemcpyAsync(ctx->d_buf[next],
					   ctx->d_buf[b] + (have - next_hist),
					   (size_t)next_hist * 2,
					   cudaMemcpyDeviceToDevice,
					   ctx->stream),
			   "shift");
			if (next_n - next_hist > 0 && !ctx->prefix_uploaded) {
				/* the prefix is complete once n >= PREFIX;
				 * fold first, then upload (rare path) */
				next = -1;
			} else if ((rc = enqueue_chunk(ctx, next, s, next_n,
						       next_hist, next_len, 1,
						       err, errlen))) {
				return rc;
			}
		}
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = officers_seq_append(s, hv, flag);
		if (rc == 0 && flag < cur_len) {
			/* Decide the flagged position on the CPU. */
			int v = officers_value(s, s->n);
			if (v < 0) {
				snprintf(err, errlen, "officers: G(%llu): the "
					 "exact scan needs values beyond what a "
					 "run holds",
					 (unsigned long long)s->n);
				return v;
			}
			rc = officers_seq_push(s, (unsigned)v);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (times)
			times->host_ms += (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
					  (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		if (rc) {
			snprintf(err, errlen, "officers: fold: error %d "
				 "(a value >= 512 or the rare table full)", rc);
			return rc;
		}
		if (times)
			times->values += flag;
		if (io && io->progress)
			io->progress(io->opaque, s->n - units_base);
		cur = next;
		cur_n = next_n;
		cur_len = next_len;
		cur_hist = next_hist;
		if (cur < 0 && io && io->should_stop &&
		    io->should_stop(io->opaque))
			return GERR_CANCELLED;
		if (cur >= 0 && io && io->should_stop &&
		    io->should_stop(io->opaque)) {
			cudaStreamSynchronize(ctx->stream);
			return GERR_CANCELLED;
		}
	}
	return 0;
}
