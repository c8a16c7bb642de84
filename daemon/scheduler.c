/* scheduler.c - leases: grant, heartbeat, uploads, verification, merge.
 *
 * Why the split into load / check / commit steps: SQLite work stays on the
 * database thread, while inflating and verifying blobs (CPU heavy, possibly
 * large) runs on the thread pool, so neither blocks the event loop nor holds
 * the database thread busy.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "blob.h"
#include "gerr.h"
#include "job_parts.h"
#include "scheduler.h"

#define CARVE_TRIES 16

double sched_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Monotonic seconds, for stage times in the log. */
static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static json_t *json_parse_text(const char *text)
{
	if (!text)
		return NULL;
	return json_loads(text, JSON_DECODE_ANY, NULL);
}

static char *json_text(const json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

uint64_t sched_job_progress(struct store *st, int64_t job_id)
{
	uint64_t u = 0;

	if (store_job_units_progress(st, job_id, &u) != 0)
		return 0;
	return u;
}

/* ---- claim ---- */

/* --check full: the replica of a new lease is pending at once, so another
 * worker computes it while the first does. */
static int carve_replica(struct store *st, int64_t job_id, int64_t lease_id,
			 double now)
{
	int full = 0, rc = store_job_get_replicate(st, job_id, &full);
	int64_t id;

	return rc || !full ? rc : store_lease_insert_replica(st, lease_id, now, &id);
}

/* Carve a new lease from the oldest carvable job. Inside a transaction.
 * A job whose planner must wait for results (GERR_AGAIN) is skipped for
 * now: the next job may have work. */
static int carve_new(struct store *st, struct sched_claim *c, double now)
{
	json_t *skip = json_array(); /* jobs waiting for results */
	int rc = GERR_NOTFOUND;

	for (int tries = 0; tries < CARVE_TRIES; tries++) {
		struct store_job job = {0};
		int64_t job_id;
		char *skip_text = json_dumps(skip, JSON_COMPACT);

		rc = skip_text ? store_job_next_carvable(st, c->workloads_json,
							 skip_text, &job_id)
			       : GERR_NOMEM;
		free(skip_text);
		if (rc)
			break;
		rc = store_job_get(st, job_id, &job);
		if (rc)
			break;
		const struct workload *wl = workload_find(job.workload);
		json_t *params = json_parse_text(job.params);
		json_t *cursor = json_parse_text(job.cursor);
		json_t *answer = json_parse_text(job.answer);
		json_t *spec = NULL, *next = NULL;
		struct job_parts parts = {0};
		uint64_t units = 0;
		uint64_t want = c->pol->lease_units;
		int last = 0;

		if (!want && c->rate > 0)
			want = (uint64_t)(c->rate * c->pol->lease_target_s);
		if (!wl || !params) {
			rc = store_job_set_state(st, job_id, JOB_FAILED,
				"job parameters unreadable or workload unknown", now);
			goto next_job;
		}
		rc = job_parts_open(&parts, st, job_id);
		if (rc)
			goto out;
		rc = wl->carve(workload_ctx(wl), params, cursor, answer,
			       &parts.pub, want, &spec, &units, &next, &last);
		if (rc == GERR_DONE) {
			rc = store_job_set_cursor(st, job_id, job.cursor, 1);
			goto next_job;
		}
		if (rc == GERR_AGAIN) {
			json_array_append_new(skip, json_integer(job_id));
			rc = 0;
			goto next_job;
		}
		if (rc && rc != GERR_NOMEM) {
			/* A job its planner cannot continue fails alone; it
			 * must not hold up every other job's leases. */
			char reason[128];
			snprintf(reason, sizeof(reason), "planner failed: %s",
				 gerr_str(rc));
			rc = store_job_set_state(st, job_id, JOB_FAILED, reason,
						 now);
			goto next_job;
		}
		if (rc)
			goto out;
		char *spec_text = json_text(spec);
		char *next_text = json_text(next);
		rc = (spec_text && next_text) ? 0 : GERR_NOMEM;
		if (!rc)
			rc = store_job_set_cursor(st, job_id, next_text, last);
		if (!rc)
			rc = store_lease_insert_leased(st, job_id, spec_text, units,
				c->worker_id, now + c->pol->lease_timeout_s, now,
				&c->lease);
		if (!rc)
			rc = carve_replica(st, job_id, c->lease.id, now);
		if (!rc) {
			c->workload = xstrdup(job.workload);
			c->params = xstrdup(job.params);
		}
		free(spec_text);
		free(next_text);
out:
		job_parts_clear(&parts);
		json_decref(spec);
		json_decref(next);
		json_decref(params);
		json_decref(cursor);
		json_decref(answer);
		store_job_clear(&job);
		json_decref(skip);
		return rc;
next_job:
		job_parts_clear(&parts);
		json_decref(params);
		json_decref(cursor);
		json_decref(answer);
		store_job_clear(&job);
		if (rc)
			break;
		rc = GERR_NOTFOUND;
	}
	json_decref(skip);
	return rc;
}

static void explain_no_lease(struct store *st, struct sched_claim *c)
{
	struct store_job *jobs = NULL;
	size_t n = 0, active = 0, paused = 0;
	uint64_t waiting = 0;

	if (store_job_list(st, &jobs, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			uint64_t w = 0;

			if (jobs[i].state == JOB_ACTIVE) {
				active++;
				if (store_replica_waiting(st, jobs[i].id,
							  &w) == 0)
					waiting += w;
			} else if (jobs[i].state == JOB_PAUSED) {
				paused++;
			}
		}
		store_job_free_array(jobs, n);
	}
	c->no_jobs = active == 0 && paused == 0;
	if (c->no_jobs)
		snprintf(c->reason, sizeof(c->reason), "no jobs");
	else if (active == 0)
		snprintf(c->reason, sizeof(c->reason), "all jobs are paused");
	else if (waiting)
		/* The claim's exclusions (store_lease_claim_pending). */
		snprintf(c->reason, sizeof(c->reason), "%" PRIu64 " pending "
			 "lease(s) wait for another worker: one that did not "
			 "fail them or compute another result of their group",
			 waiting);
	else {
		sched_holders(st, 0, c->reason, sizeof(c->reason));
		if (!c->reason[0])
			snprintf(c->reason, sizeof(c->reason), "every lease "
				 "of the active jobs is held by a worker or finished");
	}
}

void sched_holders(struct store *st, int64_t job_id, char *buf, size_t len)
{
	static const char more[] = ", ...";
	struct store_holder *h = NULL;
	size_t n = 0, used;

	if (!len)
		return;
	buf[0] = '\0';
	if (store_lease_holders(st, job_id, &h, &n) || n == 0 ||
	    len < 32) {
		store_holder_free_array(h, n);
		return;
	}
	used = (size_t)snprintf(buf, len, "every lease is held:");
	for (size_t i = 0; i < n; i++) {
		/* Keep room for "more" after the last name that fits. */
		size_t room = len - used - sizeof(more) + 1;
		int k = snprintf(buf + used, room, "%s %s holds %" PRIu64,
				 i ? "," : "", h[i].name, h[i].leases);

		if (k < 0 || (size_t)k >= room) {
			snprintf(buf + used, len - used, "%s", more);
			break;
		}
		used += (size_t)k;
	}
	store_holder_free_array(h, n);
}

/* Forget the outputs of an earlier run (a claim may run twice: see
 * dbq_submit_batch). */
static void claim_reset(struct sched_claim *c)
{
	store_lease_clear(&c->lease);
	memset(&c->lease, 0, sizeof(c->lease));
	free(c->workload);
	free(c->params);
	free(c->checkpoint);
	c->workload = c->params = NULL;
	c->checkpoint = NULL;
	c->checkpoint_len = 0;
	c->no_jobs = 0;
	c->reason[0] = '\0';
	c->rc = 0;
}

/* A quarantined worker, or one holding its share of leases already (fair
 * share: one token cannot take every lease), gets nothing more. */
static int claim_refused(struct store *st, struct sched_claim *c)
{
	struct store_worker w = {0};
	uint64_t held = 0;
	uint32_t cap = c->pol->max_leases_per_worker;

	if (store_worker_get(st, c->worker_id, &w) != 0)
		return 0;
	if (w.quarantined) {
		c->rc = GERR_STATE;
		snprintf(c->reason, sizeof(c->reason), "worker %s is quarantined "
			 "(%u failed verifications, %u messages about leases it "
			 "was not granted, %u leases revoked for no progress)",
			 w.name, w.failures, w.foreign_msgs, w.stalls);
	} else if (cap && (c->rc = store_lease_held_count(st, c->worker_id,
							  &held)) == 0 &&
		   held >= cap) {
		c->rc = GERR_STATE;
		snprintf(c->reason, sizeof(c->reason), "worker %s holds %" PRIu64
			 " leases, the most one worker may hold "
			 "(--max-leases-per-worker %u)", w.name, held, cap);
	}
	store_worker_clear(&w);
	return c->rc != 0;
}

void sched_claim(struct store *st, struct sched_claim *c)
{
	double now = sched_now();

	claim_reset(c);
	if (claim_refused(st, c))
		return;
	c->rc = store_begin(st);
	if (c->rc)
		return;
	c->rc = store_lease_claim_pending(st, c->worker_id, c->workloads_json,
					  now + c->pol->lease_timeout_s, now,
					  &c->lease);
	if (c->rc == 0) {
		struct store_job job = {0};
		c->rc = store_job_get(st, c->lease.job_id, &job);
		if (c->rc == 0) {
			c->workload = xstrdup(job.workload);
			c->params = xstrdup(job.params);
		}
		store_job_clear(&job);
	} else if (c->rc == GERR_NOTFOUND) {
		c->rc = carve_new(st, c, now);
	}
	if (c->rc == 0 && (!c->workload || !c->params))
		c->rc = GERR_NOMEM;
	if (c->rc == 0) {
		char detail[96];
		snprintf(detail, sizeof(detail), "units=%" PRIu64 " attempt=%u",
			 c->lease.units, c->lease.attempts);
		c->rc = store_event(st, now, c->lease.job_id, c->lease.id,
				    c->lease.epoch, c->worker_id, "grant", detail);
	}
	if (c->rc == 0)
		c->rc = store_commit(st);
	else
		store_rollback(st);
	if (c->rc == GERR_NOTFOUND) {
		explain_no_lease(st, c);
		return;
	}
	if (c->rc)
		return;
	if (c->lease.checkpoint) {
		/* A missing or damaged checkpoint file only costs the work since
		 * the lease started: run from the beginning rather than fail. */
		if (blob_store_get(c->pol->data_dir, c->lease.checkpoint,
				   &c->checkpoint, &c->checkpoint_len) != 0) {
			c->checkpoint = NULL;
			c->checkpoint_len = 0;
		}
	}
}

void sched_claim_clear(struct sched_claim *c)
{
	free(c->workloads_json);
	store_lease_clear(&c->lease);
	free(c->workload);
	free(c->params);
	free(c->checkpoint);
	memset(c, 0, sizeof(*c));
}

/* ---- uploads ---- */

void sched_upload_decode(struct sched_upload *u)
{
	struct blob_info info;
	uint8_t *raw = NULL;
	size_t raw_len = 0;
	const struct workload *wl = workload_find(u->workload);
	enum blob_kind want = u->is_result ? BLOB_RESULT : BLOB_CHECKPOINT;
	double t0 = mono_s();
	uint64_t max = 0;

	if (!wl) {
		u->rc = GERR_UNSUPPORTED;
		snprintf(u->err, sizeof(u->err), "unknown workload %s", u->workload);
		goto out;
	}
	/* The workload's bound for this lease, before anything is inflated. */
	u->rc = workload_blob_max(wl, u->params, u->spec, u->is_result, &max,
				  u->err, sizeof(u->err));
	if (!u->rc)
		u->rc = blob_decode_max(u->blob, u->blob_len, max, &info, &raw,
					&raw_len, u->err, sizeof(u->err));
	if (u->rc == GERR_TOOBIG) {
		char why[sizeof(u->err)];
		snprintf(why, sizeof(why), "%s", u->err);
		snprintf(u->err, sizeof(u->err), "%.31s %s: %.200s", u->workload,
			 u->is_result ? "result" : "checkpoint", why);
	}
	if (u->rc)
		goto out;
	if (info.kind != want || strcmp(info.workload, u->workload) != 0 ||
	    info.lease != (uint64_t)u->lease_id || info.epoch != u->epoch) {
		u->rc = GERR_CORRUPT;
		snprintf(u->err, sizeof(u->err),
			 "blob header does not match the upload (kind %d, workload %s, lease %" PRIu64
			 ", epoch %" PRIu64 ")",
			 (int)info.kind, info.workload, info.lease, info.epoch);
		goto out;
	}
	if (!u->is_result) {
		json_t *params = json_parse_text(u->params);
		json_t *spec = json_parse_text(u->spec);
		u->rc = (params && spec) ? wl->check_checkpoint(workload_ctx(wl), params, spec, raw,
			raw_len, u->err, sizeof(u->err)) : GERR_CORRUPT;
		json_decref(params);
		json_decref(spec);
		if (u->rc)
			goto out;
	}
	if (u->is_result) { /* for its verification */
		free(u->raw);
		u->raw = raw;
		u->raw_len = raw_len;
		raw = NULL;
	}
out:
	free(raw);
	u->decode_s = mono_s() - t0;
}

void sched_upload_store(struct sched_upload *u)
{
	struct blob_info info;
	enum blob_kind want = u->is_result ? BLOB_RESULT : BLOB_CHECKPOINT;
	double t0 = mono_s();

	/* Only a blob that names this upload is stored under its hash, so
	 * that sched_upload_unstore can never remove another lease's file. */
	u->store_rc = blob_peek(u->blob, u->blob_len, &info, NULL, 0);
	if (u->store_rc == 0 &&
	    (info.kind != want || strcmp(info.workload, u->workload) != 0 ||
	     info.lease != (uint64_t)u->lease_id || info.epoch != u->epoch))
		u->store_rc = GERR_CORRUPT;
	if (u->store_rc == 0)
		u->store_rc = blob_store_put(u->pol->data_dir, u->blob,
					     u->blob_len, u->hash);
	u->stored = u->store_rc == 0;
	u->store_s = mono_s() - t0;
}

int sched_upload_join(struct sched_upload *u)
{
	if (u->rc)
		return u->stored;
	if (!u->stored) {
		u->rc = u->store_rc ? u->store_rc : GERR_STATE;
		snprintf(u->err, sizeof(u->err), "cannot store blob: %s",
			 gerr_str(u->rc));
	}
	return 0;
}

void sched_upload_unstore(struct sched_upload *u)
{
	if (u->stored && blob_store_remove(u->pol->data_dir, u->hash) == 0)
		u->stored = 0;
}

void sched_upload_check(struct sched_upload *u)
{
	sched_upload_decode(u);
	if (u->rc == 0)
		sched_upload_store(u);
	sched_upload_join(u);
}

void sched_upload_commit(struct store *st, struct sched_upload *u)
{
	double now = sched_now(), t0 = mono_s();
	char *old = NULL;
	char detail[128];

	u->rc = store_begin(st);
	if (u->rc)
		return;
	if (u->is_result)
		u->rc = store_lease_set_result(st, u->lease_id, u->epoch, u->hash,
					       u->units_done, now);
	else
		u->rc = store_lease_set_checkpoint(st, u->lease_id, u->epoch,
			u->hash, u->units_done, now, &old);
	snprintf(detail, sizeof(detail), "units_done=%" PRIu64 " blob=%.16s",
		 u->units_done, u->hash);
	if (!u->rc)
		u->rc = store_event(st, now, u->job_id, u->lease_id, u->epoch,
				    u->worker_id,
				    u->is_result ? "result" : "checkpoint", detail);
	if (!u->rc)
		u->rc = store_commit(st);
	else
		store_rollback(st);
	if (u->rc == GERR_STALE) /* expired or re-issued since the load */
		snprintf(u->err, sizeof(u->err), "%s", SCHED_NOT_HELD);
	/* The replaced checkpoint is garbage only once the new one is durable;
	 * a content-identical checkpoint shares the file, so keep it then. */
	if (!u->rc && old && strcmp(old, u->hash) != 0)
		blob_store_remove(u->pol->data_dir, old);
	free(old);
	u->commit_s = mono_s() - t0;
}

void sched_upload_clear(struct sched_upload *u)
{
	free(u->blob);
	free(u->workload);
	free(u->params);
	free(u->spec);
	free(u->raw);
	u->blob = u->raw = NULL;
	u->workload = u->params = u->spec = NULL;
}

/* ---- verification and merge ---- */

void sched_verify_load(struct store *st, struct sched_verify *v)
{
	struct store_job job = {0};

	v->rc = store_lease_get(st, v->lease_id, &v->lease);
	if (v->rc)
		return;
	if (v->lease.state != LEASE_DONE || v->lease.epoch != v->epoch ||
	    !v->lease.result) {
		v->rc = GERR_STALE;
		return;
	}
	v->checked_id = v->lease_id;
	v->rc = replica_load(st, &v->lease, &v->rep);
	if (v->rc || v->workload) /* early check: the upload loaded the job */
		return;
	v->rc = store_job_get(st, v->lease.job_id, &job);
	if (v->rc == 0) {
		v->workload = xstrdup(job.workload);
		v->params = xstrdup(job.params);
		if (!v->workload || !v->params)
			v->rc = GERR_NOMEM;
	}
	store_job_clear(&job);
}

void sched_verify_check(struct sched_verify *v)
{
	uint8_t *blob = NULL;
	size_t len = 0;
	struct blob_info info;
	const struct workload *wl = workload_find(v->workload);
	json_t *params = NULL, *spec = NULL;
	struct timespec t0, t1;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	v->passed = 0;
	v->decode_s = 0;
	if (!v->raw) {
		rc = blob_store_get(v->pol->data_dir, v->lease.result, &blob, &len);
		if (rc) {
			snprintf(v->err, sizeof(v->err), "result blob unreadable: %s",
				 gerr_str(rc));
			goto out;
		}
		rc = blob_decode(blob, len, &info, &v->raw, &v->raw_len, v->err,
				 sizeof(v->err));
		if (rc)
			goto out;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		v->decode_s = (double)(t1.tv_sec - t0.tv_sec) +
			      (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	}
	params = json_parse_text(v->params);
	spec = json_parse_text(v->spec ? v->spec : v->lease.spec);
	if (!wl || !params || !spec) {
		snprintf(v->err, sizeof(v->err), "job or lease unreadable");
		goto out;
	}
	/* A result that passed before (replicated, durable) is only
	 * compared again. */
	rc = v->rep.checked ? 0 : wl->verify(workload_ctx(wl), params, spec,
		v->raw, v->raw_len, v->seed, v->err, sizeof(v->err));
	v->passed = rc == 0;
	if (v->passed && v->rep.npeer)
		replica_compare(&v->rep, v->pol->data_dir, wl, params, spec,
				v->raw, v->raw_len, v->err, sizeof(v->err));
out:
	clock_gettime(CLOCK_MONOTONIC, &t1);
	v->seconds = (double)(t1.tv_sec - t0.tv_sec) +
		     (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	json_decref(params);
	json_decref(spec);
	free(blob);
}

/* Finish the job when every lease is verified and nothing is left to carve. */
static int maybe_finish(struct store *st, struct sched_verify *v,
			const struct workload *wl, const json_t *params,
			const json_t *answer, double now)
{
	struct store_job job = {0};
	uint64_t counts[LEASE_NSTATES];
	int rc = store_job_get(st, v->lease.job_id, &job);

	if (rc)
		return rc;
	/* Counting the job's leases costs a pass over them: only once the
	 * planner has handed out its last lease. */
	if (!job.carve_done || job.state == JOB_CANCELLED) {
		store_job_clear(&job);
		return 0;
	}
	rc = store_lease_counts(st, v->lease.job_id, counts);
	if (rc || counts[LEASE_PENDING] || counts[LEASE_LEASED] ||
	    counts[LEASE_DONE] || counts[LEASE_FAILED]) {
		store_job_clear(&job);
		return rc;
	}
	char err[WL_ERRLEN] = "";
	struct job_parts parts;
	int frc = job_parts_open(&parts, st, job.id);

	if (frc == 0)
		frc = wl->finish(workload_ctx(wl), params, answer, &parts.pub,
				 err, sizeof(err));
	else
		snprintf(err, sizeof(err), "parts unreadable: %s", gerr_str(frc));
	job_parts_clear(&parts);
	if (frc == 0) {
		rc = store_job_set_state(st, job.id, JOB_DONE, NULL, now);
		v->job_finished = 1;
	} else {
		char reason[WL_ERRLEN + 64];
		snprintf(reason, sizeof(reason), "final check failed: %s", err);
		rc = store_job_set_state(st, job.id, JOB_FAILED, reason, now);
		v->job_finished = -1;
	}
	if (!rc)
		rc = store_event(st, now, job.id, 0, 0, 0,
				 frc == 0 ? "job_done" : "job_failed", err);
	store_job_clear(&job);
	return rc;
}

static int commit_pass(struct store *st, struct sched_verify *v, double now)
{
	const struct workload *wl = workload_find(v->workload);
	struct store_job job = {0};
	json_t *params = json_parse_text(v->params);
	json_t *spec = json_parse_text(v->lease.spec);
	json_t *answer = NULL, *merged = NULL, *note = NULL;
	char *text = NULL, *note_text = NULL;
	int rc = store_job_get(st, v->lease.job_id, &job);

	if (!rc && (!wl || !params || !spec))
		rc = GERR_CORRUPT;
	if (!rc)
		rc = store_lease_set_verified(st, v->lease_id, v->epoch, now);
	if (!rc) {
		answer = json_parse_text(job.answer);
		rc = wl->merge(workload_ctx(wl), params, answer, spec, v->raw,
			       v->raw_len, v->lease.result, &merged, &note);
	}
	if (!rc && note) {
		note_text = json_dumps(note, JSON_COMPACT | JSON_ENCODE_ANY);
		rc = note_text ? 0 : GERR_NOMEM;
	}
	if (!rc)
		rc = store_part_add(st, job.id, v->lease_id, note_text);
	if (!rc) {
		text = json_text(merged);
		rc = text ? store_job_set_answer(st, job.id, text,
			job.units_verified + v->lease.units) : GERR_NOMEM;
	}
	if (!rc && v->lease.worker_id)
		rc = store_worker_credit(st, v->lease.worker_id, v->lease.units,
					 0, now);
	if (!rc)
		rc = store_event(st, now, job.id, v->lease_id, v->epoch,
				 v->lease.worker_id, "verified", NULL);
	if (!rc && job.state != JOB_CANCELLED)
		rc = maybe_finish(st, v, wl, params, merged, now);
	free(text);
	free(note_text);
	json_decref(note);
	json_decref(merged);
	json_decref(answer);
	json_decref(params);
	json_decref(spec);
	store_job_clear(&job);
	return rc;
}

static int commit_fail(struct store *st, struct sched_verify *v, double now)
{
	enum lease_state ns = LEASE_PENDING;
	char reason[400];
	int quarantined = 0;
	int rc;

	snprintf(reason, sizeof(reason), "verification failed: %s", v->err);
	rc = store_lease_reject(st, v->lease_id, v->epoch, reason,
				v->pol->max_failures, now, &ns);
	if (!rc && v->lease.worker_id)
		rc = store_worker_fail(st, v->lease.worker_id,
				       v->pol->quarantine_after, &quarantined);
	if (!rc)
		rc = store_event(st, now, v->lease.job_id, v->lease_id, v->epoch,
				 v->lease.worker_id, "verify_failed", v->err);
	if (!rc && ns == LEASE_FAILED) {
		char jr[512];
		/* Failed runs count too (sched_hold.c): say what failed last. */
		snprintf(jr, sizeof(jr), "lease %" PRId64 " failed %u times; last: "
			 "verification failed: %s", v->lease_id,
			 v->lease.failures + 1, v->err);
		rc = store_job_set_state(st, v->lease.job_id, JOB_FAILED, jr, now);
		v->job_finished = -1;
	} else if (!rc) {
		char jr[512];
		snprintf(jr, sizeof(jr), "lease %" PRId64 " retried after a failed verification: %s",
			 v->lease_id, v->err);
		rc = store_job_set_reason(st, v->lease.job_id, jr);
	}
	return rc;
}

/* A result that passed: merged, or held for replication (replica.h). */
static int commit_checked(struct store *st, struct sched_verify *v, double now)
{
	struct replica_policy rp = { v->pol->trust_after, v->pol->quarantine_after,
				     v->pol->max_failures + 2 };
	struct store_lease primary = {0};
	enum replica_verdict vd = REPLICA_MERGE;
	int from_peer = 0;
	int rc = replica_decide(st, &rp, &v->lease, &v->rep, now, &vd, &primary,
				&from_peer);

	if (rc)
		return rc;
	v->again = vd == REPLICA_AGAIN; /* verify.c verifies the lease again */
	v->waiting = vd == REPLICA_WAIT || vd == REPLICA_NOQUORUM;
	v->job_finished = vd == REPLICA_NOQUORUM ? -1 : 0;
	if (vd == REPLICA_QUORUM) {
		v->quorum = 1;
		store_lease_clear(&v->lease);
		v->lease = primary;
		v->lease_id = primary.id;
		v->epoch = primary.epoch;
		if (from_peer) {
			free(v->raw);
			v->raw = v->rep.primary_raw;
			v->raw_len = v->rep.primary_raw_len;
			v->rep.primary_raw = NULL;
		}
	}
	return vd == REPLICA_MERGE || vd == REPLICA_QUORUM ? commit_pass(st, v, now) : 0;
}

void sched_verify_commit(struct store *st, struct sched_verify *v)
{
	double now = sched_now(), t0 = mono_s();
	int rc = store_begin(st);

	if (rc) {
		v->rc = rc;
		return;
	}
	rc = v->passed ? commit_checked(st, v, now) : commit_fail(st, v, now);
	if (!rc)
		rc = store_commit(st);
	else
		store_rollback(st);
	/* The rejected result's file: its header names this lease and epoch,
	 * so no other row can hold its hash, and this row let go of it in
	 * the commit above. */
	if (!rc && !v->passed && v->lease.result)
		blob_store_remove(v->pol->data_dir, v->lease.result);
	v->rc = rc;
	v->commit_s = mono_s() - t0;
}

void sched_verify_clear(struct sched_verify *v)
{
	replica_check_clear(&v->rep);
	store_lease_clear(&v->lease);
	free(v->workload);
	free(v->params);
	free(v->spec);
	free(v->raw);
	v->workload = v->params = v->spec = NULL;
	v->raw = NULL;
}
