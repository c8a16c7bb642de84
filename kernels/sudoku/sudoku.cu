/* sudoku.cu - the 4x3 per-gangster kernel behind sudoku_cuda.h.
 *
 * W(g) / 2 = sum over outer pairs o (59,858 per set), b2 and b3 (346 each)
 * of line1[j1] * line2[j2], where line1 = T row of band 1 (fixed by o and
 * the gangster's box 2 code c2 and b2), j1 = band 1's box 3 code in T's
 * coordinates (fixed by o, c3 and b3); line2/j2 likewise for band 2.
 *
 * Layout: a block takes a chunk of up to 32 gangsters that share c2 (one
 * "c2 group" is cut into chunks) and a slice of the outer pairs. Per outer
 * pair it builds the two permutation tables in shared memory, the 346 line
 * numbers of band 1 and band 2, and per warp the (j1, j2) pairs of its two
 * gangsters (11 per lane, packed in registers; padding points at column K,
 * which is 0 in every row). Then for each b2 the block copies the two
 * 23 KB lines into shared memory (16-byte loads) and every lane does 11
 * gathers-multiply-adds per gangster: each line load serves 32 x 346
 * multiply-adds. 16 warps x 64 registers: two blocks per SM, so one block's
 * line copy overlaps the other's multiply-adds. Sums of 11 products stay
 * below 2^60 (band counts < 2^28, checked), then fold into 128-bit
 * accumulators; a block ends (and passes each piece boundary) with a warp
 * reduction and two 64-bit atomics per gangster (carry from the returned
 * old value, so the 128-bit sum is exact in any order). A result's pieces
 * of W (sudoku_format.h) come from the same single launch: the slices
 * ignore piece boundaries, and a block whose slice crosses one flushes its
 * sums into the (gangster, piece) accumulator there (at most a few flushes
 * per block, none in the b2 loop). A launch per piece instead would add
 * a host sync per piece and, for small calls, grids of under two waves
 * of one-outer-pair blocks (6-9% slower, bench/sudoku.md). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
extern "C" {
#include "gerr.h"
}
#include "sudoku.h"
#include "sudoku_cuda.h"

#define WARPS 16
#define THREADS (WARPS * 32)
#define GPW 2
#define GPB (WARPS * GPW)
#define NB 346
#define NBL 11 /* ceil(346 / 32) */
#define KMAX 5775
#define KPAD 5776
#define TARGET_BLOCKS 8192

struct chunk {
	uint32_t g0;  /* offset in the call's gangster list */
	uint16_t n;   /* gangsters, <= GPB */
	uint16_t c2;
};

struct sudoku_cuda {
	int device, poisoned;
	cudaStream_t stream;
	cudaEvent_t ev0, ev1;
	char name[320];
	const struct sudoku_setup *S; /* loaded setup (identity) */
	uint32_t *d_T;
	uint16_t *d_masks, *d_rgs, *d_cb, *d_cd;
	uint32_t *d_pw;
	int set; /* loaded set, -1 none */
	struct sudoku_outer *d_outer;
	uint32_t nouter;
	/* per call */
	uint16_t *d_gc3;
	struct chunk *d_chunks;
	unsigned long long *d_acc; /* lo, hi per (gangster, piece) */
	uint32_t cap_g;
	size_t cap_acc;
	uint16_t *h_gc3;
	struct chunk *h_chunks;
	unsigned long long *h_acc;
};

__device__ __forceinline__ uint32_t dev_apply(const uint16_t (*masks)[SUDOKU_MAXC],
					      const uint32_t *pw,
					      const uint16_t *rgs,
					      const struct sudoku_pmap *pm,
					      uint32_t x)
{
	uint32_t a = sudoku_pmap_mask(pm, __ldg(&masks[x][0]));
	uint32_t b = sudoku_pmap_mask(pm, __ldg(&masks[x][1]));
	uint32_t c = sudoku_pmap_mask(pm, __ldg(&masks[x][2]));
	uint32_t la = a & -a, lb = b & -b, lc = c & -c;
	uint32_t ra = (la > lb) + (la > lc), rb = (lb > la) + (lb > lc),
		 rc = (lc > la) + (lc > lb);
	return __ldg(&rgs[ra * __ldg(&pw[a]) + rb * __ldg(&pw[b]) +
			  rc * __ldg(&pw[c])]);
}

/* First outer pair of piece p of n (p == n: the end), as
 * sudoku_w_pieces_cpu cuts them. */
__device__ __forceinline__ uint32_t piece_start(uint32_t nouter, uint32_t n,
						uint32_t p)
{
	return (uint32_t)((uint64_t)nouter * p / n);
}

/* The piece holding outer pair o < nouter: the last p with
 * piece_start(p) <= o (empty pieces are skipped). */
__device__ __forceinline__ uint32_t piece_of(uint32_t nouter, uint32_t n,
					     uint32_t o)
{
	return (uint32_t)(((uint64_t)n * (o + 1) - 1) / nouter);
}

/* Adds the warp's 128-bit sums of its GPW gangsters into piece p's
 * accumulators (lo, hi per (gangster, piece)) and zeroes them. Every lane
 * of the warp calls it. */
__device__ __forceinline__ void flush(unsigned long long *lo,
				      unsigned long long *hi, uint32_t lane,
				      uint32_t warp, const struct chunk &ch,
				      uint32_t npieces, uint32_t p,
				      unsigned long long *acc_out)
{
#pragma unroll
	for (int q = 0; q < GPW; q++) {
		uint32_t gi = warp * GPW + q;
		unsigned long long l = lo[q], h = hi[q];
		for (int off = 16; off; off >>= 1) {
			unsigned long long ol = __shfl_down_sync(0xffffffffu, l, off);
			unsigned long long oh = __shfl_down_sync(0xffffffffu, h, off);
			l += ol;
			h += oh + (l < ol);
		}
		if (lane == 0 && gi < ch.n) {
			unsigned long long *a = acc_out +
				2 * ((size_t)(ch.g0 + gi) * npieces + p);
			unsigned long long old = atomicAdd(a, l);
			atomicAdd(a + 1, h + (old + l < old));
		}
		lo[q] = hi[q] = 0;
	}
}

__global__ void __launch_bounds__(THREADS, 2)
w_kernel(const uint32_t *__restrict__ T, const uint16_t (*masks)[SUDOKU_MAXC],
	 const uint32_t *__restrict__ pw, const uint16_t *__restrict__ rgs,
	 const uint16_t *__restrict__ cb, const uint16_t *__restrict__ cd,
	 const struct sudoku_outer *__restrict__ outer, uint32_t nouter,
	 const struct chunk *__restrict__ chunks,
	 const uint16_t *__restrict__ gc3, uint32_t npieces,
	 unsigned long long *acc_out, uint32_t K, uint32_t Kp)
{
	__shared__ __align__(16) uint32_t line[2][KPAD];
	__shared__ struct sudoku_pmap pm[2];
	__shared__ uint16_t li[2][NB];
	const struct chunk ch = chunks[blockIdx.x];
	const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const uint32_t per = (nouter + gridDim.y - 1) / gridDim.y;
	const uint32_t o0 = blockIdx.y * per;
	const uint32_t o1 = min(nouter, o0 + per);
	unsigned long long lo[GPW], hi[GPW];
	uint32_t pk[GPW][NBL];
	uint32_t pend; /* end of the current piece (that of o - 1) */

	if (o0 >= o1)
		return;
	pend = piece_start(nouter, npieces, piece_of(nouter, npieces, o0) + 1);
#pragma unroll
	for (int q = 0; q < GPW; q++)
		lo[q] = hi[q] = 0;
	for (uint32_t o = o0; o < o1; o++) {
		const struct sudoku_outer *e = &outer[o];
		if (o == pend) {
			flush(lo, hi, lane, warp, ch, npieces,
			      piece_of(nouter, npieces, o - 1), acc_out);
			pend = piece_start(nouter, npieces,
					   piece_of(nouter, npieces, o) + 1);
		}
		__syncthreads();
		if (tid < 256) {
			/* 256 threads: table t / 64 (p1 lo, p1 hi, p2 lo, p2 hi) */
			uint32_t tb = tid >> 6, v = tid & 63, r = 0;
			const uint8_t *p = (tb < 2) ? e->p1.p : e->p2.p;
			uint32_t base = (tb & 1) ? 6 : 0;
			for (int s = 0; s < 6; s++)
				if ((v >> s & 1) && base + s < SUDOKU_MAXN)
					r |= 1u << p[base + s];
			if (tb & 1)
				pm[tb >> 1].hi[v] = (uint16_t)r;
			else
				pm[tb >> 1].lo[v] = (uint16_t)r;
		}
		__syncthreads();
		for (uint32_t b = tid; b < NB; b += THREADS) {
			li[0][b] = (uint16_t)(e->n1 * K +
				dev_apply(masks, pw, rgs, &pm[0], cb[ch.c2 * NB + b]));
			li[1][b] = (uint16_t)(e->n2 * K +
				dev_apply(masks, pw, rgs, &pm[1], cd[ch.c2 * NB + b]));
		}
#pragma unroll
		for (int q = 0; q < GPW; q++) {
			uint32_t gi = warp * GPW + q;
			uint32_t c3 = gi < ch.n ? gc3[ch.g0 + gi] : 0;
#pragma unroll
			for (int i = 0; i < NBL; i++) {
				uint32_t b = lane + 32 * i;
				if (gi < ch.n && b < NB) {
					uint32_t j1 = dev_apply(masks, pw, rgs, &pm[0], cb[c3 * NB + b]);
					uint32_t j2 = dev_apply(masks, pw, rgs, &pm[1], cd[c3 * NB + b]);
					pk[q][i] = j1 | j2 << 16;
				} else {
					pk[q][i] = K | K << 16;
				}
			}
		}
		__syncthreads();
		for (uint32_t b2 = 0; b2 < NB; b2++) {
			const uint4 *s1 = (const uint4 *)(T + (size_t)li[0][b2] * Kp);
			const uint4 *s2 = (const uint4 *)(T + (size_t)li[1][b2] * Kp);
			uint4 *d1 = (uint4 *)line[0], *d2 = (uint4 *)line[1];
			for (uint32_t i = tid; i < Kp / 4; i += THREADS) {
				d1[i] = __ldg(&s1[i]);
				d2[i] = __ldg(&s2[i]);
			}
			__syncthreads();
#pragma unroll
			for (int q = 0; q < GPW; q++) {
				unsigned long long s = 0;
#pragma unroll
				for (int i = 0; i < NBL; i++)
					s += (unsigned long long)line[0][pk[q][i] & 0xffff] *
					     line[1][pk[q][i] >> 16];
				lo[q] += s;
				hi[q] += lo[q] < s;
			}
			__syncthreads();
		}
	}
	flush(lo, hi, lane, warp, ch, npieces, piece_of(nouter, npieces, o1 - 1),
	      acc_out);
}

#define CK(call, what) CUDA_CK("sudoku", call, what)

CUDA_DEVICE_COUNT(sudoku)

extern "C" int sudoku_cuda_open(int index, struct sudoku_cuda **ret,
				char *err, size_t errlen)
{
	struct sudoku_cuda *ctx;
	cudaDeviceProp prop;
	int rc = cuda_ctx_new("sudoku", index, &ctx, err, errlen);

	if (rc)
		return rc;
	ctx->set = -1;
	cudaError_t e = cuda_ctx_stream(ctx, &prop);
	if (e != cudaSuccess) {
		snprintf(err, errlen, "sudoku cuda: open: %s",
			 cudaGetErrorString(e));
		sudoku_cuda_close(ctx);
		return GERR_DEVICE;
	}
	snprintf(ctx->name, sizeof(ctx->name), "%s (%d SMs)", prop.name,
		 prop.multiProcessorCount);
	*ret = ctx;
	return 0;
}

static void free_tables(struct sudoku_cuda *ctx)
{
	cudaFree(ctx->d_T);
	cudaFree(ctx->d_masks);
	cudaFree(ctx->d_rgs);
	cudaFree(ctx->d_cb);
	cudaFree(ctx->d_cd);
	cudaFree(ctx->d_pw);
	cudaFree(ctx->d_outer);
	ctx->d_T = NULL;
	ctx->d_masks = ctx->d_rgs = ctx->d_cb = ctx->d_cd = NULL;
	ctx->d_pw = NULL;
	ctx->d_outer = NULL;
	ctx->S = NULL;
	ctx->set = -1;
}

extern "C" void sudoku_cuda_close(struct sudoku_cuda *ctx)
{
	if (!ctx)
		return;
	cudaSetDevice(ctx->device);
	free_tables(ctx);
	cudaFree(ctx->d_gc3);
	cudaFree(ctx->d_chunks);
	cudaFree(ctx->d_acc);
	free(ctx->h_gc3);
	free(ctx->h_chunks);
	free(ctx->h_acc);
	cuda_ctx_free(ctx);
}

extern "C" int sudoku_cuda_device_name(struct sudoku_cuda *ctx, char *buf,
				       size_t len)
{
	snprintf(buf, len, "%s", ctx->name);
	return 0;
}

template <typename X>
static cudaError_t upload(X **d, const void *h, size_t bytes, cudaStream_t st)
{
	cudaError_t e = cudaMalloc((void **)d, bytes);
	if (e == cudaSuccess)
		e = cudaMemcpyAsync(*d, h, bytes, cudaMemcpyHostToDevice, st);
	return e;
}

static int load_setup(struct sudoku_cuda *ctx, const struct sudoku_setup *S,
		      char *err, size_t errlen)
{
	size_t nrgs = 1;
	if (ctx->S == S)
		return 0;
	free_tables(ctx);
	for (int i = 0; i < S->N; i++)
		nrgs *= 3;
	CK(upload(&ctx->d_T, S->T, S->Tlen * sizeof(uint32_t), ctx->stream), "T");
	CK(upload(&ctx->d_masks, S->masks, (size_t)S->K * sizeof(*S->masks), ctx->stream), "masks");
	CK(upload(&ctx->d_rgs, S->rgs2code, nrgs * sizeof(uint16_t), ctx->stream), "rgs");
	CK(upload(&ctx->d_pw, S->pw, sizeof(S->pw), ctx->stream), "pw");
	CK(upload(&ctx->d_cb, S->cb, (size_t)S->K * NB * sizeof(uint16_t), ctx->stream), "cb");
	CK(upload(&ctx->d_cd, S->cd, (size_t)S->K * NB * sizeof(uint16_t), ctx->stream), "cd");
	CK(cudaStreamSynchronize(ctx->stream), "upload");
	ctx->S = S;
	return 0;
}

static int load_set(struct sudoku_cuda *ctx, const struct sudoku_setup *S,
		    uint32_t set, char *err, size_t errlen)
{
	struct sudoku_outer *o = NULL;
	uint32_t n = 0;
	int rc;

	if (ctx->set == (int)set)
		return 0;
	cudaFree(ctx->d_outer);
	ctx->d_outer = NULL;
	ctx->set = -1;
	rc = sudoku_outer_build(S, set, &o, &n);
	if (rc) {
		snprintf(err, errlen, "sudoku cuda: outer pairs: %s", gerr_str(rc));
		return rc;
	}
	cudaError_t e = upload(&ctx->d_outer, o, (size_t)n * sizeof(*o), ctx->stream);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(ctx->stream);
	free(o);
	if (e != cudaSuccess)
		return cuda_fail(ctx ? &ctx->poisoned : NULL, e, "sudoku", "outer", err, errlen);
	ctx->nouter = n;
	ctx->set = (int)set;
	return 0;
}

/* Half sums of the call's gangsters' pieces over the loaded set's outer
 * pairs into ctx->h_acc (lo, hi per (gangster, piece)): one launch, one
 * copy back, one sync. */
static int run_pieces(struct sudoku_cuda *ctx, const struct sudoku_setup *S,
		      uint32_t ng, uint32_t nch, uint32_t npieces, float *ms,
		      char *err, size_t errlen)
{
	size_t bytes = 2 * (size_t)ng * npieces * 8;
	uint32_t n = ctx->nouter;
	float t = 0;

	CK(cudaMemsetAsync(ctx->d_acc, 0, bytes, ctx->stream), "memset");
	uint32_t slices = (TARGET_BLOCKS + nch - 1) / nch;
	if (slices > n)
		slices = n;
	if (slices > 65535)
		slices = 65535;
	if (slices < 1)
		slices = 1;
	dim3 grid(nch, slices);
	CK(cudaEventRecord(ctx->ev0, ctx->stream), "event");
	w_kernel<<<grid, THREADS, 0, ctx->stream>>>(
		ctx->d_T, (const uint16_t(*)[SUDOKU_MAXC])ctx->d_masks, ctx->d_pw,
		ctx->d_rgs, ctx->d_cb, ctx->d_cd, ctx->d_outer, n,
		ctx->d_chunks, ctx->d_gc3, npieces, ctx->d_acc, S->K, S->Kp);
	CK(cudaGetLastError(), "launch");
	CK(cudaEventRecord(ctx->ev1, ctx->stream), "event");
	CK(cudaMemcpyAsync(ctx->h_acc, ctx->d_acc, bytes,
			   cudaMemcpyDeviceToHost, ctx->stream), "copy back");
	CK(cudaStreamSynchronize(ctx->stream), "kernel");
	CK(cudaEventElapsedTime(&t, ctx->ev0, ctx->ev1), "timer");
	*ms = t;
	return 0;
}

/* Per-call buffers for ng gangsters of npieces pieces each. */
static int reserve(struct sudoku_cuda *ctx, uint32_t ng, uint32_t npieces,
		   char *err, size_t errlen)
{
	size_t nacc = (size_t)ng * npieces;

	if (ng > ctx->cap_g) {
		cudaFree(ctx->d_gc3);
		cudaFree(ctx->d_chunks);
		ctx->d_gc3 = NULL;
		ctx->d_chunks = NULL;
		free(ctx->h_gc3);
		free(ctx->h_chunks);
		ctx->cap_g = 0;
		ctx->h_gc3 = (uint16_t *)malloc(ng * sizeof(uint16_t));
		ctx->h_chunks = (struct chunk *)malloc(ng * sizeof(struct chunk));
		if (!ctx->h_gc3 || !ctx->h_chunks)
			return GERR_NOMEM;
		CK(cudaMalloc(&ctx->d_gc3, ng * sizeof(uint16_t)), "alloc");
		CK(cudaMalloc(&ctx->d_chunks, ng * sizeof(struct chunk)), "alloc");
		ctx->cap_g = ng;
	}
	if (nacc > ctx->cap_acc) {
		cudaFree(ctx->d_acc);
		ctx->d_acc = NULL;
		free(ctx->h_acc);
		ctx->cap_acc = 0;
		ctx->h_acc = (unsigned long long *)malloc(2 * nacc * 8);
		if (!ctx->h_acc)
			return GERR_NOMEM;
		CK(cudaMalloc(&ctx->d_acc, 2 * nacc * 8), "alloc");
		ctx->cap_acc = nacc;
	}
	return 0;
}

extern "C" int sudoku_cuda_w_pieces(struct sudoku_cuda *ctx,
				    const struct sudoku_setup *S,
				    uint32_t from, uint32_t to,
				    uint32_t npieces, uint64_t (*pieces)[2],
				    uint64_t (*w)[2], float *ret_kernel_ms,
				    char *err, size_t errlen)
{
	uint32_t ng = to - from, nch = 0, R1, set;
	float ms = 0;
	int rc;

	if (ctx->poisoned) {
		snprintf(err, errlen, "sudoku cuda: context poisoned by an earlier error");
		return GERR_DEVICE;
	}
	if (S->R != 4 || S->C != 3 || !S->T || S->K != KMAX || S->Kp != KPAD ||
	    S->ncompat != NB || from >= to || to > S->ngang || npieces < 1 ||
	    (npieces > 1 && !pieces)) {
		snprintf(err, errlen, "sudoku cuda: only 4x3 with tables, "
			 "and a non-empty range");
		return GERR_INVAL;
	}
	if (S->max_cnt >= (1u << 28)) {
		snprintf(err, errlen, "sudoku cuda: band counts need %u < 2^28",
			 S->max_cnt);
		return GERR_UNSUPPORTED;
	}
	set = sudoku_set_of(S, from);
	if (sudoku_set_of(S, to - 1) != set) {
		snprintf(err, errlen, "sudoku cuda: range crosses a set");
		return GERR_INVAL;
	}
	CK(cudaSetDevice(ctx->device), "set device");
	rc = load_setup(ctx, S, err, errlen);
	if (rc == 0)
		rc = load_set(ctx, S, set, err, errlen);
	if (rc == 0)
		rc = reserve(ctx, ng, npieces, err, errlen);
	if (rc)
		return rc;
	R1 = (uint32_t)S->R - 1;
	for (uint32_t i = 0; i < ng;) {
		uint16_t c2 = S->gang_tuple[(size_t)(from + i) * R1 + 1];
		uint32_t j = i;
		while (j < ng && j - i < GPB &&
		       S->gang_tuple[(size_t)(from + j) * R1 + 1] == c2)
			j++;
		ctx->h_chunks[nch].g0 = i;
		ctx->h_chunks[nch].n = (uint16_t)(j - i);
		ctx->h_chunks[nch].c2 = c2;
		nch++;
		i = j;
	}
	for (uint32_t i = 0; i < ng; i++)
		ctx->h_gc3[i] = S->gang_tuple[(size_t)(from + i) * R1 + 2];
	CK(cudaMemcpyAsync(ctx->d_gc3, ctx->h_gc3, ng * sizeof(uint16_t),
			   cudaMemcpyHostToDevice, ctx->stream), "copy");
	CK(cudaMemcpyAsync(ctx->d_chunks, ctx->h_chunks, nch * sizeof(struct chunk),
			   cudaMemcpyHostToDevice, ctx->stream), "copy");
	rc = run_pieces(ctx, S, ng, nch, npieces, &ms, err, errlen);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < ng; i++) {
		w[i][0] = w[i][1] = 0;
		for (uint32_t p = 0; p < npieces; p++) {
			size_t k = (size_t)i * npieces + p;
			unsigned long long l = ctx->h_acc[2 * k], h = ctx->h_acc[2 * k + 1];
			uint64_t x0, x1;
			/* a piece = 2 * its half sum (band 1 <-> band 2) */
			if (h >> 63) {
				snprintf(err, errlen, "sudoku cuda: W overflows 128 bits");
				return GERR_INVAL;
			}
			x0 = l << 1;
			x1 = h << 1 | l >> 63;
			if (pieces) {
				pieces[k][0] = x0;
				pieces[k][1] = x1;
			}
			w[i][0] += x0;
			w[i][1] += x1 + (w[i][0] < x0);
		}
	}
	if (ret_kernel_ms)
		*ret_kernel_ms = ms;
	return 0;
}

extern "C" int sudoku_cuda_w(struct sudoku_cuda *ctx,
			     const struct sudoku_setup *S, uint32_t from,
			     uint32_t to, uint64_t (*w)[2],
			     float *ret_kernel_ms, char *err, size_t errlen)
{
	return sudoku_cuda_w_pieces(ctx, S, from, to, 1, NULL, w, ret_kernel_ms,
				    err, errlen);
}
