/* store.c - gpud's durable state in SQLite. See store.h for the invariants.
 *
 * This is the only file that includes sqlite3.h. Every SQLite result code is
 * translated to a GERR_* code by db_fail() before it leaves this file, and
 * the text goes to st->errmsg (store_errmsg).
 *
 * Write calls. Every public call that writes runs between op_begin() and
 * op_end(): outside an explicit store_begin() that is BEGIN IMMEDIATE ..
 * COMMIT (durable on return, synchronous=FULL); inside one it is a
 * SAVEPOINT, so a failing call leaves the caller's transaction as it was
 * before the call.
 *
 * Leases. Every change of a lease's state goes through lease_move(), which
 * checks lease_moves[][] and runs an UPDATE whose WHERE clause names the
 * expected state (and, for one named lease, id and epoch); a named lease
 * that did not change is GERR_STALE.
 *
 * Statements are prepared once at open (stmt_sql[]) and reset after use.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "auth.h"
#include "gerr.h"
#include "schema.h"

#define STORE_APPLICATION_ID 0x67707564 /* 'gpud', set by 001_init.sql */
#define STORE_BUSY_MS 5000

#define JOB_COLS                                                             \
	"id, workload, params, state, total_units, cursor, carve_done, "     \
	"answer, units_verified, created_at, finished_at, reason"
#define LEASE_COLS                                                           \
	"id, job_id, spec, units, state, epoch, worker_id, deadline, "       \
	"attempts, failures, units_done, checkpoint, checkpoint_units, "     \
	"result, updated_at, last_error"
#define WORKER_COLS                                                          \
	"id, name, device, online, quarantined, failures, leases_done, "     \
	"units_done, rate, first_seen, last_seen"

/* Lease statements run by lease_move() reserve ?1 id, ?2 epoch, ?3 from
 * state, ?4 to state; their own parameters start at ?5. */
#define LEASE_WHERE_ONE " WHERE id = ?1 AND epoch = ?2 AND state = ?3"

enum stmt_id {
	S_BEGIN,
	S_COMMIT,
	S_ROLLBACK,
	S_SAVEPOINT,
	S_RELEASE,
	S_ROLLBACK_TO,
	S_USER_SAVEPOINT,
	S_USER_RELEASE,
	S_USER_ROLLBACK_TO,
	S_JSON_ARRAY,
	S_JOB_INSERT,
	S_JOB_GET,
	S_JOB_LIST,
	S_JOB_STATE,
	S_JOB_SET_STATE,
	S_JOB_EXTEND,
	S_JOB_SET_REASON,
	S_JOB_SET_CURSOR,
	S_JOB_SET_ANSWER,
	S_JOB_NEXT_CARVABLE,
	S_JOB_PROGRESS,
	S_LEASE_INSERT,
	S_LEASE_CLAIM,
	S_LEASE_GET,
	S_LEASE_LIST_JOB,
	S_LEASE_LIST_STATE,
	S_LEASE_COUNTS,
	S_LEASE_HEARTBEAT,
	S_LEASE_OLD_CHECKPOINT,
	S_LEASE_CHECKPOINT,
	S_LEASE_RESULT,
	S_LEASE_VERIFIED,
	S_LEASE_FAILURES,
	S_LEASE_REJECT,
	S_LEASE_RELEASE,
	S_LEASE_EXPIRE,
	S_LEASE_CANCEL,
	S_WORKER_UPSERT,
	S_WORKER_ONLINE,
	S_WORKER_ALL_OFFLINE,
	S_WORKER_CREDIT,
	S_WORKER_FAIL,
	S_WORKER_GET,
	S_WORKER_LIST,
	S_TOKEN_ADD,
	S_TOKEN_GET,
	S_TOKEN_REVOKE,
	S_TOKEN_LIST,
	S_EVENT_ADD,
	S_EVENT_COUNT,
	S_COUNT
};

static const char *const stmt_sql[S_COUNT] = {
	[S_BEGIN] = "BEGIN IMMEDIATE",
	[S_COMMIT] = "COMMIT",
	[S_ROLLBACK] = "ROLLBACK",
	[S_SAVEPOINT] = "SAVEPOINT store_op",
	[S_RELEASE] = "RELEASE store_op",
	[S_ROLLBACK_TO] = "ROLLBACK TO store_op",
	[S_USER_SAVEPOINT] = "SAVEPOINT store_user",
	[S_USER_RELEASE] = "RELEASE store_user",
	[S_USER_ROLLBACK_TO] = "ROLLBACK TO store_user",
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
		"ORDER BY id LIMIT 1",
	[S_JOB_PROGRESS] =
		"SELECT coalesce(sum(CASE WHEN state = ?2 THEN units_done "
		"WHEN state IN (?3, ?4) THEN units ELSE 0 END), 0) "
		"FROM leases WHERE job_id = ?1",

	[S_LEASE_INSERT] =
		"INSERT INTO leases (job_id, spec, units, state, epoch, "
		"worker_id, deadline, attempts, created_at, updated_at) "
		"VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6, 1, ?7, ?7) "
		"RETURNING " LEASE_COLS,
	/* The oldest pending lease of an active job of a wanted workload,
	 * granted in the same statement. */
	[S_LEASE_CLAIM] =
		"UPDATE leases SET state = ?4, epoch = epoch + 1, "
		"attempts = attempts + 1, worker_id = ?5, deadline = ?6, "
		"updated_at = ?7, units_done = checkpoint_units "
		"WHERE state = ?3 AND id = (SELECT l.id FROM leases AS l "
		"JOIN jobs AS j ON j.id = l.job_id "
		"WHERE l.state = ?3 AND j.state = ?8 "
		"AND j.workload IN (SELECT value FROM json_each(?9)) "
		"ORDER BY l.id LIMIT 1) RETURNING " LEASE_COLS,
	[S_LEASE_GET] = "SELECT " LEASE_COLS " FROM leases WHERE id = ?1",
	[S_LEASE_LIST_JOB] = "SELECT " LEASE_COLS " FROM leases "
			     "WHERE job_id = ?1 ORDER BY id",
	[S_LEASE_LIST_STATE] = "SELECT " LEASE_COLS " FROM leases "
			       "WHERE state = ?1 ORDER BY id",
	[S_LEASE_COUNTS] = "SELECT state, count(*) FROM leases "
			   "WHERE job_id = ?1 GROUP BY state",
	[S_LEASE_HEARTBEAT] = "UPDATE leases SET state = ?4, units_done = ?5, "
			      "deadline = ?6, updated_at = ?7" LEASE_WHERE_ONE,
	[S_LEASE_OLD_CHECKPOINT] = "SELECT checkpoint FROM leases"
				   LEASE_WHERE_ONE,
	[S_LEASE_CHECKPOINT] = "UPDATE leases SET state = ?4, checkpoint = ?5, "
			       "checkpoint_units = ?6, units_done = ?6, "
			       "updated_at = ?7" LEASE_WHERE_ONE,
	[S_LEASE_RESULT] = "UPDATE leases SET state = ?4, result = ?5, "
			   "units_done = ?6, deadline = 0, updated_at = ?7"
			   LEASE_WHERE_ONE,
	[S_LEASE_VERIFIED] = "UPDATE leases SET state = ?4, updated_at = ?5"
			     LEASE_WHERE_ONE,
	[S_LEASE_FAILURES] = "SELECT failures FROM leases" LEASE_WHERE_ONE,
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
	[S_LEASE_EXPIRE] = "UPDATE leases SET state = ?4, worker_id = NULL, "
			   "deadline = 0, units_done = checkpoint_units, "
			   "updated_at = ?5, last_error = 'lease expired' "
			   "WHERE state = ?3 AND deadline < ?5 RETURNING id",
	[S_LEASE_CANCEL] = "UPDATE leases SET state = ?4, deadline = 0, "
			   "updated_at = ?5 WHERE job_id = ?6 AND state = ?3",

	[S_WORKER_UPSERT] =
		"INSERT INTO workers (name, device, online, first_seen, "
		"last_seen) VALUES (?1, ?2, 1, ?3, ?3) "
		"ON CONFLICT (name) DO UPDATE SET device = excluded.device, "
		"online = 1, last_seen = excluded.last_seen RETURNING id",
	[S_WORKER_ONLINE] = "UPDATE workers SET online = ?2, last_seen = ?3 "
			    "WHERE id = ?1",
	[S_WORKER_ALL_OFFLINE] = "UPDATE workers SET online = 0 "
				 "WHERE online != 0",
	[S_WORKER_CREDIT] = "UPDATE workers SET leases_done = leases_done + 1, "
			    "units_done = units_done + ?2, rate = ?3, "
			    "last_seen = ?4 WHERE id = ?1",
	[S_WORKER_FAIL] = "UPDATE workers SET failures = failures + 1, "
			  "quarantined = CASE WHEN ?2 > 0 AND failures + 1 >= ?2 "
			  "THEN 1 ELSE quarantined END WHERE id = ?1 "
			  "RETURNING quarantined",
	[S_WORKER_GET] = "SELECT " WORKER_COLS " FROM workers WHERE id = ?1",
	[S_WORKER_LIST] = "SELECT " WORKER_COLS " FROM workers ORDER BY id",

	[S_TOKEN_ADD] = "INSERT INTO tokens (name, key, created_at) "
			"VALUES (?1, ?2, ?3)",
	[S_TOKEN_GET] = "SELECT key FROM tokens WHERE name = ?1 AND revoked = 0",
	[S_TOKEN_REVOKE] = "UPDATE tokens SET revoked = 1 WHERE name = ?1",
	[S_TOKEN_LIST] = "SELECT name, created_at, revoked FROM tokens ORDER BY name",

	[S_EVENT_ADD] = "INSERT INTO events (ts, job_id, lease_id, epoch, "
			"worker_id, kind, detail) "
			"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[S_EVENT_COUNT] = "SELECT count(*) FROM events WHERE "
			  "(?1 IS NULL OR kind = ?1) AND (?2 = 0 OR job_id = ?2)",
};

struct store {
	sqlite3 *db;
	sqlite3_stmt *stmt[S_COUNT];
	int in_tx;          /* between store_begin and store_commit/rollback */
	int in_batch;       /* between store_batch_begin and its commit */
	char errmsg[512];
};

/* ---- names ---- */

const char *lease_state_name(enum lease_state s)
{
	static const char *const names[LEASE_NSTATES] = {
		"pending", "leased", "done", "verified", "failed", "cancelled",
	};
	return (unsigned)s < LEASE_NSTATES ? names[s] : "unknown";
}

const char *job_state_name(enum job_state s)
{
	static const char *const names[JOB_NSTATES] = {
		"active", "paused", "done", "failed", "cancelled",
	};
	return (unsigned)s < JOB_NSTATES ? names[s] : "unknown";
}

/* ---- errors ---- */

static int set_err(struct store *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_err(struct store *st, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->errmsg, sizeof(st->errmsg), fmt, ap);
	va_end(ap);
	return code;
}

/* SQLite result code (extended) and the OS errno behind it -> GERR_*. */
static int map_rc(int rc, int sys_errno)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_NOMEM:
		return GERR_NOMEM;
	case SQLITE_FULL:
		return GERR_NOSPACE;
	case SQLITE_IOERR:
		if (rc == SQLITE_IOERR_NOMEM)
			return GERR_NOMEM;
		if (sys_errno == ENOSPC || sys_errno == EDQUOT)
			return GERR_NOSPACE;
		return GERR_IO;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return GERR_CORRUPT;
	case SQLITE_CANTOPEN:
		if (sys_errno == EACCES || sys_errno == EPERM ||
		    sys_errno == EROFS)
			return GERR_PERM;
		return GERR_IO;
	case SQLITE_PERM:
	case SQLITE_AUTH:
	case SQLITE_READONLY:
		return GERR_PERM;
	case SQLITE_CONSTRAINT:
		if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
			return GERR_NOTFOUND;
		if (rc == SQLITE_CONSTRAINT_UNIQUE ||
		    rc == SQLITE_CONSTRAINT_PRIMARYKEY)
			return GERR_STATE;
		return GERR_INVAL;
	case SQLITE_TOOBIG:
		return GERR_TOOBIG;
	case SQLITE_RANGE:
	case SQLITE_MISMATCH:
		return GERR_INVAL;
	default: /* BUSY, LOCKED, ERROR, MISUSE, ... */
		return GERR_DB;
	}
}

/* Translate a failed SQLite call; call before resetting the statement so
 * the message is still the one of this failure. */
static int db_fail(struct store *st, int rc, const char *what)
{
	int sys = sqlite3_system_errno(st->db);
	int code = map_rc(rc, sys);

	if (code == 0)
		code = GERR_DB; /* a row where none was expected: a bug */
	if (sys && (code == GERR_IO || code == GERR_PERM ||
		    code == GERR_NOSPACE))
		return set_err(st, code, "%s: %s (sqlite %d, %s)", what,
			       sqlite3_errmsg(st->db), rc, strerror(sys));
	return set_err(st, code, "%s: %s (sqlite %d)", what,
		       sqlite3_errmsg(st->db), rc);
}

const char *store_errmsg(struct store *st)
{
	return st ? st->errmsg : "no store";
}

/* ---- statements ---- */

static sqlite3_stmt *stmt(struct store *st, enum stmt_id id)
{
	return st->stmt[id];
}

static void stmt_done(sqlite3_stmt *s)
{
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

/* Bind helpers: 0 or an SQLite code. */
static int bind_text(sqlite3_stmt *s, int i, const char *v)
{
	return v ? sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC)
		 : sqlite3_bind_null(s, i);
}

static int bind_ref(sqlite3_stmt *s, int i, int64_t id)
{
	return id ? sqlite3_bind_int64(s, i, id) : sqlite3_bind_null(s, i);
}

#define BIND(call)                                                           \
	do {                                                                 \
		int b_ = (call);                                             \
		if (b_ != SQLITE_OK) {                                       \
			r = db_fail(st, b_, what);                           \
			goto out;                                            \
		}                                                            \
	} while (0)

/* Run a statement that returns no rows. */
static int run(struct store *st, enum stmt_id id, const char *what)
{
	sqlite3_stmt *s = stmt(st, id);
	int rc = sqlite3_step(s);
	int r = rc == SQLITE_DONE ? 0 : db_fail(st, rc, what);

	stmt_done(s);
	return r;
}

/* Step a statement expected to give at most one row with one integer.
 * GERR_NOTFOUND (no message) when there is no row. */
static int step_int(struct store *st, sqlite3_stmt *s, int64_t *ret,
		    const char *what)
{
	int rc = sqlite3_step(s);
	int r;

	if (rc == SQLITE_ROW) {
		*ret = sqlite3_column_int64(s, 0);
		rc = sqlite3_step(s);
	} else if (rc == SQLITE_DONE) {
		stmt_done(s);
		return GERR_NOTFOUND;
	}
	r = rc == SQLITE_DONE ? 0 : db_fail(st, rc, what);
	stmt_done(s);
	return r;
}

static int dup_col(sqlite3_stmt *s, int col, char **ret)
{
	const unsigned char *t;

	*ret = NULL;
	if (sqlite3_column_type(s, col) == SQLITE_NULL)
		return 0;
	t = sqlite3_column_text(s, col);
	if (!t || !(*ret = strdup((const char *)t)))
		return GERR_NOMEM;
	return 0;
}

/* ---- transactions ---- */

/* A transaction the caller opened was rolled back by SQLite itself (after
 * SQLITE_FULL, IOERR, NOMEM, ...); writing now would autocommit pieces of
 * what the caller meant to be atomic. */
static int tx_lost(struct store *st)
{
	return (st->in_tx || st->in_batch) && sqlite3_get_autocommit(st->db);
}

static int op_begin(struct store *st, const char *what)
{
	if (tx_lost(st))
		return set_err(st, GERR_STATE, "%s: the transaction was rolled "
			       "back by an earlier error", what);
	return run(st, st->in_tx || st->in_batch ? S_SAVEPOINT : S_BEGIN, what);
}

/* Ends what op_begin started: keeps it when r == 0, undoes it otherwise.
 * Returns r, or the error of the commit. */
static int op_end(struct store *st, int r, const char *what)
{
	if (st->in_tx || st->in_batch) {
		if (sqlite3_get_autocommit(st->db))
			return r ? r : set_err(st, GERR_DB, "%s: transaction "
					       "lost", what);
		if (r == 0)
			return run(st, S_RELEASE, what);
		sqlite3_step(stmt(st, S_ROLLBACK_TO));
		stmt_done(stmt(st, S_ROLLBACK_TO));
		sqlite3_step(stmt(st, S_RELEASE));
		stmt_done(stmt(st, S_RELEASE));
		return r;
	}
	if (r == 0) {
		r = run(st, S_COMMIT, what);
		if (r == 0)
			return 0;
	}
	if (!sqlite3_get_autocommit(st->db)) {
		sqlite3_step(stmt(st, S_ROLLBACK));
		stmt_done(stmt(st, S_ROLLBACK));
	}
	return r;
}

int store_begin(struct store *st)
{
	int r;

	if (!st)
		return GERR_INVAL;
	if (st->in_tx)
		return set_err(st, GERR_STATE, "store_begin: a transaction is "
			       "already open (not nestable)");
	if (st->in_batch) {
		/* Inside a batch, a transaction is a savepoint: it commits or
		 * rolls back alone, and becomes durable with the batch. */
		if (tx_lost(st))
			return set_err(st, GERR_STATE, "store_begin: the batch was "
				       "rolled back by an earlier error");
		r = run(st, S_USER_SAVEPOINT, "store_begin");
	} else {
		r = run(st, S_BEGIN, "store_begin");
	}
	if (r == 0)
		st->in_tx = 1;
	return r;
}

/* Undo a savepoint-transaction inside a batch. */
static void user_rollback(struct store *st)
{
	if (sqlite3_get_autocommit(st->db))
		return;
	sqlite3_step(stmt(st, S_USER_ROLLBACK_TO));
	stmt_done(stmt(st, S_USER_ROLLBACK_TO));
	sqlite3_step(stmt(st, S_USER_RELEASE));
	stmt_done(stmt(st, S_USER_RELEASE));
}

/* On failure the transaction is rolled back: no transaction is open after
 * store_commit returns, whatever it returns. */
int store_commit(struct store *st)
{
	int r;

	if (!st)
		return GERR_INVAL;
	if (!st->in_tx)
		return set_err(st, GERR_STATE, "store_commit: no transaction "
			       "open");
	st->in_tx = 0;
	if (sqlite3_get_autocommit(st->db))
		return set_err(st, GERR_DB, "store_commit: the transaction was "
			       "rolled back by an earlier error");
	if (st->in_batch) {
		r = run(st, S_USER_RELEASE, "store_commit");
		if (r)
			user_rollback(st);
		return r;
	}
	r = run(st, S_COMMIT, "store_commit");
	if (r && !sqlite3_get_autocommit(st->db)) {
		sqlite3_step(stmt(st, S_ROLLBACK));
		stmt_done(stmt(st, S_ROLLBACK));
	}
	return r;
}

void store_rollback(struct store *st)
{
	if (!st || !st->in_tx)
		return;
	st->in_tx = 0;
	if (st->in_batch) {
		user_rollback(st);
		return;
	}
	if (!sqlite3_get_autocommit(st->db)) {
		sqlite3_step(stmt(st, S_ROLLBACK));
		stmt_done(stmt(st, S_ROLLBACK));
	}
}

int store_batch_begin(struct store *st)
{
	int r;

	if (!st)
		return GERR_INVAL;
	if (st->in_tx || st->in_batch)
		return set_err(st, GERR_STATE, "store_batch_begin: a transaction "
			       "is already open");
	r = run(st, S_BEGIN, "store_batch_begin");
	if (r == 0)
		st->in_batch = 1;
	return r;
}

int store_batch_commit(struct store *st)
{
	int r;

	if (!st || !st->in_batch)
		return GERR_STATE;
	st->in_batch = 0;
	st->in_tx = 0;
	if (sqlite3_get_autocommit(st->db))
		return set_err(st, GERR_DB, "store_batch_commit: the batch was "
			       "rolled back by an earlier error");
	r = run(st, S_COMMIT, "store_batch_commit");
	if (r && !sqlite3_get_autocommit(st->db)) {
		sqlite3_step(stmt(st, S_ROLLBACK));
		stmt_done(stmt(st, S_ROLLBACK));
	}
	return r;
}

void store_batch_rollback(struct store *st)
{
	if (!st)
		return;
	st->in_batch = 0;
	st->in_tx = 0;
	if (!sqlite3_get_autocommit(st->db)) {
		sqlite3_step(stmt(st, S_ROLLBACK));
		stmt_done(stmt(st, S_ROLLBACK));
	}
}

/* ---- open, migrate, close ---- */

static int exec_sql(struct store *st, const char *sql, const char *what)
{
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : db_fail(st, rc, what);
}

static int pragma_int(struct store *st, const char *sql, int64_t *ret)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	int r;

	if (rc != SQLITE_OK)
		return db_fail(st, rc, sql);
	r = step_int(st, s, ret, sql);
	sqlite3_finalize(s);
	if (r == GERR_NOTFOUND)
		r = set_err(st, GERR_DB, "%s: no value", sql);
	return r;
}

/* After a failure to open or set up path: say what is wrong with it in
 * words an operator can act on, when we can tell. */
static int explain_open(struct store *st, const char *path, int r)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	char sqlmsg[sizeof(st->errmsg)];
	struct stat sb;

	memcpy(sqlmsg, st->errmsg, sizeof(sqlmsg));
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);

	if (stat(dir, &sb) != 0)
		return set_err(st, errno == EACCES ? GERR_PERM : GERR_IO,
			       "cannot open database %s: directory %s: %s",
			       path, dir, strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return set_err(st, GERR_IO, "cannot open database %s: %s is "
			       "not a directory", path, dir);
	if (r == GERR_PERM || r == GERR_IO) {
		if (access(dir, W_OK | X_OK) != 0)
			return set_err(st, GERR_PERM, "cannot open database "
				       "%s: directory %s is not writable (%s); "
				       "gpud needs it for the database and "
				       "its -wal/-shm files", path, dir,
				       strerror(errno));
		if (access(path, F_OK) == 0) {
			if (access(path, R_OK | W_OK) != 0)
				return set_err(st, GERR_PERM, "cannot open "
					       "database %s: the file is not "
					       "writable (%s)", path,
					       strerror(errno));
		} else if (errno == ENOENT) {
			/* SQLite retries a failed create read-only and
			 * reports that errno; ask the directory directly. */
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL |
				      O_CLOEXEC, 0600);

			if (fd < 0)
				return set_err(st, errno == EACCES ||
					       errno == EPERM ||
					       errno == EROFS ? GERR_PERM :
					       GERR_IO, "cannot create "
					       "database %s: %s", path,
					       strerror(errno));
			close(fd);
			unlink(path);
		}
	}
	set_err(st, r, "cannot open database %s: %s", path, sqlmsg);
	return r;
}

static int check_identity(struct store *st)
{
	int64_t app, ver, ntables;
	int r;

	if ((r = pragma_int(st, "PRAGMA application_id", &app)) ||
	    (r = pragma_int(st, "PRAGMA user_version", &ver)) ||
	    (r = pragma_int(st, "SELECT count(*) FROM sqlite_schema", &ntables)))
		return r;
	if (app == STORE_APPLICATION_ID || (app == 0 && ver == 0 &&
					    ntables == 0))
		return 0;
	return set_err(st, GERR_CORRUPT, "not a gpud database (application_id "
		       "%lld, user_version %lld)", (long long)app,
		       (long long)ver);
}

/* token_stored_key(key): SQL access to auth_stored_key, for migration 002
 * (tokens stored before it hold the client key itself). NULL for anything
 * but a 32-byte blob, which the tokens table's CHECK then refuses. */
static void sql_token_stored_key(sqlite3_context *ctx, int argc,
				 sqlite3_value **argv)
{
	uint8_t out[AUTH_KEY_LEN];

	(void)argc;
	if (sqlite3_value_type(argv[0]) != SQLITE_BLOB ||
	    sqlite3_value_bytes(argv[0]) != AUTH_KEY_LEN) {
		sqlite3_result_null(ctx);
		return;
	}
	auth_stored_key(sqlite3_value_blob(argv[0]), out);
	sqlite3_result_blob(ctx, out, sizeof(out), SQLITE_TRANSIENT);
}

/* Apply the migrations this database lacks, each in its own IMMEDIATE
 * transaction together with its user_version, so a crash leaves either
 * the old or the new version, never half of one. */
static int migrate(struct store *st)
{
	for (;;) {
		char sql[64];
		int64_t ver;
		int r;

		if ((r = exec_sql(st, "BEGIN IMMEDIATE", "migrate: begin")))
			return r;
		/* Read inside the transaction: another gpud may have
		 * migrated since we looked. */
		if ((r = pragma_int(st, "PRAGMA user_version", &ver)))
			goto fail;
		if (ver > schema_migration_count) {
			r = set_err(st, GERR_UNSUPPORTED, "database schema "
				    "version %lld is newer than this gpud "
				    "knows (%d); run a newer gpud",
				    (long long)ver, schema_migration_count);
			goto fail;
		}
		if (ver == schema_migration_count)
			return exec_sql(st, "COMMIT", "migrate: commit");
		if (ver < 0) {
			r = set_err(st, GERR_CORRUPT, "database schema version "
				    "%lld is invalid", (long long)ver);
			goto fail;
		}
		if ((r = exec_sql(st, schema_migrations[ver], "migration")))
			goto fail_migration;
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %lld",
			 (long long)ver + 1);
		if ((r = exec_sql(st, sql, "migration")))
			goto fail_migration;
		if ((r = exec_sql(st, "COMMIT", "migration commit")))
			goto fail_migration;
		continue;
fail_migration:
		{
			char msg[sizeof(st->errmsg)];

			memcpy(msg, st->errmsg, sizeof(msg));
			set_err(st, r, "migration %lld failed: %s",
				(long long)ver + 1, msg);
		}
fail:
		if (!sqlite3_get_autocommit(st->db))
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return r;
	}
}

static int setup(struct store *st)
{
	sqlite3_stmt *s;
	int rc, r, wal;

	sqlite3_extended_result_codes(st->db, 1);
	/* SQLite quietly opens a file it may not write read-only; gpud
	 * would then fail on its first write instead of at start. */
	if (sqlite3_db_readonly(st->db, "main") == 1)
		return set_err(st, GERR_PERM, "the database file is read-only "
			       "for this user");
	if ((rc = sqlite3_busy_timeout(st->db, STORE_BUSY_MS)) != SQLITE_OK)
		return db_fail(st, rc, "busy_timeout");
	if ((r = exec_sql(st, "PRAGMA foreign_keys = ON", "foreign_keys")))
		return r;
	/* journal_mode answers with the mode in effect: a filesystem without
	 * shared memory can refuse WAL, and invariant 1 depends on it. */
	rc = sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &s,
				NULL);
	if (rc != SQLITE_OK)
		return db_fail(st, rc, "journal_mode");
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		r = db_fail(st, rc, "journal_mode");
		sqlite3_finalize(s);
		return r;
	}
	wal = sqlite3_column_text(s, 0) &&
	      strcmp((const char *)sqlite3_column_text(s, 0), "wal") == 0;
	sqlite3_finalize(s);
	if (!wal)
		return set_err(st, GERR_IO, "journal_mode: this filesystem "
			       "does not support WAL mode");
	if ((r = exec_sql(st, "PRAGMA synchronous = FULL", "synchronous")))
		return r;
	rc = sqlite3_create_function_v2(st->db, "token_stored_key", 1,
					SQLITE_UTF8 | SQLITE_DETERMINISTIC |
					SQLITE_DIRECTONLY, NULL,
					sql_token_stored_key, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return db_fail(st, rc, "create function");
	if ((r = check_identity(st)) || (r = migrate(st)))
		return r;
	for (int i = 0; i < S_COUNT; i++) {
		rc = sqlite3_prepare_v3(st->db, stmt_sql[i], -1,
					SQLITE_PREPARE_PERSISTENT,
					&st->stmt[i], NULL);
		if (rc != SQLITE_OK) {
			r = db_fail(st, rc, "prepare");
			return set_err(st, r, "prepare %s: %s", stmt_sql[i],
				       sqlite3_errmsg(st->db));
		}
	}
	return 0;
}

int store_open(const char *path, struct store **ret, char *err,
	       size_t errlen)
{
	struct store *st;
	int rc, r;

	if (!path || !*path || !ret) {
		if (err && errlen)
			snprintf(err, errlen, "store_open: no path");
		return GERR_INVAL;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		if (err && errlen)
			snprintf(err, errlen, "store_open: out of memory");
		return GERR_NOMEM;
	}
	/* The database holds token keys: create it private. SQLite gives its
	 * -wal and -shm files the mode of the database file. An empty file
	 * is an empty database; failures are diagnosed by the open below. */
	{
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			      0600);

		if (fd >= 0)
			close(fd);
	}
	/* NOMUTEX: one thread at a time uses a store (store.h). */
	rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE |
			     SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (!st->db) {
		r = GERR_NOMEM;
		set_err(st, r, "store_open: out of memory");
	} else if (rc != SQLITE_OK) {
		r = db_fail(st, rc, "open");
	} else {
		r = setup(st);
	}
	if (r) {
		if (r != GERR_UNSUPPORTED)
			r = explain_open(st, path, r);
		if (err && errlen)
			snprintf(err, errlen, "%s", st->errmsg);
		store_close(st);
		return r;
	}
	*ret = st;
	return 0;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	if (st->db && !sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	sqlite3_close(st->db);
	free(st);
}

/* ---- rows ---- */

void store_job_clear(struct store_job *j)
{
	if (!j)
		return;
	free(j->workload);
	free(j->params);
	free(j->cursor);
	free(j->answer);
	free(j->reason);
	memset(j, 0, sizeof(*j));
}

void store_job_free_array(struct store_job *a, size_t n)
{
	if (!a)
		return;
	for (size_t i = 0; i < n; i++)
		store_job_clear(&a[i]);
	free(a);
}

void store_lease_clear(struct store_lease *l)
{
	if (!l)
		return;
	free(l->spec);
	free(l->checkpoint);
	free(l->result);
	free(l->last_error);
	memset(l, 0, sizeof(*l));
}

void store_lease_free_array(struct store_lease *a, size_t n)
{
	if (!a)
		return;
	for (size_t i = 0; i < n; i++)
		store_lease_clear(&a[i]);
	free(a);
}

void store_worker_clear(struct store_worker *w)
{
	if (!w)
		return;
	free(w->name);
	free(w->device);
	memset(w, 0, sizeof(*w));
}

void store_worker_free_array(struct store_worker *a, size_t n)
{
	if (!a)
		return;
	for (size_t i = 0; i < n; i++)
		store_worker_clear(&a[i]);
	free(a);
}

static int job_row(sqlite3_stmt *s, void *elem)
{
	struct store_job *j = elem;

	memset(j, 0, sizeof(*j));
	j->id = sqlite3_column_int64(s, 0);
	j->state = (enum job_state)sqlite3_column_int(s, 3);
	j->total_units = (uint64_t)sqlite3_column_int64(s, 4);
	j->carve_done = sqlite3_column_int(s, 6);
	j->units_verified = (uint64_t)sqlite3_column_int64(s, 8);
	j->created_at = sqlite3_column_double(s, 9);
	j->finished_at = sqlite3_column_double(s, 10);
	if (dup_col(s, 1, &j->workload) || dup_col(s, 2, &j->params) ||
	    dup_col(s, 5, &j->cursor) || dup_col(s, 7, &j->answer) ||
	    dup_col(s, 11, &j->reason)) {
		store_job_clear(j);
		return GERR_NOMEM;
	}
	return 0;
}

static int lease_row(sqlite3_stmt *s, void *elem)
{
	struct store_lease *l = elem;

	memset(l, 0, sizeof(*l));
	l->id = sqlite3_column_int64(s, 0);
	l->job_id = sqlite3_column_int64(s, 1);
	l->units = (uint64_t)sqlite3_column_int64(s, 3);
	l->state = (enum lease_state)sqlite3_column_int(s, 4);
	l->epoch = (uint64_t)sqlite3_column_int64(s, 5);
	l->worker_id = sqlite3_column_int64(s, 6); /* NULL reads as 0 */
	l->deadline = sqlite3_column_double(s, 7);
	l->attempts = (uint32_t)sqlite3_column_int64(s, 8);
	l->failures = (uint32_t)sqlite3_column_int64(s, 9);
	l->units_done = (uint64_t)sqlite3_column_int64(s, 10);
	l->checkpoint_units = (uint64_t)sqlite3_column_int64(s, 12);
	l->updated_at = sqlite3_column_double(s, 14);
	if (dup_col(s, 2, &l->spec) || dup_col(s, 11, &l->checkpoint) ||
	    dup_col(s, 13, &l->result) || dup_col(s, 15, &l->last_error)) {
		store_lease_clear(l);
		return GERR_NOMEM;
	}
	return 0;
}

static int worker_row(sqlite3_stmt *s, void *elem)
{
	struct store_worker *w = elem;

	memset(w, 0, sizeof(*w));
	w->id = sqlite3_column_int64(s, 0);
	w->online = sqlite3_column_int(s, 3);
	w->quarantined = sqlite3_column_int(s, 4);
	w->failures = (uint32_t)sqlite3_column_int64(s, 5);
	w->leases_done = (uint64_t)sqlite3_column_int64(s, 6);
	w->units_done = (uint64_t)sqlite3_column_int64(s, 7);
	w->rate = sqlite3_column_double(s, 8);
	w->first_seen = sqlite3_column_double(s, 9);
	w->last_seen = sqlite3_column_double(s, 10);
	if (dup_col(s, 1, &w->name) || dup_col(s, 2, &w->device)) {
		store_worker_clear(w);
		return GERR_NOMEM;
	}
	return 0;
}

typedef int (*row_fn)(sqlite3_stmt *s, void *elem);
typedef void (*clear_fn)(void *elem);

static void job_clear_v(void *e) { store_job_clear(e); }
static void lease_clear_v(void *e) { store_lease_clear(e); }
static void worker_clear_v(void *e) { store_worker_clear(e); }

/* Read one row of a bound statement into *elem (written only on success).
 * GERR_NOTFOUND with message "what: not found" when there is none. */
static int get_one(struct store *st, sqlite3_stmt *s, size_t size,
		   row_fn fn, clear_fn clr, void *elem, const char *what)
{
	union {
		struct store_job j;
		struct store_lease l;
		struct store_worker w;
	} u;
	void *tmp = &u;
	int rc = sqlite3_step(s);
	int r;

	if (size > sizeof(u))
		abort(); /* a row type missing from the union: a bug */
	if (rc == SQLITE_DONE) {
		stmt_done(s);
		return set_err(st, GERR_NOTFOUND, "%s: not found", what);
	}
	if (rc != SQLITE_ROW) {
		r = db_fail(st, rc, what);
		stmt_done(s);
		return r;
	}
	r = fn(s, tmp);
	if (r) {
		stmt_done(s);
		return set_err(st, r, "%s: out of memory", what);
	}
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE) {
		r = db_fail(st, rc, what);
		clr(tmp);
		stmt_done(s);
		return r;
	}
	stmt_done(s);
	memcpy(elem, tmp, size);
	return 0;
}

/* Read all rows of a bound statement into a malloc'ed array. */
static int get_all(struct store *st, sqlite3_stmt *s, size_t size,
		   row_fn fn, clear_fn clr, void **ret, size_t *ret_n,
		   const char *what)
{
	unsigned char *a = NULL;
	size_t n = 0, cap = 0;
	int rc, r = 0;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			void *na = realloc(a, ncap * size);

			if (!na) {
				r = set_err(st, GERR_NOMEM, "%s: out of memory",
					    what);
				goto out;
			}
			a = na;
			cap = ncap;
		}
		if ((r = fn(s, a + n * size))) {
			r = set_err(st, r, "%s: out of memory", what);
			goto out;
		}
		n++;
	}
	if (rc != SQLITE_DONE)
		r = db_fail(st, rc, what);
out:
	stmt_done(s);
	if (r) {
		for (size_t i = 0; i < n; i++)
			clr(a + i * size);
		free(a);
		return r;
	}
	*ret = a;
	*ret_n = n;
	return 0;
}

/* ---- jobs ---- */

static int check_u63(struct store *st, uint64_t v, const char *what)
{
	if (v > INT64_MAX)
		return set_err(st, GERR_TOOBIG, "%s: %llu is over 2^63", what,
			       (unsigned long long)v);
	return 0;
}

int store_job_insert(struct store *st, const char *workload,
		     const char *params, uint64_t total_units, double now,
		     int64_t *ret_id)
{
	static const char what[] = "store_job_insert";
	sqlite3_stmt *s = stmt(st, S_JOB_INSERT);
	int64_t id = 0;
	int r;

	if (!workload || !params || !ret_id)
		return set_err(st, GERR_INVAL, "%s: missing argument", what);
	if ((r = check_u63(st, total_units, what)) || (r = op_begin(st, what)))
		return r;
	BIND(bind_text(s, 1, workload));
	BIND(bind_text(s, 2, params));
	BIND(sqlite3_bind_int64(s, 3, (int64_t)total_units));
	BIND(sqlite3_bind_double(s, 4, now));
	r = step_int(st, s, &id, what);
	if (r == GERR_NOTFOUND)
		r = set_err(st, GERR_DB, "%s: no id returned", what);
	s = NULL;
out:
	if (s)
		stmt_done(s);
	r = op_end(st, r, what);
	if (r == 0)
		*ret_id = id;
	return r;
}

int store_job_get(struct store *st, int64_t id, struct store_job *ret)
{
	sqlite3_stmt *s = stmt(st, S_JOB_GET);

	if (!ret)
		return set_err(st, GERR_INVAL, "store_job_get: no ret");
	sqlite3_bind_int64(s, 1, id);
	return get_one(st, s, sizeof(*ret), job_row, job_clear_v, ret,
		       "store_job_get");
}

int store_job_list(struct store *st, struct store_job **ret, size_t *ret_n)
{
	void *a;
	size_t n;
	int r;

	if (!ret || !ret_n)
		return set_err(st, GERR_INVAL, "store_job_list: no ret");
	r = get_all(st, stmt(st, S_JOB_LIST), sizeof(**ret), job_row,
		    job_clear_v, &a, &n, "store_job_list");
	if (r == 0) {
		*ret = a;
		*ret_n = n;
	}
	return r;
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
static int job_state(struct store *st, int64_t id, enum job_state *ret,
		     const char *what)
{
	sqlite3_stmt *s = stmt(st, S_JOB_STATE);
	int64_t v = 0;
	int r;

	sqlite3_bind_int64(s, 1, id);
	r = step_int(st, s, &v, what);
	if (r == GERR_NOTFOUND)
		return set_err(st, r, "%s: no job %lld", what, (long long)id);
	if (r == 0)
		*ret = (enum job_state)v;
	return r;
}

int store_job_set_state(struct store *st, int64_t id, enum job_state state,
			const char *reason, double now)
{
	static const char what[] = "store_job_set_state";
	sqlite3_stmt *s = stmt(st, S_JOB_SET_STATE);
	enum job_state from;
	int r;

	if ((unsigned)state >= JOB_NSTATES)
		return set_err(st, GERR_INVAL, "%s: bad state %d", what,
			       (int)state);
	if ((r = op_begin(st, what)))
		return r;
	if ((r = job_state(st, id, &from, what)))
		goto out;
	if (!job_move_allowed(from, state)) {
		r = set_err(st, GERR_STATE, "%s: job %lld is %s, cannot become "
			    "%s", what, (long long)id, job_state_name(from),
			    job_state_name(state));
		goto out;
	}
	BIND(sqlite3_bind_int64(s, 1, id));
	BIND(sqlite3_bind_int(s, 2, state));
	BIND(bind_text(s, 3, reason));
	if (!job_terminal(state))
		BIND(sqlite3_bind_double(s, 4, 0));
	else if (from != state)
		BIND(sqlite3_bind_double(s, 4, now));
	/* else NULL: keep the first finished_at */
	r = run(st, S_JOB_SET_STATE, what);
	s = NULL;
out:
	if (s)
		stmt_done(s);
	return op_end(st, r, what);
}

int store_job_extend(struct store *st, int64_t id, const char *params,
		     uint64_t total_units)
{
	static const char what[] = "store_job_extend";
	sqlite3_stmt *s = stmt(st, S_JOB_EXTEND);
	enum job_state from;
	int r;

	if (!params || total_units > INT64_MAX)
		return set_err(st, GERR_INVAL, "%s: bad arguments", what);
	if ((r = op_begin(st, what)))
		return r;
	if ((r = job_state(st, id, &from, what)))
		goto out;
	if (from == JOB_FAILED || from == JOB_CANCELLED) {
		r = set_err(st, GERR_STATE, "%s: job %lld is %s and cannot be "
			    "extended", what, (long long)id, job_state_name(from));
		goto out;
	}
	BIND(sqlite3_bind_int64(s, 1, id));
	BIND(bind_text(s, 2, params));
	BIND(sqlite3_bind_int64(s, 3, (sqlite3_int64)total_units));
	BIND(sqlite3_bind_int(s, 4, from == JOB_PAUSED ? JOB_PAUSED : JOB_ACTIVE));
	r = run(st, S_JOB_EXTEND, what);
	s = NULL;
out:
	if (s)
		stmt_done(s);
	return op_end(st, r, what);
}

/* Run an UPDATE of one job bound by the caller; GERR_NOTFOUND if no row. */
static int job_update(struct store *st, enum stmt_id sid, int64_t id,
		      const char *what)
{
	int r = run(st, sid, what);

	if (r == 0 && sqlite3_changes(st->db) == 0)
		r = set_err(st, GERR_NOTFOUND, "%s: no job %lld", what,
			    (long long)id);
	return r;
}

int store_job_set_reason(struct store *st, int64_t id, const char *reason)
{
	static const char what[] = "store_job_set_reason";
	sqlite3_stmt *s = stmt(st, S_JOB_SET_REASON);
	int r;

	if ((r = op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_int64(s, 1, id));
	BIND(bind_text(s, 2, reason));
	r = job_update(st, S_JOB_SET_REASON, id, what);
	s = NULL;
out:
	if (s)
		stmt_done(s);
	return op_end(st, r, what);
}

int store_job_set_cursor(struct store *st, int64_t id, const char *cursor,
			 int carve_done)
{
	static const char what[] = "store_job_set_cursor";
	sqlite3_stmt *s = stmt(st, S_JOB_SET_CURSOR);
	int r;

	if ((r = op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_int64(s, 1, id));
	BIND(bind_text(s, 2, cursor));
	BIND(sqlite3_bind_int(s, 3, carve_done ? 1 : 0));
	r = job_update(st, S_JOB_SET_CURSOR, id, what);
	s = NULL;
out:
	if (s)
		stmt_done(s);
	return op_end(st, r, what);
}

int store_job_set_answer(struct store *st, int64_t id, const char *answer,
			 uint64_t units_verified)
{
	static const char what[] = "store_job_set_answer";
	sqlite3_stmt *s = stmt(st, S_JOB_SET_ANSWER);
	int r;

	if ((r = check_u63(st, units_verified, what)) ||
	    (r = op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_int64(s, 1, id));
	BIND(bind_text(s, 2, answer));
	BIND(sqlite3_bind_int64(s, 3, (int64_t)units_verified));
	r = job_update(st, S_JOB_SET_ANSWER, id, what);
	s = NULL;
out:
	if (s)
		stmt_done(s);
	return op_end(st, r, what);
}

/* workloads_json must be a JSON array (json_each of a scalar or object
 * would quietly match something else). */
static int check_workloads(struct store *st, const char *json,
			   const char *what)
{
	sqlite3_stmt *s = stmt(st, S_JSON_ARRAY);
	int64_t ok = 0;
	int r;

	if (!json)
		return set_err(st, GERR_INVAL, "%s: no workloads", what);
	sqlite3_bind_text(s, 1, json, -1, SQLITE_STATIC);
	r = step_int(st, s, &ok, what);
	if (r == 0 && !ok)
		r = set_err(st, GERR_INVAL, "%s: workloads must be a JSON "
			    "array of names, not %.64s", what, json);
	return r;
}

int store_job_next_carvable(struct store *st, const char *workloads_json,
			    const char *exclude_json, int64_t *ret_id)
{
	static const char what[] = "store_job_next_carvable";
	sqlite3_stmt *s = stmt(st, S_JOB_NEXT_CARVABLE);
	int64_t id = 0;
	int r;

	if (!ret_id)
		return set_err(st, GERR_INVAL, "%s: no ret", what);
	if ((r = check_workloads(st, workloads_json, what)))
		return r;
	sqlite3_bind_int(s, 1, JOB_ACTIVE);
	sqlite3_bind_text(s, 2, workloads_json, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, exclude_json ? exclude_json : "[]", -1,
			  SQLITE_STATIC);
	r = step_int(st, s, &id, what);
	if (r == GERR_NOTFOUND)
		return set_err(st, r, "%s: no carvable job", what);
	if (r == 0)
		*ret_id = id;
	return r;
}

int store_job_units_progress(struct store *st, int64_t job_id,
			     uint64_t *ret_units)
{
	static const char what[] = "store_job_units_progress";
	sqlite3_stmt *s = stmt(st, S_JOB_PROGRESS);
	int64_t v = 0;
	int r;

	if (!ret_units)
		return set_err(st, GERR_INVAL, "%s: no ret", what);
	sqlite3_bind_int64(s, 1, job_id);
	sqlite3_bind_int(s, 2, LEASE_LEASED);
	sqlite3_bind_int(s, 3, LEASE_DONE);
	sqlite3_bind_int(s, 4, LEASE_VERIFIED);
	r = step_int(st, s, &v, what);
	if (r == 0)
		*ret_units = (uint64_t)v;
	return r;
}

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
		[LEASE_PENDING] = 1,   /* release, expiry */
		[LEASE_DONE] = 1,      /* result stored */
		[LEASE_CANCELLED] = 1,
	},
	[LEASE_DONE] = {
		[LEASE_VERIFIED] = 1,  /* verification passed */
		[LEASE_PENDING] = 1,   /* verification failed, failures < max */
		[LEASE_FAILED] = 1,    /* verification failed, failures >= max */
		[LEASE_CANCELLED] = 1,
	},
	/* verified, failed and cancelled are final */
};

int store_lease_move_allowed(enum lease_state from, enum lease_state to)
{
	return (unsigned)from < LEASE_NSTATES && (unsigned)to < LEASE_NSTATES &&
	       lease_moves[from][to];
}

struct lease_move {
	enum stmt_id sid;
	int64_t id;            /* > 0: the one lease (id, epoch); 0: the rows
				* the statement's WHERE selects */
	uint64_t epoch;
	enum lease_state from, to;
	/* Called for each RETURNING row; may be NULL. */
	int (*row)(struct store *st, sqlite3_stmt *s, void *ctx);
	void *ctx;
};

/* Say why (id, epoch) in state `from` did not match. */
static int lease_stale(struct store *st, const struct lease_move *m,
		       const char *what)
{
	sqlite3_stmt *s = stmt(st, S_LEASE_GET);
	struct store_lease cur;

	sqlite3_bind_int64(s, 1, m->id);
	if (get_one(st, s, sizeof(cur), lease_row, lease_clear_v, &cur,
		    what) != 0)
		return set_err(st, GERR_STALE, "%s: no lease %lld", what,
			       (long long)m->id);
	set_err(st, GERR_STALE, "%s: lease %lld: expected %s epoch %llu, "
		"found %s epoch %llu", what, (long long)m->id,
		lease_state_name(m->from), (unsigned long long)m->epoch,
		lease_state_name(cur.state), (unsigned long long)cur.epoch);
	store_lease_clear(&cur);
	return GERR_STALE;
}

/* The one function that changes lease states. m->sid is an UPDATE that sets
 * state = ?4 where state = ?3 (and id = ?1 AND epoch = ?2 when m->id > 0);
 * the caller has bound its own parameters (?5 on). Checks the move against
 * lease_moves, runs it, and for a named lease returns GERR_STALE unless
 * exactly that lease changed. *ret_changes (may be NULL) receives the
 * number of leases moved. The statement is always reset. */
static int lease_move(struct store *st, const struct lease_move *m,
		      int64_t *ret_changes, const char *what)
{
	sqlite3_stmt *s = stmt(st, m->sid);
	int64_t changes;
	int rc, r = 0;

	if (!store_lease_move_allowed(m->from, m->to)) {
		stmt_done(s);
		return set_err(st, GERR_STATE, "%s: lease move %s -> %s is "
			       "not allowed", what, lease_state_name(m->from),
			       lease_state_name(m->to));
	}
	if (m->id) {
		if (m->epoch > INT64_MAX) {
			stmt_done(s);
			return set_err(st, GERR_STALE, "%s: lease %lld: epoch "
				       "%llu out of range", what,
				       (long long)m->id,
				       (unsigned long long)m->epoch);
		}
		BIND(sqlite3_bind_int64(s, 1, m->id));
		BIND(sqlite3_bind_int64(s, 2, (int64_t)m->epoch));
	}
	BIND(sqlite3_bind_int(s, 3, m->from));
	BIND(sqlite3_bind_int(s, 4, m->to));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (m->row && (r = m->row(st, s, m->ctx)))
			goto out;
	}
	if (rc != SQLITE_DONE) {
		r = db_fail(st, rc, what);
		goto out;
	}
	changes = sqlite3_changes64(st->db);
	stmt_done(s);
	s = NULL;
	if (m->id && changes != 1)
		return lease_stale(st, m, what);
	if (ret_changes)
		*ret_changes = changes;
out:
	if (s)
		stmt_done(s);
	return r;
}

/* ---- leases ---- */

static int lease_ret_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	if (lease_row(s, ctx))
		return set_err(st, GERR_NOMEM, "lease: out of memory");
	return 0;
}

int store_lease_insert_leased(struct store *st, int64_t job_id,
			      const char *spec, uint64_t units,
			      int64_t worker_id, double deadline, double now,
			      struct store_lease *ret)
{
	static const char what[] = "store_lease_insert_leased";
	sqlite3_stmt *s = stmt(st, S_LEASE_INSERT);
	struct store_lease l;
	int r, have = 0;

	if (!spec || !ret)
		return set_err(st, GERR_INVAL, "%s: missing argument", what);
	if ((r = check_u63(st, units, what)) || (r = op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_int64(s, 1, job_id));
	BIND(bind_text(s, 2, spec));
	BIND(sqlite3_bind_int64(s, 3, (int64_t)units));
	BIND(sqlite3_bind_int(s, 4, LEASE_LEASED));
	BIND(bind_ref(s, 5, worker_id));
	BIND(sqlite3_bind_double(s, 6, deadline));
	BIND(sqlite3_bind_double(s, 7, now));
	r = get_one(st, s, sizeof(l), lease_row, lease_clear_v, &l, what);
	s = NULL;
	if (r == GERR_NOTFOUND && strstr(st->errmsg, "FOREIGN KEY"))
		set_err(st, r, "%s: no job %lld or no worker %lld", what,
			(long long)job_id, (long long)worker_id);
	have = r == 0;
out:
	if (s)
		stmt_done(s);
	r = op_end(st, r, what);
	if (r == 0)
		*ret = l;
	else if (have)
		store_lease_clear(&l);
	return r;
}

int store_lease_claim_pending(struct store *st, int64_t worker_id,
			      const char *workloads_json, double deadline,
			      double now, struct store_lease *ret)
{
	static const char what[] = "store_lease_claim_pending";
	sqlite3_stmt *s = stmt(st, S_LEASE_CLAIM);
	struct store_lease l = {0};
	struct lease_move m = {
		.sid = S_LEASE_CLAIM, .from = LEASE_PENDING, .to = LEASE_LEASED,
		.row = lease_ret_row, .ctx = &l,
	};
	int64_t changes = 0;
	int r;

	if (!ret)
		return set_err(st, GERR_INVAL, "%s: no ret", what);
	if ((r = check_workloads(st, workloads_json, what)) ||
	    (r = op_begin(st, what)))
		return r;
	BIND(bind_ref(s, 5, worker_id));
	BIND(sqlite3_bind_double(s, 6, deadline));
	BIND(sqlite3_bind_double(s, 7, now));
	BIND(sqlite3_bind_int(s, 8, JOB_ACTIVE));
	BIND(bind_text(s, 9, workloads_json));
	s = NULL;
	r = lease_move(st, &m, &changes, what);
	if (r == 0 && changes == 0)
		r = set_err(st, GERR_NOTFOUND, "%s: no pending lease", what);
	if (r == 0 && changes != 1)
		r = set_err(st, GERR_DB, "%s: %lld leases claimed", what,
			    (long long)changes);
out:
	if (s)
		stmt_done(s);
	r = op_end(st, r, what);
	if (r == 0)
		*ret = l;
	else
		store_lease_clear(&l);
	return r;
}

int store_lease_get(struct store *st, int64_t id, struct store_lease *ret)
{
	sqlite3_stmt *s = stmt(st, S_LEASE_GET);

	if (!ret)
		return set_err(st, GERR_INVAL, "store_lease_get: no ret");
	sqlite3_bind_int64(s, 1, id);
	return get_one(st, s, sizeof(*ret), lease_row, lease_clear_v, ret,
		       "store_lease_get");
}

static int lease_list(struct store *st, sqlite3_stmt *s,
		      struct store_lease **ret, size_t *ret_n,
		      const char *what)
{
	void *a;
	size_t n;
	int r;

	if (!ret || !ret_n) {
		stmt_done(s);
		return set_err(st, GERR_INVAL, "%s: no ret", what);
	}
	r = get_all(st, s, sizeof(**ret), lease_row, lease_clear_v, &a, &n,
		    what);
	if (r == 0) {
		*ret = a;
		*ret_n = n;
	}
	return r;
}

int store_lease_list_job(struct store *st, int64_t job_id,
			 struct store_lease **ret, size_t *ret_n)
{
	sqlite3_stmt *s = stmt(st, S_LEASE_LIST_JOB);

	sqlite3_bind_int64(s, 1, job_id);
	return lease_list(st, s, ret, ret_n, "store_lease_list_job");
}

int store_lease_list_state(struct store *st, enum lease_state state,
			   struct store_lease **ret, size_t *ret_n)
{
	sqlite3_stmt *s = stmt(st, S_LEASE_LIST_STATE);

	if ((unsigned)state >= LEASE_NSTATES)
		return set_err(st, GERR_INVAL, "store_lease_list_state: bad "
			       "state %d", (int)state);
	sqlite3_bind_int(s, 1, state);
	return lease_list(st, s, ret, ret_n, "store_lease_list_state");
}

int store_lease_counts(struct store *st, int64_t job_id,
		       uint64_t counts[LEASE_NSTATES])
{
	static const char what[] = "store_lease_counts";
	sqlite3_stmt *s = stmt(st, S_LEASE_COUNTS);
	uint64_t c[LEASE_NSTATES] = {0};
	int rc, r = 0;

	if (!counts)
		return set_err(st, GERR_INVAL, "%s: no counts", what);
	sqlite3_bind_int64(s, 1, job_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int state = sqlite3_column_int(s, 0);

		if (state >= 0 && state < LEASE_NSTATES)
			c[state] = (uint64_t)sqlite3_column_int64(s, 1);
	}
	if (rc != SQLITE_DONE)
		r = db_fail(st, rc, what);
	stmt_done(s);
	if (r == 0)
		memcpy(counts, c, sizeof(c));
	return r;
}

int store_lease_heartbeat(struct store *st, int64_t id, uint64_t epoch,
			  uint64_t units_done, double deadline, double now)
{
	static const char what[] = "store_lease_heartbeat";
	sqlite3_stmt *s = stmt(st, S_LEASE_HEARTBEAT);
	struct lease_move m = {
		.sid = S_LEASE_HEARTBEAT, .id = id, .epoch = epoch,
		.from = LEASE_LEASED, .to = LEASE_LEASED,
	};
	int r;

	if ((r = check_u63(st, units_done, what)) || (r = op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_int64(s, 5, (int64_t)units_done));
	BIND(sqlite3_bind_double(s, 6, deadline));
	BIND(sqlite3_bind_double(s, 7, now));
	s = NULL;
	r = lease_move(st, &m, NULL, what);
out:
	if (s)
		stmt_done(s);
	return op_end(st, r, what);
}

int store_lease_set_checkpoint(struct store *st, int64_t id, uint64_t epoch,
			       const char *hash, uint64_t units_done,
			       double now, char **ret_old_hash)
{
	static const char what[] = "store_lease_set_checkpoint";
	sqlite3_stmt *s = stmt(st, S_LEASE_OLD_CHECKPOINT);
	struct lease_move m = {
		.sid = S_LEASE_CHECKPOINT, .id = id, .epoch = epoch,
		.from = LEASE_LEASED, .to = LEASE_LEASED,
	};
	char *old = NULL;
	int rc, r;

	if (!hash)
		return set_err(st, GERR_INVAL, "%s: no hash", what);
	if ((r = check_u63(st, units_done, what)) || (r = op_begin(st, what)))
		return r;
	/* The old hash, read in the same transaction as the update. A stale
	 * (id, epoch) reads no row here and is reported by lease_move. */
	BIND(sqlite3_bind_int64(s, 1, id));
	BIND(sqlite3_bind_int64(s, 2, (int64_t)(epoch & INT64_MAX)));
	BIND(sqlite3_bind_int(s, 3, LEASE_LEASED));
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		if (dup_col(s, 0, &old)) {
			r = set_err(st, GERR_NOMEM, "%s: out of memory", what);
			goto out;
		}
		rc = sqlite3_step(s);
	}
	if (rc != SQLITE_DONE) {
		r = db_fail(st, rc, what);
		goto out;
	}
	stmt_done(s);
	s = stmt(st, S_LEASE_CHECKPOINT);
	BIND(bind_text(s, 5, hash));
	BIND(sqlite3_bind_int64(s, 6, (int64_t)units_done));
	BIND(sqlite3_bind_double(s, 7, now));
	s = NULL;
	r = lease_move(st, &m, NULL, what);
out:
	if (s)
		stmt_done(s);
	r = op_end(st, r, what);
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
	sqlite3_stmt *s = stmt(st, S_LEASE_RESULT);
	struct lease_move m = {
		.sid = S_LEASE_RESULT, .id = id, .epoch = epoch,
		.from = LEASE_LEASED, .to = LEASE_DONE,
	};
	int r;

	if (!hash)
		return set_err(st, GERR_INVAL, "%s: no hash", what);
	if ((r = check_u63(st, units_done, what)) || (r = op_begin(st, what)))
		return r;
	BIND(bind_text(s, 5, hash));
	BIND(sqlite3_bind_int64(s, 6, (int64_t)units_done));
	BIND(sqlite3_bind_double(s, 7, now));
	s = NULL;
	r = lease_move(st, &m, NULL, what);
out:
	if (s)
		stmt_done(s);
	return op_end(st, r, what);
}

int store_lease_set_verified(struct store *st, int64_t id, uint64_t epoch,
			     double now)
{
	static const char what[] = "store_lease_set_verified";
	sqlite3_stmt *s = stmt(st, S_LEASE_VERIFIED);
	struct lease_move m = {
		.sid = S_LEASE_VERIFIED, .id = id, .epoch = epoch,
		.from = LEASE_DONE, .to = LEASE_VERIFIED,
	};
	int r;

	if ((r = op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_double(s, 5, now));
	s = NULL;
	r = lease_move(st, &m, NULL, what);
out:
	if (s)
		stmt_done(s);
	return op_end(st, r, what);
}

int store_lease_reject(struct store *st, int64_t id, uint64_t epoch,
		       const char *reason, uint32_t max_failures, double now,
		       enum lease_state *ret_state)
{
	static const char what[] = "store_lease_reject";
	sqlite3_stmt *s = stmt(st, S_LEASE_FAILURES);
	struct lease_move m = {
		.sid = S_LEASE_REJECT, .id = id, .epoch = epoch,
		.from = LEASE_DONE, .to = LEASE_PENDING,
	};
	int64_t failures = 0;
	int r;

	if ((r = op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_int64(s, 1, id));
	BIND(sqlite3_bind_int64(s, 2, (int64_t)(epoch & INT64_MAX)));
	BIND(sqlite3_bind_int(s, 3, LEASE_DONE));
	r = step_int(st, s, &failures, what);
	s = NULL;
	if (r && r != GERR_NOTFOUND)
		goto out;
	/* No row: stale; lease_move reports it with the reason. */
	r = 0;
	if ((uint64_t)failures + 1 >= max_failures)
		m.to = LEASE_FAILED;
	s = stmt(st, S_LEASE_REJECT);
	BIND(bind_text(s, 5, reason));
	BIND(sqlite3_bind_double(s, 6, now));
	BIND(sqlite3_bind_int(s, 7, LEASE_PENDING));
	s = NULL;
	r = lease_move(st, &m, NULL, what);
out:
	if (s)
		stmt_done(s);
	r = op_end(st, r, what);
	if (r == 0 && ret_state)
		*ret_state = m.to;
	return r;
}

int store_lease_release(struct store *st, int64_t id, uint64_t epoch,
			double now)
{
	static const char what[] = "store_lease_release";
	sqlite3_stmt *s = stmt(st, S_LEASE_RELEASE);
	struct lease_move m = {
		.sid = S_LEASE_RELEASE, .id = id, .epoch = epoch,
		.from = LEASE_LEASED, .to = LEASE_PENDING,
	};
	int r;

	if ((r = op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_double(s, 5, now));
	s = NULL;
	r = lease_move(st, &m, NULL, what);
out:
	if (s)
		stmt_done(s);
	return op_end(st, r, what);
}

struct id_array {
	int64_t *ids;
	size_t n, cap;
};

static int id_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	struct id_array *a = ctx;

	if (a->n == a->cap) {
		size_t ncap = a->cap ? 2 * a->cap : 16;
		int64_t *na = realloc(a->ids, ncap * sizeof(*na));

		if (!na)
			return set_err(st, GERR_NOMEM, "lease: out of memory");
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
	sqlite3_stmt *s = stmt(st, S_LEASE_EXPIRE);
	struct id_array a = {0};
	struct lease_move m = {
		.sid = S_LEASE_EXPIRE, .from = LEASE_LEASED,
		.to = LEASE_PENDING, .row = id_row, .ctx = &a,
	};
	int r;

	if (!ret_ids || !ret_n)
		return set_err(st, GERR_INVAL, "%s: no ret", what);
	if ((r = op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_double(s, 5, now));
	s = NULL;
	r = lease_move(st, &m, NULL, what);
out:
	if (s)
		stmt_done(s);
	r = op_end(st, r, what);
	if (r) {
		free(a.ids);
		return r;
	}
	*ret_ids = a.ids;
	*ret_n = a.n;
	return 0;
}

int store_job_cancel_leases(struct store *st, int64_t job_id, double now)
{
	static const char what[] = "store_job_cancel_leases";
	static const enum lease_state from[] = {
		LEASE_PENDING, LEASE_LEASED, LEASE_DONE,
	};
	enum job_state js;
	int r;

	if ((r = op_begin(st, what)))
		return r;
	if ((r = job_state(st, job_id, &js, what)))
		goto out;
	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		sqlite3_stmt *s = stmt(st, S_LEASE_CANCEL);
		struct lease_move m = {
			.sid = S_LEASE_CANCEL, .from = from[i],
			.to = LEASE_CANCELLED,
		};

		if ((r = sqlite3_bind_double(s, 5, now)) != SQLITE_OK ||
		    (r = sqlite3_bind_int64(s, 6, job_id)) != SQLITE_OK) {
			r = db_fail(st, r, what);
			stmt_done(s);
			goto out;
		}
		if ((r = lease_move(st, &m, NULL, what)))
			goto out;
	}
out:
	return op_end(st, r, what);
}

/* ---- workers ---- */

/* Run an UPDATE of one worker bound by the caller; GERR_NOTFOUND if none. */
static int worker_update(struct store *st, enum stmt_id sid, int64_t id,
			 const char *what)
{
	int r = run(st, sid, what);

	if (r == 0 && sqlite3_changes(st->db) == 0)
		r = set_err(st, GERR_NOTFOUND, "%s: no worker %lld", what,
			    (long long)id);
	return r;
}

int store_worker_upsert(struct store *st, const char *name,
			const char *device, double now, int64_t *ret_id)
{
	static const char what[] = "store_worker_upsert";
	sqlite3_stmt *s = stmt(st, S_WORKER_UPSERT);
	int64_t id = 0;
	int r;

	if (!name || !device || !ret_id)
		return set_err(st, GERR_INVAL, "%s: missing argument", what);
	if ((r = op_begin(st, what)))
		return r;
	BIND(bind_text(s, 1, name));
	BIND(bind_text(s, 2, device));
	BIND(sqlite3_bind_double(s, 3, now));
	r = step_int(st, s, &id, what);
	if (r == GERR_NOTFOUND)
		r = set_err(st, GERR_DB, "%s: no id returned", what);
	s = NULL;
out:
	if (s)
		stmt_done(s);
	r = op_end(st, r, what);
	if (r == 0)
		*ret_id = id;
	return r;
}

int store_worker_set_online(struct store *st, int64_t id, int online,
			    double now)
{
	static const char what[] = "store_worker_set_online";
	sqlite3_stmt *s = stmt(st, S_WORKER_ONLINE);
	int r;

	if ((r = op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_int64(s, 1, id));
	BIND(sqlite3_bind_int(s, 2, online ? 1 : 0));
	BIND(sqlite3_bind_double(s, 3, now));
	r = worker_update(st, S_WORKER_ONLINE, id, what);
	s = NULL;
out:
	if (s)
		stmt_done(s);
	return op_end(st, r, what);
}

int store_worker_all_offline(struct store *st)
{
	static const char what[] = "store_worker_all_offline";
	int r;

	if ((r = op_begin(st, what)))
		return r;
	r = run(st, S_WORKER_ALL_OFFLINE, what);
	return op_end(st, r, what);
}

int store_worker_credit(struct store *st, int64_t id, uint64_t units,
			double rate, double now)
{
	static const char what[] = "store_worker_credit";
	sqlite3_stmt *s = stmt(st, S_WORKER_CREDIT);
	int r;

	if ((r = check_u63(st, units, what)) || (r = op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_int64(s, 1, id));
	BIND(sqlite3_bind_int64(s, 2, (int64_t)units));
	BIND(sqlite3_bind_double(s, 3, rate));
	BIND(sqlite3_bind_double(s, 4, now));
	r = worker_update(st, S_WORKER_CREDIT, id, what);
	s = NULL;
out:
	if (s)
		stmt_done(s);
	return op_end(st, r, what);
}

/* threshold 0 never quarantines; a quarantined worker stays so. */
int store_worker_fail(struct store *st, int64_t id, uint32_t threshold,
		      int *ret_quarantined)
{
	static const char what[] = "store_worker_fail";
	sqlite3_stmt *s = stmt(st, S_WORKER_FAIL);
	int64_t q = 0;
	int r;

	if ((r = op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_int64(s, 1, id));
	BIND(sqlite3_bind_int64(s, 2, threshold));
	r = step_int(st, s, &q, what);
	s = NULL;
	if (r == GERR_NOTFOUND)
		r = set_err(st, r, "%s: no worker %lld", what, (long long)id);
out:
	if (s)
		stmt_done(s);
	r = op_end(st, r, what);
	if (r == 0 && ret_quarantined)
		*ret_quarantined = (int)q;
	return r;
}

int store_worker_get(struct store *st, int64_t id, struct store_worker *ret)
{
	sqlite3_stmt *s = stmt(st, S_WORKER_GET);

	if (!ret)
		return set_err(st, GERR_INVAL, "store_worker_get: no ret");
	sqlite3_bind_int64(s, 1, id);
	return get_one(st, s, sizeof(*ret), worker_row, worker_clear_v, ret,
		       "store_worker_get");
}

int store_worker_list(struct store *st, struct store_worker **ret,
		      size_t *ret_n)
{
	void *a;
	size_t n;
	int r;

	if (!ret || !ret_n)
		return set_err(st, GERR_INVAL, "store_worker_list: no ret");
	r = get_all(st, stmt(st, S_WORKER_LIST), sizeof(**ret), worker_row,
		    worker_clear_v, &a, &n, "store_worker_list");
	if (r == 0) {
		*ret = a;
		*ret_n = n;
	}
	return r;
}

/* ---- tokens ---- */

int store_token_add(struct store *st, const char *name, const uint8_t key[32],
		    double now)
{
	static const char what[] = "store_token_add";
	sqlite3_stmt *s = stmt(st, S_TOKEN_ADD);
	int r;

	if (!name || !*name || !key)
		return set_err(st, GERR_INVAL, "%s: missing argument", what);
	if ((r = op_begin(st, what)))
		return r;
	BIND(bind_text(s, 1, name));
	BIND(sqlite3_bind_blob(s, 2, key, 32, SQLITE_STATIC));
	BIND(sqlite3_bind_double(s, 3, now));
	r = run(st, S_TOKEN_ADD, what);
	s = NULL;
	if (r == GERR_STATE)
		r = set_err(st, r, "%s: token %s exists", what, name);
out:
	if (s)
		stmt_done(s);
	return op_end(st, r, what);
}

int store_token_get(struct store *st, const char *name, uint8_t ret_key[32])
{
	static const char what[] = "store_token_get";
	sqlite3_stmt *s = stmt(st, S_TOKEN_GET);
	uint8_t key[32];
	int rc, r = 0;

	if (!name || !ret_key)
		return set_err(st, GERR_INVAL, "%s: missing argument", what);
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		stmt_done(s);
		return set_err(st, GERR_NOTFOUND, "%s: no token %s", what,
			       name);
	}
	if (rc != SQLITE_ROW) {
		r = db_fail(st, rc, what);
		stmt_done(s);
		return r;
	}
	if (sqlite3_column_bytes(s, 0) != 32) {
		stmt_done(s);
		return set_err(st, GERR_CORRUPT, "%s: token %s: key is not "
			       "32 bytes", what, name);
	}
	memcpy(key, sqlite3_column_blob(s, 0), 32);
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		r = db_fail(st, rc, what);
	stmt_done(s);
	if (r == 0)
		memcpy(ret_key, key, 32);
	return r;
}

/* Revoking a revoked token is not an error. GERR_NOTFOUND if absent. */
int store_token_revoke(struct store *st, const char *name)
{
	static const char what[] = "store_token_revoke";
	sqlite3_stmt *s = stmt(st, S_TOKEN_REVOKE);
	int r;

	if (!name)
		return set_err(st, GERR_INVAL, "%s: no name", what);
	if ((r = op_begin(st, what)))
		return r;
	BIND(bind_text(s, 1, name));
	r = run(st, S_TOKEN_REVOKE, what);
	s = NULL;
	if (r == 0 && sqlite3_changes(st->db) == 0)
		r = set_err(st, GERR_NOTFOUND, "%s: no token %s", what, name);
out:
	if (s)
		stmt_done(s);
	return op_end(st, r, what);
}

static int token_row(sqlite3_stmt *s, void *elem)
{
	struct store_token *t = elem;
	const unsigned char *name = sqlite3_column_text(s, 0);

	memset(t, 0, sizeof(*t));
	t->name = strdup(name ? (const char *)name : "");
	if (!t->name)
		return GERR_NOMEM;
	t->created_at = sqlite3_column_double(s, 1);
	t->revoked = sqlite3_column_int(s, 2);
	return 0;
}

static void token_clear_v(void *e)
{
	struct store_token *t = e;
	free(t->name);
	t->name = NULL;
}

int store_token_list(struct store *st, struct store_token **ret, size_t *ret_n)
{
	void *a;
	size_t n;
	int r;

	if (!ret || !ret_n)
		return set_err(st, GERR_INVAL, "store_token_list: no ret");
	r = get_all(st, stmt(st, S_TOKEN_LIST), sizeof(**ret), token_row,
		    token_clear_v, &a, &n, "store_token_list");
	if (r == 0) {
		*ret = a;
		*ret_n = n;
	}
	return r;
}

void store_token_free_array(struct store_token *a, size_t n)
{
	for (size_t i = 0; a && i < n; i++)
		free(a[i].name);
	free(a);
}

/* ---- events ---- */

int store_event(struct store *st, double now, int64_t job_id, int64_t lease_id,
		uint64_t epoch, int64_t worker_id, const char *kind,
		const char *detail)
{
	static const char what[] = "store_event";
	sqlite3_stmt *s = stmt(st, S_EVENT_ADD);
	int r;

	if (!kind || !*kind)
		return set_err(st, GERR_INVAL, "%s: no kind", what);
	if ((r = op_begin(st, what)))
		return r;
	BIND(sqlite3_bind_double(s, 1, now));
	BIND(sqlite3_bind_int64(s, 2, job_id));
	BIND(sqlite3_bind_int64(s, 3, lease_id));
	BIND(sqlite3_bind_int64(s, 4, (int64_t)epoch));
	BIND(sqlite3_bind_int64(s, 5, worker_id));
	BIND(bind_text(s, 6, kind));
	BIND(bind_text(s, 7, detail));
	r = run(st, S_EVENT_ADD, what);
	s = NULL;
out:
	if (s)
		stmt_done(s);
	return op_end(st, r, what);
}

/* kind NULL counts every kind; job_id 0 counts every job. */
int store_event_count(struct store *st, const char *kind, int64_t job_id,
		      uint64_t *ret_n)
{
	static const char what[] = "store_event_count";
	sqlite3_stmt *s = stmt(st, S_EVENT_COUNT);
	int64_t n = 0;
	int r;

	if (!ret_n)
		return set_err(st, GERR_INVAL, "%s: no ret", what);
	bind_text(s, 1, kind);
	sqlite3_bind_int64(s, 2, job_id);
	r = step_int(st, s, &n, what);
	if (r == 0)
		*ret_n = (uint64_t)n;
	return r;
}

/* ---- parts (interim: replaced by store_parts.c) ---- */

void store_part_clear(struct store_part *p)
{
	if (!p)
		return;
	free(p->spec);
	free(p->result);
	free(p->note);
	memset(p, 0, sizeof(*p));
}

int store_part_add(struct store *st, int64_t job_id, int64_t lease_id,
		   const char *note)
{
	static const char what[] = "store_part_add";
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(st->db,
		"INSERT INTO parts (job_id, seq, lease_id, note) SELECT ?1, "
		"(SELECT count(*) FROM parts WHERE job_id = ?1), ?2, ?3",
		-1, &s, NULL), r;

	if (rc != SQLITE_OK)
		return db_fail(st, rc, what);
	sqlite3_bind_int64(s, 1, job_id);
	sqlite3_bind_int64(s, 2, lease_id);
	if (note)
		sqlite3_bind_text(s, 3, note, -1, SQLITE_STATIC);
	r = op_begin(st, what);
	if (r == 0) {
		rc = sqlite3_step(s);
		r = rc == SQLITE_DONE ? 0 : db_fail(st, rc, what);
	}
	sqlite3_finalize(s);
	return op_end(st, r, what);
}

int store_part_count(struct store *st, int64_t job_id, uint64_t *ret_n)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(st->db,
		"SELECT count(*) FROM parts WHERE job_id = ?1", -1, &s, NULL);

	if (rc != SQLITE_OK)
		return db_fail(st, rc, "store_part_count");
	sqlite3_bind_int64(s, 1, job_id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*ret_n = (uint64_t)sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : db_fail(st, rc, "store_part_count");
}

int store_part_get(struct store *st, int64_t job_id, uint64_t seq,
		   struct store_part *ret)
{
	struct store_part p = {0};
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(st->db,
		"SELECT l.id, l.spec, l.units, l.result, p.note FROM parts p "
		"JOIN leases l ON l.id = p.lease_id "
		"WHERE p.job_id = ?1 AND p.seq = ?2", -1, &s, NULL);

	if (rc != SQLITE_OK)
		return db_fail(st, rc, "store_part_get");
	sqlite3_bind_int64(s, 1, job_id);
	sqlite3_bind_int64(s, 2, (int64_t)seq);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		p.lease_id = sqlite3_column_int64(s, 0);
		p.units = (uint64_t)sqlite3_column_int64(s, 2);
		if (dup_col(s, 1, &p.spec) || dup_col(s, 3, &p.result) ||
		    dup_col(s, 4, &p.note))
			rc = SQLITE_NOMEM;
	}
	sqlite3_finalize(s);
	if (rc == SQLITE_ROW) {
		*ret = p;
		return 0;
	}
	store_part_clear(&p);
	return rc == SQLITE_DONE ? GERR_NOTFOUND : db_fail(st, rc, "store_part_get");
}
