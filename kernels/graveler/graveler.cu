/* graveler.cu - the Graveler CUDA kernel behind graveler_cuda.h.
 *
 * Mapping. One thread walks whole generator chunks (256 battles of one MWC
 * stream, see graveler.h), chunk r, r + T, r + 2T, ... of the step (T = all
 * threads), so a chunk's serial stream never crosses threads and the kernel
 * computes exactly the reference's numbers. Per battle: 15 MWC steps (one
 * 32x32->64 multiply-add each), 8 turn words (AND of two outputs), a popcount
 * reduction (two carry-save full adders, then 6 POPC), one shared-memory
 * histogram increment and one max.
 *
 * Histogram. Each thread owns a column of a [128 bins][128 threads] array
 * of 16-bit counters in shared memory (32 KB per block, 33 KB with
 * the sketch words, 6 blocks per SM), so
 * there are no atomics, laid out so that a warp's 32 increments hit 32
 * different banks whatever the counts. With 128 bins, counts >= 128
 * (probability about 1e-30 per battle) would alias bin n & 127; a chunk
 * whose max reaches 128 is replayed and those battles are moved to the
 * global histogram, so the histogram is exact regardless. A 16-bit counter
 * never wraps: the launch grid caps the chunks per thread at 255 (65280
 * battles). At the end each warp sums 32 bins over the block's threads
 * (redux.sync) and adds them to the global 64-bit histogram with one atomic
 * per bin.
 *
 * What limits it (bench/graveler.md, ncu on an H200): the FMA-heavy pipe.
 * Each MWC step is one IMAD.WIDE.U32 (4 cycles of that pipe per warp) plus
 * a copy of the carry into the next addend register pair, which ptxas
 * mostly issues as VIADD or IMAD.MOV on the same pipe; the pipe runs at
 * 78-83% busy and the ALU pipe at about 45%. Every cheaper formulation
 * tried (mul.hi, mad.cc, FP64 DFMA) costs more issue slots. The code
 * generation is fragile (rolling a cold loop once cost 4% in the hot one):
 * compare the SASS before and after any change here.
 *
 * Segment records. Each thread also sums its chunk's counts (one IADD per
 * battle, on the ALU pipe) and their sketch words (graveler.h: one shared
 * load from the block's 232-word table, which the block fills at start,
 * and one IADD per battle) and after each chunk adds the chunk's max, sum
 * and sketch to its lease segment's record with one atomicMax and two
 * atomicAdd (32-bit, per 256 battles: no global traffic per battle); the
 * host folds the step's records into acc.
 *
 * Max and first index. Each thread keeps the max of each chunk and the
 * first chunk in which its running max rose; a warp reduction and one 64-bit atomicMax per warp of
 * key = (max + 1) << 40 | (2^40 - 1 - chunk) give the global max and the
 * FIRST chunk holding it. The host replays that one chunk to find the first
 * battle (graveler_chunk_max), so the kernel spends one IMNMX per battle on
 * it.
 */
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "gerr.h"
#include "graveler.h"
#include "graveler_cuda.h"

#define BLOCK 128
#define SH_BINS 128
#define KEY_SHIFT 40
#define KEY_MASK ((1ull << KEY_SHIFT) - 1)

struct dev_out {
	unsigned long long hist[GRAVELER_BINS];
	unsigned long long key;
	/* The step's segments k0.. (a step meets at most all of them; only
	 * the ones it meets are cleared and copied back). */
	unsigned int seg_max[GRAVELER_SEGMENTS];
	unsigned int seg_sum[GRAVELER_SEGMENTS];
	unsigned int seg_sk[GRAVELER_SEGMENTS];
};

/* Where a step's chunks sit in the lease's segments. */
struct seg_map {
	uint64_t c_lease; /* first chunk of the lease */
	uint64_t nc;      /* chunks of the lease's frame */
	uint64_t nseg;    /* segments of the lease's frame */
	uint64_t k0;      /* segment of the step's first chunk */
};

struct graveler_cuda {
	int device;
	int poisoned;
	int grid; /* resident blocks */
	cudaStream_t stream;
	cudaEvent_t ev0, ev1;
	struct dev_out *d_out;
	struct dev_out *h_out; /* pinned */
	char name[256];
};

/* ---- device code ----------------------------------------------------- */

__device__ __forceinline__ uint32_t fa_sum(uint32_t a, uint32_t b, uint32_t c)
{
	return a ^ b ^ c;
}

__device__ __forceinline__ uint32_t fa_carry(uint32_t a, uint32_t b,
					     uint32_t c)
{
	return (a & b) | (a & c) | (b & c);
}

/* One battle's paralysed count: 15 MWC steps, 8 turn words, and two
 * carry-save full adders that fold six of the words into four, so 6 POPC
 * instead of 8. */
__device__ __forceinline__ unsigned battle(uint32_t &x, uint32_t &c)
{
	uint32_t o[GRAVELER_WORDS];
#pragma unroll
	for (int k = 0; k < (int)GRAVELER_WORDS; k++)
		o[k] = graveler_mwc_next(&x, &c);
	uint32_t t0 = o[0] & o[1], t1 = o[2] & o[3], t2 = o[4] & o[5];
	uint32_t t3 = o[6] & o[7], t4 = o[8] & o[9], t5 = o[10] & o[11];
	uint32_t t6 = o[12] & o[13];
	uint32_t t7 = o[14] & (o[14] >> 16) & 0x7fu;
	uint32_t s1 = fa_sum(t0, t1, t2), k1 = fa_carry(t0, t1, t2);
	uint32_t s2 = fa_sum(t3, t4, t5), k2 = fa_carry(t3, t4, t5);
	return __popc(s1) + __popc(s2) + 2 * (__popc(k1) + __popc(k2)) +
	       __popc(t6) + __popc(t7);
}

/* The same count with 8 POPC, for the replay in fix_high: with it the
 * kernel compiles to the code that was measured (bench/graveler.md). */
__device__ __forceinline__ unsigned battle_plain(uint32_t &x, uint32_t &c)
{
	uint32_t o[GRAVELER_WORDS];
#pragma unroll
	for (int k = 0; k < (int)GRAVELER_WORDS; k++)
		o[k] = graveler_mwc_next(&x, &c);
	uint32_t t0 = o[0] & o[1], t1 = o[2] & o[3], t2 = o[4] & o[5];
	uint32_t t3 = o[6] & o[7], t4 = o[8] & o[9], t5 = o[10] & o[11];
	uint32_t t6 = o[12] & o[13];
	uint32_t t7 = o[14] & (o[14] >> 16) & 0x7fu;
	return __popc(t0) + __popc(t1) + __popc(t2) + __popc(t3) +
	       __popc(t4) + __popc(t5) + __popc(t6) + __popc(t7);
}

/* Shared-memory histogram: 16-bit counters, SH_BINS per thread (32 KB per
 * block, 6 blocks per SM); thread t owns column 2 (t % 64) + t / 64, so a
 * warp's 32 lanes touch 32 different words (banks) whatever the bins. A
 * thread never counts more than GRAV16_MAX_CHUNKS * 256 < 65536 battles
 * (the launch grid guarantees it), so no counter can wrap. */
#define GRAV16_MAX_CHUNKS 255u
#define SH_HIST (SH_BINS * BLOCK * (int)sizeof(uint16_t))
/* The sketch words after the histogram (33 KB in all: still 6 blocks an
 * SM). */
#define SH_WORDS 256
#define SHMEM (SH_HIST + SH_WORDS * (int)sizeof(uint32_t))

__device__ __forceinline__ void hist_add(uint16_t *my, unsigned n)
{
	uint16_t *p = my + (n & (SH_BINS - 1)) * BLOCK;
	*p += 1;
}

/* Replay a chunk whose max reached SH_BINS: move the aliased battles from
 * the shared bin (n & 127) to the global histogram. Never taken in
 * practice; kept so the histogram is exact by construction. */
static __device__ __noinline__ void fix_high(uint32_t x, uint32_t c,
					     uint64_t base, uint64_t from,
					     uint64_t to, uint16_t *my,
					     unsigned long long *g_hist)
{
#pragma unroll 1
	for (unsigned j = 0; j < GRAVELER_CHUNK; j++) {
		uint64_t i = base + j;
		if (i >= to)
			break;
		unsigned n = battle_plain(x, c);
		if (i < from || n < SH_BINS)
			continue;
		my[(n & (SH_BINS - 1)) * BLOCK] -= 1;
		atomicAdd(&g_hist[n], 1ull);
	}
}

__device__ __forceinline__ void chunk_seed(uint64_t smix, uint64_t ch,
					   uint32_t &x, uint32_t &c)
{
	uint64_t h = mix64(smix + ch * MIX_GOLDEN);
	x = (uint32_t)h;
	c = (uint32_t)(h >> 32);
	if (c >= GRAVELER_MWC_A)
		c -= GRAVELER_MWC_A;
	if (x == 0 && c == 0)
		c = 1;
}

/* Per-thread bookkeeping after a chunk: high-count fix, the segment
 * record, and the first chunk where the thread's max rose. Chunks arrive
 * in increasing order. */
__device__ __forceinline__ void chunk_done(unsigned cm, uint32_t cs,
					   uint32_t ck,
					   uint32_t x0, uint32_t c0, uint64_t r,
					   uint64_t ch, uint64_t base,
					   uint64_t from, uint64_t to,
					   uint16_t *my,
					   unsigned long long *g_hist,
					   const seg_map &sm,
					   unsigned int *seg_max,
					   unsigned int *seg_sum,
					   unsigned int *seg_sk, int &best,
					   uint64_t &bestc)
{
	if (cm >= SH_BINS)
		fix_high(x0, c0, base, from, to, my, g_hist);
	/* k = floor(num / nc), as graveler_chunk_segment: the FP64 quotient
	 * (num <= nc * 2^20 < 2^53 for a lease <= 2^40) is within one of it,
	 * corrected exactly; cheaper than a 64-bit integer division on the
	 * busy IMAD pipe. */
	const uint64_t num = (ch - sm.c_lease + 1) * sm.nseg - 1;
	uint64_t q = (uint64_t)((double)num / (double)sm.nc);
	if (q * sm.nc > num)
		q--;
	else if ((q + 1) * sm.nc <= num)
		q++;
	const uint64_t k = q - sm.k0;
	atomicMax(&seg_max[k], cm);
	atomicAdd(&seg_sum[k], cs);
	atomicAdd(&seg_sk[k], ck);
	if ((int)cm > best) {
		best = (int)cm;
		bestc = r;
	}
}

/* One chunk, whole or clipped to [from, to): its max, its count sum in
 * cs and its sketch in ck (words: the block's table). */
__device__ __forceinline__ unsigned run_chunk(uint32_t x, uint32_t c,
					      uint64_t base, uint64_t from,
					      uint64_t to, uint16_t *my,
					      const uint32_t *words,
					      uint32_t &cs, uint32_t &ck)
{
	unsigned cm = 0;
	cs = 0;
	ck = 0;
	if (base >= from && base + GRAVELER_CHUNK <= to) {
#pragma unroll 4
		for (int j = 0; j < (int)GRAVELER_CHUNK; j++) {
			unsigned n = battle(x, c);
			hist_add(my, n);
			cm = max(cm, n);
			cs += n;
			ck += words[n];
		}
	} else {
		/* Clipped chunk (at most two per launch): kept rolled. */
#pragma unroll 1
		for (unsigned j = 0; j < GRAVELER_CHUNK; j++) {
			uint64_t i = base + j;
			if (i >= to)
				break;
			unsigned n = battle(x, c);
			if (i < from)
				continue;
			hist_add(my, n);
			cm = max(cm, n);
			cs += n;
			ck += words[n];
		}
	}
	return cm;
}

__global__ void __launch_bounds__(BLOCK)
grav_kernel(uint64_t seed, uint64_t from, uint64_t to, uint64_t c0,
	    uint64_t nchunks, seg_map sm, unsigned long long *g_hist,
	    unsigned long long *g_key, unsigned int *seg_max,
	    unsigned int *seg_sum, unsigned int *seg_sk)
{
	extern __shared__ uint32_t sh[];
	const unsigned tid = threadIdx.x;
	uint16_t *const sh16 = (uint16_t *)sh;
	uint32_t *const words = sh + SH_HIST / (int)sizeof(uint32_t);
	uint16_t *const my = sh16 + 2 * (tid % 64) + tid / 64;
	const uint64_t stride = (uint64_t)gridDim.x * BLOCK;
	const uint64_t smix = mix64(seed ^ GRAVELER_SEED_SALT);
	int best = -1;
	uint64_t bestc = 0;
	uint64_t r = (uint64_t)blockIdx.x * BLOCK + tid;

	for (int b = 0; b < SH_BINS; b++)
		my[b * BLOCK] = 0;
	/* Counts never reach SH_WORDS (231 at most). */
	for (unsigned b = tid; b < SH_WORDS; b += BLOCK)
		words[b] = b < GRAVELER_BINS ? graveler_sketch_word(b) : 0;
	__syncthreads();

	for (; r < nchunks; r += stride) {
		const uint64_t base = (c0 + r) * GRAVELER_CHUNK;
		uint32_t x, c;
		chunk_seed(smix, c0 + r, x, c);
		uint32_t cs, ck;
		unsigned cm = run_chunk(x, c, base, from, to, my, words, cs,
					ck);
		uint32_t x0, cc0;
		chunk_seed(smix, c0 + r, x0, cc0);
		chunk_done(cm, cs, ck, x0, cc0, r, c0 + r, base, from, to, my,
			   g_hist, sm, seg_max, seg_sum, seg_sk, best, bestc);
	}

	unsigned long long key =
		best < 0 ? 0ull
			 : ((unsigned long long)(best + 1) << KEY_SHIFT) |
				   (KEY_MASK - bestc);
	for (int off = 16; off > 0; off >>= 1) {
		unsigned long long o = __shfl_xor_sync(0xffffffffu, key, off);
		key = o > key ? o : key;
	}
	if ((tid & 31) == 0 && key)
		atomicMax(g_key, key);

	__syncthreads();
	const unsigned lane = tid & 31, warp = tid >> 5;
	for (unsigned b = warp; b < (unsigned)SH_BINS; b += BLOCK / 32) {
		const uint16_t *row = sh16 + b * BLOCK;
		uint32_t s = 0;
#pragma unroll
		for (unsigned t = 0; t < BLOCK; t += 32)
			s += row[t + lane];
		s = __reduce_add_sync(0xffffffffu, s);
		if (lane == 0 && s)
			atomicAdd(&g_hist[b], (unsigned long long)s);
	}
}

/* ---- host side ---------------------------------------------------------- */

#define CK(call, what) CUDA_CK("graveler", call, what)

CUDA_DEVICE_COUNT(graveler)

extern "C" int graveler_cuda_open(int index, struct graveler_cuda **ret,
				  char *err, size_t errlen)
{
	struct graveler_cuda *ctx = NULL;
	cudaDeviceProp prop;
	int per_sm = 0;
	int rc = cuda_ctx_new("graveler", index, &ctx, err, errlen);

	if (rc)
		return rc;
	cudaError_t e = cuda_ctx_stream(ctx, &prop);
	if (e == cudaSuccess)
		e = cudaFuncSetAttribute(grav_kernel,
					 cudaFuncAttributeMaxDynamicSharedMemorySize,
					 SHMEM);
	if (e == cudaSuccess)
		e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
			&per_sm, grav_kernel, BLOCK, SHMEM);
	if (e == cudaSuccess)
		ctx->grid = (per_sm > 0 ? per_sm : 1) * prop.multiProcessorCount;
	if (e == cudaSuccess)
		e = cudaMalloc((void **)&ctx->d_out, sizeof(struct dev_out));
	if (e == cudaSuccess)
		e = cudaMallocHost((void **)&ctx->h_out, sizeof(struct dev_out));
	if (e != cudaSuccess) {
		cuda_fail(ctx ? &ctx->poisoned : NULL, e, "graveler", "open", err, errlen);
		graveler_cuda_close(ctx);
		return GERR_DEVICE;
	}
	snprintf(ctx->name, sizeof(ctx->name), "%s", prop.name);
	*ret = ctx;
	return 0;
}

extern "C" void graveler_cuda_close(struct graveler_cuda *ctx)
{
	if (!ctx)
		return;
	cudaSetDevice(ctx->device);
	if (ctx->h_out)
		cudaFreeHost(ctx->h_out);
	if (ctx->d_out)
		cudaFree(ctx->d_out);
	cuda_ctx_free(ctx);
}

extern "C" int graveler_cuda_device_name(struct graveler_cuda *ctx, char *buf,
					 size_t len)
{
	if (!ctx || !buf || len == 0)
		return GERR_INVAL;
	snprintf(buf, len, "%s", ctx->name);
	return 0;
}

extern "C" int graveler_cuda_step(struct graveler_cuda *ctx,
				  struct graveler_acc *acc, uint64_t to,
				  float *ret_kernel_ms, char *err,
				  size_t errlen)
{
	uint64_t from, c0, nchunks;
	struct dev_out *o;
	float ms = 0;

	if (!ctx || !acc)
		return GERR_INVAL;
	if (ctx->poisoned) {
		snprintf(err, errlen, "graveler cuda: context poisoned by an "
			 "earlier device error");
		return GERR_DEVICE;
	}
	from = acc->next;
	if (to <= from || to > acc->end || to - from > GRAVELER_CUDA_MAX_STEP ||
	    (to != acc->end && to % GRAVELER_CHUNK != 0)) {
		snprintf(err, errlen, "graveler cuda: bad step [%llu, %llu)",
			 (unsigned long long)from, (unsigned long long)to);
		return GERR_INVAL;
	}
	c0 = from / GRAVELER_CHUNK;
	nchunks = (to - 1) / GRAVELER_CHUNK - c0 + 1;

	seg_map sm;
	sm.c_lease = acc->begin / GRAVELER_CHUNK;
	/* The segments of the lease's frame (graveler.h, "Frames"). */
	sm.nc = (acc->frame - 1) / GRAVELER_CHUNK - sm.c_lease + 1;
	sm.nseg = graveler_nsegments(acc->begin, acc->frame);
	sm.k0 = graveler_chunk_segment(acc->begin, acc->frame, c0);
	const uint64_t nk = graveler_chunk_segment(acc->begin, acc->frame,
						   c0 + nchunks - 1) - sm.k0 + 1;
	const size_t head = offsetof(struct dev_out, seg_max);
	struct dev_out *d = ctx->d_out;
	o = ctx->h_out;

	CK(cudaSetDevice(ctx->device), "set device");
	CK(cudaMemsetAsync(d, 0, head, ctx->stream), "memset");
	CK(cudaMemsetAsync(d->seg_max, 0, nk * 4, ctx->stream), "memset");
	CK(cudaMemsetAsync(d->seg_sum, 0, nk * 4, ctx->stream), "memset");
	CK(cudaMemsetAsync(d->seg_sk, 0, nk * 4, ctx->stream), "memset");
	CK(cudaEventRecord(ctx->ev0, ctx->stream), "event");
	uint64_t grid = (uint64_t)ctx->grid;
	/* 16-bit counters: no thread may take more than GRAV16_MAX_CHUNKS
	 * chunks (at most 2^24 / (255 * 128) = 514 blocks for a full step). */
	uint64_t need = (nchunks + GRAV16_MAX_CHUNKS * BLOCK - 1) /
			(GRAV16_MAX_CHUNKS * BLOCK);
	if (grid < need)
		grid = need;
	grav_kernel<<<(unsigned)grid, BLOCK, SHMEM, ctx->stream>>>(
		acc->seed, from, to, c0, nchunks, sm, d->hist, &d->key,
		d->seg_max, d->seg_sum, d->seg_sk);
	CK(cudaGetLastError(), "kernel launch");
	CK(cudaEventRecord(ctx->ev1, ctx->stream), "event");
	CK(cudaMemcpyAsync(o, d, head, cudaMemcpyDeviceToHost, ctx->stream),
	   "copy back");
	CK(cudaMemcpyAsync(o->seg_max, d->seg_max, nk * 4,
			   cudaMemcpyDeviceToHost, ctx->stream), "copy back");
	CK(cudaMemcpyAsync(o->seg_sum, d->seg_sum, nk * 4,
			   cudaMemcpyDeviceToHost, ctx->stream), "copy back");
	CK(cudaMemcpyAsync(o->seg_sk, d->seg_sk, nk * 4,
			   cudaMemcpyDeviceToHost, ctx->stream), "copy back");
	CK(cudaStreamSynchronize(ctx->stream), "kernel");
	CK(cudaEventElapsedTime(&ms, ctx->ev0, ctx->ev1), "event time");

	/* Check the kernel's output before folding it in: totals, max, and
	 * the records against the histogram. */
	uint64_t total = 0, hsum = 0;
	uint32_t rsum = 0, rmax = 0, rsk = 0;
	int top = -1;
	for (unsigned b = 0; b < GRAVELER_BINS; b++) {
		total += o->hist[b];
		hsum += b * o->hist[b];
		if (o->hist[b])
			top = (int)b;
	}
	for (uint64_t i = 0; i < nk; i++) {
		rsum += o->seg_sum[i];
		rsk += o->seg_sk[i];
		if (o->seg_max[i] > rmax)
			rmax = o->seg_max[i];
	}
	uint64_t key = o->key;
	int kmax = (int)(key >> KEY_SHIFT) - 1;
	uint64_t kch = c0 + (KEY_MASK - (key & KEY_MASK));
	if (total != to - from || key == 0 || kmax != top ||
	    kch >= c0 + nchunks || (int)rmax != kmax ||
	    rsum != (uint32_t)hsum || rsk != graveler_hist_sketch((const uint64_t *)o->hist)) {
		ctx->poisoned = 1;
		snprintf(err, errlen, "graveler cuda: inconsistent kernel "
			 "output (total %llu of %llu, max %d, top bin %d, "
			 "segment max %u)",
			 (unsigned long long)total,
			 (unsigned long long)(to - from), kmax, top, rmax);
		return GERR_DEVICE;
	}
	uint64_t first;
	unsigned m = graveler_chunk_max(acc->seed, kch, from, to, &first);
	if ((int)m != kmax) {
		ctx->poisoned = 1;
		snprintf(err, errlen, "graveler cuda: kernel max %d but chunk "
			 "%llu replays to %u", kmax, (unsigned long long)kch, m);
		return GERR_DEVICE;
	}
	for (unsigned b = 0; b < GRAVELER_BINS; b++)
		acc->hist[b] += o->hist[b];
	graveler_acc_take_max(acc, m, first);
	for (uint64_t i = 0; i < nk; i++) {
		uint64_t k = sm.k0 + i;
		if (o->seg_max[i] > acc->seg_max[k])
			acc->seg_max[k] = (uint8_t)o->seg_max[i];
		acc->seg_sum[k] += o->seg_sum[i];
		acc->seg_sk[k] += o->seg_sk[i];
	}
	acc->next = to;
	if (ret_kernel_ms)
		*ret_kernel_ms = ms;
	return 0;
}
