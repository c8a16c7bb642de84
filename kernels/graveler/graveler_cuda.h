/* graveler_cuda.h - C interface to the Graveler CUDA kernel.
 *
 * One opaque context per device: cuda_open allocates everything up front
 * (device buffers for one step, one stream, two events) so a step allocates
 * nothing. A step runs the kernel over [acc->next, to) on the context's
 * stream, waits for it, and folds histogram, max/first and the segment
 * records into acc exactly as graveler_cpu_step does (bit-identical). Any
 * CUDA error is translated to GERR_DEVICE and poisons the context: every
 * later call returns GERR_DEVICE until it is closed; acc is left untouched
 * on error.
 *
 * Built without CUDA (graveler_nocuda.c) every function returns
 * GERR_UNSUPPORTED. Threads: one context is used by one thread at a time.
 * Ownership: the caller owns acc; the context keeps no pointer to it.
 */
#ifndef GPUD_GRAVELER_CUDA_H
#define GPUD_GRAVELER_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "graveler.h"

#ifdef __cplusplus
extern "C" {
#endif

struct graveler_cuda;

/* Largest step one launch takes (battles). */
#define GRAVELER_CUDA_MAX_STEP (1ull << 32)

/* Number of CUDA devices, 0 when none or built without CUDA. */
int graveler_cuda_device_count(void);

/* Open a context on device `index`. GERR_UNSUPPORTED without CUDA or
 * without that device, GERR_DEVICE / GERR_NOMEM otherwise. */
int graveler_cuda_open(int index, struct graveler_cuda **ret, char *err,
		       size_t errlen);
/* Accepts NULL. */
void graveler_cuda_close(struct graveler_cuda *ctx);

/* Advance acc to `to` (a value from graveler_step_end; to - acc->next <=
 * GRAVELER_CUDA_MAX_STEP). ret_kernel_ms (may be NULL) gets the main
 * kernel's time measured with CUDA events. */
int graveler_cuda_step(struct graveler_cuda *ctx, struct graveler_acc *acc,
		       uint64_t to, float *ret_kernel_ms, char *err,
		       size_t errlen);

/* The device's name (for logs and benchmarks). */
int graveler_cuda_device_name(struct graveler_cuda *ctx, char *buf,
			      size_t len);

#ifdef __cplusplus
}
#endif

#endif
