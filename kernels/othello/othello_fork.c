/* othello_fork.c - a team's life and sleep, and the tree of forks that a
 * cut reaches (othello_fork.h). The forks' use, a node's moves shared
 * with idle threads, is othello_deep.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "othello_fork.h"

int oth_team_new(struct oth_team **ret)
{
	struct oth_team *t = aligned_alloc(64, sizeof(*t));

	if (!t)
		return GERR_NOMEM;
	memset(t, 0, sizeof(*t));
	t->cfg = (struct oth_fork_cfg){OTH_FORK_MIN, OTH_FORK_HELPERS,
				       OTH_FORK_ELDERS, 1};
	if (pthread_mutex_init(&t->mu, NULL))
		goto fail;
	if (pthread_cond_init(&t->cv, NULL))
		goto fail_mu;
	if (pthread_mutex_init(&t->tree, NULL))
		goto fail_cv;
	*ret = t;
	return 0;
fail_cv:
	pthread_cond_destroy(&t->cv);
fail_mu:
	pthread_mutex_destroy(&t->mu);
fail:
	free(t);
	return GERR_NOMEM;
}

int oth_team_config(struct oth_team *t, const struct oth_fork_cfg *c)
{
	if (c->min < SHALLOW_MAX + 2 || c->min > 60 || c->helpers < 1 ||
	    c->helpers > 255 || c->elders < 1 || c->elders > MAX_MOVES ||
	    (c->root != 0 && c->root != 1))
		return GERR_INVAL;
	t->cfg = *c;
	return 0;
}

void oth_team_free(struct oth_team *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->tree);
	free(t);
}

/* Something a sleeper may wait for happened: wake them all. */
void oth_team_wake(struct oth_team *t)
{
	atomic_fetch_add(&t->gen, 1);
	if (atomic_load(&t->sleepers) > 0) {
		pthread_mutex_lock(&t->mu);
		pthread_cond_broadcast(&t->cv);
		pthread_mutex_unlock(&t->mu);
	}
}

/* Sleep till gen moves from g0 (read before the caller looked for work)
 * or the search stops. The waker bumps gen before it reads sleepers, the
 * sleeper counts itself before it reads gen: one of them sees the other. */
void oth_team_sleep(struct oth_team *t, unsigned g0, const atomic_int *abort)
{
	pthread_mutex_lock(&t->mu);
	atomic_fetch_add(&t->sleepers, 1);
	while (atomic_load(&t->gen) == g0 && !atomic_load(abort))
		pthread_cond_wait(&t->cv, &t->mu);
	atomic_fetch_sub(&t->sleepers, 1);
	pthread_mutex_unlock(&t->mu);
}

/* Set the cut of f and of every fork below it; the tree lock held. */
static void fork_cut_below(struct oth_fork *f)
{
	atomic_store(&f->cut, 1);
	for (struct oth_fork *c = f->kids; c; c = c->sib)
		fork_cut_below(c);
}

/* Cut f and every fork below it (Edax stops a split's helpers the same
 * way): the threads in them see it at their next node (aborted). */
void oth_fork_cut(struct oth_team *t, struct oth_fork *f)
{
	pthread_mutex_lock(&t->tree);
	fork_cut_below(f);
	pthread_mutex_unlock(&t->tree);
}

/* f (being set up, cut 0) joins its parent's kids; cut at once when the
 * parent already is. */
void oth_fork_link(struct oth_team *t, struct oth_fork *f)
{
	struct oth_fork *p = f->parent;

	pthread_mutex_lock(&t->tree);
	f->kids = NULL;
	if (p) {
		f->sib = p->kids;
		p->kids = f;
		if (atomic_load(&p->cut))
			atomic_store(&f->cut, 1);
	}
	pthread_mutex_unlock(&t->tree);
}

/* f (its helpers gone, so its kids too) leaves its parent's kids. */
void oth_fork_unlink(struct oth_team *t, struct oth_fork *f)
{
	struct oth_fork *p = f->parent, **at;

	if (!p)
		return;
	pthread_mutex_lock(&t->tree);
	for (at = &p->kids; *at != f; at = &(*at)->sib)
		;
	*at = f->sib;
	pthread_mutex_unlock(&t->tree);
}

int oth_fork_descends(const struct oth_fork *f, const struct oth_fork *up)
{
	for (; f; f = f->parent)
		if (f == up)
			return 1;
	return 0;
}

/* A helper leaves g (or gives up joining it): its owner may sleep on it. */
void oth_fork_leave(struct oth_team *t, struct oth_fork *g)
{
	atomic_fetch_sub(&g->helpers, 1);
	if (atomic_load(&g->owner_sleeps))
		oth_team_wake(t);
}
