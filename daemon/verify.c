/* verify.c - verification of stored results (verify.h): the lease's row
 * loaded on the database thread, the workload's check on the thread pool,
 * the verdict (and merge) committed on the database thread, then logged
 * on the loop thread, which wakes parked claims (a failed lease is
 * pending again; a merge may let a waiting planner carve). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "results.h"
#include "scheduler.h"
#include "verify.h"

struct verify_req {
	uv_work_t work;
	struct gpud *d;
	struct sched_policy pol;
	struct sched_verify v;
	/* Early: checked while the upload is still being stored; commits
	 * once both halves are in (checked, and stored or dropped). */
	int early, checked, check_failed, stored, dropped;
};

static struct verify_req *verify_new(struct gpud *d, int64_t lease_id,
				     uint64_t epoch)
{
	struct verify_req *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->d = d;
	r->pol = gpud_policy(d);
	r->v.pol = &r->pol;
	r->v.lease_id = lease_id;
	r->v.epoch = epoch;
	auth_random(&r->v.seed, sizeof(r->v.seed));
	return r;
}

static void verify_commit_work(struct store *st, void *arg)
{
	struct verify_req *r = arg;
	sched_verify_commit(st, &r->v);
}

static void verify_finish(void *arg)
{
	struct verify_req *r = arg;
	struct gpud *d = r->d;
	struct sched_verify *v = &r->v;

	if (v->rc == 0 && v->passed && (v->again || v->waiting)) {
		LOG_INFO(&d->log, "lease checked, %s job=%" PRId64 " lease=%" PRId64
			 " epoch=%" PRIu64 " worker=%" PRId64, v->again ?
			 "its group changed: comparing again" :
			 "waits for another worker's result to agree",
			 v->lease.job_id, v->lease_id, v->epoch, v->lease.worker_id);
		if (v->again && !d->stopping)
			verify_lease(d, v->lease_id, v->epoch);
		else if (!d->stopping) /* a replica may be pending now */
			gpud_wake_parked(d);
		if (v->job_finished < 0)
			LOG_WARN(&d->log, "job failed job=%" PRId64 ": no two results "
				 "of lease %" PRId64 "'s group agree", v->lease.job_id,
				 v->lease_id);
	} else if (v->rc == 0) {
		if (v->passed)
			LOG_INFO(&d->log, "lease verified job=%" PRId64 " lease=%" PRId64
				 " epoch=%" PRIu64 " units=%" PRIu64 " verify_s=%.3f"
				 " decode_s=%.4f commit_s=%.4f early=%d quorum_by=%" PRId64,
				 v->lease.job_id, v->lease_id, v->epoch,
				 v->lease.units, v->seconds, v->decode_s,
				 v->commit_s, r->early, v->quorum ? v->checked_id : 0);
		if (!v->passed) {
			d->verify_failures++; /* for /metrics */
			LOG_WARN(&d->log, "lease failed verification job=%" PRId64
				 " lease=%" PRId64 " epoch=%" PRIu64 " reason=%s",
				 v->lease.job_id, v->lease_id, v->epoch, v->err);
		}
		/* A failed lease is pending again; a merge may let a planner
		 * that waited for it (GERR_AGAIN) carve the next lease. */
		if (!d->stopping)
			gpud_wake_parked(d);
		if (v->job_finished)
			LOG_INFO(&d->log, "job %s job=%" PRId64,
				 v->job_finished > 0 ? "done" : "failed", v->lease.job_id);
		if (v->job_finished > 0)
			results_job_done(d, v->lease.job_id);
	} else if (v->rc != GERR_STALE) {
		LOG_ERROR(&d->log, "verification of lease=%" PRId64 " epoch=%" PRIu64
			  " could not complete: %s", v->lease_id, v->epoch,
			  gerr_str(v->rc));
		/* The result stays done; once a write succeeds again the
		 * wake verifies every stored result again. */
		gpud_storage_outcome(d, v->rc, "committing a verification");
		if (d->storage_error)
			d->reverify = 1;
	}
	sched_verify_clear(v);
	free(r);
}

static void verify_check_work(uv_work_t *w)
{
	struct verify_req *r = w->data;
	sched_verify_check(&r->v);
}

static void verify_check_after(uv_work_t *w, int status)
{
	struct verify_req *r = w->data;

	if (status == 0 &&
	    dbq_submit(r->d->dbq, verify_commit_work, verify_finish, r) == 0)
		return;
	r->v.rc = GERR_STATE;
	verify_finish(r);
}

static void verify_load_work(struct store *st, void *arg)
{
	struct verify_req *r = arg;
	sched_verify_load(st, &r->v);
}

static void verify_load_after(void *arg)
{
	struct verify_req *r = arg;

	if (r->v.rc == 0 && r->d->stopping) {
		/* not a verdict: the stored result stays done, and start-up
		 * recovery verifies it */
		LOG_INFO(&r->d->log, "verification of lease=%" PRId64 " epoch=%"
			 PRIu64 " left to the next start: gpud is stopping",
			 r->v.lease_id, r->v.epoch);
		sched_verify_clear(&r->v);
		free(r);
		return;
	}
	if (r->v.rc == 0) {
		r->work.data = r;
		if (uv_queue_work(r->d->loop, &r->work, verify_check_work,
				  verify_check_after) == 0)
			return;
		r->v.rc = GERR_STATE;
	}
	verify_finish(r);
}

void verify_lease(struct gpud *d, int64_t lease_id, uint64_t epoch)
{
	struct verify_req *r = verify_new(d, lease_id, epoch);

	if (r && dbq_submit(d->dbq, verify_load_work, verify_load_after, r))
		free(r);
}

/* The lease row (done at the epoch checked), then the usual commit. */
static void verify_early_commit_work(struct store *st, void *arg)
{
	struct verify_req *r = arg;

	sched_verify_load(st, &r->v);
	if (r->v.rc == 0)
		sched_verify_commit(st, &r->v);
}

static void verify_early_join(struct verify_req *r)
{
	struct gpud *d = r->d;

	if (!r->checked || !(r->stored || r->dropped))
		return;
	if (r->dropped || r->check_failed || d->stopping) {
		/* Stored but not checked: the usual way (or, when stopping,
		 * start-up recovery) verifies it. */
		if (r->stored && r->check_failed && !d->stopping)
			verify_lease(d, r->v.lease_id, r->v.epoch);
		sched_verify_clear(&r->v);
		free(r);
		return;
	}
	if (dbq_submit(d->dbq, verify_early_commit_work, verify_finish, r) == 0)
		return;
	r->v.rc = GERR_STATE;
	verify_finish(r);
}

static void verify_early_check_after(uv_work_t *w, int status)
{
	struct verify_req *r = w->data;

	r->checked = 1;
	r->check_failed = status != 0;
	verify_early_join(r);
}

struct verify_req *verify_early(struct gpud *d, struct sched_upload *u)
{
	struct verify_req *r = verify_new(d, u->lease_id, u->epoch);

	if (!r)
		return NULL;
	r->early = 1;
	r->v.workload = strdup(u->workload);
	r->v.params = strdup(u->params);
	r->v.spec = strdup(u->spec);
	r->v.raw = u->raw;
	r->v.raw_len = u->raw_len;
	r->work.data = r;
	if (!r->v.workload || !r->v.params || !r->v.spec ||
	    uv_queue_work(d->loop, &r->work, verify_check_work,
			  verify_early_check_after) != 0) {
		r->v.raw = NULL; /* still the upload's */
		sched_verify_clear(&r->v);
		free(r);
		return NULL;
	}
	u->raw = NULL;
	u->raw_len = 0;
	return r;
}

void verify_stored(struct verify_req *r, int stored)
{
	r->stored = stored;
	r->dropped = !stored;
	verify_early_join(r);
}
