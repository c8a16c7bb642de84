/* gpud.c - what every module does to the shared state (gpud.h): the lease
 * policy from the configuration, job rate samples, the data directory's
 * standing, and the wake hook. Loop thread only. */
#include <stdio.h>
#include <stdlib.h>

#include "datadir.h"
#include "gerr.h"
#include "gpud.h"
#include "rate_smooth.h"
#include "scheduler.h"

struct sched_policy gpud_policy(const struct gpud *d)
{
	struct sched_policy p = {
		.lease_target_s = d->cfg.lease_target_s,
		.lease_min_s = d->cfg.lease_min_s,
		.lease_units = d->cfg.lease_units,
		.lease_timeout_s = d->cfg.lease_timeout_s,
		.max_failures = d->cfg.max_failures,
		.quarantine_after = d->cfg.quarantine_after,
		.max_leases_per_worker = d->cfg.max_leases_per_worker,
		.max_leases_per_credential = d->cfg.max_leases_per_credential,
		.progress_timeout_s = d->cfg.progress_timeout_s,
		.trust_after = d->cfg.trust_after,
		.data_dir = d->cfg.data_dir,
	};
	return p;
}

/* ---- rate samples ---- */

static struct job_rate *rate_find(struct gpud *d, int64_t job_id, int create)
{
	struct job_rate *r;

	for (r = d->rates; r; r = r->next)
		if (r->job_id == job_id)
			return r;
	if (!create)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->job_id = job_id;
	r->next = d->rates;
	d->rates = r;
	return r;
}

double gpud_rate_sample(struct gpud *d, int64_t job_id, uint64_t units,
			double now)
{
	struct job_rate *r = rate_find(d, job_id, 1);

	if (!r)
		return 0;
	rate_smooth_add(&r->sm, now, units);
	return rate_smooth_rate(&r->sm);
}

double gpud_rate_get(struct gpud *d, int64_t job_id)
{
	struct job_rate *r = rate_find(d, job_id, 0);

	return r ? rate_smooth_rate(&r->sm) : 0;
}

double gpud_rate_eta(struct gpud *d, int64_t job_id, uint64_t left, double now)
{
	struct job_rate *r = rate_find(d, job_id, 0);

	return r ? rate_smooth_eta(&r->sm, now, left) : 0;
}

void gpud_rate_clear(struct gpud *d)
{
	while (d->rates) {
		struct job_rate *n = d->rates->next;
		free(d->rates);
		d->rates = n;
	}
}

/* ---- the data directory's standing ---- */

void gpud_storage_outcome(struct gpud *d, int rc, const char *what)
{
	if (rc == GERR_NOSPACE || rc == GERR_PERM || rc == GERR_IO || rc == GERR_DB) {
		if (!d->storage_error)
			LOG_ERROR(&d->log, "cannot write the data directory %s (%s: %s); "
				  "no new leases until writes succeed again",
				  d->cfg.data_dir, what, gerr_str(rc));
		d->storage_error = rc;
		snprintf(d->storage_msg, sizeof(d->storage_msg),
			 "gpud cannot write its data directory (%s: %s)", what,
			 rc == GERR_NOSPACE ? "disk full" : gerr_str(rc));
	} else if (rc == 0 && d->storage_error) {
		gpud_storage_probe(d);
	}
}

static void probe_work(uv_work_t *w)
{
	struct gpud *d = w->data;

	d->probe_rc = datadir_probe(d->cfg.data_dir);
}

static void probe_after(uv_work_t *w, int status)
{
	struct gpud *d = w->data;

	d->probing = 0;
	if (status || d->probe_rc || !d->storage_error)
		return;
	LOG_INFO(&d->log, "the data directory is writable again");
	d->storage_error = 0;
	d->storage_msg[0] = '\0';
	gpud_wake_parked(d);
}

void gpud_storage_probe(struct gpud *d)
{
	if (!d->storage_error || d->probing || d->stopping)
		return;
	d->storage_probe.data = d;
	if (uv_queue_work(d->loop, &d->storage_probe, probe_work, probe_after) == 0)
		d->probing = 1;
}

void gpud_wake_parked(struct gpud *d)
{
	if (d->wake_parked)
		d->wake_parked(d);
}
