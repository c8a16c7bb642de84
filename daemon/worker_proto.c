/* worker_proto.c - the worker side of gpud's protocol, once logged in
 * (login.c): CLAIM (with parking while no work exists), HEARTBEAT,
 * RELEASE and WITHDRAW; uploads are upload.c's, FETCH worker_fetch.c's.
 * Each handler validates its message, then runs its step on the database
 * thread; replies go out from the after-callbacks, once what they
 * acknowledge is durable.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "clock.h"
#include "conn.h"
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "msg.h"
#include "proto.h"
#include "scheduler.h"
#include "store.h"
#include "worker_proto.h"
#include "workload.h"

/* How long a claim that found no work waits before NOLEASE. */
#define PARK_MS 10000

static int claim_submit(struct conn *c);
static void hb_work(struct store *st, void *arg);
static void hb_after(void *arg);
static void release_work(struct store *st, void *arg);
static void release_after(void *arg);

void wp_log_foreign(struct conn *c, const char *what, int64_t lease,
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

/* A worker message's step on the database thread: its connection, the
 * policy the step runs under, and the policy's request. */
struct step {
	struct conn *c;
	struct sched_policy pol;
	union {
		struct sched_claim claim;
		struct sched_heartbeat hb;
		struct sched_release rel;
	};
};

/* A zeroed step for c; NULL when out of memory. */
static struct step *step_new(struct conn *c)
{
	struct step *r = calloc(1, sizeof(*r));

	if (r) {
		r->c = c;
		r->pol = gpud_policy(c->d);
	}
	return r;
}

/* Run work on the database thread in the next group commit, then after
 * on the loop; c is busy and referenced until after's conn_step_done.
 * Takes r: freed here when the step cannot start (GERR_STATE). */
static int submit_step(struct step *r, dbq_work_fn work, dbq_after_fn after)
{
	if (conn_step_db(r->c, 1, work, after, r) == 0)
		return 0;
	free(r);
	return GERR_STATE;
}

/* ---- worker: claim ---- */

static void claim_work(struct store *st, void *arg)
{
	sched_claim(st, &((struct step *)arg)->claim);
}

_Static_assert(GPUD_PARKED_WL == SCHED_WL_MAX, "idle counts");

/* The workloads of a claim's ["graveler",..] (registered names, so a
 * quoted name matches only itself), as bits in registry order. */
static uint32_t workload_mask(const char *workloads_json)
{
	const struct workload *const *all = workload_all();
	char q[MSG_WORKLOAD_MAX + 3];
	uint32_t m = 0;

	for (unsigned i = 0; workloads_json && all[i] && i < GPUD_PARKED_WL;
	     i++) {
		snprintf(q, sizeof(q), "\"%s\"", all[i]->name);
		if (strstr(workloads_json, q))
			m |= 1u << i;
	}
	return m;
}

void wp_unpark(struct conn *c)
{
	conn_set_parked(c, 0);
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
	struct step *r = arg;
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
			/* Another job's rate is in another unit: none until
			 * this job's heartbeats measure one. */
			if (c->rate_job != cl->lease.job_id) {
				c->rate = 0;
				c->rate_job = cl->lease.job_id;
			}
			const struct workload *wl = workload_find(cl->workload);
			c->job_unit = wl ? wl->unit_name : NULL;
			/* conn.c bounds this lease's uploads from their header. */
			c->lease_upload_max = workload_upload_bound(wl, cl->params,
								    cl->lease.spec);
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
			c->park_mask = workload_mask(c->workloads_json);
			conn_set_parked(c, 1);
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
	struct step *r = step_new(c);

	if (!r)
		return GERR_NOMEM;
	r->claim.pol = &r->pol;
	r->claim.worker_id = c->worker_id;
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

	conn_set_parked(c, 0);
	uv_timer_stop(&c->park_timer);
	/* The parked claim's busy flag and reference carry over. */
	if (d->draining || claim_submit(c)) {
		send_nolease(c, 2.0, d->draining ? "gpud is stopping"
						 : "gpud is busy");
		conn_step_done(c);
	}
}

/* ---- worker: heartbeat ---- */

int wp_heartbeat(struct conn *c, const json_t *msg)
{
	struct step *r = step_new(c);
	struct msg_heartbeat m;

	if (!r)
		return GERR_NOMEM;
	if (msg_heartbeat_decode(msg, &m, NULL, 0)) {
		free(r);
		return GERR_PROTO;
	}
	r->hb = (struct sched_heartbeat){
		.pol = &r->pol, .lease_id = (int64_t)m.lease,
		.worker_id = c->worker_id, .epoch = m.epoch,
		.units_done = m.units_done,
	};
	memcpy(r->hb.idle, c->d->parked, sizeof(r->hb.idle));
	return submit_step(r, hb_work, hb_after);
}

static void hb_work(struct store *st, void *arg)
{
	sched_heartbeat(st, &((struct step *)arg)->hb);
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
	struct step *r = arg;
	struct conn *c = r->c;
	struct gpud *d = c->d;

	if (r->hb.rc != GERR_STALE && r->hb.rc != GERR_INVAL)
		gpud_storage_outcome(d, r->hb.rc, "recording a heartbeat");
	if (r->hb.foreign)
		wp_log_foreign(c, "heartbeat", r->hb.lease_id, r->hb.epoch,
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
	if (r->hb.takeback && r->hb.why[0]) /* newly marked */
		LOG_INFO(&d->log, "lease taken back lease=%" PRId64 " epoch=%"
			 PRIu64 " worker=%s pieces=%u why=\"%s\"",
			 r->hb.lease_id, r->hb.epoch, c->name, r->hb.takeback,
			 r->hb.why);
	if (r->hb.rc == 0 && !r->hb.revoked) {
		/* A worker that reconnected keeps its lease: remember it. */
		c->lease_id = r->hb.lease_id;
		c->epoch = r->hb.epoch;
		note_rate(c, r->hb.lease_id, r->hb.units_done);
	}
	if (d->draining && r->hb.action == MSG_HB_CONTINUE)
		r->hb.action = MSG_HB_RELEASE; /* gpud is stopping: checkpoint now */
	if (!c->closing) {
		struct msg_hb_ack m = { .lease = (uint64_t)r->hb.lease_id,
					.epoch = r->hb.epoch,
					.action = r->hb.action };
		json_t *h = NULL;

		if (r->hb.rc && r->hb.rc != GERR_STALE) {
			conn_send_error(c, r->hb.rc, r->hb.err[0] ? r->hb.err
				   : gerr_str(r->hb.rc), r->hb.lease_id,
				   r->hb.epoch);
		} else {
			msg_hb_ack_encode(&m, &h);
			conn_send(c, PROTO_HB_ACK, h, NULL, 0);
		}
		if (r->hb.action == MSG_HB_STOP &&
		    c->lease_id == r->hb.lease_id) {
			LOG_INFO(&d->log, "lease stop lease=%" PRId64 " epoch=%" PRIu64
				 " worker=%s", r->hb.lease_id, r->hb.epoch, c->name);
			c->lease_id = 0;
		}
	}
	free(r);
	conn_step_done(c);
}

/* ---- worker: release ---- */

int wp_release(struct conn *c, const json_t *msg)
{
	struct step *r;
	struct msg_release m;

	if (msg_release_decode(msg, &m, NULL, 0) != 0)
		return GERR_PROTO;
	r = step_new(c);
	if (!r)
		return GERR_NOMEM;
	r->rel.pol = &r->pol;
	r->rel.lease_id = (int64_t)m.lease;
	r->rel.epoch = m.epoch;
	r->rel.worker_id = c->worker_id;
	if (m.error)
		snprintf(r->rel.error, sizeof(r->rel.error), "%s", m.error);
	return submit_step(r, release_work, release_after);
}

static void release_work(struct store *st, void *arg)
{
	sched_release(st, &((struct step *)arg)->rel);
}

static void release_after(void *arg)
{
	struct step *r = arg;
	struct conn *c = r->c;
	struct msg_ack ack = { .lease = (uint64_t)r->rel.lease_id,
			       .epoch = r->rel.epoch, .what = MSG_ACK_RELEASE };
	json_t *h = NULL;

	if (r->rel.foreign)
		wp_log_foreign(c, "release", r->rel.lease_id, r->rel.epoch,
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
		if (r->rel.rc == 0 && r->rel.damaged)
			LOG_ERROR(&c->d->log, "job paused job=%" PRId64
				  " lease=%" PRId64 " worker=%s: %s",
				  r->rel.job_id, r->rel.lease_id, c->name,
				  r->rel.why);
		else if (r->rel.rc == 0 && r->rel.why[0])
			LOG_INFO(&c->d->log, "lease cut lease=%" PRId64
				 " epoch=%" PRIu64 " pieces=%u: %s",
				 r->rel.lease_id, r->rel.epoch, r->rel.pieces,
				 r->rel.why);
		if (c->lease_id == r->rel.lease_id)
			c->lease_id = 0;
	}
	if (r->rel.rc == 0)
		conn_wake_parked(c->d);
	free(r);
	conn_step_done(c);
}
