/* othello_eval.h - a static evaluation of a position, used only to order
 * moves at the upper depths of the exact search: it never decides a score.
 *
 * othello_eval returns the expected final disc difference for the side to
 * move (P), in units of 1/OTHELLO_EVAL_SCALE disc, clamped to +-64 discs:
 * a pattern evaluation (edges, corners, lines, diagonals, mobility; see
 * othello_evalw.h) whose weights tools/othello_train.py fitted to exact
 * scores of random positions solved by gpud. The same on all 8 symmetric
 * boards. Pure function of (P, O): any thread may call it; it reads only
 * constant tables.
 */
#ifndef GPUD_OTHELLO_EVAL_H
#define GPUD_OTHELLO_EVAL_H

#include <stdint.h>

#define OTHELLO_EVAL_SCALE 16

int othello_eval(uint64_t P, uint64_t O);

#endif
