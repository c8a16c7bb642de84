/* worker_proto.c - the worker side of gpud's protocol, once logged in
 * (login.c): CLAIM (with parking while no work exists), HEARTBEAT, CHECKPOINT
 * and RESULT uploads, RELEASE and FETCH. Each handler validates its
 * message, then runs its database steps on the database thread and its
 * heavy steps (blob decoding, file reads) on the thread pool; replies go
 * out from the after-callbacks, once what they acknowledge is durable.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "conn.h"
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "msg.h"
#include "proto.h"
#include "scheduler.h"
#include "store.h"
#include "verify.h"
#include "worker_proto.h"
#include "workload.h"

/* How long a claim that found no work waits before NOLEASE. */
#define PARK_MS 10000

static int claim_submit(struct conn *c);

/* A message about a lease its sender was never granted (sched_hold.c,
 * invariant 3): refused like any stale one, and a warning naming who. */
static void log_foreign(struct conn *c, const char *what, int64_t lease,
			uint64_t epoch, const char *why, int quarantined)
{
	LOG_WARN(&c->d->log, "%s refused: lease not held by its sender lease=%"
		 PRId64 " epoch=%" PRIu64 " worker=%s peer=%s why=\"%s\"%s",
		 what, lease, epoch, c->name, c->peer, why,
		 quarantined ? " (worker quarantined)" : "");
}

/* A NOLEASE: come back in retry_s seconds. */
static void send_nolease(struct conn *c, double retry_s, const char *reason)
{
	struct msg_nolease m = { .retry_s = retry_s, .reason = reason };
	json_t *h = NULL;

	msg_nolease_encode(&m, &h); /* h stays NULL when it fails */
	conn_send(c, PROTO_NOLEASE, h, NULL, 0);
}

/* ---- worker: claim ---- */

struct claim_req {
	struct conn *c;
	struct sched_policy pol;
	struct sched_claim claim;
};

static void claim_work(struct store *st, void *arg)
{
	struct claim_req *r = arg;
	sched_claim(st, &r->claim);
}

void wp_unpark(struct conn *c)
{
	c->parked = 0;
	uv_timer_stop(&c->park_timer);
	send_nolease(c, 0.2, c->park_reason[0] ? c->park_reason : "no lease");
	conn_step_done(c);
}

static void on_park_timeout(uv_timer_t *t)
{
	struct conn *c = t->data;

	if (c->parked)
		wp_unpark(c);
}

static void claim_after(void *arg)
{
	struct claim_req *r = arg;
	struct conn *c = r->c;
	struct gpud *d = c->d;
	struct sched_claim *cl = &r->claim;

	if (cl->rc != GERR_NOTFOUND && cl->rc != GERR_STATE)
		gpud_storage_outcome(d, cl->rc, "granting a lease");
	if (!c->closing) {
		if (cl->rc == 0) {
			json_t *params = json_loads(cl->params, 0, NULL);
			json_t *spec = json_loads(cl->lease.spec, 0, NULL);
			json_t *empty = json_object(), *h = NULL;
			struct msg_lease m = {
				.lease = (uint64_t)cl->lease.id,
				.epoch = cl->lease.epoch,
				.job = (uint64_t)cl->lease.job_id,
				.workload = cl->workload,
				.params = params ? params : empty,
				.spec = spec ? spec : empty,
				.units = cl->lease.units,
				.deadline_s = d->cfg.lease_timeout_s,
				.units_done = cl->lease.checkpoint_units,
			};

			msg_lease_encode(&m, &h);
			json_decref(params);
			json_decref(spec);
			json_decref(empty);
			c->lease_id = cl->lease.id;
			c->epoch = cl->lease.epoch;
			c->job_id = cl->lease.job_id;
			const struct workload *wl = workload_find(cl->workload);
			c->job_unit = wl ? wl->unit_name : NULL;
			LOG_INFO(&d->log, "lease grant job=%" PRId64 " lease=%" PRId64
				 " epoch=%" PRIu64 " worker=%s units=%" PRIu64
				 " resume_from=%" PRIu64,
				 cl->lease.job_id, cl->lease.id, cl->lease.epoch,
				 c->name, cl->lease.units, cl->lease.checkpoint_units);
			conn_send(c, PROTO_LEASE, h, cl->checkpoint,
				  cl->checkpoint_len);
		} else if (cl->rc == GERR_NOTFOUND && !d->stopping &&
			   c->len == 0) {
			/* Park: keep the claim (and the busy flag and reference)
			 * until conn_wake_parked, the timer or a frame from the
			 * worker (wp_unpark: a WITHDRAW, or a run's FETCH that
			 * would otherwise wait for the park). A frame already
			 * here gets the NOLEASE below at once. */
			snprintf(c->park_reason, sizeof(c->park_reason), "%s",
				 cl->reason);
			if (!c->park_timer.data) {
				uv_timer_init(d->loop, &c->park_timer);
				c->park_timer.data = c;
			}
			c->parked = 1;
			uv_timer_start(&c->park_timer, on_park_timeout, PARK_MS, 0);
			sched_claim_clear(cl);
			free(r);
			return;
		} else {
			const char *reason = cl->reason[0] ? cl->reason
							   : gerr_str(cl->rc);
			send_nolease(c, 5.0, reason);
		}
	}
	sched_claim_clear(cl);
	free(r);
	conn_step_done(c);
}

/* Queue a claim for c; the caller has set c->busy and holds a reference
 * for it. */
static int claim_submit(struct conn *c)
{
	struct claim_req *r = calloc(1, sizeof(*r));

	if (!r)
		return GERR_NOMEM;
	r->c = c;
	r->pol = gpud_policy(c->d);
	r->claim.pol = &r->pol;
	r->claim.worker_id = c->worker_id;
	r->claim.rate = c->claim_rate;
	r->claim.workloads_json = strdup(c->workloads_json);
	if (!r->claim.workloads_json) {
		free(r);
		return GERR_NOMEM;
	}
	if (dbq_submit_batch(c->d->dbq, claim_work, claim_after, r)) {
		sched_claim_clear(&r->claim);
		free(r);
		return GERR_STATE;
	}
	return 0;
}

int wp_claim(struct conn *c, const json_t *msg)
{
	struct msg_claim m;
	int rc;

	if (c->d->draining || c->d->storage_error) {
		send_nolease(c, 2.0, c->d->draining ? "gpud is stopping"
						    : c->d->storage_msg);
		return 0;
	}
	if (msg_claim_decode(msg, &m, NULL, 0))
		return GERR_PROTO;
	c->claim_rate = 0;
	if (m.rate > 0 && m.rate < 1e15)
		c->claim_rate = m.rate;
	c->lease_id = 0;
	c->job_id = 0;
	conn_ref(c);
	c->busy = 1;
	rc = claim_submit(c);
	if (rc) {
		c->busy = 0;
		conn_unref(c);
	}
	return rc;
}

int wp_withdraw(struct conn *c, const json_t *msg)
{
	struct msg_withdraw m;

	if (msg_withdraw_decode(msg, &m, NULL, 0))
		return GERR_PROTO;
	LOG_INFO(&c->d->log, "claim withdrawn worker=%s reason=%s", c->name,
		 m.reason ? m.reason : "-");
	return 0;
}

void wp_wake(struct conn *c)
{
	struct gpud *d = c->d;

	c->parked = 0;
	uv_timer_stop(&c->park_timer);
	/* The parked claim's busy flag and reference carry over. */
	if (d->draining || claim_submit(c)) {
		send_nolease(c, 2.0, d->draining ? "gpud is stopping"
						 : "gpud is busy");
		conn_step_done(c);
	}
}

/* ---- worker: heartbeat ---- */

struct hb_req {
	struct conn *c;
	struct sched_policy pol;
	struct sched_heartbeat hb;
};

static void hb_work(struct store *st, void *arg)
{
	struct hb_req *r = arg;
	sched_heartbeat(st, &r->hb);
}

/* The worker's rate, over at least a second of its heartbeats' progress
 * on one lease (a new lease only moves the baseline). */
static void note_rate(struct conn *c, int64_t lease, uint64_t units)
{
	uint64_t now = uv_now(c->d->loop);

	if (lease != c->rate_lease || units < c->rate_units) {
		c->rate_lease = lease;
		c->rate_units = units;
		c->rate_ms = now;
		return;
	}
	if (now - c->rate_ms < 1000)
		return;
	double inst = (double)(units - c->rate_units) * 1000.0 /
		      (double)(now - c->rate_ms);
	c->rate = c->rate > 0 ? 0.5 * c->rate + 0.5 * inst : inst;
	c->rate_units = units;
	c->rate_ms = now;
}

static void hb_after(void *arg)
{
	struct hb_req *r = arg;
	struct conn *c = r->c;
	struct gpud *d = c->d;

	if (r->hb.rc != GERR_STALE && r->hb.rc != GERR_INVAL)
		gpud_storage_outcome(d, r->hb.rc, "recording a heartbeat");
	if (r->hb.foreign)
		log_foreign(c, "heartbeat", r->hb.lease_id, r->hb.epoch,
			    r->hb.why, r->hb.quarantined);
	if (r->hb.rc == GERR_INVAL)
		LOG_WARN(&d->log, "heartbeat refused lease=%" PRId64 " epoch=%"
			 PRIu64 " worker=%s peer=%s reason=%s", r->hb.lease_id,
			 r->hb.epoch, c->name, c->peer, r->hb.err);
	if (r->hb.revoked) {
		LOG_WARN(&d->log, "lease revoked lease=%" PRId64 " epoch=%"
			 PRIu64 " worker=%s reason=%s%s", r->hb.lease_id,
			 r->hb.epoch, c->name, r->hb.why,
			 r->hb.quarantined ? " (worker quarantined)" : "");
		gpud_wake_parked(d);
	}
	if (r->hb.rc == 0 && !r->hb.revoked) {
		/* A worker that reconnected keeps its lease: remember it. */
		c->lease_id = r->hb.lease_id;
		c->epoch = r->hb.epoch;
		note_rate(c, r->hb.lease_id, r->hb.units_done);
	}
	if (r->hb.job_id)
		gpud_rate_sample(d, r->hb.job_id, r->hb.job_progress, sched_now());
	if (d->draining && strcmp(r->hb.action, "continue") == 0)
		r->hb.action = "release"; /* gpud is stopping: checkpoint now */
	if (!c->closing) {
		struct msg_hb_ack m = { .lease = (uint64_t)r->hb.lease_id,
					.epoch = r->hb.epoch };
		json_t *h = NULL;

		if (r->hb.rc && r->hb.rc != GERR_STALE) {
			conn_send_error(c, r->hb.rc, r->hb.err[0] ? r->hb.err
				   : gerr_str(r->hb.rc), r->hb.lease_id,
				   r->hb.epoch);
		} else {
			if (msg_hb_action_parse(r->hb.action, &m.action) == 0)
				msg_hb_ack_encode(&m, &h);
			conn_send(c, PROTO_HB_ACK, h, NULL, 0);
		}
		if (strcmp(r->hb.action, "stop") == 0 &&
		    c->lease_id == r->hb.lease_id) {
			LOG_INFO(&d->log, "lease stop lease=%" PRId64 " epoch=%" PRIu64
				 " worker=%s", r->hb.lease_id, r->hb.epoch, c->name);
			c->lease_id = 0;
		}
	}
	free(r);
	conn_step_done(c);
}

int wp_heartbeat(struct conn *c, const json_t *msg)
{
	struct hb_req *r = calloc(1, sizeof(*r));
	struct msg_heartbeat m;

	if (!r)
		return GERR_NOMEM;
	if (msg_heartbeat_decode(msg, &m, NULL, 0)) {
		free(r);
		return GERR_PROTO;
	}
	r->c = c;
	r->pol = gpud_policy(c->d);
	r->hb.pol = &r->pol;
	r->hb.lease_id = (int64_t)m.lease;
	r->hb.worker_id = c->worker_id;
	r->hb.epoch = m.epoch;
	r->hb.units_done = m.units_done;
	conn_ref(c);
	c->busy = 1;
	if (dbq_submit_batch(c->d->dbq, hb_work, hb_after, r)) {
		c->busy = 0;
		conn_unref(c);
		free(r);
		return GERR_STATE;
	}
	return 0;
}

/* ---- worker: checkpoint and result uploads ---- */

struct upload_req {
	uv_work_t work;
	uv_work_t store_work;     /* a result's file, written beside its decode */
	unsigned running;         /* pool steps not back yet */
	struct conn *c;
	struct sched_policy pol;
	struct sched_upload up;
	struct verify_req *early; /* a result's check, under way */
};

static void upload_reply(struct upload_req *r)
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
		log_foreign(c, what, u->lease_id, u->epoch, u->why,
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
			if (r->early)
				verify_stored(r->early, 1);
			else
				verify_lease(d, u->lease_id, u->epoch);
		}
	}
	sched_upload_clear(u);
	free(r);
	conn_step_done(c);
}

static void upload_commit_work(struct store *st, void *arg)
{
	struct upload_req *r = arg;
	sched_upload_commit(st, &r->up);
}

static void upload_commit_after(void *arg)
{
	upload_reply(arg);
}

static void upload_unstore_work(uv_work_t *w)
{
	struct upload_req *r = w->data;
	sched_upload_unstore(&r->up);
}

static void upload_unstore_after(uv_work_t *w, int status)
{
	(void)status;
	upload_reply(w->data);
}

/* Decode and store are both back: commit, or refuse (and remove a file
 * stored for bytes that did not decode). */
static void upload_step_done(struct upload_req *r)
{
	struct gpud *d = r->c->d;

	if (--r->running)
		return;
	if (sched_upload_join(&r->up)) {
		r->work.data = r;
		if (uv_queue_work(d->loop, &r->work, upload_unstore_work,
				  upload_unstore_after) == 0)
			return;
	} else if (r->up.rc == 0 &&
		   dbq_submit(d->dbq, upload_commit_work, upload_commit_after, r) == 0) {
		return;
	}
	if (r->up.rc == 0)
		r->up.rc = GERR_STATE;
	upload_reply(r);
}

static void upload_store_work(uv_work_t *w)
{
	struct upload_req *r = w->data;
	sched_upload_store(&r->up);
}

static void upload_store_after(uv_work_t *w, int status)
{
	struct upload_req *r = w->data;

	if (status) {
		r->up.stored = 0;
		r->up.store_rc = GERR_STATE;
	}
	upload_step_done(r);
}

static void upload_queue_store(struct upload_req *r)
{
	r->store_work.data = r;
	r->running++;
	if (uv_queue_work(r->c->d->loop, &r->store_work, upload_store_work,
			  upload_store_after) == 0)
		return;
	r->running--;
	r->up.store_rc = GERR_STATE;
}

static void upload_decode_work(uv_work_t *w)
{
	struct upload_req *r = w->data;
	sched_upload_decode(&r->up);
}

/* A valid result is checked (verification's sample) while it is stored:
 * the two overlap, and neither reads the blob back. A checkpoint is
 * stored only once its content passed check_checkpoint. */
static void upload_decode_after(uv_work_t *w, int status)
{
	struct upload_req *r = w->data;
	struct gpud *d = r->c->d;

	if (status && r->up.rc == 0)
		r->up.rc = GERR_STATE;
	if (r->up.rc == 0 && r->up.is_result && r->up.raw && !d->stopping)
		r->early = verify_early(d, &r->up);
	if (r->up.rc == 0 && !r->up.is_result)
		upload_queue_store(r);
	upload_step_done(r);
}

static void upload_load_work(struct store *st, void *arg)
{
	struct upload_req *r = arg;
	sched_upload_load(st, &r->up);
}

static void upload_load_after(void *arg)
{
	struct upload_req *r = arg;

	if (r->up.rc == 0) {
		r->work.data = r;
		r->running = 1;
		if (uv_queue_work(r->c->d->loop, &r->work, upload_decode_work,
				  upload_decode_after) == 0) {
			/* A result's file is written beside its decode. */
			if (r->up.is_result)
				upload_queue_store(r);
			return;
		}
		r->up.rc = GERR_STATE;
	}
	upload_reply(r);
}

int wp_upload(struct conn *c, const struct proto_frame *f, int is_result)
{
	struct upload_req *r = calloc(1, sizeof(*r));
	struct msg_result m = { 0 }; /* a checkpoint: the same, no seconds */
	struct msg_checkpoint ck;
	uint64_t lease;

	if (!r)
		return GERR_NOMEM;
	if ((is_result ? msg_result_decode(f->json, &m, NULL, 0)
		       : msg_checkpoint_decode(f->json, &ck, NULL, 0)) ||
	    msg_check_bin(f->type, f->bin_len, NULL, 0)) {
		free(r);
		return GERR_PROTO;
	}
	if (!is_result)
		m = (struct msg_result){ .lease = ck.lease, .epoch = ck.epoch,
					 .units_done = ck.units_done };
	lease = m.lease;
	r->c = c;
	r->pol = gpud_policy(c->d);
	r->up.pol = &r->pol;
	r->up.is_result = is_result;
	r->up.lease_id = (int64_t)lease;
	r->up.epoch = m.epoch;
	r->up.units_done = m.units_done;
	r->up.worker_id = c->worker_id;
	r->up.seconds = m.seconds;
	r->up.blob = malloc(f->bin_len);
	if (!r->up.blob) {
		free(r);
		return GERR_NOMEM;
	}
	memcpy(r->up.blob, f->bin, f->bin_len);
	r->up.blob_len = f->bin_len;
	LOG_DEBUG(&c->d->log, "%s received lease=%" PRIu64 " bytes=%zu worker=%s",
		  is_result ? "result" : "checkpoint", lease, f->bin_len, c->name);
	conn_ref(c);
	c->busy = 1;
	if (dbq_submit(c->d->dbq, upload_load_work, upload_load_after, r)) {
		c->busy = 0;
		conn_unref(c);
		sched_upload_clear(&r->up);
		free(r);
		return GERR_STATE;
	}
	return 0;
}

/* ---- worker: release ---- */

struct release_req {
	struct conn *c;
	struct sched_policy pol;
	struct sched_release rel;
};


static void release_work(struct store *st, void *arg)
{
	struct release_req *r = arg;
	sched_release(st, &r->rel);
}

static void release_after(void *arg)
{
	struct release_req *r = arg;
	struct conn *c = r->c;
	struct msg_ack ack = { .lease = (uint64_t)r->rel.lease_id,
			       .epoch = r->rel.epoch, .what = MSG_ACK_RELEASE };
	json_t *h = NULL;

	if (r->rel.foreign)
		log_foreign(c, "release", r->rel.lease_id, r->rel.epoch,
			    r->rel.why, r->rel.quarantined);
	if (r->rel.job_failed)
		LOG_WARN(&c->d->log, "job failed job=%" PRId64 " lease=%" PRId64
			 ": its runs failed --max-failures times, last on "
			 "worker=%s: %s", r->rel.job_id, r->rel.lease_id,
			 c->name, r->rel.error);
	if (!c->closing) {
		if (r->rel.rc) {
			conn_send_error(c, r->rel.rc, r->rel.rc == GERR_STALE
				   ? SCHED_NOT_HELD : gerr_str(r->rel.rc),
				   r->rel.lease_id, r->rel.epoch);
		} else {
			msg_ack_encode(&ack, &h);
			conn_send(c, PROTO_ACK, h, NULL, 0);
		}
		LOG_INFO(&c->d->log, "lease release lease=%" PRId64 " epoch=%" PRIu64
			 " worker=%s rc=%d", r->rel.lease_id, r->rel.epoch,
			 c->name, r->rel.rc);
		if (c->lease_id == r->rel.lease_id)
			c->lease_id = 0;
	}
	if (r->rel.rc == 0)
		conn_wake_parked(c->d);
	free(r);
	conn_step_done(c);
}

int wp_release(struct conn *c, const json_t *msg)
{
	struct release_req *r = calloc(1, sizeof(*r));
	struct msg_release m;

	if (!r)
		return GERR_NOMEM;
	if (msg_release_decode(msg, &m, NULL, 0)) {
		free(r);
		return GERR_PROTO;
	}
	r->c = c;
	r->pol = gpud_policy(c->d);
	r->rel.pol = &r->pol;
	r->rel.lease_id = (int64_t)m.lease;
	r->rel.epoch = m.epoch;
	r->rel.worker_id = c->worker_id;
	if (m.error)
		snprintf(r->rel.error, sizeof(r->rel.error), "%s", m.error);
	conn_ref(c);
	c->busy = 1;
	if (dbq_submit_batch(c->d->dbq, release_work, release_after, r)) {
		c->busy = 0;
		conn_unref(c);
		free(r);
		return GERR_STATE;
	}
	return 0;
}
