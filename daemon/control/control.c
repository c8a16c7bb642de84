/* control.c - the control API's dispatch and the commands that are not
 * in a group file: the command table (gpud's half of each row; ctlcmd.h
 * has the name, role and request fields), then submit, cancel, pause,
 * resume, extend, workers, ping and workloads.
 *
 * control_handle checks a request's rights and fields against the table
 * before any step runs, so steps read r->in, never the JSON. Database
 * work runs on the database thread; the reply is finished on the loop
 * thread, where the live state (connections, rates) lives. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "blob.h"
#include "clock.h"
#include "ctlcmd.h"
#include "gpud_config.h"
#include "control.h"
#include "control_internal.h"
#include "conn.h"
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "job_parts.h"
#include "scheduler.h"
#include "store.h"
#include "workload.h"

static void generic_after(void *arg);
static void submit_after(void *arg);

_Static_assert(STORE_PRIORITY_MIN == CTLCMD_PRIORITY_MIN &&
	       STORE_PRIORITY_MAX == CTLCMD_PRIORITY_MAX &&
	       STORE_JOB_NAME_MAX == CTLCMD_JOB_NAME_MAX, "ctlcmd's bounds");

/* ---- cancel / pause / resume ---- */

static void state_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	struct store_job j = {0};
	double now = gclock_wall();
	int rc;

	if (store_job_get(st, r->in.job, &j)) {
		snprintf(r->err, sizeof(r->err), "no job %" PRId64, r->in.job);
		return;
	}
	enum job_state from = j.state, to;
	store_job_clear(&j);
	if (r->in.cmd == CTLCMD_CANCEL) {
		if (from == JOB_DONE || from == JOB_FAILED || from == JOB_CANCELLED) {
			snprintf(r->err, sizeof(r->err), "job %" PRId64 " is already %s",
				 r->in.job, job_state_name(from));
			return;
		}
		to = JOB_CANCELLED;
	} else if (r->in.cmd == CTLCMD_PAUSE) {
		if (from != JOB_ACTIVE) {
			snprintf(r->err, sizeof(r->err), "job %" PRId64 " is %s, not "
				 "queued or running", r->in.job, job_state_name(from));
			return;
		}
		to = JOB_PAUSED;
	} else {
		if (from != JOB_PAUSED) {
			snprintf(r->err, sizeof(r->err), "job %" PRId64 " is %s, not paused",
				 r->in.job, job_state_name(from));
			return;
		}
		to = JOB_ACTIVE;
	}
	rc = store_begin(st);
	if (!rc)
		rc = store_job_set_state(st, r->in.job, to,
			to == JOB_CANCELLED ? "cancelled by the user" : NULL, now);
	if (!rc && to == JOB_CANCELLED)
		rc = store_job_cancel_leases(st, r->in.job, now);
	if (!rc)
		rc = store_event(st, now, r->in.job, 0, 0, 0, r->cmd, NULL);
	if (!rc)
		rc = store_commit(st);
	else
		store_rollback(st);
	if (rc) {
		snprintf(r->err, sizeof(r->err), "%s failed: %s", r->cmd, gerr_str(rc));
		return;
	}
	r->reply = ctlcmd_reply_encode(r->in.cmd, &(struct ctlcmd_reply){
		.job = r->in.job, .state = job_state_name(to) });
}

/* ---- submit ---- */

static void submit_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	int64_t id = 0;
	double now = gclock_wall();
	int rc = store_begin(st);

	if (!rc)
		rc = store_job_insert(st, r->wl->name, r->params, r->total_units, now, &id);
	if (!rc && r->in.name)
		rc = store_job_set_name(st, id, r->in.name);
	if (!rc && r->in.priority)
		rc = store_job_set_priority(st, id, (int)r->in.priority);
	if (!rc && r->replicate)
		rc = store_job_set_replicate(st, id, 1);
	if (!rc && r->caller_name[0])
		rc = store_job_set_owner(st, id, r->caller_name);
	if (!rc)
		rc = ctl_submit_lifecycle(st, r, id);
	if (!rc)
		rc = store_event(st, now, id, 0, 0, 0, "submit", r->params);
	if (!rc)
		rc = store_commit(st);
	else
		store_rollback(st);
	if (rc && r->err[0])
		return;  /* refused: --after or --time-limit */
	r->storage_rc = rc;
	if (rc) {
		snprintf(r->err, sizeof(r->err), "cannot store the job: %s%s%s",
			 gerr_str(rc), rc == GERR_NOSPACE ? " (disk full)" : "",
			 rc == GERR_PERM ? " (check the data directory's permissions)" : "");
		return;
	}
	r->reply = ctlcmd_reply_encode(CTLCMD_SUBMIT, &(struct ctlcmd_reply){ .job = id });
}

/* Validate a submission on the thread pool: parameters (a workload may do
 * real work here, e.g. enumerate what it will lease) and the input file
 * (parsing a large file must not stall the loop), then store the input. */
static void submit_parse_work(uv_work_t *w)
{
	struct ctl_req *r = w->data;
	const json_t *args = r->in.args;
	json_t *params = NULL, *np = NULL;
	void *canon = NULL;
	size_t canon_len = 0;
	uint8_t *blob = NULL;
	size_t blob_len = 0;
	char hash[BLOB_HASH_HEX], err[WL_ERRLEN] = "";
	int rc;

	rc = r->wl->parse_params(workload_ctx(r->wl), args, &params, &r->total_units, err, sizeof(err));
	if (rc) {
		snprintf(r->err, sizeof(r->err), "bad %s job: %s", r->wl->name,
			 err[0] ? err : gerr_str(rc));
		return;
	}
	if (!r->input) {
		r->params = json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(params);
		if (!r->params)
			snprintf(r->err, sizeof(r->err), "out of memory");
		return;
	}
	json_object_set_new(params, "input_name",
			    json_copy(json_object_get(args, "file")));
	rc = r->wl->parse_input(workload_ctx(r->wl), params, r->input, r->input_len, &np, &canon,
				&canon_len, &r->total_units, err, sizeof(err));
	json_decref(params);
	if (rc) {
		snprintf(r->err, sizeof(r->err), "bad %s input: %s", r->wl->name,
			 err[0] ? err : gerr_str(rc));
		return;
	}
	rc = blob_encode(BLOB_INPUT, r->wl->name, 0, 0, canon, canon_len, &blob,
			 &blob_len);
	if (!rc)
		rc = blob_store_put(r->d->cfg.data_dir, blob, blob_len, hash);
	free(canon);
	free(blob);
	if (rc) {
		snprintf(r->err, sizeof(r->err), "cannot store the input: %s",
			 gerr_str(rc));
		r->storage_rc = rc;
		json_decref(np);
		return;
	}
	json_object_set_new(np, "input", json_string(hash));
	r->params = json_dumps(np, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(np);
	if (!r->params)
		snprintf(r->err, sizeof(r->err), "out of memory");
}

static void submit_parse_after(uv_work_t *w, int status)
{
	struct ctl_req *r = w->data;

	free(r->input);
	r->input = NULL;
	if (status || !r->params) {
		if (r->storage_rc)
			gpud_storage_outcome(r->d, r->storage_rc, "storing a job's input");
		ctl_finish(r);
		return;
	}
	if (dbq_submit(r->d->dbq, submit_work, submit_after, r)) {
		snprintf(r->err, sizeof(r->err), "gpud is shutting down");
		ctl_finish(r);
	}
}

/* ---- extend ---- */

static void extend_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	struct store_job j = {0};
	const struct workload *wl;
	json_t *params = NULL, *answer = NULL, *np = NULL;
	const json_t *args = r->in.args;
	uint64_t total = 0;
	char err[WL_ERRLEN] = "", *text = NULL;
	int rc;

	if (store_job_get(st, r->in.job, &j)) {
		snprintf(r->err, sizeof(r->err), "no job %" PRId64, r->in.job);
		return;
	}
	wl = workload_find(j.workload);
	if (!wl || !wl->extend) {
		snprintf(r->err, sizeof(r->err), "%s jobs cannot be extended", j.workload);
		goto out;
	}
	params = ctl_json_from_text(j.params);
	answer = ctl_json_from_text(j.answer);
	if (wl->extend(workload_ctx(wl), params, json_is_null(answer) ? NULL : answer, args, &np,
		       &total, err, sizeof(err))) {
		snprintf(r->err, sizeof(r->err), "cannot extend job %" PRId64 ": %s",
			 r->in.job, err[0] ? err : "arguments must be an object");
		goto out;
	}
	text = json_dumps(np, JSON_COMPACT | JSON_SORT_KEYS);
	rc = text ? store_begin(st) : GERR_NOMEM;
	if (!rc)
		rc = store_job_extend(st, r->in.job, text, total);
	if (!rc)
		rc = store_event(st, gclock_wall(), r->in.job, 0, 0, 0, "extend", text);
	if (!rc)
		rc = store_commit(st);
	else if (text)
		store_rollback(st);
	if (rc) {
		snprintf(r->err, sizeof(r->err), "cannot extend job %" PRId64 ": %s",
			 r->in.job, rc == GERR_STATE || rc == GERR_CORRUPT ? store_errmsg(st)
							      : gerr_str(rc));
		goto out;
	}
	/* Extended, it runs on (a paused job stays paused). */
	uint64_t counts[LEASE_NSTATES] = {0};
	store_lease_counts(st, r->in.job, counts);
	r->reply = ctlcmd_reply_encode(CTLCMD_EXTEND, &(struct ctlcmd_reply){
		.job = r->in.job, .total_units = (int64_t)total,
		.state = j.state == JOB_PAUSED ? "paused" :
			 counts[LEASE_LEASED] ? "running" : "queued" });
out:
	free(text);
	json_decref(np);
	json_decref(params);
	json_decref(answer);
	store_job_clear(&j);
}

/* ---- workers ---- */

_Static_assert(PLACE_FIELDS == 4, "a worker row's place");

static void workers_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	struct store_worker *ws = NULL;
	size_t n = 0;

	/* A fleet starts many processes: the ones of the last
	 * STORE_WORKER_KEEP_S (older rows stay only as leases' producers). */
	if (store_worker_list(st, gclock_wall() - STORE_WORKER_KEEP_S, &ws,
			      &n)) {
		snprintf(r->err, sizeof(r->err), "cannot list workers");
		return;
	}
	r->ws = ws;
	r->n_ws = n;
	r->wrows = calloc(n ? n : 1, sizeof(*r->wrows));
	if (!r->wrows) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct ctlcmd_worker *w = &r->wrows[i];
		uint32_t streak = 0;
		uint64_t confirmed = 0;

		store_worker_streak(st, ws[i].id, &streak, &confirmed);
		*w = (struct ctlcmd_worker){
			.id = ws[i].id, .name = ws[i].name,
			.credential = ws[i].credential,
			.instance = ws[i].instance,
			.device = ws[i].device ? ws[i].device : "",
			.online = ws[i].online, .quarantined = ws[i].quarantined,
			.drained = ws[i].drained,
			.failures = (int64_t)ws[i].failures,
			.foreign_msgs = (int64_t)ws[i].foreign_msgs,
			.stalls = (int64_t)ws[i].stalls,
			.leases_done = (int64_t)ws[i].leases_done,
			.units_done = (int64_t)ws[i].units_done,
			.rate = ws[i].rate, .last_seen = ws[i].last_seen,
			.streak = (int64_t)streak, .confirmed = (int64_t)confirmed };
		/* Where it runs (its latest login's): null when not known. */
		for (int f = 0; f < PLACE_FIELDS; f++) {
			const char *v = place_get(&ws[i].place, (enum place_field)f);
			w->place[f] = *v ? v : NULL;
		}
	}
}

static void workers_after(void *arg)
{
	struct ctl_req *r = arg;
	uint32_t need = r->d->cfg.trust_after;

	for (size_t i = 0; !r->err[0] && i < r->n_ws; i++) {
		struct ctlcmd_worker *w = &r->wrows[i];
		int64_t job = 0;
		int64_t lease = conn_worker_lease(r->d, w->id, &job);
		/* Its connection's: the rate is in its job's unit. */
		const struct conn *c = conn_find_worker(r->d, w->id);

		w->lease = lease;
		/* Untrusted workers' results are replicated before they merge. */
		w->trust_after = need;
		w->trusted = need == 0 || w->streak >= need;
		w->job = lease ? job : 0;
		w->threads = c && c->threads ? c->threads : 0;
		w->job_unit = lease && c && c->job_unit ? c->job_unit : NULL;
		/* Holding a lease: its live rate in that lease's job, or 0
		 * until measured (the stored one is its last lease's, maybe
		 * of another job and unit). */
		if (lease)
			w->rate = c && c->rate_job == job ? c->rate : 0;
		/* Connected: seen when it last sent anything (heartbeats),
		 * from the loop; the row's is its login. */
		if (c && w->online) {
			uint64_t ago = uv_now(r->d->loop) - c->active_ms;
			double seen = gclock_wall() - (double)ago / 1000;

			if (seen > w->last_seen)
				w->last_seen = seen;
		}
	}
	if (!r->err[0]) {
		r->reply = ctlcmd_reply_encode(CTLCMD_WORKERS, &(struct ctlcmd_reply){
			.workers = r->wrows, .n_workers = r->n_ws });
		if (!r->reply)
			snprintf(r->err, sizeof(r->err), "out of memory");
	}
	free(r->wrows);
	store_worker_free_array(r->ws, r->n_ws);
	r->wrows = NULL;
	r->ws = NULL;
	ctl_finish(r);
}

/* ---- the command table ---- */

/* Where a row's steps run: on the loop thread (RUN_LOOP), the database
 * thread (RUN_DB) or the thread pool (RUN_POOL). RUN_WAKES: its success
 * may give workers something to do, so parked claims are woken. */
#define RUN_LOOP 1u
#define RUN_DB 2u
#define RUN_POOL 4u
#define RUN_WAKES 8u

/* gpud's half of a command's row; ctlcmd_table[id] holds the other half
 * (name, role, request fields), at the same index. */
struct control_cmd {
	unsigned flags;
	/* Either start (loop thread; it owns the request until ctl_finish)
	 * or work (database thread) then after (loop; NULL: generic_after). */
	void (*start)(struct ctl_req *r);
	dbq_work_fn work;
	dbq_after_fn after;
};

static void ping_start(struct ctl_req *r);
static void submit_start(struct ctl_req *r);
static void workloads_start(struct ctl_req *r);

#define START(f) f, NULL, NULL
#define STEPS(w, a) NULL, w, a

static const struct control_cmd commands[CTLCMD_COUNT] = {
	[CTLCMD_PING]         = { RUN_LOOP, START(ping_start) },
	[CTLCMD_SUBMIT]       = { RUN_POOL | RUN_DB | RUN_WAKES, START(submit_start) },
	[CTLCMD_STATUS]       = { RUN_DB, STEPS(ctl_status_work, ctl_jobs_after) },
	[CTLCMD_HISTORY]      = { RUN_DB, STEPS(ctl_history_work, ctl_jobs_after) },
	[CTLCMD_PRIORITY]     = { RUN_DB, STEPS(ctl_priority_work, NULL) },
	[CTLCMD_RESULT]       = { RUN_DB | RUN_POOL,
				  STEPS(ctl_result_load_work, ctl_result_load_after) },
	[CTLCMD_CANCEL]       = { RUN_DB, STEPS(state_work, NULL) },
	[CTLCMD_PAUSE]        = { RUN_DB, STEPS(state_work, NULL) },
	[CTLCMD_RESUME]       = { RUN_DB | RUN_WAKES, STEPS(state_work, NULL) },
	[CTLCMD_WORKERS]      = { RUN_DB, STEPS(workers_work, workers_after) },
	[CTLCMD_WORKLOADS]    = { RUN_LOOP, START(workloads_start) },
	[CTLCMD_EXTEND]       = { RUN_DB | RUN_WAKES, STEPS(extend_work, NULL) },
	[CTLCMD_EXPORT]       = { RUN_DB | RUN_POOL,
				  STEPS(ctl_export_load_work, ctl_export_load_after) },
	[CTLCMD_TOKEN_ADD]    = { RUN_DB, START(ctl_token_add_start) },
	[CTLCMD_TOKEN_LIST]   = { RUN_DB, STEPS(ctl_token_list_work, NULL) },
	[CTLCMD_TOKEN_REVOKE] = { RUN_DB, STEPS(ctl_token_revoke_work, ctl_token_revoke_after) },
	[CTLCMD_CHECK]        = { RUN_DB | RUN_POOL, START(ctl_check_start) },
	[CTLCMD_BACKUP]       = { RUN_POOL, START(ctl_backup_start) },
	[CTLCMD_PAGE_LINK]    = { RUN_DB, START(ctl_page_link_start) },
	[CTLCMD_WORKER_DRAIN] = { RUN_DB, STEPS(ctl_worker_work, NULL) },
	[CTLCMD_WORKER_RESUME] = { RUN_DB | RUN_WAKES, STEPS(ctl_worker_work, NULL) },
	[CTLCMD_WORKER_FORGIVE] = { RUN_DB | RUN_WAKES, STEPS(ctl_worker_work, NULL) },
	[CTLCMD_EVENTS]       = { RUN_DB, STEPS(ctl_events_work, NULL) },
	[CTLCMD_REQUEUE]      = { RUN_DB | RUN_WAKES, STEPS(ctl_requeue_work, NULL) },
};

static void generic_after(void *arg)
{
	struct ctl_req *r = arg;

	/* New or resumed work: wake the workers whose claims wait for it. */
	if (r->reply && (commands[r->in.cmd].flags & RUN_WAKES))
		conn_wake_parked(r->d);
	ctl_finish(r);
}

static void submit_after(void *arg)
{
	struct ctl_req *r = arg;

	gpud_storage_outcome(r->d, r->storage_rc, "storing a job");
	generic_after(r);
}

static void ping_start(struct ctl_req *r)
{
	r->reply = ctlcmd_reply_encode(CTLCMD_PING,
				       &(struct ctlcmd_reply){ .version = GPUD_VERSION });
	ctl_finish(r);
}

static void workloads_start(struct ctl_req *r)
{
	r->reply = ctl_workloads_reply();
	if (!r->reply)
		snprintf(r->err, sizeof(r->err), "out of memory");
	ctl_finish(r);
}

/* What the table cannot check: the workload, its input file, the check
 * mode; then the workload parses on the thread pool. */
static void submit_start(struct ctl_req *r)
{
	json_t *args = r->in.args;
	const char *file = json_string_value(json_object_get(args, "file"));

	r->wl = workload_find(r->in.workload);
	if (!r->wl) {
		snprintf(r->err, sizeof(r->err), "unknown workload '%s'", r->in.workload);
		goto fail;
	}
	/* The file travels as the frame's binary; parse_params sees its
	 * name (so it knows a file comes). */
	if (file && !r->wl->parse_input) {
		snprintf(r->err, sizeof(r->err), "%s takes no input file", r->wl->name);
		goto fail;
	}
	if (file && r->input_len == 0) {
		snprintf(r->err, sizeof(r->err), "input file %.255s is empty", file);
		goto fail;
	}
	/* The check mode is gpud's, for every workload: the workload never
	 * sees it. */
	if (json_object_get(args, "check")) {
		const char *check = json_string_value(json_object_get(args, "check"));
		if (!check || (strcmp(check, "full") != 0 && strcmp(check, "sample") != 0)) {
			snprintf(r->err, sizeof(r->err), "--check is sample (gpud "
				 "verifies a sample of every result) or full (every "
				 "lease is computed again by another worker and the "
				 "two results must agree)");
			goto fail;
		}
		r->replicate = strcmp(check, "full") == 0;
		json_object_del(args, "check");
	}
	if (!file) {
		free(r->input);
		r->input = NULL;
		r->input_len = 0;
	}
	r->work.data = r;
	if (uv_queue_work(r->d->loop, &r->work, submit_parse_work, submit_parse_after)) {
		snprintf(r->err, sizeof(r->err), "gpud is shutting down");
		goto fail;
	}
	return;
fail:
	ctl_finish(r);
}

void control_handle(struct gpud *d, enum auth_role role, json_t *req,
		    const void *bin, size_t bin_len, control_done_fn done,
		    void *opaque)
{
	control_handle_by(d, role, NULL, req, bin, bin_len, done, opaque);
}

void control_handle_by(struct gpud *d, enum auth_role role, const char *caller,
		       json_t *req, const void *bin, size_t bin_len,
		       control_done_fn done, void *opaque)
{
	struct ctl_req *r = calloc(1, sizeof(*r));
	const struct ctlcmd *row;
	const struct control_cmd *c;

	if (!r) {
		json_decref(req);
		done(opaque, ctl_error_reply("out of memory"), NULL, 0);
		return;
	}
	r->d = d;
	r->req = req;
	r->done = done;
	r->opaque = opaque;
	r->caller = role;
	/* Longer than an owner may be: not known, rather than cut. */
	if (caller && strlen(caller) < sizeof(r->caller_name))
		memcpy(r->caller_name, caller, strlen(caller) + 1);
	r->cmd = json_string_value(json_object_get(req, "cmd"));
	if (!r->cmd) {
		snprintf(r->err, sizeof(r->err), "request has no 'cmd'");
		goto fail;
	}
	row = ctlcmd_find(r->cmd);
	/* Rights before existence: a viewer learns nothing of other names. */
	if (role != AUTH_ROLE_ADMIN && (!row || !ctlcmd_allowed(row, role))) {
		snprintf(r->err, sizeof(r->err), "'%.64s' needs an admin "
			 "credential (this one is a %s's)", r->cmd,
			 auth_role_name(role) ? auth_role_name(role) : "nobody");
		goto fail;
	}
	if (!row) {
		snprintf(r->err, sizeof(r->err), "unknown command '%.64s'", r->cmd);
		goto fail;
	}
	if (ctlcmd_decode(row, req, &r->in, r->err, sizeof(r->err)))
		goto fail;
	c = &commands[r->in.cmd];
	/* Only submit takes a file (the frame's binary); it is copied, as
	 * the caller's buffer is gone once this returns. */
	if (row->flags & CTLCMD_BIN_IN && bin_len) {
		r->input = malloc(bin_len);
		if (!r->input) {
			snprintf(r->err, sizeof(r->err), "out of memory");
			goto fail;
		}
		memcpy(r->input, bin, bin_len);
		r->input_len = bin_len;
	}
	if (c->start) {
		c->start(r);
		return;
	}
	if (dbq_submit(d->dbq, c->work, c->after ? c->after : generic_after, r)) {
		snprintf(r->err, sizeof(r->err), "gpud is shutting down");
		goto fail;
	}
	return;
fail:
	ctl_finish(r);
}
