/* officers_nocuda.c - officers_cuda.h for builds without CUDA: no devices,
 * every call GERR_UNSUPPORTED. */
#include "officers_cuda.h"
#include "nocuda.h"

WL_NOCUDA_DEVICE(officers)

int officers_cuda_set_chunk(struct officers_cuda *ctx, unsigned chunk)
{
	return GERR_UNSUPPORTED;
}

int officers_cuda_extend(struct officers_cuda *ctx, struct officers_seq *s,
			 uint64_t to, int threads, const struct wl_run_io *io,
			 uint64_t units_base, struct officers_cuda_times *times,
			 char *err, size_t errlen)
{
	return wl_nocuda("officers", err, errlen);
}

int officers_cuda_candidates(struct officers_cuda *ctx,
			     const struct officers_seq *s, uint64_t len,
			     uint16_t *out, struct officers_cuda_times *times,
			     char *err, size_t errlen)
{
	return wl_nocuda("officers", err, errlen);
}

int officers_cuda_exact(struct officers_cuda *ctx,
			const struct officers_seq *s, uint64_t len,
			uint8_t *status, struct officers_cuda_times *times,
			char *err, size_t errlen)
{
	return wl_nocuda("officers", err, errlen);
}
