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
#include "control_internal.h"
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

static json_t *problems_json(const struct backup_report *rep)
{
	json_t *a = json_array();

	for (size_t i = 0; i < rep->nprobs && i < BACKUP_MAX_LISTED; i++) {
		const struct store_blob_ref *f = rep->probs[i].ref;

		json_array_append_new(a, json_pack("{s:I, s:o, s:s, s:s, s:s}",
			"job", (json_int_t)f->job_id, "lease", f->lease_id ?
			json_integer(f->lease_id) : json_null(), "where",
			f->where, "hash", f->hash, "problem",
			audit_problem_name(rep->probs[i].rc)));
	}
	return a;
}

static void backup_after(uv_work_t *w, int status)
{
	struct backup_job *b = w->data;
	struct ctl_req *r = b->r;
	const struct backup_report *rep = &b->rep;
	json_t *db;
	int sound = rep->nintegrity == 0 && rep->nprobs == 0;

	if (status || b->rc) {
		snprintf(r->err, sizeof(r->err), "backup failed: %s",
			 status ? "gpud is shutting down" : b->err);
		LOG_WARN(&r->d->log, "%s", r->err);
		job_free(b);
		ctl_finish(r);
		return;
	}
	db = json_array();
	for (size_t i = 0; i < rep->nintegrity; i++)
		json_array_append_new(db, json_string(rep->integrity[i]));
	r->reply = json_pack("{s:b, s:s, s:I, s:I, s:s, s:I, s:I, s:I, s:I, "
			     "s:I, s:I, s:I, s:f, s:b, s:o, s:o, s:I}",
		"ok", 1, "path", b->dir, "bytes", (json_int_t)rep->bytes,
		"database_bytes", (json_int_t)rep->db_bytes,
		"database_blake2b", rep->db_hash,
		"blobs", (json_int_t)rep->blobs,
		"blob_bytes", (json_int_t)rep->blob_bytes,
		"linked", (json_int_t)rep->linked,
		"copied", (json_int_t)rep->copied,
		"files", (json_int_t)rep->files,
		"leases_released", (json_int_t)rep->released,
		"snapshots", (json_int_t)rep->snapshots,
		"seconds", rep->seconds, "verified", sound, "database", db,
		"problems", problems_json(rep),
		"problems_total", (json_int_t)rep->nprobs);
	LOG_INFO(&r->d->log, "backup written to %s: %" PRIu64 " bytes, %zu "
		 "blob(s), %zu granted lease(s) pending in the copy, %.1f s, %s",
		 b->dir, rep->bytes, rep->blobs, rep->released, rep->seconds,
		 sound ? "verified" : "PROBLEMS FOUND (gpuctl backup lists them)");
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
	b->opts.now = sched_now();
	b->work.data = b;
	if (uv_queue_work(r->d->loop, &b->work, backup_work, backup_after)) {
		job_free(b);
		snprintf(r->err, sizeof(r->err), "gpud is shutting down");
		ctl_finish(r);
	}
}
