/* graveler.cu - the Graveler CUDA kernel behind graveler_cuda.h.
 *
 * Mapping. One thread walks whole generator chunks (256 battles of one MWC
 * stream, see graveler.h), chunk r, r + T, r + 2T, ... of the step (T = all
 * threads), so a chunk's serial stream never crosses threads and the kernel
 * computes exactly the reference's numbers. Per battle: 15 MWC steps (one
 * 32x32->64 multiply-add each), 8 turn words (AND of two outputs), a popcount
 * reduction (variant: 8 POPC, or carry-save full adders first to use fewer),
 * one shared-memory histogram increment and one max.
 *
 * Histogram. Each thread owns a column of a [bins][128 threads] array of
 * counters in shared memory, so there are no atomics; variants (hist_add)
 * use 32-bit counters (64 KB per block, 3 blocks per SM) or 16-bit ones
 * (32 KB, 6 blocks per SM; the default), laid out so that a warp's 32
 * increments hit 32 different banks whatever the counts. With 128 bins,
 * counts >= 128 (probability about 1e-30 per battle) would alias bin
 * n & 127; a chunk whose max reaches 128 is replayed and those battles are
 * moved to the global histogram, so the histogram is exact regardless. A
 * 16-bit counter never wraps: the launch grid caps the chunks per thread at
 * 255 (65280 battles). At the end each warp sums 32 bins over the block's
 * threads (redux.sync) and adds them to the global 64-bit histogram with
 * one atomic per bin.
 *
 * What limits it (bench/graveler.md, ncu on an H200): the FMA-heavy pipe.
 * Each MWC step is one IMAD.WIDE.U32 (4 cycles of that pipe per warp) plus
 * a copy of the carry into the next addend register pair, which ptxas
 * mostly issues as VIADD or IMAD.MOV on the same pipe; the pipe runs at
 * 78-83% busy and the ALU pipe at about 45%. Every cheaper formulation
 * tried (mul.hi, mad.cc, FP64 DFMA) costs more issue slots.
 *
 * Max and first index. Each thread keeps the max of each chunk (also stored
 * per chunk, for the result's samples) and the first chunk in which its
 * running max rose; a warp reduction and one 64-bit atomicMax per warp of
 * key = (max + 1) << 40 | (2^40 - 1 - chunk) give the global max and the
 * FIRST chunk holding it. The host replays that one chunk to find the first
 * battle (graveler_chunk_max), so the kernel spends one IMNMX per battle on
 * it.
 */
#include <cuda_runtime.h>
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
	unsigned char samples[GRAVELER_MAX_SAMPLES];
};

struct graveler_cuda {
	int device;
	int poisoned;
	int variant;
	int grid[GRAVELER_CUDA_VARIANTS]; /* resident blocks, per variant */
	cudaStream_t stream;
	cudaEvent_t ev0, ev1;
	struct dev_out *d_out;
	struct dev_out *h_out; /* pinned */
	unsigned char *d_cmax;
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

/* One MWC64X step, several ways of asking for the same arithmetic (the
 * benchmark times them):
 *   G = 0 plain C (64-bit product: IMAD.WIDE.U32 plus a copy of the carry
 *         into the next addend pair),
 *   G = 1 one mad.wide.u32,
 *   G = 2 mad.lo.cc + madc.hi,
 *   G = 3 the FP64 pipe: A = 2^32 - B with B = 83941, so
 *         z = A x + c = x 2^32 + t, t = c - B x, |t| < 2^49; one DFMA gives
 *         1.5 2^52 + t exactly, whose low word is lo32(t) = x' and whose
 *         high word is 0x43380000 + floor(t / 2^32), so c' = x + hi - 0x43380000;
 *   G = 6 as G = 3 for the carry, but x' = A x + c (one 32-bit IMAD), so no
 *         register-pair copies at all: x' is written straight into the low
 *         half of the next DFMA operand pair, c' into the other pair;
 *   G = 7 32-bit operations only (no register pairs, no 64-bit results):
 *         x' = A x + c (low word, one IMAD) and, as A x + c = x 2^32 + c - B x,
 *         c' = x - ceil((B x - c) / 2^32) = x - hi(B x) - [lo(B x) > c],
 *         where lo(B x) > c exactly when x' > c (x' = c - lo(B x) mod 2^32):
 *         IMAD, IMAD.HI, and a subtract with borrow (sub.cc + subc), in PTX;
 *   G = 8 the same arithmetic in plain C. */
#define MWC_BI 83941u /* 2^32 - GRAVELER_MWC_A */
#define MWC_B 83941.0
#define TWO52 4503599627370496.0
#define HI_X 0x43300000u /* high word of 2^52 */
#define HI_C 0x43380000u /* high word of 1.5 * 2^52 */

template <int G>
__device__ __forceinline__ uint32_t mwc(uint32_t &x, uint32_t &c)
{
	if (G == 0) {
		return graveler_mwc_next(&x, &c);
	} else if (G == 1) {
		uint64_t z;
		asm("mad.wide.u32 %0, %1, %2, %3;"
		    : "=l"(z)
		    : "r"(x), "r"(GRAVELER_MWC_A), "l"((uint64_t)c));
		x = (uint32_t)z;
		c = (uint32_t)(z >> 32);
	} else if (G == 2) {
		uint32_t lo, hi;
		asm("mad.lo.cc.u32 %0, %2, %3, %4;\n\t"
		    "madc.hi.u32 %1, %2, %3, 0;"
		    : "=r"(lo), "=r"(hi)
		    : "r"(x), "r"(GRAVELER_MWC_A), "r"(c));
		x = lo;
		c = hi;
	} else if (G == 7) {
		uint32_t xn, cn;
		asm("{\n\t"
		    ".reg .u32 h, b;\n\t"
		    "mad.lo.u32 %0, %2, %4, %3;\n\t"
		    "mul.hi.u32 h, %2, %5;\n\t"
		    "sub.cc.u32 b, %3, %0;\n\t"
		    "subc.u32 %1, %2, h;\n\t"
		    "}"
		    : "=&r"(xn), "=r"(cn)
		    : "r"(x), "r"(c), "n"(GRAVELER_MWC_A), "n"(MWC_BI));
		x = xn;
		c = cn;
	} else if (G == 8) {
		uint32_t xn = GRAVELER_MWC_A * x + c;
		c = x - __umulhi(x, MWC_BI) - (xn > c ? 1u : 0u);
		x = xn;
	} else {
		double xd = __dadd_rn(__hiloint2double((int)HI_X, (int)x), -TWO52);
		double r = __fma_rn(-MWC_B, xd,
				    __hiloint2double((int)HI_C, (int)c));
		uint32_t xn = G == 3 ? (uint32_t)__double2loint(r)
				     : GRAVELER_MWC_A * x + c;
		c = x + ((uint32_t)__double2hiint(r) - HI_C);
		x = xn;
	}
	return x ^ c;
}

template <int G, int V>
__device__ __forceinline__ unsigned battle(uint32_t &x, uint32_t &c)
{
	uint32_t o[GRAVELER_WORDS];
#pragma unroll
	for (int k = 0; k < (int)GRAVELER_WORDS; k++)
		o[k] = mwc<G>(x, c);
	uint32_t t0 = o[0] & o[1], t1 = o[2] & o[3], t2 = o[4] & o[5];
	uint32_t t3 = o[6] & o[7], t4 = o[8] & o[9], t5 = o[10] & o[11];
	uint32_t t6 = o[12] & o[13];
	uint32_t t7 = o[14] & (o[14] >> 16) & 0x7fu;
	if (V == 0) {
		return __popc(t0) + __popc(t1) + __popc(t2) + __popc(t3) +
		       __popc(t4) + __popc(t5) + __popc(t6) + __popc(t7);
	} else if (V == 1) {
		uint32_t s = fa_sum(t0, t1, t2), k = fa_carry(t0, t1, t2);
		return __popc(s) + 2 * __popc(k) + __popc(t3) + __popc(t4) +
		       __popc(t5) + __popc(t6) + __popc(t7);
	} else if (V == 2) {
		uint32_t s1 = fa_sum(t0, t1, t2), k1 = fa_carry(t0, t1, t2);
		uint32_t s2 = fa_sum(t3, t4, t5), k2 = fa_carry(t3, t4, t5);
		return __popc(s1) + __popc(s2) + 2 * (__popc(k1) + __popc(k2)) +
		       __popc(t6) + __popc(t7);
	} else {
		uint32_t s1 = fa_sum(t0, t1, t2), k1 = fa_carry(t0, t1, t2);
		uint32_t s2 = fa_sum(t3, t4, t5), k2 = fa_carry(t3, t4, t5);
		uint32_t s3 = fa_sum(s1, s2, t6), k3 = fa_carry(s1, s2, t6);
		uint32_t s4 = fa_sum(k1, k2, k3), k4 = fa_carry(k1, k2, k3);
		return __popc(s3) + __popc(t7) + 2 * __popc(s4) +
		       4 * __popc(k4);
	}
}

/* Shared-memory histogram, one column of SH_BINS counters per thread.
 *   H = 0: 32-bit counters [bin][thread], 64 KB per block, read-add-write;
 *   H = 1: 16-bit counters, 32 KB per block (twice the resident warps);
 *          thread t owns column 2 (t % 64) + t / 64, so a warp's 32 lanes
 *          touch 32 different words (banks) whatever the bins. A thread
 *          never counts more than GRAV16_MAX_CHUNKS * 256 < 65536 battles
 *          (the launch grid guarantees it), so no counter can wrap;
 *   H = 2: as 0 with a shared-memory atomic add (one instruction);
 *   H = 3: 16-bit counters as 1, all 232 bins (58 KB per block): no mask,
 *          no aliasing, no replay. */
#define GRAV16_MAX_CHUNKS 255u

template <int H> struct hist_t {
	typedef uint32_t T;
};
template <> struct hist_t<1> {
	typedef uint16_t T;
};
template <> struct hist_t<3> {
	typedef uint16_t T;
};

template <int H>
__host__ __device__ constexpr int hist_bins()
{
	return H == 3 ? GRAVELER_BINS : SH_BINS;
}

template <int H>
__host__ __device__ constexpr int shmem_bytes()
{
	return hist_bins<H>() * BLOCK * (int)sizeof(typename hist_t<H>::T);
}

template <int H>
__device__ __forceinline__ void hist_add(typename hist_t<H>::T *my, unsigned n)
{
	typename hist_t<H>::T *p =
		my + (H == 3 ? n : n & (SH_BINS - 1)) * BLOCK;
	if (H == 2)
		atomicAdd((uint32_t *)p, 1u);
	else
		*p += 1;
}

/* Replay a chunk whose max reached SH_BINS: move the aliased battles from
 * the shared bin (n & 127) to the global histogram. Never taken in
 * practice; kept so the histogram is exact by construction. */
template <typename T>
__device__ __noinline__ void fix_high(uint32_t x, uint32_t c, uint64_t base,
				      uint64_t from, uint64_t to, T *my,
				      unsigned long long *g_hist)
{
#pragma unroll 1
	for (unsigned j = 0; j < GRAVELER_CHUNK; j++) {
		uint64_t i = base + j;
		if (i >= to)
			break;
		unsigned n = battle<0, 0>(x, c);
		if (i < from || n < SH_BINS)
			continue;
		my[(n & (SH_BINS - 1)) * BLOCK] -= 1;
		atomicAdd(&g_hist[n], 1ull);
	}
}

__device__ __forceinline__ void chunk_seed(uint64_t smix, uint64_t ch,
					   uint32_t &x, uint32_t &c)
{
	uint64_t h = graveler_mix64(smix + ch * GRAVELER_GOLDEN);
	x = (uint32_t)h;
	c = (uint32_t)(h >> 32);
	if (c >= GRAVELER_MWC_A)
		c -= GRAVELER_MWC_A;
	if (x == 0 && c == 0)
		c = 1;
}

/* Per-thread bookkeeping after a chunk: high-count fix, sample byte, and
 * the first chunk where the thread's max rose. Chunks arrive in increasing
 * order. */
template <int H, typename T>
__device__ __forceinline__ void chunk_done(unsigned cm, uint32_t x0,
					   uint32_t c0, uint64_t r, uint64_t base,
					   uint64_t from, uint64_t to, T *my,
					   unsigned long long *g_hist,
					   unsigned char *cmax, int &best,
					   uint64_t &bestc)
{
	if (H != 3 && cm >= SH_BINS)
		fix_high(x0, c0, base, from, to, my, g_hist);
	cmax[r] = (unsigned char)cm;
	if ((int)cm > best) {
		best = (int)cm;
		bestc = r;
	}
}

/* One chunk alone, whole or clipped to [from, to). */
template <int G, int V, int H, int U>
__device__ __forceinline__ unsigned run_chunk(uint32_t x, uint32_t c,
					      uint64_t base, uint64_t from,
					      uint64_t to,
					      typename hist_t<H>::T *my)
{
	unsigned cm = 0;
	if (base >= from && base + GRAVELER_CHUNK <= to) {
#pragma unroll U
		for (int j = 0; j < (int)GRAVELER_CHUNK; j++) {
			unsigned n = battle<G, V>(x, c);
			hist_add<H>(my, n);
			cm = max(cm, n);
		}
	} else {
		/* Clipped chunk (at most two per launch): kept rolled. */
#pragma unroll 1
		for (unsigned j = 0; j < GRAVELER_CHUNK; j++) {
			uint64_t i = base + j;
			if (i >= to)
				break;
			unsigned n = battle<G, V>(x, c);
			if (i < from)
				continue;
			hist_add<H>(my, n);
			cm = max(cm, n);
		}
	}
	return cm;
}

/* GA, GB: generator codegen of the first and second chain (ILP = 2 runs
 * two chunks at once, one chain each; ILP = 1 uses GA only); U: unroll of
 * the battle loop of a whole chunk. */
template <int GA, int GB, int ILP, int V, int H, int U>
__global__ void __launch_bounds__(BLOCK)
grav_kernel(uint64_t seed, uint64_t from, uint64_t to, uint64_t c0,
	    uint64_t nchunks, unsigned long long *g_hist,
	    unsigned long long *g_key, unsigned char *cmax)
{
	typedef typename hist_t<H>::T T;
	extern __shared__ uint32_t sh[];
	const unsigned tid = threadIdx.x;
	T *const shT = (T *)sh;
	T *const my = shT + (sizeof(T) == 2 ? 2 * (tid % 64) + tid / 64 : tid);
	const uint64_t stride = (uint64_t)gridDim.x * BLOCK;
	const uint64_t smix = graveler_mix64(seed ^ GRAVELER_SEED_SALT);
	int best = -1;
	uint64_t bestc = 0;
	uint64_t r = (uint64_t)blockIdx.x * BLOCK + tid;

	for (int b = 0; b < hist_bins<H>(); b++)
		my[b * BLOCK] = 0;

	/* Two chunks at once: two independent MWC chains per thread hide
	 * the multiply latency. */
	for (; ILP == 2 && r + stride < nchunks; r += 2 * stride) {
		const uint64_t ra = r, rb = r + stride;
		const uint64_t ba = (c0 + ra) * GRAVELER_CHUNK;
		const uint64_t bb = (c0 + rb) * GRAVELER_CHUNK;
		uint32_t xa, ca, xb, cb;
		chunk_seed(smix, c0 + ra, xa, ca);
		chunk_seed(smix, c0 + rb, xb, cb);
		const uint32_t xa0 = xa, ca0 = ca, xb0 = xb, cb0 = cb;
		unsigned cma = 0, cmb = 0;
		if (ba >= from && bb + GRAVELER_CHUNK <= to) {
#pragma unroll 1
			for (int j = 0; j < (int)GRAVELER_CHUNK; j++) {
				unsigned na = battle<GA, V>(xa, ca);
				unsigned nb = battle<GB, V>(xb, cb);
				hist_add<H>(my, na);
				hist_add<H>(my, nb);
				cma = max(cma, na);
				cmb = max(cmb, nb);
			}
		} else {
			cma = run_chunk<GA, V, H, U>(xa, ca, ba, from, to, my);
			cmb = run_chunk<GB, V, H, U>(xb, cb, bb, from, to, my);
		}
		chunk_done<H>(cma, xa0, ca0, ra, ba, from, to, my, g_hist, cmax,
			   best, bestc);
		chunk_done<H>(cmb, xb0, cb0, rb, bb, from, to, my, g_hist, cmax,
			   best, bestc);
	}
	for (; r < nchunks; r += stride) {
		const uint64_t base = (c0 + r) * GRAVELER_CHUNK;
		uint32_t x, c;
		chunk_seed(smix, c0 + r, x, c);
		unsigned cm = run_chunk<GA, V, H, U>(x, c, base, from, to, my);
		uint32_t x0, cc0;
		chunk_seed(smix, c0 + r, x0, cc0);
		chunk_done<H>(cm, x0, cc0, r, base, from, to, my, g_hist, cmax,
			   best, bestc);
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
	for (unsigned b = warp; b < (unsigned)hist_bins<H>(); b += BLOCK / 32) {
		const T *row = shT + b * BLOCK;
		uint32_t s = 0;
#pragma unroll
		for (unsigned t = 0; t < BLOCK; t += 32)
			s += row[t + lane];
		s = __reduce_add_sync(0xffffffffu, s);
		if (lane == 0 && s)
			atomicAdd(&g_hist[b], (unsigned long long)s);
	}
}

/* Copy the step's sample chunks out of the per-chunk maxima. */
__global__ void grav_gather(uint64_t begin, uint64_t end, uint32_t ns,
			    uint64_t c0, uint64_t nchunks,
			    const unsigned char *cmax, unsigned char *out)
{
	uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
	if (k >= GRAVELER_MAX_SAMPLES)
		return;
	unsigned char v = 0xff;
	if (k < ns) {
		uint64_t cf = begin / GRAVELER_CHUNK;
		uint64_t nc = (end - 1) / GRAVELER_CHUNK - cf + 1;
		uint64_t ch = cf + (uint64_t)k * nc / ns;
		if (ch >= c0 && ch < c0 + nchunks)
			v = cmax[ch - c0];
	}
	out[k] = v;
}

/* ---- host side ---------------------------------------------------------- */

#define CK(call, what) CUDA_CK("graveler", call, what)

typedef void (*kernel_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
			  unsigned long long *, unsigned long long *,
			  unsigned char *);

/* Variants: generator codegen of the two chains (GA, GB), chunks per
 * thread (ILP), popcount reduction (V), histogram (H). All compute the same
 * numbers; the benchmark times them. */
struct variant {
	kernel_fn fn;
	int shmem;
	int hist16; /* 16-bit counters: caps the chunks per thread */
	const char *name;
};
#define VAR(ga, gb, ilp, v, h, u, name) \
	{grav_kernel<ga, gb, ilp, v, h, u>, shmem_bytes<h>(), \
	 sizeof(hist_t<h>::T) == 2, name}

/* Measured on an NVIDIA H200, 1e9 battles (bench/graveler.md): 4.11, 4.15,
 * 4.24, 4.44, 4.72, 4.85, 5.05, 5.35 ms. */
static const struct variant variants[GRAVELER_CUDA_VARIANTS] = {
	VAR(0, 0, 1, 2, 1, 4, "C mul, 1 chain, 6 popc, hist16, unroll 4"),
	VAR(0, 0, 1, 0, 3, 4, "C mul, 1 chain, 8 popc, hist16x232, unroll 4"),
	VAR(0, 0, 1, 2, 3, 4, "C mul, 1 chain, 6 popc, hist16x232, unroll 4"),
	VAR(0, 0, 1, 2, 0, 2, "C mul, 1 chain, 6 popc, hist32, unroll 2"),
	VAR(7, 7, 2, 0, 1, 1, "mul.hi, 2 chains, 8 popc, hist16"),
	VAR(0, 7, 2, 0, 3, 1, "C mul + mul.hi, 2 chains, 8 popc, hist16x232"),
	VAR(7, 7, 1, 0, 1, 4, "mul.hi, 1 chain, 8 popc, hist16, unroll 4"),
	VAR(7, 7, 1, 0, 3, 4, "mul.hi, 1 chain, 8 popc, hist16x232, unroll 4"),
};

/* Chosen from the benchmark (bench/graveler.md). */
#define DEFAULT_VARIANT 0

extern "C" int graveler_cuda_device_count(void)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess)
		return 0;
	return n;
}

extern "C" int graveler_cuda_open(int index, struct graveler_cuda **ret,
				  char *err, size_t errlen)
{
	struct graveler_cuda *ctx = NULL;
	cudaDeviceProp prop;
	int n = graveler_cuda_device_count(), per_sm = 0;

	if (index < 0 || index >= n) {
		snprintf(err, errlen, "graveler cuda: no device %d (%d found)",
			 index, n);
		return GERR_UNSUPPORTED;
	}
	ctx = (struct graveler_cuda *)calloc(1, sizeof(*ctx));
	if (!ctx)
		return GERR_NOMEM;
	ctx->device = index;
	ctx->variant = DEFAULT_VARIANT;
	cudaError_t e = cudaSetDevice(index);
	if (e == cudaSuccess)
		e = cudaGetDeviceProperties(&prop, index);
	for (int v = 0; e == cudaSuccess && v < GRAVELER_CUDA_VARIANTS; v++) {
		e = cudaFuncSetAttribute(variants[v].fn,
					 cudaFuncAttributeMaxDynamicSharedMemorySize,
					 variants[v].shmem);
		if (e == cudaSuccess)
			e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
				&per_sm, variants[v].fn, BLOCK,
				variants[v].shmem);
		if (per_sm < 1)
			per_sm = 1;
		ctx->grid[v] = per_sm * prop.multiProcessorCount;
	}
	if (e == cudaSuccess)
		e = cudaStreamCreateWithFlags(&ctx->stream,
					      cudaStreamNonBlocking);
	if (e == cudaSuccess)
		e = cudaEventCreate(&ctx->ev0);
	if (e == cudaSuccess)
		e = cudaEventCreate(&ctx->ev1);
	if (e == cudaSuccess)
		e = cudaMalloc((void **)&ctx->d_out, sizeof(struct dev_out));
	if (e == cudaSuccess)
		e = cudaMallocHost((void **)&ctx->h_out, sizeof(struct dev_out));
	if (e == cudaSuccess)
		e = cudaMalloc((void **)&ctx->d_cmax,
			       GRAVELER_CUDA_MAX_STEP / GRAVELER_CHUNK + 2);
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
	if (ctx->d_cmax)
		cudaFree(ctx->d_cmax);
	if (ctx->h_out)
		cudaFreeHost(ctx->h_out);
	if (ctx->d_out)
		cudaFree(ctx->d_out);
	if (ctx->ev1)
		cudaEventDestroy(ctx->ev1);
	if (ctx->ev0)
		cudaEventDestroy(ctx->ev0);
	if (ctx->stream)
		cudaStreamDestroy(ctx->stream);
	free(ctx);
}

extern "C" int graveler_cuda_device_name(struct graveler_cuda *ctx, char *buf,
					 size_t len)
{
	if (!ctx || !buf || len == 0)
		return GERR_INVAL;
	snprintf(buf, len, "%s", ctx->name);
	return 0;
}

extern "C" const char *graveler_cuda_variant_name(int variant)
{
	if (variant < 0 || variant >= GRAVELER_CUDA_VARIANTS)
		return "?";
	return variants[variant].name;
}

extern "C" int graveler_cuda_set_variant(struct graveler_cuda *ctx,
					 int variant)
{
	if (!ctx || variant < 0 || variant >= GRAVELER_CUDA_VARIANTS)
		return GERR_INVAL;
	ctx->variant = variant;
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

	CK(cudaSetDevice(ctx->device), "set device");
	CK(cudaMemsetAsync(ctx->d_out, 0, sizeof(struct dev_out), ctx->stream),
	   "memset");
	CK(cudaEventRecord(ctx->ev0, ctx->stream), "event");
	const struct variant *kv = &variants[ctx->variant];
	uint64_t grid = (uint64_t)ctx->grid[ctx->variant];
	/* 16-bit counters: no thread may take more than GRAV16_MAX_CHUNKS
	 * chunks (at most 2^24 / (255 * 128) = 514 blocks for a full step). */
	if (kv->hist16) {
		uint64_t need = (nchunks + GRAV16_MAX_CHUNKS * BLOCK - 1) /
				(GRAV16_MAX_CHUNKS * BLOCK);
		if (grid < need)
			grid = need;
	}
	kv->fn<<<(unsigned)grid, BLOCK, kv->shmem, ctx->stream>>>(
		acc->seed, from, to, c0, nchunks, ctx->d_out->hist,
		&ctx->d_out->key, ctx->d_cmax);
	CK(cudaGetLastError(), "kernel launch");
	CK(cudaEventRecord(ctx->ev1, ctx->stream), "event");
	grav_gather<<<GRAVELER_MAX_SAMPLES / 256, 256, 0, ctx->stream>>>(
		acc->begin, acc->end, acc->nsamples, c0, nchunks, ctx->d_cmax,
		ctx->d_out->samples);
	CK(cudaGetLastError(), "gather launch");
	CK(cudaMemcpyAsync(ctx->h_out, ctx->d_out, sizeof(struct dev_out),
			   cudaMemcpyDeviceToHost, ctx->stream),
	   "copy back");
	CK(cudaStreamSynchronize(ctx->stream), "kernel");
	CK(cudaEventElapsedTime(&ms, ctx->ev0, ctx->ev1), "event time");

	/* Check the kernel's output before folding it in. */
	o = ctx->h_out;
	uint64_t total = 0;
	int top = -1;
	for (unsigned b = 0; b < GRAVELER_BINS; b++) {
		total += o->hist[b];
		if (o->hist[b])
			top = (int)b;
	}
	uint64_t key = o->key;
	int kmax = (int)(key >> KEY_SHIFT) - 1;
	uint64_t kch = c0 + (KEY_MASK - (key & KEY_MASK));
	if (total != to - from || key == 0 || kmax != top ||
	    kch >= c0 + nchunks) {
		ctx->poisoned = 1;
		snprintf(err, errlen, "graveler cuda: inconsistent kernel "
			 "output (total %llu of %llu, max %d, top bin %d)",
			 (unsigned long long)total,
			 (unsigned long long)(to - from), kmax, top);
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
	for (uint32_t k = 0; k < acc->nsamples; k++)
		if (o->samples[k] != 0xff)
			acc->samples[k] = o->samples[k];
	acc->next = to;
	if (ret_kernel_ms)
		*ret_kernel_ms = ms;
	return 0;
}
