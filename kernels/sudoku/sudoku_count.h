/* sudoku_count.h - exact totals of the Sudoku workload (sudoku.h 8.). */
#ifndef GPUD_SUDOKU_COUNT_H
#define GPUD_SUDOKU_COUNT_H

#include <stdint.h>

#include "sudoku_wide.h"

/* The factor in front of the sum: 2^R K (R!)^2 (C == 2) or 6^R K (R!)^3. */
int sudoku_factor(int R, int C, uint64_t K, struct u256 *ret);
/* members * cnt * W (C == 3, w = W as lo, hi) or members * cnt^2 (C == 2;
 * w unused, may be NULL). GERR_TOOBIG on overflow. */
int sudoku_term(uint64_t members, uint32_t cnt, const uint64_t w[2], int C,
		struct u256 *ret);

#endif
