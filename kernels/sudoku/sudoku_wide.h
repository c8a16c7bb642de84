/* sudoku_wide.h - unsigned 256-bit integers for the exact Sudoku totals
 * (the 4x3 total needs 156 bits). Four little-endian 64-bit limbs; every
 * operation reports overflow instead of wrapping silently.
 *
 * Threads: pure functions. Ownership: callers own every buffer. */
#ifndef GPUD_SUDOKU_WIDE_H
#define GPUD_SUDOKU_WIDE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct u256 {
	uint64_t w[4]; /* w[0] least significant */
};

#define U256_DECLEN 80 /* enough for 2^256 - 1 (78 digits) and the NUL */

struct u256 u256_of(uint64_t lo, uint64_t hi);
int u256_is_zero(const struct u256 *a);
int u256_cmp(const struct u256 *a, const struct u256 *b);
/* *a += b; returns 1 on overflow (then *a is the wrapped value). */
int u256_add(struct u256 *a, const struct u256 *b);
/* *a *= m; returns 1 on overflow. */
int u256_mul_u64(struct u256 *a, uint64_t m);
/* *ret = a * b; returns 1 on overflow. */
int u256_mul(const struct u256 *a, const struct u256 *b, struct u256 *ret);
/* *a /= d (d != 0); returns the remainder. */
uint64_t u256_div_u64(struct u256 *a, uint64_t d);
/* Decimal text into buf (at least U256_DECLEN bytes). */
void u256_to_dec(const struct u256 *a, char *buf);
/* Parse plain decimal digits; returns 0 or -1 (empty, non-digit, too big). */
int u256_from_dec(const char *s, struct u256 *ret);
/* Number of significant bits. */
int u256_bits(const struct u256 *a);

#ifdef __cplusplus
}
#endif

#endif
