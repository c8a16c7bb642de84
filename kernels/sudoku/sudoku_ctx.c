/* sudoku_ctx.c - the workload's context: setups built on demand and kept
 * for the process's lifetime (sudoku.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "gerr.h"
#include "sudoku.h"

/* One slot per shape and level (0: enumeration, 1: full). */
struct slot {
	struct sudoku_setup *S;
	int building; /* a thread builds it now, outside the lock */
};

struct sudoku_ctx {
	pthread_mutex_t lock;
	pthread_cond_t built; /* a build finished (or failed) */
	struct slot slot[SUDOKU_MAXR + 1][SUDOKU_MAXC + 1][2];
};

int sudoku_ctx_open(struct sudoku_ctx **ret)
{
	struct sudoku_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return GERR_NOMEM;
	if (pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		return GERR_NOMEM;
	}
	if (pthread_cond_init(&c->built, NULL) != 0) {
		pthread_mutex_destroy(&c->lock);
		free(c);
		return GERR_NOMEM;
	}
	*ret = c;
	return 0;
}

void sudoku_ctx_close(struct sudoku_ctx *c)
{
	if (!c)
		return;
	for (int R = 0; R <= SUDOKU_MAXR; R++)
		for (int C = 0; C <= SUDOKU_MAXC; C++)
			for (int f = 0; f < 2; f++)
				sudoku_setup_free(c->slot[R][C][f].S);
	pthread_cond_destroy(&c->built);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int sudoku_ctx_setup(struct sudoku_ctx *c, int R, int C, unsigned what,
		     int threads, const struct sudoku_setup **ret, char *err,
		     size_t errlen)
{
	int full = (what & (SUDOKU_BUILD_T | SUDOKU_BUILD_CNT)) != 0, rc = 0;
	struct slot *s;
	struct sudoku_setup *S = NULL;

	if (!c) {
		snprintf(err, errlen, "sudoku: no context (the workload was "
			 "not opened)");
		return GERR_INVAL;
	}
	if (R < 2 || R > SUDOKU_MAXR || C < 2 || C > SUDOKU_MAXC)
		return GERR_INVAL;
	s = &c->slot[R][C][full];
	pthread_mutex_lock(&c->lock);
	for (;;) {
		if (!full && c->slot[R][C][1].S) {
			*ret = c->slot[R][C][1].S;
			goto out;
		}
		if (s->S) {
			*ret = s->S;
			goto out;
		}
		if (!s->building)
			break;
		pthread_cond_wait(&c->built, &c->lock);
	}
	s->building = 1;
	pthread_mutex_unlock(&c->lock);
	rc = sudoku_setup_build(R, C, full ? SUDOKU_BUILD_T : 0, threads, &S,
				err, errlen);
	pthread_mutex_lock(&c->lock);
	s->building = 0;
	if (rc == 0)
		*ret = s->S = S;
	pthread_cond_broadcast(&c->built);
out:
	pthread_mutex_unlock(&c->lock);
	return rc;
}
