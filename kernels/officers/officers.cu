/* officers.cu - the Officers candidate kernel and the device context behind
 * officers_cuda.h (the exact kernel is in officers_exact.cu).
 *
 * Candidate kernel: frontier iteration. Positions [c, c + K) after the
 * frontier c (everything before c is exact) hold guesses. Every round, all
 * K positions are recomputed at once from the last round's guesses (one CTA
 * per 32 positions, a lane per position, its 32 warps each taking a part of
 * the rare table). If the first position whose value changed in the round
 * is y, every position up to y is exact: y's inputs before it did not
 * change, so they were exact, by induction from c. The frontier moves to
 * y + 1 (or c + K when nothing changed). All CTAs are resident (cooperative
 * launch). Measured on an H100 (K = 4224): 362 positions become final per
 * round, a round takes 4.65 us (11.6 us with a grid barrier, a reload of the
 * window from global memory and the rare table read from constant memory).
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
#include "officers_gpu.h"
#include "workload.h"

__constant__ uint32_t c_rpos[OFFICERS_MAX_RARE];
__constant__ uint16_t c_rval[OFFICERS_MAX_RARE];

struct cand_stats {
	unsigned rounds;
};

struct officers_cuda {
	int device, poisoned, nblocks, sms;
	cudaStream_t stream;
	cudaEvent_t ev[4];
	uint16_t *d_buf[2];     /* TAIL + CHUNK values */
	uint16_t *d_prefix;     /* OFFICERS_PREFIX values */
	uint8_t *d_status[2];
	struct cand_stats *d_stats;
	uint32_t *d_xch;        /* candidate kernel: 2 x K tagged words */
	uint16_t *h_vals[2];    /* pinned, CHUNK */
	uint8_t *h_status[2];   /* pinned, CHUNK */
	uint32_t *h_rpos;
	uint16_t *h_rval;
	uint32_t *d_rpos;
	uint16_t *d_rval;
	uint32_t rare_uploaded;
	int prefix_uploaded;
	unsigned chunk;         /* extend: positions per chunk */
	/* The chunk officers_cuda_extend launched past its end (in flight or
	 * done): the next call adopts it when it continues the same sequence,
	 * so the GPU works while the caller turns a lease around. */
	int spec_on, spec_buf;
	uint64_t spec_n, spec_fnv;
	unsigned spec_len, spec_hist;
	char name[256];
};

/* ---- device code ------------------------------------------------------ */

/* Candidate kernel: the frontier iteration (top of file) without a grid
 * barrier or reloads from global memory. Each CTA keeps the whole window in
 * its ring.
 * After its lookups a CTA publishes its 32 new values to xch, each word
 * tagged with the round ((round + 1) mod 2^16 in the high half), and then
 * reads all K words of the round, spinning on a word until its tag is the
 * round's. Every CTA thus sees the same new values, compares them with its
 * ring (the values of the last round) and finds the same first change, so
 * all agree on the next frontier without a barrier. A word carries its own
 * tag, so it needs no fence; xch has two halves by round parity, and a CTA
 * can write round r + 2 into a half only after every CTA has published
 * round r + 1, that is after every CTA has read round r. Final values go to
 * buf as the frontier passes them.
 *
 * The ring is kept twice (ring[i] == ring[i + RING]), so a lookup reads
 * ring[((x - 1) & RMASK) + RING - pos] with no wrap. Each warp takes a
 * contiguous part of the rare table, packed as (2 (RING - 1 - pos)) << 16 |
 * val << 7, four entries per shared-memory read, and issues the four ring
 * reads before it marks the four options. The ring holds values << 7
 * (RING_SHIFT) too, so the low half of entry ^ ring value is the option
 * times 128, the byte offset of its row of flags: a lookup is five
 * instructions (address, load, xor, lane, store) instead of eight.
 *
 * Options are marked as word flags, conflict-free (a lane's column is its
 * own bank): flag[o][position] = the round's stamp (round + 1), set by
 * plain stores (all writers write the same word, so no atomics, and one
 * table for all warps: fewer instructions per lookup than a bit mask per
 * warp set by shared atomics). After the lookups 32 flags at a time are
 * gathered into a mask word, a flag counting only if it holds this round's
 * stamp, so the 64 KB table is never cleared. A position's candidate is its smallest unmarked common value: one
 * thread per mask word finds the word's smallest, warp 0 the minimum. */
static __device__ __forceinline__ uint4 ld_relaxed_v4(const uint4 *p)
{
	uint4 r;
	asm volatile("ld.relaxed.gpu.global.v4.u32 {%0, %1, %2, %3}, [%4];"
		     : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
		     : "l"(p)
		     : "memory");
	return r;
}

static __device__ __forceinline__ void st_relaxed(uint32_t *p, uint32_t v)
{
	asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v)
		     : "memory");
}

#define RING_SHIFT 7 /* ring values: G << 7; the row of option o: o << 7 */
static_assert(CPOS * 4 == 1u << RING_SHIFT, "a flag row is 32 words");
static_assert(OFFICERS_VMAX << RING_SHIFT == 1u << 16, "values fit a half");

/* Value v < OFFICERS_VMAX of position x into the ring, shifted. (A
 * candidate of OFFICERS_VMAX, no unmarked value, goes in as 0; the value
 * itself reaches buf, where the host refuses it.) */
static __device__ __forceinline__ void ring_put(uint16_t *ring, unsigned x,
						 unsigned v)
{
	const uint16_t sv = (uint16_t)((v & (OFFICERS_VMAX - 1)) << RING_SHIFT);

	ring[x & RMASK] = sv;
	ring[(x & RMASK) + RING] = sv;
}

/* One warp's lookups: table entries [j0, j1) for the lane's position, whose
 * predecessor's ring slot is at byte address xbase - 2. mark gets each
 * option << RING_SHIFT. */
template <typename Mark>
__device__ __forceinline__ void warp_lookups(const uint32_t *tab, unsigned j0,
					     unsigned j1, const char *xbase,
					     Mark mark)
{
	unsigned j = j0;

	for (; j + 4 <= j1; j += 4) {
		const uint4 q = *(const uint4 *)(tab + j);
		const uint32_t t[4] = {q.x, q.y, q.z, q.w};
		unsigned v[4];
#pragma unroll
		for (int u = 0; u < 4; u++)
			v[u] = *(const uint16_t *)(xbase + (t[u] >> 16));
#pragma unroll
		for (int u = 0; u < 4; u++)
			mark((t[u] ^ v[u]) & 0xffffu);
	}
	for (; j < j1; j++) {
		const uint32_t t = tab[j];
		mark((t ^ *(const uint16_t *)(xbase + (t >> 16))) & 0xffffu);
	}
}

#define XCH_MAXV 4 /* uint4 reads per thread: K <= 4 * 4 * CTHREADS */
/* A CTA waits this long after its lookups before it first reads the
 * round's words: a read that comes too early costs a whole L2 round trip
 * before the next, and loads L2 with the spinning of 132 CTAs. Measured
 * on an H100 (2^22 values): no wait 61.0 ms, 100 ns 57.0, 200 ns 54.4,
 * 300 ns 53.9, 600 ns 59.4 (no merged mex). */
#define XCH_WAIT_NS 300

__global__ void __launch_bounds__(CTHREADS, 1)
cand_xch_kernel(uint16_t *buf, unsigned n0off, unsigned n1off, unsigned nrare,
		unsigned maxpos, uint32_t *xch, struct cand_stats *sb)
{
	constexpr unsigned P = CPOS;
	extern __shared__ uint32_t sh[];
	__shared__ unsigned s_first[2];
	uint16_t *ring = (uint16_t *)sh;           /* 2 RING */
	uint32_t *mask = sh + RING;                /* flags [512][32] */
	uint32_t *comb = mask + CSLICES * MW * P;  /* [16][32], 2 KB unused */
	uint32_t *tab = comb + 2 * MW * P;         /* nrare, 16-byte aligned */
	const unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	const unsigned K = gridDim.x * P;
	const unsigned tab_part = ((nrare + CSLICES - 1) / CSLICES + 3) & ~3u;
	const unsigned j0 = w * tab_part < nrare ? w * tab_part : nrare;
	const unsigned j1 = j0 + tab_part < nrare ? j0 + tab_part : nrare;
	unsigned c = n0off, round = 0;
	unsigned e = c + K < n1off ? c + K : n1off;
	unsigned mine = 0; /* warp 0: the lane's new value of the round */

	for (unsigned i = n0off - 1 - maxpos + threadIdx.x; i < e;
	     i += CTHREADS)
		ring_put(ring, i, __ldcg(buf + i));
	for (unsigned i = threadIdx.x; i < CSLICES * MW * P; i += CTHREADS)
		mask[i] = 0;
	for (unsigned j = threadIdx.x; j < nrare; j += CTHREADS)
		tab[j] = (2 * (RING - 1 - c_rpos[j])) << 16 |
			 (uint32_t)c_rval[j] << RING_SHIFT;
	if (threadIdx.x == 0)
		s_first[0] = NONE32;
	__syncthreads();
	while (c < n1off) {
		const unsigned base = c + blockIdx.x * P;
		const uint32_t want = ((round + 1) & 0xffffu) << 16;
		const uint32_t stamp = round + 1; /* this round's flags */

		if (base < e) {
			const char *xbase =
				(const char *)(ring + ((base - 1 + lane) & RMASK) +
					       1);
			char *h = (char *)(mask + lane);
			warp_lookups(tab, j0, j1, xbase, [&](unsigned ob) {
				*(uint32_t *)(h + ob) = stamp;
			});
		}
		__syncthreads();
		/* Each position's mask of marked values, then its candidate
		 * (smallest unmarked common value): one thread per mask word
		 * gathers its 32 flags and finds the word's smallest; warp 0
		 * takes the minimum of 16 words (independent loads, not a scan
		 * that stops at the first). */
		if (threadIdx.x < MW * P) {
			const unsigned i = threadIdx.x, k = i / P;
			const uint32_t *h = mask + k * 32 * P + i % P;
			uint32_t m = 0;
#pragma unroll
			for (int b = 31; b >= 0; b--)
				m = m << 1 | (h[b * P] == stamp);
			uint32_t f = ~m & common32(k);
			comb[i] = f ? k * 32 + __ffs(f) - 1 : OFFICERS_VMAX;
		}
		__syncthreads();
		if (w == 0) {
			mine = OFFICERS_VMAX;
#pragma unroll
			for (unsigned k = 0; k < MW; k++)
				mine = min(mine, comb[k * P + lane]);
			st_relaxed(xch + (round & 1) * K + blockIdx.x * P + lane,
				   want | mine);
		}
		/* read the round's K words; compare with the ring */
		{
			const uint4 *src = (const uint4 *)(xch + (round & 1) * K);
			const unsigned n = e - c, nvec = (n + 3) / 4;
			unsigned first = NONE32;
			uint4 r[XCH_MAXV];
			__nanosleep(XCH_WAIT_NS);
#pragma unroll
			for (int k = 0; k < XCH_MAXV; k++) {
				unsigned i4 = threadIdx.x + k * CTHREADS;
				if (i4 < nvec)
					r[k] = ld_relaxed_v4(src + i4);
			}
#pragma unroll
			for (int k = 0; k < XCH_MAXV; k++) {
				unsigned i4 = threadIdx.x + k * CTHREADS;
				if (i4 >= nvec)
					break;
				while ((((r[k].x ^ want) | (r[k].y ^ want) |
					 (r[k].z ^ want) | (r[k].w ^ want)) >>
					16) != 0)
					r[k] = ld_relaxed_v4(src + i4);
				const uint32_t wv[4] = {r[k].x, r[k].y, r[k].z,
							r[k].w};
#pragma unroll
				for (int j = 0; j < 4; j++) {
					unsigned i = 4 * i4 + j, x = c + i;
					uint16_t v = (uint16_t)wv[j];
					if (i < n) {
						if ((uint16_t)(v << RING_SHIFT) !=
							    ring[x & RMASK] &&
						    first == NONE32)
							first = i;
						ring_put(ring, x, v);
					}
				}
			}
			first = __reduce_min_sync(0xffffffffu, first);
			if (lane == 0 && first != NONE32)
				atomicMin(&s_first[round & 1], first);
		}
		__syncthreads();
		{
			const unsigned f = s_first[round & 1];
			const unsigned c2 = f == NONE32 ? e : c + f + 1;
			const unsigned e2 = c2 + K < n1off ? c2 + K : n1off;

			/* final values out, the P this CTA computed (the
			 * value itself: the ring holds it shifted); new
			 * guesses 0 */
			if (w == 0) {
				unsigned x = c + blockIdx.x * P + lane;
				if (x < c2)
					buf[x] = (uint16_t)mine;
			}
			for (unsigned x = e + threadIdx.x; x < e2;
			     x += CTHREADS)
				ring_put(ring, x, 0);
			if (threadIdx.x == 0)
				s_first[(round + 1) & 1] = NONE32;
			c = c2;
			e = e2;
			round++;
		}
		__syncthreads();
	}
	if (blockIdx.x == 0 && threadIdx.x == 0)
		sb->rounds = round;
}

/* ---- host side ---------------------------------------------------------- */

#define CK(call, what) CUDA_CK("officers", call, what)

/* Shared memory of a candidate CTA: the ring twice, the flags, the
 * candidates of the mask words (then 2 KB unused, which keeps the table
 * where the measured kernel had it) and the packed rare table. */
#define SHMEM_CAND \
	(RING * 4 + (CSLICES + 2) * MW * CPOS * 4 + OFFICERS_MAX_RARE * 4)

static unsigned cand_window(const struct officers_cuda *ctx)
{
	return CPOS * ctx->nblocks;
}

#define BUF_LEN ((size_t)OFFICERS_TAIL + OFFICERS_CUDA_CHUNK)

CUDA_DEVICE_COUNT(officers)

extern "C" void officers_cuda_close(struct officers_cuda *ctx)
{
	if (!ctx)
		return;
	cudaSetDevice(ctx->device);
	if (ctx->stream)
		cudaStreamSynchronize(ctx->stream); /* a chunk ahead */
	for (int i = 0; i < 2; i++) {
		cudaFree(ctx->d_buf[i]);
		cudaFree(ctx->d_status[i]);
		cudaFreeHost(ctx->h_vals[i]);
		cudaFreeHost(ctx->h_status[i]);
	}
	cudaFree(ctx->d_prefix);
	cudaFree(ctx->d_stats);
	cudaFree(ctx->d_xch);
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
	int per_sm = 0, coop = 0;
	int rc = cuda_ctx_new("officers", index, &ctx, err, errlen);

	if (rc)
		return rc;
	cudaError_t e = cudaSetDevice(index);
	if (e == cudaSuccess)
		e = cudaGetDeviceProperties(&prop, index);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch,
					   index);
	if (e == cudaSuccess)
		e = cudaFuncSetAttribute(
			cand_xch_kernel,
			cudaFuncAttributeMaxDynamicSharedMemorySize, SHMEM_CAND);
	if (e == cudaSuccess)
		e = officers_exact_setup();
	if (e == cudaSuccess)
		e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
			&per_sm, cand_xch_kernel, CTHREADS, SHMEM_CAND);
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
		e = cudaMalloc((void **)&ctx->d_stats, sizeof(struct cand_stats));
	if (e == cudaSuccess)
		e = cudaMalloc((void **)&ctx->d_xch,
			       (size_t)2 * CPOS * ctx->nblocks * 4);
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
	snprintf(buf, len, "%s (%d SMs, K = %u)", ctx->name, ctx->sms,
		 cand_window(ctx));
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

	uint64_t K = cand_window(ctx);

	return s->n >= OFFICERS_CUDA_MIN_N && s->nrare > 0 &&
	       maxpos + 1 + K + 64 <= RING &&
	       K <= (uint64_t)XCH_MAXV * 4 * CTHREADS &&
	       maxpos < hist_of(s->n) && s->n - hist_of(s->n) >= s->base;
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
	struct cand_stats *sb = ctx->d_stats;
	uint64_t dbase = n - hist;
	uint32_t *xch = ctx->d_xch;
	void *args[] = {&buf, &n0off, &n1off, &nrare, &maxpos, &xch, &sb};
	unsigned nb = (unsigned)ctx->nblocks;

	CK(cudaMemsetAsync(buf + hist, 0, (size_t)len * 2, ctx->stream),
	   "memset");
	CK(cudaMemsetAsync(sb, 0, sizeof(*sb), ctx->stream), "memset");
	CK(cudaMemsetAsync(xch, 0xff, (size_t)2 * cand_window(ctx) * 4,
			   ctx->stream),
	   "memset");
	CK(cudaEventRecord(ctx->ev[0], ctx->stream), "event");
	CK(cudaLaunchCooperativeKernel((const void *)cand_xch_kernel, dim3(nb),
				       dim3(CTHREADS), args,
				       SHMEM_CAND,
				       ctx->stream),
	   "candidate kernel");
	CK(cudaEventRecord(ctx->ev[1], ctx->stream), "event");
	if (do_exact) {
		const uint16_t *lo = dbase == 0 ? buf : ctx->d_prefix;
		unsigned lo_len = dbase == 0 ? n1off : OFFICERS_PREFIX;
		CK(officers_exact_launch(ctx->sms, ctx->stream, buf, lo, lo_len,
					 dbase, n0off, len, nrare, maxpos,
					 ctx->d_rpos, ctx->d_rval,
					 ctx->d_status[b]),
		   "exact kernel");
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

/* Upload the hist values before s->n and the more values after them to
 * buffer b, and the prefix once when the history does not start at 0. */
static int upload_history(struct officers_cuda *ctx, int b,
			  const struct officers_seq *s, unsigned hist,
			  uint64_t more, char *err, size_t errlen)
{
	uint64_t dbase = s->n - hist;

	CK(cudaMemcpyAsync(ctx->d_buf[b], s->vals + (dbase - s->base),
			   (size_t)(hist + more) * 2, cudaMemcpyHostToDevice,
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

/* Forget the chunk launched past the last extension's end (waiting for it:
 * it owns a buffer). */
static int spec_drop(struct officers_cuda *ctx, char *err, size_t errlen)
{
	if (!ctx->spec_on)
		return 0;
	ctx->spec_on = 0;
	CK(cudaStreamSynchronize(ctx->stream), "drop the chunk ahead");
	return 0;
}

/* The start of a call for one chunk of len values after s (candidates,
 * exact): refuse it on a poisoned context or when the GPU cannot take it,
 * make the device current and drop the chunk launched ahead. */
static int one_chunk_start(struct officers_cuda *ctx,
			   const struct officers_seq *s, uint64_t len,
			   char *err, size_t errlen)
{
	if (ctx->poisoned) {
		snprintf(err, errlen, "officers cuda: context poisoned");
		return GERR_DEVICE;
	}
	if (!gpu_ok(ctx, s) || len > OFFICERS_CUDA_CHUNK || len == 0) {
		snprintf(err, errlen, "officers cuda: chunk not for the GPU");
		return GERR_INVAL;
	}
	CK(cudaSetDevice(ctx->device), "set device");
	return spec_drop(ctx, err, errlen);
}

extern "C" int officers_cuda_candidates(struct officers_cuda *ctx,
					const struct officers_seq *s,
					uint64_t len, uint16_t *out,
					struct officers_cuda_times *times,
					char *err, size_t errlen)
{
	int rc;
	unsigned hist = hist_of(s->n);
	struct cand_stats sb;

	if ((rc = one_chunk_start(ctx, s, len, err, errlen)) ||
	    (rc = upload_rares(ctx, s, err, errlen)) ||
	    (rc = upload_history(ctx, 0, s, hist, 0, err, errlen)) ||
	    (rc = enqueue_chunk(ctx, 0, s, s->n, hist, (unsigned)len, 0, err,
				errlen)) ||
	    (rc = wait_chunk(ctx, times, err, errlen)))
		return rc;
	CK(cudaMemcpy(&sb, ctx->d_stats, sizeof(sb), cudaMemcpyDeviceToHost),
	   "copy");
	if (times) {
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

	/* history and the candidates after it, from s->vals */
	if ((rc = one_chunk_start(ctx, s, len, err, errlen)) ||
	    (rc = upload_rares(ctx, s, err, errlen)) ||
	    (rc = upload_history(ctx, 0, s, hist, len, err, errlen)))
		return rc;
	CK(cudaEventRecord(ctx->ev[1], ctx->stream), "event");
	CK(officers_exact_launch(
		   ctx->sms, ctx->stream, ctx->d_buf[0],
		   dbase == 0 ? ctx->d_buf[0] : ctx->d_prefix,
		   dbase == 0 ? (unsigned)(hist + len) : OFFICERS_PREFIX, dbase,
		   hist, (unsigned)len, s->nrare,
		   (unsigned)s->rare[s->nrare - 1].pos, ctx->d_rpos,
		   ctx->d_rval, ctx->d_status[0]),
	   "exact kernel");
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
	/* The chunk the last call launched past its end is this call's first
	 * when s is the sequence that call left (same length and checksum of
	 * every value, same rare table on the device). */
	if (ctx->spec_on && ctx->spec_n == s->n && ctx->spec_fnv == s->st.fnv &&
	    ctx->rare_uploaded == s->nrare && ctx->spec_len <= to - s->n &&
	    gpu_ok(ctx, s)) {
		ctx->spec_on = 0;
		if (times)
			times->adopted++;
		cur = ctx->spec_buf;
		cur_n = s->n;
		cur_len = ctx->spec_len;
		cur_hist = ctx->spec_hist;
	} else if ((rc = spec_drop(ctx, err, errlen))) {
		return rc;
	}
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
			    (rc = upload_history(ctx, 0, s, cur_hist, 0, err,
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
		 * this one on the host; after the last one, a whole chunk past
		 * `to` for the next call (unless asked to stop). */
		int past = next_n >= to && cur_n < to &&
			   !(io && io->should_stop &&
			     io->should_stop(io->opaque));
		if (flag == cur_len && (next_n < to || past)) {
			unsigned have = cur_hist + cur_len;
			next_hist = hist_of(next_n);
			next_len = (unsigned)(!past && to - next_n < ctx->chunk
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
		if (past && next >= 0) {
			ctx->spec_on = 1;
			ctx->spec_buf = next;
			ctx->spec_n = next_n;
			ctx->spec_len = next_len;
			ctx->spec_hist = next_hist;
			ctx->spec_fnv = s->st.fnv;
			next = -1;
		}
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
