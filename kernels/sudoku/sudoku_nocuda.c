/* sudoku_nocuda.c - sudoku_cuda.h for builds without CUDA: no devices,
 * every call GERR_UNSUPPORTED. */
#include "sudoku_cuda.h"
#include "nocuda.h"

WL_NOCUDA_DEVICE(sudoku)

int sudoku_cuda_w(struct sudoku_cuda *ctx, const struct sudoku_setup *S,
		  uint32_t from, uint32_t to, uint64_t (*w)[2],
		  float *ret_kernel_ms, char *err, size_t errlen)
{
	return wl_nocuda("sudoku", err, errlen);
}

int sudoku_cuda_w_pieces(struct sudoku_cuda *ctx,
			 const struct sudoku_setup *S, uint32_t from,
			 uint32_t to, uint32_t npieces, uint64_t (*pieces)[2],
			 uint64_t (*w)[2], float *ret_kernel_ms, char *err,
			 size_t errlen)
{
	return wl_nocuda("sudoku", err, errlen);
}
