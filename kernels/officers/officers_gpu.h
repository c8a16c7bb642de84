/* officers_gpu.h - what the Officers CUDA files share (CUDA C++ only):
 * the sizes of the kernels' tiles and tables, and the exact kernel's host
 * entry points (officers_exact.cu) for the context in officers.cu. */
#ifndef GPUD_OFFICERS_GPU_H
#define GPUD_OFFICERS_GPU_H

#include <cuda_runtime.h>
#include <stdint.h>

#define RING_BITS 15
#define RING (1u << RING_BITS)
#define RMASK (RING - 1)
#define CPOS 32    /* positions per CTA */
#define CSLICES 32 /* warps per CTA */
#define CTHREADS (CPOS * CSLICES)
#define MW 16      /* 32-bit words of a 512-bit mask */
static_assert(CTHREADS == 2 * MW * CPOS, "two threads per mask word");
#define NONE32 0xffffffffu
#define EXACT_WARPS 16
#define EXACT_TILE 1024u /* positions per tile of the exact kernel */
#define EXACT_LO 4096u   /* G(0..) its CTAs keep in shared memory */

/* Common values among v = 32 k + b: popcount(k) + popcount(b & 0xe) odd. */
static __device__ __forceinline__ uint32_t common32(unsigned k)
{
	return (__popc(k) & 1) ? ~0xc33cc33cu : 0xc33cc33cu;
}

/* Once per device: let the exact kernel use its shared memory. */
cudaError_t officers_exact_setup(void);

/* Exact kernel on positions [n0off, n0off + len) of buf, as many CTAs as
 * are resident on `sms` SMs (fewer for short runs); rpos/rval are the rare
 * table in device memory. */
cudaError_t officers_exact_launch(int sms, cudaStream_t stream,
				  const uint16_t *buf, const uint16_t *lo,
				  unsigned lo_len, unsigned long long dbase,
				  unsigned n0off, unsigned len, unsigned nrare,
				  unsigned maxpos, const uint32_t *rpos,
				  const uint16_t *rval, uint8_t *status);

#endif
