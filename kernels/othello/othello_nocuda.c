/* othello_nocuda.c - othello_cuda.h for builds without CUDA: no devices,
 * every call GERR_UNSUPPORTED. */
#include <stdio.h>

#include "gerr.h"
#include "othello_cuda.h"

int othello_cuda_device_count(void)
{
	return 0;
}

int othello_cuda_open(int index, struct othello_cuda **ret, char *err,
		      size_t errlen)
{
	(void)index;
	(void)ret;
	snprintf(err, errlen, "othello: built without CUDA");
	return GERR_UNSUPPORTED;
}

void othello_cuda_close(struct othello_cuda *ctx)
{
	(void)ctx;
}

int othello_cuda_solve(struct othello_cuda *ctx, const uint64_t *P,
		       const uint64_t *O, size_t n, int8_t *ret_score,
		       uint8_t *ret_move, uint64_t *ret_nodes, float *ret_ms,
		       char *err, size_t errlen)
{
	(void)ctx; (void)P; (void)O; (void)n; (void)ret_score;
	(void)ret_move; (void)ret_nodes; (void)ret_ms;
	snprintf(err, errlen, "othello: built without CUDA");
	return GERR_UNSUPPORTED;
}

int othello_cuda_solve_random(struct othello_cuda *ctx, uint64_t seed,
			      int empties, uint64_t begin, size_t n,
			      int8_t *ret_score, uint8_t *ret_move,
			      uint64_t *ret_nodes, float *ret_ms, char *err,
			      size_t errlen)
{
	(void)ctx; (void)seed; (void)empties; (void)begin; (void)n;
	(void)ret_score; (void)ret_move; (void)ret_nodes; (void)ret_ms;
	snprintf(err, errlen, "othello: built without CUDA");
	return GERR_UNSUPPORTED;
}

int othello_cuda_device_name(struct othello_cuda *ctx, char *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	(void)len;
	return GERR_UNSUPPORTED;
}
