/* store_exec.c - one statement's life for every table file: the values
 * bound, the rows stepped and read, SQLite's codes translated (store_err.c)
 * and the cached statement reset on every path (store_internal.h).
 *
 * Calls only store_err.c; runs on the thread that uses the store.
 */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

/* NULL-safe, as sqlite3_step and sqlite3_reset are. */
static void stmt_done(sqlite3_stmt *s)
{
	if (!s)
		return;
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

static int bind_one(sqlite3_stmt *s, int i, const struct sdb_arg *a)
{
	switch (a->type) {
	case SDB_INT:
		return sqlite3_bind_int64(s, i, a->i);
	case SDB_DBL:
		return sqlite3_bind_double(s, i, a->d);
	case SDB_TEXT:
		return a->p ? sqlite3_bind_text(s, i, a->p, -1, SQLITE_STATIC)
			    : sqlite3_bind_null(s, i);
	case SDB_BLOB:
		return sqlite3_bind_blob(s, i, a->p, a->n, SQLITE_STATIC);
	default:
		return sqlite3_bind_null(s, i);
	}
}

/* Statement id with args bound to ?1, ?2, ...; NULL (the statement reset,
 * *ret_r the error) when it is missing or a value does not bind. */
static sqlite3_stmt *bound(struct store *st, enum stmt_id id,
			   const struct sdb_arg *args, int *ret_r,
			   const char *what)
{
	sqlite3_stmt *s = st->stmt[id];

	if (!s) { /* a table an older schema lacks, as sqlite3_step says */
		*ret_r = sdb_fail(st, SQLITE_MISUSE, what);
		return NULL;
	}
	for (int i = 0; args && args[i].type != SDB_END; i++) {
		int rc = bind_one(s, i + 1, &args[i]);

		if (rc != SQLITE_OK) {
			*ret_r = sdb_fail(st, rc, what);
			stmt_done(s);
			return NULL;
		}
	}
	*ret_r = 0;
	return s;
}

static int col_text(sqlite3_stmt *s, int col, char **ret)
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

int sdb_cols(sqlite3_stmt *s, const struct sdb_col *cols)
{
	for (int i = 0; cols[i].type != SDB_END; i++) {
		void *p = cols[i].p;

		switch (cols[i].type) {
		case SDB_INT:
			*(int64_t *)p = sqlite3_column_int64(s, i);
			break;
		case SDB_I32:
			*(int *)p = sqlite3_column_int(s, i);
			break;
		case SDB_U64:
			*(uint64_t *)p = (uint64_t)sqlite3_column_int64(s, i);
			break;
		case SDB_U32:
			*(uint32_t *)p = (uint32_t)sqlite3_column_int64(s, i);
			break;
		case SDB_DBL:
			*(double *)p = sqlite3_column_double(s, i);
			break;
		case SDB_TEXT:
			if (col_text(s, i, p) == 0)
				break;
			while (i-- > 0) {
				if (cols[i].type == SDB_TEXT) {
					free(*(char **)cols[i].p);
					*(char **)cols[i].p = NULL;
				}
			}
			return GERR_NOMEM;
		default:
			break;
		}
	}
	return 0;
}

void sdb_clear(void *elem, size_t size, const struct sdb_col *cols)
{
	for (int i = 0; cols[i].type != SDB_END; i++) {
		if (cols[i].type == SDB_TEXT) {
			free(*(char **)cols[i].p);
			*(char **)cols[i].p = NULL;
		}
	}
	memset(elem, 0, size);
}

int sdb_exec(struct store *st, enum stmt_id id, const struct sdb_arg *args,
	     const char *what)
{
	int r;
	sqlite3_stmt *s = bound(st, id, args, &r, what);
	int rc;

	if (!s)
		return r;
	rc = sqlite3_step(s);
	r = rc == SQLITE_DONE ? 0 : sdb_fail(st, rc, what);
	stmt_done(s);
	return r;
}

void sdb_exec_quiet(struct store *st, enum stmt_id id)
{
	sqlite3_step(st->stmt[id]);
	stmt_done(st->stmt[id]);
}

static int one_row(struct store *st, sqlite3_stmt *s,
		   const struct sdb_col *cols, const char *what)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_DONE)
		return GERR_NOTFOUND;
	if (rc == SQLITE_ROW) {
		if (sdb_cols(s, cols))
			return sdb_err(st, GERR_NOMEM, "%s: out of memory",
				       what);
		rc = sqlite3_step(s);
	}
	return rc == SQLITE_DONE ? 0 : sdb_fail(st, rc, what);
}

int sdb_one(struct store *st, enum stmt_id id, const struct sdb_arg *args,
	    const struct sdb_col *cols, const char *what)
{
	int r;
	sqlite3_stmt *s = bound(st, id, args, &r, what);

	if (!s)
		return r;
	r = one_row(st, s, cols, what);
	stmt_done(s);
	return r;
}

int sdb_each_stmt(struct store *st, sqlite3_stmt *s, sdb_each_fn fn,
		  void *ctx, const char *what)
{
	int rc, r;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (fn && (r = fn(st, s, ctx)))
			return r;
	}
	return rc == SQLITE_DONE ? 0 : sdb_fail(st, rc, what);
}

int sdb_each(struct store *st, enum stmt_id id, const struct sdb_arg *args,
	     sdb_each_fn fn, void *ctx, const char *what)
{
	int r;
	sqlite3_stmt *s = bound(st, id, args, &r, what);

	if (!s)
		return r;
	r = sdb_each_stmt(st, s, fn, ctx, what);
	stmt_done(s);
	return r;
}

int sdb_one_sql(struct store *st, const char *sql,
		const struct sdb_col *cols, const char *what)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	int r;

	if (rc != SQLITE_OK)
		return sdb_fail(st, rc, what);
	r = one_row(st, s, cols, what);
	sqlite3_finalize(s);
	return r;
}

int sdb_each_sql(struct store *st, const char *sql, sdb_each_fn fn,
		 void *ctx, const char *what)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	int r;

	if (rc != SQLITE_OK)
		return sdb_fail(st, rc, what);
	r = sdb_each_stmt(st, s, fn, ctx, what);
	sqlite3_finalize(s);
	return r;
}

int sdb_get_one(struct store *st, enum stmt_id id, const struct sdb_arg *args,
		size_t size, sdb_row_fn fn, sdb_clear_fn clr, void *elem,
		const char *what)
{
	union {
		struct store_job j;
		struct store_lease l;
		struct store_worker w;
		struct store_part p;
	} u;
	void *tmp = &u;
	int rc, r;
	sqlite3_stmt *s = bound(st, id, args, &r, what);

	if (size > sizeof(u))
		abort(); /* a row type missing from the union: a bug */
	if (!s)
		return r;
	memset(tmp, 0, size);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		r = sdb_err(st, GERR_NOTFOUND, "%s: not found", what);
	} else if (rc != SQLITE_ROW) {
		r = sdb_fail(st, rc, what);
	} else if ((r = fn(s, tmp))) {
		clr(tmp);
		r = sdb_err(st, r, "%s: out of memory", what);
	} else if ((rc = sqlite3_step(s)) != SQLITE_DONE) {
		r = sdb_fail(st, rc, what);
		clr(tmp);
	}
	stmt_done(s);
	if (r == 0)
		memcpy(elem, tmp, size);
	return r;
}

struct row_array {
	size_t size;
	sdb_row_fn fn;
	sdb_clear_fn clr;
	unsigned char *a;
	size_t n, cap;
	int nomem; /* a row did not fit: the message is sdb_get_all's */
};

static int array_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	struct row_array *ra = ctx;
	void *e;
	int r;

	if (ra->n == ra->cap) {
		size_t ncap = ra->cap ? 2 * ra->cap : 16;
		void *na = realloc(ra->a, ncap * ra->size);

		if (!na) {
			ra->nomem = 1;
			return GERR_NOMEM;
		}
		ra->a = na;
		ra->cap = ncap;
	}
	e = ra->a + ra->n * ra->size;
	memset(e, 0, ra->size);
	if ((r = ra->fn(s, e))) {
		ra->clr(e);
		ra->nomem = 1;
		return r;
	}
	ra->n++;
	(void)st;
	return 0;
}

int sdb_get_all(struct store *st, enum stmt_id id, const struct sdb_arg *args,
		size_t size, sdb_row_fn fn, sdb_clear_fn clr, void *ret,
		size_t *ret_n, const char *what)
{
	struct row_array ra = {.size = size, .fn = fn, .clr = clr};
	int r;

	if (!ret || !ret_n)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	r = sdb_each(st, id, args, array_row, &ra, what);
	if (r) {
		if (ra.nomem)
			sdb_err(st, r, "%s: out of memory", what);
		sdb_free_array(ra.a, ra.n, size, clr);
		return r;
	}
	memcpy(ret, &ra.a, sizeof(ra.a));
	*ret_n = ra.n;
	return 0;
}

void sdb_free_array(void *a, size_t n, size_t size, sdb_clear_fn clr)
{
	if (!a)
		return;
	for (size_t i = 0; i < n; i++)
		clr((unsigned char *)a + i * size);
	free(a);
}

int sdb_count(struct store *st, enum stmt_id id, const struct sdb_arg *args,
	      uint64_t *ret_n, const char *what)
{
	int64_t n = 0;
	int r;

	if (!ret_n)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	r = sdb_one(st, id, args, SDB_COLS(sc_i64(&n)), what);
	if (r == 0)
		*ret_n = n > 0 ? (uint64_t)n : 0;
	return r;
}

static int state_count_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	uint64_t *c = ctx;
	int state = sqlite3_column_int(s, 0);

	(void)st;
	if (state >= 0 && state < LEASE_NSTATES)
		c[state] = (uint64_t)sqlite3_column_int64(s, 1);
	return 0;
}

int sdb_state_counts(struct store *st, enum stmt_id id, int64_t key,
		     uint64_t counts[LEASE_NSTATES], const char *what)
{
	uint64_t c[LEASE_NSTATES] = {0};
	int r;

	if (!counts)
		return sdb_err(st, GERR_INVAL, "%s: no counts", what);
	r = sdb_each(st, id, SDB_ARGS(sa_int(key)), state_count_row, c, what);
	if (r == 0)
		memcpy(counts, c, sizeof(c));
	return r;
}
