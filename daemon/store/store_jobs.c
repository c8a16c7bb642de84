/* store_jobs.c - the jobs table (rows, insert, get, list, state moves,
 * extend, cursor, answer, the next job to carve, a job's progress) and the
 * append-only event log of what happened to which job, lease, worker. The
 * queue's columns (name, priority, started_at) and the lists status and
 * history show are in store_queue.c.
 *
 * Digests (migration 015). What a job's answer is read with (params,
 * answer, units_verified) carries a BLAKE2b digest, rewritten in the
 * transaction of every write that changes it; a write that builds on the
 * old values (a merge's answer, an extension's params) first checks the
 * digest, so damage is refused instead of merged over and sealed by a
 * fresh digest. store_job_digest_check is the readers' check.
 */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

const char *const sdb_job_sql[S_COUNT] = {
	/* CASE, not AND: json_type() raises an error on malformed JSON. */
	[S_JSON_ARRAY] = "SELECT CASE WHEN json_valid(?1) "
			 "THEN json_type(?1) = 'array' ELSE 0 END",

	[S_JOB_INSERT] = "INSERT INTO jobs (workload, params, total_units, "
			 "created_at) VALUES (?1, ?2, ?3, ?4) RETURNING id",
	[S_JOB_GET] = "SELECT " JOB_COLS " FROM jobs WHERE id = ?1",
	[S_JOB_LIST] = "SELECT " JOB_COLS " FROM jobs ORDER BY id",
	[S_JOB_STATE] = "SELECT state FROM jobs WHERE id = ?1",
	[S_JOB_SET_STATE] = "UPDATE jobs SET state = ?2, reason = ?3, "
			    "finished_at = coalesce(?4, finished_at) "
			    "WHERE id = ?1",
	/* The run span closes (020): run_s takes it. */
	[S_JOB_RUN_CLOSE] = "UPDATE jobs SET run_s = run_s + max(?2 - run_since, 0), "
			    "run_since = 0 WHERE id = ?1 AND run_since > 0",
	[S_JOB_EXTEND] = "UPDATE jobs SET params = ?2, total_units = ?3, "
			 "state = ?4, carve_done = 0, finished_at = 0, "
			 "reason = NULL WHERE id = ?1",
	[S_JOB_SET_REASON] = "UPDATE jobs SET reason = ?2 WHERE id = ?1",
	[S_JOB_SET_CURSOR] = "UPDATE jobs SET cursor = ?2, carve_done = ?3 "
			     "WHERE id = ?1",
	[S_JOB_SET_ANSWER] = "UPDATE jobs SET answer = ?2, units_verified = ?3 "
			     "WHERE id = ?1",
	[S_JOB_NEXT_CARVABLE] =
		"SELECT id FROM jobs WHERE state = ?1 AND carve_done = 0 "
		"AND workload IN (SELECT value FROM json_each(?2)) "
		"AND id NOT IN (SELECT value FROM json_each(?3)) "
		"AND " JOB_AFTER_READY("jobs") " "
		"ORDER BY priority DESC, id LIMIT 1",
	/* A lease counts its checkpoint once it has none of its own
	 * progress: the work it resumes from is not lost. */
	/* Verified units from the job's row, so that only the leases still
	 * moving are read (leases_job): a heartbeat costs the same for a
	 * job's ten-thousandth lease as for its first. */
	[S_JOB_PROGRESS] =
		"SELECT j.units_verified + coalesce(sum(CASE "
		"WHEN l.state = ?2 THEN max(l.units_done, l.checkpoint_units) "
		"WHEN l.state = ?3 THEN l.units ELSE l.checkpoint_units END), 0) "
		"FROM jobs AS j LEFT JOIN leases AS l ON l.job_id = j.id "
		"AND l.state IN (?2, ?3, ?4) AND l.replica_of IS NULL "
		"WHERE j.id = ?1 GROUP BY j.id",

	/* Migration 015: written with every change of what it covers, in
	 * the same transaction; checked before a change builds on it. */
	[S_JOB_DIGEST_SET] = "UPDATE jobs SET digest = " JOB_DIGEST
			     " WHERE id = ?1",
	[S_JOB_DIGEST_OK] = "SELECT digest IS " JOB_DIGEST " FROM jobs "
			    "WHERE id = ?1",

	[S_EVENT_ADD] = "INSERT INTO events (ts, job_id, lease_id, epoch, "
			"worker_id, kind, detail) "
			"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[S_EVENT_COUNT] = "SELECT count(*) FROM events WHERE "
			  "(?1 IS NULL OR kind = ?1) AND (?2 = 0 OR job_id = ?2)",
};

const char *job_state_name(enum job_state s)
{
	static const char *const names[JOB_NSTATES] = {
		"active", "paused", "done", "failed", "cancelled",
	};
	return (unsigned)s < JOB_NSTATES ? names[s] : "unknown";
}

/* What a JOB_COLS row becomes; state, an enum, is read by sdb_job_row. A
 * NULL started_at (before the first grant) reads 0. */
#define JOB_ROW(j)                                                           \
	SDB_COLS(sc_i64(&(j)->id), sc_text(&(j)->workload),                  \
		 sc_text(&(j)->params), SC_SKIP, sc_u64(&(j)->total_units),  \
		 sc_text(&(j)->cursor), sc_int(&(j)->carve_done),            \
		 sc_text(&(j)->answer), sc_u64(&(j)->units_verified),        \
		 sc_dbl(&(j)->created_at), sc_dbl(&(j)->finished_at),        \
		 sc_text(&(j)->reason), sc_text(&(j)->name),                 \
		 sc_int(&(j)->priority), sc_dbl(&(j)->started_at),         \
		 sc_text(&(j)->owner), sc_dbl(&(j)->run_s),                \
		 sc_dbl(&(j)->run_since))

void store_job_clear(struct store_job *j)
{
	if (j)
		sdb_clear(j, sizeof(*j), JOB_ROW(j));
}

int sdb_job_row(sqlite3_stmt *s, void *elem)
{
	struct store_job *j = elem;

	j->state = (enum job_state)sqlite3_column_int(s, 3);
	return sdb_cols(s, JOB_ROW(j));
}

void sdb_job_clear_v(void *e) { store_job_clear(e); }

void store_job_free_array(struct store_job *a, size_t n)
{
	sdb_free_array(a, n, sizeof(*a), sdb_job_clear_v);
}

/* Job id's digest, of its row as it is now. A schema older than 015 (only
 * store_open_version, tests) has none to write. */
static int job_digest_write(struct store *st, int64_t id, const char *what)
{
	if (!st->stmt[S_JOB_DIGEST_SET])
		return 0;
	return sdb_exec(st, S_JOB_DIGEST_SET, SDB_ARGS(sa_int(id)), what);
}

int store_job_digest_check(struct store *st, int64_t id)
{
	static const char what[] = "store_job_digest_check";
	int ok = 0;
	int r;

	if (!st->stmt[S_JOB_DIGEST_OK])
		return 0;
	r = sdb_one(st, S_JOB_DIGEST_OK, SDB_ARGS(sa_int(id)),
		    SDB_COLS(sc_int(&ok)), what);
	if (r == GERR_NOTFOUND)
		return sdb_err(st, r, "%s: no job %lld", what, (long long)id);
	if (r == 0 && !ok)
		r = sdb_err(st, GERR_CORRUPT, "job %lld: its stored answer "
			    "(answer, params or verified units) does not match "
			    "its digest: the database was changed outside "
			    "gpud or damaged; restore it from a backup",
			    (long long)id);
	return r;
}

int store_job_insert(struct store *st, const char *workload,
		     const char *params, uint64_t total_units, double now,
		     int64_t *ret_id)
{
	static const char what[] = "store_job_insert";
	int64_t id = 0;
	int r;

	if (!workload || !params || !ret_id)
		return sdb_err(st, GERR_INVAL, "%s: missing argument", what);
	if ((r = sdb_check_u63(st, total_units, what)))
		return r;
	if ((r = sdb_op_begin(st, what)))
		return r;
	r = sdb_one(st, S_JOB_INSERT,
		    SDB_ARGS(sa_text(workload), sa_text(params),
			     sa_int((int64_t)total_units), sa_dbl(now)),
		    SDB_COLS(sc_i64(&id)), what);
	if (r == GERR_NOTFOUND)
		r = sdb_err(st, GERR_DB, "%s: no id returned", what);
	if (r == 0)
		r = job_digest_write(st, id, what);
	r = sdb_op_end(st, r, what);
	if (r == 0)
		*ret_id = id;
	return r;
}

int store_job_get(struct store *st, int64_t id, struct store_job *ret)
{
	if (!ret)
		return sdb_err(st, GERR_INVAL, "store_job_get: no ret");
	return sdb_get_one(st, S_JOB_GET, SDB_ARGS(sa_int(id)), sizeof(*ret),
			   sdb_job_row, sdb_job_clear_v, ret, "store_job_get");
}

int sdb_job_list(struct store *st, enum stmt_id id,
		 const struct sdb_arg *args, struct store_job **ret,
		 size_t *ret_n, const char *what)
{
	return sdb_get_all(st, id, args, sizeof(**ret), sdb_job_row,
			   sdb_job_clear_v, ret, ret_n, what);
}

double store_job_run_seconds(const struct store_job *j, double now)
{
	double open = j->run_since > 0 && now > j->run_since ? now - j->run_since : 0;

	return j->run_s + open;
}

int store_job_list(struct store *st, struct store_job **ret, size_t *ret_n)
{
	return sdb_job_list(st, S_JOB_LIST, NULL, ret, ret_n, "store_job_list");
}

static int job_terminal(enum job_state s)
{
	return s == JOB_DONE || s == JOB_FAILED || s == JOB_CANCELLED;
}

/* Job moves: active and paused may go anywhere; done, failed and cancelled
 * are final (setting the same state again only updates the reason). */
static int job_move_allowed(enum job_state from, enum job_state to)
{
	return from == to || !job_terminal(from);
}

/* The state of job id, or GERR_NOTFOUND with a message. */
int sdb_job_state(struct store *st, int64_t id, enum job_state *ret,
		  const char *what)
{
	int v = 0;
	int r = sdb_one(st, S_JOB_STATE, SDB_ARGS(sa_int(id)),
			SDB_COLS(sc_int(&v)), what);

	if (r == GERR_NOTFOUND)
		return sdb_err(st, r, "%s: no job %lld", what, (long long)id);
	if (r == 0)
		*ret = (enum job_state)v;
	return r;
}

int store_job_set_state(struct store *st, int64_t id, enum job_state state,
			const char *reason, double now)
{
	static const char what[] = "store_job_set_state";
	struct sdb_arg finished = SA_NULL; /* NULL keeps the first one */
	enum job_state from;
	int r;

	if ((unsigned)state >= JOB_NSTATES)
		return sdb_err(st, GERR_INVAL, "%s: bad state %d", what,
			       (int)state);
	if ((r = sdb_op_begin(st, what)))
		return r;
	if ((r = sdb_job_state(st, id, &from, what)))
		goto out;
	if (!job_move_allowed(from, state)) {
		r = sdb_err(st, GERR_STATE, "%s: job %lld is %s, cannot become "
			    "%s", what, (long long)id, job_state_name(from),
			    job_state_name(state));
		goto out;
	}
	if (!job_terminal(state))
		finished = sa_dbl(0);
	else if (from != state)
		finished = sa_dbl(now);
	r = sdb_exec(st, S_JOB_SET_STATE,
		     SDB_ARGS(sa_int(id), sa_int(state), sa_text(reason),
			      finished), what);
	if (r == 0 && state != JOB_ACTIVE && from != state)
		r = sdb_exec(st, S_JOB_RUN_CLOSE, SDB_ARGS(sa_int(id), sa_dbl(now)),
			     what);
	/* An ended job's rates size nothing more (store_rates.c). */
	if (r == 0 && job_terminal(state))
		r = sdb_exec(st, S_JOB_RATES_FORGET, SDB_ARGS(sa_int(id)), what);
out:
	return sdb_op_end(st, r, what);
}

int store_job_extend(struct store *st, int64_t id, const char *params,
		     uint64_t total_units)
{
	static const char what[] = "store_job_extend";
	enum job_state from;
	int r;

	if (!params || total_units > INT64_MAX)
		return sdb_err(st, GERR_INVAL, "%s: bad arguments", what);
	if ((r = sdb_op_begin(st, what)))
		return r;
	if ((r = sdb_job_state(st, id, &from, what)))
		goto out;
	if (from == JOB_FAILED || from == JOB_CANCELLED) {
		r = sdb_err(st, GERR_STATE, "%s: job %lld is %s and cannot be "
			    "extended", what, (long long)id, job_state_name(from));
		goto out;
	}
	if ((r = store_job_digest_check(st, id)))
		goto out;
	r = sdb_exec(st, S_JOB_EXTEND,
		     SDB_ARGS(sa_int(id), sa_text(params),
			      sa_int((int64_t)total_units),
			      sa_int(from == JOB_PAUSED ? JOB_PAUSED
							: JOB_ACTIVE)), what);
	if (r == 0)
		r = job_digest_write(st, id, what);
out:
	return sdb_op_end(st, r, what);
}

int store_job_set_reason(struct store *st, int64_t id, const char *reason)
{
	return sdb_write(st, S_JOB_SET_REASON,
			 SDB_ARGS(sa_int(id), sa_text(reason)), "job", id,
			 "store_job_set_reason");
}

int store_job_set_cursor(struct store *st, int64_t id, const char *cursor,
			 int carve_done)
{
	return sdb_write(st, S_JOB_SET_CURSOR,
			 SDB_ARGS(sa_int(id), sa_text(cursor),
				  sa_int(carve_done ? 1 : 0)), "job", id,
			 "store_job_set_cursor");
}

int store_job_set_answer(struct store *st, int64_t id, const char *answer,
			 uint64_t units_verified)
{
	static const char what[] = "store_job_set_answer";
	int r = sdb_check_u63(st, units_verified, what);

	if (r || (r = sdb_op_begin(st, what)))
		return r;
	/* The new answer was merged from the one stored: never over damage. */
	if ((r = store_job_digest_check(st, id)))
		goto out;
	r = sdb_exec(st, S_JOB_SET_ANSWER,
		     SDB_ARGS(sa_int(id), sa_text(answer),
			      sa_int((int64_t)units_verified)), what);
	if (r == 0 && sdb_changes(st) == 0)
		r = sdb_err(st, GERR_NOTFOUND, "%s: no job %lld", what,
			    (long long)id);
	if (r == 0)
		r = job_digest_write(st, id, what);
out:
	return sdb_op_end(st, r, what);
}

/* workloads_json must be a JSON array (json_each of a scalar or object
 * would quietly match something else). */
int sdb_check_workloads(struct store *st, const char *json,
			const char *what)
{
	int ok = 0;
	int r;

	if (!json)
		return sdb_err(st, GERR_INVAL, "%s: no workloads", what);
	r = sdb_one(st, S_JSON_ARRAY, SDB_ARGS(sa_text(json)),
		    SDB_COLS(sc_int(&ok)), what);
	if (r == 0 && !ok)
		r = sdb_err(st, GERR_INVAL, "%s: workloads must be a JSON "
			    "array of names, not %.64s", what, json);
	return r;
}

int store_job_next_carvable(struct store *st, const char *workloads_json,
			    const char *exclude_json, int64_t *ret_id)
{
	static const char what[] = "store_job_next_carvable";
	int64_t id = 0;
	int r;

	if (!ret_id)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	if ((r = sdb_check_workloads(st, workloads_json, what)))
		return r;
	r = sdb_one(st, S_JOB_NEXT_CARVABLE,
		    SDB_ARGS(sa_int(JOB_ACTIVE), sa_text(workloads_json),
			     sa_text(exclude_json ? exclude_json : "[]")),
		    SDB_COLS(sc_i64(&id)), what);
	if (r == GERR_NOTFOUND)
		return sdb_err(st, r, "%s: no carvable job", what);
	if (r == 0)
		*ret_id = id;
	return r;
}

int store_job_units_progress(struct store *st, int64_t job_id,
			     uint64_t *ret_units)
{
	return sdb_count(st, S_JOB_PROGRESS,
			 SDB_ARGS(sa_int(job_id), sa_int(LEASE_LEASED),
				  sa_int(LEASE_DONE), sa_int(LEASE_PENDING)),
			 ret_units, "store_job_units_progress");
}

/* ---- the event log ---- */

int store_event(struct store *st, double now, int64_t job_id, int64_t lease_id,
		uint64_t epoch, int64_t worker_id, const char *kind,
		const char *detail)
{
	static const char what[] = "store_event";

	if (!kind || !*kind)
		return sdb_err(st, GERR_INVAL, "%s: no kind", what);
	return sdb_write(st, S_EVENT_ADD,
			 SDB_ARGS(sa_dbl(now), sa_int(job_id), sa_int(lease_id),
				  sa_int((int64_t)epoch), sa_int(worker_id),
				  sa_text(kind), sa_text(detail)),
			 NULL, 0, what);
}

/* kind NULL counts every kind; job_id 0 counts every job. */
int store_event_count(struct store *st, const char *kind, int64_t job_id,
		      uint64_t *ret_n)
{
	return sdb_count(st, S_EVENT_COUNT,
			 SDB_ARGS(sa_text(kind), sa_int(job_id)), ret_n,
			 "store_event_count");
}
