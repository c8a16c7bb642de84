/* wgrant.c - a grant becomes a run: take the LEASE gpud grants (its state
 * is wlease.c's) and start its run (runner.h), and take what the run
 * produces on the loop thread: checkpoints to upload, the result (or why
 * the run failed), and blob fetch requests. What is sent about them is
 * wlease.c's: wgrant.c drives the lease state machine through wlease.c's
 * functions, and wlease.c never calls up into wgrant.c.
 *
 * Ownership: runner_start takes the job (deep copies of the LEASE's params
 * and spec, a copy of its checkpoint blob) on success; blobs taken from the
 * runner are owned by the client (struct client) from then on.
 *
 * Threads: loop thread only; wgrant_on_wake is the runner's wake callback,
 * run by its uv_async_t.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "gerr.h"

static const struct client_workload *find_workload(const struct client *cl,
						   const char *name)
{
	for (size_t i = 0; i < cl->cfg->n_workloads; i++)
		if (strcmp(cl->cfg->workloads[i].wl->name, name) == 0)
			return &cl->cfg->workloads[i];
	return NULL;
}

/* Start the run of the lease just granted (cl->cur); gives the lease back
 * when it cannot. bin is LEASE's attachment (copied). */
static void start_run(struct client *cl, const struct msg_lease *m,
		      const uint8_t *bin, size_t bin_len)
{
	const struct client_workload *cw = find_workload(cl, cl->cur.workload);
	struct runner_job job = { 0 };
	int rc;

	if (cl->exiting || !cw) {
		/* Give it straight back: shutting down, or a lease for a
		 * workload this worker never offered. */
		if (!cw) {
			char why[96];

			LOG_ERROR(cl->log, "gpud leased workload '%s' which this "
				  "worker does not run " LFMT, cl->cur.workload,
				  LARGS(cl));
			snprintf(why, sizeof(why), "worker does not run workload "
				 "'%s'", cl->cur.workload);
			wlease_set_error(cl, why);
			cl->retry_after_fail = 1;
		}
		wlease_release(cl, 0);
		return;
	}

	job.wl = cw->wl;
	job.dev = (struct wl_device){
		.kind = cl->cfg->device_kind,
		.index = cl->cfg->device_index,
		.threads = cl->cfg->threads,
		.cuda_ctx = cw->cuda_ctx,
	};
	/* Copies, not references: they are parts of the LEASE message,
	 * which the loop frees, and jansson's reference counts do not order
	 * one thread's reads before another thread's free. The runner thread
	 * is the only owner of its copies. */
	job.params = json_deep_copy(m->params);
	job.spec = json_deep_copy(m->spec);
	job.job = cl->cur.job;
	job.lease = cl->cur.lease;
	job.epoch = cl->cur.epoch;
	job.units = cl->cur.units;
	job.units_done = m->units_done;
	rc = job.params && job.spec ? 0 : GERR_NOMEM;
	if (rc == 0 && bin_len) {
		/* bin points into the read buffer: copy it. */
		job.ckpt_blob = malloc(bin_len);
		if (!job.ckpt_blob)
			rc = GERR_NOMEM;
		else
			memcpy(job.ckpt_blob, bin, bin_len);
		job.ckpt_blob_len = bin_len;
	}
	if (rc == 0)
		rc = runner_start(&cl->runner, &job, &cl->cur.run_id);
	if (rc < 0) {
		char why[96];

		LOG_ERROR(cl->log, "cannot start the run " LFMT ": %s",
			  LARGS(cl), gerr_str(rc));
		snprintf(why, sizeof(why), "worker cannot start the run: %s",
			 gerr_str(rc));
		wlease_set_error(cl, why);
		json_decref(job.params);
		json_decref(job.spec);
		free(job.ckpt_blob);
		cl->retry_after_fail = 1;
		wlease_release(cl, 0);
	}
}

int wgrant_on_lease(struct client *cl, const struct proto_frame *f)
{
	struct msg_lease m;

	if (wlease_grant(cl, f, &m) < 0)
		return GERR_PROTO;
	start_run(cl, &m, f->bin, f->bin_len);
	return 0;
}

static void on_checkpoint_made(struct client *cl, struct runner_ckpt *ck)
{
	int usable = ck->run_id == cl->cur.run_id &&
		     (cl->ls == WLEASE_RUNNING ||
		      (cl->ls == WLEASE_RELEASING && !cl->rel_sent));

	if (!usable) {
		free(ck->blob);
		return;
	}
	/* wlease.c #3: only the newest waiting checkpoint is kept. */
	wlease_upload_clear(&cl->ckpt_next);
	cl->ckpt_next = (struct wlease_upload){ .blob = ck->blob,
						.len = ck->blob_len,
						.units_done = ck->units_done };
	if (cl->ls == WLEASE_RELEASING && cl->rel_want_ckpt && ck->requested) {
		/* This is the checkpoint the release waited for; nothing the
		 * run does from here on would be uploaded. */
		cl->rel_want_ckpt = 0;
		uv_timer_stop(&cl->release_timer);
		runner_stop(&cl->runner);
	}
}

static void on_run_finished(struct client *cl, struct runner_result *res)
{
	int rc = res->rc;

	wfetch_forget(cl);
	if (res->run_id != cl->cur.run_id) {
		wlease_result_clear(res);
		return;
	}
	cl->cur.run_id = 0;

	if (cl->ls == WLEASE_STOPPING) {
		LOG_DEBUG(cl->log, "run output discarded " LFMT " rc=%s",
			  LARGS(cl), gerr_str(rc));
		wlease_result_clear(res);
		wlease_end(cl);
		return;
	}
	assert(cl->ls == WLEASE_RUNNING || cl->ls == WLEASE_RELEASING);

	if (rc == 0 && !(cl->ls == WLEASE_RELEASING && cl->rel_sent)) {
		/* A finished result beats a release: send it instead. */
		uv_timer_stop(&cl->release_timer);
		wlease_upload_clear(&cl->ckpt_sent);
		wlease_upload_clear(&cl->ckpt_next);
		cl->rel_want_ckpt = 0;
		cl->result = *res;
		cl->result_sent = 0;
		LOG_INFO(cl->log, "run done " LFMT " units=%" PRIu64
			 " seconds=%.3f rate=%.4g/s", LARGS(cl), res->units_done,
			 res->seconds, res->seconds > 0 ?
			 (double)res->units_run / res->seconds : 0.0);
		wlease_move(cl, WLEASE_RESULT);
		return;
	}
	if (rc == 0 || (rc == GERR_CANCELLED && cl->ls == WLEASE_RELEASING)) {
		/* Stopped (or finished too late) for the release: expected. */
		wlease_result_clear(res);
		return;
	}

	LOG_ERROR(cl->log, "run failed " LFMT ": %s (%s)", LARGS(cl),
		  res->err, gerr_str(rc));
	if (rc == GERR_DEVICE && cl->cfg->device_kind == WL_DEVICE_CUDA) {
		LOG_ERROR(cl->log, "device %s is unusable after this error; "
			  "releasing the lease and exiting",
			  cl->cfg->device_name);
		cl->exiting = 1;
		cl->exit_code = 1;
		wlease_arm_exit_timer(cl);
	} else {
		cl->retry_after_fail = 1;
	}
	/* wlease.c #8; too late when RELEASE already went. */
	if (!cl->rel_sent)
		wlease_set_error(cl, res->err);
	wlease_result_clear(res);
	if (cl->ls == WLEASE_RUNNING) {
		wlease_release(cl, 0);
	} else {
		cl->rel_want_ckpt = 0;
		uv_timer_stop(&cl->release_timer);
	}
}

void wgrant_on_wake(void *opaque)
{
	struct client *cl = opaque;
	struct runner_ckpt ck;
	struct runner_result res;

	if (cl->finished)
		return;
	if (runner_take_fetch(&cl->runner, cl->fetch_hash))
		cl->fetch_sent = 0; /* a new request: wlease_pump sends it */
	if (runner_take_checkpoint(&cl->runner, &ck))
		on_checkpoint_made(cl, &ck);
	if (runner_take_result(&cl->runner, &res))
		on_run_finished(cl, &res);
	wlease_pump(cl);
}
