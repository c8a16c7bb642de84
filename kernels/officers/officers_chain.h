/* officers_chain.h - the arithmetic of the chain candidate kernel, shared
 * by the CUDA kernel (officers.cu) and its CPU emulation in the unit test.
 *
 * The chain kernel splits the options of G(m) by the rare position r of
 * their pair (m-1-r, r):
 *   far    r >= NEAR: known NEAR steps ahead, so producer CTAs on other SMs
 *          boil them down to Z(m), the 6 smallest common values not among
 *          them (OFF_NZ);
 *   helper 7 <= index < jn (16 <= r < NEAR): helper warps drop the Z
 *          values these hit and keep the first 3 survivors Y(m); their
 *          newest input is 17 steps old, time enough to hand it over;
 *   chain  the first 7 rare positions, r = 0, 1, 2, 4, 5, 8, 12 (lags 1, 2,
 *          3, 5, 6, 9, 13; fixed by the game, checked against the table):
 *          the one warp that walks m in order keeps their values in
 *          registers and takes the first Y not hit by them. G(m-1) and
 *          G(m-2) enter last, through compares and selects.
 * When fewer values survive than the pick needs, the chain computes G(m)
 * from all rare positions instead (the slow path); the result is the same.
 *
 * Packing: three 9-bit values in 10-bit fields of a word (bits 0, 10, 20).
 * off_nothit(w, x) has bit 10f+9 set exactly when field f differs from x
 * (both below 512: the field's difference plus 511 carries into bit 9 and
 * never past it). Z(m) sits in two words, Z0 Z2 Z4 and Z1 Z3 Z5, so that
 * the not-hit bits of both, the second shifted by one, are in Z order:
 * bits 9, 10, 19, 20, 29, 30. Missing values (fewer than 6 free commons)
 * repeat the last one; Z0 = 0 (a rare value, never a candidate) means none.
 *
 * Everything here is a pure function of its arguments.
 */
#ifndef GPUD_OFFICERS_CHAIN_H
#define GPUD_OFFICERS_CHAIN_H

#include <stdint.h>

#ifdef __CUDACC__
#define OFF_FN static __host__ __device__ __forceinline__
#else
#define OFF_FN static inline
#endif

/* Index of the lowest set bit of a non-zero word. */
#ifdef __CUDA_ARCH__
#define OFF_CTZ(x) ((unsigned)__ffs(x) - 1u)
#else
#define OFF_CTZ(x) ((unsigned)__builtin_ctz(x))
#endif

#define OFF_REP 0x00100401u   /* a value copied into the three fields */
#define OFF_ADD 0x1ff7fdffu   /* 511 in each field */
#define OFF_NH 0x20080200u    /* the not-hit bits 9, 19, 29 */
#define OFF_FIELDS 0x3fffffffu
#define OFF_NZ 6u             /* far candidates per position */
#define OFF_CHAIN_TERMS 7u    /* rare indices the chain warp takes */
/* Their positions and values (Officers' first rare positions). */
#define OFF_CHAIN_POS {0u, 1u, 2u, 4u, 5u, 8u, 12u}
#define OFF_CHAIN_VAL {0u, 0u, 1u, 0u, 1u, 1u, 0u}

OFF_FN uint32_t off_nothit(uint32_t w, uint32_t x)
{
	return (w ^ (x * OFF_REP)) + OFF_ADD;
}

/* Value i (0..OFF_NZ-1) into the pair of words (w[0], w[1]). */
OFF_FN void off_z_put(uint32_t *w0, uint32_t *w1, unsigned i, unsigned v)
{
	if (i & 1)
		*w1 |= (uint32_t)v << (10 * (i >> 1));
	else
		*w0 |= (uint32_t)v << (10 * (i >> 1));
}

/* The value behind not-hit bit b (9, 10, 19, 20, 29 or 30) of a Z pair. */
OFF_FN unsigned off_z_at(uint32_t w0, uint32_t w1, unsigned b)
{
	unsigned s = b - 9;
	return ((s & 1 ? w1 : w0) >> (s & ~1u)) & 511u;
}

/* The helper's record of m from Z (w0, w1) and the not-hit bits u of its
 * terms (AND over them of the combined bits): Y0 Y1 Y2 in fields, bit 30
 * set when the chain must take the slow path (nothing survived, or Z is
 * empty). */
OFF_FN uint32_t off_helper_record(uint32_t w0, uint32_t w1, uint32_t u)
{
	uint32_t rec = 0;
	unsigned last = 0;

	if ((w0 & 511u) == 0 || u == 0)
		return 1u << 30;
	for (unsigned k = 0; k < 3; k++) {
		if (u) {
			last = off_z_at(w0, w1, OFF_CTZ(u));
			u &= u - 1;
		}
		rec |= (uint32_t)last << (10 * k);
	}
	return rec;
}

/* Combined not-hit bits of one term x against the Z pair. */
OFF_FN uint32_t off_z_nothit(uint32_t w0, uint32_t w1, uint32_t x)
{
	return (off_nothit(w0, x) & OFF_NH) |
	       ((off_nothit(w1, x) & OFF_NH) << 1);
}

/* The chain's pick: x1 and x2 are the options of lags 1 and 2 (G(m-1) ^
 * G(0), G(m-2) ^ G(1)), e the AND of OFF_NH and off_nothit(rec &
 * OFF_FIELDS, x) over the options x of the chain's other terms (lags 3 and
 * more, known steps ahead). The survivors of e are tested against x1 and
 * x2 by equality, so G(m-1) enters through three compares and two selects.
 * Returns G(m), or sets *slow when the record cannot decide it. */
OFF_FN unsigned off_chain_pick(uint32_t rec, unsigned x1, unsigned x2,
			       uint32_t e, int *slow)
{
	uint32_t y = rec & OFF_FIELDS;
	unsigned f0 = y & 511u, f1 = (y >> 10) & 511u, f2 = (y >> 20) & 511u;
	int b0 = (e >> 9) & 1, b1 = (e >> 19) & 1, b2 = (e >> 29) & 1;
	int n = b0 + b1 + b2;
	unsigned fa = b0 ? f0 : b1 ? f1 : f2;     /* first survivor */
	unsigned fb = b0 && b1 ? f1 : f2;         /* second, when n >= 2 */
	int pa = n >= 1 && fa != x2, pb = n >= 2 && fb != x2;
	int pc = n == 3 && f2 != x2;
	int oka = pa && fa != x1, okb = pb && fb != x1, okc = pc && f2 != x1;

	*slow = (rec >> 30) != 0 || !(oka || okb || okc);
	return oka ? fa : okb ? fb : f2;
}

#endif
