/* bench_util.h - what the benchmarks (bench_*.c) share: the clock (clock.h)
 * and an order for qsort, to take the median, fastest and slowest of the runs.
 * Header only: each benchmark stays one file. */
#ifndef GPUD_BENCH_UTIL_H
#define GPUD_BENCH_UTIL_H

#include "clock.h" /* gclock_mono: seconds on the monotonic clock */

/* qsort's order for doubles and floats, smallest first. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static inline int bench_cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

#endif
