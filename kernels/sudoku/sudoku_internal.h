/* sudoku_internal.h - helpers shared by the Sudoku workload's C files. */
#ifndef GPUD_SUDOKU_INTERNAL_H
#define GPUD_SUDOKU_INTERNAL_H

#include <stdint.h>

/* Run fn(ctx, i) for i in [0, n) on `threads` threads (the caller's
 * included); returns when all are done. */
void sudoku_parallel(int threads, uint64_t n, void (*fn)(void *, uint64_t),
		     void *ctx);

#endif
