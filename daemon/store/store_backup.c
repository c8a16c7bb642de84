/* store_backup.c - a consistent copy of a live database (store_snapshot,
 * store.h): SQLite's online backup API read from a connection of its own.
 *
 * Why a connection of its own: in WAL mode a reader never blocks the
 * writer, so gpud's database thread goes on granting and storing while the
 * copy is made on another thread; and the read transaction opened before
 * the first page is copied pins one snapshot, so the copy is the database
 * as one commit left it however long the copy takes (a backup whose source
 * changes under it would otherwise start over).
 */
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Pages per backup step: each step is one read of the snapshot and one
 * write to the copy, a few MiB, so an error surfaces without a long wait. */
#define SNAP_STEP_PAGES 1024

/* A bare connection in a struct store, so sdb_fail() words its errors as
 * everywhere else in the store; no statements are prepared. */
static int conn_open(struct store *c, const char *path, int flags,
		     const char *what)
{
	int rc = sqlite3_open_v2(path, &c->db, flags | SQLITE_OPEN_NOMUTEX,
				 NULL);

	if (!c->db)
		return sdb_err(c, GERR_NOMEM, "%s: out of memory", what);
	if (rc != SQLITE_OK)
		return sdb_fail(c, rc, what);
	sqlite3_extended_result_codes(c->db, 1);
	rc = sqlite3_busy_timeout(c->db, 5000);
	return rc == SQLITE_OK ? 0 : sdb_fail(c, rc, what);
}

static int conn_exec(struct store *c, const char *sql, const char *what)
{
	int rc = sqlite3_exec(c->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : sdb_fail(c, rc, what);
}

/* The copy's file, created private: it holds the token keys. */
static int create_private(struct store *dst, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
		      O_NOFOLLOW, 0600);

	if (fd < 0)
		return sdb_err(dst, gerr_from_errno(errno), "cannot create "
			       "%s: %s", path, strerror(errno));
	close(fd);
	return 0;
}

static int copy_pages(struct store *src, struct store *dst)
{
	sqlite3_backup *b = sqlite3_backup_init(dst->db, "main", src->db,
						"main");
	int rc, r;

	if (!b)
		return sdb_fail(dst, sqlite3_extended_errcode(dst->db),
				"backup_init");
	do
		rc = sqlite3_backup_step(b, SNAP_STEP_PAGES);
	while (rc == SQLITE_OK);
	/* backup_finish returns a step's error and leaves its message on
	 * the destination connection. */
	r = sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE)
		return sdb_fail(dst, r != SQLITE_OK ? r : rc, "backup");
	return r == SQLITE_OK ? 0 : sdb_fail(dst, r, "backup");
}

int store_snapshot(const char *src_path, const char *dst_path, char *err,
		   size_t errlen)
{
	struct store src = {0}, dst = {0};
	struct store *bad = &src;
	int r;

	if (!src_path || !dst_path)
		return gerr_fail(GERR_INVAL, err, errlen,
				 "store_snapshot: no path");
	/* Read-write without create: a WAL reader takes its locks in the
	 * -shm file; query_only keeps it from ever writing. */
	if ((r = conn_open(&src, src_path, SQLITE_OPEN_READWRITE,
			   "open the database")) ||
	    (r = conn_exec(&src, "PRAGMA query_only = 1", "query_only")) ||
	    (r = conn_exec(&src, "BEGIN", "begin")) ||
	    (r = conn_exec(&src, "SELECT count(*) FROM sqlite_schema",
			   "read the snapshot")))
		goto out;
	bad = &dst;
	if ((r = create_private(&dst, dst_path)) ||
	    (r = conn_open(&dst, dst_path, SQLITE_OPEN_READWRITE,
			   "open the copy")) ||
	    (r = conn_exec(&dst, "PRAGMA synchronous = FULL", "synchronous")))
		goto out;
	r = copy_pages(&src, &dst);
out:
	if (r)
		gerr_printf(err, errlen, "%s", bad->errmsg);
	if (src.db) {
		sqlite3_exec(src.db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(src.db);
	}
	if (dst.db && sqlite3_close(dst.db) != SQLITE_OK && !r)
		r = gerr_fail(GERR_IO, err, errlen, "cannot close the copy");
	return r;
}
