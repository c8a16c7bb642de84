/* store_rates.c - what a lease's size is computed from (migrations 011 and
 * 017): each worker's rate in each job as gpud measured it, the fleet that
 * may take a job's leases, what is left of a job to carve, the progress
 * requirement's window, the grace that leases get when gpud starts, and
 * who could answer a spot replica (replica.c).
 *
 * Invariants
 *  1. A rate comes only from work gpud verified: a result's rate (its
 *     units past the grant over the time from the grant to its arrival)
 *     is kept on the lease (store_rate_result) and noted for its worker
 *     when the lease is verified, never before: by the trigger of
 *     migration 017, in the transaction that verifies it, wherever that
 *     is (the merge, a replica group's quorum).
 *  2. A checkpoint, which nothing checks, may lower the rate that sizes a
 *     worker's leases but never raise it above the worker's verified rate
 *     in the job; before any verified rate it notes nothing. So no number
 *     a worker states (a claim, a checkpoint's or heartbeat's progress)
 *     makes its leases larger than its verified work showed.
 */
#include "store_internal.h"

/* A sample over less time than this tells nothing (a checkpoint sent
 * right after the grant): dropped. A short lease's sample is kept, latency
 * and all: a worker whose leases are all latency (a GPU on small jobs)
 * does that much work per second of the job's wall time. */
#define RATE_SAMPLE_MIN_S 0.01
/* How much a new sample moves the rate kept (the first one is kept); the
 * trigger of migration 017 blends a verified result's by the same half. */
#define RATE_SAMPLE_WEIGHT 0.5

const char *const sdb_rate_sql[S_COUNT] = {
	/* Every claim says which workloads its worker runs, and the worker
	 * is seen now. */
	[S_RATE_REGISTER] =
		"INSERT INTO worker_workloads (worker_id, workload) "
		"SELECT ?1, value FROM json_each(?2) WHERE true "
		"ON CONFLICT (worker_id, workload) DO NOTHING",
	[S_RATE_SEEN] = "UPDATE workers SET last_seen = ?2 WHERE id = ?1",
	/* A verified sample blended in with weight ?4 (the first one is
	 * kept); the rate that sizes leases starts again from it. */
	[S_RATE_NOTE] =
		"INSERT INTO job_rates (job_id, worker_id, rate, verified, "
		"updated_at) VALUES (?1, ?2, ?3, ?3, ?5) "
		"ON CONFLICT (job_id, worker_id) DO UPDATE SET "
		"verified = CASE WHEN verified > 0 THEN verified * (1 - ?4) + "
		"excluded.verified * ?4 ELSE excluded.verified END, "
		"rate = CASE WHEN verified > 0 THEN verified * (1 - ?4) + "
		"excluded.verified * ?4 ELSE excluded.verified END, "
		"updated_at = excluded.updated_at",
	/* Invariant 2: a checkpoint's sample, never above the verified. */
	[S_RATE_CHECKPOINT] =
		"UPDATE job_rates SET rate = min(rate * (1 - ?4) + ?3 * ?4, "
		"verified), updated_at = ?5 "
		"WHERE job_id = ?1 AND worker_id = ?2 AND verified > 0",
	[S_RATE_RESULT] = "UPDATE leases SET result_rate = ?3 "
			  "WHERE id = ?1 AND epoch = ?2",
	/* The worker's verified rate in the job and the slowest verified
	 * rate of anyone in it (0 when none). */
	[S_RATE_EXPECT] =
		"SELECT coalesce((SELECT verified FROM job_rates "
		"WHERE job_id = ?1 AND worker_id = ?2), 0), "
		"coalesce((SELECT min(verified) FROM job_rates "
		"WHERE job_id = ?1 AND verified > 0), 0)",
	/* The window's mark: where the grant started, until a heartbeat
	 * moved it (a mark older than the grant is an earlier grant's). */
	[S_LEASE_WINDOW_GET] =
		"SELECT CASE WHEN window_at > 0 AND window_at >= g "
		"THEN window_at ELSE g END, "
		"CASE WHEN window_at > 0 AND window_at >= g "
		"THEN window_units ELSE granted_units END, progress_units "
		"FROM (SELECT window_at, window_units, granted_units, "
		"progress_units, CASE WHEN granted_at > 0 THEN granted_at "
		"ELSE created_at END AS g FROM leases "
		"WHERE id = ?1 AND epoch = ?2)",
	[S_LEASE_WINDOW_SET] = "UPDATE leases SET window_at = ?3, "
			       "window_units = ?4 WHERE id = ?1 AND epoch = ?2",
	[S_RATE_GET] = "SELECT rate FROM job_rates "
		       "WHERE job_id = ?1 AND worker_id = ?2",
	[S_RATE_FLEET] =
		"SELECT count(*), count(r.rate), coalesce(sum(r.rate), 0) "
		"FROM worker_workloads AS k "
		"JOIN workers AS w ON w.id = k.worker_id "
		"LEFT JOIN job_rates AS r ON r.job_id = ?3 "
		"AND r.worker_id = k.worker_id "
		"WHERE k.workload = ?1 AND w.quarantined = 0 AND w.drained = 0 "
		"AND (w.online = 1 OR w.last_seen >= ?2)",
	/* Primary leases only: a replica recomputes its primary's units.
	 * Carved is verified (the job's count) plus the leases still
	 * moving, so that only those are read (leases_job), however many
	 * the job has had; of those, what waits for a worker (pending) and
	 * what the holders have still to do. */
	[S_JOB_UNITS_LEFT] =
		"SELECT j.total_units, j.units_verified + "
		"coalesce(sum(l.units), 0), "
		"coalesce(sum(CASE WHEN l.state = ?2 THEN l.units - "
		"min(l.checkpoint_units, l.units) END), 0), "
		"coalesce(sum(CASE WHEN l.state = ?3 THEN l.units - "
		"min(max(l.units_done, l.checkpoint_units), l.units) END), 0) "
		"FROM jobs AS j LEFT JOIN leases AS l ON l.job_id = j.id "
		"AND l.state IN (?2, ?3, ?4) AND l.replica_of IS NULL "
		"WHERE j.id = ?1 GROUP BY j.id",
	[S_RATE_SAMPLE] =
		"SELECT job_id, CASE WHEN granted_at > 0 THEN granted_at "
		"ELSE created_at END, granted_units FROM leases "
		"WHERE id = ?1 AND epoch = ?2",
	[S_JOB_RATES_FORGET] = "DELETE FROM job_rates WHERE job_id = ?1",
	/* A spot replica's possible answerers (replica.c): the fleet less
	 * the lease's own credential. */
	[S_FLEET_OTHERS] =
		"SELECT count(*) FROM worker_workloads AS k "
		"JOIN workers AS w ON w.id = k.worker_id "
		"WHERE k.workload = ?1 AND w.quarantined = 0 AND w.drained = 0 "
		"AND (w.online = 1 OR w.last_seen >= ?2) "
		"AND w.credential IS NOT (SELECT credential FROM workers "
		"WHERE id = ?3)",
	[S_LEASE_GRACE] =
		"UPDATE leases SET deadline = max(deadline, ?2), "
		"progress_at = CASE WHEN progress_at > 0 THEN ?1 ELSE 0 END, "
		"window_at = ?1, window_units = progress_units "
		"WHERE state = ?3",
};

int store_rate_register(struct store *st, int64_t worker_id,
			const char *workloads_json, double now)
{
	int r = sdb_exec(st, S_RATE_REGISTER, SDB_ARGS(sa_int(worker_id),
			 sa_text(workloads_json)), "store_rate_register");

	return r ? r : sdb_exec(st, S_RATE_SEEN, SDB_ARGS(sa_int(worker_id),
				sa_dbl(now)), "store_rate_register");
}

int store_rate_note(struct store *st, int64_t worker_id, int64_t job_id,
		    double rate, double weight, double now)
{
	if (!(rate > 0) || !(rate < 1e18) || !(weight > 0))
		return 0;
	if (weight > 1)
		weight = 1;
	return sdb_exec(st, S_RATE_NOTE, SDB_ARGS(sa_int(job_id),
			sa_int(worker_id), sa_dbl(rate), sa_dbl(weight),
			sa_dbl(now)), "store_rate_note");
}

/* The rate of lease_id's holder since its grant at epoch, as units_done
 * reaches gpud at now; 0 in *ret when there is none to tell (no units
 * past the grant, too soon after it, no such grant). */
static int rate_sample(struct store *st, int64_t lease_id, uint64_t epoch,
		       uint64_t units_done, double now, int64_t *ret_job,
		       double *ret)
{
	double since = 0, elapsed;
	uint64_t from = 0;
	int r = sdb_one(st, S_RATE_SAMPLE, SDB_ARGS(sa_int(lease_id),
			sa_int((int64_t)epoch)), SDB_COLS(sc_i64(ret_job),
			sc_dbl(&since), sc_u64(&from)), "rate_sample");

	*ret = 0;
	if (r)
		return r == GERR_NOTFOUND ? 0 : r;
	elapsed = now - since;
	if (units_done > from && elapsed >= RATE_SAMPLE_MIN_S)
		*ret = (double)(units_done - from) / elapsed;
	return 0;
}

int store_rate_checkpoint(struct store *st, int64_t lease_id, uint64_t epoch,
			  int64_t worker_id, uint64_t units_done, double now)
{
	int64_t job_id = 0;
	double rate = 0;
	int r = rate_sample(st, lease_id, epoch, units_done, now, &job_id,
			    &rate);

	if (r || !(rate > 0) || !(rate < 1e18))
		return r;
	return sdb_exec(st, S_RATE_CHECKPOINT, SDB_ARGS(sa_int(job_id),
			sa_int(worker_id), sa_dbl(rate),
			sa_dbl(RATE_SAMPLE_WEIGHT), sa_dbl(now)),
			"store_rate_checkpoint");
}

int store_rate_result(struct store *st, int64_t lease_id, uint64_t epoch,
		      uint64_t units_done, double now)
{
	int64_t job_id = 0;
	double rate = 0;
	int r = rate_sample(st, lease_id, epoch, units_done, now, &job_id,
			    &rate);

	if (r)
		return r;
	if (!(rate < 1e18))
		rate = 0;
	return sdb_exec(st, S_RATE_RESULT, SDB_ARGS(sa_int(lease_id),
			sa_int((int64_t)epoch), sa_dbl(rate)),
			"store_rate_result");
}

int store_rate_expect(struct store *st, int64_t worker_id, int64_t job_id,
		      double *ret_own, double *ret_slowest)
{
	return sdb_one(st, S_RATE_EXPECT, SDB_ARGS(sa_int(job_id),
		       sa_int(worker_id)), SDB_COLS(sc_dbl(ret_own),
		       sc_dbl(ret_slowest)), "store_rate_expect");
}

int store_lease_window(struct store *st, int64_t lease_id, uint64_t epoch,
		       struct store_window *ret)
{
	return sdb_one(st, S_LEASE_WINDOW_GET, SDB_ARGS(sa_int(lease_id),
		       sa_int((int64_t)epoch)), SDB_COLS(sc_dbl(&ret->at),
		       sc_u64(&ret->units), sc_u64(&ret->best)),
		       "store_lease_window");
}

int store_lease_window_move(struct store *st, int64_t lease_id,
			    uint64_t epoch, double at, uint64_t units)
{
	return sdb_exec(st, S_LEASE_WINDOW_SET, SDB_ARGS(sa_int(lease_id),
			sa_int((int64_t)epoch), sa_dbl(at),
			sa_int((int64_t)units)), "store_lease_window_move");
}

int store_rate_get(struct store *st, int64_t worker_id, int64_t job_id,
		   double *ret_rate)
{
	int r = sdb_one(st, S_RATE_GET, SDB_ARGS(sa_int(job_id),
			sa_int(worker_id)), SDB_COLS(sc_dbl(ret_rate)),
			"store_rate_get");

	if (r == GERR_NOTFOUND) {
		*ret_rate = 0;
		r = 0;
	}
	return r;
}

int store_rate_fleet(struct store *st, const char *workload, int64_t job_id,
		     double seen_since, struct store_fleet *ret)
{
	return sdb_one(st, S_RATE_FLEET, SDB_ARGS(sa_text(workload),
		       sa_dbl(seen_since), sa_int(job_id)), SDB_COLS(sc_u32(&ret->workers),
		       sc_u32(&ret->known), sc_dbl(&ret->rate_sum)),
		       "store_rate_fleet");
}

int store_fleet_others(struct store *st, const char *workload,
		       int64_t worker_id, double seen_since,
		       uint32_t *ret_count)
{
	return sdb_one(st, S_FLEET_OTHERS, SDB_ARGS(sa_text(workload),
		       sa_dbl(seen_since), sa_int(worker_id)),
		       SDB_COLS(sc_u32(ret_count)), "store_fleet_others");
}

int store_job_units_left(struct store *st, int64_t job_id,
			 struct store_units_left *ret)
{
	uint64_t carved = 0;
	int r = sdb_one(st, S_JOB_UNITS_LEFT, SDB_ARGS(sa_int(job_id),
			sa_int(LEASE_PENDING), sa_int(LEASE_LEASED),
			sa_int(LEASE_DONE)),
			SDB_COLS(sc_u64(&ret->total), sc_u64(&carved),
				 sc_u64(&ret->pending), sc_u64(&ret->held)),
			"store_job_units_left");

	if (r == 0)
		ret->uncarved = ret->total > carved ? ret->total - carved : 0;
	return r;
}

int store_lease_grace(struct store *st, double now, double deadline)
{
	return sdb_exec(st, S_LEASE_GRACE, SDB_ARGS(sa_dbl(now),
			sa_dbl(deadline), sa_int(LEASE_LEASED)),
			"store_lease_grace");
}
