/* store_exec.c - running statements and reading their rows into the
 * store.h structs, for every table file (declared in store_internal.h).
 */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

/* Run a statement that returns no rows. */
int sdb_run(struct store *st, enum stmt_id id, const char *what)
{
	sqlite3_stmt *s = sdb_stmt(st, id);
	int rc = sqlite3_step(s);
	int r = rc == SQLITE_DONE ? 0 : sdb_fail(st, rc, what);

	sdb_stmt_done(s);
	return r;
}

/* Step a statement expected to give at most one row with one integer.
 * GERR_NOTFOUND (no message) when there is no row. */
int sdb_step_int(struct store *st, sqlite3_stmt *s, int64_t *ret,
		 const char *what)
{
	int rc = sqlite3_step(s);
	int r;

	if (rc == SQLITE_ROW) {
		*ret = sqlite3_column_int64(s, 0);
		rc = sqlite3_step(s);
	} else if (rc == SQLITE_DONE) {
		sdb_stmt_done(s);
		return GERR_NOTFOUND;
	}
	r = rc == SQLITE_DONE ? 0 : sdb_fail(st, rc, what);
	sdb_stmt_done(s);
	return r;
}

int sdb_dup_col(sqlite3_stmt *s, int col, char **ret)
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

/* Read one row of a bound statement into *elem (written only on success).
 * GERR_NOTFOUND with message "what: not found" when there is none. */
int sdb_get_one(struct store *st, sqlite3_stmt *s, size_t size,
		sdb_row_fn fn, sdb_clear_fn clr, void *elem, const char *what)
{
	union {
		struct store_job j;
		struct store_lease l;
		struct store_worker w;
		struct store_part p;
	} u;
	void *tmp = &u;
	int rc = sqlite3_step(s);
	int r;

	if (size > sizeof(u))
		abort(); /* a row type missing from the union: a bug */
	if (rc == SQLITE_DONE) {
		sdb_stmt_done(s);
		return sdb_err(st, GERR_NOTFOUND, "%s: not found", what);
	}
	if (rc != SQLITE_ROW) {
		r = sdb_fail(st, rc, what);
		sdb_stmt_done(s);
		return r;
	}
	r = fn(s, tmp);
	if (r) {
		sdb_stmt_done(s);
		return sdb_err(st, r, "%s: out of memory", what);
	}
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE) {
		r = sdb_fail(st, rc, what);
		clr(tmp);
		sdb_stmt_done(s);
		return r;
	}
	sdb_stmt_done(s);
	memcpy(elem, tmp, size);
	return 0;
}

/* Read all rows of a bound statement into a malloc'ed array. */
int sdb_get_all(struct store *st, sqlite3_stmt *s, size_t size,
		sdb_row_fn fn, sdb_clear_fn clr, void **ret, size_t *ret_n,
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
				r = sdb_err(st, GERR_NOMEM, "%s: out of memory",
					    what);
				goto out;
			}
			a = na;
			cap = ncap;
		}
		if ((r = fn(s, a + n * size))) {
			r = sdb_err(st, r, "%s: out of memory", what);
			goto out;
		}
		n++;
	}
	if (rc != SQLITE_DONE)
		r = sdb_fail(st, rc, what);
out:
	sdb_stmt_done(s);
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

int sdb_check_u63(struct store *st, uint64_t v, const char *what)
{
	if (v > INT64_MAX)
		return sdb_err(st, GERR_TOOBIG, "%s: %llu is over 2^63", what,
			       (unsigned long long)v);
	return 0;
}


int sdb_count(struct store *st, enum stmt_id id, int64_t key, int state,
	      uint64_t *ret_n, const char *what)
{
	sqlite3_stmt *s = sdb_stmt(st, id);
	int64_t n = 0;
	int r;

	if (!ret_n)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	BIND(sqlite3_bind_int64(s, 1, key));
	BIND(sqlite3_bind_int(s, 2, state));
	r = sdb_step_int(st, s, &n, what);
	s = NULL;
	if (r == 0)
		*ret_n = n > 0 ? (uint64_t)n : 0;
out:
	if (s)
		sdb_stmt_done(s);
	return r;
}

int sdb_state_counts(struct store *st, enum stmt_id id, int64_t key,
		     uint64_t counts[LEASE_NSTATES], const char *what)
{
	sqlite3_stmt *s = sdb_stmt(st, id);
	uint64_t c[LEASE_NSTATES] = {0};
	int rc, r = 0;

	if (!counts)
		return sdb_err(st, GERR_INVAL, "%s: no counts", what);
	BIND(sqlite3_bind_int64(s, 1, key));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int state = sqlite3_column_int(s, 0);

		if (state >= 0 && state < LEASE_NSTATES)
			c[state] = (uint64_t)sqlite3_column_int64(s, 1);
	}
	if (rc != SQLITE_DONE)
		r = sdb_fail(st, rc, what);
out:
	sdb_stmt_done(s);
	if (r == 0)
		memcpy(counts, c, sizeof(c));
	return r;
}
