/* control_events.c - `gpuctl events JOB`: a job's event log (the rows
 * gpud wrote about it and its leases: submit, grants, checkpoints,
 * results, verification, expiries, cancel..), oldest first, read on the
 * database thread (store_event_job) with the job's state, so that
 * --follow knows when the job has ended. The reply keeps to one frame:
 * the newest rows that fit, and how many older ones were left out.
 * control.h has the shapes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_internal.h"
#include "gerr.h"
#include "proto.h"
#include "store.h"
#include "store_events.h"

_Static_assert(CTLCMD_EVENTS_LIMIT_MAX <= STORE_EVENTS_JOB_MAX, "events' limit");

/* The first of ev[0..n) from which the newest rows fit in half a reply
 * frame, counting each text twice (JSON's escapes) and a row's keys and
 * numbers: the rest are left out of the reply (its "left_out"). */
static size_t fitting(const struct store_event_row *ev, size_t n)
{
	size_t used = 0, i = n;

	while (i > 0) {
		const struct store_event_row *e = &ev[i - 1];
		size_t row = 160 + 2 * (strlen(e->kind) +
				       (e->detail ? strlen(e->detail) : 0) +
				       (e->worker ? strlen(e->worker) : 0));

		if (used + row > PROTO_MAX_JSON / 2)
			break;
		used += row;
		i--;
	}
	return i;
}

void ctl_events_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	struct store_job j = {0};
	struct store_event_row *ev = NULL;
	struct ctlcmd_event *rows = NULL;
	size_t n = 0, first;
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
	first = fitting(ev, n);
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		goto out;
	}
	for (size_t i = first; i < n; i++)
		rows[i - first] = (struct ctlcmd_event){
			.id = ev[i].id, .ts = ev[i].ts, .kind = ev[i].kind,
			.detail = ev[i].detail, .lease = ev[i].lease_id,
			.epoch = ev[i].epoch, .worker = ev[i].worker };
	/* Nothing new: the caller's mark stays. */
	r->reply = ctlcmd_reply_encode(CTLCMD_EVENTS, &(struct ctlcmd_reply){
		.job = r->in.job, .state = job_state_name(j.state),
		.events = rows, .n_events = n - first, .left_out = (int64_t)first,
		.last_event = n ? ev[n - 1].id : r->in.after });
	if (!r->reply)
		snprintf(r->err, sizeof(r->err), "out of memory");
out:
	free(rows);
	store_event_rows_free(ev, n);
	store_job_clear(&j);
}
