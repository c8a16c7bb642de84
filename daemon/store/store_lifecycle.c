/* store_lifecycle.c - lifecycles the operator steers (migration 021): a
 * job that waits for another (submit --after), a job's time limit and the
 * time it has run, requeueing a failed or cancelled job, and the jobs'
 * ends as the 'job_end' events of the schema's trigger record them.
 *
 * Invariants
 *  1. A job waits only for an earlier job (a CHECK of the schema), so no
 *     cycle can form; the claim grants a waiting job nothing until the job
 *     it waits for is done (JOB_AFTER_READY in the claim's SQL).
 *  2. A requeue keeps every verified lease, its part and the job's answer:
 *     only primaries not verified go back to pending (their unverified
 *     results dropped, their checkpoints kept, failures and the workers
 *     that failed them forgotten); replicas not decided are cancelled, and
 *     the merge makes new ones as a fresh lease's.
 *  3. ran_s grows only while the job is active after its first grant, by
 *     the caller's tick (queued, paused and gpud's down time never count).
 */
#include "store_internal.h"
#include "store_lifecycle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"

const char *const sdb_life_sql[S_COUNT] = {
	[S_LIFE_GET] = "SELECT j.after_job, coalesce(p.state, -1), "
		       "coalesce(j.time_limit, 0), j.ran_s, j.state, "
		       "j.carve_done FROM jobs AS j "
		       "LEFT JOIN jobs AS p ON p.id = j.after_job WHERE j.id = ?1",
	[S_LIFE_SET] = "UPDATE jobs SET after_job = ?2, time_limit = ?3 "
		       "WHERE id = ?1",
	[S_LIFE_JOB_ID] = "SELECT id FROM jobs WHERE id = ?1",
	/* ?1 the tick's seconds; ?2 active. */
	[S_LIFE_RAN] = "UPDATE jobs SET ran_s = ran_s + ?1 WHERE state = ?2 "
		       "AND time_limit IS NOT NULL AND started_at IS NOT NULL",
	[S_LIFE_ANY] = "SELECT EXISTS (SELECT 1 FROM jobs WHERE state = ?1 "
		       "AND time_limit IS NOT NULL)",
	[S_LIFE_OVER] = "SELECT id, time_limit FROM jobs WHERE state = ?1 "
			"AND time_limit IS NOT NULL AND ran_s >= time_limit "
			"ORDER BY id",
	[S_LIFE_PRIMARIES_LEFT] = "SELECT count(*) FROM leases WHERE job_id = ?1 "
				  "AND replica_of IS NULL AND state != ?2",
	[S_LIFE_FORGET_FAILURES] =
		"DELETE FROM lease_failures WHERE lease_id IN (SELECT id FROM "
		"leases WHERE job_id = ?1 AND replica_of IS NULL AND state != ?2)",
	/* ?1 job, ?2 verified, ?3 pending, ?4 now: every primary not
	 * verified, pending ones too (their failure counts reset). */
	[S_LIFE_REQUEUE_LEASES] =
		"UPDATE leases SET state = ?3, worker_id = NULL, result = NULL, "
		"checked = 0, deadline = 0, failures = 0, "
		"units_done = checkpoint_units, progress_units = checkpoint_units, "
		"progress_at = 0, takeback = 0, last_error = 'requeued', "
		"updated_at = ?4 WHERE job_id = ?1 AND replica_of IS NULL "
		"AND state != ?2",
	/* ?1 job, ?2 cancelled, ?3 now; pending, leased, done. */
	[S_LIFE_CANCEL_REPLICAS] =
		"UPDATE leases SET state = ?2, deadline = 0, updated_at = ?3 "
		"WHERE job_id = ?1 AND replica_of IS NOT NULL "
		"AND state IN (0, 1, 2)",
	[S_LIFE_REQUEUE_JOB] = "UPDATE jobs SET state = ?2, reason = NULL, "
			       "finished_at = 0, ran_s = 0 WHERE id = ?1",
	[S_LIFE_ENDS] = "SELECT e.id, e.job_id, e.detail, coalesce(j.workload, ''), "
			"j.name FROM events AS e LEFT JOIN jobs AS j ON j.id = e.job_id "
			"WHERE e.kind = 'job_end' AND e.id > ?1 ORDER BY e.id LIMIT ?2",
	[S_LIFE_MAX_EVENT] = "SELECT coalesce(max(id), 0) FROM events",
	/* ?1 the job (0: every failed or cancelled job), ?2 failed, ?3
	 * cancelled, ?4 the reason's format's job, ?5 now, ?6 active, ?7
	 * paused. Only jobs never granted anything. */
	[S_LIFE_DEPENDENTS] =
		"UPDATE jobs SET state = ?2, finished_at = ?5, reason = "
		"printf('job %d, which this job was to run after, is %s (gpuctl "
		"requeue %d, then this job)', after_job, (SELECT CASE p.state "
		"WHEN ?2 THEN 'failed' ELSE 'cancelled' END FROM jobs AS p "
		"WHERE p.id = jobs.after_job), after_job) "
		"WHERE state IN (?6, ?7) AND started_at IS NULL "
		"AND after_job IN (SELECT id FROM jobs WHERE (?1 = 0 OR id = ?1) "
		"AND state IN (?2, ?3)) RETURNING id",
};

int store_job_lifecycle_get(struct store *st, int64_t id,
			    struct store_lifecycle *ret)
{
	static const char what[] = "store_job_lifecycle_get";
	int64_t after = 0, pstate = -1, state = 0, carve_done = 0;
	double limit = 0, ran = 0;
	int r;

	if (!ret)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	r = sdb_one(st, S_LIFE_GET, SDB_ARGS(sa_int(id)),
		    SDB_COLS(sc_i64(&after), sc_i64(&pstate), sc_dbl(&limit),
			     sc_dbl(&ran), sc_i64(&state), sc_i64(&carve_done)),
		    what);
	if (r == GERR_NOTFOUND)
		return sdb_err(st, GERR_NOTFOUND, "%s: no job %lld", what,
			       (long long)id);
	if (r)
		return r;
	*ret = (struct store_lifecycle){
		.after_job = after,
		.after_state = pstate >= 0 && pstate < JOB_NSTATES ?
			       (enum job_state)pstate : JOB_NSTATES,
		.time_limit = limit, .ran_s = ran,
	};
	return 0;
}

int store_job_set_lifecycle(struct store *st, int64_t id, int64_t after,
			    double time_limit)
{
	static const char what[] = "store_job_set_lifecycle";
	int64_t found = 0;
	int r;

	if (time_limit != 0 && !(time_limit >= STORE_TIME_LIMIT_MIN &&
				 time_limit <= STORE_TIME_LIMIT_MAX))
		return sdb_err(st, GERR_INVAL, "a time limit is 1s to 366d");
	if (after < 0)
		return sdb_err(st, GERR_INVAL, "no job %lld", (long long)after);
	if (after) {
		r = sdb_one(st, S_LIFE_JOB_ID, SDB_ARGS(sa_int(after)),
			    SDB_COLS(sc_i64(&found)), what);
		if (r == GERR_NOTFOUND)
			return sdb_err(st, GERR_NOTFOUND, "no job %lld to run "
				       "after", (long long)after);
		if (r)
			return r;
		/* The schema's CHECK says the same: no cycle can form. */
		if (after >= id)
			return sdb_err(st, GERR_INVAL, "job %lld can wait only "
				       "for an earlier job", (long long)id);
	}
	return sdb_write(st, S_LIFE_SET,
			 SDB_ARGS(sa_int(id), sa_ref(after),
				  time_limit > 0 ? sa_dbl(time_limit) : SA_NULL),
			 "job", id, what);
}

/* Why job id in state s cannot be requeued (GERR_STATE), or 0. */
static int requeue_refused(struct store *st, int64_t id, enum job_state s,
			   const struct store_lifecycle *lc, int carve_done,
			   uint64_t left)
{
	if (s == JOB_DONE)
		return sdb_err(st, GERR_STATE, "job %lld is done: nothing to "
			       "requeue (gpuctl extend adds work to a done job "
			       "whose workload can)", (long long)id);
	if (s != JOB_FAILED && s != JOB_CANCELLED)
		return sdb_err(st, GERR_STATE, "job %lld is %s, not failed or "
			       "cancelled", (long long)id,
			       s == JOB_PAUSED ? "paused" : "queued or running");
	if (lc->after_job && (lc->after_state == JOB_FAILED ||
			      lc->after_state == JOB_CANCELLED))
		return sdb_err(st, GERR_STATE, "job %lld runs after job %lld, "
			       "which is %s: requeue job %lld first",
			       (long long)id, (long long)lc->after_job,
			       job_state_name(lc->after_state),
			       (long long)lc->after_job);
	if (carve_done && left == 0)
		return sdb_err(st, GERR_STATE, "every lease of job %lld is "
			       "verified and its final check failed: requeueing "
			       "would not change its answer", (long long)id);
	return 0;
}

int store_job_requeue(struct store *st, int64_t id, double now,
		      uint64_t *ret_leases)
{
	static const char what[] = "store_job_requeue";
	struct store_lifecycle lc;
	int64_t state = 0, carve_done = 0, dummy[4];
	uint64_t left = 0;
	int r;

	r = sdb_one(st, S_LIFE_GET, SDB_ARGS(sa_int(id)),
		    SDB_COLS(sc_i64(&dummy[0]), sc_i64(&dummy[1]), SC_SKIP,
			     SC_SKIP, sc_i64(&state), sc_i64(&carve_done)), what);
	if (r == GERR_NOTFOUND)
		return sdb_err(st, GERR_NOTFOUND, "no job %lld", (long long)id);
	if (r || (r = store_job_lifecycle_get(st, id, &lc)))
		return r;
	if ((r = sdb_count(st, S_LIFE_PRIMARIES_LEFT,
			   SDB_ARGS(sa_int(id), sa_int(LEASE_VERIFIED)), &left,
			   what)))
		return r;
	if ((r = requeue_refused(st, id, (enum job_state)state, &lc,
				 (int)carve_done, left)))
		return r;
	if ((r = sdb_op_begin(st, what)))
		return r;
	r = sdb_exec(st, S_LIFE_FORGET_FAILURES,
		     SDB_ARGS(sa_int(id), sa_int(LEASE_VERIFIED)), what);
	if (!r)
		r = sdb_exec(st, S_LIFE_REQUEUE_LEASES,
			     SDB_ARGS(sa_int(id), sa_int(LEASE_VERIFIED),
				      sa_int(LEASE_PENDING), sa_dbl(now)), what);
	if (!r)
		r = sdb_exec(st, S_LIFE_CANCEL_REPLICAS,
			     SDB_ARGS(sa_int(id), sa_int(LEASE_CANCELLED),
				      sa_dbl(now)), what);
	if (!r)
		r = sdb_exec(st, S_LIFE_REQUEUE_JOB,
			     SDB_ARGS(sa_int(id), sa_int(JOB_ACTIVE)), what);
	r = sdb_op_end(st, r, what);
	if (!r && ret_leases)
		*ret_leases = left;
	return r;
}

/* ---- the tick ---- */

struct over_ctx {
	int64_t ids[STORE_TICK_MAX];
	double limits[STORE_TICK_MAX];
	size_t n;
};

static int over_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	struct over_ctx *o = ctx;

	(void)st;
	if (o->n < STORE_TICK_MAX) {
		o->ids[o->n] = sqlite3_column_int64(s, 0);
		o->limits[o->n] = sqlite3_column_double(s, 1);
		o->n++;
	}
	return 0;
}

int store_lifecycle_tick(struct store *st, double now, double ran,
			 int64_t ret_stopped[STORE_TICK_MAX], size_t *ret_n)
{
	static const char what[] = "store_lifecycle_tick";
	struct over_ctx o = { .n = 0 };
	int r;

	if (!ret_n || !(ran >= 0))
		return sdb_err(st, GERR_INVAL, "%s: bad arguments", what);
	/* Most ticks: no job has a limit, and nothing is written. */
	uint64_t any = 0;
	if ((r = sdb_count(st, S_LIFE_ANY, SDB_ARGS(sa_int(JOB_ACTIVE)), &any, what)))
		return r;
	if (!any) {
		*ret_n = 0;
		return 0;
	}
	/* One transaction of its own (or the caller's): the calls below are
	 * write calls, which nest only inside an explicit one. */
	int own = !st->in_tx;

	if (own && (r = store_begin(st)))
		return r;
	if (ran > 0)
		r = sdb_exec(st, S_LIFE_RAN, SDB_ARGS(sa_dbl(ran), sa_int(JOB_ACTIVE)),
			     what);
	if (!r)
		r = sdb_each(st, S_LIFE_OVER, SDB_ARGS(sa_int(JOB_ACTIVE)), over_row,
			     &o, what);
	for (size_t i = 0; !r && i < o.n; i++) {
		char d[DURATION_TEXT_MAX], reason[96];

		duration_format(o.limits[i], d, sizeof(d));
		snprintf(reason, sizeof(reason), "time limit %s reached "
			 "(gpuctl requeue %lld continues it)", d,
			 (long long)o.ids[i]);
		r = store_job_set_state(st, o.ids[i], JOB_FAILED, reason, now);
		/* Its held and pending leases stop; verified ones stay. */
		if (!r)
			r = store_job_cancel_leases(st, o.ids[i], now);
		if (!r)
			r = store_event(st, now, o.ids[i], 0, 0, 0, "time_limit", reason);
	}
	if (own && !r)
		r = store_commit(st);
	else if (own)
		store_rollback(st);
	if (r)
		return r;
	for (size_t i = 0; i < o.n; i++)
		ret_stopped[i] = o.ids[i];
	*ret_n = o.n;
	return 0;
}

/* ---- ends ---- */

static void end_clear(struct store_job_end *e)
{
	free(e->state);
	free(e->workload);
	free(e->name);
}

void store_job_end_free_array(struct store_job_end *a, size_t n)
{
	for (size_t i = 0; a && i < n; i++)
		end_clear(&a[i]);
	free(a);
}

struct ends_ctx {
	struct store_job_end *a;
	size_t n, max;
};

static int end_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	struct ends_ctx *c = ctx;
	struct store_job_end *e;

	if (c->n >= c->max)
		return 0;
	e = &c->a[c->n];
	memset(e, 0, sizeof(*e));
	if (sdb_cols(s, SDB_COLS(sc_i64(&e->event_id), sc_i64(&e->job_id),
				 sc_text(&e->state), sc_text(&e->workload),
				 sc_text(&e->name))))
		return sdb_err(st, GERR_NOMEM, "job end: out of memory");
	c->n++;
	return 0;
}

int store_job_ends(struct store *st, int64_t after_event, size_t max,
		   struct store_job_end **ret, size_t *ret_n)
{
	static const char what[] = "store_job_ends";
	struct ends_ctx c = { .max = max };
	int r;

	if (!ret || !ret_n || max == 0 || max > 100000)
		return sdb_err(st, GERR_INVAL, "%s: bad arguments", what);
	c.a = calloc(max, sizeof(*c.a));
	if (!c.a)
		return sdb_err(st, GERR_NOMEM, "%s: out of memory", what);
	r = sdb_each(st, S_LIFE_ENDS, SDB_ARGS(sa_int(after_event),
					       sa_int((int64_t)max)),
		     end_row, &c, what);
	if (r) {
		store_job_end_free_array(c.a, c.n);
		return r;
	}
	*ret = c.a;
	*ret_n = c.n;
	return 0;
}

int store_event_last_id(struct store *st, int64_t *ret_id)
{
	return sdb_one(st, S_LIFE_MAX_EVENT, NULL, SDB_COLS(sc_i64(ret_id)),
		       "store_event_last_id");
}

struct dep_ctx {
	struct store *st;
	double now;
	uint64_t n;
};

static int dep_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	struct dep_ctx *c = ctx;

	(void)st;
	(void)s;
	c->n++;
	return 0;
}

int store_job_fail_dependents(struct store *st, int64_t job_id, double now,
			      uint64_t *ret_n)
{
	static const char what[] = "store_job_fail_dependents";
	struct dep_ctx c = { .st = st, .now = now };
	int r;

	if ((r = sdb_op_begin(st, what)))
		return r;
	r = sdb_each(st, S_LIFE_DEPENDENTS,
		     SDB_ARGS(sa_int(job_id), sa_int(JOB_FAILED),
			      sa_int(JOB_CANCELLED), SA_NULL, sa_dbl(now),
			      sa_int(JOB_ACTIVE), sa_int(JOB_PAUSED)),
		     dep_row, &c, what);
	r = sdb_op_end(st, r, what);
	if (!r && ret_n)
		*ret_n = c.n;
	return r;
}
