/* officers_nocuda.c - officers_cuda.h for builds without CUDA: no devices,
 * every call GERR_UNSUPPORTED. */
#include <stdio.h>

#include "gerr.h"
#include "officers_cuda.h"

int officers_cuda_device_count(void)
{
	return 0;
}

int officers_cuda_open(int index, struct officers_cuda **ret, char *err,
		       size_t errlen)
{
	(void)index;
	(void)ret;
	snprintf(err, errlen, "officers: built without CUDA");
	return GERR_UNSUPPORTED;
}

void officers_cuda_close(struct officers_cuda *ctx)
{
	(void)ctx;
}

int officers_cuda_device_name(struct officers_cuda *ctx, char *buf,
			      size_t len)
{
	(void)ctx;
	(void)buf;
	(void)len;
	return GERR_UNSUPPORTED;
}

int officers_cuda_set_chunk(struct officers_cuda *ctx, unsigned chunk)
{
	(void)ctx;
	(void)chunk;
	return GERR_UNSUPPORTED;
}

int officers_cuda_extend(struct officers_cuda *ctx, struct officers_seq *s,
			 uint64_t to, int threads, const struct wl_run_io *io,
			 uint64_t units_base, struct officers_cuda_times *times,
			 char *err, size_t errlen)
{
	(void)ctx;
	(void)s;
	(void)to;
	(void)threads;
	(void)io;
	(void)units_base;
	(void)times;
	snprintf(err, errlen, "officers: built without CUDA");
	return GERR_UNSUPPORTED;
}

int officers_cuda_candidates(struct officers_cuda *ctx,
			     const struct officers_seq *s, uint64_t len,
			     uint16_t *out, struct officers_cuda_times *times,
			     char *err, size_t errlen)
{
	(void)ctx;
	(void)s;
	(void)len;
	(void)out;
	(void)times;
	snprintf(err, errlen, "officers: built without CUDA");
	return GERR_UNSUPPORTED;
}

int officers_cuda_exact(struct officers_cuda *ctx,
			const struct officers_seq *s, uint64_t len,
			uint8_t *status, struct officers_cuda_times *times,
			char *err, size_t errlen)
{
	(void)ctx;
	(void)s;
	(void)len;
	(void)status;
	(void)times;
	snprintf(err, errlen, "officers: built without CUDA");
	return GERR_UNSUPPORTED;
}
