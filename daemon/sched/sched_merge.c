/* sched_merge.c - a stored result's verification and merge: its row
 * loaded (database), the workload's check and the replicas' comparison
 * (pool), the verdict committed with the merge into the job's answer and,
 * when it was the last lease, the job's end (database). scheduler.h.
 *
 * Why load / check / commit: SQLite work stays on the database thread,
 * while inflating and verifying blobs (CPU heavy, possibly large) runs on
 * the thread pool, so neither blocks the event loop nor holds the database
 * thread busy.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "blob.h"
#include "clock.h"
#include "gerr.h"
#include "job_parts.h"
#include "scheduler.h"

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static json_t *json_parse_text(const char *text)
{
	return text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
}

static char *json_text(const json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

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
	double t0 = gclock_mono();
	int rc;

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
		v->decode_s = gclock_mono() - t0;
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
	v->seconds = gclock_mono() - t0;
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
	v->again = vd == REPLICA_AGAIN; /* upload.c verifies the lease again */
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
	double now = gclock_wall(), t0 = gclock_mono();
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
	v->commit_s = gclock_mono() - t0;
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
