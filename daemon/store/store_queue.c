/* store_queue.c - the queue's side of the jobs table (migration 010): a
 * job's name, priority and first grant, the lists `gpuctl status` and
 * `gpuctl history` show, and a job's figures (units saved and running,
 * attempts, refuted results).
 *
 * The claim's order itself (priority, then age) is in the claim's SQL
 * (store_leases.c) and in the next job to carve (store_jobs.c).
 */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

const char *const sdb_queue_sql[S_COUNT] = {
	[S_JOB_LIST_RECENT] = "SELECT " JOB_COLS " FROM jobs "
			      "WHERE finished_at = 0 OR finished_at >= ?1 "
			      "ORDER BY id",
	[S_JOB_COUNT_OLD] = "SELECT count(*) FROM jobs "
			    "WHERE finished_at != 0 AND finished_at < ?1",
	/* The filters (store_history_filter) are parameters: ?6 until (0:
	 * none), ?7 one state (-1: any of the three), ?8 workload and ?9
	 * owner (NULL: any). */
	[S_JOB_HISTORY] = "SELECT " JOB_COLS " FROM jobs "
			  "WHERE state IN (?2, ?3, ?4) AND finished_at >= ?1 "
			  "AND finished_at > 0 AND (?6 = 0 OR finished_at < ?6) "
			  "AND (?7 < 0 OR state = ?7) "
			  "AND (?8 IS NULL OR workload = ?8) "
			  "AND (?9 IS NULL OR owner = ?9) "
			  "ORDER BY finished_at DESC, id DESC LIMIT ?5",
	[S_JOB_SET_NAME] = "UPDATE jobs SET name = ?2 WHERE id = ?1",
	[S_JOB_SET_OWNER] = "UPDATE jobs SET owner = ?2 WHERE id = ?1",
	[S_JOB_SET_PRIORITY] = "UPDATE jobs SET priority = ?2 WHERE id = ?1",
	/* The first grant, and a grant that opens a run span (020). */
	[S_JOB_STARTED] = "UPDATE jobs SET started_at = coalesce(started_at, ?2), "
			  "run_since = ?2 WHERE id = ?1 AND (started_at IS NULL "
			  "OR run_since = 0)",
	/* Primary leases only: replicas recompute what their primary
	 * counts. Every grant counts as an attempt, replicas' too. */
	[S_JOB_STATS] =
		"SELECT (SELECT coalesce(sum(CASE WHEN state IN (?2, ?3) "
		"THEN units ELSE checkpoint_units END), 0) FROM leases "
		"WHERE job_id = ?1 AND replica_of IS NULL), "
		"(SELECT coalesce(sum(max(units_done - checkpoint_units, 0)), 0) "
		"FROM leases WHERE job_id = ?1 AND state = ?4 "
		"AND replica_of IS NULL), "
		"(SELECT coalesce(sum(attempts), 0) FROM leases "
		"WHERE job_id = ?1), "
		"(SELECT count(*) FROM events WHERE job_id = ?1 "
		"AND kind IN ('verify_failed', 'refuted'))",
};

int store_job_name_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n < 1 || n > STORE_JOB_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

int store_job_list_recent(struct store *st, double since,
			  struct store_job **ret, size_t *ret_n,
			  uint64_t *ret_hidden)
{
	static const char what[] = "store_job_list_recent";
	int64_t hidden = 0;
	struct store_job *a = NULL;
	size_t n = 0;
	int r;

	if (!ret || !ret_n)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	/* Both reads see one snapshot only inside a transaction; outside,
	 * a job finishing in between moves between them, which status
	 * shows a moment later anyway. */
	if ((r = sdb_job_list(st, S_JOB_LIST_RECENT, SDB_ARGS(sa_dbl(since)),
			      &a, &n, what)))
		return r;
	if (ret_hidden) {
		r = sdb_one(st, S_JOB_COUNT_OLD, SDB_ARGS(sa_dbl(since)),
			    SDB_COLS(sc_i64(&hidden)), what);
		if (r) {
			store_job_free_array(a, n);
			return r;
		}
		*ret_hidden = hidden > 0 ? (uint64_t)hidden : 0;
	}
	*ret = a;
	*ret_n = n;
	return 0;
}

int store_job_history(struct store *st, double since, uint32_t limit,
		      struct store_job **ret, size_t *ret_n)
{
	return store_job_history_filter(st, &(struct store_history_filter){
		.since = since, .state = -1, .limit = limit }, ret, ret_n);
}

int store_job_history_filter(struct store *st, const struct store_history_filter *f,
			     struct store_job **ret, size_t *ret_n)
{
	static const char what[] = "store_job_history";

	if (!f || !ret || !ret_n || f->limit == 0 || !(f->since >= 0) ||
	    !(f->until >= 0) || (f->state != -1 && f->state != JOB_DONE &&
	    f->state != JOB_FAILED && f->state != JOB_CANCELLED))
		return sdb_err(st, GERR_INVAL, "%s: bad arguments", what);
	return sdb_job_list(st, S_JOB_HISTORY,
			    SDB_ARGS(sa_dbl(f->since), sa_int(JOB_DONE),
				     sa_int(JOB_FAILED), sa_int(JOB_CANCELLED),
				     sa_int(f->limit), sa_dbl(f->until),
				     sa_int(f->state), sa_text(f->workload),
				     sa_text(f->owner)), ret, ret_n, what);
}

int store_job_set_owner(struct store *st, int64_t id, const char *owner)
{
	static const char what[] = "store_job_set_owner";
	size_t n = owner ? strlen(owner) : 0;

	if (owner && (n < 1 || n > STORE_OWNER_MAX))
		return sdb_err(st, GERR_INVAL, "%s: an owner is 1 to %d bytes",
			       what, STORE_OWNER_MAX);
	return sdb_write(st, S_JOB_SET_OWNER,
			 SDB_ARGS(sa_int(id), sa_text(owner)), "job", id, what);
}

int store_job_set_name(struct store *st, int64_t id, const char *name)
{
	static const char what[] = "store_job_set_name";

	if (name && !store_job_name_valid(name))
		return sdb_err(st, GERR_INVAL, "%s: a job name is 1 to %d of "
			       "A-Z a-z 0-9 . _ -", what, STORE_JOB_NAME_MAX);
	return sdb_write(st, S_JOB_SET_NAME,
			 SDB_ARGS(sa_int(id), sa_text(name)), "job", id, what);
}

int store_job_set_priority(struct store *st, int64_t id, int priority)
{
	static const char what[] = "store_job_set_priority";

	if (priority < STORE_PRIORITY_MIN || priority > STORE_PRIORITY_MAX)
		return sdb_err(st, GERR_INVAL, "%s: priority %d is outside "
			       "%d..%d", what, priority, STORE_PRIORITY_MIN,
			       STORE_PRIORITY_MAX);
	return sdb_write(st, S_JOB_SET_PRIORITY,
			 SDB_ARGS(sa_int(id), sa_int(priority)), "job", id,
			 what);
}

int store_job_mark_started(struct store *st, int64_t id, double now)
{
	return sdb_write(st, S_JOB_STARTED, SDB_ARGS(sa_int(id), sa_dbl(now)),
			 NULL, id, "store_job_mark_started");
}

int store_job_stats(struct store *st, int64_t job_id,
		    struct store_job_stats *ret)
{
	static const char what[] = "store_job_stats";
	int64_t v[4];
	int r;

	if (!ret)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	r = sdb_one(st, S_JOB_STATS,
		    SDB_ARGS(sa_int(job_id), sa_int(LEASE_DONE),
			     sa_int(LEASE_VERIFIED), sa_int(LEASE_LEASED)),
		    SDB_COLS(sc_i64(&v[0]), sc_i64(&v[1]), sc_i64(&v[2]),
			     sc_i64(&v[3])), what);
	if (r == GERR_NOTFOUND) /* an aggregate always gives a row */
		r = sdb_fail(st, SQLITE_INTERNAL, what);
	if (r)
		return r;
	for (int i = 0; i < 4; i++) {
		if (v[i] < 0)
			v[i] = 0;
	}
	ret->units_saved = (uint64_t)v[0];
	ret->units_running = (uint64_t)v[1];
	ret->attempts = (uint64_t)v[2];
	ret->verify_failures = (uint64_t)v[3];
	return 0;
}
