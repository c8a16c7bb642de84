/* othello_stable.h - discs that can never flip (othello_deep.h's
 * oth_stable), for the stability cutoff: P's stable discs bound the
 * opponent's final score from above.
 *
 * A disc flips only along a line through it on which a move is played
 * later; a full line gets no move, and a run of P's discs that ends at the
 * board edge or at a stable disc of P cannot be outflanked on that line.
 * So a disc is stable when each of its 4 lines is full or has such a
 * neighbour; the set grows from the edges and corners to a fixpoint.
 *
 * Two versions with the same result: plain 64-bit, and one that finds
 * the full lines with the four directions in the four lanes of an AVX2
 * register (built where the translation unit has AVX2: the exact
 * solver's cpu_level). The search's node counts
 * depend on the exact set, so both must agree bit for bit
 * (tests/unit/test_othello_vec.c).
 *
 * Threads: pure functions of their arguments.
 */
#ifndef GPUD_OTHELLO_STABLE_H
#define GPUD_OTHELLO_STABLE_H

#include <stdint.h>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#define OTH_FILE_A 0x0101010101010101ull
#define OTH_FILE_H 0x8080808080808080ull
#define OTH_RANK_1 0x00000000000000ffull
#define OTH_RANK_8 0xff00000000000000ull
#define OTH_BORDER (OTH_FILE_A | OTH_FILE_H | OTH_RANK_1 | OTH_RANK_8)

/* Squares whose line along the direction (shift sh; up_mask: the squares
 * a shift up may reach without wrapping, down_mask the same down) holds
 * an empty square: the empties spread both ways along the line, by
 * doubling (1, 2, 4 squares: a run of 7 in 3 steps). */
static inline uint64_t oth_open_lines(uint64_t E, int sh, uint64_t up_mask,
				      uint64_t down_mask)
{
	uint64_t u = E, d = E, pu = up_mask, pd = down_mask;

	u |= pu & (u << sh);
	d |= pd & (d >> sh);
	pu &= pu << sh;
	pd &= pd >> sh;
	u |= pu & (u << 2 * sh);
	d |= pd & (d >> 2 * sh);
	pu &= pu << 2 * sh;
	pd &= pd >> 2 * sh;
	u |= pu & (u << 4 * sh);
	d |= pd & (d >> 4 * sh);
	return u | d;
}

/* The fixpoint from no stable disc, given per direction the squares
 * whose line is full or that touch the edge across it. */
static inline uint64_t oth_stable_grow(uint64_t P, uint64_t h, uint64_t v,
				       uint64_t d9, uint64_t d7)
{
	uint64_t s = 0, old;

	do {
		old = s;
		uint64_t sh = ((s << 1) & ~OTH_FILE_A) |
			      ((s >> 1) & ~OTH_FILE_H);
		uint64_t sv = (s << 8) | (s >> 8);
		uint64_t s9 = ((s << 9) & ~OTH_FILE_A) |
			      ((s >> 9) & ~OTH_FILE_H);
		uint64_t s7 = ((s << 7) & ~OTH_FILE_H) |
			      ((s >> 7) & ~OTH_FILE_A);
		s = P & (h | sh) & (v | sv) & (d9 | s9) & (d7 | s7);
	} while (s != old);
	return s;
}

static inline uint64_t oth_stable_plain(uint64_t P, uint64_t O)
{
	uint64_t E = ~(P | O);
	/* Per direction: the full lines and the squares with a neighbour
	 * off the board. */
	uint64_t h = ~oth_open_lines(E, 1, ~OTH_FILE_A, ~OTH_FILE_H) |
		     OTH_FILE_A | OTH_FILE_H;
	uint64_t v = ~oth_open_lines(E, 8, ~0ull, ~0ull) | OTH_RANK_1 |
		     OTH_RANK_8;
	uint64_t d9 = ~oth_open_lines(E, 9, ~OTH_FILE_A, ~OTH_FILE_H) |
		      OTH_BORDER;
	uint64_t d7 = ~oth_open_lines(E, 7, ~OTH_FILE_H, ~OTH_FILE_A) |
		      OTH_BORDER;

	return oth_stable_grow(P, h, v, d9, d7);
}

#ifdef __AVX2__
#define OTH_LL(x) ((long long)(x))

/* The same: the full lines of the four directions in the lanes (row,
 * column, diagonal 9, diagonal 7) of one register, then the fixpoint in
 * 64-bit registers (its steps depend on each other: a lane shuffle per
 * step costs more than it saves; FFO #40-#44, bench/othello.md round
 * 14). */
static inline uint64_t oth_stable_vec(uint64_t P, uint64_t O)
{
	const __m256i sh1 = _mm256_set_epi64x(7, 9, 8, 1);
	const __m256i sh2 = _mm256_add_epi64(sh1, sh1);
	const __m256i sh4 = _mm256_add_epi64(sh2, sh2);
	const __m256i um = _mm256_set_epi64x(
		OTH_LL(~OTH_FILE_H), OTH_LL(~OTH_FILE_A), -1,
		OTH_LL(~OTH_FILE_A));
	const __m256i dm = _mm256_set_epi64x(
		OTH_LL(~OTH_FILE_A), OTH_LL(~OTH_FILE_H), -1,
		OTH_LL(~OTH_FILE_H));
	const __m256i edge = _mm256_set_epi64x(
		OTH_LL(OTH_BORDER), OTH_LL(OTH_BORDER),
		OTH_LL(OTH_RANK_1 | OTH_RANK_8),
		OTH_LL(OTH_FILE_A | OTH_FILE_H));
	const __m256i e = _mm256_set1_epi64x(OTH_LL(~(P | O)));
	__m256i u = e, d = e, pu = um, pd = dm, full;

	u = _mm256_or_si256(u, _mm256_and_si256(pu, _mm256_sllv_epi64(u, sh1)));
	d = _mm256_or_si256(d, _mm256_and_si256(pd, _mm256_srlv_epi64(d, sh1)));
	pu = _mm256_and_si256(pu, _mm256_sllv_epi64(pu, sh1));
	pd = _mm256_and_si256(pd, _mm256_srlv_epi64(pd, sh1));
	u = _mm256_or_si256(u, _mm256_and_si256(pu, _mm256_sllv_epi64(u, sh2)));
	d = _mm256_or_si256(d, _mm256_and_si256(pd, _mm256_srlv_epi64(d, sh2)));
	pu = _mm256_and_si256(pu, _mm256_sllv_epi64(pu, sh2));
	pd = _mm256_and_si256(pd, _mm256_srlv_epi64(pd, sh2));
	u = _mm256_or_si256(u, _mm256_and_si256(pu, _mm256_sllv_epi64(u, sh4)));
	d = _mm256_or_si256(d, _mm256_and_si256(pd, _mm256_srlv_epi64(d, sh4)));
	/* full lines or an edge: ~(u | d) | edge */
	full = _mm256_or_si256(_mm256_andnot_si256(_mm256_or_si256(u, d),
						   _mm256_set1_epi64x(-1)),
			       edge);
	uint64_t f[4];

	_mm256_storeu_si256((__m256i *)f, full);
	return oth_stable_grow(P, f[0], f[1], f[2], f[3]);
}
#endif

/* The version the solver uses. */
static inline uint64_t oth_stable_inline(uint64_t P, uint64_t O)
{
#ifdef __AVX2__
	return oth_stable_vec(P, O);
#else
	return oth_stable_plain(P, O);
#endif
}

#endif
