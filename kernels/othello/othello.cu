/* othello.cu - the Othello CUDA batch solver behind othello_cuda.h.
 *
 * Mapping. One thread searches one position at a time; threads are
 * persistent: when a thread finishes a position it takes the next index
 * from a global counter, so a warp is not held back by its slowest
 * position more than once per position, and the grid is exactly as many
 * blocks as fit on the device at once.
 *
 * The search is othello_flat.h's: oth_search_shallow (othello_search.h,
 * the CPU reference) cut into steps of one flip each (or one move
 * generation at a node of OTH_FF_MIN or more empties). Every live lane
 * takes one step per round, so the flip, most of a step, runs with the
 * whole warp rather than with the few lanes that happen to be at the same
 * kind of node. A lane's top frame is in registers, the frames below it
 * in local memory (at most OTHELLO_CUDA_MAX_EMPTIES + 1 frames), the few
 * that a shallow search touches in L1.
 *
 * Fastest-first keys (nodes of OTH_FF_MIN or more empties) are computed by
 * the whole warp, one move per thread (oth_warp_keys): computed by a lane
 * alone they held its 31 neighbours. A sort costs the warp about as much
 * for one waiting lane as for several, so lanes wait in op KEYS until
 * OTH_KMIN of them do, or one has waited OTH_KWAIT rounds, or every live
 * lane waits.
 *
 * Random jobs generate their positions on the device, by their own kernel
 * before the search (oth_gen_kernel, one thread per position), so a
 * --random lease moves no positions over PCIe, only 2 bytes back per
 * position; a playout inside the search would hold its lane's warp.
 * bench/othello.md has the measurements behind each of these choices.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "gerr.h"
#include "othello.h"
#include "othello_cuda.h"

#define OTH_STACK (OTHELLO_CUDA_MAX_EMPTIES + 1)
#include "othello_flat.h"

#define BLOCK 128
/* Resident blocks per SM the register allocation must allow (72
 * registers); 7 measured faster than 5 or 6. */
#define MINB 7
/* Returns and picks per step (oth_flat_after's parts). */
#define PARTS 2
/* Keys are sorted once OTH_KMIN lanes wait, or one has waited more than
 * OTH_KWAIT rounds (or every live lane waits). */
#define OTH_KMIN 6
#define OTH_KWAIT 32

struct othello_cuda {
	int device;
	int poisoned;
	int sms, per_sm;      /* multiprocessors, resident blocks per SM */
	cudaStream_t stream;
	cudaEvent_t ev0, ev1;
	uint64_t *d_P, *d_O;
	uint8_t *d_out;      /* 2 bytes per position: score + 64, move */
	unsigned long long *d_ctr; /* [0] next index, [1] nodes */
	uint64_t *h_P, *h_O; /* pinned */
	uint8_t *h_out;
	unsigned long long *h_ctr;
	char name[256];
};

/* Up to OTH_WK_CAP moves of a warp's lanes in op KEYS at once, in
 * shared memory: each move's square and lane, its key, and the squares in
 * each lane's order. A lane has at most OTHELLO_CUDA_MAX_EMPTIES moves, so
 * the first waiting lane always fits. */
#define OTH_WK_CAP 64
struct oth_wk {
	uint16_t key[OTH_WK_CAP];
	uint8_t sq[OTH_WK_CAP], lane[OTH_WK_CAP], sorted[OTH_WK_CAP];
};

/* oth_flat_keys for the lanes of `waiting` (a ballot of op KEYS) at once:
 * the lanes' moves are laid out one after the other (an exclusive prefix
 * sum of their counts), each thread computes one move's key from its
 * lane's top frame (shuffled over), and finds its rank among that lane's
 * keys; each lane then copies its sorted squares to its row and resumes.
 * Called by every lane of the warp. */
__device__ __forceinline__ void oth_warp_keys(struct oth_flat *F,
					      struct oth_fstack *S,
					      unsigned waiting,
					      struct oth_wk *w)
{
	const unsigned all = 0xffffffffu;
	const int me = threadIdx.x & 31;
	uint64_t P = 0, O = 0, m = 0;

	if ((waiting >> me) & 1) {
		const struct oth_fframe *f = &F->top;
		P = f->P;
		O = f->O;
		m = f->moves;
	}
	const int count = oth_popcount(m);
	while (waiting) {
		int c = (waiting >> me) & 1 ? count : 0, end = c;
		for (int d = 1; d < 32; d <<= 1) {
			int t = __shfl_up_sync(all, end, d);
			if (me >= d)
				end += t;
		}
		const int base = end - c;
		const bool in = c && end <= OTH_WK_CAP;
		const unsigned batch = __ballot_sync(all, in);
		const int total = __shfl_sync(all, end, 31 - __clz(batch));
		if (in) {
			int r = base;
			for (uint64_t mm = m; mm; mm &= mm - 1, r++) {
				w->sq[r] = (uint8_t)oth_ctz(mm);
				w->lane[r] = (uint8_t)me;
			}
		}
		__syncwarp();
		for (int j = me; j - me < total; j += 32) {
			int owner = j < total ? w->lane[j] : 0;
			uint64_t oP = __shfl_sync(all, P, owner);
			uint64_t oO = __shfl_sync(all, O, owner);
			if (j < total)
				w->key[j] = (uint16_t)oth_ff_key(oP, oO, w->sq[j]);
		}
		__syncwarp();
		for (int j = me; j - me < total; j += 32) {
			int owner = j < total ? w->lane[j] : 0;
			int ob = __shfl_sync(all, base, owner);
			int on = __shfl_sync(all, c, owner);
			if (j < total) {
				unsigned k = w->key[j], rank = 0;
				for (int t = ob; t < ob + on; t++)
					rank += w->key[t] < k;
				w->sorted[ob + rank] = w->sq[j];
			}
		}
		__syncwarp();
		if (in) {
			const struct oth_fframe *f = &F->top;
			uint16_t *row = OTH_FF_ROW(S, f);
			for (int r = 0; r < c; r++)
				row[r] = w->sorted[base + r];
			oth_flat_resume(F, S);
		}
		__syncwarp();
		waiting &= ~batch;
	}
}

/* The search: each round every live lane takes one step (a flip, or a
 * move generation), then the lanes waiting for keys get them from the
 * whole warp. Every lane of a warp stays in the loop until all are idle,
 * for the ballots' full masks. */
__global__ void __launch_bounds__(BLOCK, MINB)
oth_flat_kernel(const uint64_t *__restrict__ gP,
		const uint64_t *__restrict__ gO, unsigned n,
		uint8_t *__restrict__ out, unsigned long long *ctr)
{
	const unsigned all = 0xffffffffu;
	__shared__ struct oth_wk wk[BLOCK / 32];
	struct oth_flat F;
	struct oth_fstack S;
	uint64_t nodes = 0;
	unsigned i = 0;
	int kw = 0; /* rounds waited for keys */
	bool have = false;

	F.n = 0;
	F.op = OTH_FLAT_DONE;
	for (;;) {
		if (F.op == OTH_FLAT_DONE) {
			if (have) {
				out[2 * i] = (uint8_t)(F.v + 64);
				out[2 * i + 1] = (uint8_t)F.mv;
				nodes += F.n;
				F.n = 0;
			}
			i = atomicAdd((unsigned *)ctr, 1u);
			have = i < n;
			if (have) {
				oth_flat_start(&F, gP[i], gO[i]);
			} else {
				F.op = OTH_FLAT_IDLE;
			}
		}
		bool live = F.op != OTH_FLAT_IDLE;
		if (!__ballot_sync(all, live))
			break;
		if (live && F.op != OTH_FLAT_KEYS)
			oth_flat_after(&F, &S, oth_flat_compute(&F), PARTS);
		unsigned km = __ballot_sync(all, F.op == OTH_FLAT_KEYS);
		kw = F.op == OTH_FLAT_KEYS ? kw + 1 : 0;
		if (km && __popc(km) < OTH_KMIN &&
		    km != __ballot_sync(all, live) &&
		    !__ballot_sync(all, kw > OTH_KWAIT))
			km = 0; /* wait for more lanes (km is warp-uniform) */
		if (km)
			oth_warp_keys(&F, &S, km, &wk[threadIdx.x >> 5]);
	}
	/* One atomic per warp for the node count. */
	for (int o = 16; o; o >>= 1)
		nodes += __shfl_down_sync(all, nodes, o);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(ctr + 1, (unsigned long long)nodes);
}

/* Positions [begin, begin + n) of a --random job, one thread each, into
 * P and O for the search kernels. Apart from the search: generated inside
 * it, a lane's playout of some 50 moves held its whole warp. */
__global__ void __launch_bounds__(256)
oth_gen_kernel(uint64_t seed, int empties, uint64_t begin, unsigned n,
	       uint64_t *__restrict__ P, uint64_t *__restrict__ O)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	int black;

	if (i < n)
		oth_generate(seed, begin + i, empties, &P[i], &O[i], &black);
}

/* ---- host side -------------------------------------------------------- */

#define CK(call, what) CUDA_CK("othello", call, what)

CUDA_DEVICE_COUNT(othello)

extern "C" void othello_cuda_close(struct othello_cuda *ctx)
{
	if (!ctx)
		return;
	cudaSetDevice(ctx->device);
	cudaFree(ctx->d_P);
	cudaFree(ctx->d_O);
	cudaFree(ctx->d_out);
	cudaFree(ctx->d_ctr);
	cudaFreeHost(ctx->h_P);
	cudaFreeHost(ctx->h_O);
	cudaFreeHost(ctx->h_out);
	cudaFreeHost(ctx->h_ctr);
	cuda_ctx_free(ctx);
}

static int open_ctx(struct othello_cuda *ctx, char *err, size_t errlen)
{
	const size_t n = OTHELLO_CUDA_MAX_BATCH;
	cudaDeviceProp prop;
	int per_sm = 0;

	CK(cuda_ctx_stream(ctx, &prop), "device, stream and events");
	snprintf(ctx->name, sizeof(ctx->name), "%s", prop.name);
	CK(cudaMalloc(&ctx->d_P, n * 8), "device memory");
	CK(cudaMalloc(&ctx->d_O, n * 8), "device memory");
	CK(cudaMalloc(&ctx->d_out, n * 2), "device memory");
	CK(cudaMalloc(&ctx->d_ctr, 2 * sizeof(unsigned long long)),
	   "device memory");
	CK(cudaMallocHost(&ctx->h_P, n * 8), "pinned memory");
	CK(cudaMallocHost(&ctx->h_O, n * 8), "pinned memory");
	CK(cudaMallocHost(&ctx->h_out, n * 2), "pinned memory");
	CK(cudaMallocHost(&ctx->h_ctr, 2 * sizeof(unsigned long long)),
	   "pinned memory");
	/* Local memory is the stack: prefer L1 over shared memory, leaving
	 * the keys' shared memory for as many blocks as the registers allow;
	 * a carveout of 0 held the kernel to 3. */
	cudaFuncAttributes fa;
	CK(cudaFuncGetAttributes(&fa, oth_flat_kernel), "kernel attributes");
	size_t blocks = (size_t)prop.regsPerMultiprocessor /
			((size_t)(fa.numRegs ? fa.numRegs : 1) * BLOCK);
	size_t need = fa.sharedSizeBytes
			      ? blocks * (fa.sharedSizeBytes +
					  prop.reservedSharedMemPerBlock)
			      : 0;
	int carve = (int)((need * 100 + prop.sharedMemPerMultiprocessor - 1) /
			  prop.sharedMemPerMultiprocessor);
	CK(cudaFuncSetAttribute(oth_flat_kernel,
				cudaFuncAttributePreferredSharedMemoryCarveout,
				carve), "carveout");
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
		   &per_sm, oth_flat_kernel, BLOCK, 0), "occupancy");
	ctx->per_sm = per_sm < 1 ? 1 : per_sm;
	ctx->sms = prop.multiProcessorCount;
	return 0;
}

static int run(struct othello_cuda *ctx, int gen, uint64_t seed,
	       int empties, uint64_t begin, size_t n, int8_t *ret_score,
	       uint8_t *ret_move, uint64_t *ret_nodes, float *ret_ms,
	       char *err, size_t errlen);

/* One small solve, so that loading the kernels (CUDA loads a kernel at
 * its first launch) is part of opening, not of the first job. */
static int warm_up(struct othello_cuda *ctx, char *err, size_t errlen)
{
	int8_t score[64];
	uint8_t move[64];

	return run(ctx, 1, 0, 8, 0, 64, score, move, NULL, NULL, err, errlen);
}

extern "C" int othello_cuda_open(int index, struct othello_cuda **ret,
				 char *err, size_t errlen)
{
	struct othello_cuda *ctx;
	int rc = cuda_ctx_new("othello", index, &ctx, err, errlen);

	if (rc)
		return rc;
	rc = open_ctx(ctx, err, errlen);
	if (rc == 0)
		rc = warm_up(ctx, err, errlen);
	if (rc) {
		othello_cuda_close(ctx);
		return rc;
	}
	*ret = ctx;
	return 0;
}

extern "C" int othello_cuda_device_name(struct othello_cuda *ctx, char *buf,
					size_t len)
{
	snprintf(buf, len, "%s", ctx->name);
	return 0;
}

static int run(struct othello_cuda *ctx, int gen, uint64_t seed,
	       int empties, uint64_t begin, size_t n, int8_t *ret_score,
	       uint8_t *ret_move, uint64_t *ret_nodes, float *ret_ms,
	       char *err, size_t errlen)
{
	float ms = 0;

	if (ctx->poisoned) {
		snprintf(err, errlen, "othello cuda: context poisoned by an "
			 "earlier device error");
		return GERR_DEVICE;
	}
	if (n > OTHELLO_CUDA_MAX_BATCH) {
		snprintf(err, errlen, "othello cuda: batch of %zu over %u", n,
			 OTHELLO_CUDA_MAX_BATCH);
		return GERR_INVAL;
	}
	if (n == 0) {
		if (ret_nodes)
			*ret_nodes = 0;
		if (ret_ms)
			*ret_ms = 0;
		return 0;
	}
	CK(cudaSetDevice(ctx->device), "set device");
	if (!gen) {
		CK(cudaMemcpyAsync(ctx->d_P, ctx->h_P, n * 8,
				   cudaMemcpyHostToDevice, ctx->stream), "copy");
		CK(cudaMemcpyAsync(ctx->d_O, ctx->h_O, n * 8,
				   cudaMemcpyHostToDevice, ctx->stream), "copy");
	}
	CK(cudaMemsetAsync(ctx->d_ctr, 0, 2 * sizeof(unsigned long long),
			   ctx->stream), "memset");
	CK(cudaEventRecord(ctx->ev0, ctx->stream), "event");
	if (gen)
		oth_gen_kernel<<<(unsigned)((n + 255) / 256), 256, 0,
				 ctx->stream>>>(seed, empties, begin,
						(unsigned)n, ctx->d_P,
						ctx->d_O);
	oth_flat_kernel<<<ctx->per_sm * ctx->sms, BLOCK, 0, ctx->stream>>>(
		ctx->d_P, ctx->d_O, (unsigned)n, ctx->d_out, ctx->d_ctr);
	CK(cudaGetLastError(), "launch");
	CK(cudaEventRecord(ctx->ev1, ctx->stream), "event");
	CK(cudaMemcpyAsync(ctx->h_out, ctx->d_out, n * 2,
			   cudaMemcpyDeviceToHost, ctx->stream), "copy back");
	CK(cudaMemcpyAsync(ctx->h_ctr, ctx->d_ctr,
			   2 * sizeof(unsigned long long),
			   cudaMemcpyDeviceToHost, ctx->stream), "copy back");
	CK(cudaStreamSynchronize(ctx->stream), "kernel");
	CK(cudaEventElapsedTime(&ms, ctx->ev0, ctx->ev1), "timing");
	for (size_t i = 0; i < n; i++) {
		int v = (int)ctx->h_out[2 * i] - 64;
		uint8_t mv = ctx->h_out[2 * i + 1];
		if (v < -64 || v > 64 || (v & 1) || mv > OTHELLO_MOVE_NONE) {
			ctx->poisoned = 1;
			snprintf(err, errlen, "othello cuda: position %zu came "
				 "back with score %d move %u", i, v, mv);
			return GERR_DEVICE;
		}
	}
	for (size_t i = 0; i < n; i++) {
		ret_score[i] = (int8_t)((int)ctx->h_out[2 * i] - 64);
		ret_move[i] = ctx->h_out[2 * i + 1];
	}
	if (ret_nodes)
		*ret_nodes = ctx->h_ctr[1];
	if (ret_ms)
		*ret_ms = ms;
	return 0;
}

extern "C" int othello_cuda_solve(struct othello_cuda *ctx, const uint64_t *P,
				  const uint64_t *O, size_t n,
				  int8_t *ret_score, uint8_t *ret_move,
				  uint64_t *ret_nodes, float *ret_ms,
				  char *err, size_t errlen)
{
	if (n > OTHELLO_CUDA_MAX_BATCH) {
		snprintf(err, errlen, "othello cuda: batch of %zu over %u", n,
			 OTHELLO_CUDA_MAX_BATCH);
		return GERR_INVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (oth_popcount(~(P[i] | O[i])) > OTHELLO_CUDA_MAX_EMPTIES ||
		    (P[i] & O[i])) {
			snprintf(err, errlen, "othello cuda: position %zu has "
				 "more than %d empties or overlapping discs",
				 i, OTHELLO_CUDA_MAX_EMPTIES);
			return GERR_INVAL;
		}
		ctx->h_P[i] = P[i];
		ctx->h_O[i] = O[i];
	}
	return run(ctx, 0, 0, 0, 0, n, ret_score, ret_move, ret_nodes, ret_ms,
		   err, errlen);
}

extern "C" int othello_cuda_solve_random(struct othello_cuda *ctx,
					 uint64_t seed, int empties,
					 uint64_t begin, size_t n,
					 int8_t *ret_score, uint8_t *ret_move,
					 uint64_t *ret_nodes, float *ret_ms,
					 char *err, size_t errlen)
{
	if (empties < 1 || empties > OTHELLO_CUDA_MAX_EMPTIES) {
		snprintf(err, errlen, "othello cuda: empties %d outside 1..%d",
			 empties, OTHELLO_CUDA_MAX_EMPTIES);
		return GERR_INVAL;
	}
	return run(ctx, 1, seed, empties, begin, n, ret_score, ret_move,
		   ret_nodes, ret_ms, err, errlen);
}
