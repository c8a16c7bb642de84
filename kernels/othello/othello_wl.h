/* othello_wl.h - private to the Othello workload's files: the job as its
 * params describe it, and the hooks that othello_workload.c puts into
 * struct workload.
 *
 * params  random: {"mode": "random", "positions": N, "empties": E,
 *                  "seed": "S"}
 *         file:   {"mode": "file", "positions": N, "max_empties": E,
 *                  "with_expected": k, "digests": "<16 hex per block>",
 *                  "block": B (othello_block_for; absent: OTHELLO_BLOCK),
 *                  "costs": "<2 hex per block>" (absent in jobs of
 *                  before: leases by positions alone),
 *                  "input": "<hash>" (added by gpud), "input_name": ...}
 *         split file: the same over the frontier positions (one a block:
 *                  "block": 1) and a last closing one (a full board),
 *                  plus "split": {"depth": d,
 *                  "roots": [["<64 squares> <side>", expected or null],
 *                  ...], "root_empties": E} (othello_split.c)
 * cursor  {"next": n}: positions [0, n) are leased; split jobs:
 *         {"windows": "<4 hex digits a position>"}: the window (a, b)
 *         of its last lease as (a + 66) / 2, (b + 66) / 2, "----" never
 *         leased (a position is leased again with another window only
 *         once its last lease's result is merged)
 * spec    {"begin": b, "count": c}: one lease; in file jobs b is a
 *         multiple of the block and the lease covers whole blocks
 *         (the last block of the job may be short); a split job's lease
 *         is one position, with "alpha" and/or "beta" (even) when
 *         windowed: its result is othello_solve_batch_window's
 * answer  {"positions": n, "leases": k, "hist": [65 counts of score/2+32],
 *          "nodes": x, "usec": t, "mismatches": m,
 *          "mismatch_list": [[index, expected, score], ...] (the lowest
 *          OTHELLO_MISMATCH_LIST indices)}: the same size after every
 *          merge. A split job's answer adds "frontier": 4 hex digits a
 *          frontier position, the bounds lo / 2 + 32 and hi / 2 + 32 of
 *          its score that its results merged so far give ("0040" before
 *          any), and, once they settle the roots, "roots": [[score,
 *          move], ...]; hist and the mismatches then count the roots;
 *          "positions" counts leases' positions (one may be leased with
 *          several windows). Which result holds which positions is in gpud's parts
 *          (each part's spec and result hash); merge leaves no note.
 *
 * Files: othello_plan.c (params, input, carve), othello_workload.c (run,
 * the struct), othello_verify.c (checkpoints, results), othello_answer.c
 * (merge, finish, text), othello_export.c (scored positions from parts),
 * othello_plot.c (the score distribution).
 */
#ifndef GPUD_OTHELLO_WL_H
#define GPUD_OTHELLO_WL_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "othello.h"
#include "workload.h"

#define OTHELLO_WL_MAX_EMPTIES 40  /* random jobs; files may hold anything */
#define OTHELLO_MISMATCH_LIST 100

struct othello_job {
	int file;
	uint64_t n, seed;
	int empties; /* random: E; file: the largest */
	uint64_t block; /* positions a digest (file jobs) */
	const char *digests, *input; /* borrowed from params */
	const json_t *split; /* params' "split", or NULL */
	const char *costs; /* file jobs: 2 hex digits a block, or NULL */
};

/* ---- what positions cost (othello_plan.c) --------------------------------
 * A position of e empties costs about othello_cost_us(e) microseconds of
 * one core of the CPU solver (measured: bench/othello.md, "Cost by
 * empties"); 2.3x to 6x per empty. A file job's params keep each block's
 * cost as "costs": 2 hex digits a block, OTHELLO_COST_CODE(sum of its
 * positions' costs), so carve fills a lease by cost without the input. */
double othello_cost_us(int empties);
/* ceil(4 log2(1 + us)), at most 255: steps of 19%. */
unsigned othello_cost_code(double us);
double othello_cost_of_code(unsigned code);
/* A file job's block: positions a digest (and a cost), the smallest power
 * of two that keeps the job within 1024 blocks, at most OTHELLO_BLOCK: a
 * file of up to 1024 positions is priced, leased and digested one
 * position at a time, so a deep position goes alone into its lease. */
uint64_t othello_block_for(uint64_t n);

/* The job that params describe; GERR_INVAL with a reason otherwise. */
int othello_job_get(const json_t *params, struct othello_job *j, char *err,
		    size_t errlen);
/* The job and one lease of it (a spec carve could have made). */
int othello_spec_get(const json_t *params, const json_t *spec,
		     struct othello_job *j, uint64_t *begin, uint64_t *count,
		     char *err, size_t errlen);

/* Positions of a lease whose largest position has `empties` empty squares
 * that verify re-solves (othello_verify.c gives the detection formula). */
unsigned othello_verify_samples(int empties);
/* Positions verify re-solves in a lease of count positions: the samples
 * of its depth, at most one in OTHELLO_VERIFY_SHARE (at least 1), so that
 * gpud's recount stays a few percent of the lease's work. */
#define OTHELLO_VERIFY_SHARE 32u
unsigned othello_verify_k(int empties, uint64_t count);
/* What verify re-solves with its seed: othello_verify_k, but for deep
 * positions (more than 14 empties) one in OTHELLO_VERIFY_SHARE on average
 * (the remainder drawn with seed; othello_verify.c). */
unsigned othello_verify_k_drawn(int empties, uint64_t count, uint64_t seed);
/* Positions of more empties are never re-solved on gpud (seconds to
 * minutes of a core each): verify spot-checks them through another
 * worker's result instead. */
#define OTHELLO_VERIFY_MAX_EMPTIES 22
/* 1 when verify, for a lease holding `deep` positions above
 * OTHELLO_VERIFY_MAX_EMPTIES, asks for a spot replica (WL_VERIFY_SPOT,
 * workload.h): with probability min(1, deep / OTHELLO_VERIFY_SHARE),
 * drawn from seed apart from the sample. Solves nothing; any thread. */
int othello_verify_spot(uint64_t deep, uint64_t seed);

/* ---- subtree leases (othello_split.c) ------------------------------------
 * A job of few deep positions (at most OTHELLO_SPLIT_MAX_ROOTS, the
 * deepest with OTHELLO_SPLIT_AUTO_EMPTIES or more, OTHELLO_SPLIT_AUTO_US
 * of work in all: by default, or with --split auto; or --split PLIES;
 * --split 0 never) is
 * leased as the distinct frontier positions `depth` plies below its roots
 * (the hardest first), each in the window that alpha-beta over what is
 * known needs (othello_solve_batch_window). gpud rebuilds the tree from
 * the roots in params, combines the roots' scores and best moves (the
 * lowest square reaching the score) by negamax from the frontier bounds
 * merged, and leases only what YBWC over them searches now
 * (othello_plan.c's carve). */
#define OTHELLO_SPLIT_MAX_ROOTS 64
#define OTHELLO_SPLIT_MAX_DEPTH 6
#define OTHELLO_SPLIT_MAX_FRONTIER 1024
#define OTHELLO_SPLIT_AUTO_EMPTIES 20
/* ... and auto splits only a job of at least this much work (one core's
 * microseconds, othello_cost_us): below, the subtree leases' round trips
 * cost more than they share (FFO #20-#37, 13 s: 11.2 s split on two
 * one-thread workers against 9.8 s unsplit on one; bench/othello.md).
 * FFO #20-#39 is about 180 s. */
#define OTHELLO_SPLIT_AUTO_US 30e6
/* Frontier positions the auto depth seeks: 2 plies for most positions.
 * 3 plies were no surer a gain (simulated on 4 workers: FFO #24 longer,
 * #25 and random 14-16-empty roots shorter) for 3-4x the leases, each a
 * round trip through gpud. */
#define OTHELLO_SPLIT_TARGET 32

struct othello_split;
/* The tree of roots[0..n) expanded depth plies (1..OTHELLO_SPLIT_MAX_DEPTH;
 * a pass is a ply, a finished game a leaf). GERR_TOOBIG past the caps. */
int othello_split_build(const struct othello_pos *roots, size_t n, int depth,
			struct othello_split **ret);
/* The smallest depth whose frontier reaches OTHELLO_SPLIT_TARGET, or the
 * deepest within the caps; 0 when no depth has a frontier. */
int othello_split_auto_depth(const struct othello_pos *roots, size_t n,
			     int *ret_depth);
void othello_split_free(struct othello_split *s);
/* The frontier positions in lease order (borrowed; expected unknown). */
size_t othello_split_frontier(const struct othello_split *s,
			      const struct othello_pos **ret);
/* Roots' scores and best moves from the frontier's bounds known so far
 * (flo[k] <= score <= fhi[k]; [-64, 64] while unknown): GERR_AGAIN while
 * a root's answer still depends on an unknown, GERR_VERIFY when the
 * bounds contradict each other. */
int othello_split_combine(const struct othello_split *s, const int8_t *flo,
			  const int8_t *fhi, int8_t *ret_score,
			  uint8_t *ret_move);
/* The frontier positions that alpha-beta over the bounds known searches
 * now, as YBWC does (a node's first move alone until it is settled, then
 * the others at once, with the null window of the best so far and again
 * whole only when they beat it): want[k] = OTHELLO_NEED_NOW with the
 * window (wa[k], wb[k]) in its score (even; -66 and 66: open), else 0;
 * nfront entries. GERR_VERIFY when the bounds contradict. */
#define OTHELLO_NEED_NOW 2
int othello_split_need(const struct othello_split *s, const int8_t *flo,
		       const int8_t *fhi, uint8_t *want, int8_t *wa,
		       int8_t *wb);
/* Bounds [*lo, *hi] narrowed by a result `score` of the window (alpha,
 * beta) (othello_solve_batch_window's clamped answer); GERR_VERIFY when
 * they contradict. */
int othello_split_window(int alpha, int beta, int score, int8_t *lo,
			 int8_t *hi);
/* The window of a lease (spec's "alpha" and "beta", each even, absent:
 * -65 and 65); only split jobs lease windows. GERR_INVAL otherwise. */
int othello_spec_window(const struct othello_job *j, const json_t *spec,
			int *ret_alpha, int *ret_beta, char *err,
			size_t errlen);
/* The tree of a split job's params (NULL: not split). */
int othello_split_of(const struct othello_job *j, struct othello_split **ret,
		     struct othello_pos **ret_roots, size_t *ret_n, char *err,
		     size_t errlen);

/* The roots' scores and moves of a split job's answer: GERR_STATE before
 * every frontier score is in, GERR_CORRUPT when not n of them. */
int othello_split_answer_roots(const json_t *answer, size_t n,
			       int8_t *ret_score, uint8_t *ret_move);

/* A split job's frontier bounds merged so far (answer's "frontier"; NULL
 * answer: none), [-64, 64] where nothing is known: n entries. */
int othello_split_scores(const json_t *answer, uint64_t n, int8_t *lo,
			 int8_t *hi);

/* The hooks, as struct workload documents them. */
wl_parse_params_fn othello_wl_parse_params;
wl_parse_input_fn othello_wl_parse_input;
wl_carve_fn othello_wl_carve;
/* Cut a plain or file job's lease at a position (a block boundary in file
 * jobs); GERR_AGAIN for a split job's one-position leases. */
wl_split_fn othello_wl_split;
wl_check_checkpoint_fn othello_wl_check_checkpoint;
wl_verify_fn othello_wl_verify;
wl_merge_fn othello_wl_merge;
/* The answer's score counts (hist[b]: positions scoring 2b - 64 for the
 * side to move) and positions; GERR_CORRUPT when it is no Othello answer
 * (NULL: all zero). */
int othello_wl_answer_hist(const json_t *answer, uint64_t hist[65],
			   uint64_t *ret_positions);
/* render_plot (workload.h): the score distribution (othello_plot.c). */
wl_render_plot_fn othello_wl_render_plot;
/* Two results of one lease agree: the same positions and scores. Moves
 * (a choice among equally good ones), nodes and time may differ. */
wl_results_agree_fn othello_wl_results_agree;
wl_finish_fn othello_wl_finish;
wl_render_text_fn othello_wl_render_text;
wl_export_data_fn othello_wl_export;

#endif
