/* sched_hold.c - what a worker does with a lease it holds: heartbeat,
 * checkpoint or result upload (its load step), release; database thread.
 *
 * Invariants
 *  1. Every message about a lease is acted on only when its sender holds
 *     the grant (lease_held): the lease is leased, at the message's epoch,
 *     to the sender's worker id. A worker that reconnects with the same
 *     token has the same id, so it keeps its lease.
 *  2. Every refusal for not holding the lease gives the sender the same
 *     reply (SCHED_NOT_HELD, or "stop" to a heartbeat), whatever the lease's
 *     real state: the reply tells nothing about other workers' leases. Only
 *     the log and the event say why.
 *  3. A sender naming a grant that was never its own is charged
 *     (foreign_msgs); ordinary staleness (its lease expired or was
 *     re-issued since) is not.
 *  4. No report over the lease's units is recorded (heartbeat, checkpoint,
 *     result): progress shown is bounded by the lease size.
 *  5. With a progress timeout, a held lease whose reported progress has not
 *     grown for that long goes back to pending at its last checkpoint, and
 *     its holder is charged with a stall.
 *  6. A release that carries an error is a failure of the lease, counted
 *     with failed verifications against max_failures: the lease, then its
 *     job, fails with a reason naming the lease and the last error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "gerr.h"
#include "scheduler.h"

/* Invariants 1 and 3: 0 with the lease's row in *l when worker_id holds
 * (lease_id, epoch), else GERR_STALE (or a store error) with why for the
 * log and *foreign set when that grant was never the sender's. */
static int lease_held(struct store *st, int64_t lease_id, uint64_t epoch,
		      int64_t worker_id, struct store_lease *l, int *foreign,
		      char *why, size_t whylen)
{
	int rc = store_lease_get(st, lease_id, l);

	*foreign = 0;
	if (rc == GERR_NOTFOUND) {
		*foreign = 1;
		snprintf(why, whylen, "no lease %" PRId64, lease_id);
		return GERR_STALE;
	}
	if (rc)
		return rc;
	if (epoch > l->epoch) {
		*foreign = 1;
		snprintf(why, whylen, "lease %" PRId64 " was never granted at "
			 "epoch %" PRIu64 " (it is at %" PRIu64 ")", lease_id,
			 epoch, l->epoch);
	} else if (epoch == l->epoch && l->worker_id &&
		   l->worker_id != worker_id) {
		*foreign = 1;
		snprintf(why, whylen, "lease %" PRId64 " epoch %" PRIu64
			 " was granted to worker id %" PRId64, lease_id, epoch,
			 l->worker_id);
	} else if (l->state != LEASE_LEASED || epoch != l->epoch ||
		   l->worker_id != worker_id) {
		snprintf(why, whylen, "lease %" PRId64 " is %s at epoch %" PRIu64
			 ", the message is for epoch %" PRIu64, lease_id,
			 lease_state_name(l->state), l->epoch, epoch);
	} else {
		return 0;
	}
	store_lease_clear(l);
	return GERR_STALE;
}

/* Invariant 3: charge the sender, with an event naming the message. A
 * failure here changes nothing for the reply (invariant 2). */
static void charge_foreign(struct store *st, const struct sched_policy *pol,
			   int64_t worker_id, int64_t lease_id, uint64_t epoch,
			   const char *what, int *ret_quarantined)
{
	double now = gclock_wall();
	int rc = store_begin(st);

	if (rc)
		return;
	rc = store_worker_charge(st, worker_id, STORE_CHARGE_FOREIGN,
				 pol->quarantine_after, ret_quarantined);
	if (!rc)
		rc = store_event(st, now, 0, lease_id, epoch, worker_id,
				 "foreign", what);
	if (!rc)
		rc = store_commit(st);
	else
		store_rollback(st);
}

/* Invariant 4. */
static int units_over(uint64_t units_done, const struct store_lease *l,
		      char *err, size_t errlen)
{
	if (units_done <= l->units)
		return 0;
	snprintf(err, errlen, "units_done %" PRIu64 " is more than the "
		 "lease's %" PRIu64 " units", units_done, l->units);
	return GERR_INVAL;
}

/* ---- heartbeat ---- */

/* Invariant 5: revoke l when its progress has not grown for the timeout.
 * Returns 0 (h->revoked says whether it was) or a store error. */
static int check_progress(struct store *st, struct sched_heartbeat *h,
			  const struct store_lease *l, double now)
{
	uint64_t best = 0;
	double at = 0;
	int rc = store_lease_progress(st, l->id, &best, &at);

	if (rc)
		return rc;
	/* at == 0: no report yet under this grant (the clock starts now). */
	if (at == 0 || h->units_done > best ||
	    now - at < h->pol->progress_timeout_s)
		return 0;
	snprintf(h->why, sizeof(h->why), "no progress for %.0f s "
		 "(--progress-timeout %.0f): %" PRIu64 " of %" PRIu64 " units",
		 now - at, h->pol->progress_timeout_s, best, l->units);
	rc = store_begin(st);
	if (rc)
		return rc;
	rc = store_lease_revoke(st, l->id, l->epoch, h->why, now);
	if (!rc)
		rc = store_worker_charge(st, h->worker_id, STORE_CHARGE_STALL,
					 h->pol->quarantine_after,
					 &h->quarantined);
	if (!rc)
		rc = store_event(st, now, l->job_id, l->id, l->epoch,
				 h->worker_id, "revoked", h->why);
	if (!rc)
		rc = store_commit(st);
	else
		store_rollback(st);
	if (!rc) {
		h->revoked = 1;
		h->action = MSG_HB_STOP;
	}
	return rc;
}

void sched_heartbeat(struct store *st, struct sched_heartbeat *h)
{
	double now = gclock_wall();
	struct store_lease l = {0};
	struct store_job job = {0};

	h->action = MSG_HB_CONTINUE;
	h->job_id = 0;
	h->job_progress = 0;
	h->foreign = h->revoked = h->quarantined = 0;
	h->err[0] = h->why[0] = '\0';
	h->rc = lease_held(st, h->lease_id, h->epoch, h->worker_id, &l,
			   &h->foreign, h->why, sizeof(h->why));
	if (h->rc == GERR_STALE) {
		h->action = MSG_HB_STOP;
		if (h->foreign)
			charge_foreign(st, h->pol, h->worker_id, h->lease_id,
				       h->epoch, "heartbeat", &h->quarantined);
		return;
	}
	if (h->rc)
		return;
	h->rc = units_over(h->units_done, &l, h->err, sizeof(h->err));
	if (!h->rc && h->pol->progress_timeout_s > 0)
		h->rc = check_progress(st, h, &l, now);
	if (h->rc || h->revoked)
		goto out;
	h->rc = store_lease_heartbeat(st, h->lease_id, h->epoch, h->units_done,
				      now + h->pol->lease_timeout_s, now);
	if (h->rc)
		goto out;
	h->job_id = l.job_id;
	if (store_job_get(st, l.job_id, &job) == 0) {
		if (job.state == JOB_PAUSED)
			h->action = MSG_HB_RELEASE;
		else if (job.state != JOB_ACTIVE)
			h->action = MSG_HB_STOP;
	}
	store_job_clear(&job);
	h->job_progress = sched_job_progress(st, l.job_id);
out:
	store_lease_clear(&l);
}

uint64_t sched_job_progress(struct store *st, int64_t job_id)
{
	uint64_t u = 0;

	if (store_job_units_progress(st, job_id, &u) != 0)
		return 0;
	return u;
}

/* ---- uploads: the load step ---- */

void sched_upload_load(struct store *st, struct sched_upload *u)
{
	struct store_lease l = {0};
	struct store_job job = {0};

	u->foreign = u->quarantined = 0;
	u->why[0] = '\0';
	u->rc = lease_held(st, u->lease_id, u->epoch, u->worker_id, &l,
			   &u->foreign, u->why, sizeof(u->why));
	if (u->rc == GERR_STALE) {
		snprintf(u->err, sizeof(u->err), "%s", SCHED_NOT_HELD);
		if (u->foreign)
			charge_foreign(st, u->pol, u->worker_id, u->lease_id,
				       u->epoch, u->is_result ? "result"
							      : "checkpoint",
				       &u->quarantined);
		return;
	}
	if (u->rc)
		return;
	u->rc = units_over(u->units_done, &l, u->err, sizeof(u->err));
	if (u->rc == 0)
		u->rc = store_job_get(st, l.job_id, &job);
	if (u->rc == 0) {
		u->job_id = l.job_id;
		u->workload = strdup(job.workload);
		u->params = strdup(job.params);
		u->spec = strdup(l.spec);
		if (!u->workload || !u->params || !u->spec)
			u->rc = GERR_NOMEM;
	}
	store_job_clear(&job);
	store_lease_clear(&l);
}

/* ---- release ---- */

/* Invariant 6: the run of l failed on its holder. */
static int release_failed(struct store *st, struct sched_release *r,
			  const struct store_lease *l, double now)
{
	enum lease_state ns = LEASE_PENDING;
	char reason[400];
	int rc;

	snprintf(reason, sizeof(reason), "run failed: %s", r->error);
	rc = store_lease_run_failed(st, r->lease_id, r->epoch, reason,
				    r->pol->max_failures, now, &ns);
	if (!rc)
		rc = store_event(st, now, l->job_id, r->lease_id, r->epoch,
				 r->worker_id, "run_failed", r->error);
	if (rc)
		return rc;
	if (ns == LEASE_FAILED) {
		snprintf(reason, sizeof(reason), "lease %" PRId64 " failed %u "
			 "times; last: run failed on a worker: %s", r->lease_id,
			 l->failures + 1, r->error);
		rc = store_job_set_state(st, l->job_id, JOB_FAILED, reason, now);
		if (!rc)
			rc = store_event(st, now, l->job_id, r->lease_id,
					 r->epoch, r->worker_id, "job_failed",
					 reason);
		r->job_failed = rc == 0;
		return rc;
	}
	snprintf(reason, sizeof(reason), "lease %" PRId64 " failed on a worker "
		 "(failure %u of %u allowed): %s", r->lease_id, l->failures + 1,
		 r->pol->max_failures, r->error);
	return store_job_set_reason(st, l->job_id, reason);
}

void sched_release(struct store *st, struct sched_release *r)
{
	double now = gclock_wall();
	struct store_lease l = {0};
	int rc;

	r->job_id = 0;
	r->job_failed = r->foreign = r->quarantined = 0;
	r->why[0] = '\0';
	r->rc = lease_held(st, r->lease_id, r->epoch, r->worker_id, &l,
			   &r->foreign, r->why, sizeof(r->why));
	if (r->rc == GERR_STALE && r->foreign)
		charge_foreign(st, r->pol, r->worker_id, r->lease_id, r->epoch,
			       "release", &r->quarantined);
	if (r->rc)
		return;
	r->job_id = l.job_id;
	rc = store_begin(st);
	if (rc)
		goto out;
	if (r->error[0]) {
		rc = release_failed(st, r, &l, now);
	} else {
		rc = store_lease_release(st, r->lease_id, r->epoch, now);
		if (!rc)
			rc = store_event(st, now, l.job_id, r->lease_id,
					 r->epoch, r->worker_id, "release",
					 NULL);
	}
	if (!rc)
		rc = store_commit(st);
	else
		store_rollback(st);
out:
	if (rc)
		r->job_failed = 0;
	r->rc = rc;
	store_lease_clear(&l);
}
