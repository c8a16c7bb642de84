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
 * Chain kernel (the default; officers_chain.h has the arithmetic): one warp
 * of CTA 0 walks the positions in order, one per step. The options of
 * G(m) from far rare positions (r >= near) only need values at least near
 * steps old, so producer CTAs (every other CTA, one 32-position batch at a
 * time) turn them into Z(m), the 6 smallest common values they leave free,
 * well before the chain gets there. A loader warp copies Z into shared
 * memory; helper warps (one step each in turn) drop what the rare
 * positions 4 <= r < near hit and keep 3 survivors; the chain warp drops
 * what lags 2 and 3 hit and picks the first survivor other than G(m-1).
 * Hand-offs carry their own tags (no fences): a ring entry is the value
 * with its position's low 16 bits, a Z record has a valid bit and the
 * chunk's unwritten values are 0xffff, a helper's record its position.
 * Measured: see bench/officers.md.
 *
 * Exact kernel: one warp per position. It recomputes the rare part of the
 * options (so it checks the candidate independently: a candidate that is not
 * the smallest unmarked common value is flagged), then scans pairs a = lane,
 * lane + 32, ... until every rare value below the candidate is hit. Flags go
 * to the host, which decides those positions on the CPU.
 */
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_check.h"
#include "gerr.h"
#include "officers.h"
#include "officers_chain.h"
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
	unsigned slow, waits;   /* chain kernel */
	unsigned long long cycles; /* the chain warp's clock */
	unsigned long long cyc_rec, cyc_pick; /* of which records, picks */
};

/* Chain kernel geometry. */
#define CH_RING_BITS 15
#define CH_RING (1u << CH_RING_BITS)  /* values the chain CTA keeps */
#define CH_RMASK (CH_RING - 1)
#define CH_ZR 1024u                   /* Z records in shared memory */
#define CH_REC 64u                    /* helper records */
#define CH_THREADS 512
#define CH_PW (CH_THREADS / 32)       /* producer warps */
#define CH_UNR 8                      /* producer loads in flight */
#define CH_NEAR 256u
#define CH_HELPERS 4u
#define CH_MAX_HELPERS (CH_THREADS / 32 - 2)
#define CH_BATCH 8u                   /* chain steps without a branch */

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
	unsigned chunk;         /* extend: positions per chunk */
	int kernel;             /* OFFICERS_KERNEL_* */
	unsigned near, helpers, producers, batch;
	unsigned long long *d_zrec; /* chain: Z records of a chunk */
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

/* ---- chain kernel ------------------------------------------------------ */

static __device__ __forceinline__ unsigned ld_gpu_u16(const uint16_t *p)
{
	unsigned short v;
	asm volatile("ld.relaxed.gpu.global.u16 %0, [%1];" : "=h"(v) : "l"(p));
	return v;
}

static __device__ __forceinline__ unsigned long long
ld_gpu_u64(const unsigned long long *p)
{
	unsigned long long v;
	asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p));
	return v;
}

static __device__ __forceinline__ void st_gpu_u64(unsigned long long *p,
						  unsigned long long v)
{
	asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v)
		     : "memory");
}

/* Producer CTA: Z of its 32-position batches (CTA b takes batches b - 1,
 * b - 1 + producers, ...). Warp w takes every 16th far rare position from
 * the farthest down, so it waits (on the chunk's 0xffff) only at the end;
 * lane = position; options into a per-warp mask, then OR-ed and scanned. */
static __device__ void chain_producer(const uint16_t *buf, unsigned n0,
				      unsigned n1, unsigned nrare,
				      unsigned jn, unsigned long long *zrec,
				      uint32_t *sh)
{
	uint32_t *smask = sh, *comb = sh + CH_PW * MW * 32;
	const unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	const unsigned np = gridDim.x - 1;
	uint32_t *col = smask + w * MW * 32 + lane;

	for (unsigned i = threadIdx.x; i < CH_PW * MW * 32; i += blockDim.x)
		smask[i] = 0;
	__syncthreads();
	for (unsigned s = n0 + (blockIdx.x - 1) * 32; s < n1; s += np * 32) {
		const uint16_t *hi = buf + (s + lane - 1);
		int j = (int)nrare - 1 - (int)w;

		for (; j - (CH_UNR - 1) * CH_PW >= (int)jn;
		     j -= CH_UNR * CH_PW) {
			unsigned v[CH_UNR];
			int bad = 0;
#pragma unroll
			for (int k = 0; k < CH_UNR; k++) {
				v[k] = ld_gpu_u16(hi - c_rpos[j - k * CH_PW]);
				bad |= v[k] == 0xffffu;
			}
			if (bad) {
#pragma unroll
				for (int k = 0; k < CH_UNR; k++)
					while (v[k] == 0xffffu) {
						__nanosleep(32);
						v[k] = ld_gpu_u16(
							hi - c_rpos[j - k * CH_PW]);
					}
			}
#pragma unroll
			for (int k = 0; k < CH_UNR; k++) {
				unsigned o = (c_rval[j - k * CH_PW] ^ v[k]) & 511u;
				atomicOr(&col[(o >> 5) * 32], 1u << (o & 31));
			}
		}
		for (; j >= (int)jn; j -= CH_PW) {
			unsigned v = ld_gpu_u16(hi - c_rpos[j]);
			while (v == 0xffffu) {
				__nanosleep(32);
				v = ld_gpu_u16(hi - c_rpos[j]);
			}
			unsigned o = (c_rval[j] ^ v) & 511u;
			atomicOr(&col[(o >> 5) * 32], 1u << (o & 31));
		}
		__syncthreads();
		if (w < MW) {
			uint32_t m = 0;
			for (unsigned ww = 0; ww < CH_PW; ww++) {
				m |= smask[(ww * MW + w) * 32 + lane];
				smask[(ww * MW + w) * 32 + lane] = 0;
			}
			comb[w * 32 + lane] = ~m & common32(w);
		}
		__syncthreads();
		if (w == 0 && s + lane < n1) {
			uint32_t w0 = 0, w1 = 0;
			unsigned nz = 0, last = 0;
			for (unsigned k = 0; k < MW && nz < OFF_NZ; k++) {
				uint32_t f = comb[k * 32 + lane];
				while (f && nz < OFF_NZ) {
					last = k * 32 + __ffs(f) - 1;
					off_z_put(&w0, &w1, nz++, last);
					f &= f - 1;
				}
			}
			for (unsigned i = nz; nz && i < OFF_NZ; i++)
				off_z_put(&w0, &w1, i, last);
			st_gpu_u64(zrec + (s + lane - n0),
				   (unsigned long long)(w1 | 0x80000000u) << 32 |
					   w0);
		}
	}
}

/* G(m) from every rare position (the chain warp's slow path). */
static __device__ __noinline__ unsigned chain_slow(const volatile uint32_t *ring,
						   uint32_t *smask, unsigned m,
						   unsigned nrare,
						   const uint32_t *g_rpos,
						   const uint16_t *g_rval)
{
	const unsigned lane = threadIdx.x & 31;

	for (unsigned j = lane; j < nrare; j += 32) {
		unsigned o = g_rval[j] ^
			     (ring[(m - 1 - g_rpos[j]) & CH_RMASK] & 0xffffu);
		atomicOr(&smask[(o >> 5) & (MW - 1)], 1u << (o & 31));
	}
	__syncwarp();
	uint32_t f = lane < MW ? ~smask[lane] & common32(lane) : 0;
	unsigned bal = __ballot_sync(0xffffffffu, f != 0);
	unsigned k = bal ? __ffs(bal) - 1 : 0;
	uint32_t fk = __shfl_sync(0xffffffffu, f, k);
	__syncwarp();
	if (lane < MW)
		smask[lane] = 0;
	__syncwarp();
	return bal ? k * 32 + __ffs(fk) - 1 : OFFICERS_VMAX;
}

/* The chain warp's pick for m from its record: the options of the chain's
 * rare positions come from R (R[k] = G(m-k) * OFF_REP; a rare value 1
 * flips the record instead: (G ^ 1) * OFF_REP = R ^ OFF_REP). Branch free,
 * so that the compiler interleaves consecutive steps. */
static __device__ __forceinline__ unsigned
chain_pick(unsigned long long rec, const uint32_t (&R)[14], unsigned g1,
	   unsigned g2, int *slow)
{
	uint32_t y = (uint32_t)rec & OFF_FIELDS, y1 = y ^ OFF_REP;
	/* lags 3, 5, 6, 9, 13 = rare positions 2, 4, 5, 8, 12 (values 1,
	 * 0, 1, 1, 0); lags 1 and 2 (values 0) by equality */
	uint32_t e = OFF_NH & ((y1 ^ R[3]) + OFF_ADD) &
		     ((y ^ R[5]) + OFF_ADD) & ((y1 ^ R[6]) + OFF_ADD) &
		     ((y1 ^ R[9]) + OFF_ADD) & ((y ^ R[13]) + OFF_ADD);
	return off_chain_pick((uint32_t)rec, g1, g2, e, slow);
}

static __device__ __forceinline__ void chain_push(uint32_t (&R)[14],
						  unsigned &g1, unsigned &g2,
						  unsigned g)
{
#pragma unroll
	for (int k = 13; k > 1; k--)
		R[k] = R[k - 1];
	R[1] = g * OFF_REP;
	g2 = g1;
	g1 = g;
}

/* One step with its record in hand, slow path included. */
static __device__ __forceinline__ void
chain_step(unsigned m, unsigned long long rec, uint32_t (&R)[14],
	   unsigned &g1, unsigned &g2, volatile uint32_t *ring,
	   uint32_t *smask, unsigned nrare, const uint32_t *g_rpos,
	   const uint16_t *g_rval, unsigned &slow_n)
{
	int slow;
	unsigned g = chain_pick(rec, R, g1, g2, &slow);

	if (slow) {
		g = chain_slow(ring, smask, m, nrare, g_rpos, g_rval);
		slow_n++;
	}
	ring[m & CH_RMASK] = g | m << 16;
	chain_push(R, g1, g2, g);
}

static __device__ __forceinline__ unsigned long long
chain_record(const volatile unsigned long long *rrec, unsigned m,
	     unsigned &waits)
{
	unsigned long long rec = rrec[m & (CH_REC - 1)];
	while ((unsigned)(rec >> 32) != m) {
		waits++;
		rec = rrec[m & (CH_REC - 1)];
	}
	return rec;
}

/* The chain warp: batches of B steps, their records loaded first;
 * the steps of a batch run without a branch, and a batch with a slow step
 * is redone step by step. Values go into the ring, every 32 steps into buf
 * for the producers. */
template <int B>
static __device__ void chain_walk(uint16_t *buf, unsigned n0, unsigned n1,
				  unsigned nrare, volatile uint32_t *ring,
				  const volatile unsigned long long *rrec,
				  uint32_t *smask, const uint32_t *g_rpos,
				  const uint16_t *g_rval, struct sync_block *sb)
{
	const unsigned lane = threadIdx.x & 31;
	unsigned g1 = buf[n0 - 1], g2 = buf[n0 - 2], slow_n = 0, waits = 0;
	uint32_t R[14];
	long long t0 = clock64(), cyc_rec = 0, cyc_pick = 0;

#pragma unroll
	for (int k = 0; k < 14; k++)
		R[k] = k ? buf[n0 - k] * OFF_REP : 0;
	for (unsigned s = n0; s < n1; s += 32) {
		unsigned e = s + 32 < n1 ? s + 32 : n1, m = s;
#pragma unroll 1
		for (; m + B <= e; m += B) {
			unsigned long long rec[B];
			unsigned g[B], g1_in = g1, g2_in = g2, bad = 0;
			uint32_t R_in[14];
			int any = 0;
			long long ta = clock64();
#pragma unroll
			for (int k = 0; k < B; k++) {
				rec[k] = rrec[(m + k) & (CH_REC - 1)];
				bad |= (unsigned)(rec[k] >> 32) ^ (m + k);
			}
			if (bad) {
#pragma unroll
				for (int k = 0; k < B; k++)
					rec[k] = chain_record(rrec, m + k,
							      waits);
			}
#pragma unroll
			for (int k = 0; k < 14; k++)
				R_in[k] = R[k];
			long long tb = clock64();
#pragma unroll
			for (int k = 0; k < B; k++) {
				int slow;
				g[k] = chain_pick(rec[k], R, g1, g2, &slow);
				any |= slow;
				chain_push(R, g1, g2, g[k]);
			}
			long long tc = clock64();
			cyc_rec += tb - ta;
			cyc_pick += tc - tb;
			if (any) {
#pragma unroll
				for (int k = 0; k < 14; k++)
					R[k] = R_in[k];
				g1 = g1_in;
				g2 = g2_in;
				for (int k = 0; k < B; k++)
					chain_step(m + k, rec[k], R, g1, g2,
						   ring, smask, nrare, g_rpos,
						   g_rval, slow_n);
			} else {
#pragma unroll
				for (int k = 0; k < B; k++)
					ring[(m + k) & CH_RMASK] =
						g[k] | (m + k) << 16;
			}
		}
		for (; m < e; m++)
			chain_step(m, chain_record(rrec, m, waits), R, g1, g2,
				   ring, smask, nrare, g_rpos, g_rval, slow_n);
		if (s + lane < e)
			__stcg(buf + s + lane,
			       (uint16_t)ring[(s + lane) & CH_RMASK]);
	}
	if (lane == 0) {
		sb->slow = slow_n;
		sb->waits = waits;
		sb->cycles = (unsigned long long)(clock64() - t0);
		sb->cyc_rec = (unsigned long long)cyc_rec;
		sb->cyc_pick = (unsigned long long)cyc_pick;
	}
}

/* The loader warp: Z records from global memory into the shared ring, with
 * the tag (q >> 10) & 15 in their top bits, never more than CH_ZR ahead of
 * the chain. */
static __device__ void chain_load(unsigned n0, unsigned n1,
				  const unsigned long long *zrec,
				  const volatile uint32_t *ring,
				  volatile unsigned long long *zring)
{
	const unsigned lane = threadIdx.x & 31;

	for (unsigned q0 = n0; q0 < n1; q0 += 32) {
		unsigned q = q0 + lane;
		if (q0 + 32 > n0 + CH_ZR) {
			unsigned p = q0 + 31 - CH_ZR;
			while ((ring[p & CH_RMASK] >> 16) != (p & 0xffffu))
				__nanosleep(64);
		}
		if (q < n1) {
			unsigned long long z = ld_gpu_u64(zrec + (q - n0));
			while (!(z >> 63)) {
				__nanosleep(20);
				z = ld_gpu_u64(zrec + (q - n0));
			}
			unsigned tag = (q >> 10) & 15;
			uint32_t lo = (uint32_t)z | (tag & 3) << 30;
			uint32_t hi = ((uint32_t)(z >> 32) & OFF_FIELDS) |
				      (tag >> 2) << 30;
			zring[q & (CH_ZR - 1)] = (unsigned long long)hi << 32 | lo;
		}
	}
}

/* Helper warp h of `helpers`: steps n0 + h, n0 + h + helpers, ...; lane
 * takes rare indices OFF_CHAIN_TERMS + lane + 32 t below jn. It waits with
 * a sleep between polls, so that its spinning leaves the shared memory to
 * the chain warp. */
template <int TPL>
static __device__ void chain_help(unsigned n0, unsigned n1, unsigned jn,
				  unsigned h, unsigned helpers,
				  const volatile uint32_t *ring,
				  const volatile unsigned long long *zring,
				  volatile unsigned long long *rrec)
{
	const unsigned lane = threadIdx.x & 31;
	unsigned rr[TPL], gg[TPL];

#pragma unroll
	for (int t = 0; t < TPL; t++) {
		unsigned j = OFF_CHAIN_TERMS + lane + 32 * t;
		rr[t] = j < jn ? c_rpos[j] : 0xffffffffu;
		gg[t] = j < jn ? c_rval[j] : 0;
	}
	const unsigned rmin = c_rpos[OFF_CHAIN_TERMS];
	for (unsigned m = n0 + h; m < n1; m += helpers) {
		unsigned tag = (m >> 10) & 15, pn = m - 1 - rmin;
		unsigned long long z = zring[m & (CH_ZR - 1)];
		while (((unsigned)(z >> 30) & 3) != (tag & 3) ||
		       (unsigned)(z >> 62) != tag >> 2) {
			__nanosleep(16);
			z = zring[m & (CH_ZR - 1)];
		}
		while ((ring[pn & CH_RMASK] >> 16) != (pn & 0xffffu))
			__nanosleep(16);
		uint32_t w0 = (uint32_t)z & OFF_FIELDS;
		uint32_t w1 = (uint32_t)(z >> 32) & OFF_FIELDS;
		uint32_t u = 0xffffffffu;
#pragma unroll
		for (int t = 0; t < TPL; t++) {
			if (rr[t] == 0xffffffffu)
				continue;
			unsigned p = m - 1 - rr[t];
			uint32_t v;
			do {
				v = ring[p & CH_RMASK];
			} while ((v >> 16) != (p & 0xffffu));
			u &= off_z_nothit(w0, w1, (v & 0x3ffu) ^ gg[t]);
		}
		u = __reduce_and_sync(0xffffffffu, u);
		if (lane == 0)
			rrec[m & (CH_REC - 1)] =
				(unsigned long long)m << 32 |
				off_helper_record(w0, w1, u);
	}
}

/* buf holds positions dbase + i; [n0, n1) are computed (0xffff until
 * then), the CH_RING values before n0 are exact history. CTA 0 is the
 * chain's, every other a producer. */
template <int TPL, int B>
__global__ void __launch_bounds__(CH_THREADS, 1)
chain_kernel(uint16_t *buf, unsigned n0, unsigned n1, unsigned nrare,
	     unsigned jn, unsigned helpers, unsigned long long *zrec,
	     const uint32_t *g_rpos, const uint16_t *g_rval,
	     struct sync_block *sb)
{
	extern __shared__ uint32_t sh[];

	if (blockIdx.x != 0) {
		chain_producer(buf, n0, n1, nrare, jn, zrec, sh);
		return;
	}
	volatile uint32_t *ring = sh;
	volatile unsigned long long *zring =
		(volatile unsigned long long *)(sh + CH_RING);
	volatile unsigned long long *rrec = zring + CH_ZR;
	uint32_t *smask = (uint32_t *)(sh + CH_RING + 2 * (CH_ZR + CH_REC));
	const unsigned w = threadIdx.x >> 5;

	for (unsigned i = n0 - CH_RING + threadIdx.x; i < n0; i += blockDim.x)
		ring[i & CH_RMASK] = buf[i] | i << 16;
	for (unsigned i = threadIdx.x; i < CH_ZR; i += blockDim.x) {
		/* a tag no position >= n0 expects of this entry soon */
		unsigned q = n0 - 1 - ((n0 - 1 - i) & (CH_ZR - 1));
		unsigned tag = (q >> 10) & 15;
		zring[i] = (unsigned long long)(tag >> 2) << 62 |
			   (unsigned long long)(tag & 3) << 30;
	}
	for (unsigned i = threadIdx.x; i < CH_REC; i += blockDim.x)
		rrec[i] = 0xffffffffull << 32;
	if (threadIdx.x < MW)
		smask[threadIdx.x] = 0;
	__syncthreads();
	if (w == 0)
		chain_walk<B>(buf, n0, n1, nrare, ring, rrec, smask, g_rpos,
			      g_rval, sb);
	else if (w == 1)
		chain_load(n0, n1, zrec, ring, zring);
	else if (w - 2 < helpers)
		chain_help<TPL>(n0, n1, jn, w - 2, helpers, ring, zring, rrec);
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

/* ---- host side ---------------------------------------------------------- */

#define CK(call, what) CUDA_CK("officers", call, what)

#define SHMEM_CAND (RING * 2 + (CSLICES * MW * CPOS + MW * CPOS) * 4)
#define SHMEM_CHAIN (CH_RING * 4 + (CH_ZR + CH_REC) * 8 + MW * 4)

/* The chain kernel for TPL helper terms per lane and batches of b steps. */
static const void *chain_kernel_for(int tpl, unsigned b)
{
	if (tpl == 2)
		return b == 4 ? (const void *)chain_kernel<2, 4>
			      : (const void *)chain_kernel<2, 8>;
	return b == 4 ? (const void *)chain_kernel<3, 4>
		      : (const void *)chain_kernel<3, 8>;
}
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
	cudaFree(ctx->d_zrec);
	cudaFree(ctx->d_rpos);
	cudaFree(ctx->d_rval);
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
	for (int t = 0; e == cudaSuccess && t < 2; t++)
		for (int b = 0; e == cudaSuccess && b < 2; b++)
			e = cudaFuncSetAttribute(
				chain_kernel_for(2 + t, 4 << b),
				cudaFuncAttributeMaxDynamicSharedMemorySize,
				SHMEM_CHAIN);
	if (e == cudaSuccess)
		e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
			&per_sm, cand_kernel, CTHREADS, SHMEM_CAND);
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
		ctx->chunk = OFFICERS_CUDA_CHUNK;
		ctx->kernel = OFFICERS_KERNEL_CHAIN;
		ctx->near = CH_NEAR;
		ctx->helpers = CH_HELPERS;
		ctx->producers = (unsigned)prop.multiProcessorCount - 1;
		ctx->batch = CH_BATCH;
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
		e = cudaMalloc((void **)&ctx->d_zrec,
			       (size_t)OFFICERS_CUDA_CHUNK * 8);
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
	if (ctx->kernel == OFFICERS_KERNEL_CHAIN)
		snprintf(buf, len, "%s (%d SMs, chain kernel: near %u, %u "
			 "helper warps, %u producer CTAs)", ctx->name, ctx->sms,
			 ctx->near, ctx->helpers, ctx->producers);
	else
		snprintf(buf, len, "%s (%d SMs, frontier kernel: K = %d)",
			 ctx->name, ctx->sms, ctx->nblocks * CPOS);
	return 0;
}

extern "C" int officers_cuda_set_chunk(struct officers_cuda *ctx,
				       unsigned chunk)
{
	if (!ctx || chunk > OFFICERS_CUDA_CHUNK)
		return GERR_INVAL;
	ctx->chunk = chunk ? chunk : OFFICERS_CUDA_CHUNK;
	return 0;
}

extern "C" int officers_cuda_set_kernel(struct officers_cuda *ctx,
					int kernel, unsigned near,
					unsigned helpers, unsigned producers,
					unsigned batch)
{
	if (!ctx || (kernel != OFFICERS_KERNEL_CHAIN &&
		     kernel != OFFICERS_KERNEL_FRONTIER) ||
	    (near && near < 64) || helpers > CH_MAX_HELPERS ||
	    producers > (unsigned)ctx->sms - 1 ||
	    (batch && batch != 4 && batch != 8))
		return GERR_INVAL;
	ctx->batch = batch ? batch : CH_BATCH;
	ctx->kernel = kernel;
	ctx->near = near ? near : CH_NEAR;
	ctx->helpers = helpers ? helpers : CH_HELPERS;
	ctx->producers = producers ? producers : (unsigned)ctx->sms - 1;
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

/* The rare indices the chain CTA takes (below jn), or 0 when the chain
 * kernel cannot run from s: it needs Officers' first rare positions
 * (OFF_CHAIN_POS, then none below 14), the farthest partner inside its
 * ring, and at most OFF_CHAIN_TERMS + 32 * 3 rare positions below near. */
static unsigned chain_jn(const struct officers_cuda *ctx,
			 const struct officers_seq *s)
{
	unsigned jn = 0;

	static const unsigned cpos[] = OFF_CHAIN_POS, cval[] = OFF_CHAIN_VAL;

	if (ctx->kernel != OFFICERS_KERNEL_CHAIN ||
	    s->nrare <= OFF_CHAIN_TERMS ||
	    s->rare[OFF_CHAIN_TERMS].pos < 14 ||
	    s->rare[s->nrare - 1].pos + 1 >= CH_RING ||
	    hist_of(s->n) < CH_RING)
		return 0;
	for (unsigned j = 0; j < OFF_CHAIN_TERMS; j++)
		if (s->rare[j].pos != cpos[j] || s->rare[j].val != cval[j])
			return 0;
	while (jn < s->nrare && s->rare[jn].pos < ctx->near)
		jn++;
	if (jn <= OFF_CHAIN_TERMS || jn > OFF_CHAIN_TERMS + 32 * 3 ||
	    jn >= s->nrare)
		return 0;
	return jn;
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
	unsigned nb = (unsigned)ctx->nblocks, jn = chain_jn(ctx, s);

	CK(cudaMemsetAsync(buf + hist, jn ? 0xff : 0, (size_t)len * 2,
			   ctx->stream),
	   "memset");
	CK(cudaMemsetAsync(sb, 0xff, sizeof(*sb), ctx->stream), "memset");
	CK(cudaMemsetAsync(sb, 0, 2 * sizeof(unsigned), ctx->stream),
	   "memset");
	if (jn) {
		CK(cudaMemsetAsync(ctx->d_zrec, 0, (size_t)len * 8,
				   ctx->stream),
		   "memset");
		CK(cudaMemsetAsync(&sb->rounds, 0,
				   sizeof(*sb) - offsetof(struct sync_block,
							  rounds),
				   ctx->stream),
		   "memset");
	}
	CK(cudaEventRecord(ctx->ev[0], ctx->stream), "event");
	if (jn) {
		unsigned helpers = ctx->helpers;
		unsigned long long *zrec = ctx->d_zrec;
		uint32_t *rpos = ctx->d_rpos;
		uint16_t *rval = ctx->d_rval;
		void *cargs[] = {&buf,  &n0off, &n1off, &nrare, &jn,
				 &helpers, &zrec, &rpos, &rval, &sb};
		const void *k = chain_kernel_for(
			jn <= OFF_CHAIN_TERMS + 64 ? 2 : 3, ctx->batch);
		CK(cudaLaunchCooperativeKernel(k, dim3(1 + ctx->producers),
					       dim3(CH_THREADS), cargs,
					       SHMEM_CHAIN, ctx->stream),
		   "chain candidate kernel");
	} else {
		CK(cudaLaunchCooperativeKernel((void *)cand_kernel, dim3(nb),
					       dim3(CTHREADS), args,
					       SHMEM_CAND, ctx->stream),
		   "candidate kernel");
	}
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
		if (chain_jn(ctx, s)) {
			times->slow += sb.slow;
			times->waits += sb.waits;
			times->cycles += sb.cycles;
			times->cyc_rec += sb.cyc_rec;
			times->cyc_pick += sb.cyc_pick;
		} else {
			times->rounds += sb.rounds;
		}
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
