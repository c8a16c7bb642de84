/* store_open.c - gpud's durable state in SQLite: open, pragmas,
 * migrations, the statement cache, close. See store.h for the invariants
 * and store_internal.h for how the store files share the work.
 *
 * The top of the store's files: it alone sees every table file's SQL
 * (sdb_*_sql[]), prepared once here and finalized by store_close; each use
 * binds and resets them through store_exec.c. Called on the thread that
 * owns the store (store_open from any thread, before it is shared).
 */
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "auth.h"
#include "le.h"
#include "schema.h"
#include "store_test.h"

#define STORE_APPLICATION_ID 0x67707564 /* 'gpud', set by 001_init.sql */
#define STORE_BUSY_MS 5000

/* ---- the statement cache ---- */

static const char *const *const sql_tables[] = {
	sdb_tx_sql, sdb_job_sql, sdb_lease_row_sql, sdb_lease_sql,
	sdb_part_sql, sdb_worker_sql, sdb_token_sql, sdb_blob_sql,
	sdb_replica_sql, sdb_queue_sql, sdb_rate_sql, sdb_pagekey_sql,
	sdb_event_read_sql, sdb_life_sql,
};

/* The SQL of statement id: exactly one table file owns it (NULL if none
 * or two do, a bug that store_open reports). */
static const char *stmt_sql(int id)
{
	const char *sql = NULL;

	for (size_t t = 0; t < sizeof(sql_tables) / sizeof(sql_tables[0]);
	     t++) {
		if (!sql_tables[t][id])
			continue;
		if (sql)
			return NULL;
		sql = sql_tables[t][id];
	}
	return sql;
}

/* ---- open, migrate, close ---- */

static int exec_sql(struct store *st, const char *sql, const char *what)
{
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : sdb_fail(st, rc, what);
}

static int pragma_int(struct store *st, const char *sql, int64_t *ret)
{
	int r = sdb_one_sql(st, sql, SDB_COLS(sc_i64(ret)), sql);

	if (r == GERR_NOTFOUND)
		r = sdb_err(st, GERR_DB, "%s: no value", sql);
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
		return sdb_err(st, errno == EACCES ? GERR_PERM : GERR_IO,
			       "cannot open database %s: directory %s: %s",
			       path, dir, strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return sdb_err(st, GERR_IO, "cannot open database %s: %s is "
			       "not a directory", path, dir);
	if (r == GERR_PERM || r == GERR_IO) {
		if (access(dir, W_OK | X_OK) != 0)
			return sdb_err(st, GERR_PERM, "cannot open database "
				       "%s: directory %s is not writable (%s); "
				       "gpud needs it for the database and "
				       "its -wal/-shm files", path, dir,
				       strerror(errno));
		if (access(path, F_OK) == 0) {
			if (access(path, R_OK | W_OK) != 0)
				return sdb_err(st, GERR_PERM, "cannot open "
					       "database %s: the file is not "
					       "writable (%s)", path,
					       strerror(errno));
		} else if (errno == ENOENT) {
			/* SQLite retries a failed create read-only and
			 * reports that errno; ask the directory directly. */
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL |
				      O_CLOEXEC, 0600);

			if (fd < 0)
				return sdb_err(st, errno == EACCES ||
					       errno == EPERM ||
					       errno == EROFS ? GERR_PERM :
					       GERR_IO, "cannot create "
					       "database %s: %s", path,
					       strerror(errno));
			close(fd);
			unlink(path);
		}
	}
	sdb_err(st, r, "cannot open database %s: %s", path, sqlmsg);
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
	return sdb_err(st, GERR_CORRUPT, "not a gpud database (application_id "
		       "%lld, user_version %lld)", (long long)app,
		       (long long)ver);
}

/* A damaged page is refused before gpud acts on what it holds (a lease
 * table read as empty, an answer read as none); before the migrations too,
 * which would write over it. */
static int quick_check(struct store *st)
{
	char **lines = NULL;
	size_t n = 0;
	int r = store_integrity(st, 1, 8, &lines, &n);

	if (r == 0 && n > 0)
		r = sdb_err(st, GERR_CORRUPT, "the database is damaged "
			    "(quick_check: %s%s)", lines[0],
			    n > 1 ? "; and more" : "");
	store_lines_free(lines, n);
	return r;
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

/* gpud_digest(tag, v1, v2, ...): BLAKE2b-256 of its arguments, each as
 * its type, its length and its bytes (an integer as 8 bytes little-endian,
 * text and blobs as they are, a real as its 8 bytes, NULL as nothing), so
 * that no two lists of values share an encoding. The digests of migration
 * 015 (JOB_DIGEST, PART_DIGEST in store_internal.h); computed in the
 * statement that writes them, from the values stored. */
static void sql_digest(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	crypto_generichash_state hs;
	uint8_t out[32];

	crypto_generichash_init(&hs, (const uint8_t *)"gpud-digest-1", 13,
				sizeof(out));
	for (int i = 0; i < argc; i++) {
		uint8_t head[9], num[8];
		const void *p = NULL;
		uint64_t n = 0;
		int t = sqlite3_value_type(argv[i]);

		if (t == SQLITE_INTEGER) {
			le_put64(num, (uint64_t)sqlite3_value_int64(argv[i]));
			p = num;
			n = 8;
		} else if (t == SQLITE_FLOAT) {
			double d = sqlite3_value_double(argv[i]);
			uint64_t u;

			memcpy(&u, &d, sizeof(u));
			le_put64(num, u);
			p = num;
			n = 8;
		} else if (t == SQLITE_TEXT) {
			p = sqlite3_value_text(argv[i]);
			n = (uint64_t)sqlite3_value_bytes(argv[i]);
		} else if (t == SQLITE_BLOB) {
			p = sqlite3_value_blob(argv[i]);
			n = (uint64_t)sqlite3_value_bytes(argv[i]);
		}
		if (n && !p) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
		head[0] = (uint8_t)t;
		le_put64(head + 1, n);
		crypto_generichash_update(&hs, head, sizeof(head));
		if (n)
			crypto_generichash_update(&hs, p, n);
	}
	crypto_generichash_final(&hs, out, sizeof(out));
	sqlite3_result_blob(ctx, out, sizeof(out), SQLITE_TRANSIENT);
}

/* Apply the migrations this database lacks up to number target (all of
 * them but in tests), each in its own IMMEDIATE transaction together with
 * its user_version, so a crash leaves either the old or the new version,
 * never half of one. */
static int migrate(struct store *st, int target)
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
		if (ver > target) {
			r = sdb_err(st, GERR_UNSUPPORTED, "database schema "
				    "version %lld is newer than this gpud "
				    "knows (%d); run a newer gpud",
				    (long long)ver, target);
			goto fail;
		}
		if (ver == target)
			return exec_sql(st, "COMMIT", "migrate: commit");
		if (ver < 0) {
			r = sdb_err(st, GERR_CORRUPT, "database schema version "
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
			sdb_err(st, r, "migration %lld failed: %s",
				(long long)ver + 1, msg);
		}
fail:
		if (!sqlite3_get_autocommit(st->db))
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return r;
	}
}

static int setup(struct store *st, int target)
{
	char *mode = NULL;
	int rc, r, wal;

	sqlite3_extended_result_codes(st->db, 1);
	/* SQLite quietly opens a file it may not write read-only; gpud
	 * would then fail on its first write instead of at start. */
	if (sqlite3_db_readonly(st->db, "main") == 1)
		return sdb_err(st, GERR_PERM, "the database file is read-only "
			       "for this user");
	if ((rc = sqlite3_busy_timeout(st->db, STORE_BUSY_MS)) != SQLITE_OK)
		return sdb_fail(st, rc, "busy_timeout");
	if ((r = exec_sql(st, "PRAGMA foreign_keys = ON", "foreign_keys")))
		return r;
	/* journal_mode answers with the mode in effect: a filesystem without
	 * shared memory can refuse WAL, and invariant 1 depends on it. */
	r = sdb_one_sql(st, "PRAGMA journal_mode = WAL",
			SDB_COLS(sc_text(&mode)), "journal_mode");
	if (r == GERR_NOTFOUND)
		r = sdb_err(st, GERR_DB, "journal_mode: no value");
	if (r)
		return r;
	wal = mode && strcmp(mode, "wal") == 0;
	free(mode);
	if (!wal)
		return sdb_err(st, GERR_IO, "journal_mode: this filesystem "
			       "does not support WAL mode");
	if ((r = exec_sql(st, "PRAGMA synchronous = FULL", "synchronous")))
		return r;
	rc = sqlite3_create_function_v2(st->db, "token_stored_key", 1,
					SQLITE_UTF8 | SQLITE_DETERMINISTIC |
					SQLITE_DIRECTONLY, NULL,
					sql_token_stored_key, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(st->db, "gpud_digest", -1,
						SQLITE_UTF8 |
						SQLITE_DETERMINISTIC |
						SQLITE_DIRECTONLY, NULL,
						sql_digest, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return sdb_fail(st, rc, "create function");
	if ((r = check_identity(st)) || (r = quick_check(st)) ||
	    (r = migrate(st, target)))
		return r;
	for (int i = 0; i < S_COUNT; i++) {
		const char *sql = stmt_sql(i);

		if (!sql)
			return sdb_err(st, GERR_DB, "prepare: statement %d "
				       "has no SQL or two", i);
		rc = sqlite3_prepare_v3(st->db, sql, -1,
					SQLITE_PREPARE_PERSISTENT,
					&st->stmt[i], NULL);
		/* An older schema (store_open_version) lacks some tables:
		 * their statements stay NULL and fail when used. */
		if (rc != SQLITE_OK && target < schema_migration_count)
			continue;
		if (rc != SQLITE_OK) {
			r = sdb_fail(st, rc, "prepare");
			return sdb_err(st, r, "prepare %s: %s", sql,
				       sqlite3_errmsg(st->db));
		}
	}
	return 0;
}

static int open_at(const char *path, int target, struct store **ret,
		   char *err, size_t errlen)
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
		sdb_err(st, r, "store_open: out of memory");
	} else if (rc != SQLITE_OK) {
		r = sdb_fail(st, rc, "open");
	} else {
		r = setup(st, target);
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

int store_open(const char *path, struct store **ret, char *err,
	       size_t errlen)
{
	return open_at(path, schema_migration_count, ret, err, errlen);
}

int store_open_version(const char *path, int version, struct store **ret,
		       char *err, size_t errlen)
{
	if (version < 1 || version > schema_migration_count) {
		if (err && errlen)
			snprintf(err, errlen, "store_open_version: no "
				 "migration %d", version);
		return GERR_INVAL;
	}
	return open_at(path, version, ret, err, errlen);
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

