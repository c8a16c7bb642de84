/* control_jobs.c - the queue's commands: status (jobs with their state,
 * reason, progress and figures), history (finished jobs, newest first,
 * filtered by the store's query) and priority (control.h has the shapes).
 *
 * The requests come checked (ctlcmd.h); these are the steps of their
 * table rows (control.c).
 *
 * A job's JSON is built in two steps: what the database knows on the
 * database thread (job_json), then on the loop thread what only the loop
 * knows (job_live): rate, ETA, and why a queued job does not run, which
 * depends on the connected workers.
 *
 * States shown: the store's active job is "running" while one of its
 * leases is held, else "queued", and a queued job always has a reason.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "conn.h"
#include "control_internal.h"
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "scheduler.h"
#include "store.h"
#include "store_lifecycle.h"
#include "workload.h"

#define DAY_S 86400.0
/* status hides jobs finished longer ago than this (unless "all"). */
#define STATUS_KEEP_S DAY_S
/* history shows this far back (unless "all"). */
#define HISTORY_KEEP_S (30 * DAY_S)
/* How long gpuctl status mentions a descriptor shortage after the last. */
#define FD_WARN_MS (5 * 60 * 1000)

/* ---- the database's part ---- */

/* One job of the reply as it is built: its row (struct ctlcmd_job, which
 * borrows from the store's job and from here) and what the loop's part
 * needs besides. */
struct job_extra {
	int carve_done;
	char *held_by;          /* "every lease is held: ..", or NULL; owned */
	char *damaged;          /* owned */
	char **holders;         /* owned, n_holders names */
	size_t n_holders;
	json_t *params;         /* owned */
	char *why;              /* the reason the loop gives, owned */
	enum job_state after_state; /* of the job it runs after (lifecycle) */
	const char *after_shown;    /* that job's state as status shows it */
};

/* An active job in queue order, for the reasons of queued jobs. */
struct queued {
	int64_t id;
	const char *workload;   /* borrowed from jobs->list */
	int running;
	int priority;
};

struct ctl_jobs {
	struct store_job *list; /* owned; the rows borrow its strings */
	size_t n;
	struct ctlcmd_job *rows;
	struct job_extra *extra;
	size_t n_rows;
	struct queued *queue;
	size_t n_queue;
	uint64_t hidden;
};

_Static_assert(LEASE_NSTATES == CTLCMD_LEASE_STATES, "a job's lease counts");

static void jobs_free(struct ctl_jobs *js)
{
	if (!js)
		return;
	for (size_t i = 0; i < js->n_rows; i++) {
		struct job_extra *x = &js->extra[i];

		free(x->damaged);
		free(x->held_by);
		free(x->why);
		for (size_t k = 0; k < x->n_holders; k++)
			free(x->holders[k]);
		free(x->holders);
		json_decref(x->params);
	}
	free(js->rows);
	free(js->extra);
	free(js->queue);
	store_job_free_array(js->list, js->n);
	free(js);
}

/* The state a user sees: active is running or queued. */
static const char *shown_state(enum job_state s, uint64_t held)
{
	if (s == JOB_ACTIVE)
		return held ? "running" : "queued";
	return job_state_name(s);
}

/* The names of the workers that hold the job's leases, into x. */
static void holders_get(struct store *st, int64_t job, struct job_extra *x)
{
	struct store_lease *leases = NULL;
	size_t nl = 0;

	if (store_lease_list_job(st, job, &leases, &nl))
		return;
	x->holders = nl ? calloc(nl, sizeof(*x->holders)) : NULL;
	for (size_t i = 0; x->holders && i < nl; i++) {
		struct store_worker w = {0};

		if (leases[i].state != LEASE_LEASED || !leases[i].worker_id)
			continue;
		if (store_worker_get(st, leases[i].worker_id, &w) == 0 && w.name &&
		    (x->holders[x->n_holders] = strdup(w.name)))
			x->n_holders++;
		store_worker_clear(&w);
	}
	store_lease_free_array(leases, nl);
}

static void job_row(struct store *st, const struct store_job *j, double now,
		    struct ctlcmd_job *row, struct job_extra *x)
{
	uint64_t counts[LEASE_NSTATES] = {0}, rcounts[LEASE_NSTATES] = {0};
	uint64_t waiting = 0, wfailed = 0, held;
	struct store_job_stats fig = {0};
	int full = 0;
	const struct workload *wl = workload_find(j->workload);
	double elapsed;

	store_lease_counts(st, j->id, counts);
	store_damage_get(st, j->id, &x->damaged);
	store_replica_counts(st, j->id, rcounts);
	store_replica_waiting(st, j->id, &waiting);
	store_lease_failed_waiting(st, j->id, &wfailed);
	store_job_get_replicate(st, j->id, &full);
	store_job_stats(st, j->id, &fig);
	held = counts[LEASE_LEASED] + rcounts[LEASE_LEASED];
	/* job_live shows it as the reason while a worker waits for work. */
	char holders[256] = "";
	if (j->state == JOB_ACTIVE && j->carve_done && counts[LEASE_LEASED] &&
	    !counts[LEASE_PENDING])
		sched_holders(st, j->id, holders, sizeof(holders));
	if (holders[0])
		x->held_by = strdup(holders);
	if (held)
		holders_get(st, j->id, x);
	x->carve_done = j->carve_done;
	x->params = ctl_json_from_text(j->params);
	/* The time it ran: no paused spans, nor the time it sat finished
	 * before an extend (019). */
	elapsed = store_job_run_seconds(j, now);
	*row = (struct ctlcmd_job){
		.id = j->id, .name = j->name, .workload = j->workload,
		.unit_name = wl ? wl->unit_name : "units",
		.state = shown_state(j->state, held), .priority = j->priority,
		.params = x->params, .total_units = (int64_t)j->total_units,
		/* Never goes back: what a held lease did since its
		 * checkpoint is apart, in units_running, as the holder may
		 * yet lose it. */
		.units_done = (int64_t)fig.units_saved,
		.units_running = (int64_t)fig.units_running,
		.units_verified = (int64_t)j->units_verified,
		.replicas_waiting = (int64_t)waiting,
		.failed_waiting = (int64_t)wfailed,
		.check = full ? "full" : "sample",
		.workers = (const char **)x->holders, .n_workers = x->n_holders,
		.reason = j->reason,
		.submitted_at = j->created_at, .created_at = j->created_at,
		.started_at = j->started_at > 0 ? j->started_at : 0,
		.finished_at = j->finished_at > 0 ? j->finished_at : 0,
		.elapsed_s = elapsed,
		.avg_rate = elapsed > 0 ? (double)fig.units_saved / elapsed : 0,
		.attempts = (int64_t)fig.attempts,
		.verify_failures = (int64_t)fig.verify_failures,
		.damaged = x->damaged,
		.owner = j->owner,
	};
	/* submit --after, --time-limit (control_lifecycle.c). */
	struct store_lifecycle lc;
	if (store_job_lifecycle_get(st, j->id, &lc) == 0) {
		row->after_job = lc.after_job;
		row->time_limit_s = lc.time_limit;
		row->ran_s = lc.ran_s;
		x->after_state = lc.after_state;
		x->after_shown = "gone";
		if (lc.after_job && lc.after_state < JOB_NSTATES) {
			uint64_t ac[LEASE_NSTATES] = {0};
			store_lease_counts(st, lc.after_job, ac);
			x->after_shown = shown_state(lc.after_state, ac[LEASE_LEASED]);
		}
	}
	for (int s = 0; s < LEASE_NSTATES; s++) {
		row->leases[s] = (int64_t)counts[s];
		row->replicas[s] = (int64_t)rcounts[s];
	}
}

/* Queue order: the highest priority, then the oldest. */
static int rank_cmp(const void *a, const void *b)
{
	const struct queued *x = a, *y = b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* Rows for the jobs of js->list that want (all, or job's; user's only
 * when user is not NULL), and the queue; 0 or -1 when out of memory. */
static int jobs_build(struct store *st, struct ctl_jobs *js, int64_t job,
		      const char *user, double now)
{
	js->rows = calloc(js->n ? js->n : 1, sizeof(*js->rows));
	js->extra = calloc(js->n ? js->n : 1, sizeof(*js->extra));
	js->queue = calloc(js->n ? js->n : 1, sizeof(*js->queue));
	if (!js->rows || !js->extra || !js->queue)
		return -1;
	for (size_t i = 0; i < js->n; i++) {
		const struct store_job *j = &js->list[i];
		uint64_t c[LEASE_NSTATES] = {0}, rc[LEASE_NSTATES] = {0};

		if ((!job || j->id == job) &&
		    (!user || (j->owner && strcmp(j->owner, user) == 0))) {
			job_row(st, j, now, &js->rows[js->n_rows], &js->extra[js->n_rows]);
			js->n_rows++;
		}
		if (j->state != JOB_ACTIVE)
			continue;
		store_lease_counts(st, j->id, c);
		store_replica_counts(st, j->id, rc);
		js->queue[js->n_queue++] = (struct queued){ j->id, j->workload,
			c[LEASE_LEASED] + rc[LEASE_LEASED] > 0, j->priority };
	}
	if (js->n_queue > 1)
		qsort(js->queue, js->n_queue, sizeof(*js->queue), rank_cmp);
	return 0;
}

void ctl_status_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	double now = gclock_wall();
	struct ctl_jobs *js = calloc(1, sizeof(*js));

	/* Every job not finished, so that the queue is whole even when one
	 * job is asked for. */
	if (!js || store_job_list_recent(st, r->in.job || r->in.all ? 0 :
					 now - STATUS_KEEP_S, &js->list, &js->n,
					 &js->hidden)) {
		snprintf(r->err, sizeof(r->err), "cannot list jobs: %s",
			 js ? store_errmsg(st) : "out of memory");
		free(js);
		return;
	}
	r->jobs = js;
	if (jobs_build(st, js, r->in.job, r->in.user, now))
		snprintf(r->err, sizeof(r->err), "out of memory");
	else if (r->in.job && js->n_rows == 0)
		snprintf(r->err, sizeof(r->err), "no job %" PRId64, r->in.job);
	if (r->in.job)
		js->hidden = 0;
}

/* history's "state": a finished one's, into *ret (-1 when absent); -1
 * when it names another. */
static int history_state(const char *name, int *ret)
{
	static const enum job_state finished[] = { JOB_DONE, JOB_FAILED, JOB_CANCELLED };

	*ret = -1;
	for (size_t i = 0; name && i < sizeof(finished) / sizeof(finished[0]); i++)
		if (strcmp(name, job_state_name(finished[i])) == 0)
			*ret = (int)finished[i];
	return name && *ret < 0 ? -1 : 0;
}

void ctl_history_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	double now = gclock_wall();
	struct ctl_jobs *js;
	struct store_history_filter f = {
		/* Without a window, the last HISTORY_KEEP_S. */
		.since = r->in.since ? (double)r->in.since :
			 r->in.all || r->in.until ? 0 : now - HISTORY_KEEP_S,
		.until = (double)r->in.until, .state = -1,
		.workload = r->in.workload, .owner = r->in.user,
		.limit = (uint32_t)r->in.limit };

	if (history_state(r->in.state, &f.state)) {
		snprintf(r->err, sizeof(r->err), "a finished job's state is done, "
			 "failed or cancelled, not '%.32s'", r->in.state);
		return;
	}
	if (r->in.until && r->in.since >= r->in.until) {
		snprintf(r->err, sizeof(r->err), "history's 'since' must be before "
			 "its 'until'");
		return;
	}
	js = calloc(1, sizeof(*js));
	if (!js || store_job_history_filter(st, &f, &js->list, &js->n)) {
		snprintf(r->err, sizeof(r->err), "cannot list jobs: %s",
			 js ? store_errmsg(st) : "out of memory");
		free(js);
		return;
	}
	r->jobs = js;
	if (jobs_build(st, js, 0, NULL, now))
		snprintf(r->err, sizeof(r->err), "out of memory");
}

void ctl_priority_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	int p = (int)r->in.priority;
	struct store_job j = {0};
	char detail[32];
	int rc;

	if (store_job_get(st, r->in.job, &j)) {
		snprintf(r->err, sizeof(r->err), "no job %" PRId64, r->in.job);
		return;
	}
	if (j.state != JOB_ACTIVE && j.state != JOB_PAUSED) {
		snprintf(r->err, sizeof(r->err), "job %" PRId64 " is %s: only a "
			 "queued, running or paused job has a priority", r->in.job,
			 job_state_name(j.state));
		store_job_clear(&j);
		return;
	}
	store_job_clear(&j);
	snprintf(detail, sizeof(detail), "priority=%d", p);
	rc = store_begin(st);
	if (!rc)
		rc = store_job_set_priority(st, r->in.job, p);
	if (!rc)
		rc = store_event(st, gclock_wall(), r->in.job, 0, 0, 0, "priority",
				 detail);
	if (!rc)
		rc = store_commit(st);
	else
		store_rollback(st);
	if (rc) {
		snprintf(r->err, sizeof(r->err), "priority failed: %s",
			 gerr_str(rc));
		return;
	}
	r->reply = ctlcmd_reply_encode(CTLCMD_PRIORITY, &(struct ctlcmd_reply){
		.job = r->in.job, .priority = p });
}

/* ---- the loop's part ---- */

/* Some worker waits in its claim for work to appear. */
static int worker_waiting(const struct gpud *d)
{
	for (const struct conn *c = d->conns; c; c = c->next)
		if (c->parked && !c->closing)
			return 1;
	return 0;
}

/* Some connected worker runs both workloads. */
static int served_together(const struct gpud *d, const char *a,
			   const char *b)
{
	char qa[80], qb[80];

	snprintf(qa, sizeof(qa), "\"%s\"", a);
	snprintf(qb, sizeof(qb), "\"%s\"", b);
	for (const struct conn *c = d->conns; c; c = c->next)
		if (!c->is_ctl && c->state == CONN_READY && !c->closing &&
		    c->workloads_json && strstr(c->workloads_json, qa) &&
		    strstr(c->workloads_json, qb))
			return 1;
	return 0;
}

/* Every pending lease of a job needs a worker other than some: one that
 * computed another result of its group, or one that failed it (the
 * claim's exclusions, store_replica_waiting). */
static void waiting_reason(char *why, size_t len, json_int_t waiting,
			   json_int_t failed)
{
	json_int_t grouped = waiting - failed;

	if (failed == 0)
		snprintf(why, len, "waiting for a second worker to confirm "
			 "results: %" JSON_INTEGER_FORMAT " lease(s) need a "
			 "worker that did not compute them", waiting);
	else if (grouped <= 0)
		snprintf(why, len, "waiting for another worker: %"
			 JSON_INTEGER_FORMAT " lease(s) failed on a worker and "
			 "are granted only to a worker that did not fail them",
			 failed);
	else
		snprintf(why, len, "waiting for another worker: %"
			 JSON_INTEGER_FORMAT " lease(s) need a worker that did "
			 "not compute them, %" JSON_INTEGER_FORMAT " failed on a "
			 "worker and need one that did not fail them", grouped,
			 failed);
}

/* The job a queued job waits behind: the nearest job ahead of it in the
 * queue that a worker able to run it could take, else a running job that
 * holds such a worker. 0 when none. */
static int64_t behind_job(const struct gpud *d, const struct ctl_jobs *js,
			  int64_t id, const char *wl)
{
	size_t me = js->n_queue, i;

	for (i = 0; i < js->n_queue; i++)
		if (js->queue[i].id == id)
			me = i;
	for (i = me; i-- > 0;)
		if (served_together(d, wl, js->queue[i].workload))
			return js->queue[i].id;
	for (i = 0; i < js->n_queue; i++)
		if (js->queue[i].running && served_together(d, wl, js->queue[i].workload))
			return js->queue[i].id;
	return 0;
}

/* Why a queued job does not run (a reason always), into why. */
static void queue_why(const struct gpud *d, const struct ctlcmd_job *j,
		      const struct job_extra *x, const struct ctl_jobs *js,
		      char *why, size_t len)
{
	int64_t pending = j->leases[LEASE_PENDING], dn = j->leases[LEASE_DONE];
	int64_t rpending = j->replicas[LEASE_PENDING], waiting = j->replicas_waiting;
	int64_t ahead;
	char w[1024];

	if (d->storage_error) {
		snprintf(why, len, "%s", d->storage_msg);
	} else if (j->after_job && x->after_state != JOB_DONE) {
		/* Granted nothing until that job is done (store_lifecycle.c). */
		snprintf(why, len, "after job %" PRId64 " (%s)", j->after_job,
			 x->after_shown ? x->after_shown : "gone");
	} else if (waiting > 0 && waiting == pending + rpending) {
		waiting_reason(w, sizeof(w), waiting, j->failed_waiting);
		/* The job's own reason (the last failure) stays. */
		snprintf(why, len, "%s%s%s", w, j->reason ? "; " : "",
			 j->reason ? j->reason : "");
	} else if (!conn_workload_served((struct gpud *)d, j->workload)) {
		snprintf(why, len, "no eligible worker (none connected runs %s)",
			 j->workload);
	} else if (dn > 0 && pending == 0 && x->carve_done) {
		snprintf(why, len, "verifying results");
	} else if ((ahead = behind_job(d, js, j->id, j->workload))) {
		snprintf(why, len, "behind job %" PRId64, ahead);
	} else {
		snprintf(why, len, "waiting for a worker to claim it");
	}
}

/* queue_why, and the job's own reason after it (its last failure). */
static const char *queued_reason(const struct gpud *d, const struct ctlcmd_job *j,
				 struct job_extra *x, const struct ctl_jobs *js)
{
	char w[2048];
	int both;
	size_t len;

	queue_why(d, j, x, js, w, sizeof(w));
	both = j->reason && !strstr(w, j->reason);
	len = strlen(w) + (both ? strlen(j->reason) + 2 : 0) + 1;
	if (!(x->why = malloc(len)))
		return j->reason;
	snprintf(x->why, len, "%s%s%s", w, both ? "; " : "", both ? j->reason : "");
	return x->why;
}

/* Add what only the loop knows to a job of status: rate, ETA, reason. */
static void job_live(struct gpud *d, struct ctlcmd_job *j, struct job_extra *x,
		     const struct ctl_jobs *js)
{
	uint64_t total = (uint64_t)j->total_units;
	uint64_t live = (uint64_t)(j->units_done + j->units_running);
	int running = strcmp(j->state, "running") == 0;
	int queued = strcmp(j->state, "queued") == 0;
	double rate = running || queued ? gpud_rate_get(d, j->id) : 0;

	j->rate = rate;
	/* None (null) until the smoothed rate is steady (rate_smooth.h). */
	j->eta_s = rate > 0 && total > live ?
		   gpud_rate_eta(d, j->id, total - live, gclock_wall()) : 0;
	if (strcmp(j->state, "paused") == 0 && !(j->reason &&
	    strncmp(j->reason, SCHED_PAUSED_BY_GPUD,
		    sizeof(SCHED_PAUSED_BY_GPUD) - 1) == 0))
		j->reason = "held: paused by the user (gpuctl resume to continue)";
	else if (queued)
		j->reason = queued_reason(d, j, x, js);
	else if (running && d->storage_error)
		j->reason = d->storage_msg;
	else if (running && x->held_by && worker_waiting(d))
		j->reason = x->held_by;
}

void ctl_jobs_after(void *arg)
{
	struct ctl_req *r = arg;
	struct ctl_jobs *js = r->jobs;
	const char *warn[1];
	char w[260];

	if (js && !r->err[0]) {
		for (size_t i = 0; i < js->n_rows; i++)
			job_live(r->d, &js->rows[i], &js->extra[i], js);
		/* What is wrong with gpud itself rather than with a job. */
		uint64_t since = uv_now(r->d->loop) - r->d->fd_short_ms;
		int warned = r->in.cmd == CTLCMD_STATUS && r->d->fd_short_ms &&
			     since < FD_WARN_MS;
		if (warned)
			snprintf(w, sizeof(w), "%s (last %.0f s ago)", r->d->fd_msg,
				 (double)since / 1000);
		warn[0] = w;
		r->reply = ctlcmd_reply_encode(r->in.cmd, &(struct ctlcmd_reply){
			.jobs = js->rows, .n_jobs = js->n_rows,
			.hidden = (int64_t)js->hidden,
			.warnings = warn, .n_warnings = warned ? 1 : 0 });
		if (!r->reply)
			snprintf(r->err, sizeof(r->err), "out of memory");
	}
	jobs_free(js);
	r->jobs = NULL;
	ctl_finish(r);
}
