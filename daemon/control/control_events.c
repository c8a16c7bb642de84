/* control_events.c - `gpuctl events JOB`: a job's event log (the rows
 * gpud wrote about it and its leases: submit, grants, checkpoints,
 * results, verification, expiries, cancel..), oldest first, read on the
 * database thread (store_event_job) with the job's state, so that
 * --follow knows when the job has ended. control.h has the shapes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "control_internal.h"
#include "gerr.h"
#include "store.h"
#include "store_events.h"

_Static_assert(CTLCMD_EVENTS_LIMIT_MAX <= STORE_EVENTS_JOB_MAX, "events' limit");

void ctl_events_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	struct store_job j = {0};
	struct store_event_row *ev = NULL;
	struct ctlcmd_event *rows = NULL;
	size_t n = 0;
	int rc;

	rc = store_job_get(st, r->in.job, &j);
	if (rc) {
		snprintf(r->err, sizeof(r->err), rc == GERR_NOTFOUND ? "no job %"
			 PRId64 : "cannot read job %" PRId64, r->in.job);
		return;
	}
	if (store_event_job(st, r->in.job, r->in.after, (double)r->in.since,
			    (size_t)r->in.limit, &ev, &n)) {
		snprintf(r->err, sizeof(r->err), "cannot read job %" PRId64
			 "'s events: %s", r->in.job, store_errmsg(st));
		goto out;
	}
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		rows[i] = (struct ctlcmd_event){
			.id = ev[i].id, .ts = ev[i].ts, .kind = ev[i].kind,
			.detail = ev[i].detail, .lease = ev[i].lease_id,
			.epoch = ev[i].epoch, .worker = ev[i].worker };
	/* Nothing new: the caller's mark stays. */
	r->reply = ctlcmd_reply_encode(CTLCMD_EVENTS, &(struct ctlcmd_reply){
		.job = r->in.job, .state = job_state_name(j.state),
		.events = rows, .n_events = n,
		.last_event = n ? ev[n - 1].id : r->in.after });
	if (!r->reply)
		snprintf(r->err, sizeof(r->err), "out of memory");
out:
	free(rows);
	store_event_rows_free(ev, n);
	store_job_clear(&j);
}
