/* cuda_check.h - CUDA errors at the edge of a workload's device context
 * (CUDA C++ only). A failed call poisons the context, so the worker releases
 * its lease and exits rather than trusting the device again, and becomes
 * GERR_DEVICE with a one-line message naming the workload and the step.
 * Also the steps every NAME.cu's context takes the same way: counting
 * devices, allocating the context for one, its stream and two timing events,
 * and freeing them. */
#ifndef GPUD_CUDA_CHECK_H
#define GPUD_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

extern "C" {
#include "gerr.h"
}

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

/* How many CUDA devices there are; 0 when CUDA cannot say. */
static inline int cuda_device_count(void)
{
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess)
		return 0;
	return n;
}

/* NAME_cuda_device_count, which every NAME_cuda.h has (WL_NOCUDA_DEVICE is
 * its build without CUDA): cuda_device_count. */
#define CUDA_DEVICE_COUNT(NAME)                                               \
	extern "C" int NAME##_cuda_device_count(void)                         \
	{                                                                     \
		return cuda_device_count();                                   \
	}

/* The start of NAME_cuda_open: a zeroed context C (which has an int device)
 * for device index in *ret, the caller's to free; GERR_UNSUPPORTED when
 * there is no such device, GERR_NOMEM. who names the workload. */
template <typename C>
static int cuda_ctx_new(const char *who, int index, C **ret, char *err,
			size_t errlen)
{
	int n = cuda_device_count();
	C *ctx;

	if (index < 0 || index >= n) {
		snprintf(err, errlen, "%s cuda: no device %d (%d found)", who,
			 index, n);
		return GERR_UNSUPPORTED;
	}
	ctx = (C *)calloc(1, sizeof(*ctx));
	if (!ctx)
		return GERR_NOMEM;
	ctx->device = index;
	*ret = ctx;
	return 0;
}

/* For a context C with a stream and timing events ev0 and ev1: make ctx's
 * device current, read its properties into *prop and create the stream
 * (non-blocking) and the events. What was created before a failure stays
 * for cuda_ctx_free. */
template <typename C>
static cudaError_t cuda_ctx_stream(C *ctx, cudaDeviceProp *prop)
{
	cudaError_t e = cudaSetDevice(ctx->device);

	if (e == cudaSuccess)
		e = cudaGetDeviceProperties(prop, ctx->device);
	if (e == cudaSuccess)
		e = cudaStreamCreateWithFlags(&ctx->stream,
					      cudaStreamNonBlocking);
	if (e == cudaSuccess)
		e = cudaEventCreate(&ctx->ev0);
	if (e == cudaSuccess)
		e = cudaEventCreate(&ctx->ev1);
	return e;
}

/* The end of NAME_cuda_close for such a context: the events, the stream
 * (each if it was created), then ctx itself. The caller has made the device
 * current and freed the context's memory. */
template <typename C>
static void cuda_ctx_free(C *ctx)
{
	if (ctx->ev0)
		cudaEventDestroy(ctx->ev0);
	if (ctx->ev1)
		cudaEventDestroy(ctx->ev1);
	if (ctx->stream)
		cudaStreamDestroy(ctx->stream);
	free(ctx);
}

#endif
