/* control_answer.c - a job's answer out to gpuctl: `result` (the text, the
 * files of a finished job and the answer's JSON) and `export` (a
 * workload's bulk output). The job and its parts are read on the database
 * thread; the workload renders on the thread pool, so a large answer never
 * holds up the database thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blob.h"
#include "control_internal.h"
#include "gerr.h"
#include "gpud.h"
#include "proto.h"

static void pool_after(uv_work_t *w, int status)
{
	ctl_finish(w->data);
}

/* ---- result ---- */

/* Database thread: the job and its parts, for result_render. */
void ctl_result_load_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	int rc;

	if (store_job_get(st, r->job, &r->jobrow)) {
		snprintf(r->err, sizeof(r->err), "no job %" PRId64, r->job);
		return;
	}
	r->wl = workload_find(r->jobrow.workload);
	rc = job_parts_load(&r->parts, st, r->job);
	if (rc)
		snprintf(r->err, sizeof(r->err), "job %" PRId64 ": its parts: %s",
			 r->job, gerr_str(rc));
}

/* Thread pool: the text, the files of a finished job, and the reply. */
static void result_render(uv_work_t *w)
{
	struct ctl_req *r = w->data;
	const struct store_job *j = &r->jobrow;
	const struct workload *wl = r->wl;
	json_t *params = ctl_json_from_text(j->params);
	json_t *answer = ctl_json_from_text(j->answer);
	json_t *files = json_array(), *exports = json_array();
	char *text = NULL;

	for (size_t k = 0; wl && wl->export_data && wl->exports && wl->exports[k]; k++)
		json_array_append_new(exports, json_string(wl->exports[k]));
	if (wl && !json_is_null(answer)) {
		void *ctx = workload_ctx(wl);
		text = wl->render_text(ctx, params, answer, &r->parts.pub);
		if (j->state == JOB_DONE && wl->render_files) {
			char dir[4096], err[WL_ERRLEN];
			snprintf(dir, sizeof(dir), "%s/results", r->d->cfg.data_dir);
			mkdir(dir, 0755);
			snprintf(dir, sizeof(dir), "%s/results/job-%" PRId64,
				 r->d->cfg.data_dir, j->id);
			if ((mkdir(dir, 0755) == 0 || errno == EEXIST) &&
			    wl->render_files(ctx, params, answer, &r->parts.pub,
					     dir, err, sizeof(err)) == 0)
				json_array_append_new(files, json_string(dir));
		}
	}
	/* The answer goes in the frame's binary part, where its size is
	 * bounded by PROTO_MAX_BIN rather than the header's limit. */
	int has_answer = answer && !json_is_null(answer);
	if (has_answer) {
		r->out = json_dumps(answer, JSON_COMPACT);
		r->out_len = r->out ? strlen(r->out) : 0;
	}
	if (has_answer && !r->out)
		snprintf(r->err, sizeof(r->err), "out of memory for the answer");
	else if (r->out_len > PROTO_MAX_BIN)
		snprintf(r->err, sizeof(r->err), "the answer is larger than %u bytes",
			 PROTO_MAX_BIN);
	else {
		/* "o" steals files and exports, even when packing fails. */
		r->reply = json_pack("{s:b, s:I, s:s, s:s, s:O, s:I, s:o, s:o, s:o, s:I, s:s?}",
			"ok", 1, "job", (json_int_t)j->id, "workload", j->workload,
			"state", job_state_name(j->state), "params", params,
			"answer_bytes", (json_int_t)r->out_len,
			"text", text ? json_string(text) : json_null(),
			"files", files, "exports", exports,
			"units_verified", (json_int_t)j->units_verified,
			"reason", j->reason);
		files = exports = NULL;
	}
	json_decref(files);
	json_decref(exports);
	free(text);
	json_decref(params);
	json_decref(answer);
}

void ctl_result_load_after(void *arg)
{
	struct ctl_req *r = arg;

	r->work.data = r;
	if (r->err[0] ||
	    uv_queue_work(r->d->loop, &r->work, result_render, pool_after))
		ctl_finish(r);
}

/* ---- export ---- */

static int export_fetch(void *opaque, const char *hash, void **ret, size_t *ret_len)
{
	struct ctl_req *r = opaque;
	uint8_t *blob = NULL, *raw = NULL;
	size_t len = 0, raw_len = 0;
	struct blob_info info;
	char err[128];
	int rc = blob_store_get(r->d->cfg.data_dir, hash, &blob, &len);

	if (!rc)
		rc = blob_decode(blob, len, &info, &raw, &raw_len, err, sizeof(err));
	free(blob);
	if (rc)
		return rc;
	*ret = raw;
	*ret_len = raw_len;
	return 0;
}

void ctl_export_load_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	struct store_job j = {0};
	int rc;

	if (store_job_get(st, r->job, &j)) {
		snprintf(r->err, sizeof(r->err), "no job %" PRId64, r->job);
		return;
	}
	r->wl = workload_find(j.workload);
	r->job_params = j.params;
	r->job_answer = j.answer;
	j.params = j.answer = NULL;
	store_job_clear(&j);
	rc = job_parts_load(&r->parts, st, r->job);
	if (rc)
		snprintf(r->err, sizeof(r->err), "job %" PRId64 ": its parts: %s",
			 r->job, gerr_str(rc));
}

static void export_work(uv_work_t *w)
{
	struct ctl_req *r = w->data;
	json_t *params = ctl_json_from_text(r->job_params);
	json_t *answer = ctl_json_from_text(r->job_answer);
	const json_t *args = json_object_get(r->req, "args");
	struct wl_blob_reader rd = {r, export_fetch};
	json_t *empty = json_object();
	char err[WL_ERRLEN] = "";
	int rc = r->wl->export_data(workload_ctx(r->wl), params,
				    json_is_null(answer) ? NULL : answer, &r->parts.pub,
				    r->what, json_is_object(args) ? args : empty,
				    &rd, &r->out, &r->out_len, err, sizeof(err));

	if (rc) {
		snprintf(r->err, sizeof(r->err), "export %s of job %" PRId64 ": %s",
			 r->what, r->job, err[0] ? err : gerr_str(rc));
		r->out = NULL;
		r->out_len = 0;
	} else if (r->out_len > PROTO_MAX_BIN) {
		snprintf(r->err, sizeof(r->err), "export is larger than %u bytes; ask for less",
			 PROTO_MAX_BIN);
		free(r->out);
		r->out = NULL;
		r->out_len = 0;
	} else {
		r->reply = json_pack("{s:b, s:I}", "ok", 1, "bytes", (json_int_t)r->out_len);
	}
	json_decref(empty);
	json_decref(params);
	json_decref(answer);
}

void ctl_export_load_after(void *arg)
{
	struct ctl_req *r = arg;
	int ok = 0;

	if (!r->err[0]) {
		for (size_t k = 0; r->wl && r->wl->export_data && r->wl->exports &&
				   r->wl->exports[k]; k++)
			if (strcmp(r->wl->exports[k], r->what) == 0)
				ok = 1;
		if (!ok)
			snprintf(r->err, sizeof(r->err), "%s jobs have no export '%s'",
				 r->wl ? r->wl->name : "these", r->what);
	}
	r->work.data = r;
	if (ok && uv_queue_work(r->d->loop, &r->work, export_work, pool_after) == 0)
		return;
	ctl_finish(r);
}
