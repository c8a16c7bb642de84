/* control_jobs.c - the queue's commands: status (jobs with their state,
 * reason, progress and figures), history (finished jobs, newest first)
 * and priority (control.h has the shapes).
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

#include "conn.h"
#include "control_internal.h"
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "scheduler.h"
#include "store.h"
#include "workload.h"

#define DAY_S 86400.0
/* status hides jobs finished longer ago than this (unless "all"). */
#define STATUS_KEEP_S DAY_S
/* history shows this far back (unless "all"). */
#define HISTORY_KEEP_S (30 * DAY_S)
/* How long gpuctl status mentions a descriptor shortage after the last. */
#define FD_WARN_MS (5 * 60 * 1000)

/* ---- the database's part ---- */

/* The state a user sees: active is running or queued. */
static const char *shown_state(enum job_state s, uint64_t held)
{
	if (s == JOB_ACTIVE)
		return held ? "running" : "queued";
	return job_state_name(s);
}

/* JSON null for 0 (a time not reached yet), else the number. */
static json_t *time_or_null(double t)
{
	return t > 0 ? json_real(t) : json_null();
}

/* The names of the workers that hold the job's leases. */
static json_t *holders_json(struct store *st, int64_t job)
{
	json_t *workers = json_array();
	struct store_lease *leases = NULL;
	size_t nl = 0;

	if (store_lease_list_job(st, job, &leases, &nl))
		return workers;
	for (size_t i = 0; i < nl; i++) {
		struct store_worker w = {0};

		if (leases[i].state != LEASE_LEASED || !leases[i].worker_id)
			continue;
		if (store_worker_get(st, leases[i].worker_id, &w) == 0)
			json_array_append_new(workers, json_string(w.name));
		store_worker_clear(&w);
	}
	store_lease_free_array(leases, nl);
	return workers;
}

static json_t *job_json(struct store *st, const struct store_job *j,
			double now)
{
	uint64_t counts[LEASE_NSTATES] = {0}, rcounts[LEASE_NSTATES] = {0};
	uint64_t waiting = 0, wfailed = 0, held;
	struct store_job_stats fig = {0};
	int full = 0;
	const struct workload *wl = workload_find(j->workload);
	json_t *lc = json_object(), *rl = json_object(), *out;
	char *damaged = NULL;
	double end, elapsed = 0;

	store_lease_counts(st, j->id, counts);
	store_damage_get(st, j->id, &damaged);
	store_replica_counts(st, j->id, rcounts);
	store_replica_waiting(st, j->id, &waiting);
	store_lease_failed_waiting(st, j->id, &wfailed);
	store_job_get_replicate(st, j->id, &full);
	store_job_stats(st, j->id, &fig);
	for (int s = 0; s < LEASE_NSTATES; s++) {
		json_object_set_new(lc, lease_state_name((enum lease_state)s),
				    json_integer((json_int_t)counts[s]));
		json_object_set_new(rl, lease_state_name((enum lease_state)s),
				    json_integer((json_int_t)rcounts[s]));
	}
	held = counts[LEASE_LEASED] + rcounts[LEASE_LEASED];
	/* job_live shows it as the reason while a worker waits for work. */
	char holders[256] = "";
	if (j->state == JOB_ACTIVE && j->carve_done && counts[LEASE_LEASED] &&
	    !counts[LEASE_PENDING])
		sched_holders(st, j->id, holders, sizeof(holders));
	end = j->finished_at > 0 ? j->finished_at : now;
	if (j->started_at > 0 && end > j->started_at)
		elapsed = end - j->started_at;
	out = json_object();
	json_object_set_new(out, "id", json_integer((json_int_t)j->id));
	json_object_set_new(out, "name", j->name ? json_string(j->name) : json_null());
	json_object_set_new(out, "workload", json_string(j->workload));
	json_object_set_new(out, "unit_name", json_string(wl ? wl->unit_name : "units"));
	json_object_set_new(out, "state", json_string(shown_state(j->state, held)));
	json_object_set_new(out, "priority", json_integer(j->priority));
	json_object_set_new(out, "params", ctl_json_from_text(j->params));
	json_object_set_new(out, "total_units", json_integer((json_int_t)j->total_units));
	/* Never goes back: what a held lease did since its checkpoint is
	 * apart, in units_running, as the holder may yet lose it. */
	json_object_set_new(out, "units_done", json_integer((json_int_t)fig.units_saved));
	json_object_set_new(out, "units_running", json_integer((json_int_t)fig.units_running));
	json_object_set_new(out, "units_verified", json_integer((json_int_t)j->units_verified));
	json_object_set_new(out, "leases", lc);
	json_object_set_new(out, "replicas", rl);
	json_object_set_new(out, "replicas_waiting", json_integer((json_int_t)waiting));
	json_object_set_new(out, "failed_waiting", json_integer((json_int_t)wfailed));
	json_object_set_new(out, "check", json_string(full ? "full" : "sample"));
	json_object_set_new(out, "workers", held ? holders_json(st, j->id) : json_array());
	json_object_set_new(out, "reason", j->reason ? json_string(j->reason) : json_null());
	json_object_set_new(out, "submitted_at", json_real(j->created_at));
	json_object_set_new(out, "created_at", json_real(j->created_at));
	json_object_set_new(out, "started_at", time_or_null(j->started_at));
	json_object_set_new(out, "finished_at", time_or_null(j->finished_at));
	json_object_set_new(out, "elapsed_s", json_real(elapsed));
	json_object_set_new(out, "avg_rate", json_real(elapsed > 0 ?
		(double)fig.units_saved / elapsed : 0));
	json_object_set_new(out, "attempts", json_integer((json_int_t)fig.attempts));
	json_object_set_new(out, "verify_failures",
			    json_integer((json_int_t)fig.verify_failures));
	json_object_set_new(out, "damaged", damaged ? json_string(damaged) : json_null());
	/* For job_live only (removed there). */
	json_object_set_new(out, "carve_done", json_boolean(j->carve_done));
	if (holders[0])
		json_object_set_new(out, "held_by", json_string(holders));
	free(damaged);
	return out;
}

/* Queue order: the highest priority, then the oldest. */
static int rank_cmp(const void *a, const void *b)
{
	const struct store_job *x = a, *y = b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* The active jobs in queue order, [[id, workload, running]..], for the
 * reasons of queued jobs (job_live). Sorts jobs. */
static json_t *queue_json(struct store *st, struct store_job *jobs, size_t n)
{
	json_t *q = json_array();

	if (n > 1)
		qsort(jobs, n, sizeof(*jobs), rank_cmp);
	for (size_t i = 0; i < n; i++) {
		uint64_t c[LEASE_NSTATES] = {0}, rc[LEASE_NSTATES] = {0};

		if (jobs[i].state != JOB_ACTIVE)
			continue;
		store_lease_counts(st, jobs[i].id, c);
		store_replica_counts(st, jobs[i].id, rc);
		json_array_append_new(q, json_pack("[I, s, b]",
			(json_int_t)jobs[i].id, jobs[i].workload,
			c[LEASE_LEASED] + rc[LEASE_LEASED] > 0));
	}
	return q;
}

void ctl_status_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	int all = r->in.all;
	double now = sched_now();
	struct store_job *list = NULL;
	size_t n = 0;
	uint64_t hidden = 0;
	json_t *jobs = json_array();

	/* Every job not finished, so that the queue is whole even when one
	 * job is asked for. */
	if (store_job_list_recent(st, r->in.job || all ? 0 : now - STATUS_KEEP_S,
				  &list, &n, &hidden)) {
		snprintf(r->err, sizeof(r->err), "cannot list jobs: %s",
			 store_errmsg(st));
		json_decref(jobs);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (!r->in.job || list[i].id == r->in.job)
			json_array_append_new(jobs, job_json(st, &list[i], now));
	if (r->in.job && json_array_size(jobs) == 0) {
		snprintf(r->err, sizeof(r->err), "no job %" PRId64, r->in.job);
		json_decref(jobs);
		store_job_free_array(list, n);
		return;
	}
	r->reply = json_pack("{s:b, s:o, s:I, s:o}", "ok", 1, "jobs", jobs,
			     "hidden", (json_int_t)(r->in.job ? 0 : hidden),
			     "queue_", queue_json(st, list, n));
	store_job_free_array(list, n);
}

void ctl_history_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	int all = r->in.all;
	uint32_t limit = (uint32_t)r->in.limit;
	double now = sched_now();
	struct store_job *list = NULL;
	size_t n = 0;
	json_t *jobs = json_array();

	if (store_job_history(st, all ? 0 : now - HISTORY_KEEP_S, limit,
			      &list, &n)) {
		snprintf(r->err, sizeof(r->err), "cannot list jobs: %s",
			 store_errmsg(st));
		json_decref(jobs);
		return;
	}
	for (size_t i = 0; i < n; i++)
		json_array_append_new(jobs, job_json(st, &list[i], now));
	store_job_free_array(list, n);
	r->reply = json_pack("{s:b, s:o}", "ok", 1, "jobs", jobs);
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
		rc = store_event(st, sched_now(), r->in.job, 0, 0, 0, "priority",
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
static int64_t behind_job(const struct gpud *d, const json_t *queue,
			  int64_t id, const char *wl)
{
	size_t me = json_array_size(queue), i;
	json_t *e;

	json_array_foreach(queue, i, e)
		if (json_integer_value(json_array_get(e, 0)) == id)
			me = i;
	for (i = me; i-- > 0;) {
		e = json_array_get(queue, i);
		if (served_together(d, wl, json_string_value(json_array_get(e, 1))))
			return json_integer_value(json_array_get(e, 0));
	}
	json_array_foreach(queue, i, e)
		if (json_is_true(json_array_get(e, 2)) &&
		    served_together(d, wl, json_string_value(json_array_get(e, 1))))
			return json_integer_value(json_array_get(e, 0));
	return 0;
}

/* Why a queued job does not run (a reason always). */
static json_t *queue_why(const struct gpud *d, const json_t *j,
			 const json_t *queue)
{
	int64_t id = json_integer_value(json_object_get(j, "id"));
	const char *wl = json_string_value(json_object_get(j, "workload"));
	const json_t *lc = json_object_get(j, "leases");
	const json_t *rl = json_object_get(j, "replicas");
	json_int_t pending = json_integer_value(json_object_get(lc, "pending"));
	json_int_t dn = json_integer_value(json_object_get(lc, "done"));
	json_int_t rpending = json_integer_value(json_object_get(rl, "pending"));
	json_int_t waiting = json_integer_value(json_object_get(j, "replicas_waiting"));
	json_int_t wfailed = json_integer_value(json_object_get(j, "failed_waiting"));
	int carve_done = json_is_true(json_object_get(j, "carve_done"));
	const char *last = json_string_value(json_object_get(j, "reason"));
	int64_t ahead;
	char why[300];

	if (d->storage_error)
		return json_string(d->storage_msg);
	if (waiting > 0 && waiting == pending + rpending) {
		waiting_reason(why, sizeof(why), waiting, wfailed);
		/* The job's own reason (the last failure) stays. */
		return last ? json_sprintf("%s; %s", why, last) : json_string(why);
	}
	if (!conn_workload_served((struct gpud *)d, wl))
		return json_sprintf("no eligible worker (none connected runs %s)", wl);
	if (dn > 0 && pending == 0 && carve_done)
		return json_string("verifying results");
	ahead = behind_job(d, queue, id, wl);
	if (ahead)
		return json_sprintf("behind job %" PRId64, ahead);
	return json_string("waiting for a worker to claim it");
}

/* queue_why, and the job's own reason after it (its last failure). */
static json_t *queued_reason(const struct gpud *d, const json_t *j,
			     const json_t *queue)
{
	json_t *why = queue_why(d, j, queue);
	const char *w = json_string_value(why);
	const char *last = json_string_value(json_object_get(j, "reason"));

	if (!w || !last || strstr(w, last))
		return why;
	json_t *both = json_sprintf("%s; %s", w, last);
	json_decref(why);
	return both ? both : json_string(last);
}

/* Add what only the loop knows to a job of status: rate, ETA, reason. */
static void job_live(struct gpud *d, json_t *j, const json_t *queue)
{
	int64_t id = json_integer_value(json_object_get(j, "id"));
	const char *state = json_string_value(json_object_get(j, "state"));
	uint64_t total = json_integer_value(json_object_get(j, "total_units"));
	uint64_t live = json_integer_value(json_object_get(j, "units_done")) +
			json_integer_value(json_object_get(j, "units_running"));
	int active = strcmp(state, "running") == 0 || strcmp(state, "queued") == 0;
	double rate = active ? gpud_rate_get(d, id) : 0;

	json_object_set_new(j, "rate", json_real(rate));
	json_object_set_new(j, "eta_s", rate > 0 && total > live ?
		json_real((double)(total - live) / rate) : json_null());
	if (strcmp(state, "paused") == 0) {
		json_object_set_new(j, "reason", json_string(
			"held: paused by the user (gpuctl resume to continue)"));
	} else if (strcmp(state, "queued") == 0) {
		json_object_set_new(j, "reason", queued_reason(d, j, queue));
	} else if (strcmp(state, "running") == 0 && d->storage_error) {
		json_object_set_new(j, "reason", json_string(d->storage_msg));
	} else if (strcmp(state, "running") == 0 &&
		   json_is_string(json_object_get(j, "held_by")) &&
		   worker_waiting(d)) {
		json_object_set(j, "reason", json_object_get(j, "held_by"));
	}
	json_object_del(j, "carve_done");
	json_object_del(j, "held_by");
}

void ctl_jobs_after(void *arg)
{
	struct ctl_req *r = arg;
	json_t *queue = json_object_get(r->reply, "queue_");
	size_t i;
	json_t *j;

	json_array_foreach(json_object_get(r->reply, "jobs"), i, j)
		job_live(r->d, j, queue);
	if (r->reply)
		json_object_del(r->reply, "queue_");
	/* What is wrong with gpud itself rather than with a job. */
	uint64_t since = uv_now(r->d->loop) - r->d->fd_short_ms;
	if (r->reply && r->in.cmd == CTLCMD_STATUS && r->d->fd_short_ms &&
	    since < FD_WARN_MS) {
		char w[260];
		snprintf(w, sizeof(w), "%s (last %.0f s ago)", r->d->fd_msg,
			 (double)since / 1000);
		json_object_set_new(r->reply, "warnings", json_pack("[s]", w));
	}
	ctl_finish(r);
}
