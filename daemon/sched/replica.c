/* replica.c - replication of results: a lease's group loaded, its results
 * compared, the quorum decided (replica.h): replica_judge decides on the
 * loaded rows alone, store_replica_apply writes the verdict.
 *
 * Invariant: the checked, done results of an undecided group pairwise
 * disagree (two that agree decide the group at once), so a new result
 * decides the group exactly when it agrees with one of them, and no other
 * pair needs comparing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "gerr.h"
#include "replica.h"

void replica_check_clear(struct replica_check *rc)
{
	if (!rc)
		return;
	for (size_t i = 0; i < rc->npeer; i++)
		free(rc->peer[i].hash);
	free(rc->peer);
	free(rc->primary_raw);
	memset(rc, 0, sizeof(*rc));
}

int replica_load(struct store *st, const struct store_lease *l,
		 struct replica_check *rc)
{
	struct store_instance *g = NULL;
	size_t n = 0;
	int64_t of = 0;
	int checked = 0, r;

	replica_check_clear(rc);
	if ((r = store_lease_replica_of(st, l->id, &of, &checked)))
		return r;
	rc->primary = of ? of : l->id;
	rc->is_replica = of != 0;
	rc->checked = checked;
	if ((r = store_lease_group(st, rc->primary, &g, &n)))
		return r;
	rc->peer = calloc(n ? n : 1, sizeof(*rc->peer));
	if (!rc->peer) {
		store_instance_free_array(g, n);
		return GERR_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct replica_peer *p = &rc->peer[rc->npeer];

		if (g[i].l.id == l->id || g[i].l.state != LEASE_DONE ||
		    !g[i].checked || !g[i].l.result)
			continue;
		p->id = g[i].l.id;
		p->epoch = g[i].l.epoch;
		p->worker_id = g[i].l.worker_id;
		p->agrees = -1;
		p->hash = strdup(g[i].l.result);
		if (!p->hash) {
			store_instance_free_array(g, n);
			return GERR_NOMEM;
		}
		rc->npeer++;
	}
	store_instance_free_array(g, n);
	rc->loaded = 1;
	return 0;
}

static int results_agree(const struct workload *wl, const json_t *params,
			 const json_t *spec, const uint8_t *a, size_t alen,
			 const uint8_t *b, size_t blen)
{
	if (wl->results_agree)
		return wl->results_agree(workload_ctx(wl), params, spec, a, alen,
					 b, blen);
	return alen == blen && memcmp(a, b, alen) == 0;
}

int replica_compare(struct replica_check *rc, const char *data_dir,
		    const struct workload *wl, const json_t *params,
		    const json_t *spec, const uint8_t *raw, size_t len,
		    char *err, size_t errlen)
{
	int rc_all = 0;

	for (size_t i = 0; i < rc->npeer; i++) {
		struct replica_peer *p = &rc->peer[i];
		uint8_t *blob = NULL, *praw = NULL;
		size_t blen = 0, plen = 0;
		struct blob_info info;
		int r = blob_store_get(data_dir, p->hash, &blob, &blen);

		if (r == 0)
			r = blob_decode(blob, blen, &info, &praw, &plen, err,
					errlen);
		free(blob);
		if (r) {
			/* Not a vote: decide rejects that result. */
			p->agrees = -1;
			if (!rc_all)
				snprintf(err, errlen, "result of lease %" PRId64
					 " unreadable: %s", p->id, gerr_str(r));
			rc_all = r;
			continue;
		}
		p->agrees = results_agree(wl, params, spec, raw, len, praw,
					  plen);
		if (p->id == rc->primary && !rc->primary_raw) {
			rc->primary_raw = praw;
			rc->primary_raw_len = plen;
		} else {
			free(praw);
		}
	}
	rc->compared = 1;
	return rc_all;
}

/* ---- decide ---- */

static const struct store_instance *find(const struct store_instance *g,
					 size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (g[i].l.id == id)
			return &g[i];
	return NULL;
}

static const struct replica_peer *find_peer(const struct replica_check *rc,
					    int64_t id)
{
	for (size_t i = 0; i < rc->npeer; i++)
		if (rc->peer[i].id == id)
			return &rc->peer[i];
	return NULL;
}

/* A spot replica wanted by l's verification: asked for unless no worker
 * of another credential could ever answer it; then l merges as it is and
 * an event says so. */
static int spot_replica(struct store *st, const struct replica_policy *pol,
			const struct store_lease *l, double now, int *ret)
{
	uint32_t others = 0;
	int r;

	*ret = 1;
	if (!pol->workload)
		return GERR_INVAL;
	if ((r = store_fleet_others(st, pol->workload, l->worker_id,
				    pol->fleet_since, &others)))
		return r;
	if (others)
		return 0;
	*ret = 0;
	return store_event(st, now, l->job_id, l->id, l->epoch, l->worker_id,
			   "spot_skipped", "a spot replica was drawn, but no "
			   "worker of another credential runs this workload");
}

/* Does l's result need another worker's before it merges? */
static int needs_replica(struct store *st, const struct replica_policy *pol,
			 const struct store_lease *l,
			 const struct replica_check *rc, size_t group_n,
			 double now, int *ret)
{
	uint32_t streak = 0;
	uint64_t confirmed = 0;
	int full = 0, r;

	*ret = 1;
	if (rc->is_replica || group_n > 1)
		return 0;
	if ((r = store_job_get_replicate(st, l->job_id, &full)))
		return r;
	if (full)
		return 0;
	if (pol->trust_after && l->worker_id) {
		if ((r = store_worker_streak(st, l->worker_id, &streak,
					     &confirmed)))
			return r;
		if (streak < pol->trust_after)
			return 0;
	}
	if (rc->spot)
		return spot_replica(st, pol, l, now, ret);
	*ret = 0;
	return 0;
}

/* Two or more results agree (CONFIRM): every other checked result is
 * outvoted (REFUTE; a RECOMPUTE one is not a vote). */
static void judge_quorum(const struct store_instance *g, size_t n,
			 const struct store_instance *p,
			 const struct store_lease *self, unsigned char *move,
			 struct store_replica_verdict *v, int *ret_from_peer)
{
	int p_wins = move[p - g] == STORE_REPLICA_CONFIRM;

	for (size_t i = 0; i < n; i++)
		if (move[i] == STORE_REPLICA_KEEP &&
		    g[i].l.state == LEASE_DONE && g[i].checked)
			move[i] = STORE_REPLICA_REFUTE;
	v->end = STORE_REPLICA_QUORUM;
	v->primary_epoch = p->l.epoch;
	v->adopt = !p_wins;
	*ret_from_peer = p_wins && self->id != p->l.id;
}

/* No result agrees with this one yet: make sure another is coming. */
static void judge_wait(const struct replica_policy *pol,
		       const struct store_lease *self,
		       const struct store_instance *g, size_t n,
		       const unsigned char *move, size_t nchecked,
		       struct store_replica_verdict *v,
		       enum replica_verdict *ret)
{
	size_t live = 0, results = 0;

	for (size_t i = 0; i < n; i++) {
		enum lease_state s = g[i].l.state;

		if (g[i].l.id == self->id)
			continue;
		if (s == LEASE_PENDING || s == LEASE_LEASED ||
		    (s == LEASE_DONE && !g[i].checked) ||
		    move[i] == STORE_REPLICA_RECOMPUTE)
			live++;
		if (s != LEASE_CANCELLED && s != LEASE_PENDING)
			results++;
	}
	*ret = REPLICA_WAIT;
	if (live)
		return;
	if (results + 1 >= pol->max_results) {
		*ret = REPLICA_NOQUORUM;
		v->end = STORE_REPLICA_FAILED;
		v->nresults = results + 1;
		return;
	}
	v->end = STORE_REPLICA_MORE;
	v->nchecked = nchecked;
}

void replica_judge(const struct replica_policy *pol,
		   const struct store_lease *l, const struct replica_check *rc,
		   const struct store_instance *g, size_t n,
		   unsigned char *move, struct store_replica_verdict *ret_v,
		   enum replica_verdict *ret, int *ret_from_peer)
{
	const struct store_instance *me = find(g, n, l->id);
	size_t nwin = 1, nchecked = 1;

	*ret_v = (struct store_replica_verdict){.primary = rc->primary,
		.self = l, .set_checked = !me->checked, .member = g,
		.move = move, .nmember = n,
		.quarantine_after = pol->quarantine_after};
	*ret_from_peer = 0;
	memset(move, STORE_REPLICA_KEEP, n);
	move[me - g] = STORE_REPLICA_CONFIRM;
	/* Every checked result of the group now must be one compared. */
	for (size_t i = 0; i < n; i++) {
		const struct replica_peer *p;

		if (g[i].l.id == l->id || g[i].l.state != LEASE_DONE ||
		    !g[i].checked)
			continue;
		p = find_peer(rc, g[i].l.id);
		if (!rc->compared || !p || p->epoch != g[i].l.epoch) {
			*ret = REPLICA_AGAIN;
			goto open;
		}
		if (p->agrees < 0) {
			/* Unreadable: recomputed, charged to no one. */
			move[i] = STORE_REPLICA_RECOMPUTE;
			continue;
		}
		nchecked++;
		if (p->agrees) {
			move[i] = STORE_REPLICA_CONFIRM;
			nwin++;
		}
	}
	if (nwin >= 2) {
		const struct store_instance *p = find(g, n, rc->primary);

		/* A primary not yet recomputed (its result was unreadable)
		 * must come back before it can take the agreed result. */
		if (p && p->l.state == LEASE_DONE) {
			ret_v->nwin = nwin;
			judge_quorum(g, n, p, l, move, ret_v, ret_from_peer);
			*ret = REPLICA_QUORUM;
			return;
		}
		*ret = REPLICA_WAIT;
		goto open;
	}
	judge_wait(pol, l, g, n, move, nchecked, ret_v, ret);
open:
	/* Only a quorum confirms. */
	for (size_t i = 0; i < n; i++)
		if (move[i] == STORE_REPLICA_CONFIRM)
			move[i] = STORE_REPLICA_KEEP;
}

int replica_decide(struct store *st, const struct replica_policy *pol,
		   const struct store_lease *l, struct replica_check *rc,
		   double now, enum replica_verdict *ret,
		   struct store_lease *ret_primary, int *ret_from_peer)
{
	struct store_instance *g = NULL;
	const struct store_instance *me;
	struct store_replica_verdict v;
	unsigned char *move = NULL;
	enum replica_verdict vd;
	size_t n = 0;
	int need, from_peer, r;

	if (!rc->loaded)
		return GERR_STATE;
	if ((r = store_lease_group(st, rc->primary, &g, &n)))
		return r;
	me = find(g, n, l->id);
	if (!me || me->l.state != LEASE_DONE || me->l.epoch != l->epoch) {
		r = GERR_STALE;
		goto out;
	}
	if ((r = needs_replica(st, pol, l, rc, n, now, &need)))
		goto out;
	if (!need) {
		*ret = REPLICA_MERGE;
		goto out;
	}
	move = malloc(n);
	if (!move) {
		r = GERR_NOMEM;
		goto out;
	}
	replica_judge(pol, l, rc, g, n, move, &v, &vd, &from_peer);
	r = store_replica_apply(st, &v, now, ret_primary);
	if (!r) {
		*ret = vd;
		if (vd == REPLICA_QUORUM)
			*ret_from_peer = from_peer;
	}
out:
	free(move);
	store_instance_free_array(g, n);
	return r;
}
