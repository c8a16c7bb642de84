/* control_lifecycle.c - the jobs' lifecycles the operator steers: requeue
 * (a failed or cancelled job back to the queue, its verified work kept)
 * and what submit stores of --after and --time-limit. The time limit's
 * enforcement, the failure of a job whose predecessor failed and the end
 * hook are gpud's lifecycle tick (daemon/lifecycle.c); the store's side is
 * store_lifecycle.c. The requests come checked (ctlcmd.h); these are the
 * steps of their table rows (control.c). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "control_internal.h"
#include "gerr.h"
#include "store.h"
#include "store_lifecycle.h"

_Static_assert(CTLCMD_TIME_LIMIT_MIN == STORE_TIME_LIMIT_MIN &&
	       CTLCMD_TIME_LIMIT_MAX == STORE_TIME_LIMIT_MAX,
	       "submit's time limit, the store's");

int ctl_submit_lifecycle(struct store *st, struct ctl_req *r, int64_t id)
{
	int rc;

	if (!r->in.after && !r->in.time_limit)
		return 0;
	rc = store_job_set_lifecycle(st, id, r->in.after, (double)r->in.time_limit);
	/* The operator's mistake, not the disk's: said as the store says it. */
	if (rc == GERR_NOTFOUND || rc == GERR_INVAL)
		snprintf(r->err, sizeof(r->err), "%s", store_errmsg(st));
	if (rc || !r->in.after)
		return rc;
	/* A predecessor that already failed would leave it waiting forever
	 * (the tick fails only the dependents of ends still to come). */
	struct store_lifecycle lc;
	if ((rc = store_job_lifecycle_get(st, id, &lc)))
		return rc;
	if (lc.after_state == JOB_FAILED || lc.after_state == JOB_CANCELLED) {
		snprintf(r->err, sizeof(r->err), "job %" PRId64 " is %s: it will "
			 "never be done (gpuctl requeue %" PRId64 " first, or "
			 "submit without --after)", r->in.after,
			 job_state_name(lc.after_state), r->in.after);
		return GERR_STATE;
	}
	return 0;
}

void ctl_requeue_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	double now = gclock_wall();
	uint64_t n = 0;
	char detail[64];
	int rc = store_begin(st);

	if (!rc)
		rc = store_job_requeue(st, r->in.job, now, &n);
	if (!rc) {
		snprintf(detail, sizeof(detail), "%" PRIu64 " lease(s) run again", n);
		rc = store_event(st, now, r->in.job, 0, 0, 0, "requeue", detail);
	}
	if (!rc)
		rc = store_commit(st);
	else
		store_rollback(st);
	if (rc == GERR_NOTFOUND || rc == GERR_STATE) {
		snprintf(r->err, sizeof(r->err), "%s", store_errmsg(st));
		return;
	}
	if (rc) {
		snprintf(r->err, sizeof(r->err), "requeue failed: %s", gerr_str(rc));
		return;
	}
	r->reply = ctlcmd_reply_encode(CTLCMD_REQUEUE, &(struct ctlcmd_reply){
		.job = r->in.job, .state = "queued", .requeued = (int64_t)n });
	if (!r->reply)
		snprintf(r->err, sizeof(r->err), "out of memory");
}
