/* cuda_check.h - CUDA errors at the edge of a workload's device context
 * (CUDA C++ only). A failed call poisons the context, so the worker releases
 * its lease and exits rather than trusting the device again, and becomes
 * GERR_DEVICE with a one-line message naming the workload and the step. */
#ifndef GPUD_CUDA_CHECK_H
#define GPUD_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>

#include "gerr.h"

static inline int cuda_fail(int *poisoned, cudaError_t e, const char *who,
			    const char *what, char *err, size_t errlen)
{
	if (poisoned)
		*poisoned = 1;
	snprintf(err, errlen, "%s cuda: %s: %s", who, what, cudaGetErrorString(e));
	return GERR_DEVICE;
}

/* Inside a function with `ctx` (whose poisoned field is an int), `err` and
 * `errlen` in scope: return GERR_DEVICE from it when call fails. */
#define CUDA_CK(who, call, what)                                             \
	do {                                                                 \
		cudaError_t e_ = (call);                                     \
		if (e_ != cudaSuccess)                                       \
			return cuda_fail(ctx ? &ctx->poisoned : NULL, e_, who, \
					 what, err, errlen);                 \
	} while (0)

#endif
