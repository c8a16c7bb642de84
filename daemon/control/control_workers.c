/* control_workers.c - gpuctl's hold on workers: worker_drain (the worker
 * finishes the lease it holds and is granted no more), worker_resume
 * (undoes it) and worker_forgive (out of quarantine, its failure counts
 * reset). A name is one process's (CREDENTIAL@INSTANCE) or a
 * credential's, for every process of it. What they change is stored on
 * the worker rows (migration 018), so it outlasts a gpud restart; the
 * claim's refusal is sched_claim.c's. The requests come checked
 * (ctlcmd.h); these are the steps of their table rows (control.c). */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "control_internal.h"
#include "gerr.h"
#include "store.h"

_Static_assert(CTLCMD_WORKER_NAME_MAX <= STORE_WORKER_NAME_MAX,
	       "a worker name gpuctl may send, the store takes");

void ctl_worker_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	enum ctlcmd_id id = r->in.cmd;
	const char *name = r->in.name;
	const char *event = id == CTLCMD_WORKER_DRAIN ? "worker_drain"
			    : id == CTLCMD_WORKER_RESUME ? "worker_resume"
							 : "worker_forgive";
	uint64_t n = 0;
	int rc;

	/* Printable ASCII only: the name goes into logs and events. */
	for (const char *p = name; *p; p++)
		if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e) {
			snprintf(r->err, sizeof(r->err), "a worker name is printable "
				 "ASCII without spaces");
			return;
		}
	if (id == CTLCMD_WORKER_FORGIVE)
		rc = store_worker_forgive(st, name, &n);
	else
		rc = store_worker_drain(st, name, id == CTLCMD_WORKER_DRAIN, &n);
	if (rc == GERR_NOTFOUND) {
		snprintf(r->err, sizeof(r->err), "no worker named '%.*s' (gpuctl "
			 "workers lists them: CREDENTIAL@INSTANCE, or a credential "
			 "for all its processes)", CTLCMD_WORKER_NAME_MAX, name);
		return;
	}
	if (rc) {
		snprintf(r->err, sizeof(r->err), "cannot change worker '%.*s': %s",
			 CTLCMD_WORKER_NAME_MAX, name, gerr_str(rc));
		return;
	}
	/* The operator's acts, in the events table with the workers'. */
	store_event(st, gclock_wall(), 0, 0, 0, 0, event, name);
	r->reply = ctlcmd_reply_encode(id, &(struct ctlcmd_reply){
		.worker = name, .changed = (int64_t)n });
	if (!r->reply)
		snprintf(r->err, sizeof(r->err), "out of memory");
}
