/* store_err.c - SQLite result codes translated to GERR_* codes, and the
 * store's last error message (store_errmsg).
 *
 * Only the store files (in daemon/store/) include sqlite3.h. Every SQLite
 * result code is translated to a GERR_* code by sdb_fail() before it
 * leaves them, and the text goes to st->errmsg; sdb_check_u63 refuses a
 * counter SQLite cannot hold. The store's lowest layer: it calls no other
 * store file.
 */
#include "store_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int sdb_err(struct store *st, int code, const char *fmt, ...)
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

/* Translate a failed SQLite call (store_internal.h). */
int sdb_fail(struct store *st, int rc, const char *what)
{
	int sys = sqlite3_system_errno(st->db);
	int code = map_rc(rc, sys);

	if (code == 0)
		code = GERR_DB; /* a row where none was expected: a bug */
	if (sys && (code == GERR_IO || code == GERR_PERM ||
		    code == GERR_NOSPACE))
		return sdb_err(st, code, "%s: %s (sqlite %d, %s)", what,
			       sqlite3_errmsg(st->db), rc, strerror(sys));
	return sdb_err(st, code, "%s: %s (sqlite %d)", what,
		       sqlite3_errmsg(st->db), rc);
}

const char *store_errmsg(struct store *st)
{
	return st ? st->errmsg : "no store";
}


int sdb_check_u63(struct store *st, uint64_t v, const char *what)
{
	if (v > INT64_MAX)
		return sdb_err(st, GERR_TOOBIG, "%s: %llu is over 2^63", what,
			       (unsigned long long)v);
	return 0;
}
