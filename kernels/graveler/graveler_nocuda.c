/* graveler_nocuda.c - graveler_cuda.h for builds without CUDA: no devices,
 * every call GERR_UNSUPPORTED. */
#include <stdio.h>

#include "gerr.h"
#include "graveler_cuda.h"

int graveler_cuda_device_count(void)
{
	return 0;
}

int graveler_cuda_open(int index, struct graveler_cuda **ret, char *err,
		       size_t errlen)
{
	(void)index;
	(void)ret;
	snprintf(err, errlen, "graveler: built without CUDA");
	return GERR_UNSUPPORTED;
}

void graveler_cuda_close(struct graveler_cuda *ctx)
{
	(void)ctx;
}

int graveler_cuda_step(struct graveler_cuda *ctx, struct graveler_acc *acc,
		       uint64_t to, float *ret_kernel_ms, char *err,
		       size_t errlen)
{
	(void)ctx;
	(void)acc;
	(void)to;
	(void)ret_kernel_ms;
	snprintf(err, errlen, "graveler: built without CUDA");
	return GERR_UNSUPPORTED;
}

int graveler_cuda_device_name(struct graveler_cuda *ctx, char *buf,
			      size_t len)
{
	(void)ctx;
	(void)buf;
	(void)len;
	return GERR_UNSUPPORTED;
}
