/* store_pagekeys.c - the page_keys table: the status page's keys
 * (gpuctl page-link), stored as their BLAKE2b-256 hash only, with the
 * role that made each, who (019) and when it ends. Expired rows are pruned when a
 * new key is added.
 */
#include "store_internal.h"

#include <string.h>

const char *const sdb_pagekey_sql[S_COUNT] = {
	[S_PAGEKEY_PRUNE] = "DELETE FROM page_keys WHERE expires_at <= ?1",
	[S_PAGEKEY_ADD] = "INSERT INTO page_keys (hash, owner, created_at, "
			  "expires_at, made_by) VALUES (?1, ?2, ?3, ?4, ?5)",
	[S_PAGEKEY_FIND] = "SELECT expires_at FROM page_keys WHERE hash = ?1 "
			   "AND expires_at > ?2",
	[S_PAGEKEY_REVOKE] = "DELETE FROM page_keys WHERE owner = ?1 OR ?1 IS NULL",
	[S_PAGEKEY_COUNT] = "SELECT count(*) FROM page_keys WHERE expires_at > ?1",
};

static int owner_ok(const char *owner)
{
	return owner && (strcmp(owner, "viewer") == 0 || strcmp(owner, "admin") == 0);
}

int store_pagekey_add(struct store *st, const uint8_t hash[STORE_PAGEKEY_HASH],
		      const char *owner, const char *made_by, double now,
		      double expires_at)
{
	static const char what[] = "store_pagekey_add";
	int r;

	if (!hash || !owner_ok(owner) || !(expires_at > now) ||
	    (made_by && (!*made_by || strlen(made_by) > STORE_OWNER_MAX)))
		return sdb_err(st, GERR_INVAL, "%s: bad argument", what);
	if ((r = sdb_op_begin(st, what)))
		return r;
	r = sdb_exec(st, S_PAGEKEY_PRUNE, SDB_ARGS(sa_dbl(now)), what);
	if (!r)
		r = sdb_exec(st, S_PAGEKEY_ADD, SDB_ARGS(sa_blob(hash, STORE_PAGEKEY_HASH),
			     sa_text(owner), sa_dbl(now), sa_dbl(expires_at),
			     sa_text(made_by)), what);
	return sdb_op_end(st, r, what);
}

int store_pagekey_find(struct store *st, const uint8_t hash[STORE_PAGEKEY_HASH],
		       double now, double *ret_expires_at)
{
	static const char what[] = "store_pagekey_find";
	double until = 0;
	int r;

	if (!hash)
		return sdb_err(st, GERR_INVAL, "%s: no hash", what);
	r = sdb_one(st, S_PAGEKEY_FIND, SDB_ARGS(sa_blob(hash, STORE_PAGEKEY_HASH),
		    sa_dbl(now)), SDB_COLS(sc_dbl(&until)), what);
	if (r == 0 && ret_expires_at)
		*ret_expires_at = until;
	return r;
}

int store_pagekey_revoke(struct store *st, const char *owner, int64_t *ret_n)
{
	static const char what[] = "store_pagekey_revoke";
	int64_t n = 0;
	int r;

	if (owner && !owner_ok(owner))
		return sdb_err(st, GERR_INVAL, "%s: bad owner", what);
	if ((r = sdb_op_begin(st, what)))
		return r;
	r = sdb_exec(st, S_PAGEKEY_REVOKE, SDB_ARGS(owner ? sa_text(owner) : SA_NULL),
		     what);
	if (!r)
		n = sdb_changes(st);
	r = sdb_op_end(st, r, what);
	if (!r && ret_n)
		*ret_n = n;
	return r;
}

int store_pagekey_count(struct store *st, double now, int64_t *ret_n)
{
	static const char what[] = "store_pagekey_count";
	int64_t n = 0;
	int r = sdb_one(st, S_PAGEKEY_COUNT, SDB_ARGS(sa_dbl(now)),
			SDB_COLS(sc_i64(&n)), what);

	if (!r && ret_n)
		*ret_n = n;
	return r;
}
