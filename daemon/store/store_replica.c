/* store_replica.c - replication's rows (schema/004_replica.sql): a lease's
 * group (its primary and the replicas that recompute it), a job's check
 * mode, a worker's run of confirmed results. The moves of a group's leases
 * are in store_leases.c with every other lease move.
 *
 * store_replica_apply applies a group's verdict (decided in
 * sched/replica.c) with those moves, the workers' charges and the events.
 *
 * A group is named by its primary's id: the primary has replica_of NULL,
 * each replica replica_of = the primary. Replicas copy the primary's job,
 * spec and units and are never parts, never units of the job.
 */
#include "store_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const sdb_replica_sql[S_COUNT] = {
	[S_REPLICA_INFO] = "SELECT coalesce(replica_of, 0), checked "
			   "FROM leases WHERE id = ?1",
	[S_REPLICA_GROUP] = "SELECT " LEASE_COLS ", coalesce(replica_of, 0), "
			    "checked FROM leases "
			    "WHERE id = ?1 OR replica_of = ?1 ORDER BY id",
	/* Only a primary is copied: a group never nests. */
	[S_REPLICA_INSERT] =
		"INSERT INTO leases (job_id, spec, units, state, epoch, "
		"replica_of, created_at, updated_at) "
		"SELECT job_id, spec, units, ?2, 0, id, ?3, ?3 FROM leases "
		"WHERE id = ?1 AND replica_of IS NULL RETURNING id",
	[S_REPLICA_COUNTS] = "SELECT state, count(*) FROM leases "
			     "WHERE job_id = ?1 AND replica_of IS NOT NULL "
			     "GROUP BY state",
	/* Pending leases that some worker may not take (the claim's
	 * exclusions): another lease of their group is held by, or was
	 * computed by, a worker; or a worker failed them. */
	[S_REPLICA_WAITING] =
		"SELECT count(*) FROM leases AS l WHERE l.job_id = ?1 "
		"AND l.state = ?2 AND (EXISTS (SELECT 1 FROM leases AS o "
		"WHERE o.id != l.id AND o.worker_id IS NOT NULL "
		"AND (o.id = coalesce(l.replica_of, l.id) "
		"OR o.replica_of = coalesce(l.replica_of, l.id))) "
		"OR EXISTS (SELECT 1 FROM lease_failures AS f "
		"WHERE f.lease_id = l.id))",
	[S_JOB_REPLICATE_SET] = "UPDATE jobs SET replicate = ?2 WHERE id = ?1",
	[S_JOB_REPLICATE_GET] = "SELECT replicate FROM jobs WHERE id = ?1",
	[S_WORKER_CONFIRM] = "UPDATE workers SET streak = streak + 1, "
			     "confirmed = confirmed + 1 WHERE id = ?1",
	[S_WORKER_STREAK] = "SELECT streak, confirmed FROM workers "
			    "WHERE id = ?1",
};

static int instance_row(sqlite3_stmt *s, void *elem)
{
	struct store_instance *in = elem;
	int r = sdb_lease_row(s, &in->l);

	if (r)
		return r;
	in->replica_of = sqlite3_column_int64(s, 16);
	in->checked = sqlite3_column_int(s, 17);
	return 0;
}

static void instance_clear_v(void *e)
{
	store_lease_clear(&((struct store_instance *)e)->l);
}

void store_instance_free_array(struct store_instance *a, size_t n)
{
	sdb_free_array(a, n, sizeof(*a), instance_clear_v);
}

int store_job_set_replicate(struct store *st, int64_t id, int on)
{
	return sdb_write(st, S_JOB_REPLICATE_SET,
			 SDB_ARGS(sa_int(id), sa_int(on ? 1 : 0)), "job", id,
			 "store_job_set_replicate");
}

/* Statement sid's one row about key into cols; GERR_NOTFOUND "what: no
 * <noun> <key>" when there is none. */
static int get_by_id(struct store *st, enum stmt_id sid, int64_t key,
		     const struct sdb_col *cols, const char *noun,
		     const char *what)
{
	int r = sdb_one(st, sid, SDB_ARGS(sa_int(key)), cols, what);

	if (r == GERR_NOTFOUND)
		r = sdb_err(st, r, "%s: no %s %lld", what, noun,
			    (long long)key);
	return r;
}

int store_job_get_replicate(struct store *st, int64_t id, int *ret)
{
	static const char what[] = "store_job_get_replicate";
	int v = 0;
	int r;

	if (!ret)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	r = get_by_id(st, S_JOB_REPLICATE_GET, id, SDB_COLS(sc_int(&v)), "job",
		      what);
	if (r == 0)
		*ret = v != 0;
	return r;
}

int store_lease_replica_of(struct store *st, int64_t id,
			   int64_t *ret_replica_of, int *ret_checked)
{
	static const char what[] = "store_lease_replica_of";

	if (!ret_replica_of || !ret_checked)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	return get_by_id(st, S_REPLICA_INFO, id,
			 SDB_COLS(sc_i64(ret_replica_of), sc_int(ret_checked)),
			 "lease", what);
}

int store_lease_group(struct store *st, int64_t primary,
		      struct store_instance **ret, size_t *ret_n)
{
	return sdb_get_all(st, S_REPLICA_GROUP, SDB_ARGS(sa_int(primary)),
			   sizeof(**ret), instance_row, instance_clear_v, ret,
			   ret_n, "store_lease_group");
}

int store_lease_insert_replica(struct store *st, int64_t primary, double now,
			       int64_t *ret_id)
{
	static const char what[] = "store_lease_insert_replica";
	int64_t id = 0;
	int r;

	if (!ret_id)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	r = sdb_write_one(st, S_REPLICA_INSERT,
			  SDB_ARGS(sa_int(primary), sa_int(LEASE_PENDING),
				   sa_dbl(now)),
			  SDB_COLS(sc_i64(&id)), what);
	if (r == GERR_NOTFOUND)
		r = sdb_err(st, r, "%s: no primary lease %lld", what,
			    (long long)primary);
	if (r == 0)
		*ret_id = id;
	return r;
}

int store_replica_counts(struct store *st, int64_t job_id,
			 uint64_t counts[LEASE_NSTATES])
{
	return sdb_state_counts(st, S_REPLICA_COUNTS, job_id, counts,
				"store_replica_counts");
}

int store_replica_waiting(struct store *st, int64_t job_id, uint64_t *ret_n)
{
	return sdb_count(st, S_REPLICA_WAITING,
			 SDB_ARGS(sa_int(job_id), sa_int(LEASE_PENDING)), ret_n,
			 "store_replica_waiting");
}

int store_worker_confirm(struct store *st, int64_t id)
{
	return sdb_write(st, S_WORKER_CONFIRM, SDB_ARGS(sa_int(id)), "worker",
			 id, "store_worker_confirm");
}

int store_worker_streak(struct store *st, int64_t id, uint32_t *ret_streak,
			uint64_t *ret_confirmed)
{
	static const char what[] = "store_worker_streak";
	int64_t k = 0;
	int r;

	if (!ret_streak || !ret_confirmed)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	r = get_by_id(st, S_WORKER_STREAK, id,
		      SDB_COLS(sc_i64(&k), sc_u64(ret_confirmed)), "worker",
		      what);
	if (r == 0)
		*ret_streak = k > UINT32_MAX ? UINT32_MAX : (uint32_t)k;
	return r;
}

/* ---- a group's verdict ---- */

static int group_event(struct store *st, double now,
		       const struct store_lease *l, const char *kind,
		       const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int group_event(struct store *st, double now,
		       const struct store_lease *l, const char *kind,
		       const char *fmt, ...)
{
	char detail[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return store_event(st, now, l->job_id, l->id, l->epoch, l->worker_id,
			   kind, detail);
}

/* An agreeing member: its worker confirmed; a replica verified and its
 * worker credited (the primary merges through the caller). */
static int group_confirm(struct store *st,
			 const struct store_replica_verdict *v,
			 const struct store_lease *x, double now)
{
	int r = 0;

	if (x->worker_id)
		r = store_worker_confirm(st, x->worker_id);
	if (!r && x->id != v->primary)
		r = store_lease_set_verified(st, x->id, x->epoch, now);
	if (!r && x->id != v->primary && x->worker_id)
		r = store_worker_credit(st, x->worker_id, x->units, 0, now);
	if (!r)
		r = group_event(st, now, x, "confirmed", "lease %" PRId64
				": %zu results agree", v->primary, v->nwin);
	return r;
}

/* An outvoted member: its worker charged; a replica refuted (an outvoted
 * primary adopts the agreed result instead). */
static int group_refute(struct store *st,
			const struct store_replica_verdict *v,
			const struct store_lease *x, double now)
{
	int q = 0, r = 0;

	if (x->worker_id)
		r = store_worker_fail(st, x->worker_id, v->quarantine_after,
				      &q);
	if (!r && x->id != v->primary)
		r = store_lease_refute(st, x->id, x->epoch, "outvoted: another "
				       "result of the lease was confirmed", now);
	if (!r)
		r = group_event(st, now, x, "refuted", "lease %" PRId64
				": %zu other results agree on a different "
				"result%s", v->primary, v->nwin,
				q ? "; worker quarantined" : "");
	return r;
}

static int group_quorum(struct store *st,
			const struct store_replica_verdict *v, double now,
			struct store_lease *ret_primary)
{
	int r = 0;

	for (size_t i = 0; i < v->nmember && !r; i++) {
		if (v->move[i] == STORE_REPLICA_CONFIRM)
			r = group_confirm(st, v, &v->member[i].l, now);
		else if (v->move[i] == STORE_REPLICA_REFUTE)
			r = group_refute(st, v, &v->member[i].l, now);
	}
	/* The primary stands for the lease: an outvoted primary takes the
	 * agreeing result; its producer is charged above, credited nowhere. */
	if (!r && v->adopt)
		r = store_lease_adopt(st, v->primary, v->primary_epoch,
				      v->self->result, 0, now);
	if (!r)
		r = store_group_cancel(st, v->primary, now);
	if (!r)
		r = store_lease_get(st, v->primary, ret_primary);
	return r;
}

static int group_more(struct store *st, const struct store_replica_verdict *v,
		      double now)
{
	int64_t id;
	int r;

	if ((r = store_lease_insert_replica(st, v->primary, now, &id)))
		return r;
	if (v->nchecked > 1) {
		char why[256];

		snprintf(why, sizeof(why), "lease %" PRId64 ": %zu results "
			 "disagree; replica lease %" PRId64 " decides",
			 v->primary, v->nchecked, id);
		if ((r = store_job_set_reason(st, v->self->job_id, why)))
			return r;
	}
	return group_event(st, now, v->self, "replica", "replica lease %"
			   PRId64 " of lease %" PRId64 " (%s)", id, v->primary,
			   v->nchecked > 1 ? "results disagree" : "to confirm");
}

static int group_failed(struct store *st,
			const struct store_replica_verdict *v, double now)
{
	char why[256];
	int r;

	snprintf(why, sizeof(why), "lease %" PRId64 ": no two of %zu results "
		 "agree", v->primary, v->nresults);
	r = store_job_set_state(st, v->self->job_id, JOB_FAILED, why, now);
	return r ? r : group_event(st, now, v->self, "no_quorum", "%s", why);
}

int store_replica_apply(struct store *st,
			const struct store_replica_verdict *v, double now,
			struct store_lease *ret_primary)
{
	static const char what[] = "store_replica_apply";
	const struct store_lease *self = v ? v->self : NULL;
	int r = 0;

	if (!self || (v->nmember && (!v->member || !v->move)))
		return sdb_err(st, GERR_INVAL, "%s: no verdict", what);
	if (v->end == STORE_REPLICA_QUORUM && !ret_primary)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	if (v->set_checked &&
	    (r = store_lease_set_checked(st, self->id, self->epoch, now)))
		return r;
	for (size_t i = 0; i < v->nmember && !r; i++)
		if (v->move[i] == STORE_REPLICA_RECOMPUTE)
			r = store_lease_recompute(st, v->member[i].l.id,
				v->member[i].l.epoch,
				"result unreadable when compared", now);
	if (r)
		return r;
	switch (v->end) {
	case STORE_REPLICA_QUORUM:
		return group_quorum(st, v, now, ret_primary);
	case STORE_REPLICA_MORE:
		return group_more(st, v, now);
	case STORE_REPLICA_FAILED:
		return group_failed(st, v, now);
	case STORE_REPLICA_OPEN:
		break;
	}
	return 0;
}
