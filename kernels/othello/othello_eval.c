/* othello_eval.c - the pattern evaluation (othello_evalw.h): the board
 * turned 4 ways, each pattern's index from its squares' bits (shifts and,
 * for the diagonals, a multiplication that gathers one bit per column),
 * base 3 by table, and one weight lookup per pattern instance. */
#include "othello.h"
#include "othello_eval.h"
#include "othello_evalw.h"

/* Columns mirrored (A <-> H). */
static inline uint64_t eval_flip_h(uint64_t b)
{
	b = ((b >> 1) & 0x5555555555555555ull) | ((b & 0x5555555555555555ull) << 1);
	b = ((b >> 2) & 0x3333333333333333ull) | ((b & 0x3333333333333333ull) << 2);
	return ((b >> 4) & 0x0f0f0f0f0f0f0f0full) | ((b & 0x0f0f0f0f0f0f0f0full) << 4);
}

/* Rows and columns swapped (A1-H8 diagonal fixed). */
static inline uint64_t eval_transpose(uint64_t b)
{
	uint64_t t;

	t = 0x0f0f0f0f00000000ull & (b ^ (b << 28));
	b ^= t ^ (t >> 28);
	t = 0x3333000033330000ull & (b ^ (b << 14));
	b ^= t ^ (t >> 14);
	t = 0x5500550055005500ull & (b ^ (b << 7));
	return b ^ t ^ (t >> 7);
}

/* The 4 turns, as othello_evalw_turn numbers them. */
static inline void eval_turns(uint64_t b, uint64_t t[4])
{
	uint64_t tr = eval_transpose(b);

	t[0] = b;
	t[1] = eval_flip_h(tr);
	t[2] = __builtin_bswap64(eval_flip_h(b));
	t[3] = __builtin_bswap64(tr);
}

#define EVAL_COLS 0x0101010101010101ull
#define EVAL_E2X(b) (((b) & 0xff) | (((b) >> 1) & 0x100) | (((b) >> 5) & 0x200))
#define EVAL_C3(b) (((b) & 7) | (((b) >> 5) & 0x38) | (((b) >> 10) & 0x1c0))
#define EVAL_DIAG(b, mask, sh) ((((b) & (mask)) * EVAL_COLS) >> (sh))

int othello_eval(uint64_t P, uint64_t O)
{
	const uint16_t *t3 = othello_eval_t3;
	const int16_t *w;
	uint64_t p[4], o[4];
	int v, mp, mo, e = 64 - oth_popcount(P | O);

	/* A game has 60 empties at most; fewer discs than at the start still
	 * read a table. */
	w = othello_eval_w[othello_eval_phase_of[e < 60 ? e : 60]];
	eval_turns(P, p);
	eval_turns(O, o);
	v = w[OTH_EVALW_OFF_BIAS];
#define EVAL_AT(off, pb, ob) v += w[(off) + t3[pb] + 2 * t3[ob]]
	for (int r = 0; r < 4; r++) {
		uint64_t a = p[r], b = o[r];
		EVAL_AT(OTH_EVALW_OFF_E2X, EVAL_E2X(a), EVAL_E2X(b));
		EVAL_AT(OTH_EVALW_OFF_C3, EVAL_C3(a), EVAL_C3(b));
		EVAL_AT(OTH_EVALW_OFF_L2, (a >> 8) & 0xff, (b >> 8) & 0xff);
		EVAL_AT(OTH_EVALW_OFF_L3, (a >> 16) & 0xff, (b >> 16) & 0xff);
		EVAL_AT(OTH_EVALW_OFF_L4, (a >> 24) & 0xff, (b >> 24) & 0xff);
		EVAL_AT(OTH_EVALW_OFF_D7, EVAL_DIAG(a, 0x0080402010080402ull, 57),
			EVAL_DIAG(b, 0x0080402010080402ull, 57));
		EVAL_AT(OTH_EVALW_OFF_D6, EVAL_DIAG(a, 0x0000804020100804ull, 58),
			EVAL_DIAG(b, 0x0000804020100804ull, 58));
		EVAL_AT(OTH_EVALW_OFF_D5, EVAL_DIAG(a, 0x0000008040201008ull, 59),
			EVAL_DIAG(b, 0x0000008040201008ull, 59));
		EVAL_AT(OTH_EVALW_OFF_D4, EVAL_DIAG(a, 0x0000000080402010ull, 60),
			EVAL_DIAG(b, 0x0000000080402010ull, 60));
	}
	for (int r = 0; r < 2; r++)
		EVAL_AT(OTH_EVALW_OFF_D8, EVAL_DIAG(p[r], 0x8040201008040201ull, 56),
			EVAL_DIAG(o[r], 0x8040201008040201ull, 56));
#undef EVAL_AT
	mp = oth_popcount(oth_moves(P, O));
	mo = oth_popcount(oth_moves(O, P));
	v += w[OTH_EVALW_OFF_MOBP + (mp < OTH_EVALW_MOB ? mp : OTH_EVALW_MOB - 1)];
	v += w[OTH_EVALW_OFF_MOBO + (mo < OTH_EVALW_MOB ? mo : OTH_EVALW_MOB - 1)];
	for (int c = 0; c < OTH_EVALW_SQ; c++)
		v += w[OTH_EVALW_OFF_SQ + c] * oth_popcount(P & OTH_EVALW_SQ_MASK[c]) +
		     w[OTH_EVALW_OFF_SQ + OTH_EVALW_SQ + c] * oth_popcount(O & OTH_EVALW_SQ_MASK[c]);
	if (v > 64 * OTHELLO_EVAL_SCALE)
		v = 64 * OTHELLO_EVAL_SCALE;
	if (v < -64 * OTHELLO_EVAL_SCALE)
		v = -64 * OTHELLO_EVAL_SCALE;
	return v;
}
