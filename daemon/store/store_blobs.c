/* store_blobs.c - which blobs the database names, its own integrity, and
 * the jobs found damaged (schema/005_store.sql).
 *
 * The reference listing is written once, here: the start-up sweep removes
 * every stored blob it does not name, and `gpuctl check` checks every blob
 * it names. S_BLOB_REFS says where gpud keeps blob names, with the job and
 * lease each belongs to; a table that comes to hold blob hashes belongs in
 * it. For the sweep, refs_everywhere adds every 64-hex text in any table,
 * so a name S_BLOB_REFS misses is kept rather than deleted.
 *
 * The digests of migration 015 are checked here too, for every row at
 * once (store_digest_audit): the answers and parts whose values no longer
 * match their digests, for `gpuctl check` and the start-up check.
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
	[S_DIGEST_BAD_JOBS] = "SELECT id, 0, -1 FROM jobs "
			      "WHERE digest IS NOT " JOB_DIGEST " ORDER BY id",
	[S_DIGEST_BAD_PARTS] = "SELECT parts.job_id, parts.lease_id, "
			       "parts.seq FROM parts LEFT JOIN leases AS l "
			       "ON l.id = parts.lease_id WHERE parts.digest "
			       "IS NOT " PART_DIGEST " ORDER BY 1, 3",
};

/* Indexed by the query's last column. */
static const char *const ref_where[] = {
	"result of lease", "checkpoint of lease", "spec of lease",
	"params of job", "answer of job", "note of lease", "a row",
};

struct ref_list {
	struct store_blob_ref *a;
	size_t n, cap;
	const char *what;
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

/* A row (hash, job, lease, where index) into the ref_list ctx. */
static int ref_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	const size_t nwhere = sizeof(ref_where) / sizeof(ref_where[0]);
	struct ref_list *l = ctx;
	int w = sqlite3_column_int(s, 3);

	if (ref_add(l, sqlite3_column_text(s, 0), sqlite3_column_int64(s, 1),
		    sqlite3_column_int64(s, 2),
		    w >= 0 && (size_t)w < nwhere ? ref_where[w] : "row"))
		return sdb_err(st, GERR_NOMEM, "%s: out of memory", l->what);
	return 0;
}

/* A row (table, column): that column's 64-hex texts into the ref_list. */
static int column_refs(struct store *st, sqlite3_stmt *s, void *ctx)
{
	struct ref_list *l = ctx;
	const char *t = (const char *)sqlite3_column_text(s, 0);
	const char *c = (const char *)sqlite3_column_text(s, 1);
	char *sql = sqlite3_mprintf(
		"SELECT \"%w\", 0, 0, 6 FROM \"%w\" WHERE "
		"typeof(\"%w\") = 'text' AND length(\"%w\") = 64 AND "
		"\"%w\" NOT GLOB '*[^0-9a-f]*' UNION ALL "
		"SELECT j.value, 0, 0, 6 FROM \"%w\" AS x, json_tree("
		"CASE WHEN typeof(x.\"%w\") = 'text' AND "
		"json_valid(x.\"%w\") THEN x.\"%w\" ELSE 'null' END) AS j "
		"WHERE " HEX64("j"), c, t, c, c, c, t, c, c, c);
	int r;

	if (!sql)
		return sdb_err(st, GERR_NOMEM, "%s: out of memory", l->what);
	r = sdb_each_sql(st, sql, ref_row, l, l->what);
	sqlite3_free(sql);
	return r;
}

/* Every text column of every table but the event log (a record, not a
 * reference): its whole value, or a string inside its JSON, of 64 hex
 * digits. Reads whatever schema this database has, so a column added for
 * blobs is kept by the sweep even before S_BLOB_REFS names it. */
static int refs_everywhere(struct store *st, struct ref_list *l)
{
	return sdb_each_sql(st,
		"SELECT m.name, c.name FROM sqlite_schema AS m, "
		"pragma_table_info(m.name) AS c WHERE m.type = 'table' AND "
		"m.name NOT LIKE 'sqlite_%' AND m.name <> 'events'",
		column_refs, l, l->what);
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
	struct ref_list l = {.what = what};
	int r;

	if (!ret || !ret_n)
		return sdb_err(st, GERR_INVAL, "%s: missing argument", what);
	r = sdb_each(st, S_BLOB_REFS, NULL, ref_row, &l, what);
	if (!r && everywhere) {
		r = refs_everywhere(st, &l);
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

struct check_lines {
	char **a;
	size_t n, max;
	const char *what;
};

/* A line of the check: kept unless it is "ok" or max are kept already. */
static int check_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	struct check_lines *c = ctx;
	const unsigned char *t = sqlite3_column_text(s, 0);

	/* A sound database answers one row, "ok". */
	if (!t || strcmp((const char *)t, "ok") == 0 || c->n == c->max)
		return 0;
	if (!(c->a[c->n] = strdup((const char *)t)))
		return sdb_err(st, GERR_NOMEM, "%s: out of memory", c->what);
	c->n++;
	return 0;
}

int store_integrity(struct store *st, int quick, size_t max,
		    char ***ret_lines, size_t *ret_n)
{
	const char *what = quick ? "quick_check" : "integrity_check";
	struct check_lines c = {.max = max, .what = what};
	char sql[64];
	sqlite3_stmt *s;
	int rc, r;

	if (!ret_lines || !ret_n || max == 0 || max > 100000)
		return sdb_err(st, GERR_INVAL, "%s: bad argument", what);
	snprintf(sql, sizeof(sql), "PRAGMA %s(%zu)", what, max);
	/* Prepared here: a failure to prepare is an error of the check,
	 * a failure to step is damage (below). */
	if ((rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL)) != SQLITE_OK)
		return sdb_fail(st, rc, what);
	if (!(c.a = calloc(max, sizeof(*c.a)))) {
		sqlite3_finalize(s);
		return sdb_err(st, GERR_NOMEM, "%s: out of memory", what);
	}
	r = sdb_each_stmt(st, s, check_row, &c, what);
	sqlite3_finalize(s);
	/* A page SQLite cannot even walk fails the pragma itself: that is
	 * damage found, not an error of the check. */
	if (r == GERR_CORRUPT && c.n < max && (c.a[c.n] = strdup(st->errmsg))) {
		c.n++;
		r = 0;
	}
	if (r) {
		store_lines_free(c.a, c.n);
		return r;
	}
	*ret_lines = c.a;
	*ret_n = c.n;
	return 0;
}

int store_damage_set(struct store *st, const struct store_damage *a,
		     size_t n, double now)
{
	static const char what[] = "store_damage_set";
	int r;

	if (n && !a)
		return sdb_err(st, GERR_INVAL, "%s: missing argument", what);
	if ((r = sdb_op_begin(st, what)))
		return r;
	r = sdb_exec(st, S_DAMAGE_CLEAR, NULL, what);
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (!a[i].reason || a[i].problems == 0)
			r = sdb_err(st, GERR_INVAL, "%s: job %lld without a "
				    "reason", what, (long long)a[i].job_id);
		else
			r = sdb_exec(st, S_DAMAGE_ADD,
				     SDB_ARGS(sa_int(a[i].job_id),
					      sa_text(a[i].reason),
					      sa_int(a[i].problems),
					      sa_dbl(now)), what);
	}
	return sdb_op_end(st, r, what);
}

int store_damage_get(struct store *st, int64_t job_id, char **ret_reason)
{
	static const char what[] = "store_damage_get";
	char *reason = NULL;
	int r;

	if (!ret_reason)
		return sdb_err(st, GERR_INVAL, "%s: missing argument", what);
	r = sdb_one(st, S_DAMAGE_GET, SDB_ARGS(sa_int(job_id)),
		    SDB_COLS(sc_text(&reason)), what);
	if (r == GERR_NOTFOUND) /* not damaged */
		r = 0;
	if (r == 0)
		*ret_reason = reason;
	return r;
}

struct bad_list {
	struct store_digest_bad *a;
	size_t n, max;
	uint64_t total;
};

/* A row (job, lease, seq) into the bad_list ctx: counted, kept up to max. */
static int bad_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	struct bad_list *l = ctx;

	(void)st;
	l->total++;
	if (l->n == l->max)
		return 0;
	l->a[l->n].job_id = sqlite3_column_int64(s, 0);
	l->a[l->n].lease_id = sqlite3_column_int64(s, 1);
	l->a[l->n].seq = sqlite3_column_int64(s, 2);
	l->n++;
	return 0;
}

int store_digest_audit(struct store *st, size_t max,
		       struct store_digest_bad **ret, size_t *ret_n,
		       uint64_t *ret_total)
{
	static const char what[] = "store_digest_audit";
	struct bad_list l = {.max = max};
	int r;

	if (!ret || !ret_n || max == 0 || max > 1000000)
		return sdb_err(st, GERR_INVAL, "%s: bad argument", what);
	if (!(l.a = calloc(max, sizeof(*l.a))))
		return sdb_err(st, GERR_NOMEM, "%s: out of memory", what);
	r = sdb_each(st, S_DIGEST_BAD_JOBS, NULL, bad_row, &l, what);
	if (r == 0)
		r = sdb_each(st, S_DIGEST_BAD_PARTS, NULL, bad_row, &l, what);
	if (r) {
		free(l.a);
		return r;
	}
	*ret = l.a;
	*ret_n = l.n;
	if (ret_total)
		*ret_total = l.total;
	return 0;
}
