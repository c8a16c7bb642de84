/* nocuda.h - what every NAME_nocuda.c shares: NAME_cuda.h's calls for a build
 * without CUDA, where there are no devices and every call returns
 * GERR_UNSUPPORTED (with "NAME: built without CUDA" where it takes err). */
#ifndef GPUD_NOCUDA_H
#define GPUD_NOCUDA_H

#include <stdio.h>

#include "gerr.h"

static inline int wl_nocuda(const char *who, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: built without CUDA", who);
	return GERR_UNSUPPORTED;
}

/* NAME_cuda_device_count, _open, _close and _device_name, the calls every
 * NAME_cuda.h has, with its signatures. */
#define WL_NOCUDA_DEVICE(NAME)                                                \
	int NAME##_cuda_device_count(void)                                    \
	{                                                                     \
		return 0;                                                     \
	}                                                                     \
	int NAME##_cuda_open(int index, struct NAME##_cuda **ret, char *err,  \
			     size_t errlen)                                   \
	{                                                                     \
		return wl_nocuda(#NAME, err, errlen);                         \
	}                                                                     \
	void NAME##_cuda_close(struct NAME##_cuda *ctx)                       \
	{                                                                     \
	}                                                                     \
	int NAME##_cuda_device_name(struct NAME##_cuda *ctx, char *buf,       \
				    size_t len)                               \
	{                                                                     \
		return GERR_UNSUPPORTED;                                      \
	}

#endif
