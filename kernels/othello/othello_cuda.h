/* othello_cuda.h - C interface to the Othello CUDA batch solver.
 *
 * One opaque context per device: othello_cuda_open allocates everything up
 * front (device and pinned host buffers for OTHELLO_CUDA_MAX_BATCH
 * positions, one stream, two events) and ends with a small solve that
 * loads the kernels, so a solve allocates nothing. A solve runs the
 * kernel (the search of othello_search.h cut into flips, othello_flat.h;
 * one lane per position, lanes take the next position from a global
 * counter when they finish one) on the context's stream and waits for it.
 * Scores and moves are exactly othello_solve_shallow's (the same search).
 *
 * Any CUDA error is translated to GERR_DEVICE and poisons the context:
 * every later call returns GERR_DEVICE until it is closed; outputs are
 * left untouched on error. Built without CUDA (othello_nocuda.c) every
 * function returns GERR_UNSUPPORTED and the device count is 0.
 * Threads: one context is used by one thread at a time.
 * Ownership: the caller owns every array; the context keeps no pointer.
 */
#ifndef GPUD_OTHELLO_CUDA_H
#define GPUD_OTHELLO_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct othello_cuda;

#define OTHELLO_CUDA_MAX_BATCH (1u << 22)
/* Positions with more empties go to the CPU solver: without a
 * transposition table the shallow search's tree grows too fast. */
#define OTHELLO_CUDA_MAX_EMPTIES 14

int othello_cuda_device_count(void);
int othello_cuda_open(int index, struct othello_cuda **ret, char *err,
		      size_t errlen);
/* Accepts NULL. */
void othello_cuda_close(struct othello_cuda *ctx);

/* Solve n (<= OTHELLO_CUDA_MAX_BATCH) positions given from the side to
 * move; *ret_nodes (may be NULL) gets the nodes searched, *ret_ms (may be
 * NULL) the kernel time from CUDA events. */
int othello_cuda_solve(struct othello_cuda *ctx, const uint64_t *P,
		       const uint64_t *O, size_t n, int8_t *ret_score,
		       uint8_t *ret_move, uint64_t *ret_nodes, float *ret_ms,
		       char *err, size_t errlen);

/* Generate positions [begin, begin + n) of a --random job on the device
 * (oth_generate) and solve them; *ret_ms covers both kernels. empties <=
 * OTHELLO_CUDA_MAX_EMPTIES. */
int othello_cuda_solve_random(struct othello_cuda *ctx, uint64_t seed,
			      int empties, uint64_t begin, size_t n,
			      int8_t *ret_score, uint8_t *ret_move,
			      uint64_t *ret_nodes, float *ret_ms, char *err,
			      size_t errlen);

int othello_cuda_device_name(struct othello_cuda *ctx, char *buf, size_t len);
#ifdef __cplusplus
}
#endif

#endif
