/* othello_evalw.h - the pattern set of the move-ordering evaluation and
 * its weights file (othello_eval.w), shared by the evaluation, the
 * build-time generator that turns the file into C tables
 * (tools/othello_evalgen.c), the tests, and, by hand, the training script
 * (tools/othello_train.py: same squares, same fingerprint).
 *
 * Features, all from the side to move's view (a square's digit: 0 empty,
 * 1 side to move, 2 opponent; index = sum of digit k * 3^k over the
 * pattern's squares in list order):
 *   - ten pattern types, each read on the board turned by 0, 90, 180 and
 *     270 degrees (the main diagonal on 0 and 90 only): every instance on
 *     the board once, all instances of a type sharing one table;
 *   - the mobility of each side (legal moves, clamped to 31), a table each;
 *   - a bias;
 *   - each side's discs on each of the 10 classes of squares that the
 *     symmetries make (corners, C-squares, ...), one weight a disc: they
 *     still speak where deeper positions show pattern configurations the
 *     training never saw (whose weights are 0).
 * Configurations that a board reflection maps onto each other share one
 * weight (folded in the file, expanded in the tables), so the evaluation
 * is the same on all 8 symmetric boards.
 *
 * Weights file, little-endian:
 *   0  4  magic "OTHE"
 *   4  4  u32 version = 1
 *   8  4  u32 fingerprint of the pattern set (othello_evalw_fingerprint)
 *   12 4  u32 weights per phase (othello_evalw_folded() + 85)
 *   16 4  u32 phases (1..OTH_EVALW_MAX_PHASES)
 *   20 4  u32 FNV-1a of the weights' bytes
 *   24 61 u8 phase of each empties count 0..60
 *   85 3  zero
 *   88 phases x weights x i16, in 1/OTHELLO_EVAL_SCALE disc: per phase the
 *      folded weights of each pattern type in order (folded configurations
 *      in increasing order of their lowest raw index), 32 mobility weights
 *      of the side to move, 32 of the opponent, the bias, 10 square-class
 *      weights of the side to move's discs, 10 of the opponent's.
 *
 * Threads: everything here is reentrant; the tables are constant.
 */
#ifndef GPUD_OTHELLO_EVALW_H
#define GPUD_OTHELLO_EVALW_H

#include <stddef.h>
#include <stdint.h>

#define OTH_EVALW_NPAT 10
#define OTH_EVALW_MAX_SQ 10
#define OTH_EVALW_MOB 32
#define OTH_EVALW_MAX_PHASES 16
#define OTH_EVALW_HDR 88u
#define OTH_EVALW_VERSION 1u

struct oth_evalw_pat {
	uint8_t n;      /* squares */
	uint8_t rots;   /* instances: the board turned 0, 90 (, 180, 270) */
	uint8_t sq[OTH_EVALW_MAX_SQ]; /* squares on the unturned board */
};

/* Edge + the 2 X-squares, corner 3x3, rows 2, 3 and 4, the diagonals of
 * 8, 7, 6, 5 and 4 squares. */
static const struct oth_evalw_pat OTH_EVALW_PATS[OTH_EVALW_NPAT] = {
	{ 10, 4, { 0, 1, 2, 3, 4, 5, 6, 7, 9, 14 } },
	{ 9, 4, { 0, 1, 2, 8, 9, 10, 16, 17, 18 } },
	{ 8, 4, { 8, 9, 10, 11, 12, 13, 14, 15 } },
	{ 8, 4, { 16, 17, 18, 19, 20, 21, 22, 23 } },
	{ 8, 4, { 24, 25, 26, 27, 28, 29, 30, 31 } },
	{ 8, 2, { 0, 9, 18, 27, 36, 45, 54, 63 } },
	{ 7, 4, { 1, 10, 19, 28, 37, 46, 55 } },
	{ 6, 4, { 2, 11, 20, 29, 38, 47 } },
	{ 5, 4, { 3, 12, 21, 30, 39 } },
	{ 4, 4, { 4, 13, 22, 31 } },
};

/* Offsets of each type's raw table (3^n entries) in a phase's expanded
 * weights, then mobility and bias. */
#define OTH_EVALW_OFF_E2X 0
#define OTH_EVALW_OFF_C3 59049
#define OTH_EVALW_OFF_L2 78732
#define OTH_EVALW_OFF_L3 85293
#define OTH_EVALW_OFF_L4 91854
#define OTH_EVALW_OFF_D8 98415
#define OTH_EVALW_OFF_D7 104976
#define OTH_EVALW_OFF_D6 107163
#define OTH_EVALW_OFF_D5 107892
#define OTH_EVALW_OFF_D4 108135
#define OTH_EVALW_OFF_MOBP 108216
#define OTH_EVALW_OFF_MOBO (OTH_EVALW_OFF_MOBP + OTH_EVALW_MOB)
#define OTH_EVALW_OFF_BIAS (OTH_EVALW_OFF_MOBO + OTH_EVALW_MOB)
#define OTH_EVALW_OFF_SQ (OTH_EVALW_OFF_BIAS + 1)
#define OTH_EVALW_SQ 10
#define OTH_EVALW_TOTAL (OTH_EVALW_OFF_SQ + 2 * OTH_EVALW_SQ)
/* Weights per phase after the patterns' folded ones. */
#define OTH_EVALW_TAIL (2 * OTH_EVALW_MOB + 1 + 2 * OTH_EVALW_SQ)

/* The square classes: A1, B1, C1, D1, B2, C2, D2, C3, D3, D4 and the
 * squares the symmetries map them to. */
static const uint64_t OTH_EVALW_SQ_MASK[OTH_EVALW_SQ] = {
	0x8100000000000081ull, 0x4281000000008142ull, 0x2400810000810024ull,
	0x1800008181000018ull, 0x0042000000004200ull, 0x0024420000422400ull,
	0x0018004242001800ull, 0x0000240000240000ull, 0x0000182424180000ull,
	0x0000001818000000ull,
};

/* Square s seen on the board turned by rot (0..3) quarter turns: the
 * square of the unturned board it reads (othello_eval.c turns bitboards
 * the same way). */
int othello_evalw_turn(int rot, int s);
/* The pattern set's fingerprint: FNV-1a of each type's n, rots, squares. */
uint32_t othello_evalw_fingerprint(void);
/* Folded configurations of all pattern types together. */
size_t othello_evalw_folded(void);
/* FNV-1a 32 of a byte run. */
uint32_t othello_evalw_fnv(const void *buf, size_t len, uint32_t h);

/* Expanded weights of a file: phase_of[61] and w[phases][OTH_EVALW_TOTAL]
 * (malloc'ed; the caller frees *ret_w). Checks magic, version,
 * fingerprint, counts, exact length, checksum and the phase map: 0, else
 * GERR_CORRUPT (or GERR_NOMEM) with the reason in err. */
int othello_evalw_load(const void *buf, size_t len, int *ret_phases,
		       uint8_t ret_phase_of[61], int16_t **ret_w, char *err,
		       size_t errlen);

/* The tables of the committed file, generated at build time. */
extern const int othello_eval_phases;
extern const uint8_t othello_eval_phase_of[61];
extern const uint16_t othello_eval_t3[1024]; /* binary digits -> base 3 */
extern const int16_t othello_eval_w[][OTH_EVALW_TOTAL];

#endif
