/* othello_nocuda.c - othello_cuda.h for builds without CUDA: no devices,
 * every call GERR_UNSUPPORTED. */
#include "othello_cuda.h"
#include "nocuda.h"

WL_NOCUDA_DEVICE(othello)

int othello_cuda_solve(struct othello_cuda *ctx, const uint64_t *P,
		       const uint64_t *O, size_t n, int8_t *ret_score,
		       uint8_t *ret_move, uint64_t *ret_nodes, float *ret_ms,
		       char *err, size_t errlen)
{
	return wl_nocuda("othello", err, errlen);
}

int othello_cuda_solve_random(struct othello_cuda *ctx, uint64_t seed,
			      int empties, uint64_t begin, size_t n,
			      int8_t *ret_score, uint8_t *ret_move,
			      uint64_t *ret_nodes, float *ret_ms, char *err,
			      size_t errlen)
{
	return wl_nocuda("othello", err, errlen);
}
