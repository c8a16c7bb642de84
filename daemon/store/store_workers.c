/* store_workers.c - the workers table: one row per worker process, keyed
 * by (credential, instance) and named "CREDENTIAL@INSTANCE"; its counters
 * (failed verifications, messages about leases never granted to it,
 * leases revoked for no progress) and quarantine; and the prune that
 * keeps the table bounded when a fleet starts many processes a day.
 */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

#define WORKER_COLS                                                          \
	"id, name, device, online, quarantined, failures, leases_done, "     \
	"units_done, rate, first_seen, last_seen, foreign_msgs, stalls, "  \
	"credential, instance, drained, host, slurm_job, slurm_array, pod"

/* A row gone long enough to forget (last seen in [?2, ?1)): offline,
 * trusted with nothing (not quarantined), not drained, named by no lease
 * and no failure memory, and never the newest row (so an id is never
 * used twice). */
#define WORKER_GONE(w)                                                       \
	w ".online = 0 AND " w ".last_seen < ?1 AND " w ".last_seen >= ?2 "  \
	"AND " w ".quarantined = 0 AND " w ".drained = 0 "                   \
	"AND " w ".id < (SELECT max(id) FROM workers) "                      \
	"AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.worker_id = " w      \
	".id) AND NOT EXISTS (SELECT 1 FROM lease_failures f "               \
	"WHERE f.worker_id = " w ".id)"

const char *const sdb_worker_sql[S_COUNT] = {
	[S_WORKER_UPSERT] =
		"INSERT INTO workers (name, credential, instance, device, "
		"online, first_seen, last_seen) VALUES (?1 || '@' || ?2, ?1, "
		"?2, ?3, 1, ?4, ?4) ON CONFLICT (credential, instance) DO "
		"UPDATE SET device = excluded.device, online = 1, "
		"last_seen = excluded.last_seen RETURNING id",
	/* A credential's own row (instance ''), as before migration 012;
	 * valid in every schema, so tests can fill older ones. 012's trigger
	 * sets the credential of a new row. */
	[S_WORKER_UPSERT_LEGACY] =
		"INSERT INTO workers (name, device, online, first_seen, "
		"last_seen) VALUES (?1, ?3, 1, ?4, ?4) "
		"ON CONFLICT (name) DO UPDATE SET device = excluded.device, "
		"online = 1, last_seen = excluded.last_seen RETURNING id",
	[S_WORKER_ONLINE] = "UPDATE workers SET online = ?2, last_seen = ?3 "
			    "WHERE id = ?1",
	[S_WORKER_ALL_OFFLINE] = "UPDATE workers SET online = 0 "
				 "WHERE online != 0",
	[S_WORKER_CREDIT] = "UPDATE workers SET leases_done = leases_done + 1, "
			    "units_done = units_done + ?2, rate = ?3, "
			    "last_seen = ?4 WHERE id = ?1",
	[S_WORKER_FAIL] = "UPDATE workers SET failures = failures + 1, streak = 0, "
			  "quarantined = CASE WHEN ?2 > 0 AND failures + 1 >= ?2 "
			  "THEN 1 ELSE quarantined END WHERE id = ?1 "
			  "RETURNING quarantined",
	[S_WORKER_FOREIGN] = "UPDATE workers SET foreign_msgs = foreign_msgs + 1, "
			     "quarantined = CASE WHEN ?2 > 0 AND "
			     "foreign_msgs + 1 >= ?2 THEN 1 ELSE quarantined "
			     "END WHERE id = ?1 RETURNING quarantined",
	[S_WORKER_STALL] = "UPDATE workers SET stalls = stalls + 1, "
			   "quarantined = CASE WHEN ?2 > 0 AND stalls + 1 >= ?2 "
			   "THEN 1 ELSE quarantined END WHERE id = ?1 "
			   "RETURNING quarantined",
	[S_WORKER_GET] = "SELECT " WORKER_COLS " FROM workers WHERE id = ?1",
	[S_WORKER_LIST] = "SELECT " WORKER_COLS " FROM workers "
			  "WHERE online = 1 OR last_seen >= ?1 ORDER BY id",
	[S_WORKER_PRUNE_RATES] = "DELETE FROM worker_workloads WHERE worker_id IN "
				 "(SELECT w.id FROM workers w WHERE "
				 WORKER_GONE("w") ")",
	[S_WORKER_PRUNE_JOB_RATES] = "DELETE FROM job_rates WHERE worker_id IN "
				     "(SELECT w.id FROM workers w WHERE "
				     WORKER_GONE("w") ")",
	[S_WORKER_PRUNE] = "DELETE FROM workers AS w WHERE " WORKER_GONE("w"),
	[S_WORKER_CRED_HELD] =
		"SELECT count(*) FROM leases WHERE state = ?2 AND worker_id IN "
		"(SELECT id FROM workers WHERE credential = (SELECT credential "
		"FROM workers WHERE id = ?1))",
	/* ?1 a row's name (CRED@INSTANCE) or a credential (every row of
	 * it); ?2 drained or not. */
	[S_WORKER_DRAIN] = "UPDATE workers SET drained = ?2 WHERE name = ?1 "
			   "OR (instr(?1, '@') = 0 AND credential = ?1)",
	/* Out of quarantine, its failure counts from zero again. */
	[S_WORKER_FORGIVE] = "UPDATE workers SET quarantined = 0, failures = 0, "
			     "foreign_msgs = 0, stalls = 0 WHERE name = ?1 "
			     "OR (instr(?1, '@') = 0 AND credential = ?1)",
	[S_WORKER_PLACE] = "UPDATE workers SET host = ?2, slurm_job = ?3, "
			   "slurm_array = ?4, pod = ?5 WHERE id = ?1",
};

/* Columns 16.. of WORKER_COLS, in place.h's field order. */
#define PLACE_COL 16

/* What the first PLACE_COL columns of WORKER_COLS become. */
#define WORKER_ROW(w)                                                        \
	SDB_COLS(sc_i64(&(w)->id), sc_text(&(w)->name), sc_text(&(w)->device), \
		 sc_int(&(w)->online), sc_int(&(w)->quarantined),            \
		 sc_u32(&(w)->failures), sc_u64(&(w)->leases_done),          \
		 sc_u64(&(w)->units_done), sc_dbl(&(w)->rate),               \
		 sc_dbl(&(w)->first_seen), sc_dbl(&(w)->last_seen),          \
		 sc_u32(&(w)->foreign_msgs), sc_u32(&(w)->stalls),           \
		 sc_text(&(w)->credential), sc_text(&(w)->instance),         \
		 sc_int(&(w)->drained))

static void worker_clear_v(void *e) { store_worker_clear(e); }

void store_worker_clear(struct store_worker *w)
{
	if (w)
		sdb_clear(w, sizeof(*w), WORKER_ROW(w));
}

static int worker_row(sqlite3_stmt *s, void *elem)
{
	struct store_worker *w = elem;
	int r = sdb_cols(s, WORKER_ROW(w));

	if (r)
		return r;
	/* Only checked values were stored; one that is not (a hand-edited
	 * database) reads as unknown. */
	for (int f = 0; f < PLACE_FIELDS; f++)
		(void)place_set(&w->place, (enum place_field)f,
				(const char *)sqlite3_column_text(s, PLACE_COL + f));
	return 0;
}

void store_worker_free_array(struct store_worker *a, size_t n)
{
	sdb_free_array(a, n, sizeof(*a), worker_clear_v);
}

int store_worker_upsert(struct store *st, const char *credential,
			const char *instance, const char *device, double now,
			int64_t *ret_id)
{
	static const char what[] = "store_worker_upsert";
	int64_t id = 0;
	int r;

	if (!credential || !*credential || strchr(credential, '@') ||
	    !instance || !device || !ret_id)
		return sdb_err(st, GERR_INVAL, "%s: missing argument", what);
	if (*instance && place_instance_check(instance))
		return sdb_err(st, GERR_INVAL, "%s: bad instance", what);
	r = sdb_write_one(st, *instance ? S_WORKER_UPSERT : S_WORKER_UPSERT_LEGACY,
			  SDB_ARGS(sa_text(credential), sa_text(instance),
				   sa_text(device), sa_dbl(now)),
			  SDB_COLS(sc_i64(&id)), what);
	if (r == GERR_NOTFOUND)
		r = sdb_err(st, GERR_DB, "%s: no id returned", what);
	if (r == 0)
		*ret_id = id;
	return r;
}

int store_worker_set_online(struct store *st, int64_t id, int online,
			    double now)
{
	return sdb_write(st, S_WORKER_ONLINE,
			 SDB_ARGS(sa_int(id), sa_int(online ? 1 : 0),
				  sa_dbl(now)), "worker", id,
			 "store_worker_set_online");
}

int store_worker_set_place(struct store *st, int64_t id,
			   const struct place *p)
{
	static const char what[] = "store_worker_set_place";
	struct sdb_arg args[1 + PLACE_FIELDS + 1] = {sa_int(id)};

	if (!p)
		return sdb_err(st, GERR_INVAL, "%s: no place", what);
	for (int f = 0; f < PLACE_FIELDS; f++) {
		const char *v = place_get(p, (enum place_field)f);

		if (*v && place_check((enum place_field)f, v))
			return sdb_err(st, GERR_INVAL, "%s: bad %s", what,
				       place_field_name((enum place_field)f));
		args[1 + f] = sa_text(v);
	}
	return sdb_write(st, S_WORKER_PLACE, args, "worker", id, what);
}

int store_worker_all_offline(struct store *st)
{
	return sdb_write(st, S_WORKER_ALL_OFFLINE, NULL, NULL, 0,
			 "store_worker_all_offline");
}

int store_worker_credit(struct store *st, int64_t id, uint64_t units,
			double rate, double now)
{
	static const char what[] = "store_worker_credit";
	int r = sdb_check_u63(st, units, what);

	if (r)
		return r;
	return sdb_write(st, S_WORKER_CREDIT,
			 SDB_ARGS(sa_int(id), sa_int((int64_t)units),
				  sa_dbl(rate), sa_dbl(now)), "worker", id,
			 what);
}

/* Add one to a counter of worker id with statement sid (?1 id, ?2
 * threshold, RETURNING quarantined). threshold 0 never quarantines; a
 * quarantined worker stays so. */
static int worker_count(struct store *st, enum stmt_id sid, int64_t id,
			uint32_t threshold, int *ret_quarantined,
			const char *what)
{
	int q = 0;
	int r = sdb_write_one(st, sid, SDB_ARGS(sa_int(id), sa_int(threshold)),
			      SDB_COLS(sc_int(&q)), what);

	if (r == GERR_NOTFOUND)
		r = sdb_err(st, r, "%s: no worker %lld", what, (long long)id);
	if (r == 0 && ret_quarantined)
		*ret_quarantined = q;
	return r;
}

int store_worker_fail(struct store *st, int64_t id, uint32_t threshold,
		      int *ret_quarantined)
{
	return worker_count(st, S_WORKER_FAIL, id, threshold, ret_quarantined,
			    "store_worker_fail");
}

int store_worker_charge(struct store *st, int64_t id, enum store_charge what,
			uint32_t threshold, int *ret_quarantined)
{
	if (what == STORE_CHARGE_FOREIGN)
		return worker_count(st, S_WORKER_FOREIGN, id, threshold,
				    ret_quarantined, "store_worker_charge");
	if (what == STORE_CHARGE_STALL)
		return worker_count(st, S_WORKER_STALL, id, threshold,
				    ret_quarantined, "store_worker_charge");
	return sdb_err(st, GERR_INVAL, "store_worker_charge: bad kind %d",
		       (int)what);
}

int store_worker_get(struct store *st, int64_t id, struct store_worker *ret)
{
	if (!ret)
		return sdb_err(st, GERR_INVAL, "store_worker_get: no ret");
	return sdb_get_one(st, S_WORKER_GET, SDB_ARGS(sa_int(id)), sizeof(*ret),
			   worker_row, worker_clear_v, ret, "store_worker_get");
}

int store_worker_list(struct store *st, double since,
		      struct store_worker **ret, size_t *ret_n)
{
	return sdb_get_all(st, S_WORKER_LIST, SDB_ARGS(sa_dbl(since)),
			   sizeof(**ret), worker_row,
			   worker_clear_v, ret, ret_n, "store_worker_list");
}

int store_worker_prune(struct store *st, double since, double before,
		       uint64_t *ret_n)
{
	static const char what[] = "store_worker_prune";
	int64_t n = 0;
	int r = sdb_op_begin(st, what);

	if (r == 0)
		r = sdb_exec(st, S_WORKER_PRUNE_RATES,
			     SDB_ARGS(sa_dbl(before), sa_dbl(since)), what);
	if (r == 0)
		r = sdb_exec(st, S_WORKER_PRUNE_JOB_RATES,
			     SDB_ARGS(sa_dbl(before), sa_dbl(since)), what);
	if (r == 0)
		r = sdb_exec(st, S_WORKER_PRUNE,
			     SDB_ARGS(sa_dbl(before), sa_dbl(since)), what);
	if (r == 0)
		n = sdb_changes(st);
	r = sdb_op_end(st, r, what);
	if (r == 0 && ret_n)
		*ret_n = n > 0 ? (uint64_t)n : 0;
	return r;
}

int store_worker_credential_held(struct store *st, int64_t id,
				 uint64_t *ret_n)
{
	return sdb_count(st, S_WORKER_CRED_HELD,
			 SDB_ARGS(sa_int(id), sa_int(LEASE_LEASED)), ret_n,
			 "store_worker_credential_held");
}

/* A name gpuctl may give: a credential, or CREDENTIAL@INSTANCE. */
static int worker_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n < 1 || n > STORE_WORKER_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x21 || (unsigned char)name[i] > 0x7e)
			return 0;
	return 1;
}

int store_worker_drain(struct store *st, const char *name, int drained,
		       uint64_t *ret_n)
{
	static const char what[] = "store_worker_drain";
	int r;

	if (!worker_name_ok(name))
		return sdb_err(st, GERR_INVAL, "%s: bad name", what);
	r = sdb_exec(st, S_WORKER_DRAIN,
		     SDB_ARGS(sa_text(name), sa_int(drained ? 1 : 0)), what);
	if (r)
		return r;
	if (sdb_changes(st) <= 0)
		return GERR_NOTFOUND;
	if (ret_n)
		*ret_n = (uint64_t)sdb_changes(st);
	return 0;
}

int store_worker_forgive(struct store *st, const char *name, uint64_t *ret_n)
{
	static const char what[] = "store_worker_forgive";
	int r;

	if (!worker_name_ok(name))
		return sdb_err(st, GERR_INVAL, "%s: bad name", what);
	r = sdb_exec(st, S_WORKER_FORGIVE, SDB_ARGS(sa_text(name)), what);
	if (r)
		return r;
	if (sdb_changes(st) <= 0)
		return GERR_NOTFOUND;
	if (ret_n)
		*ret_n = (uint64_t)sdb_changes(st);
	return 0;
}
