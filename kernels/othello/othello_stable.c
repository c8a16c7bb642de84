/* othello_stable.c - discs that can never flip, for the stability cutoff:
 * P's stable discs bound the opponent's final score from above.
 *
 * A disc flips only along a line through it on which a move is played
 * later; a full line gets no move, and a run of P's discs that ends at the
 * board edge or at a stable disc of P cannot be outflanked on that line.
 * So a disc is stable when each of its 4 lines is full or has such a
 * neighbour; the set grows from the edges and corners to a fixpoint.
 */
#include "othello_deep.h"

#define FILE_A 0x0101010101010101ull
#define FILE_H 0x8080808080808080ull
#define RANK_1 0x00000000000000ffull
#define RANK_8 0xff00000000000000ull
#define BORDER (FILE_A | FILE_H | RANK_1 | RANK_8)

/* Squares whose line along the direction (shift sh; up_mask: the squares
 * a shift up may reach without wrapping, down_mask the same down) holds
 * an empty square: the empties spread both ways along the line, by
 * doubling (1, 2, 4 squares: a run of 7 in 3 steps). */
static uint64_t open_lines(uint64_t E, int sh, uint64_t up_mask,
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

uint64_t oth_stable(uint64_t P, uint64_t O)
{
	uint64_t E = ~(P | O);
	/* Per direction: the full lines and the squares with a neighbour
	 * off the board. */
	uint64_t h = ~open_lines(E, 1, ~FILE_A, ~FILE_H) | FILE_A | FILE_H;
	uint64_t v = ~open_lines(E, 8, ~0ull, ~0ull) | RANK_1 | RANK_8;
	uint64_t d9 = ~open_lines(E, 9, ~FILE_A, ~FILE_H) | BORDER;
	uint64_t d7 = ~open_lines(E, 7, ~FILE_H, ~FILE_A) | BORDER;
	uint64_t s = 0, old;

	do {
		old = s;
		uint64_t sh = ((s << 1) & ~FILE_A) | ((s >> 1) & ~FILE_H);
		uint64_t sv = (s << 8) | (s >> 8);
		uint64_t s9 = ((s << 9) & ~FILE_A) | ((s >> 9) & ~FILE_H);
		uint64_t s7 = ((s << 7) & ~FILE_H) | ((s >> 7) & ~FILE_A);
		s = P & (h | sh) & (v | sv) & (d9 | s9) & (d7 | s7);
	} while (s != old);
	return s;
}
