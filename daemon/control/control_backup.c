/* control_backup.c - `gpuctl backup DIR` (control.h): the data directory
 * backed up while jobs run (backup.h), on a thread-pool thread: the
 * snapshot is read from a connection of its own, so the database thread
 * goes on granting and storing meanwhile. The reply (loop thread) says
 * where, how much, how long, and what the check of the copy found.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backup.h"
#include "clock.h"
#include "control_internal.h"
#include "event_note.h"
#include "gerr.h"
#include "gpud.h"
#include "scheduler.h"

/* Problems listed in a reply (all are counted), as gpuctl check lists. */
#define BACKUP_MAX_LISTED 1000

struct backup_job {
	struct ctl_req *r;
	uv_work_t work;
	char *dir;
	struct backup_opts opts;
	struct backup_report rep;
	int rc;
	char err[400];  /* fits in the reply's error with its prefix */
};

static void job_free(struct backup_job *b)
{
	backup_report_clear(&b->rep);
	free(b->dir);
	free(b);
}

static void backup_work(uv_work_t *w)
{
	struct backup_job *b = w->data;

	b->rc = backup_write(b->r->d->cfg.data_dir, b->dir, &b->opts, &b->rep,
			     b->err, sizeof(b->err));
}

static void backup_after(uv_work_t *w, int status)
{
	struct backup_job *b = w->data;
	struct ctl_req *r = b->r;
	const struct backup_report *rep = &b->rep;
	int sound = rep->nintegrity == 0 && rep->nprobs == 0;

	if (status || b->rc) {
		snprintf(r->err, sizeof(r->err), "backup failed: %s",
			 status ? "gpud is shutting down" : b->err);
		LOG_WARN(&r->d->log, "%s", r->err);
		job_free(b);
		ctl_finish(r);
		return;
	}
	size_t nrows = 0;
	struct ctlcmd_problem *rows = ctl_problem_rows(rep->probs, rep->nprobs,
						       BACKUP_MAX_LISTED, &nrows);
	if (rows)
		r->reply = ctlcmd_reply_encode(CTLCMD_BACKUP, &(struct ctlcmd_reply){
			.path = b->dir, .bytes = (int64_t)rep->bytes,
			.database_bytes = (int64_t)rep->db_bytes,
			.database_blake2b = rep->db_hash, .blobs = (int64_t)rep->blobs,
			.blob_bytes = (int64_t)rep->blob_bytes,
			.linked = (int64_t)rep->linked, .copied = (int64_t)rep->copied,
			.ident_files = (int64_t)rep->files,
			.leases_released = (int64_t)rep->released,
			.snapshots = (int64_t)rep->snapshots, .seconds = rep->seconds,
			.verified = sound, .database = (const char **)rep->integrity,
			.n_database = rep->nintegrity, .problems = rows,
			.n_problems = nrows, .problems_total = (int64_t)rep->nprobs });
	if (!r->reply)
		snprintf(r->err, sizeof(r->err), "out of memory");
	free(rows);
	LOG_INFO(&r->d->log, "backup written to %s: %" PRIu64 " bytes, %zu "
		 "blob(s), %zu granted lease(s) pending in the copy, %.1f s, %s",
		 b->dir, rep->bytes, rep->blobs, rep->released, rep->seconds,
		 sound ? "verified" : "PROBLEMS FOUND (gpuctl backup lists them)");
	event_note(r->d->dbq, "backup", sound ? "verified" : "problems found");
	job_free(b);
	ctl_finish(r);
}

_Static_assert(BACKUP_PATH_MAX == CTLCMD_PATH_MAX, "backup's 'dir' bound");

void ctl_backup_start(struct ctl_req *r)
{
	struct backup_job *b = calloc(1, sizeof(*b));

	if (!b || !(b->dir = strdup(r->in.dir))) {
		free(b);
		snprintf(r->err, sizeof(r->err), "out of memory");
		ctl_finish(r);
		return;
	}
	b->r = r;
	b->opts.copy = r->in.copy;
	b->opts.now = gclock_wall();
	b->work.data = b;
	if (uv_queue_work(r->d->loop, &b->work, backup_work, backup_after)) {
		job_free(b);
		snprintf(r->err, sizeof(r->err), "gpud is shutting down");
		ctl_finish(r);
	}
}
