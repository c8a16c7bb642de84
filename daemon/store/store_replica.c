/* store_replica.c - replication's rows (schema/004_replica.sql): a lease's
 * group (its primary and the replicas that recompute it), a job's check
 * mode, a worker's run of confirmed results. The moves of a group's leases
 * are in store_leases.c with every other lease move.
 *
 * A group is named by its primary's id: the primary has replica_of NULL,
 * each replica replica_of = the primary. Replicas copy the primary's job,
 * spec and units and are never parts, never units of the job.
 */
#include "store_internal.h"

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

void store_instance_free_array(struct store_instance *a, size_t n)
{
	if (!a)
		return;
	for (size_t i = 0; i < n; i++)
		store_lease_clear(&a[i].l);
	free(a);
}

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

int store_job_set_replicate(struct store *st, int64_t id, int on)
{
	static const char what[] = "store_job_set_replicate";
	sqlite3_stmt *s = sdb_stmt(st, S_JOB_REPLICATE_SET);
	int r;

	if ((r = sdb_op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_int64(s, 1, id));
	BIND(sqlite3_bind_int(s, 2, on ? 1 : 0));
	s = NULL;
	r = sdb_run(st, S_JOB_REPLICATE_SET, what);
	if (r == 0 && sqlite3_changes(st->db) == 0)
		r = sdb_err(st, GERR_NOTFOUND, "%s: no job %lld", what,
			    (long long)id);
out:
	if (s)
		sdb_stmt_done(s);
	return sdb_op_end(st, r, what);
}

int store_job_get_replicate(struct store *st, int64_t id, int *ret)
{
	static const char what[] = "store_job_get_replicate";
	sqlite3_stmt *s = sdb_stmt(st, S_JOB_REPLICATE_GET);
	int64_t v = 0;
	int r;

	if (!ret)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	BIND(sqlite3_bind_int64(s, 1, id));
	r = sdb_step_int(st, s, &v, what);
	s = NULL;
	if (r == GERR_NOTFOUND)
		r = sdb_err(st, r, "%s: no job %lld", what, (long long)id);
	if (r == 0)
		*ret = v != 0;
out:
	if (s)
		sdb_stmt_done(s);
	return r;
}

int store_lease_replica_of(struct store *st, int64_t id,
			   int64_t *ret_replica_of, int *ret_checked)
{
	static const char what[] = "store_lease_replica_of";
	sqlite3_stmt *s = sdb_stmt(st, S_REPLICA_INFO);
	int rc, r = 0;

	if (!ret_replica_of || !ret_checked)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	BIND(sqlite3_bind_int64(s, 1, id));
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*ret_replica_of = sqlite3_column_int64(s, 0);
		*ret_checked = sqlite3_column_int(s, 1);
	} else if (rc == SQLITE_DONE) {
		r = sdb_err(st, GERR_NOTFOUND, "%s: no lease %lld", what,
			    (long long)id);
	} else {
		r = sdb_fail(st, rc, what);
	}
out:
	sdb_stmt_done(s);
	return r;
}

int store_lease_group(struct store *st, int64_t primary,
		      struct store_instance **ret, size_t *ret_n)
{
	static const char what[] = "store_lease_group";
	sqlite3_stmt *s = sdb_stmt(st, S_REPLICA_GROUP);
	void *a;
	size_t n;
	int r;

	if (!ret || !ret_n)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	BIND(sqlite3_bind_int64(s, 1, primary));
	r = sdb_get_all(st, s, sizeof(**ret), instance_row, instance_clear_v,
			&a, &n, what);
	s = NULL;
	if (r == 0) {
		*ret = a;
		*ret_n = n;
	}
out:
	if (s)
		sdb_stmt_done(s);
	return r;
}

int store_lease_insert_replica(struct store *st, int64_t primary, double now,
			       int64_t *ret_id)
{
	static const char what[] = "store_lease_insert_replica";
	sqlite3_stmt *s = sdb_stmt(st, S_REPLICA_INSERT);
	int64_t id = 0;
	int r;

	if (!ret_id)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	if ((r = sdb_op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_int64(s, 1, primary));
	BIND(sqlite3_bind_int(s, 2, LEASE_PENDING));
	BIND(sqlite3_bind_double(s, 3, now));
	r = sdb_step_int(st, s, &id, what);
	s = NULL;
	if (r == GERR_NOTFOUND)
		r = sdb_err(st, r, "%s: no primary lease %lld", what,
			    (long long)primary);
out:
	if (s)
		sdb_stmt_done(s);
	r = sdb_op_end(st, r, what);
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
	return sdb_count(st, S_REPLICA_WAITING, job_id, LEASE_PENDING, ret_n,
			 "store_replica_waiting");
}

int store_worker_confirm(struct store *st, int64_t id)
{
	static const char what[] = "store_worker_confirm";
	sqlite3_stmt *s = sdb_stmt(st, S_WORKER_CONFIRM);
	int r;

	if ((r = sdb_op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_int64(s, 1, id));
	s = NULL;
	r = sdb_run(st, S_WORKER_CONFIRM, what);
	if (r == 0 && sqlite3_changes(st->db) == 0)
		r = sdb_err(st, GERR_NOTFOUND, "%s: no worker %lld", what,
			    (long long)id);
out:
	if (s)
		sdb_stmt_done(s);
	return sdb_op_end(st, r, what);
}

int store_worker_streak(struct store *st, int64_t id, uint32_t *ret_streak,
			uint64_t *ret_confirmed)
{
	static const char what[] = "store_worker_streak";
	sqlite3_stmt *s = sdb_stmt(st, S_WORKER_STREAK);
	int rc, r = 0;

	if (!ret_streak || !ret_confirmed)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	BIND(sqlite3_bind_int64(s, 1, id));
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		int64_t k = sqlite3_column_int64(s, 0);

		*ret_streak = k > UINT32_MAX ? UINT32_MAX : (uint32_t)k;
		*ret_confirmed = (uint64_t)sqlite3_column_int64(s, 1);
	} else if (rc == SQLITE_DONE) {
		r = sdb_err(st, GERR_NOTFOUND, "%s: no worker %lld", what,
			    (long long)id);
	} else {
		r = sdb_fail(st, rc, what);
	}
out:
	sdb_stmt_done(s);
	return r;
}
