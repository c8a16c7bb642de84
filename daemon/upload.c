/* upload.c - a checkpoint's or result's way through gpud, in the order it
 * travels. Each step names the thread it runs on; the sched_* steps are
 * the policy's (scheduler.h), this file only carries the request between
 * threads and speaks to the worker and the log.
 *
 *   1. receive (loop)      upload_receive: the frame decoded, the blob's
 *                          file taken (conn.c streamed it there, bounded
 *                          by the lease or its workload from the header)
 *   2. bound   (database)  sched_upload_load: the sender holds (lease,
 *                          epoch), units_done within the lease; job loaded
 *              (loop)      bound_size: no longer than the lease's largest
 *                          blob compressed (workload_upload_bound); then
 *                          it waits until half of gpud's budget for
 *                          what workers send (--frame-memory) has room
 *              (pool)      bound_read: the file read; no longer than
 *                          zlib's bound for the size its header declares
 *                          (a padded blob is refused here, never stored)
 *              (pool)      sched_upload_decode: no more inflated than the
 *                          workload's bound; the header names this upload;
 *                          a checkpoint's content checked
 *   3. store   (pool)      sched_upload_store: the file (a result's beside
 *                          its decode, a checkpoint's once it passed)
 *              (database)  sched_upload_commit: the row, durable
 *   4. verify  (pool)      sched_verify_check: the workload's check of a
 *                          result, started from the decoded bytes while
 *                          step 3 runs (early), else once it is stored
 *   5. merge   (database)  sched_verify_commit: the verdict, the merge,
 *                          maybe the job's end; durable
 *   6. answer  (loop)      upload_answer: ACK once step 3 is durable (a
 *                          worker never waits for the verdict, so the ACK
 *                          goes out between 3 and 5); verify_done: the
 *                          verdict logged, parked claims woken
 *
 * Each hop between threads is a *_work / *_after pair below: a result
 * checked early crosses ten times (loop, database, loop, pool for decode
 * and file, loop, pool for the check, loop, database for the row, loop,
 * database for the verdict, loop); one verified later crosses to the
 * database, the pool and the database again for steps 4 and 5.
 *
 * A verification holds no connection: once the ACK is out it runs on
 * alone; one left unfinished at shutdown leaves the result done, and
 * start-up recovery verifies it again (upload_verify).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "blob.h"
#include "conn.h"
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "msg.h"
#include "proto.h"
#include "results.h"
#include "scheduler.h"
#include "upload.h"
#include "worker_proto.h"
#include "workload.h"

struct upload_req {
	uv_work_t work;
	struct conn_spool *sp;    /* the blob's file, until it is read */
	int charged;              /* blob_len charged to d->frame_mem */
	struct upload_req *next_wait;
	uv_work_t store_work;     /* a result's file, written beside its decode */
	unsigned running;         /* pool steps not back yet */
	struct conn *c;
	struct sched_policy pol;
	struct sched_upload up;
	struct verify_req *early; /* a result's check, under way */
};

struct verify_req {
	uv_work_t work;
	struct gpud *d;
	struct sched_policy pol;
	struct sched_verify v;
	/* Early: checked while the upload is still being stored; commits
	 * once both halves are in (checked, and stored or dropped). */
	int early, checked, check_failed, stored, dropped;
};

/* The steps, in the order an upload takes them. */
static void bound_load_work(struct store *st, void *arg);
static void bound_load_after(void *arg);
static int bound_size(struct upload_req *r);
static void bound_admit(struct upload_req *r);
static void bound_read_work(uv_work_t *w);
static void bound_read_after(uv_work_t *w, int status);
static void bound_decode_work(uv_work_t *w);
static void bound_decode_after(uv_work_t *w, int status);
static void store_file(struct upload_req *r);
static void store_file_work(uv_work_t *w);
static void store_file_after(uv_work_t *w, int status);
static void store_step_done(struct upload_req *r);
static void store_unstore_work(uv_work_t *w);
static void store_unstore_after(uv_work_t *w, int status);
static void store_commit_work(struct store *st, void *arg);
static void store_commit_after(void *arg);
static struct verify_req *verify_early(struct gpud *d, struct sched_upload *u);
static void verify_stored(struct verify_req *r, int stored);
static void upload_answer(struct upload_req *r);
static void verify_done(void *arg);

static void upload_free(struct upload_req *r)
{
	struct gpud *d = r->c->d;

	conn_spool_free(r->sp);
	sched_upload_clear(&r->up);
	if (r->charged) {
		d->uploads_in_mem--;
		conn_mem_charge(d, -(int64_t)r->up.blob_len);
		conn_resume_paused(d);
	}
	free(r);
	/* Room may have freed for the uploads waiting to be read. */
	while (d->upload_wait &&
	       (!d->uploads_in_mem ||
		conn_mem_fits(d, d->upload_wait->up.blob_len,
			      CONN_MEM_UPLOADS))) {
		struct upload_req *w = d->upload_wait;

		d->upload_wait = w->next_wait;
		if (!d->upload_wait)
			d->upload_wait_tail = NULL;
		bound_admit(w);
	}
}

/* ---- 1. receive (loop) ---- */

int upload_receive(struct conn *c, const struct proto_frame *f, int is_result,
		   struct conn_spool *sp)
{
	struct upload_req *r = calloc(1, sizeof(*r));
	struct msg_result m = { 0 }; /* a checkpoint: the same, no seconds */
	struct msg_checkpoint ck;
	uint64_t lease;

	if (!r) {
		conn_spool_free(sp);
		return GERR_NOMEM;
	}
	r->c = c;
	r->sp = sp;
	if ((is_result ? msg_result_decode(f->json, &m, NULL, 0)
		       : msg_checkpoint_decode(f->json, &ck, NULL, 0)) || !sp ||
	    msg_check_bin(f->type, sp->len, NULL, 0)) {
		upload_free(r);
		return GERR_PROTO;
	}
	if (!is_result)
		m = (struct msg_result){ .lease = ck.lease, .epoch = ck.epoch,
					 .units_done = ck.units_done };
	lease = m.lease;
	r->pol = gpud_policy(c->d);
	r->up.pol = &r->pol;
	r->up.is_result = is_result;
	r->up.lease_id = (int64_t)lease;
	r->up.epoch = m.epoch;
	r->up.units_done = m.units_done;
	r->up.worker_id = c->worker_id;
	r->up.seconds = m.seconds;
	r->up.blob_len = (size_t)sp->len;
	LOG_DEBUG(&c->d->log, "%s received lease=%" PRIu64 " bytes=%zu worker=%s",
		  is_result ? "result" : "checkpoint", lease, r->up.blob_len,
		  c->name);
	if (conn_step_db(c, 0, bound_load_work, bound_load_after, r)) {
		upload_free(r);
		return GERR_STATE;
	}
	return 0;
}

/* ---- 2. bound: the holder and its units (database), the bytes (pool) ---- */

static void bound_load_work(struct store *st, void *arg)
{
	sched_upload_load(st, &((struct upload_req *)arg)->up);
}

static void bound_load_after(void *arg)
{
	struct upload_req *r = arg;
	struct gpud *d = r->c->d;

	if (r->up.rc == 0 && r->sp->rc) { /* its file could not be written */
		r->up.rc = r->sp->rc;
		snprintf(r->up.err, sizeof(r->up.err), "cannot write the upload "
			 "to %s: %s", d->cfg.data_dir, gerr_str(r->sp->rc));
	}
	if (r->up.rc == 0 && bound_size(r) == 0) {
		/* Read back once the budget has room (or nothing else is in
		 * memory: an upload larger than the budget goes alone). */
		if (d->uploads_in_mem &&
		    !conn_mem_fits(d, r->up.blob_len, CONN_MEM_UPLOADS)) {
			LOG_DEBUG(&d->log, "upload lease=%" PRId64 " bytes=%zu waits"
				  " for --frame-memory", r->up.lease_id,
				  r->up.blob_len);
			if (d->upload_wait_tail)
				d->upload_wait_tail->next_wait = r;
			else
				d->upload_wait = r;
			d->upload_wait_tail = r;
			return;
		}
		bound_admit(r);
		return;
	}
	upload_answer(r);
}

/* The lease's own bound on its blob's length: its largest decoded blob
 * (the workload's blob_max) compressed at worst. Sets rc and err. */
static int bound_size(struct upload_req *r)
{
	struct sched_upload *u = &r->up;
	uint64_t max = workload_upload_bound(workload_find(u->workload),
					     u->params, u->spec);

	if (max == 0) {
		u->rc = GERR_CORRUPT;
		snprintf(u->err, sizeof(u->err), "%.31s: the lease's size cannot"
			 " be bounded", u->workload);
	} else if (u->blob_len > max) {
		u->rc = GERR_TOOBIG;
		snprintf(u->err, sizeof(u->err), "%.31s %s of %zu bytes exceeds "
			 "the %" PRIu64 " bytes its lease can take compressed "
			 "(padded?)", u->workload, u->is_result ? "result" :
			 "checkpoint", u->blob_len, max);
	}
	return u->rc;
}

/* Charge the blob to the budget and read its file (pool). */
static void bound_admit(struct upload_req *r)
{
	struct gpud *d = r->c->d;

	r->charged = 1;
	d->uploads_in_mem++;
	conn_mem_charge(d, (int64_t)r->up.blob_len);
	r->work.data = r;
	if (uv_queue_work(d->loop, &r->work, bound_read_work,
			  bound_read_after) == 0)
		return;
	r->up.rc = GERR_STATE;
	upload_answer(r);
}

/* The file read, and its length held to zlib's bound for the decoded
 * size its header declares: a blob padded with empty blocks (or any
 * bytes) past what its content can compress to is refused before it is
 * inflated or stored. */
static void bound_read_work(uv_work_t *w)
{
	struct upload_req *r = w->data;
	struct sched_upload *u = &r->up;
	struct blob_info info;

	u->rc = conn_spool_read(r->sp, &u->blob, u->err, sizeof(u->err));
	conn_spool_free(r->sp);
	r->sp = NULL;
	if (u->rc)
		return;
	u->rc = blob_peek(u->blob, u->blob_len, &info, u->err, sizeof(u->err));
	if (u->rc == 0 && u->blob_len > workload_comp_bound(info.raw_len)) {
		u->rc = GERR_TOOBIG;
		snprintf(u->err, sizeof(u->err), "%.31s %s of %zu bytes is longer "
			 "than %" PRIu64 " bytes of data can compress to (padded)",
			 u->workload, u->is_result ? "result" : "checkpoint",
			 u->blob_len, info.raw_len);
	}
}

static void bound_read_after(uv_work_t *w, int status)
{
	struct upload_req *r = w->data;

	if (status && r->up.rc == 0)
		r->up.rc = GERR_STATE;
	if (r->up.rc == 0) {
		r->work.data = r;
		r->running = 1;
		if (uv_queue_work(r->c->d->loop, &r->work, bound_decode_work,
				  bound_decode_after) == 0) {
			/* A result's file is written beside its decode. */
			if (r->up.is_result)
				store_file(r);
			return;
		}
		r->up.rc = GERR_STATE;
	}
	upload_answer(r);
}

static void bound_decode_work(uv_work_t *w)
{
	sched_upload_decode(&((struct upload_req *)w->data)->up);
}

/* A valid result is checked (verification's sample) while it is stored:
 * the two overlap, and neither reads the blob back. A checkpoint is
 * stored only once its content passed check_checkpoint. */
static void bound_decode_after(uv_work_t *w, int status)
{
	struct upload_req *r = w->data;
	struct gpud *d = r->c->d;

	if (status && r->up.rc == 0)
		r->up.rc = GERR_STATE;
	if (r->up.rc == 0 && r->up.is_result && r->up.raw && !d->stopping)
		r->early = verify_early(d, &r->up);
	if (r->up.rc == 0 && !r->up.is_result)
		store_file(r);
	store_step_done(r);
}

/* ---- 3. store: the file (pool), then the row (database) ---- */

static void store_file(struct upload_req *r)
{
	r->store_work.data = r;
	r->running++;
	if (uv_queue_work(r->c->d->loop, &r->store_work, store_file_work,
			  store_file_after) == 0)
		return;
	r->running--;
	r->up.store_rc = GERR_STATE;
}

static void store_file_work(uv_work_t *w)
{
	sched_upload_store(&((struct upload_req *)w->data)->up);
}

static void store_file_after(uv_work_t *w, int status)
{
	struct upload_req *r = w->data;

	if (status) {
		r->up.stored = 0;
		r->up.store_rc = GERR_STATE;
	}
	store_step_done(r);
}

/* Decode and store are both back: commit, or refuse (and remove a file
 * stored for bytes that did not decode). */
static void store_step_done(struct upload_req *r)
{
	struct gpud *d = r->c->d;

	if (--r->running)
		return;
	if (sched_upload_join(&r->up)) {
		r->work.data = r;
		if (uv_queue_work(d->loop, &r->work, store_unstore_work,
				  store_unstore_after) == 0)
			return;
	} else if (r->up.rc == 0 &&
		   dbq_submit(d->dbq, store_commit_work, store_commit_after, r) == 0) {
		return;
	}
	if (r->up.rc == 0)
		r->up.rc = GERR_STATE;
	upload_answer(r);
}

static void store_unstore_work(uv_work_t *w)
{
	sched_upload_unstore(&((struct upload_req *)w->data)->up);
}

static void store_unstore_after(uv_work_t *w, int status)
{
	(void)status;
	upload_answer(w->data);
}

static void store_commit_work(struct store *st, void *arg)
{
	sched_upload_commit(st, &((struct upload_req *)arg)->up);
}

static void store_commit_after(void *arg)
{
	upload_answer(arg);
}

/* ---- 4. verify (pool) ---- */

static struct verify_req *verify_new(struct gpud *d, int64_t lease_id,
				     uint64_t epoch)
{
	struct verify_req *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->d = d;
	r->pol = gpud_policy(d);
	r->v.pol = &r->pol;
	r->v.lease_id = lease_id;
	r->v.epoch = epoch;
	auth_random(&r->v.seed, sizeof(r->v.seed));
	return r;
}

static void verify_free(struct verify_req *r)
{
	sched_verify_clear(&r->v);
	free(r);
}

static void verify_check_work(uv_work_t *w)
{
	sched_verify_check(&((struct verify_req *)w->data)->v);
}

/* Early: the upload's decoded bytes are checked while the upload is still
 * being stored, so the check overlaps the durable writes. Takes u->raw
 * (NULL afterwards) and copies what else it needs. NULL when it cannot
 * start (u unchanged: verified the usual way once stored); otherwise
 * verify_stored must follow exactly once. */
static void verify_early_check_after(uv_work_t *w, int status);

static struct verify_req *verify_early(struct gpud *d, struct sched_upload *u)
{
	struct verify_req *r = verify_new(d, u->lease_id, u->epoch);

	if (!r)
		return NULL;
	r->early = 1;
	r->v.workload = strdup(u->workload);
	r->v.params = strdup(u->params);
	r->v.spec = strdup(u->spec);
	r->v.raw = u->raw;
	r->v.raw_len = u->raw_len;
	r->work.data = r;
	if (!r->v.workload || !r->v.params || !r->v.spec ||
	    uv_queue_work(d->loop, &r->work, verify_check_work,
			  verify_early_check_after) != 0) {
		r->v.raw = NULL; /* still the upload's */
		verify_free(r);
		return NULL;
	}
	u->raw = NULL;
	u->raw_len = 0;
	return r;
}

/* The lease row (done at the epoch checked), then the usual commit. */
static void verify_early_commit_work(struct store *st, void *arg)
{
	struct verify_req *r = arg;

	sched_verify_load(st, &r->v);
	if (r->v.rc == 0)
		sched_verify_commit(st, &r->v);
}

static void verify_early_join(struct verify_req *r)
{
	struct gpud *d = r->d;

	if (!r->checked || !(r->stored || r->dropped))
		return;
	if (r->dropped || r->check_failed || d->stopping) {
		/* Stored but not checked: the usual way (or, when stopping,
		 * start-up recovery) verifies it. */
		if (r->stored && r->check_failed && !d->stopping)
			upload_verify(d, r->v.lease_id, r->v.epoch);
		verify_free(r);
		return;
	}
	if (dbq_submit(d->dbq, verify_early_commit_work, verify_done, r) == 0)
		return;
	r->v.rc = GERR_STATE;
	verify_done(r);
}

static void verify_early_check_after(uv_work_t *w, int status)
{
	struct verify_req *r = w->data;

	r->checked = 1;
	r->check_failed = status != 0;
	verify_early_join(r);
}

/* The upload's outcome: stored (durable, lease done) lets the early check
 * commit its verdict and merge; not stored drops it. */
static void verify_stored(struct verify_req *r, int stored)
{
	r->stored = stored;
	r->dropped = !stored;
	verify_early_join(r);
}

/* The usual way, for a result already stored: its row loaded (database),
 * checked (pool), then step 5. */
static void verify_load_work(struct store *st, void *arg);
static void verify_load_after(void *arg);
static void verify_check_after(uv_work_t *w, int status);

void upload_verify(struct gpud *d, int64_t lease_id, uint64_t epoch)
{
	struct verify_req *r = verify_new(d, lease_id, epoch);

	if (r && dbq_submit(d->dbq, verify_load_work, verify_load_after, r))
		free(r);
}

static void verify_load_work(struct store *st, void *arg)
{
	sched_verify_load(st, &((struct verify_req *)arg)->v);
}

static void verify_load_after(void *arg)
{
	struct verify_req *r = arg;

	if (r->v.rc == 0 && r->d->stopping) {
		/* not a verdict: the stored result stays done, and start-up
		 * recovery verifies it */
		LOG_INFO(&r->d->log, "verification of lease=%" PRId64 " epoch=%"
			 PRIu64 " left to the next start: gpud is stopping",
			 r->v.lease_id, r->v.epoch);
		verify_free(r);
		return;
	}
	if (r->v.rc == 0) {
		r->work.data = r;
		if (uv_queue_work(r->d->loop, &r->work, verify_check_work,
				  verify_check_after) == 0)
			return;
		r->v.rc = GERR_STATE;
	}
	verify_done(r);
}

/* ---- 5. merge (database) ---- */

static void merge_work(struct store *st, void *arg)
{
	sched_verify_commit(st, &((struct verify_req *)arg)->v);
}

static void verify_check_after(uv_work_t *w, int status)
{
	struct verify_req *r = w->data;

	if (status == 0 && dbq_submit(r->d->dbq, merge_work, verify_done, r) == 0)
		return;
	r->v.rc = GERR_STATE;
	verify_done(r);
}

/* ---- 6. answer (loop): the worker's ACK, then the verdict's log ---- */

static void upload_answer(struct upload_req *r)
{
	struct conn *c = r->c;
	struct gpud *d = c->d;
	struct sched_upload *u = &r->up;
	const char *what = u->is_result ? "result" : "checkpoint";
	struct msg_ack ack = {
		.lease = (uint64_t)u->lease_id, .epoch = u->epoch,
		.what = u->is_result ? MSG_ACK_RESULT : MSG_ACK_CHECKPOINT,
	};
	json_t *h = NULL;

	gpud_storage_outcome(d, u->rc, u->is_result ? "storing a result" : "storing a checkpoint");
	if (u->foreign) {
		wp_log_foreign(c, what, u->lease_id, u->epoch, u->why,
			       u->quarantined);
	} else if (u->rc) {
		LOG_WARN(&d->log, "%s refused job=%" PRId64 " lease=%" PRId64
			 " epoch=%" PRIu64 " worker=%s reason=%s%s%s", what, u->job_id,
			 u->lease_id, u->epoch, c->name, u->err[0] ? u->err : gerr_str(u->rc),
			 u->why[0] ? ": " : "", u->why);
	}
	if (u->rc) {
		if (!c->closing)
			conn_send_error(c, u->rc, u->err[0] ? u->err : gerr_str(u->rc),
				   u->lease_id, u->epoch);
		if (r->early)
			verify_stored(r->early, 0);
	} else {
		LOG_INFO(&d->log, "%s stored job=%" PRId64 " lease=%" PRId64
			 " epoch=%" PRIu64 " worker=%s units_done=%" PRIu64, what,
			 u->job_id, u->lease_id, u->epoch, c->name, u->units_done);
		LOG_DEBUG(&d->log, "%s stages lease=%" PRId64 " bytes=%zu decode_s=%.4f"
			  " store_s=%.4f commit_s=%.4f", what, u->lease_id,
			  u->blob_len, u->decode_s, u->store_s, u->commit_s);
		if (!c->closing) {
			msg_ack_encode(&ack, &h);
			conn_send(c, PROTO_ACK, h, NULL, 0);
		}
		if (u->is_result) {
			if (c->lease_id == u->lease_id)
				c->lease_id = 0;
			/* Steps 4 and 5 go on without the connection. */
			if (r->early)
				verify_stored(r->early, 1);
			else
				upload_verify(d, u->lease_id, u->epoch);
		}
	}
	upload_free(r);
	conn_step_done(c);
}

/* The verdict is durable (or could not be made): log it, and wake parked
 * claims (a failed lease is pending again; a merge may let a waiting
 * planner carve). */
static void verify_done(void *arg)
{
	struct verify_req *r = arg;
	struct sched_verify *v = &r->v;
	struct gpud *d = r->d;

	if (v->rc == 0 && v->passed && (v->again || v->waiting)) {
		LOG_INFO(&d->log, "lease checked, %s job=%" PRId64 " lease=%" PRId64
			 " epoch=%" PRIu64 " worker=%" PRId64, v->again ?
			 "its group changed: comparing again" :
			 "waits for another worker's result to agree",
			 v->lease.job_id, v->lease_id, v->epoch, v->lease.worker_id);
		if (v->again && !d->stopping)
			upload_verify(d, v->lease_id, v->epoch);
		else if (!d->stopping) /* a replica may be pending now */
			gpud_wake_parked(d);
		if (v->job_finished < 0)
			LOG_WARN(&d->log, "job failed job=%" PRId64 ": no two results "
				 "of lease %" PRId64 "'s group agree", v->lease.job_id,
				 v->lease_id);
	} else if (v->rc == 0) {
		if (v->passed)
			LOG_INFO(&d->log, "lease verified job=%" PRId64 " lease=%" PRId64
				 " epoch=%" PRIu64 " units=%" PRIu64 " verify_s=%.3f"
				 " decode_s=%.4f commit_s=%.4f early=%d quorum_by=%" PRId64,
				 v->lease.job_id, v->lease_id, v->epoch,
				 v->lease.units, v->seconds, v->decode_s,
				 v->commit_s, r->early, v->quorum ? v->checked_id : 0);
		if (!v->passed) {
			d->verify_failures++; /* for /metrics */
			LOG_WARN(&d->log, "lease failed verification job=%" PRId64
				 " lease=%" PRId64 " epoch=%" PRIu64 " reason=%s",
				 v->lease.job_id, v->lease_id, v->epoch, v->err);
		}
		/* A failed lease is pending again; a merge may let a planner
		 * that waited for it (GERR_AGAIN) carve the next lease. */
		if (!d->stopping)
			gpud_wake_parked(d);
		if (v->job_finished)
			LOG_INFO(&d->log, "job %s job=%" PRId64,
				 v->job_finished > 0 ? "done" : "failed", v->lease.job_id);
		if (v->job_finished > 0)
			results_job_done(d, v->lease.job_id);
	} else if (v->rc != GERR_STALE) {
		LOG_ERROR(&d->log, "verification of lease=%" PRId64 " epoch=%" PRIu64
			  " could not complete: %s", v->lease_id, v->epoch,
			  gerr_str(v->rc));
		/* The result stays done; once a write succeeds again the
		 * wake verifies every stored result again. */
		gpud_storage_outcome(d, v->rc, "committing a verification");
		if (d->storage_error)
			d->reverify = 1;
	}
	verify_free(r);
}
