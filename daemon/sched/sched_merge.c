/* sched_merge.c - a stored result's verification and merge: its row
 * loaded (database), the workload's check and the replicas' comparison
 * (pool), the verdict committed with the merge into the job's answer and,
 * when it was the last lease, the job's end (database). scheduler.h.
 *
 * A job whose final check (the workload's finish) fails is not failed at
 * once when the workload can blame one lease (its blame hook): that lease
 * alone goes back to pending with its part removed and the answer rebuilt
 * without it, its worker is charged as for a failed verification, and the
 * job goes on; it fails only when no lease can be blamed.
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
	v->passed = rc == 0 || rc == WL_VERIFY_SPOT;
	/* Passed, and another worker's result is wanted (replica.h); kept
	 * apart from rep, which an early check loads only after this. */
	v->spot = rc == WL_VERIFY_SPOT;
	/* A format this gpud no longer reads (made before an upgrade): computed
	 * again, charged to no one. */
	v->outdated = rc == GERR_UNSUPPORTED;
	if (v->passed && v->rep.npeer)
		replica_compare(&v->rep, v->pol->data_dir, wl, params, spec,
				v->raw, v->raw_len, v->err, sizeof(v->err));
out:
	v->seconds = gclock_mono() - t0;
	json_decref(params);
	json_decref(spec);
	free(blob);
}

/* The stored result blobs, for a blame hook (struct wl_blob_reader). */
static int fetch_result(void *opaque, const char *hash, void **ret,
			size_t *ret_len)
{
	uint8_t *blob = NULL, *raw = NULL;
	size_t len = 0, raw_len = 0;
	struct blob_info info;
	char err[256];
	int rc = blob_store_get(opaque, hash, &blob, &len);

	if (rc == 0)
		rc = blob_decode(blob, len, &info, &raw, &raw_len, err,
				 sizeof(err));
	free(blob);
	if (rc == 0) {
		*ret = raw;
		*ret_len = raw_len;
	}
	return rc;
}

/* finish failed with ferr: the lease the workload blames goes back to
 * pending, its part removed and the answer rebuilt without it, its worker
 * charged. GERR_NOTFOUND (why added to ferr) when none can be blamed and
 * nothing was changed; another error is the store's (roll back). */
static int blame_lease(struct store *st, struct sched_verify *v,
		       const struct workload *wl, const json_t *params,
		       const json_t *answer, const struct store_job *job,
		       char *ferr, size_t ferrlen, double now)
{
	struct wl_blob_reader rd = { (void *)v->pol->data_dir, fetch_result };
	struct job_parts parts;
	struct store_part part = {0};
	struct store_lease l = {0};
	json_t *rebuilt = NULL;
	char *text = NULL, why[WL_ERRLEN] = "", reason[2 * WL_ERRLEN + 64];
	enum lease_state ns = LEASE_PENDING;
	uint64_t k = 0;
	int quarantined = 0;
	int rc = job_parts_open(&parts, st, job->id);

	if (rc == 0)
		rc = wl->blame(workload_ctx(wl), params, answer, &parts.pub, &rd,
			       &k, &rebuilt, why, sizeof(why));
	job_parts_clear(&parts);
	if (rc) { /* nothing changed yet: the job fails, saying why */
		size_t n = strlen(ferr);
		snprintf(ferr + n, ferrlen - n, "; %s",
			 why[0] ? why : gerr_str(rc));
		return GERR_NOTFOUND;
	}
	rc = store_part_get(st, job->id, k, &part);
	if (rc == 0)
		rc = store_lease_get(st, part.lease_id, &l);
	if (rc == 0)
		rc = (text = json_text(rebuilt)) ? 0 : GERR_NOMEM;
	snprintf(reason, sizeof(reason), "final check failed (%s): %s", ferr,
		 why);
	if (rc == 0)
		rc = store_part_remove(st, job->id, l.id);
	if (rc == 0)
		rc = store_lease_unverify(st, l.id, l.epoch, reason,
					  v->pol->max_failures, now, &ns);
	if (rc == 0)
		rc = store_job_set_answer(st, job->id, text,
			job->units_verified >= l.units ?
				job->units_verified - l.units : 0);
	if (rc == 0 && l.worker_id)
		rc = store_worker_fail(st, l.worker_id, v->pol->quarantine_after,
				       &quarantined);
	if (rc == 0)
		rc = store_event(st, now, job->id, l.id, l.epoch, l.worker_id,
				 "final_check_blamed", reason);
	if (rc == 0 && ns == LEASE_FAILED) {
		char jr[1024];
		snprintf(jr, sizeof(jr), "lease %" PRId64 " failed %u times; "
			 "last: %s", l.id, l.failures + 1, reason);
		rc = store_job_set_state(st, job->id, JOB_FAILED, jr, now);
		v->job_finished = -1;
	} else if (rc == 0) {
		char jr[1024];
		snprintf(jr, sizeof(jr), "lease %" PRId64 " computed again: %s",
			 l.id, reason);
		rc = store_job_set_reason(st, job->id, jr);
	}
	if (rc == 0 && l.result) {
		free(v->blamed_result);
		v->blamed_result = strdup(l.result);
	}
	free(text);
	json_decref(rebuilt);
	store_lease_clear(&l);
	store_part_clear(&part);
	return rc;
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
	if (frc && frc != GERR_IO && frc != GERR_NOMEM && wl->blame) {
		/* One lease blamed: the job goes on without it. */
		int brc = blame_lease(st, v, wl, params, answer, &job, err,
				      sizeof(err), now);
		if (brc != GERR_NOTFOUND) {
			store_job_clear(&job);
			return brc;
		}
	}
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
				     v->pol->max_failures + 2, v->workload,
				     now - 2 * v->pol->lease_timeout_s };
	struct store_lease primary = {0};
	enum replica_verdict vd = REPLICA_MERGE;
	int from_peer = 0;
	int rc;

	v->rep.spot = v->spot;
	rc = replica_decide(st, &rp, &v->lease, &v->rep, now, &vd, &primary,
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
	rc = v->passed	  ? commit_checked(st, v, now)
	     : v->outdated ? store_lease_recompute(st, v->lease_id, v->epoch,
						  v->err, now)
			   : commit_fail(st, v, now);
	if (!rc)
		rc = store_commit(st);
	else
		store_rollback(st);
	/* The rejected result's file: its header names this lease and epoch,
	 * so no other row can hold its hash, and this row let go of it in
	 * the commit above. */
	if (!rc && !v->passed && v->lease.result)
		blob_store_remove(v->pol->data_dir, v->lease.result);
	/* A blamed lease's, likewise (its row let go of it). */
	if (!rc && v->blamed_result)
		blob_store_remove(v->pol->data_dir, v->blamed_result);
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
	free(v->blamed_result);
	v->blamed_result = NULL;
	v->workload = v->params = v->spec = NULL;
	v->raw = NULL;
}
