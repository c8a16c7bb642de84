/* othello_deep.h - the exact CPU endgame search's parts, inside the
 * Othello kernel (othello.h has the API the workload calls):
 *
 *   othello_stable.c  discs that can never flip (the stability cutoff)
 *   othello_tt.c      the transposition table, shared between threads
 *   othello_deep.c    the search of one position by one thread
 *   othello_fork.c    a team of threads and its forks (othello_fork.h)
 *   othello_par.c     the threads of one position, and the batch runner
 *
 * Threads: a table may be shared (shared = 1: sequence locks); a struct
 * oth_search belongs to one thread; the flags it points to are shared.
 */
#ifndef GPUD_OTHELLO_DEEP_H
#define GPUD_OTHELLO_DEEP_H

#include <stdatomic.h>
#include <stdint.h>

#include "othello.h"

/* ---- stability ---------------------------------------------------------- */

/* P's discs that no sequence of moves can flip: on every line through
 * the disc (4 directions), the line is full, or a neighbour along it is
 * off the board or another such disc of P. A subset of the truly stable
 * discs. */
uint64_t oth_stable(uint64_t P, uint64_t O);

/* ---- transposition table -------------------------------------------------
 * Buckets of two entries (one cache line); an entry keeps the whole
 * position, so a hit is never a hash collision. Entries of older
 * generations (positions solved before) are ignored and replaced first;
 * within a generation the entry with more empties, then the one whose
 * search cost more nodes, stays. */
struct oth_tt;

int oth_tt_new(struct oth_tt **ret, int bits, int shared);
void oth_tt_free(struct oth_tt *t);
/* A new position: every entry so far is ignored from now on. */
void oth_tt_next_gen(struct oth_tt *t);
/* 1 and the bounds lo <= score <= hi and the best move (or 255) when the
 * position is stored, else 0. */
int oth_tt_probe(struct oth_tt *t, uint64_t P, uint64_t O, int *lo, int *hi,
		 int *move);
/* Start loading the bucket of (P, O): it is probed soon. */
void oth_tt_prefetch(const struct oth_tt *t, uint64_t P, uint64_t O);
/* Store the result `best` of a search of window (alpha, beta) with
 * `empties` empties that took `nodes` nodes. */
void oth_tt_store(struct oth_tt *t, uint64_t P, uint64_t O, int empties,
		  int alpha, int beta, int best, int move, uint64_t nodes);

/* ---- search ---------------------------------------------------------------
 * A parallel search (othello_par.c): one thread runs oth_deep_root, the
 * others serve its team (oth_team_serve) till it is done; a node whose
 * eldest move did not cut off shares its other moves with them (young
 * brothers wait, othello_deep.c). */
struct oth_team;

/* Nodes of SHALLOW_MAX or fewer empties use no table: it costs more
 * than it saves. */
#define SHALLOW_MAX 6
#define MAX_MOVES 34 /* legal moves in a position, at most */

/* A move in a node's list: the child and the move's sort key. */
struct mv {
	uint64_t P, O; /* the child, its mover first */
	int sq, key;
};

/* The thread's own table for null-window nodes of 7..OTH_LOCAL_MAX
 * empties (most of the table traffic): 2^OTH_LOCAL_BITS pairs of
 * entries, small enough to stay in the core's caches, no lock. The first
 * of a pair keeps the entry with more empties, the second takes the
 * rest. An entry keeps the whole position and bounds of its exact score,
 * true whatever the root. Zeroed: empty (no position has P = O = 0).
 * Nodes on FFO #40-#44 against none: +3% up to 8 empties, +7% up to 10
 * (Edax's range); time: 7% less up to 8 (bench/othello.md, round 13). */
#define OTH_LOCAL_BITS 12
#define OTH_LOCAL_MAX 8
struct oth_local_entry {
	uint64_t P, O;
	int8_t lo, hi;
	uint8_t move; /* 255: none */
	uint8_t e;    /* empties */
};

struct oth_search {
	struct oth_tt *tt;
	uint64_t nodes;
	const atomic_int *abort; /* non-zero: give up (result ignored) */
	struct oth_team *team;   /* the threads sharing the search, or NULL */
	struct oth_fork *fork;   /* with team: the fork this thread is in */
	/* Zeroed with the struct (a designated initializer): node counts do
	 * not depend on what was solved before. */
	struct oth_local_entry local[1 << OTH_LOCAL_BITS][2];
};

/* Which nodes fork (othello_deep.c): null-window nodes of `min` or more
 * empties once their `elders` first moves failed low (PV nodes and the
 * root after their first), each with at most `helpers` threads besides
 * its owner. Fewer helpers or later forks search fewer nodes but keep
 * fewer threads busy: on the 16-core GPU machine, FFO #40-#49 took 11.3 s
 * after one move (1.22 G nodes), 12.9 s after two (1.08 G), 15.7 s after
 * three (bench/othello.md, round 13, parallel search). */
struct oth_fork_cfg {
	int min, helpers, elders;
	int root; /* 1: the root forks too (its cuts cost: round 13) */
};
#define OTH_FORK_MIN 15
#define OTH_FORK_HELPERS 3
#define OTH_FORK_ELDERS 1

/* A team's shared state (the forks), with the default cfg; 0 or
 * GERR_NOMEM. */
int oth_team_new(struct oth_team **ret);
/* Set t's cfg (before a search starts): 0, or GERR_INVAL when out of
 * range (min 8..60, helpers 1..255, elders 1..34, root 0 or 1). */
int oth_team_config(struct oth_team *t, const struct oth_fork_cfg *c);
void oth_team_free(struct oth_team *t);
/* A free thread of s->team: work in the forks till *s->abort; it sleeps
 * while there is none. */
void oth_team_serve(struct oth_search *s);
/* Wake the team's sleeping threads: call it after setting *abort. Any
 * thread. */
void oth_team_wake(struct oth_team *t);

/* Solve (P, O) in the window (alpha, beta) with `threads` threads on
 * table tt, forking as team's cfg says (othello_par.c): the clamped score
 * and move as oth_deep_root returns them, nodes added to *ret_nodes; 0,
 * GERR_CANCELLED when stop(opaque) (may be NULL) turned non-zero first,
 * or GERR_NOMEM. Any thread; tt and team are the call's alone. */
int oth_par_solve(struct oth_tt *tt, struct oth_team *team, uint64_t P,
		  uint64_t O, int alpha, int beta, int threads, int *ret_score,
		  int *ret_move, uint64_t *ret_nodes, int (*stop)(void *),
		  void *opaque);

/* Score of (P, O) in the window (alpha, beta), clamped as
 * othello_solve_batch_window says: the exact score and the lowest square
 * reaching it (othello.h's tie rule) inside the window, else alpha or beta
 * and OTHELLO_MOVE_NONE; nodes are added to s->nodes. When *s->abort turns
 * non-zero the return value is meaningless. */
int oth_deep_root(struct oth_search *s, uint64_t P, uint64_t O, int alpha,
		  int beta, int *ret_move);

#endif
