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
	[S_JOB_HISTORY] = "SELECT " JOB_COLS " FROM jobs "
			  "WHERE state IN (?2, ?3, ?4) AND finished_at >= ?1 "
			  "ORDER BY finished_at DESC, id DESC LIMIT ?5",
	[S_JOB_SET_NAME] = "UPDATE jobs SET name = ?2 WHERE id = ?1",
	[S_JOB_SET_PRIORITY] = "UPDATE jobs SET priority = ?2 WHERE id = ?1",
	[S_JOB_STARTED] = "UPDATE jobs SET started_at = ?2 "
			  "WHERE id = ?1 AND started_at IS NULL",
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
	sqlite3_stmt *s = sdb_stmt(st, S_JOB_LIST_RECENT);
	int64_t hidden = 0;
	void *a = NULL;
	size_t n = 0;
	int r;

	if (!ret || !ret_n)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	/* Both reads see one snapshot only inside a transaction; outside,
	 * a job finishing in between moves between them, which status
	 * shows a moment later anyway. */
	sqlite3_bind_double(s, 1, since);
	r = sdb_get_all(st, s, sizeof(**ret), sdb_job_row, sdb_job_clear_v, &a,
			&n, what);
	if (r)
		return r;
	if (ret_hidden) {
		s = sdb_stmt(st, S_JOB_COUNT_OLD);
		sqlite3_bind_double(s, 1, since);
		r = sdb_step_int(st, s, &hidden, what);
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
	static const char what[] = "store_job_history";
	sqlite3_stmt *s = sdb_stmt(st, S_JOB_HISTORY);
	void *a = NULL;
	size_t n = 0;
	int r;

	if (!ret || !ret_n || limit == 0)
		return sdb_err(st, GERR_INVAL, "%s: bad arguments", what);
	sqlite3_bind_double(s, 1, since);
	sqlite3_bind_int(s, 2, JOB_DONE);
	sqlite3_bind_int(s, 3, JOB_FAILED);
	sqlite3_bind_int(s, 4, JOB_CANCELLED);
	sqlite3_bind_int64(s, 5, limit);
	r = sdb_get_all(st, s, sizeof(**ret), sdb_job_row, sdb_job_clear_v, &a,
			&n, what);
	if (r == 0) {
		*ret = a;
		*ret_n = n;
	}
	return r;
}

/* Run statement sid, bound by the caller, as one write; GERR_NOTFOUND
 * when it changed no row and must_change. */
static int queue_write(struct store *st, enum stmt_id sid, int64_t id,
		       int must_change, const char *what)
{
	int r = sdb_run(st, sid, what);

	if (r == 0 && must_change && sqlite3_changes(st->db) == 0)
		r = sdb_err(st, GERR_NOTFOUND, "%s: no job %lld", what,
			    (long long)id);
	return sdb_op_end(st, r, what);
}

int store_job_set_name(struct store *st, int64_t id, const char *name)
{
	static const char what[] = "store_job_set_name";
	sqlite3_stmt *s = sdb_stmt(st, S_JOB_SET_NAME);
	int r;

	if (name && !store_job_name_valid(name))
		return sdb_err(st, GERR_INVAL, "%s: a job name is 1 to %d of "
			       "A-Z a-z 0-9 . _ -", what, STORE_JOB_NAME_MAX);
	if ((r = sdb_op_begin(st, what)))
		return r;
	if ((r = sqlite3_bind_int64(s, 1, id)) != SQLITE_OK ||
	    (r = sdb_bind_text(s, 2, name)) != SQLITE_OK) {
		r = sdb_fail(st, r, what);
		sdb_stmt_done(s);
		return sdb_op_end(st, r, what);
	}
	return queue_write(st, S_JOB_SET_NAME, id, 1, what);
}

int store_job_set_priority(struct store *st, int64_t id, int priority)
{
	static const char what[] = "store_job_set_priority";
	sqlite3_stmt *s = sdb_stmt(st, S_JOB_SET_PRIORITY);
	int r;

	if (priority < STORE_PRIORITY_MIN || priority > STORE_PRIORITY_MAX)
		return sdb_err(st, GERR_INVAL, "%s: priority %d is outside "
			       "%d..%d", what, priority, STORE_PRIORITY_MIN,
			       STORE_PRIORITY_MAX);
	if ((r = sdb_op_begin(st, what)))
		return r;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, priority);
	return queue_write(st, S_JOB_SET_PRIORITY, id, 1, what);
}

int store_job_mark_started(struct store *st, int64_t id, double now)
{
	static const char what[] = "store_job_mark_started";
	sqlite3_stmt *s = sdb_stmt(st, S_JOB_STARTED);
	int r;

	if ((r = sdb_op_begin(st, what)))
		return r;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_double(s, 2, now);
	return queue_write(st, S_JOB_STARTED, id, 0, what);
}

int store_job_stats(struct store *st, int64_t job_id,
		    struct store_job_stats *ret)
{
	static const char what[] = "store_job_stats";
	sqlite3_stmt *s = sdb_stmt(st, S_JOB_STATS);
	int64_t v[4];
	int rc, r = 0;

	if (!ret)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	BIND(sqlite3_bind_int64(s, 1, job_id));
	BIND(sqlite3_bind_int(s, 2, LEASE_DONE));
	BIND(sqlite3_bind_int(s, 3, LEASE_VERIFIED));
	BIND(sqlite3_bind_int(s, 4, LEASE_LEASED));
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		r = sdb_fail(st, rc == SQLITE_DONE ? SQLITE_INTERNAL : rc, what);
		goto out;
	}
	for (int i = 0; i < 4; i++) {
		v[i] = sqlite3_column_int64(s, i);
		if (v[i] < 0)
			v[i] = 0;
	}
	ret->units_saved = (uint64_t)v[0];
	ret->units_running = (uint64_t)v[1];
	ret->attempts = (uint64_t)v[2];
	ret->verify_failures = (uint64_t)v[3];
out:
	sdb_stmt_done(s);
	return r;
}
