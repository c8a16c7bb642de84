/* graveler_nocuda.c - graveler_cuda.h for builds without CUDA: no devices,
 * every call GERR_UNSUPPORTED. */
#include "graveler_cuda.h"
#include "nocuda.h"

WL_NOCUDA_DEVICE(graveler)

int graveler_cuda_step(struct graveler_cuda *ctx, struct graveler_acc *acc,
		       uint64_t to, float *ret_kernel_ms, char *err,
		       size_t errlen)
{
	return wl_nocuda("graveler", err, errlen);
}
