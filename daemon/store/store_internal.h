/* store_internal.h - PRIVATE to the store files (daemon/store/store*.c); nothing
 * else may include it (it includes sqlite3.h, which only the store files
 * may). The public API and the invariants are in store.h.
 *
 * The store is split by concern, one table per file:
 *   store.c            open, pragmas, migrations, statement cache, close;
 *                      SQLite error translation (sdb_fail) and errmsg
 *   store_tx.c         write calls (sdb_op_begin/end), explicit
 *                      transactions, group commit
 *   store_exec.c       running statements and reading rows into structs
 *   store_jobs.c       jobs, and the event log
 *   store_queue.c      the queue: names, priorities, start times, the
 *                      lists status and history show, a job's figures
 *   store_lease_rows.c lease rows: insert, get, list, counts
 *   store_leases.c     the lease state machine and every lease move
 *   store_parts.c      parts: each verified lease's share of the answer
 *   store_workers.c    workers
 *   store_replica.c    replication: lease groups, a job's check mode, a
 *                      worker's confirmed results
 *   store_tokens.c     tokens
 *   store_blobs.c      the blobs rows name, integrity checks, damage
 *   store_backup.c     a snapshot of the live database (own connection)
 *
 * Names. Public calls are store_*; what the store files share through this
 * header is sdb_*; everything else is static, and a table file's static
 * helpers carry its table's prefix (job_, lease_, part_, worker_, token_).
 * store_test.h declares the tests' hooks (in store.c).
 *
 * Errors. Every SQLite result code is translated to a GERR_* code by
 * sdb_fail() before it leaves the store, and the text goes to st->errmsg
 * (store_errmsg); sdb_err() sets a message of our own.
 *
 * Statements. Each table file owns the SQL of its statements in an array
 * indexed by enum stmt_id (sdb_*_sql below, NULL where another file owns
 * the id); store_open prepares every statement once and each use resets it
 * (sdb_stmt_done).
 */
#ifndef GPUD_STORE_INTERNAL_H
#define GPUD_STORE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "gerr.h"
#include "store.h"

/* The columns sdb_job_row reads, in its order. */
#define JOB_COLS                                                             \
	"id, workload, params, state, total_units, cursor, carve_done, "     \
	"answer, units_verified, created_at, finished_at, reason, name, "    \
	"priority, started_at"

/* The columns sdb_lease_row reads, in its order. */
#define LEASE_COLS                                                           \
	"id, job_id, spec, units, state, epoch, worker_id, deadline, "       \
	"attempts, failures, units_done, checkpoint, checkpoint_units, "     \
	"result, updated_at, last_error"

enum stmt_id {
	/* store_tx.c */
	S_BEGIN,
	S_COMMIT,
	S_ROLLBACK,
	S_SAVEPOINT,
	S_RELEASE,
	S_ROLLBACK_TO,
	S_USER_SAVEPOINT,
	S_USER_RELEASE,
	S_USER_ROLLBACK_TO,
	/* store_jobs.c: jobs, the event log */
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
	S_JOB_LIST_RECENT,
	S_JOB_COUNT_OLD,
	S_JOB_HISTORY,
	S_JOB_SET_NAME,
	S_JOB_SET_PRIORITY,
	S_JOB_STARTED,
	S_JOB_STATS,
	S_EVENT_ADD,
	S_EVENT_COUNT,
	/* store_lease_rows.c */
	S_LEASE_INSERT,
	S_LEASE_GET,
	S_LEASE_LIST_JOB,
	S_LEASE_LIST_STATE,
	S_LEASE_COUNTS,
	S_LEASE_HELD_COUNT,
	S_LEASE_HOLDERS,
	S_LEASE_FAILED_WAITING,
	/* store_leases.c */
	S_LEASE_CLAIM,
	S_LEASE_HEARTBEAT,
	S_LEASE_OLD_CHECKPOINT,
	S_LEASE_CHECKPOINT,
	S_LEASE_RESULT,
	S_LEASE_VERIFIED,
	S_LEASE_FAILURES,
	S_LEASE_FAILED_BY,
	S_LEASE_REJECT,
	S_LEASE_RELEASE,
	S_LEASE_PROGRESS,
	S_LEASE_REVOKE,
	S_LEASE_RUN_FAILED,
	S_LEASE_EXPIRE,
	S_LEASE_CANCEL,
	S_LEASE_CHECKED,
	S_LEASE_ADOPT,
	S_LEASE_REFUTE,
	S_LEASE_RECOMPUTE,
	S_LEASE_CANCEL_REPLICAS,
	/* store_workers.c */
	/* store_parts.c */
	S_PART_ADD,
	S_PART_COUNT,
	S_PART_GET,
	/* store_workers.c */
	S_WORKER_UPSERT,
	S_WORKER_ONLINE,
	S_WORKER_ALL_OFFLINE,
	S_WORKER_CREDIT,
	S_WORKER_FAIL,
	S_WORKER_FOREIGN,
	S_WORKER_STALL,
	S_WORKER_GET,
	S_WORKER_LIST,
	S_WORKER_PLACE,
	/* store_tokens.c */
	S_TOKEN_ADD,
	S_TOKEN_GET,
	S_TOKEN_REVOKE,
	S_TOKEN_LIST,
	/* store_blobs.c */
	S_BLOB_REFS,
	S_DAMAGE_CLEAR,
	S_DAMAGE_ADD,
	S_DAMAGE_GET,
	/* store_replica.c */
	S_REPLICA_INFO,
	S_REPLICA_GROUP,
	S_REPLICA_INSERT,
	S_REPLICA_COUNTS,
	S_REPLICA_WAITING,
	S_JOB_REPLICATE_SET,
	S_JOB_REPLICATE_GET,
	S_WORKER_CONFIRM,
	S_WORKER_STREAK,
	S_COUNT
};

/* Each file's SQL, [id] = text for the ids it owns. */
extern const char *const sdb_tx_sql[S_COUNT];
extern const char *const sdb_job_sql[S_COUNT];
extern const char *const sdb_queue_sql[S_COUNT];
extern const char *const sdb_lease_row_sql[S_COUNT];
extern const char *const sdb_lease_sql[S_COUNT];
extern const char *const sdb_part_sql[S_COUNT];
extern const char *const sdb_worker_sql[S_COUNT];
extern const char *const sdb_token_sql[S_COUNT];
extern const char *const sdb_blob_sql[S_COUNT];
extern const char *const sdb_replica_sql[S_COUNT];

struct store {
	sqlite3 *db;
	sqlite3_stmt *stmt[S_COUNT];
	int in_tx;          /* between store_begin and store_commit/rollback */
	int in_batch;       /* between store_batch_begin and its commit */
	char errmsg[512];
};

/* ---- errors (store.c) ---- */

/* Set st->errmsg; returns code. */
int sdb_err(struct store *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Translate a failed SQLite call; call before resetting the statement so
 * the message is still the one of this failure. */
int sdb_fail(struct store *st, int rc, const char *what);

/* ---- statements ---- */

static inline sqlite3_stmt *sdb_stmt(struct store *st, enum stmt_id id)
{
	return st->stmt[id];
}

/* NULL-safe: a statement of a table an older schema lacks (store_test.h)
 * is NULL, and every call fails on it (SQLITE_MISUSE). */
static inline void sdb_stmt_done(sqlite3_stmt *s)
{
	if (!s)
		return;
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

/* Bind helpers: 0 or an SQLite code. */
static inline int sdb_bind_text(sqlite3_stmt *s, int i, const char *v)
{
	return v ? sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC)
		 : sqlite3_bind_null(s, i);
}

static inline int sdb_bind_ref(sqlite3_stmt *s, int i, int64_t id)
{
	return id ? sqlite3_bind_int64(s, i, id) : sqlite3_bind_null(s, i);
}

/* Bind or fail: needs `int r`, `st`, `what` and an `out:` label. */
#define BIND(call)                                                           \
	do {                                                                 \
		int b_ = (call);                                             \
		if (b_ != SQLITE_OK) {                                       \
			r = sdb_fail(st, b_, what);                          \
			goto out;                                            \
		}                                                            \
	} while (0)

/* ---- running statements, reading rows (store_exec.c) ---- */

/* Run a statement that returns no rows. */
int sdb_run(struct store *st, enum stmt_id id, const char *what);
/* Step a statement expected to give at most one row with one integer.
 * GERR_NOTFOUND (no message) when there is no row. */
int sdb_step_int(struct store *st, sqlite3_stmt *s, int64_t *ret,
		 const char *what);
/* A count: statement id with ?1 = key and ?2 = state, one integer row. */
int sdb_count(struct store *st, enum stmt_id id, int64_t key, int state,
	      uint64_t *ret_n, const char *what);
/* Leases per state: statement id with ?1 = key gives (state, count) rows. */
int sdb_state_counts(struct store *st, enum stmt_id id, int64_t key,
		     uint64_t counts[LEASE_NSTATES], const char *what);
/* strdup of a text column; NULL for SQL NULL. 0 or GERR_NOMEM. */
int sdb_dup_col(sqlite3_stmt *s, int col, char **ret);
/* GERR_TOOBIG (with a message) for a counter SQLite cannot hold. */
int sdb_check_u63(struct store *st, uint64_t v, const char *what);

/* Decode the current row into *elem: 0 or GERR_NOMEM (elem left clear). */
typedef int (*sdb_row_fn)(sqlite3_stmt *s, void *elem);
typedef void (*sdb_clear_fn)(void *elem);
/* Read one row of a bound statement into *elem (written only on success).
 * GERR_NOTFOUND with message "what: not found" when there is none. */
int sdb_get_one(struct store *st, sqlite3_stmt *s, size_t size,
		sdb_row_fn fn, sdb_clear_fn clr, void *elem, const char *what);
/* Read all rows of a bound statement into a malloc'ed array. */
int sdb_get_all(struct store *st, sqlite3_stmt *s, size_t size,
		sdb_row_fn fn, sdb_clear_fn clr, void **ret, size_t *ret_n,
		const char *what);

/* ---- write calls (store_tx.c) ---- */

/* Every public call that writes runs between sdb_op_begin() and
 * sdb_op_end(): outside an explicit store_begin() that is BEGIN IMMEDIATE
 * .. COMMIT (durable on return, synchronous=FULL); inside one it is a
 * SAVEPOINT, so a failing call leaves the caller's transaction as it was
 * before the call. */
int sdb_op_begin(struct store *st, const char *what);
/* Ends what sdb_op_begin started: keeps it when r == 0, undoes it
 * otherwise. Returns r, or the error of the commit. */
int sdb_op_end(struct store *st, int r, const char *what);

/* ---- shared by the table files ---- */

/* store_jobs.c: the state of job id, or GERR_NOTFOUND with a message. */
int sdb_job_state(struct store *st, int64_t id, enum job_state *ret,
		  const char *what);
/* store_jobs.c: workloads_json must be a JSON array (json_each of a scalar
 * or object would quietly match something else). */
int sdb_check_workloads(struct store *st, const char *json,
			const char *what);
/* store_jobs.c: a JOB_COLS row into a struct store_job. */
int sdb_job_row(sqlite3_stmt *s, void *elem);
void sdb_job_clear_v(void *e);
/* store_lease_rows.c: a LEASE_COLS row into a struct store_lease. */
int sdb_lease_row(sqlite3_stmt *s, void *elem);
void sdb_lease_clear_v(void *e);

#endif
