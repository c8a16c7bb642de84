/* othello_vec.h - AVX2 move generation and flips for the CPU solvers,
 * included by othello.h when the translation unit is built for AVX2
 * (the exact search's library: meson's cpu_level, x86-64-v3) and not by
 * CUDA; everything else keeps the plain 64-bit versions, which give the
 * same bitboards (tests/unit/test_othello_vec.c checks both against a
 * square-by-square reference).
 *
 * The four line directions (1: row, 8: column, 9 and 7: diagonals) sit
 * in the four 64-bit lanes of one register, so each step handles all
 * four at once; the opposite directions are a second register shifted
 * the other way. Columns A and H are masked out of the opponent's runs
 * in the lanes with a horizontal component, as in the plain versions.
 *
 * Threads: pure functions of their arguments.
 */
#ifndef GPUD_OTHELLO_VEC_H
#define GPUD_OTHELLO_VEC_H

#include <immintrin.h>
#include <stdint.h>

/* Four 64-bit constants, lane 0 first (row, column, diagonal 9,
 * diagonal 7). */
#define OTH_V4(a, b, c, d)                                                  \
	_mm256_set_epi64x((long long)(d), (long long)(c), (long long)(b),   \
			  (long long)(a))

/* Shift of each lane, and the opponent mask of each lane. */
static inline __m256i oth_vec_shifts(void)
{
	return _mm256_set_epi64x(7, 9, 8, 1);
}

static inline __m256i oth_vec_runs(uint64_t O)
{
	const uint64_t in = O & 0x7e7e7e7e7e7e7e7eull;

	return _mm256_set_epi64x((long long)in, (long long)in, (long long)O,
				 (long long)in);
}

/* OR of the four lanes. */
static inline uint64_t oth_vec_or4(__m256i v)
{
	__m128i h = _mm_or_si128(_mm256_castsi256_si128(v),
				 _mm256_extracti128_si256(v, 1));
	return (uint64_t)_mm_cvtsi128_si64(h) |
	       (uint64_t)_mm_extract_epi64(h, 1);
}

/* The squares one step beyond each opponent run (m) that starts next to
 * a disc of p, up and down each lane's line, OR'ed. The runs grow by
 * doubling: 1 square, then 1, 2 and 4 more (a run is at most 6); pu and
 * pd mark the squares whose 1 (then 3) predecessors on the line are
 * opponent discs too. */
static inline __m256i oth_vec_beyond(__m256i p, __m256i m, __m256i sh)
{
	const __m256i sh2 = _mm256_add_epi64(sh, sh);
	const __m256i sh4 = _mm256_add_epi64(sh2, sh2);
	__m256i u, d, pu, pd;

	u = _mm256_and_si256(m, _mm256_sllv_epi64(p, sh));
	d = _mm256_and_si256(m, _mm256_srlv_epi64(p, sh));
	pu = _mm256_and_si256(m, _mm256_sllv_epi64(m, sh));
	pd = _mm256_and_si256(m, _mm256_srlv_epi64(m, sh));
	u = _mm256_or_si256(u, _mm256_and_si256(m, _mm256_sllv_epi64(u, sh)));
	d = _mm256_or_si256(d, _mm256_and_si256(m, _mm256_srlv_epi64(d, sh)));
	u = _mm256_or_si256(u, _mm256_and_si256(pu, _mm256_sllv_epi64(u, sh2)));
	d = _mm256_or_si256(d, _mm256_and_si256(pd, _mm256_srlv_epi64(d, sh2)));
	pu = _mm256_and_si256(pu, _mm256_sllv_epi64(pu, sh2));
	pd = _mm256_and_si256(pd, _mm256_srlv_epi64(pd, sh2));
	u = _mm256_or_si256(u, _mm256_and_si256(pu, _mm256_sllv_epi64(u, sh4)));
	d = _mm256_or_si256(d, _mm256_and_si256(pd, _mm256_srlv_epi64(d, sh4)));
	return _mm256_or_si256(_mm256_sllv_epi64(u, sh),
			       _mm256_srlv_epi64(d, sh));
}

/* Legal moves: the empty squares beyond a run of O next to P. */
static inline uint64_t oth_moves_vec(uint64_t P, uint64_t O)
{
	const __m256i sh = oth_vec_shifts(), m = oth_vec_runs(O);
	const __m256i p = _mm256_set1_epi64x((long long)P);
	__m256i u;

	u = oth_vec_beyond(p, m, sh);
	return oth_vec_or4(u) & ~(P | O);
}

/* oth_moves_vec, and in *ret_pot the empty squares next to an opponent
 * disc (P's potential mobility), from the same registers. */
static inline uint64_t oth_moves_pot_vec(uint64_t P, uint64_t O,
					 uint64_t *ret_pot)
{
	const __m256i sh = oth_vec_shifts(), m = oth_vec_runs(O);
	const __m256i p = _mm256_set1_epi64x((long long)P);
	const __m256i o = _mm256_set1_epi64x((long long)O);
	/* Squares a one-step shift up (down) reaches without wrapping. */
	const __m256i um = OTH_V4(0xfefefefefefefefeull, ~0ull,
				  0xfefefefefefefefeull, 0x7f7f7f7f7f7f7f7full);
	const __m256i dm = OTH_V4(0x7f7f7f7f7f7f7f7full, ~0ull,
				  0x7f7f7f7f7f7f7f7full, 0xfefefefefefefefeull);
	__m256i u, q;

	u = oth_vec_beyond(p, m, sh);
	q = _mm256_or_si256(_mm256_and_si256(um, _mm256_sllv_epi64(o, sh)),
			    _mm256_and_si256(dm, _mm256_srlv_epi64(o, sh)));
	/* Both ORs of four lanes at once: moves in lane 0, potential in 1. */
	__m128i a = _mm_or_si128(_mm256_castsi256_si128(u),
				 _mm256_extracti128_si256(u, 1));
	__m128i b = _mm_or_si128(_mm256_castsi256_si128(q),
				 _mm256_extracti128_si256(q, 1));
	__m128i r = _mm_or_si128(_mm_unpacklo_epi64(a, b),
				 _mm_unpackhi_epi64(a, b));
	const uint64_t E = ~(P | O);
	*ret_pot = (uint64_t)_mm_extract_epi64(r, 1) & E;
	return (uint64_t)_mm_cvtsi128_si64(r) & E;
}

/* Flips of P on sq (empty), the plain oth_flips_line in four lanes. The
 * line masks run past the board and wrap, harmless for the reason
 * othello.h gives. Above sq: the first non-opponent square by a carry.
 * Below sq: the highest non-opponent square, found by smearing the
 * non-opponent squares down the line (1, 2, 4 steps) and keeping the
 * square whose next one up is not set. */
static inline uint64_t oth_flips_vec(uint64_t P, uint64_t O, int sq)
{
	const __m256i sh = oth_vec_shifts(), om = oth_vec_runs(O);
	const __m256i p = _mm256_set1_epi64x((long long)P);
	const __m256i one = _mm256_set1_epi64x(1);
	const __m256i zero = _mm256_setzero_si256();
	const __m256i up = _mm256_sllv_epi64(
		OTH_V4(0x00000000000000feull, 0x0101010101010100ull,
		       0x8040201008040200ull, 0x0002040810204080ull),
		_mm256_set1_epi64x(sq));
	const __m256i down = _mm256_srlv_epi64(
		OTH_V4(0x7f00000000000000ull, 0x0080808080808080ull,
		       0x0040201008040201ull, 0x0102040810204000ull),
		_mm256_set1_epi64x(63 - sq));
	__m256i out, f, e, t;

	/* above: out = up & ((om | ~up) + 1) & P */
	out = _mm256_add_epi64(_mm256_or_si256(om, _mm256_xor_si256(
				       up, _mm256_set1_epi64x(-1))), one);
	out = _mm256_and_si256(_mm256_and_si256(out, up), p);
	f = _mm256_andnot_si256(_mm256_cmpeq_epi64(out, zero),
				_mm256_and_si256(_mm256_sub_epi64(out, one),
						 up));
	/* below */
	e = _mm256_andnot_si256(om, down);
	e = _mm256_or_si256(e, _mm256_srlv_epi64(e, sh));
	t = _mm256_add_epi64(sh, sh);
	e = _mm256_or_si256(e, _mm256_srlv_epi64(e, t));
	t = _mm256_add_epi64(t, t);
	e = _mm256_or_si256(e, _mm256_srlv_epi64(e, t));
	out = _mm256_and_si256(_mm256_andnot_si256(
				       _mm256_srlv_epi64(e, sh), e), p);
	out = _mm256_and_si256(out, down);
	f = _mm256_or_si256(f, _mm256_and_si256(
				       _mm256_sub_epi64(zero, _mm256_add_epi64(
							       out, out)),
				       down));
	return oth_vec_or4(f);
}

#endif
