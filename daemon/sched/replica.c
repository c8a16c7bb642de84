/* replica.c - replication of results: a lease's group loaded, its results
 * compared, the quorum decided (replica.h).
 *
 * Invariant: the checked, done results of an undecided group pairwise
 * disagree (two that agree decide the group at once), so a new result
 * decides the group exactly when it agrees with one of them, and no other
 * pair needs comparing.
 */
#include <inttypes.h>
#include <stdarg.h>
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

/* Does l's result need another worker's before it merges? */
static int needs_replica(struct store *st, const struct replica_policy *pol,
			 const struct store_lease *l,
			 const struct replica_check *rc, size_t group_n,
			 int *ret)
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
	*ret = 0;
	return 0;
}

static int event(struct store *st, double now, const struct store_lease *l,
		 const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int event(struct store *st, double now, const struct store_lease *l,
		 const char *kind, const char *fmt, ...)
{
	char detail[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return store_event(st, now, l->job_id, l->id, l->epoch, l->worker_id,
			   kind, detail);
}

/* Two or more results agree (winner[i] 1): merge the primary with them,
 * charge every other checked result's worker (winner[i] 0; 2: a result
 * that could not be read, sent back to be recomputed). */
static int decide_quorum(struct store *st, const struct replica_policy *pol,
			 const struct store_lease *self,
			 const struct replica_check *rc,
			 const struct store_instance *g, size_t n,
			 const unsigned char *winner, size_t nwin, double now,
			 struct store_lease *ret_primary, int *ret_from_peer)
{
	const struct store_instance *p = find(g, n, rc->primary);
	int p_wins, r = 0;

	if (!p)
		return GERR_CORRUPT;
	p_wins = winner[p - g] == 1;
	for (size_t i = 0; i < n && !r; i++) {
		const struct store_lease *x = &g[i].l;

		if (winner[i] == 1) {
			if (x->worker_id)
				r = store_worker_confirm(st, x->worker_id);
			if (!r && x->id != rc->primary)
				r = store_lease_set_verified(st, x->id, x->epoch,
							     now);
			if (!r && x->id != rc->primary && x->worker_id)
				r = store_worker_credit(st, x->worker_id,
							x->units, 0, now);
			if (!r)
				r = event(st, now, x, "confirmed", "lease %"
					  PRId64 ": %zu results agree",
					  rc->primary, nwin);
		} else if (!winner[i] && x->state == LEASE_DONE &&
			   g[i].checked) {
			int q = 0;

			if (x->worker_id)
				r = store_worker_fail(st, x->worker_id,
						      pol->quarantine_after, &q);
			if (!r && x->id != rc->primary)
				r = store_lease_refute(st, x->id, x->epoch,
					"outvoted: another result of the lease "
					"was confirmed", now);
			if (!r)
				r = event(st, now, x, "refuted", "lease %" PRId64
					  ": %zu other results agree on a "
					  "different result%s", rc->primary,
					  nwin, q ? "; worker quarantined" : "");
		}
	}
	/* The primary stands for the lease: an outvoted primary takes this
	 * (agreeing) result; its producer is charged above, credited
	 * nowhere. */
	if (!r && !p_wins)
		r = store_lease_adopt(st, p->l.id, p->l.epoch, self->result, 0,
				      now);
	if (!r)
		r = store_group_cancel(st, rc->primary, now);
	if (!r)
		r = store_lease_get(st, rc->primary, ret_primary);
	if (!r)
		*ret_from_peer = p_wins && self->id != rc->primary;
	return r;
}

/* No result agrees with this one yet: make sure another is coming. */
static int decide_wait(struct store *st, const struct replica_policy *pol,
		       const struct store_lease *self,
		       const struct replica_check *rc,
		       const struct store_instance *g, size_t n,
		       const unsigned char *winner, size_t nchecked,
		       double now, enum replica_verdict *ret)
{
	size_t live = 0, results = 0;
	int64_t id;
	int r;

	for (size_t i = 0; i < n; i++) {
		enum lease_state s = g[i].l.state;

		if (g[i].l.id == self->id)
			continue;
		if (s == LEASE_PENDING || s == LEASE_LEASED ||
		    (s == LEASE_DONE && !g[i].checked) || winner[i] == 2)
			live++;
		if (s != LEASE_CANCELLED && s != LEASE_PENDING)
			results++;
	}
	*ret = REPLICA_WAIT;
	if (live)
		return 0;
	if (results + 1 >= pol->max_results) {
		char why[256];

		snprintf(why, sizeof(why), "lease %" PRId64 ": no two of %zu "
			 "results agree", rc->primary, results + 1);
		*ret = REPLICA_NOQUORUM;
		r = store_job_set_state(st, self->job_id, JOB_FAILED, why, now);
		return r ? r : event(st, now, self, "no_quorum", "%s", why);
	}
	if ((r = store_lease_insert_replica(st, rc->primary, now, &id)))
		return r;
	if (nchecked > 1) {
		char why[256];

		snprintf(why, sizeof(why), "lease %" PRId64 ": %zu results "
			 "disagree; replica lease %" PRId64 " decides",
			 rc->primary, nchecked, id);
		if ((r = store_job_set_reason(st, self->job_id, why)))
			return r;
	}
	return event(st, now, self, "replica", "replica lease %" PRId64
		     " of lease %" PRId64 " (%s)", id, rc->primary,
		     nchecked > 1 ? "results disagree" : "to confirm");
}

int replica_decide(struct store *st, const struct replica_policy *pol,
		   const struct store_lease *l, struct replica_check *rc,
		   double now, enum replica_verdict *ret,
		   struct store_lease *ret_primary, int *ret_from_peer)
{
	struct store_instance *g = NULL;
	const struct store_instance *me;
	unsigned char *winner = NULL;
	size_t n = 0, nwin = 1, nchecked = 1;
	int need, r;

	if (!rc->loaded)
		return GERR_STATE;
	if ((r = store_lease_group(st, rc->primary, &g, &n)))
		return r;
	me = find(g, n, l->id);
	if (!me || me->l.state != LEASE_DONE || me->l.epoch != l->epoch) {
		r = GERR_STALE;
		goto out;
	}
	if ((r = needs_replica(st, pol, l, rc, n, &need)))
		goto out;
	if (!need) {
		*ret = REPLICA_MERGE;
		goto out;
	}
	if (!me->checked &&
	    (r = store_lease_set_checked(st, l->id, l->epoch, now)))
		goto out;
	winner = calloc(n, 1);
	if (!winner) {
		r = GERR_NOMEM;
		goto out;
	}
	winner[me - g] = 1;
	/* Every checked result of the group now must be one compared. */
	for (size_t i = 0; i < n; i++) {
		const struct replica_peer *p;

		if (g[i].l.id == l->id || g[i].l.state != LEASE_DONE ||
		    !g[i].checked)
			continue;
		p = find_peer(rc, g[i].l.id);
		if (!rc->compared || !p || p->epoch != g[i].l.epoch) {
			*ret = REPLICA_AGAIN;
			goto out;
		}
		if (p->agrees < 0) {
			/* Unreadable: recomputed, charged to no one. */
			r = store_lease_recompute(st, p->id, p->epoch,
				"result unreadable when compared", now);
			if (r)
				goto out;
			winner[i] = 2;
			continue;
		}
		nchecked++;
		if (p->agrees) {
			winner[i] = 1;
			nwin++;
		}
	}
	if (nwin >= 2) {
		const struct store_instance *p = find(g, n, rc->primary);

		/* A primary not yet recomputed (its result was unreadable)
		 * must come back before it can take the agreed result. */
		if (!p || p->l.state != LEASE_DONE) {
			*ret = REPLICA_WAIT;
			goto out;
		}
		r = decide_quorum(st, pol, l, rc, g, n, winner, nwin, now,
				  ret_primary, ret_from_peer);
		if (!r)
			*ret = REPLICA_QUORUM;
		goto out;
	}
	r = decide_wait(st, pol, l, rc, g, n, winner, nchecked, now, ret);
out:
	free(winner);
	store_instance_free_array(g, n);
	return r;
}
