/* officers_exact.cu - the Officers exact kernel (see officers_cuda.h).
 *
 * Exact kernel: one warp per position. It recomputes the rare part of the
 * options (so it checks the candidate independently: a candidate that is not
 * the smallest unmarked common value is flagged), then scans pairs a = lane,
 * lane + 32, ... until every rare value below the candidate is hit. Flags go
 * to the host, which decides those positions on the CPU.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "officers.h"
#include "officers_gpu.h"

/* The exact scan over pairs a in [a_lo, a_hi] (a_hi < 2^32 - 64): value
 * lo[a] ^ hi[-a], two pairs per lane per step and one vote per 64 pairs
 * (the vote and the loop, not the loads, were most of the kernel's
 * instructions). A hit clears its bit in needw (atomicAnd tells the first
 * of equal hits) and its byte; returns 1 once *missing reaches 0. Indices
 * past a_hi are clamped to it: a repeated pair hits nothing new. */
static __device__ __forceinline__ int scan_pairs(const uint16_t *lo,
						 const uint16_t *hi,
						 unsigned a_lo, unsigned a_hi,
						 uint8_t *needb,
						 uint32_t *needw,
						 unsigned *missing)
{
	const unsigned lane = threadIdx.x & 31;

	for (unsigned a0 = a_lo; a0 <= a_hi; a0 += 64) {
		unsigned a1 = min(a0 + lane, a_hi), a2 = min(a0 + 32 + lane, a_hi);
		unsigned o1 = lo[a1] ^ hi[-(int)a1], o2 = lo[a2] ^ hi[-(int)a2];
		unsigned h1 = needb[o1], h2 = needb[o2];

		if (!__any_sync(0xffffffffu, h1 | h2))
			continue;
		unsigned got1 = 0, got2 = 0;
		if (h1)
			got1 = atomicAnd(&needw[o1 >> 5], ~(1u << (o1 & 31))) &
			       (1u << (o1 & 31));
		if (h2)
			got2 = atomicAnd(&needw[o2 >> 5], ~(1u << (o2 & 31))) &
			       (1u << (o2 & 31));
		if (h1)
			needb[o1] = 0;
		if (h2)
			needb[o2] = 0;
		*missing -= __popc(__ballot_sync(0xffffffffu, got1 != 0)) +
			    __popc(__ballot_sync(0xffffffffu, got2 != 0));
		__syncwarp();
		if (*missing == 0)
			return 1;
	}
	return 0;
}

/* Exact kernel, a CTA per tile of EXACT_TILE consecutive positions: the
 * values every rare pair of the tile reads, buf[t0 - maxpos - 1 ..
 * t0 + tile - 1), are loaded into shared memory once per tile, so the
 * rare part's gathers hit shared memory (from global memory they were 32
 * scattered sectors per load). The scan's pairs G(a) ^ G(x - 1 - a) come
 * from shared memory too while a < EXACT_LO and x - 1 - a is in the
 * window (nearly all of them), from global memory beyond. Shared: the
 * packed rare table rt[j] = (maxpos - rpos) << 16 | rval, G(0..EXACT_LO-1),
 * the window. */
static __device__ __forceinline__ void exact_one(const uint16_t *buf, const uint16_t *lo,
				       unsigned lo_len,
				       unsigned long long dbase,
				       unsigned n0off, unsigned idx,
				       const uint32_t *rt, unsigned nrare,
				       unsigned maxpos, const uint16_t *lo_s,
				       const uint16_t *win, uint8_t *status)
{
	__shared__ uint32_t flags[EXACT_WARPS][OFFICERS_VMAX / 4];
	__shared__ uint32_t need[EXACT_WARPS][MW];
	const unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	const unsigned i = idx % EXACT_TILE; /* win[i + maxpos - rpos] */
	uint8_t *flag = (uint8_t *)flags[w];
	unsigned xo, c, missing = 0, bad = 0;
	unsigned long long x, half, amax;
	uint32_t m = 0;

	xo = n0off + idx;
	x = dbase + xo;
	c = buf[xo];
	for (unsigned k = lane; k < OFFICERS_VMAX / 4; k += 32)
		flags[w][k] = 0;
	__syncwarp();
	/* A byte flag per option, set by plain stores (lanes that mark the
	 * same option write the same byte: no atomics), then gathered into
	 * mask words by ballots. */
#pragma unroll 4
	for (unsigned j = lane; j < nrare; j += 32) {
		uint32_t e = rt[j];
		flag[(e & 0xffffu) ^ win[i + (e >> 16)]] = 1;
	}
	__syncwarp();
	for (unsigned k = 0; k < MW; k++) {
		uint32_t b = __ballot_sync(0xffffffffu, flag[32 * k + lane]);
		if (lane == k)
			m = b;
	}
	if (lane < MW) {
		uint32_t com = common32(lane), below;
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
	/* The scan tests a pair's value against a byte per needed value (the
	 * flag bytes, rewritten: needb[o] = 1 iff bit o of need), one shared
	 * load instead of a word, a shift and a compare. */
	for (unsigned k = 0; k < MW; k++)
		flag[32 * k + lane] = (uint8_t)((need[w][k] >> lane) & 1);
	__syncwarp();
	/* Pairs a <= lim read both values from shared memory: lo_s holds
	 * G(0..EXACT_LO-1) and the window holds buf[xo - 1 - a] for a <=
	 * i + maxpos; that covers nearly every scan. Later pairs (deep scans)
	 * read global memory. */
	const unsigned near = i + maxpos < EXACT_LO - 1 ? i + maxpos
						       : EXACT_LO - 1;
	const unsigned lim = amax < near ? (unsigned)amax : near;
	if (scan_pairs(lo_s, win + i + maxpos, 0, lim, flag, need[w],
		       &missing) ||
	    (amax > lim && scan_pairs(lo, buf + (xo - 1), lim + 1,
				      (unsigned)amax, flag, need[w],
				      &missing))) {
		if (lane == 0)
			status[idx] = 0;
		return;
	}
	if (lane == 0)
		status[idx] = 1;
}

/* Positions n0off + idx, idx < len; lo is the array of G(0..) the scan
 * reads for small a (buf itself when dbase == 0). Tiles go to CTAs in
 * turn, positions of a tile to warps in turn (scan depths vary a lot). */
__global__ void __launch_bounds__(EXACT_WARPS * 32)
exact_kernel(const uint16_t *buf, const uint16_t *lo, unsigned lo_len,
	     unsigned long long dbase, unsigned n0off, unsigned len,
	     unsigned nrare, unsigned maxpos, const uint32_t *g_rpos,
	     const uint16_t *g_rval, uint8_t *status)
{
	extern __shared__ uint32_t exact_shm[];
	uint32_t *rt = exact_shm;
	uint16_t *lo_s = (uint16_t *)(exact_shm + nrare);
	uint16_t *win = lo_s + EXACT_LO;
	const unsigned w = threadIdx.x >> 5;
	const unsigned ntiles = (len + EXACT_TILE - 1) / EXACT_TILE;

	for (unsigned j = threadIdx.x; j < nrare; j += blockDim.x)
		rt[j] = (maxpos - g_rpos[j]) << 16 | g_rval[j];
	for (unsigned j = threadIdx.x; j < EXACT_LO && j < lo_len; j += blockDim.x)
		lo_s[j] = lo[j];
	for (unsigned t = blockIdx.x; t < ntiles; t += gridDim.x) {
		const unsigned first = t * EXACT_TILE;
		const unsigned tl = min(EXACT_TILE, len - first);
		const uint16_t *src = buf + n0off + first - maxpos - 1;

		__syncthreads(); /* the last tile's readers are done */
		for (unsigned k = threadIdx.x; k < maxpos + tl; k += blockDim.x)
			win[k] = src[k];
		__syncthreads();
		for (unsigned i = w; i < tl; i += EXACT_WARPS)
			exact_one(buf, lo, lo_len, dbase, n0off, first + i, rt,
				  nrare, maxpos, lo_s, win, status);
	}
}

/* ---- host side ---------------------------------------------------------- */

/* Shared memory of an exact CTA: the packed rare table, G(0..EXACT_LO-1)
 * and the window of a tile (maxpos + EXACT_TILE values at most). */
#define SHMEM_EXACT_MAX \
	(OFFICERS_MAX_RARE * 4 + (EXACT_LO + RING + EXACT_TILE) * 2)

cudaError_t officers_exact_setup(void)
{
	return cudaFuncSetAttribute(exact_kernel,
				    cudaFuncAttributeMaxDynamicSharedMemorySize,
				    SHMEM_EXACT_MAX);
}

cudaError_t officers_exact_launch(int sms, cudaStream_t stream,
				  const uint16_t *buf, const uint16_t *lo,
				  unsigned lo_len, unsigned long long dbase,
				  unsigned n0off, unsigned len, unsigned nrare,
				  unsigned maxpos, const uint32_t *rpos,
				  const uint16_t *rval, uint8_t *status)
{
	size_t shm = ((size_t)nrare * 4 + (EXACT_LO + maxpos + EXACT_TILE) * 2 +
		      3) & ~3;
	unsigned tiles = (len + EXACT_TILE - 1) / EXACT_TILE, nb;
	int per_sm = 0;
	cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
		&per_sm, exact_kernel, EXACT_WARPS * 32, shm);

	if (e != cudaSuccess)
		return e;
	nb = (unsigned)(per_sm > 0 ? per_sm : 1) * (unsigned)sms;
	if (nb > tiles)
		nb = tiles;
	exact_kernel<<<nb, EXACT_WARPS * 32, shm, stream>>>(
		buf, lo, lo_len, dbase, n0off, len, nrare, maxpos,
		rpos, rval, status);
	return cudaGetLastError();
}
