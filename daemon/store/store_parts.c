/* store_parts.c - the parts table (schema/003_parts.sql): each verified
 * lease's share of its job's answer, numbered 0, 1, ... per job in merge
 * order.
 *
 * A job's parts are appended; only a part the job's final check blamed is
 * removed, and the last part takes its seq (extending or cancelling a job
 * leaves them alone), so a job's seqs are 0..n-1 without gaps and the next
 * seq is max(seq) + 1, found through the primary key instead of counting
 * the rows. A part names its lease; spec, units and result are read from
 * the lease, whose result a verified lease keeps (only a rejection, or a
 * blame that removes its part first, clears it).
 *
 * Digests (migration 015): a part's digest covers everything a reader
 * gets of it (PART_DIGEST, store_internal.h), its lease's columns too; it
 * is written in the transaction that adds the part, and store_part_get
 * refuses a part that no longer matches it (GERR_CORRUPT, naming it), so
 * a render, an export or a job's final check never uses a damaged part.
 */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

const char *const sdb_part_sql[S_COUNT] = {
	/* The lease must be of the job and verified; UNIQUE (lease_id)
	 * refuses a second part of the same lease. */
	[S_PART_ADD] =
		"INSERT INTO parts (job_id, seq, lease_id, note) "
		"SELECT ?1, (SELECT coalesce(max(seq) + 1, 0) FROM parts "
		"WHERE job_id = ?1), id, ?3 FROM leases "
		"WHERE id = ?2 AND job_id = ?1 AND state = ?4",
	[S_PART_COUNT] = "SELECT coalesce(max(seq) + 1, 0) FROM parts "
			 "WHERE job_id = ?1",
	[S_PART_DIGEST_SET] = "UPDATE parts SET digest = (SELECT " PART_DIGEST
			      " FROM leases AS l WHERE l.id = parts.lease_id) "
			      "WHERE lease_id = ?1",
	[S_PART_DIGEST_OK] = "SELECT parts.digest IS " PART_DIGEST
			     " FROM parts LEFT JOIN leases AS l "
			     "ON l.id = parts.lease_id "
			     "WHERE parts.job_id = ?1 AND parts.seq = ?2",
	[S_PART_GET] = "SELECT p.lease_id, l.spec, l.units, l.result, p.note "
		       "FROM parts AS p JOIN leases AS l ON l.id = p.lease_id "
		       "WHERE p.job_id = ?1 AND p.seq = ?2",
	[S_PART_REMOVE] = "DELETE FROM parts WHERE job_id = ?1 AND lease_id = ?2 "
			  "RETURNING seq",
	/* The last part into the hole ?2 (none when the hole was last). */
	[S_PART_FILL] = "UPDATE parts SET seq = ?2 WHERE job_id = ?1 AND seq = "
			"(SELECT max(seq) FROM parts WHERE job_id = ?1) "
			"AND seq > ?2 RETURNING lease_id",
};

/* What an S_PART_GET row becomes. */
#define PART_ROW(p)                                                          \
	SDB_COLS(sc_i64(&(p)->lease_id), sc_text(&(p)->spec),                \
		 sc_u64(&(p)->units), sc_text(&(p)->result),                 \
		 sc_text(&(p)->note))

void store_part_clear(struct store_part *p)
{
	if (p)
		sdb_clear(p, sizeof(*p), PART_ROW(p));
}

static int part_row(sqlite3_stmt *s, void *elem)
{
	return sdb_cols(s, PART_ROW((struct store_part *)elem));
}

static void part_clear_v(void *e) { store_part_clear(e); }

/* The digest of lease_id's part, of its row and its lease's as they are
 * now. Every write that changes a part (its seq, its note) or its lease's
 * spec, units or result calls it in the same transaction; otherwise the
 * part reads as damaged. A schema older than 015 (store_open_version,
 * tests) has none to write. */
static int part_digest_write(struct store *st, int64_t lease_id,
			     const char *what)
{
	if (!st->stmt[S_PART_DIGEST_SET])
		return 0;
	return sdb_exec(st, S_PART_DIGEST_SET, SDB_ARGS(sa_int(lease_id)),
			what);
}

/* Nothing was inserted: say why (the lease is missing, of another job, or
 * not verified). */
static int part_refused(struct store *st, int64_t job_id, int64_t lease_id,
			const char *what)
{
	struct store_lease l;
	int r = sdb_lease_get(st, lease_id, &l, what);

	if (r == GERR_NOTFOUND)
		return sdb_err(st, r, "%s: no lease %lld", what,
			       (long long)lease_id);
	if (r)
		return r;
	if (l.job_id != job_id)
		r = sdb_err(st, GERR_INVAL, "%s: lease %lld is of job %lld, "
			    "not %lld", what, (long long)lease_id,
			    (long long)l.job_id, (long long)job_id);
	else
		r = sdb_err(st, GERR_STATE, "%s: lease %lld is %s, not "
			    "verified", what, (long long)lease_id,
			    lease_state_name(l.state));
	store_lease_clear(&l);
	return r;
}

int store_part_add(struct store *st, int64_t job_id, int64_t lease_id,
		   const char *note)
{
	static const char what[] = "store_part_add";
	int r;

	if ((r = sdb_op_begin(st, what)))
		return r;
	r = sdb_exec(st, S_PART_ADD,
		     SDB_ARGS(sa_int(job_id), sa_int(lease_id), sa_text(note),
			      sa_int(LEASE_VERIFIED)), what);
	if (r == GERR_STATE)
		r = sdb_err(st, r, "%s: lease %lld is a part already", what,
			    (long long)lease_id);
	else if (r == 0 && sdb_changes(st) == 0)
		r = part_refused(st, job_id, lease_id, what);
	if (r == 0)
		r = part_digest_write(st, lease_id, what);
	return sdb_op_end(st, r, what);
}

int store_part_remove(struct store *st, int64_t job_id, int64_t lease_id)
{
	static const char what[] = "store_part_remove";
	int64_t seq = -1;
	int r;

	if ((r = sdb_op_begin(st, what)))
		return r;
	r = sdb_one(st, S_PART_REMOVE, SDB_ARGS(sa_int(job_id), sa_int(lease_id)),
		    SDB_COLS(sc_i64(&seq)), what);
	if (r == GERR_NOTFOUND)
		r = sdb_err(st, r, "%s: lease %lld is no part of job %lld", what,
			    (long long)lease_id, (long long)job_id);
	if (r == 0) {
		int64_t moved = 0;
		r = sdb_one(st, S_PART_FILL, SDB_ARGS(sa_int(job_id), sa_int(seq)),
			    SDB_COLS(sc_i64(&moved)), what);
		if (r == 0) /* its seq is in its digest */
			r = part_digest_write(st, moved, what);
		else if (r == GERR_NOTFOUND) /* the hole was the last part */
			r = 0;
	}
	return sdb_op_end(st, r, what);
}

int store_part_count(struct store *st, int64_t job_id, uint64_t *ret_n)
{
	static const char what[] = "store_part_count";
	int r = sdb_count(st, S_PART_COUNT, SDB_ARGS(sa_int(job_id)), ret_n,
			  what);

	if (r == GERR_NOTFOUND) /* an aggregate always gives a row */
		r = sdb_err(st, GERR_DB, "%s: no row", what);
	return r;
}

int store_part_get(struct store *st, int64_t job_id, uint64_t seq,
		   struct store_part *ret)
{
	static const char what[] = "store_part_get";
	struct store_part p;
	int r;

	if (!ret)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	if (seq > INT64_MAX)
		return sdb_err(st, GERR_NOTFOUND, "%s: job %lld has no part "
			       "%llu", what, (long long)job_id,
			       (unsigned long long)seq);
	r = sdb_get_one(st, S_PART_GET,
			SDB_ARGS(sa_int(job_id), sa_int((int64_t)seq)),
			sizeof(p), part_row, part_clear_v, &p, what);
	if (r == GERR_NOTFOUND)
		return sdb_err(st, r, "%s: job %lld has no part %llu", what,
			       (long long)job_id, (unsigned long long)seq);
	if (r)
		return r;
	if (st->stmt[S_PART_DIGEST_OK]) {
		int ok = 0;

		r = sdb_one(st, S_PART_DIGEST_OK,
			    SDB_ARGS(sa_int(job_id), sa_int((int64_t)seq)),
			    SDB_COLS(sc_int(&ok)), what);
		if (r == 0 && !ok)
			r = sdb_err(st, GERR_CORRUPT, "job %lld part %llu "
				    "(lease %lld): the stored part does not "
				    "match its digest: the database was changed "
				    "outside gpud or damaged; restore it from a "
				    "backup", (long long)job_id,
				    (unsigned long long)seq,
				    (long long)p.lease_id);
		if (r == GERR_NOTFOUND) /* read a moment ago */
			r = sdb_err(st, GERR_DB, "%s: job %lld part %llu "
				    "vanished", what, (long long)job_id,
				    (unsigned long long)seq);
		if (r) {
			store_part_clear(&p);
			return r;
		}
	}
	if (!p.result) {
		r = sdb_err(st, GERR_CORRUPT, "%s: job %lld part %llu: lease "
			    "%lld has no result", what, (long long)job_id,
			    (unsigned long long)seq, (long long)p.lease_id);
		store_part_clear(&p);
		return r;
	}
	*ret = p;
	return 0;
}
