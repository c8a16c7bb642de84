/* othello_eval.c - the static evaluation: square weights (corners good,
 * the squares next to an empty corner bad) and mobility. */
#include "othello.h"
#include "othello_eval.h"

/* Per square, in 1/OTHELLO_EVAL_SCALE discs. */
static const int8_t SQUARE_WEIGHT[64] = {
	 80, -20,  10,   5,   5,  10, -20,  80,
	-20, -40,  -4,  -2,  -2,  -4, -40, -20,
	 10,  -4,   2,   1,   1,   2,  -4,  10,
	  5,  -2,   1,   0,   0,   1,  -2,   5,
	  5,  -2,   1,   0,   0,   1,  -2,   5,
	 10,  -4,   2,   1,   1,   2,  -4,  10,
	-20, -40,  -4,  -2,  -2,  -4, -40, -20,
	 80, -20,  10,   5,   5,  10, -20,  80,
};

int othello_eval(uint64_t P, uint64_t O)
{
	int v = 0;

	for (uint64_t b = P; b; b &= b - 1)
		v += SQUARE_WEIGHT[oth_ctz(b)];
	for (uint64_t b = O; b; b &= b - 1)
		v -= SQUARE_WEIGHT[oth_ctz(b)];
	v += 8 * (oth_popcount(oth_moves(P, O)) - oth_popcount(oth_moves(O, P)));
	if (v > 64 * OTHELLO_EVAL_SCALE)
		v = 64 * OTHELLO_EVAL_SCALE;
	if (v < -64 * OTHELLO_EVAL_SCALE)
		v = -64 * OTHELLO_EVAL_SCALE;
	return v;
}
