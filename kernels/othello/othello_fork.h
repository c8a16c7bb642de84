/* othello_fork.h - the shared state of one position's parallel search
 * (young brothers wait, othello_deep.c): a team of threads and its forks,
 * a node's moves shared with idle threads. othello_fork.c keeps a team's
 * life (othello_deep.h: oth_team_new, _config, _free, _wake), its sleep
 * and the tree of forks a cut reaches; othello_deep.c opens, works and
 * closes the forks. Private to the deep solver.
 *
 * Threads: every function may be called by any thread of the team; the
 * tree of forks (kids, sib) is guarded by the team's tree lock, which the
 * functions here take themselves.
 */
#ifndef GPUD_OTHELLO_FORK_H
#define GPUD_OTHELLO_FORK_H

#include <pthread.h>
#include <stdalign.h>

#include "othello_deep.h"

#define OTH_FORKS 64

enum { FORK_FREE, FORK_SETUP, FORK_OPEN, FORK_CLOSED };
#define RES_NONE 127

/* Every node in a fork reads its cut (aborted): it has a cache line of
 * its own, written once per fork, so that the counters the threads in the
 * fork keep writing do not evict it. */
struct oth_fork {
	/* A move failed high here or in a fork above: the rest is moot. */
	alignas(64) atomic_int cut;
	struct oth_fork *parent; /* the fork its owner works under */
	/* The forks whose parent this is, still in use (kids, linked by
	 * sib), so that a cut reaches them (fork_cut); the team's tree lock
	 * guards both. */
	alignas(64) struct oth_fork *kids, *sib;
	alignas(64) atomic_int state;
	atomic_int next;    /* the next move handed out */
	atomic_int helpers; /* threads inside besides the owner (or joining) */
	atomic_int owner_sleeps; /* the owner waits for helpers, asleep */
	atomic_int best;    /* fork_key of the best result so far */
	atomic_int e, n; /* atomic: free threads read them while scanning */
	struct mv list[MAX_MOVES];
	int alpha[MAX_MOVES]; /* each move's null window */
	int res[MAX_MOVES];   /* its result, or RES_NONE: not finished */
};

struct oth_team {
	struct oth_fork fork[OTH_FORKS];
	struct oth_fork_cfg cfg; /* set before the search, then read only */
	alignas(64) atomic_int idle; /* free threads looking for work */
	/* Sleeping: a thread that found no work waits on cv till gen moves
	 * (a fork opened, a sleeping owner's helper left, the search ended). */
	alignas(64) atomic_uint gen;
	atomic_int sleepers;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* Guards the forks' kids and sib: one lock, as a fork's slot is
	 * reused under other parents. */
	alignas(64) pthread_mutex_t tree;
};

/* Sleep till t->gen moves from g0 (read before the caller looked for
 * work) or *abort is set. */
void oth_team_sleep(struct oth_team *t, unsigned g0, const atomic_int *abort);
/* Cut f and every fork below it: the threads in them see it at their
 * next node. */
void oth_fork_cut(struct oth_team *t, struct oth_fork *f);
/* f (being set up, cut 0) joins its parent's kids; cut at once when the
 * parent already is. */
void oth_fork_link(struct oth_team *t, struct oth_fork *f);
/* f (its helpers gone, so its kids too) leaves its parent's kids. */
void oth_fork_unlink(struct oth_team *t, struct oth_fork *f);
/* 1 when f is up or lies below it. */
int oth_fork_descends(const struct oth_fork *f, const struct oth_fork *up);
/* A helper leaves g (or gives up joining it): its owner may sleep on it. */
void oth_fork_leave(struct oth_team *t, struct oth_fork *g);

#endif
