/* control_answer.c - a job's answer out to gpuctl: `result` (the text, the
 * plot of a finished job and the answer's JSON) and `export` (a
 * workload's bulk output, or "plot": the job's plot as it stands). The job and its parts are read on the database
 * thread; the workload renders on the thread pool, so a large answer never
 * holds up the database thread.
 *
 * Neither prints what is not as gpud wrote it: the job's answer is
 * checked against its digest, and each part is as it is read
 * (store_part_get), so a damaged one is refused, named, instead of shown.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "control_internal.h"
#include "gerr.h"
#include "gpud.h"
#include "proto.h"
#include "results.h"

static void pool_after(uv_work_t *w, int status)
{
	ctl_finish(w->data);
}

/* ---- result ---- */

/* Database thread: the job's answer and its parts as they were written
 * (their digests), or r->err saying what is damaged. */
static int answer_check(struct ctl_req *r, struct store *st)
{
	int rc = store_job_digest_check(st, r->in.job);

	if (rc == 0)
		rc = job_parts_load(&r->parts, st, r->in.job);
	if (rc == GERR_CORRUPT)
		snprintf(r->err, sizeof(r->err), "refused: %s (gpuctl check "
			 "lists every damaged answer and part)", store_errmsg(st));
	else if (rc)
		snprintf(r->err, sizeof(r->err), "job %" PRId64 ": its parts: %s",
			 r->in.job, gerr_str(rc));
	return rc;
}

/* Database thread: the job and its parts, for result_render. */
void ctl_result_load_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;

	if (store_job_get(st, r->in.job, &r->jobrow)) {
		snprintf(r->err, sizeof(r->err), "no job %" PRId64, r->in.job);
		return;
	}
	r->wl = workload_find(r->jobrow.workload);
	answer_check(r, st);
}

/* A finished job's plot, written at its finish; written now when missing
 * (a job finished before gpud wrote plots, or the file was removed). */
/* 1 with its path in path, or 0 (no plot). */
static int result_plot(struct ctl_req *r, char *path, size_t path_len)
{
	const char *dir = r->d->cfg.results_dir;
	char err[WL_ERRLEN + 64];
	char *svg = NULL;
	size_t len = 0;
	struct stat sb;
	int rc = results_path(dir, r->jobrow.id, r->wl->plot_name, path,
			      path_len);

	if (rc == 0 && stat(path, &sb) != 0) {
		rc = results_render(r->wl, r->jobrow.params, r->jobrow.answer,
				     &r->parts.pub, r->d->cfg.data_dir, &svg, &len,
				     err, sizeof(err));
		if (rc == 0)
			rc = results_store(dir, r->jobrow.id, r->wl->plot_name, svg,
					   len, NULL, 0, err, sizeof(err));
		free(svg);
	}
	return rc == 0;
}

/* Thread pool: the text, the plot of a finished job, and the reply. */
static void result_render(uv_work_t *w)
{
	struct ctl_req *r = w->data;
	const struct store_job *j = &r->jobrow;
	const struct workload *wl = r->wl;
	json_t *params = ctl_json_from_text(j->params);
	json_t *answer = ctl_json_from_text(j->answer);
	const char *exports[64], *files[1];
	size_t n_exports = 0, n_files = 0;
	char *text = NULL, path[4200];

	for (size_t k = 0; wl && wl->export_data && wl->exports && wl->exports[k] &&
	     n_exports + 1 < sizeof(exports) / sizeof(exports[0]); k++)
		exports[n_exports++] = wl->exports[k];
	if (wl && wl->render_plot)
		exports[n_exports++] = "plot";
	if (wl && !json_is_null(answer)) {
		text = wl->render_text(workload_ctx(wl), params, answer, &r->parts.pub);
		if (j->state == JOB_DONE && wl->render_plot && result_plot(r, path, sizeof(path)))
			files[n_files++] = path;
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
	else if (!(r->reply = ctlcmd_reply_encode(CTLCMD_RESULT, &(struct ctlcmd_reply){
			.job = j->id, .workload = j->workload,
			.state = job_state_name(j->state), .params = params,
			.answer_bytes = (int64_t)r->out_len, .text = text,
			.files = files, .n_files = n_files,
			.exports = exports, .n_exports = n_exports,
			.units_verified = (int64_t)j->units_verified, .reason = j->reason })))
		snprintf(r->err, sizeof(r->err), "out of memory");
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

void ctl_export_load_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	struct store_job j = {0};

	if (store_job_get(st, r->in.job, &j)) {
		snprintf(r->err, sizeof(r->err), "no job %" PRId64, r->in.job);
		return;
	}
	r->wl = workload_find(j.workload);
	r->job_params = j.params;
	r->job_answer = j.answer;
	j.params = j.answer = NULL;
	store_job_clear(&j);
	answer_check(r, st);
}

static void export_work(uv_work_t *w)
{
	struct ctl_req *r = w->data;
	json_t *params = ctl_json_from_text(r->job_params);
	json_t *answer = ctl_json_from_text(r->job_answer);
	const json_t *args = r->in.args;
	struct wl_blob_reader rd = results_blob_reader(r->d->cfg.data_dir);
	json_t *empty = json_object();
	char err[WL_ERRLEN] = "";
	int rc = r->wl->export_data(workload_ctx(r->wl), params,
				    json_is_null(answer) ? NULL : answer, &r->parts.pub,
				    r->in.what, json_is_object(args) ? args : empty,
				    &rd, &r->out, &r->out_len, err, sizeof(err));

	if (rc) {
		snprintf(r->err, sizeof(r->err), "export %s of job %" PRId64 ": %s",
			 r->in.what, r->in.job, err[0] ? err : gerr_str(rc));
		r->out = NULL;
		r->out_len = 0;
	} else if (r->out_len > PROTO_MAX_BIN) {
		snprintf(r->err, sizeof(r->err), "export is larger than %u bytes; ask for less",
			 PROTO_MAX_BIN);
		free(r->out);
		r->out = NULL;
		r->out_len = 0;
	} else {
		r->reply = ctlcmd_reply_encode(CTLCMD_EXPORT, &(struct ctlcmd_reply){
			.bytes = (int64_t)r->out_len });
	}
	json_decref(empty);
	json_decref(params);
	json_decref(answer);
}

/* The plot, as gpud would write it now (running jobs too). */
static void plot_work(uv_work_t *w)
{
	struct ctl_req *r = w->data;
	char err[WL_ERRLEN + 64] = "";
	char *svg = NULL;
	size_t len = 0;
	int rc = results_render(r->wl, r->job_params, r->job_answer, &r->parts.pub,
				r->d->cfg.data_dir, &svg, &len, err, sizeof(err));

	if (rc == 0 && len > PROTO_MAX_BIN) {
		free(svg);
		rc = GERR_TOOBIG;
		snprintf(err, sizeof(err), "the plot is larger than %u bytes",
			 PROTO_MAX_BIN);
	}
	if (rc) {
		snprintf(r->err, sizeof(r->err), "plot of job %" PRId64 ": %s",
			 r->in.job, err);
		return;
	}
	r->out = svg;
	r->out_len = len;
	r->reply = ctlcmd_reply_encode(CTLCMD_EXPORT,
				       &(struct ctlcmd_reply){ .bytes = (int64_t)len });
}

void ctl_export_load_after(void *arg)
{
	struct ctl_req *r = arg;
	int ok = 0;

	r->work.data = r;
	if (!r->err[0] && r->wl && r->wl->render_plot && strcmp(r->in.what, "plot") == 0) {
		if (uv_queue_work(r->d->loop, &r->work, plot_work, pool_after) == 0)
			return;
		ctl_finish(r);
		return;
	}
	if (!r->err[0]) {
		for (size_t k = 0; r->wl && r->wl->export_data && r->wl->exports &&
				   r->wl->exports[k]; k++)
			if (strcmp(r->wl->exports[k], r->in.what) == 0)
				ok = 1;
		if (!ok)
			snprintf(r->err, sizeof(r->err), "%s jobs have no export '%s'",
				 r->wl ? r->wl->name : "these", r->in.what);
	}
	r->work.data = r;
	if (ok && uv_queue_work(r->d->loop, &r->work, export_work, pool_after) == 0)
		return;
	ctl_finish(r);
}
