/* sudoku_nocuda.c - sudoku_cuda.h for builds without CUDA: no devices,
 * every call GERR_UNSUPPORTED. */
#include <stdio.h>

#include "gerr.h"
#include "sudoku_cuda.h"

int sudoku_cuda_device_count(void)
{
	return 0;
}

int sudoku_cuda_open(int index, struct sudoku_cuda **ret, char *err,
		     size_t errlen)
{
	(void)index;
	(void)ret;
	snprintf(err, errlen, "sudoku: built without CUDA");
	return GERR_UNSUPPORTED;
}

void sudoku_cuda_close(struct sudoku_cuda *ctx)
{
	(void)ctx;
}

int sudoku_cuda_w(struct sudoku_cuda *ctx, const struct sudoku_setup *S,
		  uint32_t from, uint32_t to, uint64_t (*w)[2],
		  float *ret_kernel_ms, char *err, size_t errlen)
{
	(void)ctx;
	(void)S;
	(void)from;
	(void)to;
	(void)w;
	(void)ret_kernel_ms;
	snprintf(err, errlen, "sudoku: built without CUDA");
	return GERR_UNSUPPORTED;
}

int sudoku_cuda_w_pieces(struct sudoku_cuda *ctx,
			 const struct sudoku_setup *S, uint32_t from,
			 uint32_t to, uint32_t npieces, uint64_t (*pieces)[2],
			 uint64_t (*w)[2], float *ret_kernel_ms, char *err,
			 size_t errlen)
{
	(void)ctx;
	(void)S;
	(void)from;
	(void)to;
	(void)npieces;
	(void)pieces;
	(void)w;
	(void)ret_kernel_ms;
	snprintf(err, errlen, "sudoku: built without CUDA");
	return GERR_UNSUPPORTED;
}

int sudoku_cuda_device_name(struct sudoku_cuda *ctx, char *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	(void)len;
	return GERR_UNSUPPORTED;
}
