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
