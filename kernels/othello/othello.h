/* othello.h - the Othello workload's plain-C core: bitboards, move
 * generation and flips, the position generator, the solvers, and the
 * binary formats of input, result and checkpoint.
 *
 * Board
 *   A position is two 64-bit bitboards seen from the side to move: P (its
 *   discs) and O (the opponent's). Square s = 8 * row + column with A1 = 0,
 *   B1 = 1, ..., H1 = 7, A2 = 8, ..., H8 = 63: the order of the 64
 *   characters of an Edax/OBF line. Colours (X = black, O = white) matter
 *   only for reading and writing text; struct othello_pos keeps them.
 *
 * Score (the job's answer for a position)
 *   The final disc difference under perfect play from the side to move's
 *   point of view, empty squares going to the winner: for a finished game
 *   with p and o discs and e = 64 - p - o empties the score is p - o + e
 *   when p > o, p - o - e when p < o, 0 for a draw. It is always even and
 *   lies in [-64, 64]. A side without a legal move passes; the game ends
 *   when neither side can move.
 *
 * Best move (defined so that every correct solver agrees)
 *   The lowest square index among the moves reaching the score;
 *   OTHELLO_MOVE_PASS when the side to move must pass, OTHELLO_MOVE_NONE
 *   when the game is over.
 *
 * Invariants
 *   1. P & O == 0 for every position handled here (parsers refuse others).
 *   2. Every solver (minimax reference, shallow iterative search, fast CPU
 *      solver, CUDA kernel) returns the same (score, best move).
 *   3. Generated positions are a pure function of (seed, index, empties).
 *
 * Threads: every function is reentrant; nothing has global mutable state.
 * Ownership: callers own every buffer passed in; nothing is kept.
 */
#ifndef GPUD_OTHELLO_H
#define GPUD_OTHELLO_H

#include <stddef.h>
#include <stdint.h>

#include "mix.h"

#ifdef __CUDACC__
#define OTH_HD __host__ __device__ __forceinline__
#else
#define OTH_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define OTHELLO_MOVE_PASS 64
#define OTHELLO_MOVE_NONE 65
#define OTHELLO_NO_SCORE 127     /* no expected score in the input */
#define OTHELLO_MAX_POSITIONS 12000000ull
#define OTHELLO_SEED_SALT 0x6f7468656c6c6f21ull

/* ---- bit helpers -------------------------------------------------------- */

OTH_HD int oth_popcount(uint64_t x)
{
#ifdef __CUDA_ARCH__
	return __popcll(x);
#else
	return __builtin_popcountll(x);
#endif
}

OTH_HD int oth_ctz(uint64_t x) /* x != 0 */
{
#ifdef __CUDA_ARCH__
	return __ffsll((long long)x) - 1;
#else
	return __builtin_ctzll(x);
#endif
}

/* Highest set bit of x | 1, as a one-bit mask. */
OTH_HD uint64_t oth_highbit(uint64_t x)
{
#ifdef __CUDA_ARCH__
	return 0x8000000000000000ull >> __clzll((long long)(x | 1));
#else
	return 0x8000000000000000ull >> __builtin_clzll(x | 1);
#endif
}

/* ---- moves and flips ------------------------------------------------- */

/* Legal moves of P against O: squares that are empty and outflank at
 * least one opponent run in some direction. Each direction's run is grown
 * by shifting, 6 steps (the longest run); columns A and H are masked out
 * of the runs for directions with a horizontal component so that shifts
 * never wrap from one row into the next. */
OTH_HD uint64_t oth_moves_plain(uint64_t P, uint64_t O)
{
	const uint64_t inner = O & 0x7e7e7e7e7e7e7e7eull;
	uint64_t moves = 0, t;

#define OTH_DIR(SH, MASK)                                                  \
	t = (MASK) & (P SH); t |= (MASK) & (t SH); t |= (MASK) & (t SH);   \
	t |= (MASK) & (t SH); t |= (MASK) & (t SH); t |= (MASK) & (t SH);  \
	moves |= t SH;
	OTH_DIR(<< 1, inner)
	OTH_DIR(>> 1, inner)
	OTH_DIR(<< 8, O)
	OTH_DIR(>> 8, O)
	OTH_DIR(<< 7, inner)
	OTH_DIR(>> 7, inner)
	OTH_DIR(<< 9, inner)
	OTH_DIR(>> 9, inner)
#undef OTH_DIR
	return moves & ~(P | O);
}

/* Discs flipped when P plays on square sq (empty). 0 when the move is
 * illegal. For each of the four lines through sq: the part of the line
 * above sq is (line mask << sq), the part below is (mirror mask >> (63 -
 * sq)); line masks run past the board edge and wrap into the next row,
 * which is harmless because opponent discs on columns A and H are masked
 * out of runs along non-vertical lines, so a run stops at the edge at the
 * latest. Above sq the run ends at the first non-opponent square, found by
 * a carry; below, at the highest non-opponent square, found by a leading
 * zero count. */
OTH_HD uint64_t oth_flips_line(uint64_t P, uint64_t om, int sq, uint64_t up,
			       uint64_t down)
{
	uint64_t mask, out, f;

	mask = up << sq;
	out = mask & ((om | ~mask) + 1) & P;
	f = (out - (out != 0)) & mask;
	mask = down >> (63 - sq);
	out = oth_highbit(~om & mask) & P & mask;
	f |= (0 - out * 2) & mask;
	return f;
}

OTH_HD uint64_t oth_flips_plain(uint64_t P, uint64_t O, int sq)
{
	const uint64_t inner = O & 0x7e7e7e7e7e7e7e7eull;

	return oth_flips_line(P, inner, sq, 0x00000000000000feull,
			      0x7f00000000000000ull) |
	       oth_flips_line(P, O, sq, 0x0101010101010100ull,
			      0x0080808080808080ull) |
	       oth_flips_line(P, inner, sq, 0x8040201008040200ull,
			      0x0040201008040201ull) |
	       oth_flips_line(P, inner, sq, 0x0002040810204080ull,
			      0x0102040810204000ull);
}

/* The versions the solvers call: the AVX2 ones (othello_vec.h) in code
 * built for AVX2 on the host, the plain ones elsewhere (CUDA, baseline
 * x86-64, other CPUs); both give the same bitboards. */
#if defined(__AVX2__) && !defined(__CUDACC__)
#define OTH_HAVE_VEC 1
#include "othello_vec.h"
#endif

OTH_HD uint64_t oth_moves(uint64_t P, uint64_t O)
{
#ifdef OTH_HAVE_VEC
	return oth_moves_vec(P, O);
#else
	return oth_moves_plain(P, O);
#endif
}

OTH_HD uint64_t oth_flips(uint64_t P, uint64_t O, int sq)
{
#ifdef OTH_HAVE_VEC
	return oth_flips_vec(P, O, sq);
#else
	return oth_flips_plain(P, O, sq);
#endif
}

#ifndef __CUDACC__
/* Legal moves of P, and in *ret_pot its potential mobility: the empty
 * squares next to an opponent disc (CPU solvers' move ordering). */
static inline uint64_t oth_moves_pot(uint64_t P, uint64_t O,
				     uint64_t *ret_pot)
{
#ifdef OTH_HAVE_VEC
	return oth_moves_pot_vec(P, O, ret_pot);
#else
	const uint64_t l = 0xfefefefefefefefeull, r = 0x7f7f7f7f7f7f7f7full;

	*ret_pot = (((O << 1) & l) | ((O >> 1) & r) | (O << 8) | (O >> 8) |
		    ((O << 9) & l) | ((O >> 9) & r) | ((O << 7) & r) |
		    ((O >> 7) & l)) & ~(P | O);
	return oth_moves_plain(P, O);
#endif
}
#endif

/* Score of a finished game (neither side can move, or the board is full),
 * from P's side. */
OTH_HD int oth_final_score(uint64_t P, uint64_t O)
{
	int p = oth_popcount(P), o = oth_popcount(O), e = 64 - p - o;

	if (p > o)
		return p - o + e;
	if (p < o)
		return p - o - e;
	return 0;
}

/* ---- the position generator ------------------------------------------- */

/* Position `index` of a --random job (seed, empties): from the start
 * position, play uniformly random legal moves (move k of the legal ones in
 * square order, k = draw % count), passing when the side to move has no
 * move, until `empties` squares are empty. A playout whose game ends
 * earlier, or that reaches a finished position, is thrown away and the
 * next one is played from the same stream. Draws come from the splitmix64
 * finaliser of a counter: h0 = mix64(mix64(seed ^ SALT) + index * MIX_GOLDEN),
 * draw j = mix64(h0 + j * MIX_GOLDEN). Returns the position from the side to
 * move; *ret_black_to_move says whose turn it is. empties must be 1..59. */
OTH_HD void oth_generate(uint64_t seed, uint64_t index, int empties,
			 uint64_t *ret_P, uint64_t *ret_O,
			 int *ret_black_to_move)
{
	uint64_t h0 = mix64(mix64(seed ^ OTHELLO_SEED_SALT) +
				index * MIX_GOLDEN);
	uint64_t j = 0;

	for (;;) {
		/* Start: d5 and e4 black (X), d4 and e5 white; black moves. */
		uint64_t P = 0x0000000810000000ull, O = 0x0000001008000000ull;
		int black = 1, e = 60;

		while (e > empties) {
			uint64_t m = oth_moves(P, O), t;
			if (!m) {
				if (!oth_moves(O, P))
					break; /* game over too early */
				t = P; P = O; O = t;
				black = !black;
				continue;
			}
			uint64_t d = mix64(h0 + (++j) * MIX_GOLDEN);
			int k = (int)(d % (uint64_t)oth_popcount(m));
			while (k--)
				m &= m - 1;
			int sq = oth_ctz(m);
			uint64_t f = oth_flips(P, O, sq);
			P |= f | (1ull << sq);
			O &= ~f;
			t = P; P = O; O = t;
			black = !black;
			e--;
		}
		if (e == empties && (oth_moves(P, O) || oth_moves(O, P))) {
			*ret_P = P;
			*ret_O = O;
			*ret_black_to_move = black;
			return;
		}
		j += 1000; /* a fresh stretch of the stream */
	}
}

/* ---- positions, text ------------------------------------------------- */

/* A position with colours: what the input holds and the output writes. */
struct othello_pos {
	uint64_t black, white;
	uint8_t black_to_move;  /* 1: X to move */
	int8_t expected;        /* score from the input, or OTHELLO_NO_SCORE */
};

static inline void othello_pos_pov(const struct othello_pos *p, uint64_t *P,
				   uint64_t *O)
{
	*P = p->black_to_move ? p->black : p->white;
	*O = p->black_to_move ? p->white : p->black;
}

/* Parse one line (without its newline). Edax/OBF: 64 characters A1..H8 of
 * X, x or * (black), O/o (white), -/. (empty), optional blanks, the side to
 * move X or O, then optionally ';' and "MV:+SC;" pairs: the expected score
 * is the largest SC. Base81 (issen): 16 characters, each '!' + a base-3
 * digit string of four squares (A1 first, least significant; 0 empty,
 * 1 side to move, 2 opponent), with black to move. Blank lines and lines
 * starting with '%' or '#' are skipped (returns 1). 0 on success; on a bad
 * line GERR_INVAL with a reason in err. */
int othello_parse_line(const char *line, size_t len, struct othello_pos *ret,
		       char *err, size_t errlen);

/* The OBF text of a position: 64 board chars, ' ', side, ';' (67 bytes +
 * NUL). */
void othello_format_board(const struct othello_pos *p, char *buf);
/* "A1", ..., "H8", "PS" (pass), "--" (game over). */
void othello_format_move(int move, char *buf);

/* ---- solvers ------------------------------------------------------------ */

/* Plain minimax over the whole tree (no pruning): the reference, for
 * positions with few empties (<= 9 or so). */
int othello_minimax(uint64_t P, uint64_t O, int *ret_move);

/* perft: leaves of the game tree `depth` plies down (a pass is a ply; a
 * finished game before that counts as one leaf). */
uint64_t othello_perft(uint64_t P, uint64_t O, int depth);

/* The shallow iterative alpha-beta search (othello_search.h), the CPU
 * reference of the CUDA kernel, which runs the same search cut into flips
 * (othello_flat.h): same tree, scores and moves. empties <=
 * OTHELLO_SHALLOW_MAX. */
#define OTHELLO_SHALLOW_MAX 20
int othello_solve_shallow(uint64_t P, uint64_t O, int *ret_move,
			  uint64_t *ret_nodes);

/* The exact CPU solver (othello_deep.h: principal variation search with
 * null windows, a transposition table, enhanced transposition and
 * stability cutoffs, fastest-first and evaluation move ordering, last-4
 * solvers). A solver belongs to one thread and owns a table of 2^bits
 * buckets of two entries (OTHELLO_TT_BITS_MIN .. OTHELLO_TT_BITS,
 * clamped): shallow positions need only a small one, and a fresh table's
 * pages cost more than their searches (verification). Each solve starts
 * from an empty table, so node counts do not depend on order. */
struct othello_solver;
int othello_solver_new(struct othello_solver **ret);
#define OTHELLO_TT_BITS 18
#define OTHELLO_TT_BITS_MIN 10
int othello_solver_new_sized(struct othello_solver **ret, int bits);
void othello_solver_free(struct othello_solver *s);
int othello_solver_solve(struct othello_solver *s, uint64_t P, uint64_t O,
			 int *ret_move, uint64_t *ret_nodes);

/* Solve n positions on `threads` threads: score[i], move[i], and the
 * total nodes. Positions with fewer than 18 empties go one per thread;
 * deeper ones (all of them when n < threads) one at a time with every
 * thread on the position. 0, GERR_NOMEM, or GERR_CANCELLED when
 * stop(opaque) turned non-zero (polled every 10 ms during a deep search;
 * it is called from one thread at a time). */
int othello_solve_batch(const uint64_t *P, const uint64_t *O, size_t n,
			int threads, int8_t *ret_score, uint8_t *ret_move,
			uint64_t *ret_nodes, int (*stop)(void *),
			void *opaque);

/* The same inside the window (alpha, beta), -65 <= alpha < beta <= 65:
 * score[i] is the exact score s with the best move when alpha < s < beta,
 * else alpha (s <= alpha) or beta (s >= beta) with OTHELLO_MOVE_NONE:
 * clamped, so that every correct solver answers alike (fail-soft values
 * depend on the search). (-65, 65) is othello_solve_batch. GERR_INVAL for
 * another window. */
int othello_solve_batch_window(const uint64_t *P, const uint64_t *O, size_t n,
			       int alpha, int beta, int threads,
			       int8_t *ret_score, uint8_t *ret_move,
			       uint64_t *ret_nodes, int (*stop)(void *),
			       void *opaque);

/* An exact (score, move) as the window (alpha, beta) answers it. */
static inline void othello_window_clamp(int alpha, int beta, int8_t *score,
					uint8_t *move)
{
	if (*score <= alpha || *score >= beta) {
		*score = (int8_t)(*score <= alpha ? alpha : beta);
		*move = OTHELLO_MOVE_NONE;
	}
}

/* ---- binary formats ------------------------------------------------------
 * All integers little-endian.
 *
 * Input (canonical, stored by gpud as the job's input blob):
 *   0  4  magic "OTHI"
 *   4  4  u32 version = 1
 *   8  8  u64 count (1..OTHELLO_MAX_POSITIONS)
 *   16 count records of 18 bytes: u64 black, u64 white, u8 black_to_move
 *      (0/1), i8 expected (even in [-64, 64] or 127)
 *
 * Result / checkpoint of a lease (positions [begin, begin + count)):
 *   0  4  magic "OTHR" (result) or "OTHC" (checkpoint)
 *   4  4  u32 version = 1
 *   8  8  u64 begin
 *   16 8  u64 count
 *   24 8  u64 done (== count in a result; <= count in a checkpoint)
 *   32 8  u64 nodes searched
 *   40 8  u64 microseconds spent solving
 *   48 4  u32 flags: bit 0 = positions included
 *   52 4  u32 reserved (0)
 *   56 done x 2 bytes: u8 score / 2 + 32 (0..64), u8 best move (0..65)
 *   then, when flag bit 0, done x 18 bytes: u64 black, u64 white,
 *      u8 black_to_move, i8 expected (file jobs: verification needs the
 *      positions, merge the expected scores; both are covered by the
 *      per-block digests that parse_input put in params)
 * Decoders check magic, version, exact length and every field's range.
 */
#define OTHELLO_FMT_VERSION 1u
#define OTHELLO_IN_HDR 16u
#define OTHELLO_IN_REC 18u
#define OTHELLO_RES_HDR 56u
#define OTHELLO_RES_POS 18u

struct othello_res {
	uint64_t begin, count, done, nodes, usec;
	int with_pos;
	int8_t *score;        /* count entries */
	uint8_t *move;        /* count entries */
	struct othello_pos *pos; /* count entries when with_pos, else NULL */
};

/* Allocate the arrays for count positions. 0 or GERR_NOMEM. */
int othello_res_init(struct othello_res *r, uint64_t begin, uint64_t count,
		     int with_pos);
void othello_res_clear(struct othello_res *r);
/* ckpt: "OTHC" with done <= count, else "OTHR" needs done == count. */
int othello_res_encode(const struct othello_res *r, int ckpt, void **ret,
		       size_t *ret_len);
int othello_res_decode(const void *buf, size_t len, int ckpt,
		       struct othello_res *ret, char *err, size_t errlen);
/* A result checked as othello_res_decode does, but only its score
 * histogram (ret_hist[score / 2 + 32]) and header fields (*ret, no arrays:
 * nothing to clear): no copy of the positions. */
int othello_res_hist(const void *buf, size_t len, struct othello_res *ret,
		     uint64_t ret_hist[65], char *err, size_t errlen);
/* Score and move of position i (< done) of a buffer othello_res_hist or
 * othello_res_decode accepted. */
void othello_res_at(const void *buf, uint64_t i, int *ret_score,
		    int *ret_move);

/* Input blob: decode positions [begin, begin + count) (count 0: all) into a
 * malloc'ed array. */
int othello_input_count(const void *buf, size_t len, uint64_t *ret_count,
			char *err, size_t errlen);
int othello_input_read(const void *buf, size_t len, uint64_t begin,
		       uint64_t count, struct othello_pos **ret, char *err,
		       size_t errlen);
/* Parse a whole text file into the canonical input blob. Bad lines are
 * listed (the first 10 with their line numbers, then a count) in err. */
int othello_input_parse(const void *text, size_t len, void **ret,
			size_t *ret_len, uint64_t *ret_count,
			int *ret_max_empties, char *err, size_t errlen);

/* Digest of a run of positions, expected scores included (the per-block
 * digests in params, OTHELLO_BLOCK positions a block). */
#define OTHELLO_BLOCK 1024u
uint64_t othello_digest(const struct othello_pos *p, size_t n);

#ifdef __cplusplus
}
#endif

#endif
