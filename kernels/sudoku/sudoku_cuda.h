/* sudoku_cuda.h - C interface to the Sudoku 4x3 per-gangster kernel.
 *
 * One opaque context per device. It keeps, for the worker's lifetime, the
 * device copies of one setup's tables (T, codes, compatible boxes: about
 * 1.2 GB for 4x3, uploaded on the first lease) and of the current
 * GangSet's outer pairs (uploaded when a lease names another set), so
 * consecutive leases reuse them. A call computes W for a range of gangsters
 * of one set on the context's stream and waits for it; results are
 * bit-identical to sudoku_w_cpu. Any CUDA error is translated to
 * GERR_DEVICE and poisons the context: every later call returns
 * GERR_DEVICE until it is closed.
 *
 * Only R = 4, C = 3 (the 12x12 grid) runs here; smaller shapes run on the
 * CPU. Built without CUDA (sudoku_nocuda.c) every function returns
 * GERR_UNSUPPORTED.
 * Threads: one context is used by one thread at a time.
 * Ownership: the context keeps a pointer to the setup it was loaded with
 * (identity check only); the caller keeps the setup alive while the
 * context uses it (the workload's context keeps it until it is closed). */
#ifndef GPUD_SUDOKU_CUDA_H
#define GPUD_SUDOKU_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "sudoku.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sudoku_cuda;

int sudoku_cuda_device_count(void);
int sudoku_cuda_open(int index, struct sudoku_cuda **ret, char *err,
		     size_t errlen);
void sudoku_cuda_close(struct sudoku_cuda *ctx); /* accepts NULL */

/* W of gangsters [from, to) (one set; S built with SUDOKU_BUILD_T, 4x3,
 * max_cnt < 2^28): w[i] = W(from + i) as (lo, hi). Uploads the tables and
 * the set's outer pairs when they are not the context's current ones.
 * ret_kernel_ms (may be NULL): kernel time by CUDA events. */
int sudoku_cuda_w(struct sudoku_cuda *ctx, const struct sudoku_setup *S,
		  uint32_t from, uint32_t to, uint64_t (*w)[2],
		  float *ret_kernel_ms, char *err, size_t errlen);

/* The same with W's pieces (sudoku_w_pieces_cpu): pieces[i * npieces + j]
 * is piece j of gangster from + i, w[i] their sum; the same single kernel
 * run as for W alone (its blocks add into per-piece accumulators), so the
 * pieces cost about nothing. Bit-identical to sudoku_w_pieces_cpu. */
int sudoku_cuda_w_pieces(struct sudoku_cuda *ctx,
			 const struct sudoku_setup *S, uint32_t from,
			 uint32_t to, uint32_t npieces, uint64_t (*pieces)[2],
			 uint64_t (*w)[2], float *ret_kernel_ms, char *err,
			 size_t errlen);

int sudoku_cuda_device_name(struct sudoku_cuda *ctx, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
