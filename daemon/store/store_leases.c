/* store_leases.c - the lease state machine (store.h invariants 2 and 3)
 * and every call that moves a lease: claim, heartbeat, checkpoint, result,
 * verified, reject, release, revoke, run failed, expiry, cancel; the
 * progress requirement's record (progress_units, progress_at); and the
 * moves of replication (checked, adopt, refute, cancel a group's spare
 * replicas).
 *
 * Every change of a lease's state goes through lease_move(), which checks
 * lease_moves[][] and runs an UPDATE whose WHERE clause names the expected
 * state (and, for one named lease, id and epoch); a named lease that did
 * not change is GERR_STALE.
 */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

/* Lease statements run by lease_move() reserve ?1 id, ?2 epoch, ?3 from
 * state, ?4 to state; their own parameters start at ?5. */
#define LEASE_WHERE_ONE " WHERE id = ?1 AND epoch = ?2 AND state = ?3"
/* A report of units (SQL parameter u) at time t: progress when it is more
 * than any before under this grant, or the first report. SET expressions
 * read the row as it was, so the order of the two does not matter. */
#define PROGRESS_SET(u, t)                                                   \
	"progress_at = CASE WHEN " u " > progress_units OR progress_at = 0 " \
	"THEN " t " ELSE progress_at END, "                                  \
	"progress_units = max(progress_units, " u ")"

/* The processes (worker rows) of worker w's credential, w among them. */
#define SAME_CREDENTIAL(w)                                                   \
	"(SELECT id FROM workers WHERE credential = "                        \
	"(SELECT credential FROM workers WHERE id = " w "))"

const char *const sdb_lease_sql[S_COUNT] = {
	/* A pending lease of an active job of a wanted workload, of the
	 * first such job in queue order (priority, then age; only jobs
	 * ranked at or before (?10, ?11) when ?10 is not NULL), its oldest,
	 * granted in the same statement (CROSS JOIN keeps jobs outside: their
	 * queue index and each job's leases give the order, with no sort of
	 * every pending lease); never one whose group (a primary
	 * and its replicas) has another lease a process of this worker's
	 * credential holds or computed (a result is confirmed only by
	 * another credential's), never one such a process failed
	 * (lease_failures: one try per credential, so a lazy one gets one
	 * verification seed per lease, not one per failure or process). */
	[S_LEASE_CLAIM] =
		"UPDATE leases SET state = ?4, epoch = epoch + 1, "
		"attempts = attempts + 1, worker_id = ?5, deadline = ?6, "
		"updated_at = ?7, units_done = checkpoint_units, "
		"progress_units = checkpoint_units, progress_at = 0, checked = 0, "
		"granted_at = ?7, granted_units = checkpoint_units "
		"WHERE state = ?3 AND id = (SELECT l.id FROM jobs AS j "
		"CROSS JOIN leases AS l ON l.job_id = j.id "
		"WHERE l.state = ?3 AND j.state = ?8 "
		"AND j.workload IN (SELECT value FROM json_each(?9)) "
		"AND NOT EXISTS (SELECT 1 FROM leases AS o "
		"WHERE o.id != l.id "
		"AND (o.id = coalesce(l.replica_of, l.id) "
		"OR o.replica_of = coalesce(l.replica_of, l.id)) "
		"AND o.worker_id IN " SAME_CREDENTIAL("?5") ") "
		"AND NOT EXISTS (SELECT 1 FROM lease_failures AS f "
		"WHERE f.lease_id = l.id AND f.worker_id IN "
		SAME_CREDENTIAL("?5") ") "
		"AND " JOB_AFTER_READY("j") " "
		"AND (?10 IS NULL OR j.priority > ?10 "
		"OR (j.priority = ?10 AND j.id <= ?11)) "
		"ORDER BY j.priority DESC, j.id, l.id LIMIT 1) RETURNING "
		LEASE_COLS,
	[S_LEASE_HEARTBEAT] = "UPDATE leases SET state = ?4, units_done = ?5, "
			      "deadline = ?6, updated_at = ?7, " PROGRESS_SET("?5", "?7")
			      LEASE_WHERE_ONE,
	[S_LEASE_OLD_CHECKPOINT] = "SELECT checkpoint FROM leases"
				   LEASE_WHERE_ONE,
	[S_LEASE_CHECKPOINT] = "UPDATE leases SET state = ?4, checkpoint = ?5, "
			       "checkpoint_units = ?6, units_done = ?6, "
			       "updated_at = ?7, " PROGRESS_SET("?6", "?7")
			       LEASE_WHERE_ONE,
	[S_LEASE_RESULT] = "UPDATE leases SET state = ?4, result = ?5, "
			   "units_done = ?6, deadline = 0, updated_at = ?7"
			   LEASE_WHERE_ONE,
	[S_LEASE_VERIFIED] = "UPDATE leases SET state = ?4, updated_at = ?5"
			     LEASE_WHERE_ONE,
	[S_LEASE_FAILURES] = "SELECT failures FROM leases" LEASE_WHERE_ONE,
	/* The holder or producer of a failing lease, recorded before the
	 * move clears it. */
	[S_LEASE_FAILED_BY] =
		"INSERT OR IGNORE INTO lease_failures (lease_id, worker_id) "
		"SELECT id, worker_id FROM leases" LEASE_WHERE_ONE
		" AND worker_id IS NOT NULL",
	/* The producer stays recorded on a failed lease; a pending one has no
	 * holder. Work resumes from the checkpoint. */
	[S_LEASE_REJECT] =
		"UPDATE leases SET state = ?4, failures = failures + 1, "
		"result = NULL, last_error = ?5, updated_at = ?6, deadline = 0, "
		"units_done = checkpoint_units, "
		"worker_id = CASE WHEN ?4 = ?7 THEN NULL ELSE worker_id END"
		LEASE_WHERE_ONE,
	[S_LEASE_RELEASE] = "UPDATE leases SET state = ?4, worker_id = NULL, "
			    "deadline = 0, units_done = checkpoint_units, "
			    "updated_at = ?5" LEASE_WHERE_ONE,
	[S_LEASE_PROGRESS] = "SELECT progress_units, progress_at FROM leases "
			     "WHERE id = ?1",
	[S_LEASE_REVOKE] = "UPDATE leases SET state = ?4, worker_id = NULL, "
			   "deadline = 0, units_done = checkpoint_units, "
			   "last_error = ?5, updated_at = ?6" LEASE_WHERE_ONE,
	/* As S_LEASE_REJECT, from leased: the run failed on its holder. */
	[S_LEASE_RUN_FAILED] =
		"UPDATE leases SET state = ?4, failures = failures + 1, "
		"last_error = ?5, updated_at = ?6, deadline = 0, "
		"units_done = checkpoint_units, "
		"worker_id = CASE WHEN ?4 = ?7 THEN NULL ELSE worker_id END"
		LEASE_WHERE_ONE,
	[S_LEASE_EXPIRE] = "UPDATE leases SET state = ?4, worker_id = NULL, "
			   "deadline = 0, units_done = checkpoint_units, "
			   "updated_at = ?5, last_error = 'lease expired' "
			   "WHERE state = ?3 AND deadline < ?5 RETURNING id",
	[S_LEASE_CANCEL] = "UPDATE leases SET state = ?4, deadline = 0, "
			   "updated_at = ?5 WHERE job_id = ?6 AND state = ?3",
	[S_LEASE_CHECKED] = "UPDATE leases SET state = ?4, checked = 1, "
			    "updated_at = ?5" LEASE_WHERE_ONE,
	[S_LEASE_ADOPT] = "UPDATE leases SET state = ?4, result = ?5, "
			  "worker_id = ?6, checked = 1, updated_at = ?7"
			  LEASE_WHERE_ONE,
	[S_LEASE_REFUTE] = "UPDATE leases SET state = ?4, last_error = ?5, "
			   "updated_at = ?6, deadline = 0" LEASE_WHERE_ONE,
	/* A result that could not be read back to be compared: computed
	 * again, charged to no one. */
	[S_LEASE_RECOMPUTE] =
		"UPDATE leases SET state = ?4, checked = 0, result = NULL, "
		"last_error = ?5, updated_at = ?6, deadline = 0, "
		"units_done = checkpoint_units, worker_id = NULL"
		LEASE_WHERE_ONE,
	/* A verified lease the job's final check blamed (sched_merge.c): as
	 * S_LEASE_REJECT, and its checkpoint (the same producer's) dropped,
	 * so the next run starts afresh. */
	[S_LEASE_UNVERIFY] =
		"UPDATE leases SET state = ?4, failures = failures + 1, "
		"result = NULL, checkpoint = NULL, checkpoint_units = 0, "
		"last_error = ?5, updated_at = ?6, deadline = 0, units_done = 0, "
		"checked = 0, "
		"worker_id = CASE WHEN ?4 = ?7 THEN NULL ELSE worker_id END"
		LEASE_WHERE_ONE,
	[S_LEASE_CANCEL_REPLICAS] =
		"UPDATE leases SET state = ?4, deadline = 0, updated_at = ?5 "
		"WHERE replica_of = ?6 AND state = ?3 AND checked = 0",
};

/* ---- the lease state machine ---- */

/* Allowed moves, [from][to] (store.h invariant 3). leased -> leased is not
 * a move but the update of a held lease (heartbeat, checkpoint), which must
 * name the same (state, epoch) as a move does. */
static const unsigned char lease_moves[LEASE_NSTATES][LEASE_NSTATES] = {
	[LEASE_PENDING] = {
		[LEASE_LEASED] = 1,    /* claim */
		[LEASE_CANCELLED] = 1, /* job cancelled */
	},
	[LEASE_LEASED] = {
		[LEASE_LEASED] = 1,    /* heartbeat, checkpoint */
		[LEASE_PENDING] = 1,   /* release, expiry, revoke, run failed */
		[LEASE_FAILED] = 1,    /* run failed, failures >= max */
		[LEASE_DONE] = 1,      /* result stored */
		[LEASE_CANCELLED] = 1,
	},
	[LEASE_DONE] = {
		[LEASE_DONE] = 1,      /* checked; an agreeing result adopted */
		[LEASE_VERIFIED] = 1,  /* verification passed */
		[LEASE_PENDING] = 1,   /* verification failed, failures < max */
		[LEASE_FAILED] = 1,    /* verification failed, failures >= max;
					* a replica outvoted */
		[LEASE_CANCELLED] = 1,
	},
	[LEASE_VERIFIED] = {
		[LEASE_PENDING] = 1,   /* blamed by the final check */
		[LEASE_FAILED] = 1,    /* blamed, failures >= max */
	},
	/* failed and cancelled are final */
};

int store_lease_move_allowed(enum lease_state from, enum lease_state to)
{
	return (unsigned)from < LEASE_NSTATES && (unsigned)to < LEASE_NSTATES &&
	       lease_moves[from][to];
}

/* Lease statements run by lease_move() take ?5 on from its caller. */
#define LEASE_ARGS_MAX 8

struct lease_move {
	enum stmt_id sid;
	int64_t id;            /* > 0: the one lease (id, epoch); 0: the rows
				* the statement's WHERE selects */
	uint64_t epoch;
	enum lease_state from, to;
	const struct sdb_arg *args; /* ?5 on; NULL for none */
	/* Called for each RETURNING row; may be NULL. */
	sdb_each_fn row;
	void *ctx;
};

/* Say why (id, epoch) in state `from` did not match. */
static int lease_stale(struct store *st, const struct lease_move *m,
		       const char *what)
{
	struct store_lease cur;

	if (sdb_lease_get(st, m->id, &cur, what) != 0)
		return sdb_err(st, GERR_STALE, "%s: no lease %lld", what,
			       (long long)m->id);
	sdb_err(st, GERR_STALE, "%s: lease %lld: expected %s epoch %llu, "
		"found %s epoch %llu", what, (long long)m->id,
		lease_state_name(m->from), (unsigned long long)m->epoch,
		lease_state_name(cur.state), (unsigned long long)cur.epoch);
	store_lease_clear(&cur);
	return GERR_STALE;
}

/* The one function that changes lease states. m->sid is an UPDATE that sets
 * state = ?4 where state = ?3 (and id = ?1 AND epoch = ?2 when m->id > 0);
 * m->args are its own values, ?5 on. Checks the move against lease_moves,
 * runs it, and for a named lease returns GERR_STALE unless exactly that
 * lease changed. *ret_changes (may be NULL) receives the number of leases
 * moved. */
static int lease_move(struct store *st, const struct lease_move *m,
		      int64_t *ret_changes, const char *what)
{
	struct sdb_arg a[4 + LEASE_ARGS_MAX + 1] = {
		m->id ? sa_int(m->id) : SA_NULL,
		m->id ? sa_int((int64_t)m->epoch) : SA_NULL,
		sa_int(m->from), sa_int(m->to),
	};
	int64_t changes;
	int r;

	if (!store_lease_move_allowed(m->from, m->to))
		return sdb_err(st, GERR_STATE, "%s: lease move %s -> %s is "
			       "not allowed", what, lease_state_name(m->from),
			       lease_state_name(m->to));
	if (m->id && m->epoch > INT64_MAX)
		return sdb_err(st, GERR_STALE, "%s: lease %lld: epoch %llu out "
			       "of range", what, (long long)m->id,
			       (unsigned long long)m->epoch);
	for (int i = 0; m->args && m->args[i].type != SDB_END; i++) {
		if (i == LEASE_ARGS_MAX)
			abort(); /* a statement with more values: a bug */
		a[4 + i] = m->args[i];
	}
	if ((r = sdb_each(st, m->sid, a, m->row, m->ctx, what)))
		return r;
	changes = sdb_changes(st);
	if (m->id && changes != 1)
		return lease_stale(st, m, what);
	if (ret_changes)
		*ret_changes = changes;
	return 0;
}

/* lease_move as one write call. */
static int lease_write(struct store *st, const struct lease_move *m,
		       const char *what)
{
	int r = sdb_op_begin(st, what);

	if (r)
		return r;
	return sdb_op_end(st, lease_move(st, m, NULL, what), what);
}

/* One named lease (id, epoch) from -> to by statement sid, whose own
 * values (?5 on) are args, as one write call. */
static int move_one(struct store *st, enum stmt_id sid, int64_t id,
		    uint64_t epoch, enum lease_state from, enum lease_state to,
		    const struct sdb_arg *args, const char *what)
{
	struct lease_move m = {
		.sid = sid, .id = id, .epoch = epoch, .from = from, .to = to,
		.args = args,
	};

	return lease_write(st, &m, what);
}

/* ---- the moves ---- */

static int lease_ret_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	if (sdb_lease_row(s, ctx))
		return sdb_err(st, GERR_NOMEM, "lease: out of memory");
	return 0;
}

int store_lease_claim_pending(struct store *st, int64_t worker_id,
			      const char *workloads_json, double deadline,
			      double now, struct store_lease *ret)
{
	return store_lease_claim_ranked(st, worker_id, workloads_json, NULL,
					deadline, now, ret);
}

int store_lease_claim_ranked(struct store *st, int64_t worker_id,
			     const char *workloads_json,
			     const struct store_rank *upto, double deadline,
			     double now, struct store_lease *ret)
{
	static const char what[] = "store_lease_claim_ranked";
	struct store_lease l = {0};
	struct lease_move m = {
		.sid = S_LEASE_CLAIM, .from = LEASE_PENDING, .to = LEASE_LEASED,
		.args = SDB_ARGS(sa_ref(worker_id), sa_dbl(deadline),
				 sa_dbl(now), sa_int(JOB_ACTIVE),
				 sa_text(workloads_json),
				 upto ? sa_int(upto->priority) : SA_NULL,
				 upto ? sa_int(upto->id) : SA_NULL),
		.row = lease_ret_row, .ctx = &l,
	};
	int64_t changes = 0;
	int r;

	if (!ret)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	r = sdb_check_workloads(st, workloads_json, what);
	if (r || (r = sdb_op_begin(st, what)))
		return r;
	r = lease_move(st, &m, &changes, what);
	if (r == 0 && changes == 0)
		r = sdb_err(st, GERR_NOTFOUND, "%s: no pending lease", what);
	if (r == 0 && changes != 1)
		r = sdb_err(st, GERR_DB, "%s: %lld leases claimed", what,
			    (long long)changes);
	r = sdb_op_end(st, r, what);
	if (r == 0)
		*ret = l;
	else
		store_lease_clear(&l);
	return r;
}

int store_lease_heartbeat(struct store *st, int64_t id, uint64_t epoch,
			  uint64_t units_done, double deadline, double now)
{
	static const char what[] = "store_lease_heartbeat";
	int r = sdb_check_u63(st, units_done, what);

	return r ? r : move_one(st, S_LEASE_HEARTBEAT, id, epoch, LEASE_LEASED,
				LEASE_LEASED,
				SDB_ARGS(sa_int((int64_t)units_done),
					 sa_dbl(deadline), sa_dbl(now)), what);
}

int store_lease_set_checkpoint(struct store *st, int64_t id, uint64_t epoch,
			       const char *hash, uint64_t units_done,
			       double now, char **ret_old_hash)
{
	static const char what[] = "store_lease_set_checkpoint";
	struct lease_move m = {
		.sid = S_LEASE_CHECKPOINT, .id = id, .epoch = epoch,
		.from = LEASE_LEASED, .to = LEASE_LEASED,
		.args = SDB_ARGS(sa_text(hash), sa_int((int64_t)units_done),
				 sa_dbl(now)),
	};
	char *old = NULL;
	int r;

	if (!hash)
		return sdb_err(st, GERR_INVAL, "%s: no hash", what);
	if ((r = sdb_check_u63(st, units_done, what)) ||
	    (r = sdb_op_begin(st, what)))
		return r;
	/* The old hash, read in the same transaction as the update. A stale
	 * (id, epoch) reads no row here and is reported by lease_move. */
	r = sdb_one(st, S_LEASE_OLD_CHECKPOINT,
		    SDB_ARGS(sa_int(id), sa_int((int64_t)(epoch & INT64_MAX)),
			     sa_int(LEASE_LEASED)),
		    SDB_COLS(sc_text(&old)), what);
	if (r == 0 || r == GERR_NOTFOUND)
		r = lease_move(st, &m, NULL, what);
	r = sdb_op_end(st, r, what);
	/* Content-addressed: the same checkpoint again is still referenced,
	 * so the caller must not delete it. */
	if (r == 0 && old && strcmp(old, hash) == 0) {
		free(old);
		old = NULL;
	}
	if (r == 0 && ret_old_hash)
		*ret_old_hash = old;
	else
		free(old);
	return r;
}

int store_lease_set_result(struct store *st, int64_t id, uint64_t epoch,
			   const char *hash, uint64_t units_done, double now)
{
	static const char what[] = "store_lease_set_result";
	int r;

	if (!hash)
		return sdb_err(st, GERR_INVAL, "%s: no hash", what);
	r = sdb_check_u63(st, units_done, what);
	return r ? r : move_one(st, S_LEASE_RESULT, id, epoch, LEASE_LEASED,
				LEASE_DONE,
				SDB_ARGS(sa_text(hash),
					 sa_int((int64_t)units_done),
					 sa_dbl(now)), what);
}


int store_lease_set_verified(struct store *st, int64_t id, uint64_t epoch,
			     double now)
{
	return move_one(st, S_LEASE_VERIFIED, id, epoch, LEASE_DONE,
			LEASE_VERIFIED, SDB_ARGS(sa_dbl(now)),
			"store_lease_set_verified");
}

/* A failure of lease (id, epoch) in state `from` (a result that failed
 * verification, or a run that failed on its holder): failures+1, back to
 * pending, or failed once failures reaches max_failures; its worker is
 * added to the lease's lease_failures, which the claim skips. */
static int lease_fail(struct store *st, enum stmt_id sid,
		      enum lease_state from, int64_t id, uint64_t epoch,
		      const char *reason, uint32_t max_failures, double now,
		      enum lease_state *ret_state, const char *what)
{
	const struct sdb_arg *which =
		SDB_ARGS(sa_int(id), sa_int((int64_t)(epoch & INT64_MAX)),
			 sa_int(from));
	struct lease_move m = {
		.sid = sid, .id = id, .epoch = epoch,
		.from = from, .to = LEASE_PENDING,
		.args = SDB_ARGS(sa_text(reason), sa_dbl(now),
				 sa_int(LEASE_PENDING)),
	};
	uint64_t failures = 0;
	int r;

	if ((r = sdb_op_begin(st, what)))
		return r;
	r = sdb_one(st, S_LEASE_FAILURES, which, SDB_COLS(sc_u64(&failures)),
		    what);
	/* No row: stale; lease_move reports it with the reason. */
	if (r && r != GERR_NOTFOUND)
		goto out;
	if (failures + 1 >= max_failures)
		m.to = LEASE_FAILED;
	if ((r = sdb_exec(st, S_LEASE_FAILED_BY, which, what)) == 0)
		r = lease_move(st, &m, NULL, what);
out:
	r = sdb_op_end(st, r, what);
	if (r == 0 && ret_state)
		*ret_state = m.to;
	return r;
}

int store_lease_reject(struct store *st, int64_t id, uint64_t epoch,
		       const char *reason, uint32_t max_failures, double now,
		       enum lease_state *ret_state)
{
	return lease_fail(st, S_LEASE_REJECT, LEASE_DONE, id, epoch, reason,
			  max_failures, now, ret_state, "store_lease_reject");
}

int store_lease_unverify(struct store *st, int64_t id, uint64_t epoch,
			 const char *reason, uint32_t max_failures, double now,
			 enum lease_state *ret_state)
{
	return lease_fail(st, S_LEASE_UNVERIFY, LEASE_VERIFIED, id, epoch,
			  reason, max_failures, now, ret_state,
			  "store_lease_unverify");
}

int store_lease_run_failed(struct store *st, int64_t id, uint64_t epoch,
			   const char *reason, uint32_t max_failures,
			   double now, enum lease_state *ret_state)
{
	return lease_fail(st, S_LEASE_RUN_FAILED, LEASE_LEASED, id, epoch,
			  reason, max_failures, now, ret_state,
			  "store_lease_run_failed");
}

int store_lease_release(struct store *st, int64_t id, uint64_t epoch,
			double now)
{
	return move_one(st, S_LEASE_RELEASE, id, epoch, LEASE_LEASED,
			LEASE_PENDING, SDB_ARGS(sa_dbl(now)),
			"store_lease_release");
}

int store_lease_progress(struct store *st, int64_t id, uint64_t *ret_units,
			 double *ret_at)
{
	static const char what[] = "store_lease_progress";
	int64_t units;
	double at;
	int r;

	if (!ret_units || !ret_at)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	r = sdb_one(st, S_LEASE_PROGRESS, SDB_ARGS(sa_int(id)),
		    SDB_COLS(sc_i64(&units), sc_dbl(&at)), what);
	if (r == GERR_NOTFOUND)
		return sdb_err(st, r, "%s: no lease %lld", what,
			       (long long)id);
	if (r == 0) {
		*ret_units = units > 0 ? (uint64_t)units : 0;
		*ret_at = at;
	}
	return r;
}


int store_lease_revoke(struct store *st, int64_t id, uint64_t epoch,
		       const char *reason, double now)
{
	return move_one(st, S_LEASE_REVOKE, id, epoch, LEASE_LEASED,
			LEASE_PENDING, SDB_ARGS(sa_text(reason), sa_dbl(now)),
			"store_lease_revoke");
}

struct lease_ids {
	int64_t *ids;
	size_t n, cap;
};

static int lease_id_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	struct lease_ids *a = ctx;

	if (a->n == a->cap) {
		size_t ncap = a->cap ? 2 * a->cap : 16;
		int64_t *na = realloc(a->ids, ncap * sizeof(*na));

		if (!na)
			return sdb_err(st, GERR_NOMEM, "lease: out of memory");
		a->ids = na;
		a->cap = ncap;
	}
	a->ids[a->n++] = sqlite3_column_int64(s, 0);
	return 0;
}

int store_lease_expire(struct store *st, double now, int64_t **ret_ids,
		       size_t *ret_n)
{
	static const char what[] = "store_lease_expire";
	struct lease_ids a = {0};
	struct lease_move m = {
		.sid = S_LEASE_EXPIRE, .from = LEASE_LEASED,
		.to = LEASE_PENDING, .args = SDB_ARGS(sa_dbl(now)),
		.row = lease_id_row, .ctx = &a,
	};
	int r;

	if (!ret_ids || !ret_n)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	if ((r = lease_write(st, &m, what))) {
		free(a.ids);
		return r;
	}
	*ret_ids = a.ids;
	*ret_n = a.n;
	return 0;
}

/* Every lease that statement sid selects by ?6 = key, from each state a
 * lease can be cancelled from -> cancelled. */
static int cancel_all(struct store *st, enum stmt_id sid, int64_t key,
		      double now, const char *what)
{
	static const enum lease_state from[] = {
		LEASE_PENDING, LEASE_LEASED, LEASE_DONE,
	};
	int r = 0;

	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		struct lease_move m = {
			.sid = sid, .from = from[i], .to = LEASE_CANCELLED,
			.args = SDB_ARGS(sa_dbl(now), sa_int(key)),
		};

		if ((r = lease_move(st, &m, NULL, what)))
			return r;
	}
	return 0;
}

int store_job_cancel_leases(struct store *st, int64_t job_id, double now)
{
	static const char what[] = "store_job_cancel_leases";
	enum job_state js;
	int r;

	if ((r = sdb_op_begin(st, what)))
		return r;
	if ((r = sdb_job_state(st, job_id, &js, what)) == 0)
		r = cancel_all(st, S_LEASE_CANCEL, job_id, now, what);
	return sdb_op_end(st, r, what);
}

/* ---- replication ---- */

int store_lease_set_checked(struct store *st, int64_t id, uint64_t epoch,
			    double now)
{
	return move_one(st, S_LEASE_CHECKED, id, epoch, LEASE_DONE,
			LEASE_DONE, SDB_ARGS(sa_dbl(now)),
			"store_lease_set_checked");
}

int store_lease_adopt(struct store *st, int64_t id, uint64_t epoch,
		      const char *hash, int64_t worker_id, double now)
{
	static const char what[] = "store_lease_adopt";

	if (!hash)
		return sdb_err(st, GERR_INVAL, "%s: no hash", what);
	return move_one(st, S_LEASE_ADOPT, id, epoch, LEASE_DONE, LEASE_DONE,
			SDB_ARGS(sa_text(hash), sa_ref(worker_id), sa_dbl(now)),
			what);
}

int store_lease_refute(struct store *st, int64_t id, uint64_t epoch,
		       const char *reason, double now)
{
	return move_one(st, S_LEASE_REFUTE, id, epoch, LEASE_DONE,
			LEASE_FAILED, SDB_ARGS(sa_text(reason), sa_dbl(now)),
			"store_lease_refute");
}

int store_lease_recompute(struct store *st, int64_t id, uint64_t epoch,
			  const char *reason, double now)
{
	return move_one(st, S_LEASE_RECOMPUTE, id, epoch, LEASE_DONE,
			LEASE_PENDING, SDB_ARGS(sa_text(reason), sa_dbl(now)),
			"store_lease_recompute");
}

int store_group_cancel(struct store *st, int64_t primary, double now)
{
	static const char what[] = "store_group_cancel";
	int r;

	if ((r = sdb_op_begin(st, what)))
		return r;
	r = cancel_all(st, S_LEASE_CANCEL_REPLICAS, primary, now, what);
	return sdb_op_end(st, r, what);
}
