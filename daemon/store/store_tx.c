/* store_tx.c - write calls, explicit transactions and group commit (see
 * store.h for the contract and store_internal.h for sdb_op_begin/end and
 * sdb_write). Calls store_exec.c and store_err.c only.
 *
 * Every public call that writes runs between sdb_op_begin() and
 * sdb_op_end(): outside an explicit store_begin() that is BEGIN IMMEDIATE ..
 * COMMIT (durable on return, synchronous=FULL); inside one it is a
 * SAVEPOINT, so a failing call leaves the caller's transaction as it was
 * before the call. Inside a batch (store_batch_begin), store_begin opens the
 * savepoint store_user and single writes the savepoint store_op.
 */
#include "store_internal.h"

const char *const sdb_tx_sql[S_COUNT] = {
	[S_BEGIN] = "BEGIN IMMEDIATE",
	[S_COMMIT] = "COMMIT",
	[S_ROLLBACK] = "ROLLBACK",
	[S_SAVEPOINT] = "SAVEPOINT store_op",
	[S_RELEASE] = "RELEASE store_op",
	[S_ROLLBACK_TO] = "ROLLBACK TO store_op",
	[S_USER_SAVEPOINT] = "SAVEPOINT store_user",
	[S_USER_RELEASE] = "RELEASE store_user",
	[S_USER_ROLLBACK_TO] = "ROLLBACK TO store_user",
};

/* A transaction the caller opened was rolled back by SQLite itself (after
 * SQLITE_FULL, IOERR, NOMEM, ...); writing now would autocommit pieces of
 * what the caller meant to be atomic. */
static int tx_lost(struct store *st)
{
	return (st->in_tx || st->in_batch) && sqlite3_get_autocommit(st->db);
}

/* Undo the open transaction, if SQLite has not already. */
static void rollback(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		sdb_exec_quiet(st, S_ROLLBACK);
}

/* COMMIT; on failure the transaction is rolled back, so none is open
 * after it whatever it returns. */
static int commit(struct store *st, const char *what)
{
	int r = sdb_exec(st, S_COMMIT, NULL, what);

	if (r)
		rollback(st);
	return r;
}

int sdb_op_begin(struct store *st, const char *what)
{
	if (tx_lost(st))
		return sdb_err(st, GERR_STATE, "%s: the transaction was "
			       "rolled back by an earlier error", what);
	return sdb_exec(st, st->in_tx || st->in_batch ? S_SAVEPOINT : S_BEGIN,
			NULL, what);
}

int sdb_op_end(struct store *st, int r, const char *what)
{
	if (st->in_tx || st->in_batch) {
		if (sqlite3_get_autocommit(st->db))
			return r ? r : sdb_err(st, GERR_DB, "%s: "
					       "transaction lost", what);
		if (r == 0)
			return sdb_exec(st, S_RELEASE, NULL, what);
		sdb_exec_quiet(st, S_ROLLBACK_TO);
		sdb_exec_quiet(st, S_RELEASE);
		return r;
	}
	if (r == 0)
		return commit(st, what);
	rollback(st);
	return r;
}

int sdb_write(struct store *st, enum stmt_id id, const struct sdb_arg *args,
	      const char *noun, int64_t key, const char *what)
{
	int r = sdb_op_begin(st, what);

	if (r)
		return r;
	r = sdb_exec(st, id, args, what);
	if (r == 0 && noun && sdb_changes(st) == 0)
		r = sdb_err(st, GERR_NOTFOUND, "%s: no %s %lld", what, noun,
			    (long long)key);
	return sdb_op_end(st, r, what);
}

int sdb_write_one(struct store *st, enum stmt_id id,
		  const struct sdb_arg *args, const struct sdb_col *cols,
		  const char *what)
{
	int r = sdb_op_begin(st, what);

	if (r)
		return r;
	return sdb_op_end(st, sdb_one(st, id, args, cols, what), what);
}

int store_begin(struct store *st)
{
	int r;

	if (!st)
		return GERR_INVAL;
	if (st->in_tx)
		return sdb_err(st, GERR_STATE, "store_begin: a transaction is "
			       "already open (not nestable)");
	if (st->in_batch) {
		/* Inside a batch, a transaction is a savepoint: it commits or
		 * rolls back alone, and becomes durable with the batch. */
		if (tx_lost(st))
			return sdb_err(st, GERR_STATE, "store_begin: the batch was "
				       "rolled back by an earlier error");
		r = sdb_exec(st, S_USER_SAVEPOINT, NULL, "store_begin");
	} else {
		r = sdb_exec(st, S_BEGIN, NULL, "store_begin");
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
	sdb_exec_quiet(st, S_USER_ROLLBACK_TO);
	sdb_exec_quiet(st, S_USER_RELEASE);
}

/* On failure the transaction is rolled back: no transaction is open after
 * store_commit returns, whatever it returns. */
int store_commit(struct store *st)
{
	int r;

	if (!st)
		return GERR_INVAL;
	if (!st->in_tx)
		return sdb_err(st, GERR_STATE, "store_commit: no transaction "
			       "open");
	st->in_tx = 0;
	if (sqlite3_get_autocommit(st->db))
		return sdb_err(st, GERR_DB, "store_commit: the transaction was "
			       "rolled back by an earlier error");
	if (st->in_batch) {
		r = sdb_exec(st, S_USER_RELEASE, NULL, "store_commit");
		if (r)
			user_rollback(st);
		return r;
	}
	return commit(st, "store_commit");
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
	rollback(st);
}

int store_batch_begin(struct store *st)
{
	int r;

	if (!st)
		return GERR_INVAL;
	if (st->in_tx || st->in_batch)
		return sdb_err(st, GERR_STATE, "store_batch_begin: a transaction "
			       "is already open");
	r = sdb_exec(st, S_BEGIN, NULL, "store_batch_begin");
	if (r == 0)
		st->in_batch = 1;
	return r;
}

int store_batch_commit(struct store *st)
{
	if (!st || !st->in_batch)
		return GERR_STATE;
	st->in_batch = 0;
	st->in_tx = 0;
	if (sqlite3_get_autocommit(st->db))
		return sdb_err(st, GERR_DB, "store_batch_commit: the batch was "
			       "rolled back by an earlier error");
	return commit(st, "store_batch_commit");
}

void store_batch_rollback(struct store *st)
{
	if (!st)
		return;
	st->in_batch = 0;
	st->in_tx = 0;
	rollback(st);
}

