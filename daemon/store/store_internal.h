/* store_internal.h - private to the store's files (in daemon/store/);
 * nothing else includes it, for it includes sqlite3.h, which only they may.
 * The public API, its invariants and ownership rules are in store.h.
 *
 * The files, each calling only those listed above it (no circle):
 *   store_err.c        SQLite codes to GERR_* (sdb_fail), st->errmsg
 *   store_exec.c       one statement's life: bind, step, read, reset
 *   store_tx.c         write calls (sdb_op_begin/end, sdb_write),
 *                      explicit transactions, group commit
 *   store_jobs.c       jobs, and the event log
 *   store_lease_rows.c lease rows: insert, get, list, counts
 *   store_workers.c    workers
 *   store_tokens.c     tokens
 *   store_pagekeys.c   the status page's keys (hashes)
 *   store_events.c     reading the event log (store_events.h)
 *   store_blobs.c      the blobs rows name, integrity checks, damage
 *   store_queue.c      the queue: names, priorities, start times, the
 *                      lists status and history show, a job's figures
 *   store_leases.c     the lease state machine and every lease move
 *   store_parts.c      parts: each verified lease's share of the answer
 *   store_replica.c    replication: lease groups, a job's check mode, a
 *                      worker's confirmed results
 *   store_open.c       open, pragmas, migrations, the statement cache,
 *                      close (it alone sees every table file's SQL)
 *   store_backup.c     a snapshot of the live database (own connection)
 *   store_lifecycle.c  requeue, --after, time limits, jobs' ends
 *
 * Names. Public calls are store_*; what the store files share through this
 * header is sdb_*; everything else is static, and a table file's static
 * helpers carry its table's prefix (job_, lease_, part_, worker_, token_).
 * store_test.h declares the tests' hooks (in store_open.c).
 *
 * Threads. As store.h says: a struct store is used by one thread at a
 * time, so nothing here locks; store_backup.c opens connections of its own.
 *
 * Errors. Every SQLite result code is translated to a GERR_* code by
 * sdb_fail() where it enters (store_exec.c, or a file's own prepare), and
 * the text goes to st->errmsg (store_errmsg); sdb_err() sets a message of
 * our own. Every sdb_* call returns 0 or a GERR_* code with st->errmsg set,
 * unless its comment says "no message".
 *
 * Statements. Each table file owns the SQL of its statements in an array
 * indexed by enum stmt_id (sdb_*_sql below, NULL where another file owns
 * the id); store_open prepares every statement once, and store_exec.c
 * binds, steps and resets it on every use (see "one statement" below).
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
	"priority, started_at, owner, run_s, run_since"

/* Migration 021: job j (an alias of jobs) may be granted work: it waits
 * for no job, or the job it waits for is done (2 = JOB_DONE). */
#define JOB_AFTER_READY(j)                                                   \
	"(" j ".after_job IS NULL OR EXISTS (SELECT 1 FROM jobs AS pre "      \
	"WHERE pre.id = " j ".after_job AND pre.state = 2))"

/* The columns sdb_lease_row reads, in its order. */
#define LEASE_COLS                                                           \
	"id, job_id, spec, units, state, epoch, worker_id, deadline, "       \
	"attempts, failures, units_done, checkpoint, checkpoint_units, "     \
	"result, updated_at, last_error"

/* The digests of migration 015: BLAKE2b-256 (gpud_digest, store_open.c)
 * of what a job's answer is read with (its id, params, answer and
 * verified units), and of everything a part gives a reader (its job, seq,
 * lease, and the lease's spec, units and result, and its note). In a
 * statement on jobs, and on parts with its lease as l. */
#define JOB_DIGEST                                                           \
	"gpud_digest('job', jobs.id, jobs.params, jobs.answer, "              \
	"jobs.units_verified)"
#define PART_DIGEST                                                          \
	"gpud_digest('part', parts.job_id, parts.seq, parts.lease_id, "       \
	"l.spec, l.units, l.result, parts.note)"

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
	S_JOB_RUN_CLOSE,
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
	S_JOB_SET_OWNER,
	S_JOB_SET_PRIORITY,
	S_JOB_STARTED,
	S_JOB_STATS,
	S_JOB_DIGEST_SET,
	S_JOB_DIGEST_OK,
	S_EVENT_ADD,
	S_EVENT_COUNT,
	/* store_events.c: reading the event log */
	S_EVENT_MAX_ID,
	S_EVENT_KIND_COUNTS,
	S_EVENT_RESULTS,
	S_EVENT_JOB_LIST,
	S_EVENT_JOB_READ,
	S_EVENT_LAST,
	/* store_lease_rows.c */
	S_LEASE_INSERT,
	S_LEASE_GET,
	S_LEASE_LIST_JOB,
	S_LEASE_LIST_STATE,
	S_LEASE_COUNTS,
	S_LEASE_HELD_COUNT,
	S_LEASE_HOLDERS,
	S_LEASE_FAILED_WAITING,
	S_LEASE_GRANT,
	S_LEASE_MARK_TAKEBACK,
	S_LEASE_RESPEC,
	S_LEASE_INSERT_PENDING,
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
	S_LEASE_UNVERIFY,
	/* store_parts.c */
	S_PART_ADD,
	S_PART_COUNT,
	S_PART_GET,
	S_PART_DIGEST_SET,
	S_PART_DIGEST_OK,
	S_PART_REMOVE,
	S_PART_FILL,
	/* store_rates.c */
	S_RATE_REGISTER,
	S_RATE_SEEN,
	S_RATE_NOTE,
	S_RATE_GET,
	S_RATE_FLEET,
	S_RATE_SAMPLE,
	S_RATE_CHECKPOINT,
	S_RATE_RESULT,
	S_RATE_EXPECT,
	S_LEASE_WINDOW_GET,
	S_LEASE_WINDOW_SET,
	S_JOB_RATES_FORGET,
	S_JOB_UNITS_LEFT,
	S_LEASE_GRACE,
	S_FLEET_OTHERS,
	/* store_workers.c */
	S_WORKER_UPSERT,
	S_WORKER_UPSERT_LEGACY,
	S_WORKER_ONLINE,
	S_WORKER_ALL_OFFLINE,
	S_WORKER_CREDIT,
	S_WORKER_FAIL,
	S_WORKER_FOREIGN,
	S_WORKER_STALL,
	S_WORKER_GET,
	S_WORKER_LIST,
	S_WORKER_PLACE,
	S_WORKER_DRAIN,
	S_WORKER_FORGIVE,
	S_WORKER_PRUNE_RATES,
	S_WORKER_PRUNE_JOB_RATES,
	S_WORKER_PRUNE,
	S_WORKER_CRED_HELD,
	/* store_tokens.c */
	S_TOKEN_ADD,
	S_TOKEN_GET,
	S_TOKEN_BY_KEY,
	S_TOKEN_REVOKE,
	S_TOKEN_REKEY,
	S_TOKEN_LIST,
	/* store_blobs.c */
	S_BLOB_REFS,
	S_DAMAGE_CLEAR,
	S_DAMAGE_ADD,
	S_DAMAGE_GET,
	S_DIGEST_BAD_JOBS,
	S_DIGEST_BAD_PARTS,
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
	/* store_pagekeys.c */
	S_PAGEKEY_PRUNE,
	S_PAGEKEY_ADD,
	S_PAGEKEY_FIND,
	S_PAGEKEY_REVOKE,
	S_PAGEKEY_COUNT,
	/* store_lifecycle.c */
	S_LIFE_GET,
	S_LIFE_SET,
	S_LIFE_JOB_ID,
	S_LIFE_RAN,
	S_LIFE_ANY,
	S_LIFE_OVER,
	S_LIFE_PRIMARIES_LEFT,
	S_LIFE_FORGET_FAILURES,
	S_LIFE_REQUEUE_LEASES,
	S_LIFE_CANCEL_REPLICAS,
	S_LIFE_REQUEUE_JOB,
	S_LIFE_ENDS,
	S_LIFE_MAX_EVENT,
	S_LIFE_DEPENDENTS,
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
extern const char *const sdb_rate_sql[S_COUNT];
extern const char *const sdb_pagekey_sql[S_COUNT];
extern const char *const sdb_event_read_sql[S_COUNT];
extern const char *const sdb_life_sql[S_COUNT];

/* The handle store_open returns; its caller owns it until store_close. */
struct store {
	sqlite3 *db;
	/* Prepared by store_open.c; NULL where an older schema (store_test.h)
	 * lacks the table, so that every use fails (SQLITE_MISUSE). */
	sqlite3_stmt *stmt[S_COUNT];
	int in_tx;          /* between store_begin and store_commit/rollback */
	int in_batch;       /* between store_batch_begin and its commit */
	char errmsg[512];
};

/* ---- errors (store_err.c) ---- */

/* Set st->errmsg; returns code. */
int sdb_err(struct store *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Translate a failed SQLite call; call before resetting the statement so
 * the message is still the one of this failure. */
int sdb_fail(struct store *st, int rc, const char *what);
/* GERR_TOOBIG (with a message) for a counter SQLite cannot hold. */
int sdb_check_u63(struct store *st, uint64_t v, const char *what);

/* ---- one statement: values bound, rows read, reset (store_exec.c) ----
 *
 * A store function names its statement, the values of ?1, ?2, ... and what
 * a row becomes; the calls below bind, step, translate SQLite's codes and
 * reset the cached statement on every path, so no table file touches a
 * statement's life:
 *
 *	r = sdb_one(st, S_JOB_STATE, SDB_ARGS(sa_int(id)),
 *		    SDB_COLS(sc_i64(&v)), what);
 *
 * Values and columns are typed by the sa_* and sc_* constructors. Text and
 * blob values are borrowed until the call returns (SQLITE_STATIC). */

enum sdb_type {
	SDB_END = 0, /* ends a list */
	SDB_NULL,    /* value: NULL; column: skipped */
	SDB_INT,     /* value: any integer; column: int64_t */
	SDB_I32,     /* column: int */
	SDB_U64,     /* column: uint64_t, as stored */
	SDB_U32,     /* column: uint32_t, as stored */
	SDB_DBL,     /* double; a NULL column reads 0 */
	SDB_TEXT,    /* value: text (NULL binds NULL); column: malloc'ed copy
		      * or NULL for NULL */
	SDB_BLOB,    /* value: bytes */
};

struct sdb_arg {
	enum sdb_type type;
	int64_t i;
	double d;
	const void *p;
	int n;
};

static inline struct sdb_arg sa_int(int64_t v)
{
	return (struct sdb_arg){.type = SDB_INT, .i = v};
}

/* A reference to another row: 0 binds NULL. */
static inline struct sdb_arg sa_ref(int64_t v)
{
	return (struct sdb_arg){.type = v ? SDB_INT : SDB_NULL, .i = v};
}

static inline struct sdb_arg sa_dbl(double v)
{
	return (struct sdb_arg){.type = SDB_DBL, .d = v};
}

static inline struct sdb_arg sa_text(const char *v)
{
	return (struct sdb_arg){.type = SDB_TEXT, .p = v};
}

static inline struct sdb_arg sa_blob(const void *v, int n)
{
	return (struct sdb_arg){.type = SDB_BLOB, .p = v, .n = n};
}

#define SA_NULL ((struct sdb_arg){.type = SDB_NULL})
/* The values of ?1, ?2, ... in order; NULL where a statement takes none. */
#define SDB_ARGS(...)                                                        \
	((const struct sdb_arg[]){__VA_ARGS__, {.type = SDB_END}})

struct sdb_col {
	enum sdb_type type;
	void *p;
};

static inline struct sdb_col sc_i64(int64_t *p)
{
	return (struct sdb_col){SDB_INT, p};
}

static inline struct sdb_col sc_int(int *p)
{
	return (struct sdb_col){SDB_I32, p};
}

static inline struct sdb_col sc_u64(uint64_t *p)
{
	return (struct sdb_col){SDB_U64, p};
}

static inline struct sdb_col sc_u32(uint32_t *p)
{
	return (struct sdb_col){SDB_U32, p};
}

static inline struct sdb_col sc_dbl(double *p)
{
	return (struct sdb_col){SDB_DBL, p};
}

static inline struct sdb_col sc_text(char **p)
{
	return (struct sdb_col){SDB_TEXT, p};
}

#define SC_SKIP ((struct sdb_col){SDB_NULL, NULL})
/* Where columns 0, 1, ... of a row go, in order. */
#define SDB_COLS(...) ((const struct sdb_col[]){__VA_ARGS__, {SDB_END, NULL}})

/* Read the current row's columns into cols: 0, or GERR_NOMEM with every
 * text read so far freed and set to NULL. */
int sdb_cols(sqlite3_stmt *s, const struct sdb_col *cols);

/* Free the texts cols point to, then zero the size bytes of elem: a
 * struct's clear, with the columns its row reader reads. */
void sdb_clear(void *elem, size_t size, const struct sdb_col *cols);

/* Run statement id, which returns no rows. */
int sdb_exec(struct store *st, enum stmt_id id, const struct sdb_arg *args,
	     const char *what);
/* Run statement id, ignoring a failure and leaving st->errmsg alone: the
 * undo after an error, whose message is the one to keep. */
void sdb_exec_quiet(struct store *st, enum stmt_id id);
/* Rows the last write changed. */
static inline int64_t sdb_changes(struct store *st)
{
	return sqlite3_changes64(st->db);
}
/* Statement id gives at most one row, read into cols. GERR_NOTFOUND with
 * no message when there is none; what cols hold is then unspecified. */
int sdb_one(struct store *st, enum stmt_id id, const struct sdb_arg *args,
	    const struct sdb_col *cols, const char *what);
/* The same for SQL outside the statement cache (pragmas, a query built
 * at run time): prepared, run and finalized here. */
int sdb_one_sql(struct store *st, const char *sql,
		const struct sdb_col *cols, const char *what);

/* Called for each row; 0 or an error code with st->errmsg set. */
typedef int (*sdb_each_fn)(struct store *st, sqlite3_stmt *s, void *ctx);
/* Run statement id and hand each row to fn (NULL: rows are ignored). */
int sdb_each(struct store *st, enum stmt_id id, const struct sdb_arg *args,
	     sdb_each_fn fn, void *ctx, const char *what);
/* The same for SQL outside the statement cache. */
int sdb_each_sql(struct store *st, const char *sql, sdb_each_fn fn,
		 void *ctx, const char *what);
/* The same for a statement the caller prepared (and finalizes). */
int sdb_each_stmt(struct store *st, sqlite3_stmt *s, sdb_each_fn fn,
		  void *ctx, const char *what);

/* Decode the current row into *elem, which the caller zeroed: 0 or
 * GERR_NOMEM (the caller then clears elem with the matching sdb_clear_fn). */
typedef int (*sdb_row_fn)(sqlite3_stmt *s, void *elem);
typedef void (*sdb_clear_fn)(void *elem);
/* Statement id's one row into *elem (written only on success); the
 * struct is one of those sdb_get_one's union names. GERR_NOTFOUND with
 * message "what: not found" when there is none. */
int sdb_get_one(struct store *st, enum stmt_id id, const struct sdb_arg *args,
		size_t size, sdb_row_fn fn, sdb_clear_fn clr, void *elem,
		const char *what);
/* All its rows into a malloc'ed array of *ret_n elements of size bytes;
 * ret is the address of the caller's array pointer (T **). GERR_INVAL
 * "what: no ret" when ret or ret_n is NULL. */
int sdb_get_all(struct store *st, enum stmt_id id, const struct sdb_arg *args,
		size_t size, sdb_row_fn fn, sdb_clear_fn clr, void *ret,
		size_t *ret_n, const char *what);
/* Clear each of n elements of an array, then free it; NULL-safe. */
void sdb_free_array(void *a, size_t n, size_t size, sdb_clear_fn clr);

/* A count: statement id gives one integer row (a negative reads 0);
 * GERR_NOTFOUND with no message when it gives none. */
int sdb_count(struct store *st, enum stmt_id id, const struct sdb_arg *args,
	      uint64_t *ret_n, const char *what);
/* Leases per state: statement id with ?1 = key gives (state, count) rows. */
int sdb_state_counts(struct store *st, enum stmt_id id, int64_t key,
		     uint64_t counts[LEASE_NSTATES], const char *what);

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
/* Statement id (an INSERT or UPDATE .. RETURNING) as a whole write call,
 * its one row read into cols: GERR_NOTFOUND with no message, and nothing
 * written, when it gives none. */
int sdb_write_one(struct store *st, enum stmt_id id,
		  const struct sdb_arg *args, const struct sdb_col *cols,
		  const char *what);
/* Statement id as a whole write call. When noun is not NULL the statement
 * must change a row: GERR_NOTFOUND "what: no <noun> <key>" otherwise. */
int sdb_write(struct store *st, enum stmt_id id, const struct sdb_arg *args,
	      const char *noun, int64_t key, const char *what);

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
/* store_jobs.c: statement id's JOB_COLS rows into a malloc'ed array. */
int sdb_job_list(struct store *st, enum stmt_id id,
		 const struct sdb_arg *args, struct store_job **ret,
		 size_t *ret_n, const char *what);
/* store_lease_rows.c: a LEASE_COLS row into a struct store_lease. */
int sdb_lease_row(sqlite3_stmt *s, void *elem);
void sdb_lease_clear_v(void *e);
/* store_lease_rows.c: lease id, or GERR_NOTFOUND "what: not found". */
int sdb_lease_get(struct store *st, int64_t id, struct store_lease *ret,
		  const char *what);

#endif
