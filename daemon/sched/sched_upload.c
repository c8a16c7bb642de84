/* sched_upload.c - an upload's pool and database steps after its load
 * (sched_hold.c checks the holder): decode under the workload's bound,
 * store the file, join the two, commit the row (scheduler.h).
 *
 * Why decode and store are apart: a result's file is written on one pool
 * thread while another inflates it, and neither reads it back; a file
 * stored for bytes that then fail to decode is removed (unstore).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "blob.h"
#include "clock.h"
#include "gerr.h"
#include "scheduler.h"

static json_t *json_parse_text(const char *text)
{
	return text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
}

void sched_upload_decode(struct sched_upload *u)
{
	struct blob_info info;
	uint8_t *raw = NULL;
	size_t raw_len = 0;
	const struct workload *wl = workload_find(u->workload);
	enum blob_kind want = u->is_result ? BLOB_RESULT : BLOB_CHECKPOINT;
	double t0 = gclock_mono();
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
	u->decode_s = gclock_mono() - t0;
}

void sched_upload_store(struct sched_upload *u)
{
	struct blob_info info;
	enum blob_kind want = u->is_result ? BLOB_RESULT : BLOB_CHECKPOINT;
	double t0 = gclock_mono();

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
	u->store_s = gclock_mono() - t0;
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
	double now = gclock_wall(), t0 = gclock_mono();
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
	/* gpud's own measure of the sender's rate, for its next leases: a
	 * result's counts once the lease is verified; a checkpoint's, which
	 * nothing checks, may only lower the verified one (store_rates.c). */
	if (!u->rc && u->is_result)
		u->rc = store_rate_result(st, u->lease_id, u->epoch,
					  u->units_done, now);
	else if (!u->rc)
		u->rc = store_rate_checkpoint(st, u->lease_id, u->epoch,
					      u->worker_id, u->units_done, now);
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
	u->commit_s = gclock_mono() - t0;
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

