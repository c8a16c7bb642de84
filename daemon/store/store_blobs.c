/* store_blobs.c - which blobs the database names, its own integrity, and
 * the jobs found damaged (schema/005_store.sql).
 *
 * The reference listing is written once, here: the start-up sweep removes
 * every stored blob it does not name, and `gpuctl check` checks every blob
 * it names. S_BLOB_REFS says where gpud keeps blob names, with the job and
 * lease each belongs to; a table that comes to hold blob hashes belongs in
 * it. For the sweep, refs_everywhere adds every 64-hex text in any table,
 * so a name S_BLOB_REFS misses is kept rather than deleted.
 */
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A JSON string value that can name a blob: 64 lowercase hex digits.
 * Othello's params carry "digests", 16 hex digits per block, which four
 * blocks make 64 long: digests never name blobs. */
#define HEX64(t)                                                             \
	"(" t ".type = 'text' AND length(" t ".value) = 64 AND " t ".value " \
	"NOT GLOB '*[^0-9a-f]*' AND coalesce(" t ".key, '') NOT IN "         \
	"('digest', 'digests'))"

const char *const sdb_blob_sql[S_COUNT] = {
	[S_BLOB_REFS] =
		"SELECT result, job_id, id, 0 FROM leases "
		"WHERE result IS NOT NULL "
		"UNION ALL SELECT checkpoint, job_id, id, 1 FROM leases "
		"WHERE checkpoint IS NOT NULL "
		"UNION ALL SELECT t.value, l.job_id, l.id, 2 "
		"FROM leases AS l, json_tree(l.spec) AS t WHERE " HEX64("t") " "
		"UNION ALL SELECT t.value, j.id, 0, 3 "
		"FROM jobs AS j, json_tree(j.params) AS t WHERE " HEX64("t") " "
		"UNION ALL SELECT t.value, j.id, 0, 4 "
		"FROM jobs AS j, json_tree(j.answer) AS t "
		"WHERE j.answer IS NOT NULL AND " HEX64("t") " "
		"UNION ALL SELECT t.value, p.job_id, p.lease_id, 5 "
		"FROM parts AS p, json_tree(p.note) AS t "
		"WHERE p.note IS NOT NULL AND " HEX64("t") " "
		"ORDER BY 1, 2, 3",
	[S_DAMAGE_CLEAR] = "DELETE FROM damage",
	[S_DAMAGE_ADD] = "INSERT INTO damage (job_id, reason, problems, "
			 "found_at) VALUES (?1, ?2, ?3, ?4)",
	[S_DAMAGE_GET] = "SELECT reason FROM damage WHERE job_id = ?1",
};

/* Indexed by the query's last column. */
static const char *const ref_where[] = {
	"result of lease", "checkpoint of lease", "spec of lease",
	"params of job", "answer of job", "note of lease", "a row",
};

struct ref_list {
	struct store_blob_ref *a;
	size_t n, cap;
};

static int ref_add(struct ref_list *l, const unsigned char *h, int64_t job,
		   int64_t lease, const char *where)
{
	struct store_blob_ref *f;

	if (l->n == l->cap) {
		size_t ncap = l->cap ? 2 * l->cap : 64;
		void *na = realloc(l->a, ncap * sizeof(*l->a));

		if (!na)
			return GERR_NOMEM;
		l->a = na;
		l->cap = ncap;
	}
	f = &l->a[l->n++];
	memset(f, 0, sizeof(*f));
	/* A column holding more than a hash keeps a shortened copy that is no
	 * blob name (check reports it), never a prefix that could be one. */
	if (h && strlen((const char *)h) > sizeof(f->hash) - 1)
		snprintf(f->hash, sizeof(f->hash), "%.60s...", (const char *)h);
	else
		snprintf(f->hash, sizeof(f->hash), "%s", h ? (const char *)h : "");
	f->job_id = job;
	f->lease_id = lease;
	f->where = where;
	return 0;
}

/* Read a statement's rows (hash, job, lease, where index) into l. */
static int refs_read(struct store *st, sqlite3_stmt *s, struct ref_list *l,
		     const char *what)
{
	int rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int w = sqlite3_column_int(s, 3);

		if (ref_add(l, sqlite3_column_text(s, 0),
			    sqlite3_column_int64(s, 1),
			    sqlite3_column_int64(s, 2),
			    w >= 0 && w < (int)(sizeof(ref_where) /
						sizeof(ref_where[0]))
			    ? ref_where[w] : "row"))
			return sdb_err(st, GERR_NOMEM, "%s: out of memory", what);
	}
	return rc == SQLITE_DONE ? 0 : sdb_fail(st, rc, what);
}

/* Every text column of every table but the event log (a record, not a
 * reference): its whole value, or a string inside its JSON, of 64 hex
 * digits. Reads whatever schema this database has, so a column added for
 * blobs is kept by the sweep even before S_BLOB_REFS names it. */
static int refs_everywhere(struct store *st, struct ref_list *l,
			   const char *what)
{
	sqlite3_stmt *cols = NULL, *s = NULL;
	int rc, r = 0;

	rc = sqlite3_prepare_v2(st->db,
		"SELECT m.name, c.name FROM sqlite_schema AS m, "
		"pragma_table_info(m.name) AS c WHERE m.type = 'table' AND "
		"m.name NOT LIKE 'sqlite_%' AND m.name <> 'events'", -1, &cols,
		NULL);
	if (rc != SQLITE_OK)
		return sdb_fail(st, rc, what);
	while (!r && (rc = sqlite3_step(cols)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(cols, 0);
		const char *c = (const char *)sqlite3_column_text(cols, 1);
		char *sql = sqlite3_mprintf(
			"SELECT \"%w\", 0, 0, 6 FROM \"%w\" WHERE "
			"typeof(\"%w\") = 'text' AND length(\"%w\") = 64 AND "
			"\"%w\" NOT GLOB '*[^0-9a-f]*' UNION ALL "
			"SELECT j.value, 0, 0, 6 FROM \"%w\" AS x, json_tree("
			"CASE WHEN typeof(x.\"%w\") = 'text' AND "
			"json_valid(x.\"%w\") THEN x.\"%w\" ELSE 'null' END) AS j "
			"WHERE " HEX64("j"), c, t, c, c, c, t, c, c, c);

		if (!sql) {
			r = sdb_err(st, GERR_NOMEM, "%s: out of memory", what);
			break;
		}
		rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
		sqlite3_free(sql);
		if (rc != SQLITE_OK) {
			r = sdb_fail(st, rc, what);
			break;
		}
		r = refs_read(st, s, l, what);
		sqlite3_finalize(s);
	}
	if (!r && rc != SQLITE_ROW && rc != SQLITE_DONE)
		r = sdb_fail(st, rc, what);
	sqlite3_finalize(cols);
	return r;
}

static int ref_order(const void *a, const void *b)
{
	return strcmp(((const struct store_blob_ref *)a)->hash,
		      ((const struct store_blob_ref *)b)->hash);
}

int store_blob_refs(struct store *st, int everywhere,
		    struct store_blob_ref **ret, size_t *ret_n)
{
	static const char what[] = "store_blob_refs";
	sqlite3_stmt *s = sdb_stmt(st, S_BLOB_REFS);
	struct ref_list l = {0};
	int r;

	if (!ret || !ret_n)
		return sdb_err(st, GERR_INVAL, "%s: missing argument", what);
	r = refs_read(st, s, &l, what);
	sdb_stmt_done(s);
	if (!r && everywhere) {
		r = refs_everywhere(st, &l, what);
		if (!r && l.n > 1)
			qsort(l.a, l.n, sizeof(*l.a), ref_order);
	}
	if (r) {
		free(l.a);
		return r;
	}
	*ret = l.a;
	*ret_n = l.n;
	return 0;
}

void store_lines_free(char **lines, size_t n)
{
	if (!lines)
		return;
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

int store_integrity(struct store *st, int quick, size_t max,
		    char ***ret_lines, size_t *ret_n)
{
	const char *what = quick ? "quick_check" : "integrity_check";
	char sql[64];
	char **lines = NULL;
	size_t n = 0;
	sqlite3_stmt *s = NULL;
	int rc, r = 0;

	if (!ret_lines || !ret_n || max == 0 || max > 100000)
		return sdb_err(st, GERR_INVAL, "%s: bad argument", what);
	snprintf(sql, sizeof(sql), "PRAGMA %s(%zu)", what, max);
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sdb_fail(st, rc, what);
	lines = calloc(max, sizeof(*lines));
	if (!lines) {
		sqlite3_finalize(s);
		return sdb_err(st, GERR_NOMEM, "%s: out of memory", what);
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(s, 0);

		/* A sound database answers one row, "ok". */
		if (!t || strcmp((const char *)t, "ok") == 0 || n == max)
			continue;
		if (!(lines[n] = strdup((const char *)t))) {
			r = sdb_err(st, GERR_NOMEM, "%s: out of memory", what);
			break;
		}
		n++;
	}
	/* A page SQLite cannot even walk fails the pragma itself: that is
	 * damage found, not an error of the check. */
	if (!r && rc != SQLITE_DONE) {
		int code = sdb_fail(st, rc, what);

		if (code != GERR_CORRUPT || n == max ||
		    !(lines[n] = strdup(st->errmsg)))
			r = code;
		else
			n++;
	}
	sqlite3_finalize(s);
	if (r) {
		store_lines_free(lines, n);
		return r;
	}
	*ret_lines = lines;
	*ret_n = n;
	return 0;
}

int store_damage_set(struct store *st, const struct store_damage *a,
		     size_t n, double now)
{
	static const char what[] = "store_damage_set";
	sqlite3_stmt *s = sdb_stmt(st, S_DAMAGE_ADD);
	int r;

	if (n && !a)
		return sdb_err(st, GERR_INVAL, "%s: missing argument", what);
	if ((r = sdb_op_begin(st, what)))
		return r;
	if ((r = sdb_run(st, S_DAMAGE_CLEAR, what)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		int rc;

		if (!a[i].reason || a[i].problems == 0) {
			r = sdb_err(st, GERR_INVAL, "%s: job %lld without a "
				    "reason", what, (long long)a[i].job_id);
			goto out;
		}
		BIND(sqlite3_bind_int64(s, 1, a[i].job_id));
		BIND(sdb_bind_text(s, 2, a[i].reason));
		BIND(sqlite3_bind_int64(s, 3, a[i].problems));
		BIND(sqlite3_bind_double(s, 4, now));
		rc = sqlite3_step(s);
		if (rc != SQLITE_DONE) {
			r = sdb_fail(st, rc, what);
			goto out;
		}
		sdb_stmt_done(s);
	}
out:
	sdb_stmt_done(s);
	return sdb_op_end(st, r, what);
}

int store_damage_get(struct store *st, int64_t job_id, char **ret_reason)
{
	static const char what[] = "store_damage_get";
	sqlite3_stmt *s = sdb_stmt(st, S_DAMAGE_GET);
	char *reason = NULL;
	int rc, r = 0;

	if (!ret_reason)
		return sdb_err(st, GERR_INVAL, "%s: missing argument", what);
	BIND(sqlite3_bind_int64(s, 1, job_id));
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		if (sdb_dup_col(s, 0, &reason))
			r = sdb_err(st, GERR_NOMEM, "%s: out of memory", what);
	} else if (rc != SQLITE_DONE) {
		r = sdb_fail(st, rc, what);
	}
out:
	sdb_stmt_done(s);
	if (!r)
		*ret_reason = reason;
	return r;
}
