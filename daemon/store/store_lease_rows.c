/* store_lease_rows.c - lease rows: decoding, insert, get, lists and
 * counts, and who holds them. Every change of a lease's state is in
 * store_leases.c.
 */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

/* store_lease_holders' rows at most: enough to name who holds what. */
#define HOLDERS_MAX_SQL "16"

const char *const sdb_lease_row_sql[S_COUNT] = {
	[S_LEASE_INSERT] =
		"INSERT INTO leases (job_id, spec, units, state, epoch, "
		"worker_id, deadline, attempts, created_at, updated_at) "
		"VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6, 1, ?7, ?7) "
		"RETURNING " LEASE_COLS,
	[S_LEASE_GET] = "SELECT " LEASE_COLS " FROM leases WHERE id = ?1",
	[S_LEASE_LIST_JOB] = "SELECT " LEASE_COLS " FROM leases "
			     "WHERE job_id = ?1 ORDER BY id",
	[S_LEASE_LIST_STATE] = "SELECT " LEASE_COLS " FROM leases "
			       "WHERE state = ?1 ORDER BY id",
	[S_LEASE_COUNTS] = "SELECT state, count(*) FROM leases "
			   "WHERE job_id = ?1 AND replica_of IS NULL "
			   "GROUP BY state",
	[S_LEASE_HELD_COUNT] = "SELECT count(*) FROM leases "
			       "WHERE worker_id = ?1 AND state = ?2",
	/* The jobs subquery reads the small jobs table, so the leases are
	 * found through leases_job (job_id, state). */
	/* Pending leases some worker failed: only another may take them. */
	[S_LEASE_FAILED_WAITING] =
		"SELECT count(*) FROM leases AS l WHERE l.job_id = ?1 "
		"AND l.state = ?2 AND EXISTS (SELECT 1 FROM lease_failures "
		"AS f WHERE f.lease_id = l.id)",
	[S_LEASE_HOLDERS] =
		"SELECT w.name, count(*) AS n FROM leases AS l "
		"JOIN workers AS w ON w.id = l.worker_id "
		"WHERE l.state = ?2 AND l.job_id IN (SELECT id FROM jobs "
		"WHERE (?1 = 0 AND state = ?3) OR id = ?1) "
		"GROUP BY w.id ORDER BY n DESC, w.name LIMIT " HOLDERS_MAX_SQL,
	/* The tail (migrations 011 and 013): a grant's start, whether the
	 * lease is in a replica group, and its mark for this epoch. */
	[S_LEASE_GRANT] =
		"SELECT CASE WHEN granted_at > 0 THEN granted_at "
		"ELSE created_at END, granted_units, "
		"replica_of IS NOT NULL OR EXISTS (SELECT 1 FROM leases AS r "
		"WHERE r.replica_of = l.id), "
		"CASE WHEN takeback_epoch = ?2 THEN takeback ELSE 0 END "
		"FROM leases AS l WHERE id = ?1 AND epoch = ?2",
	[S_LEASE_MARK_TAKEBACK] =
		"UPDATE leases SET takeback = ?3, takeback_epoch = ?2 "
		"WHERE id = ?1 AND epoch = ?2 AND state = ?4",
	/* A cut never takes the head below its checkpoint. */
	[S_LEASE_RESPEC] =
		"UPDATE leases SET spec = ?3, units = ?4, takeback = 0, "
		"updated_at = ?5 WHERE id = ?1 AND epoch = ?2 AND state = ?6 "
		"AND checkpoint_units <= ?4 AND units_done <= ?4",
	[S_LEASE_INSERT_PENDING] =
		"INSERT INTO leases (job_id, spec, units, state, epoch, "
		"created_at, updated_at) VALUES (?1, ?2, ?3, ?4, 0, ?5, ?5) "
		"RETURNING id",
};

const char *lease_state_name(enum lease_state s)
{
	static const char *const names[LEASE_NSTATES] = {
		"pending", "leased", "done", "verified", "failed", "cancelled",
	};
	return (unsigned)s < LEASE_NSTATES ? names[s] : "unknown";
}

/* What a LEASE_COLS row becomes; state, an enum, is read by sdb_lease_row.
 * A NULL worker_id reads 0. */
#define LEASE_ROW(l)                                                         \
	SDB_COLS(sc_i64(&(l)->id), sc_i64(&(l)->job_id), sc_text(&(l)->spec), \
		 sc_u64(&(l)->units), SC_SKIP, sc_u64(&(l)->epoch),          \
		 sc_i64(&(l)->worker_id), sc_dbl(&(l)->deadline),            \
		 sc_u32(&(l)->attempts), sc_u32(&(l)->failures),             \
		 sc_u64(&(l)->units_done),                                   \
		 sc_text(&(l)->checkpoint), sc_u64(&(l)->checkpoint_units),  \
		 sc_text(&(l)->result), sc_dbl(&(l)->updated_at),            \
		 sc_text(&(l)->last_error))

int sdb_lease_row(sqlite3_stmt *s, void *elem)
{
	struct store_lease *l = elem;

	l->state = (enum lease_state)sqlite3_column_int(s, 4);
	return sdb_cols(s, LEASE_ROW(l));
}

void store_lease_clear(struct store_lease *l)
{
	if (l)
		sdb_clear(l, sizeof(*l), LEASE_ROW(l));
}

void store_lease_free_array(struct store_lease *a, size_t n)
{
	sdb_free_array(a, n, sizeof(*a), sdb_lease_clear_v);
}

void sdb_lease_clear_v(void *e) { store_lease_clear(e); }

int sdb_lease_get(struct store *st, int64_t id, struct store_lease *ret,
		  const char *what)
{
	return sdb_get_one(st, S_LEASE_GET, SDB_ARGS(sa_int(id)), sizeof(*ret),
			   sdb_lease_row, sdb_lease_clear_v, ret, what);
}

int store_lease_insert_leased(struct store *st, int64_t job_id,
			      const char *spec, uint64_t units,
			      int64_t worker_id, double deadline, double now,
			      struct store_lease *ret)
{
	static const char what[] = "store_lease_insert_leased";
	struct store_lease l;
	int r;

	if (!spec || !ret)
		return sdb_err(st, GERR_INVAL, "%s: missing argument", what);
	if ((r = sdb_check_u63(st, units, what)) ||
	    (r = sdb_op_begin(st, what)))
		return r;
	r = sdb_get_one(st, S_LEASE_INSERT,
			SDB_ARGS(sa_int(job_id), sa_text(spec),
				 sa_int((int64_t)units), sa_int(LEASE_LEASED),
				 sa_ref(worker_id), sa_dbl(deadline),
				 sa_dbl(now)),
			sizeof(l), sdb_lease_row, sdb_lease_clear_v, &l, what);
	if (r == GERR_NOTFOUND && strstr(st->errmsg, "FOREIGN KEY"))
		sdb_err(st, r, "%s: no job %lld or no worker %lld", what,
			(long long)job_id, (long long)worker_id);
	if (r)
		return sdb_op_end(st, r, what);
	if ((r = sdb_op_end(st, 0, what))) {
		store_lease_clear(&l);
		return r;
	}
	*ret = l;
	return 0;
}

int store_lease_get(struct store *st, int64_t id, struct store_lease *ret)
{
	if (!ret)
		return sdb_err(st, GERR_INVAL, "store_lease_get: no ret");
	return sdb_lease_get(st, id, ret, "store_lease_get");
}

static int lease_list(struct store *st, enum stmt_id id,
		      const struct sdb_arg *args, struct store_lease **ret,
		      size_t *ret_n, const char *what)
{
	return sdb_get_all(st, id, args, sizeof(**ret), sdb_lease_row,
			   sdb_lease_clear_v, ret, ret_n, what);
}

int store_lease_list_job(struct store *st, int64_t job_id,
			 struct store_lease **ret, size_t *ret_n)
{
	return lease_list(st, S_LEASE_LIST_JOB, SDB_ARGS(sa_int(job_id)), ret,
			  ret_n, "store_lease_list_job");
}

int store_lease_list_state(struct store *st, enum lease_state state,
			   struct store_lease **ret, size_t *ret_n)
{
	if ((unsigned)state >= LEASE_NSTATES)
		return sdb_err(st, GERR_INVAL, "store_lease_list_state: bad "
			       "state %d", (int)state);
	return lease_list(st, S_LEASE_LIST_STATE, SDB_ARGS(sa_int(state)), ret,
			  ret_n, "store_lease_list_state");
}

int store_lease_counts(struct store *st, int64_t job_id,
		       uint64_t counts[LEASE_NSTATES])
{
	return sdb_state_counts(st, S_LEASE_COUNTS, job_id, counts,
				"store_lease_counts");
}

int store_lease_held_count(struct store *st, int64_t worker_id,
			   uint64_t *ret_n)
{
	return sdb_count(st, S_LEASE_HELD_COUNT,
			 SDB_ARGS(sa_int(worker_id), sa_int(LEASE_LEASED)),
			 ret_n, "store_lease_held_count");
}

static int holder_row(sqlite3_stmt *s, void *elem)
{
	struct store_holder *h = elem;

	return sdb_cols(s, SDB_COLS(sc_text(&h->name), sc_u64(&h->leases)));
}

static void holder_clear_v(void *e)
{
	struct store_holder *h = e;

	free(h->name);
	h->name = NULL;
}

void store_holder_free_array(struct store_holder *a, size_t n)
{
	sdb_free_array(a, n, sizeof(*a), holder_clear_v);
}

int store_lease_holders(struct store *st, int64_t job_id,
			struct store_holder **ret, size_t *ret_n)
{
	return sdb_get_all(st, S_LEASE_HOLDERS,
			   SDB_ARGS(sa_int(job_id), sa_int(LEASE_LEASED),
				    sa_int(JOB_ACTIVE)),
			   sizeof(**ret), holder_row, holder_clear_v, ret,
			   ret_n, "store_lease_holders");
}

int store_lease_failed_waiting(struct store *st, int64_t job_id,
			       uint64_t *ret_n)
{
	return sdb_count(st, S_LEASE_FAILED_WAITING,
			 SDB_ARGS(sa_int(job_id), sa_int(LEASE_PENDING)), ret_n,
			 "store_lease_failed_waiting");
}

/* ---- the tail: a held lease taken back and cut ---- */

int store_lease_grant_get(struct store *st, int64_t id, uint64_t epoch,
			  struct store_lease_grant *ret)
{
	static const char what[] = "store_lease_grant_get";
	struct store_lease_grant g = {0};
	int r;

	if (!ret)
		return sdb_err(st, GERR_INVAL, "%s: no ret", what);
	r = sdb_one(st, S_LEASE_GRANT,
		    SDB_ARGS(sa_int(id), sa_int((int64_t)(epoch & INT64_MAX))),
		    SDB_COLS(sc_dbl(&g.granted_at), sc_u64(&g.granted_units),
			     sc_int(&g.grouped), sc_u32(&g.takeback)),
		    what);
	if (r == GERR_NOTFOUND)
		return sdb_err(st, GERR_STALE, "%s: no lease %lld at epoch "
			       "%llu", what, (long long)id,
			       (unsigned long long)epoch);
	if (r == 0)
		*ret = g;
	return r;
}

int store_lease_mark_takeback(struct store *st, int64_t id, uint64_t epoch,
			      uint32_t pieces)
{
	static const char what[] = "store_lease_mark_takeback";
	int r = sdb_write(st, S_LEASE_MARK_TAKEBACK,
			  SDB_ARGS(sa_int(id),
				   sa_int((int64_t)(epoch & INT64_MAX)),
				   sa_int(pieces), sa_int(LEASE_LEASED)),
			  "held lease", id, what);

	return r == GERR_NOTFOUND ? GERR_STALE : r;
}

int store_lease_respec(struct store *st, int64_t id, uint64_t epoch,
		       const char *spec, uint64_t units, double now)
{
	static const char what[] = "store_lease_respec";
	int r;

	if (!spec)
		return sdb_err(st, GERR_INVAL, "%s: no spec", what);
	if ((r = sdb_check_u63(st, units, what)))
		return r;
	r = sdb_write(st, S_LEASE_RESPEC,
		      SDB_ARGS(sa_int(id), sa_int((int64_t)(epoch & INT64_MAX)),
			       sa_text(spec), sa_int((int64_t)units),
			       sa_dbl(now), sa_int(LEASE_PENDING)),
		      "pending lease", id, what);
	return r == GERR_NOTFOUND ? GERR_STALE : r;
}

int store_lease_insert_pending(struct store *st, int64_t job_id,
			       const char *spec, uint64_t units, double now,
			       int64_t *ret_id)
{
	static const char what[] = "store_lease_insert_pending";
	int64_t id = 0;
	int r;

	if (!spec)
		return sdb_err(st, GERR_INVAL, "%s: no spec", what);
	if ((r = sdb_check_u63(st, units, what)))
		return r;
	r = sdb_write_one(st, S_LEASE_INSERT_PENDING,
			  SDB_ARGS(sa_int(job_id), sa_text(spec),
				   sa_int((int64_t)units), sa_int(LEASE_PENDING),
				   sa_dbl(now)),
			  SDB_COLS(sc_i64(&id)), what);
	if (r == GERR_NOTFOUND)
		return sdb_err(st, r, "%s: no job %lld", what,
			       (long long)job_id);
	if (r == 0 && ret_id)
		*ret_id = id;
	return r;
}
