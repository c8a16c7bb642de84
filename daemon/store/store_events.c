/* store_events.c - reading the append-only event log (store_events.h):
 * counts by kind and the verified results per time bucket, read from the
 * rows after the last one the caller saw; a job's newest events, and
 * its events in time order for gpuctl events; the newest of gpud's own
 * events (check, backup).
 */
#include "store_internal.h"
#include "store_events.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const sdb_event_read_sql[S_COUNT] = {
	[S_EVENT_MAX_ID] = "SELECT coalesce(max(id), 0) FROM events",
	/* ?1 = 0 (a first read) is the covering index events_kind's walk;
	 * later reads are a range of the rowid. */
	[S_EVENT_KIND_COUNTS] = "SELECT kind, count(*) FROM events "
				"WHERE id > ?1 AND id <= ?2 GROUP BY kind",
	[S_EVENT_RESULTS] =
		"SELECT e.ts, e.kind, coalesce(j.workload, ''), "
		"coalesce(l.units, 0) FROM events AS e "
		"LEFT JOIN leases AS l ON l.id = e.lease_id "
		"LEFT JOIN jobs AS j ON j.id = e.job_id "
		"WHERE e.id > ?1 AND e.id <= ?2 AND e.ts >= ?3 "
		"AND e.kind IN ('verified', 'verify_failed', 'refuted')",
	[S_EVENT_JOB_LIST] = "SELECT id, job_id, lease_id, epoch, worker_id, ts, "
			     "kind, detail FROM events WHERE job_id = ?1 "
			     "ORDER BY id DESC LIMIT ?2",
	/* gpuctl events: the job's rows and its leases' rows that name no
	 * job, after ?2 and at or after ?3, the newest ?4 of them in time
	 * order, with the worker's name. Two walks merged in id order: the
	 * job's (events_job, newest first, so LIMIT stops early) and its
	 * leases' (events_lease, migration 019). */
	[S_EVENT_JOB_READ] =
		"SELECT x.id, x.job_id, x.lease_id, x.epoch, x.worker_id, x.ts, "
		"x.kind, x.detail, w.name FROM ("
		"SELECT id, job_id, lease_id, epoch, worker_id, ts, kind, detail "
		"FROM events WHERE job_id = ?1 AND id > ?2 AND ts >= ?3 "
		"UNION ALL "
		"SELECT e.id, e.job_id, e.lease_id, e.epoch, e.worker_id, e.ts, "
		"e.kind, e.detail FROM leases AS l "
		"JOIN events AS e INDEXED BY events_lease ON e.lease_id = l.id "
		"AND e.job_id = 0 AND e.lease_id > 0 "
		"WHERE l.job_id = ?1 AND e.id > ?2 AND e.ts >= ?3 "
		"ORDER BY id DESC LIMIT ?4) AS x "
		"LEFT JOIN workers AS w ON w.id = x.worker_id ORDER BY x.id",
	[S_EVENT_LAST] = "SELECT ts, detail FROM events WHERE kind = ?1 "
			 "AND job_id = 0 ORDER BY id DESC LIMIT 1",
};

static int kind_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	struct store_event_tally *t = ctx;
	const char *kind = (const char *)sqlite3_column_text(s, 0);
	int64_t n = sqlite3_column_int64(s, 1);

	(void)st;
	for (size_t i = 0; kind && i < t->n_kinds; i++)
		if (strcmp(t->kinds[i], kind) == 0) {
			t->counts[i] += n > 0 ? (uint64_t)n : 0;
			break;
		}
	return 0;
}

/* The workload's slot in t->wl, made when there is room; -1: none. */
static int wl_slot(struct store_event_tally *t, const char *wl)
{
	size_t i;

	for (i = 0; i < t->n_wl; i++)
		if (strcmp(t->wl[i], wl) == 0)
			return (int)i;
	if (t->n_wl == STORE_EVENTS_WL || strlen(wl) >= sizeof(t->wl[0]))
		return -1;
	memcpy(t->wl[t->n_wl], wl, strlen(wl) + 1);
	return (int)t->n_wl++;
}

static int result_row(struct store *st, sqlite3_stmt *s, void *ctx)
{
	struct store_event_tally *t = ctx;
	double ts = sqlite3_column_double(s, 0);
	const char *kind = (const char *)sqlite3_column_text(s, 1);
	const char *wl = (const char *)sqlite3_column_text(s, 2);
	int64_t units = sqlite3_column_int64(s, 3);
	double b = floor((ts - t->since) / t->bucket_s);
	size_t i;
	int k;

	(void)st;
	if (!kind || !(b >= 0) || b >= (double)t->n_buckets)
		return 0;
	i = (size_t)b;
	if (strcmp(kind, "verified") != 0) {
		t->refuted[i]++;
		return 0;
	}
	t->verified[i]++;
	if (wl && (k = wl_slot(t, wl)) >= 0 && units > 0)
		t->units[k][i] += (uint64_t)units;
	return 0;
}

int store_event_since(struct store *st, struct store_event_tally *t)
{
	static const char what[] = "store_event_since";
	int64_t top = 0, from;
	int r;

	if (!t || t->n_kinds > STORE_EVENTS_KINDS || t->last_id < 0 ||
	    t->n_buckets > STORE_EVENTS_BUCKETS || !(t->bucket_s > 0))
		return sdb_err(st, GERR_INVAL, "%s: bad argument", what);
	r = sdb_one(st, S_EVENT_MAX_ID, NULL, SDB_COLS(sc_i64(&top)), what);
	if (r)
		return r;
	if (top <= t->last_id) {
		t->whole = 1;
		return 0;
	}
	r = sdb_each(st, S_EVENT_KIND_COUNTS, SDB_ARGS(sa_int(t->last_id),
		     sa_int(top)), kind_row, t, what);
	from = top - STORE_EVENTS_SCAN_MAX > t->last_id ?
	       top - STORE_EVENTS_SCAN_MAX : t->last_id;
	if (!r)
		r = sdb_each(st, S_EVENT_RESULTS, SDB_ARGS(sa_int(from), sa_int(top),
			     sa_dbl(t->since)), result_row, t, what);
	if (r)
		return r;
	t->whole = from == t->last_id;
	t->last_id = top;
	return 0;
}

static int event_row(sqlite3_stmt *s, void *elem)
{
	struct store_event_row *e = elem;

	return sdb_cols(s, SDB_COLS(sc_i64(&e->id), sc_i64(&e->job_id),
			sc_i64(&e->lease_id), sc_i64(&e->epoch),
			sc_i64(&e->worker_id), sc_dbl(&e->ts), sc_text(&e->kind),
			sc_text(&e->detail)));
}

static void event_clear(void *elem)
{
	struct store_event_row *e = elem;

	free(e->kind);
	free(e->detail);
	free(e->worker);
	memset(e, 0, sizeof(*e));
}

int store_event_list(struct store *st, int64_t job_id, size_t max,
		     struct store_event_row **ret, size_t *ret_n)
{
	return sdb_get_all(st, S_EVENT_JOB_LIST, SDB_ARGS(sa_int(job_id),
			   sa_int(max > INT32_MAX ? INT32_MAX : (int64_t)max)),
			   sizeof(**ret), event_row, event_clear, ret, ret_n,
			   "store_event_list");
}

void store_event_rows_free(struct store_event_row *rows, size_t n)
{
	sdb_free_array(rows, n, sizeof(*rows), event_clear);
}

static int job_event_row(sqlite3_stmt *s, void *elem)
{
	struct store_event_row *e = elem;

	return sdb_cols(s, SDB_COLS(sc_i64(&e->id), sc_i64(&e->job_id),
			sc_i64(&e->lease_id), sc_i64(&e->epoch),
			sc_i64(&e->worker_id), sc_dbl(&e->ts), sc_text(&e->kind),
			sc_text(&e->detail), sc_text(&e->worker)));
}

int store_event_job(struct store *st, int64_t job_id, int64_t after_id,
		    double since, size_t max, struct store_event_row **ret,
		    size_t *ret_n)
{
	static const char what[] = "store_event_job";

	if (job_id <= 0 || after_id < 0 || !(since >= 0) || max == 0 ||
	    max > STORE_EVENTS_JOB_MAX || !ret || !ret_n)
		return sdb_err(st, GERR_INVAL, "%s: bad arguments", what);
	return sdb_get_all(st, S_EVENT_JOB_READ, SDB_ARGS(sa_int(job_id),
			   sa_int(after_id), sa_dbl(since), sa_int((int64_t)max)),
			   sizeof(**ret), job_event_row, event_clear, ret, ret_n,
			   what);
}

int store_event_last(struct store *st, const char *kind, double *ret_ts,
		     char **ret_detail)
{
	static const char what[] = "store_event_last";
	double ts = 0;
	char *detail = NULL;
	int r;

	if (!kind)
		return sdb_err(st, GERR_INVAL, "%s: no kind", what);
	r = sdb_one(st, S_EVENT_LAST, SDB_ARGS(sa_text(kind)),
		    SDB_COLS(sc_dbl(&ts), sc_text(&detail)), what);
	if (r) {
		free(detail);
		return r;
	}
	*ret_ts = ts;
	if (ret_detail)
		*ret_detail = detail;
	else
		free(detail);
	return 0;
}
