/* othello_last.h - exact null-window solvers for the last 1 to 4 empty
 * squares, without move generation: each empty square is tried directly
 * (a move is legal when it flips something), in parity order (squares of
 * quadrants with an odd number of empties first), and a child's value
 * comes straight from the next smaller solver.
 *
 * Every solver takes the position (P to move), a null window (alpha,
 * alpha + 1) and the empty squares in the order to try them, and returns
 * a fail-soft value: > alpha means the score is at least the value, <=
 * alpha at most. oth_last1n is exact. Nodes: one per call of the 2-, 3-
 * and 4-empty solvers (the 1-empty count is a leaf, not a node).
 *
 * Threads: pure functions of their arguments.
 */
#ifndef GPUD_OTHELLO_LAST_H
#define GPUD_OTHELLO_LAST_H

#include "othello.h"

/* The squares around each square: a move there flips only if one of
 * them is the opponent's. */
static const uint64_t OTH_NEIGHBOUR[64] = {
	0x0000000000000302ull, 0x0000000000000705ull, 0x0000000000000e0aull,
	0x0000000000001c14ull, 0x0000000000003828ull, 0x0000000000007050ull,
	0x000000000000e0a0ull, 0x000000000000c040ull, 0x0000000000030203ull,
	0x0000000000070507ull, 0x00000000000e0a0eull, 0x00000000001c141cull,
	0x0000000000382838ull, 0x0000000000705070ull, 0x0000000000e0a0e0ull,
	0x0000000000c040c0ull, 0x0000000003020300ull, 0x0000000007050700ull,
	0x000000000e0a0e00ull, 0x000000001c141c00ull, 0x0000000038283800ull,
	0x0000000070507000ull, 0x00000000e0a0e000ull, 0x00000000c040c000ull,
	0x0000000302030000ull, 0x0000000705070000ull, 0x0000000e0a0e0000ull,
	0x0000001c141c0000ull, 0x0000003828380000ull, 0x0000007050700000ull,
	0x000000e0a0e00000ull, 0x000000c040c00000ull, 0x0000030203000000ull,
	0x0000070507000000ull, 0x00000e0a0e000000ull, 0x00001c141c000000ull,
	0x0000382838000000ull, 0x0000705070000000ull, 0x0000e0a0e0000000ull,
	0x0000c040c0000000ull, 0x0003020300000000ull, 0x0007050700000000ull,
	0x000e0a0e00000000ull, 0x001c141c00000000ull, 0x0038283800000000ull,
	0x0070507000000000ull, 0x00e0a0e000000000ull, 0x00c040c000000000ull,
	0x0302030000000000ull, 0x0705070000000000ull, 0x0e0a0e0000000000ull,
	0x1c141c0000000000ull, 0x3828380000000000ull, 0x7050700000000000ull,
	0xe0a0e00000000000ull, 0xc040c00000000000ull, 0x0203000000000000ull,
	0x0507000000000000ull, 0x0a0e000000000000ull, 0x141c000000000000ull,
	0x2838000000000000ull, 0x5070000000000000ull, 0xa0e0000000000000ull,
	0x40c0000000000000ull,
};

/* Flips of P on x, 0 at once when no opponent disc is next to x. */
static inline uint64_t oth_flips_near(uint64_t P, uint64_t O, int x)
{
	return (OTH_NEIGHBOUR[x] & O) ? oth_flips(P, O, x) : 0;
}

/* Flips along one line of a move at position pos (0..7) of the line,
 * when every other square of the line is filled and pat has bit i set
 * where the mover has a disc: the opponent discs up to the nearest own
 * disc on each side. Squares off a diagonal read as 0 and lie beyond
 * its ends, so they never count. */
static const uint8_t OTH_COUNT_FLIP[8][256] = {
	{
		0, 0, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		3, 3, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		4, 4, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		3, 3, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		5, 5, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		3, 3, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		4, 4, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		3, 3, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		6, 6, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		3, 3, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		4, 4, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		3, 3, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		5, 5, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		3, 3, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		4, 4, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
		3, 3, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0,
	},
	{
		0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		4, 4, 4, 4, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		5, 5, 5, 5, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		4, 4, 4, 4, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
		2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0,
	},
	{
		0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0,
		1, 2, 1, 1, 1, 2, 1, 1, 0, 1, 0, 0, 0, 1, 0, 0,
		2, 3, 2, 2, 2, 3, 2, 2, 0, 1, 0, 0, 0, 1, 0, 0,
		1, 2, 1, 1, 1, 2, 1, 1, 0, 1, 0, 0, 0, 1, 0, 0,
		3, 4, 3, 3, 3, 4, 3, 3, 0, 1, 0, 0, 0, 1, 0, 0,
		1, 2, 1, 1, 1, 2, 1, 1, 0, 1, 0, 0, 0, 1, 0, 0,
		2, 3, 2, 2, 2, 3, 2, 2, 0, 1, 0, 0, 0, 1, 0, 0,
		1, 2, 1, 1, 1, 2, 1, 1, 0, 1, 0, 0, 0, 1, 0, 0,
		4, 5, 4, 4, 4, 5, 4, 4, 0, 1, 0, 0, 0, 1, 0, 0,
		1, 2, 1, 1, 1, 2, 1, 1, 0, 1, 0, 0, 0, 1, 0, 0,
		2, 3, 2, 2, 2, 3, 2, 2, 0, 1, 0, 0, 0, 1, 0, 0,
		1, 2, 1, 1, 1, 2, 1, 1, 0, 1, 0, 0, 0, 1, 0, 0,
		3, 4, 3, 3, 3, 4, 3, 3, 0, 1, 0, 0, 0, 1, 0, 0,
		1, 2, 1, 1, 1, 2, 1, 1, 0, 1, 0, 0, 0, 1, 0, 0,
		2, 3, 2, 2, 2, 3, 2, 2, 0, 1, 0, 0, 0, 1, 0, 0,
		1, 2, 1, 1, 1, 2, 1, 1, 0, 1, 0, 0, 0, 1, 0, 0,
	},
	{
		0, 2, 1, 1, 0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0,
		0, 2, 1, 1, 0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0,
		1, 3, 2, 2, 1, 1, 1, 1, 1, 3, 2, 2, 1, 1, 1, 1,
		0, 2, 1, 1, 0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0,
		2, 4, 3, 3, 2, 2, 2, 2, 2, 4, 3, 3, 2, 2, 2, 2,
		0, 2, 1, 1, 0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0,
		1, 3, 2, 2, 1, 1, 1, 1, 1, 3, 2, 2, 1, 1, 1, 1,
		0, 2, 1, 1, 0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0,
		3, 5, 4, 4, 3, 3, 3, 3, 3, 5, 4, 4, 3, 3, 3, 3,
		0, 2, 1, 1, 0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0,
		1, 3, 2, 2, 1, 1, 1, 1, 1, 3, 2, 2, 1, 1, 1, 1,
		0, 2, 1, 1, 0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0,
		2, 4, 3, 3, 2, 2, 2, 2, 2, 4, 3, 3, 2, 2, 2, 2,
		0, 2, 1, 1, 0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0,
		1, 3, 2, 2, 1, 1, 1, 1, 1, 3, 2, 2, 1, 1, 1, 1,
		0, 2, 1, 1, 0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0,
	},
	{
		0, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
		2, 5, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2,
		2, 5, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2,
		0, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
	},
	{
		0, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 5, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 5, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	},
	{
		0, 5, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 5, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 5, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 5, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	},
	{
		0, 6, 5, 5, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3,
		2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 6, 5, 5, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3,
		2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	},
};

/* The two diagonals through each square. */
static const uint64_t OTH_DIAG9[64] = {
	0x8040201008040201ull, 0x0080402010080402ull, 0x0000804020100804ull,
	0x0000008040201008ull, 0x0000000080402010ull, 0x0000000000804020ull,
	0x0000000000008040ull, 0x0000000000000080ull, 0x4020100804020100ull,
	0x8040201008040201ull, 0x0080402010080402ull, 0x0000804020100804ull,
	0x0000008040201008ull, 0x0000000080402010ull, 0x0000000000804020ull,
	0x0000000000008040ull, 0x2010080402010000ull, 0x4020100804020100ull,
	0x8040201008040201ull, 0x0080402010080402ull, 0x0000804020100804ull,
	0x0000008040201008ull, 0x0000000080402010ull, 0x0000000000804020ull,
	0x1008040201000000ull, 0x2010080402010000ull, 0x4020100804020100ull,
	0x8040201008040201ull, 0x0080402010080402ull, 0x0000804020100804ull,
	0x0000008040201008ull, 0x0000000080402010ull, 0x0804020100000000ull,
	0x1008040201000000ull, 0x2010080402010000ull, 0x4020100804020100ull,
	0x8040201008040201ull, 0x0080402010080402ull, 0x0000804020100804ull,
	0x0000008040201008ull, 0x0402010000000000ull, 0x0804020100000000ull,
	0x1008040201000000ull, 0x2010080402010000ull, 0x4020100804020100ull,
	0x8040201008040201ull, 0x0080402010080402ull, 0x0000804020100804ull,
	0x0201000000000000ull, 0x0402010000000000ull, 0x0804020100000000ull,
	0x1008040201000000ull, 0x2010080402010000ull, 0x4020100804020100ull,
	0x8040201008040201ull, 0x0080402010080402ull, 0x0100000000000000ull,
	0x0201000000000000ull, 0x0402010000000000ull, 0x0804020100000000ull,
	0x1008040201000000ull, 0x2010080402010000ull, 0x4020100804020100ull,
	0x8040201008040201ull,
};
static const uint64_t OTH_DIAG7[64] = {
	0x0000000000000001ull, 0x0000000000000102ull, 0x0000000000010204ull,
	0x0000000001020408ull, 0x0000000102040810ull, 0x0000010204081020ull,
	0x0001020408102040ull, 0x0102040810204080ull, 0x0000000000000102ull,
	0x0000000000010204ull, 0x0000000001020408ull, 0x0000000102040810ull,
	0x0000010204081020ull, 0x0001020408102040ull, 0x0102040810204080ull,
	0x0204081020408000ull, 0x0000000000010204ull, 0x0000000001020408ull,
	0x0000000102040810ull, 0x0000010204081020ull, 0x0001020408102040ull,
	0x0102040810204080ull, 0x0204081020408000ull, 0x0408102040800000ull,
	0x0000000001020408ull, 0x0000000102040810ull, 0x0000010204081020ull,
	0x0001020408102040ull, 0x0102040810204080ull, 0x0204081020408000ull,
	0x0408102040800000ull, 0x0810204080000000ull, 0x0000000102040810ull,
	0x0000010204081020ull, 0x0001020408102040ull, 0x0102040810204080ull,
	0x0204081020408000ull, 0x0408102040800000ull, 0x0810204080000000ull,
	0x1020408000000000ull, 0x0000010204081020ull, 0x0001020408102040ull,
	0x0102040810204080ull, 0x0204081020408000ull, 0x0408102040800000ull,
	0x0810204080000000ull, 0x1020408000000000ull, 0x2040800000000000ull,
	0x0001020408102040ull, 0x0102040810204080ull, 0x0204081020408000ull,
	0x0408102040800000ull, 0x0810204080000000ull, 0x1020408000000000ull,
	0x2040800000000000ull, 0x4080000000000000ull, 0x0102040810204080ull,
	0x0204081020408000ull, 0x0408102040800000ull, 0x0810204080000000ull,
	0x1020408000000000ull, 0x2040800000000000ull, 0x4080000000000000ull,
	0x8000000000000000ull,
};

/* Discs P flips by playing x, the only empty square: each line's
 * discs gathered into a byte (row: a shift; column and diagonals: one
 * multiplication each, no carries) and counted by table. */
static inline int oth_count_last_flip(uint64_t P, int x)
{
	const uint64_t fa = 0x0101010101010101ull;
	int r = x >> 3, c = x & 7;

	return OTH_COUNT_FLIP[c][(P >> (8 * r)) & 0xff] +
	       OTH_COUNT_FLIP[r][(((P >> c) & fa) * 0x0102040810204080ull) >> 56] +
	       OTH_COUNT_FLIP[c][((P & OTH_DIAG9[x]) * fa) >> 56] +
	       OTH_COUNT_FLIP[c][((P & OTH_DIAG7[x]) * fa) >> 56];
}

/* Quadrant (0..3) of a square: column >= 4 is bit 0, row >= 4 bit 1. */
static inline int oth_quadrant(int sq)
{
	return ((sq >> 2) & 1) | ((sq >> 4) & 2);
}

/* Exact score with one empty square x. */
static inline int oth_last1n(uint64_t P, uint64_t O, int x)
{
	int p = oth_popcount(P);
	int n = oth_count_last_flip(P, x);

	if (n)
		return 2 * (p + n + 1) - 64;
	n = oth_count_last_flip(O, x);
	if (n)
		return 2 * (p - n) - 64;
	return p > 31 ? 2 * p - 62 : 2 * p - 64; /* p + o = 63: no draw */
}

static inline int oth_last2(uint64_t P, uint64_t O, int alpha, int x1,
			    int x2, uint64_t *nodes)
{
	uint64_t f;
	int best = -66, v;

	(*nodes)++;
	if ((f = oth_flips_near(P, O, x1))) {
		best = -oth_last1n(O & ~f, P | f | (1ull << x1), x2);
		if (best > alpha)
			return best;
	}
	if ((f = oth_flips_near(P, O, x2))) {
		v = -oth_last1n(O & ~f, P | f | (1ull << x2), x1);
		return v > best ? v : best;
	}
	if (best > -66)
		return best;
	/* P passes: the opponent plays, P's value is the smaller. */
	if ((f = oth_flips_near(O, P, x1))) {
		best = oth_last1n(P & ~f, O | f | (1ull << x1), x2);
		if (best <= alpha)
			return best;
	} else {
		best = 66;
	}
	if ((f = oth_flips_near(O, P, x2))) {
		v = oth_last1n(P & ~f, O | f | (1ull << x2), x1);
		return v < best ? v : best;
	}
	if (best < 66)
		return best;
	return oth_final_score(P, O);
}

static inline int oth_last3(uint64_t P, uint64_t O, int alpha, int x1,
			    int x2, int x3, int passed, uint64_t *nodes)
{
	uint64_t f;
	int best = -66, v;

	(*nodes)++;
	if ((f = oth_flips_near(P, O, x1))) {
		best = -oth_last2(O & ~f, P | f | (1ull << x1), -alpha - 1, x2,
				  x3, nodes);
		if (best > alpha)
			return best;
	}
	if ((f = oth_flips_near(P, O, x2))) {
		v = -oth_last2(O & ~f, P | f | (1ull << x2), -alpha - 1, x1,
			       x3, nodes);
		if (v > best && (best = v) > alpha)
			return best;
	}
	if ((f = oth_flips_near(P, O, x3))) {
		v = -oth_last2(O & ~f, P | f | (1ull << x3), -alpha - 1, x1,
			       x2, nodes);
		if (v > best)
			best = v;
	}
	if (best > -66)
		return best;
	if (passed)
		return -oth_final_score(O, P);
	return -oth_last3(O, P, -alpha - 1, x1, x2, x3, 1, nodes);
}

static inline int oth_last4(uint64_t P, uint64_t O, int alpha, int x1,
			    int x2, int x3, int x4, int passed,
			    uint64_t *nodes)
{
	uint64_t f;
	int best = -66, v;

	(*nodes)++;
	if ((f = oth_flips_near(P, O, x1))) {
		best = -oth_last3(O & ~f, P | f | (1ull << x1), -alpha - 1, x2,
				  x3, x4, 0, nodes);
		if (best > alpha)
			return best;
	}
	if ((f = oth_flips_near(P, O, x2))) {
		v = -oth_last3(O & ~f, P | f | (1ull << x2), -alpha - 1, x1,
			       x3, x4, 0, nodes);
		if (v > best && (best = v) > alpha)
			return best;
	}
	if ((f = oth_flips_near(P, O, x3))) {
		v = -oth_last3(O & ~f, P | f | (1ull << x3), -alpha - 1, x1,
			       x2, x4, 0, nodes);
		if (v > best && (best = v) > alpha)
			return best;
	}
	if ((f = oth_flips_near(P, O, x4))) {
		v = -oth_last3(O & ~f, P | f | (1ull << x4), -alpha - 1, x1,
			       x2, x3, 0, nodes);
		if (v > best)
			best = v;
	}
	if (best > -66)
		return best;
	if (passed)
		return -oth_final_score(O, P);
	return -oth_last4(O, P, -alpha - 1, x1, x2, x3, x4, 1, nodes);
}

/* The 4-empty null-window solver from a bare position (exactly 4 empty
 * squares): the squares sorted by parity. With quadrant counts 1+3 or
 * 1+1+2 the lone squares come first; 2+2 and 4 keep square order. */
static inline int oth_solve4(uint64_t P, uint64_t O, int alpha,
			     uint64_t *nodes)
{
	uint64_t E = ~(P | O);
	int x[4], q[4], cnt[4] = {0, 0, 0, 0}, k = 0;

	for (int i = 0; i < 4; i++) {
		x[i] = oth_ctz(E);
		E &= E - 1;
		q[i] = oth_quadrant(x[i]);
		cnt[q[i]]++;
	}
	int s[4];
	for (int i = 0; i < 4; i++)
		if (cnt[q[i]] & 1)
			s[k++] = x[i];
	for (int i = 0; i < 4; i++)
		if (!(cnt[q[i]] & 1))
			s[k++] = x[i];
	return oth_last4(P, O, alpha, s[0], s[1], s[2], s[3], 0, nodes);
}

#endif
