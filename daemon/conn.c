/* conn.c - one client connection: a worker on TCP or gpuctl on the Unix
 * socket.
 *
 * Frames of one connection are handled strictly one after another: while a
 * frame's database or verification steps run, the connection is "busy" and
 * later frames wait in the buffer. That keeps replies in request order
 * (a checkpoint's ACK never overtakes the result that follows it).
 *
 * Worker connection states and moves:
 *   HELLO --HELLO--> AUTH --AUTH ok--> READY --(CLAIM|HEARTBEAT|CHECKPOINT|
 *   RESULT|RELEASE)--> READY; anything else closes the connection.
 *
 * Lifetime: a conn is reference counted; every pending asynchronous step
 * holds a reference, so after-callbacks may run after the socket closed and
 * simply skip the reply.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "blob.h"
#include "control.h"
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "proto.h"
#include "scheduler.h"
#include "store.h"
#include "workload.h"

#define READ_CHUNK (64u * 1024)
#define MAX_BUFFER ((size_t)PROTO_HEADER_LEN + PROTO_MAX_JSON + PROTO_MAX_BIN)
#define MAX_WORKLOADS 32

enum conn_state { CONN_HELLO, CONN_AUTH, CONN_READY };

struct conn {
	struct gpud *d;
	union {
		uv_handle_t h;
		uv_stream_t s;
		uv_tcp_t tcp;
		uv_pipe_t pipe;
	} u;
	int is_ctl;
	int refs;
	int closing;
	int busy;
	int in_process;         /* conn_process is on the stack */
	uint8_t *buf;
	size_t len, cap;
	enum conn_state state;
	char peer[64];
	char name[AUTH_NAME_MAX + 1];
	char device[64];
	char *workloads_json;   /* ["graveler",..] of registered names */
	uint8_t nonce[AUTH_NONCE_LEN];
	int64_t worker_id;
	int64_t lease_id, job_id;
	uint64_t epoch;
	double claim_rate;      /* the rate its last CLAIM reported */
	/* A claim that found nothing waits here (long poll) until work appears
	 * or park_timer fires, so an idle worker starts new work at once. */
	int parked;
	uv_timer_t park_timer;
	char park_reason[256];
	struct conn *next, *prev;
};

struct write_req {
	uv_write_t req;
	uint8_t *buf;
};

static void conn_process(struct conn *c);
static int claim_submit(struct conn *c);

/* How long a claim that found no work waits before NOLEASE. */
#define PARK_MS 10000

static struct sched_policy policy_of(struct gpud *d)
{
	struct sched_policy p = {
		.lease_target_s = d->cfg.lease_target_s,
		.lease_units = d->cfg.lease_units,
		.lease_timeout_s = d->cfg.lease_timeout_s,
		.max_failures = d->cfg.max_failures,
		.quarantine_after = d->cfg.quarantine_after,
		.data_dir = d->cfg.data_dir,
	};
	return p;
}

/* ---- lifetime ---- */

static void conn_ref(struct conn *c)
{
	c->refs++;
}

static void conn_unref(struct conn *c)
{
	if (--c->refs > 0)
		return;
	free(c->buf);
	free(c->workloads_json);
	free(c);
}

static void on_closed(uv_handle_t *h)
{
	conn_unref(h->data);
}

static void on_park_timer_closed(uv_handle_t *h)
{
	conn_unref(h->data);
}

struct offline_req {
	int64_t worker_id;
};

static void offline_work(struct store *st, void *arg)
{
	struct offline_req *r = arg;
	store_worker_set_online(st, r->worker_id, 0, sched_now());
}

static void conn_close(struct conn *c, const char *why)
{
	struct gpud *d = c->d;

	if (c->closing)
		return;
	c->closing = 1;
	if (c->parked) {
		/* The parked claim holds a reference; give it back. */
		c->parked = 0;
		c->busy = 0;
		conn_unref(c);
	}
	if (c->park_timer.data) {
		conn_ref(c);
		uv_close((uv_handle_t *)&c->park_timer, on_park_timer_closed);
	}
	if (why)
		LOG_INFO(&d->log, "close %s worker=%s reason=%s", c->peer,
			 c->name[0] ? c->name : "-", why);
	if (c->prev)
		c->prev->next = c->next;
	else
		d->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->worker_id && !d->stopping) {
		struct offline_req *r = malloc(sizeof(*r));
		if (r) {
			r->worker_id = c->worker_id;
			if (dbq_submit(d->dbq, offline_work, free, r))
				free(r);
		}
	}
	uv_close(&c->u.h, on_closed);
}

/* ---- writing ---- */

static void on_written(uv_write_t *req, int status)
{
	struct write_req *w = (struct write_req *)req;
	free(w->buf);
	free(w);
}

static void conn_send(struct conn *c, enum proto_type type, json_t *msg,
		      const void *bin, size_t bin_len)
{
	struct write_req *w;
	uint8_t *buf = NULL;
	size_t len = 0;

	if (c->closing || !msg) {
		json_decref(msg);
		return;
	}
	if (proto_frame_encode(type, msg, bin, bin_len, &buf, &len) != 0) {
		json_decref(msg);
		conn_close(c, "cannot encode reply");
		return;
	}
	json_decref(msg);
	w = malloc(sizeof(*w));
	if (!w) {
		free(buf);
		conn_close(c, "out of memory");
		return;
	}
	w->buf = buf;
	uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
	if (uv_write(&w->req, &c->u.s, &b, 1, on_written) != 0) {
		free(buf);
		free(w);
		conn_close(c, "write failed");
	}
}

static void send_error(struct conn *c, int code, const char *msg,
		       int64_t lease, uint64_t epoch)
{
	json_t *j = json_pack("{s:i, s:s}", "code", code, "message", msg);
	if (j && lease) {
		json_object_set_new(j, "lease", json_integer(lease));
		json_object_set_new(j, "epoch", json_integer((json_int_t)epoch));
	}
	conn_send(c, PROTO_ERROR, j, NULL, 0);
}

/* Finish an asynchronous step: resume frame processing, drop the ref. */
static void conn_step_done(struct conn *c)
{
	c->busy = 0;
	if (!c->closing && !c->in_process)
		conn_process(c);
	conn_unref(c);
}

/* ---- worker: hello and authentication ---- */

static int on_hello(struct conn *c, const json_t *msg)
{
	uint64_t proto = 0;
	const char *name = NULL, *device = NULL;
	const json_t *wls = json_object_get(msg, "workloads");
	json_t *ok = json_array();
	size_t i;
	json_t *v;

	if (proto_get_u64(msg, "proto", &proto) || proto != PROTO_VERSION ||
	    proto_get_str(msg, "worker", AUTH_NAME_MAX, &name) ||
	    auth_name_valid(name) ||
	    proto_get_str(msg, "device", sizeof(c->device) - 1, &device) ||
	    !json_is_array(wls) || json_array_size(wls) > MAX_WORKLOADS) {
		json_decref(ok);
		return GERR_PROTO;
	}
	json_array_foreach(wls, i, v) {
		if (json_is_string(v) && workload_find(json_string_value(v)))
			json_array_append(ok, v);
	}
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->device, sizeof(c->device), "%s", device);
	c->workloads_json = json_dumps(ok, JSON_COMPACT);
	json_decref(ok);
	if (!c->workloads_json)
		return GERR_NOMEM;
	auth_random(c->nonce, sizeof(c->nonce));
	char hex[2 * AUTH_NONCE_LEN + 1];
	auth_hex(c->nonce, sizeof(c->nonce), hex);
	conn_send(c, PROTO_CHALLENGE, json_pack("{s:s}", "nonce", hex), NULL, 0);
	c->state = CONN_AUTH;
	return 0;
}

struct auth_req {
	struct conn *c;
	char name[AUTH_NAME_MAX + 1];
	char device[64];
	uint8_t nonce[AUTH_NONCE_LEN];
	uint8_t mac[AUTH_MAC_LEN];
	int rc;
	int64_t worker_id;
};

static void auth_work(struct store *st, void *arg)
{
	struct auth_req *r = arg;
	uint8_t key[AUTH_KEY_LEN];

	r->rc = store_token_get(st, r->name, key);
	if (r->rc == 0)
		r->rc = auth_proof_check(key, r->nonce, r->name, r->mac);
	if (r->rc == 0)
		r->rc = store_worker_upsert(st, r->name, r->device, sched_now(),
					    &r->worker_id);
	if (r->rc == 0)
		store_event(st, sched_now(), 0, 0, 0, r->worker_id, "connect",
			    r->device);
}

static void auth_after(void *arg)
{
	struct auth_req *r = arg;
	struct conn *c = r->c;
	struct gpud *d = c->d;

	if (!c->closing) {
		if (r->rc) {
			send_error(c, GERR_AUTH, "authentication failed", 0, 0);
			conn_close(c, r->rc == GERR_AUTH || r->rc == GERR_NOTFOUND
					     ? "bad token" : gerr_str(r->rc));
		} else {
			c->worker_id = r->worker_id;
			c->state = CONN_READY;
			LOG_INFO(&d->log, "worker online worker=%s id=%" PRId64
				 " device=%s peer=%s", c->name, c->worker_id,
				 c->device, c->peer);
			conn_send(c, PROTO_WELCOME,
				  json_pack("{s:I, s:f, s:f}", "worker_id",
					    (json_int_t)c->worker_id, "heartbeat_s",
					    d->cfg.heartbeat_s, "checkpoint_s",
					    d->cfg.checkpoint_s), NULL, 0);
		}
	}
	free(r);
	conn_step_done(c);
}

static int on_auth(struct conn *c, const json_t *msg)
{
	const char *mac_hex = NULL;
	struct auth_req *r;

	if (proto_get_str(msg, "mac", 2 * AUTH_MAC_LEN, &mac_hex))
		return GERR_PROTO;
	r = calloc(1, sizeof(*r));
	if (!r)
		return GERR_NOMEM;
	if (auth_unhex(mac_hex, r->mac, AUTH_MAC_LEN)) {
		free(r);
		return GERR_PROTO;
	}
	r->c = c;
	memcpy(r->name, c->name, sizeof(r->name));
	memcpy(r->device, c->device, sizeof(r->device));
	memcpy(r->nonce, c->nonce, sizeof(r->nonce));
	conn_ref(c);
	c->busy = 1;
	if (dbq_submit_batch(c->d->dbq, auth_work, auth_after, r)) {
		c->busy = 0;
		conn_unref(c);
		free(r);
		return GERR_STATE;
	}
	return 0;
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

static void on_park_timeout(uv_timer_t *t)
{
	struct conn *c = t->data;

	if (!c->parked)
		return;
	c->parked = 0;
	conn_send(c, PROTO_NOLEASE,
		  json_pack("{s:f, s:s}", "retry_s", 0.2, "reason",
			    c->park_reason[0] ? c->park_reason : "no lease"),
		  NULL, 0);
	conn_step_done(c);
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
			json_t *m = json_pack("{s:I, s:I, s:I, s:s, s:o, s:o, s:I, s:f, s:I}",
				"lease", (json_int_t)cl->lease.id,
				"epoch", (json_int_t)cl->lease.epoch,
				"job", (json_int_t)cl->lease.job_id,
				"workload", cl->workload,
				"params", params ? params : json_object(),
				"spec", spec ? spec : json_object(),
				"units", (json_int_t)cl->lease.units,
				"deadline_s", d->cfg.lease_timeout_s,
				"units_done", (json_int_t)cl->lease.checkpoint_units);
			c->lease_id = cl->lease.id;
			c->epoch = cl->lease.epoch;
			c->job_id = cl->lease.job_id;
			LOG_INFO(&d->log, "lease grant job=%" PRId64 " lease=%" PRId64
				 " epoch=%" PRIu64 " worker=%s units=%" PRIu64
				 " resume_from=%" PRIu64,
				 cl->lease.job_id, cl->lease.id, cl->lease.epoch,
				 c->name, cl->lease.units, cl->lease.checkpoint_units);
			conn_send(c, PROTO_LEASE, m, cl->checkpoint,
				  cl->checkpoint_len);
		} else if (cl->rc == GERR_NOTFOUND && !d->stopping) {
			/* Park: keep the claim (and the busy flag and reference)
			 * until conn_wake_parked or the timer. */
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
			conn_send(c, PROTO_NOLEASE,
				  json_pack("{s:f, s:s}", "retry_s", 5.0,
					    "reason", reason), NULL, 0);
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
	r->pol = policy_of(c->d);
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

static int on_claim(struct conn *c, const json_t *msg)
{
	const json_t *rate = json_object_get(msg, "rate");
	int rc;

	if (c->d->draining || c->d->storage_error) {
		conn_send(c, PROTO_NOLEASE, json_pack("{s:f, s:s}", "retry_s", 2.0,
			  "reason", c->d->draining ? "gpud is stopping"
						   : c->d->storage_msg), NULL, 0);
		return 0;
	}
	c->claim_rate = 0;
	if (json_is_number(rate) && json_number_value(rate) > 0 &&
	    json_number_value(rate) < 1e15)
		c->claim_rate = json_number_value(rate);
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

void conn_wake_parked(struct gpud *d)
{
	struct conn *c, *next;

	for (c = d->conns; c; c = next) {
		next = c->next; /* c may close while we answer it */
		if (!c->parked || c->closing)
			continue;
		c->parked = 0;
		uv_timer_stop(&c->park_timer);
		/* The parked claim's busy flag and reference carry over. */
		if (d->draining || claim_submit(c)) {
			conn_send(c, PROTO_NOLEASE, json_pack("{s:f, s:s}", "retry_s",
				  2.0, "reason", d->draining ? "gpud is stopping"
							     : "gpud is busy"), NULL, 0);
			conn_step_done(c);
		}
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

static void hb_after(void *arg)
{
	struct hb_req *r = arg;
	struct conn *c = r->c;
	struct gpud *d = c->d;

	if (r->hb.rc != GERR_STALE)
		gpud_storage_outcome(d, r->hb.rc, "recording a heartbeat");
	if (r->hb.job_id)
		gpud_rate_sample(d, r->hb.job_id, r->hb.job_progress, sched_now());
	if (d->draining && strcmp(r->hb.action, "continue") == 0)
		r->hb.action = "release"; /* gpud is stopping: checkpoint now */
	if (!c->closing) {
		if (r->hb.rc && r->hb.rc != GERR_STALE)
			send_error(c, r->hb.rc, gerr_str(r->hb.rc), r->hb.lease_id,
				   r->hb.epoch);
		else
			conn_send(c, PROTO_HB_ACK,
				  json_pack("{s:I, s:I, s:s}", "lease",
					    (json_int_t)r->hb.lease_id, "epoch",
					    (json_int_t)r->hb.epoch, "action",
					    r->hb.action), NULL, 0);
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

static int on_heartbeat(struct conn *c, const json_t *msg)
{
	struct hb_req *r = calloc(1, sizeof(*r));
	uint64_t lease;

	if (!r)
		return GERR_NOMEM;
	if (proto_get_u64(msg, "lease", &lease) ||
	    proto_get_u64(msg, "epoch", &r->hb.epoch) ||
	    proto_get_u64(msg, "units_done", &r->hb.units_done) ||
	    lease > INT64_MAX) {
		free(r);
		return GERR_PROTO;
	}
	r->c = c;
	r->pol = policy_of(c->d);
	r->hb.pol = &r->pol;
	r->hb.lease_id = (int64_t)lease;
	/* A worker that reconnected keeps its lease: remember it again. */
	c->lease_id = r->hb.lease_id;
	c->epoch = r->hb.epoch;
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
	struct conn *c;
	struct sched_policy pol;
	struct sched_upload up;
};

static void upload_reply(struct upload_req *r)
{
	struct conn *c = r->c;
	struct gpud *d = c->d;
	struct sched_upload *u = &r->up;
	const char *what = u->is_result ? "result" : "checkpoint";

	gpud_storage_outcome(d, u->rc, u->is_result ? "storing a result" : "storing a checkpoint");
	if (u->rc) {
		LOG_WARN(&d->log, "%s refused job=%" PRId64 " lease=%" PRId64
			 " epoch=%" PRIu64 " worker=%s reason=%s", what, u->job_id,
			 u->lease_id, u->epoch, c->name, u->err[0] ? u->err : gerr_str(u->rc));
		if (!c->closing)
			send_error(c, u->rc, u->err[0] ? u->err : gerr_str(u->rc),
				   u->lease_id, u->epoch);
	} else {
		LOG_INFO(&d->log, "%s stored job=%" PRId64 " lease=%" PRId64
			 " epoch=%" PRIu64 " worker=%s units_done=%" PRIu64, what,
			 u->job_id, u->lease_id, u->epoch, c->name, u->units_done);
		if (!c->closing)
			conn_send(c, PROTO_ACK,
				  json_pack("{s:I, s:I, s:s}", "lease",
					    (json_int_t)u->lease_id, "epoch",
					    (json_int_t)u->epoch, "what", what),
				  NULL, 0);
		if (u->is_result) {
			if (c->lease_id == u->lease_id)
				c->lease_id = 0;
			gpud_verify_lease(d, u->lease_id, u->epoch);
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

static void upload_check_work(uv_work_t *w)
{
	struct upload_req *r = w->data;
	sched_upload_check(&r->up);
}

static void upload_check_after(uv_work_t *w, int status)
{
	struct upload_req *r = w->data;

	if (status == 0 && r->up.rc == 0 &&
	    dbq_submit(r->c->d->dbq, upload_commit_work, upload_commit_after, r) == 0)
		return;
	if (r->up.rc == 0)
		r->up.rc = GERR_STATE;
	upload_reply(r);
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
		if (uv_queue_work(r->c->d->loop, &r->work, upload_check_work,
				  upload_check_after) == 0)
			return;
		r->up.rc = GERR_STATE;
	}
	upload_reply(r);
}

static int on_upload(struct conn *c, const struct proto_frame *f, int is_result)
{
	struct upload_req *r = calloc(1, sizeof(*r));
	uint64_t lease;
	const json_t *secs = json_object_get(f->json, "seconds");

	if (!r)
		return GERR_NOMEM;
	if (proto_get_u64(f->json, "lease", &lease) || lease > INT64_MAX ||
	    proto_get_u64(f->json, "epoch", &r->up.epoch) ||
	    proto_get_u64(f->json, "units_done", &r->up.units_done) ||
	    f->bin_len == 0) {
		free(r);
		return GERR_PROTO;
	}
	r->c = c;
	r->pol = policy_of(c->d);
	r->up.pol = &r->pol;
	r->up.is_result = is_result;
	r->up.lease_id = (int64_t)lease;
	r->up.worker_id = c->worker_id;
	r->up.seconds = json_is_number(secs) ? json_number_value(secs) : 0;
	r->up.blob = malloc(f->bin_len);
	if (!r->up.blob) {
		free(r);
		return GERR_NOMEM;
	}
	memcpy(r->up.blob, f->bin, f->bin_len);
	r->up.blob_len = f->bin_len;
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

	if (!c->closing) {
		if (r->rel.rc)
			send_error(c, r->rel.rc, gerr_str(r->rel.rc),
				   r->rel.lease_id, r->rel.epoch);
		else
			conn_send(c, PROTO_ACK,
				  json_pack("{s:I, s:I, s:s}", "lease",
					    (json_int_t)r->rel.lease_id, "epoch",
					    (json_int_t)r->rel.epoch, "what",
					    "release"), NULL, 0);
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

static int on_release(struct conn *c, const json_t *msg)
{
	struct release_req *r = calloc(1, sizeof(*r));
	uint64_t lease;

	if (!r)
		return GERR_NOMEM;
	const json_t *error = json_object_get(msg, "error");

	if (proto_get_u64(msg, "lease", &lease) || lease > INT64_MAX ||
	    proto_get_u64(msg, "epoch", &r->rel.epoch) ||
	    (error && !json_is_string(error))) {
		free(r);
		return GERR_PROTO;
	}
	r->c = c;
	r->rel.lease_id = (int64_t)lease;
	r->rel.worker_id = c->worker_id;
	if (error)
		snprintf(r->rel.error, sizeof(r->rel.error), "%s",
			 json_string_value(error));
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

/* ---- worker: blob fetch ---- */

struct fetch_req {
	uv_work_t work;
	struct conn *c;
	char hash[BLOB_HASH_HEX];
	uint8_t *blob;
	size_t len;
	int rc;
};

static void fetch_work(uv_work_t *w)
{
	struct fetch_req *r = w->data;
	r->rc = blob_store_get(r->c->d->cfg.data_dir, r->hash, &r->blob, &r->len);
}

static void fetch_after(uv_work_t *w, int status)
{
	struct fetch_req *r = w->data;
	struct conn *c = r->c;

	if (!c->closing) {
		if (status == 0 && r->rc == 0) {
			LOG_DEBUG(&c->d->log, "blob sent hash=%.16s bytes=%zu worker=%s",
				  r->hash, r->len, c->name);
			conn_send(c, PROTO_BLOB, json_pack("{s:s}", "hash", r->hash),
				  r->blob, r->len);
		} else {
			json_t *e = json_pack("{s:i, s:s, s:s}", "code",
				r->rc ? r->rc : GERR_IO, "message",
				r->rc == GERR_NOTFOUND ? "no such blob" : gerr_str(r->rc),
				"hash", r->hash);
			conn_send(c, PROTO_ERROR, e, NULL, 0);
		}
	}
	free(r->blob);
	free(r);
	conn_step_done(c);
}

static int on_fetch(struct conn *c, const json_t *msg)
{
	const char *hash = NULL;
	struct fetch_req *r;

	if (proto_get_str(msg, "hash", BLOB_HASH_HEX - 1, &hash) ||
	    strlen(hash) != BLOB_HASH_HEX - 1 ||
	    strspn(hash, "0123456789abcdef") != BLOB_HASH_HEX - 1)
		return GERR_PROTO;
	r = calloc(1, sizeof(*r));
	if (!r)
		return GERR_NOMEM;
	r->c = c;
	memcpy(r->hash, hash, BLOB_HASH_HEX);
	r->work.data = r;
	conn_ref(c);
	c->busy = 1;
	if (uv_queue_work(c->d->loop, &r->work, fetch_work, fetch_after)) {
		c->busy = 0;
		conn_unref(c);
		free(r);
		return GERR_STATE;
	}
	return 0;
}

/* ---- control ---- */

static void control_done(void *opaque, json_t *reply, void *bin,
			 size_t bin_len)
{
	struct conn *c = opaque;

	if (!c->closing)
		conn_send(c, PROTO_CTL_REPLY, reply, bin, bin_len);
	else
		json_decref(reply);
	free(bin);
	conn_step_done(c);
}

/* ---- dispatch ---- */

static int dispatch(struct conn *c, const struct proto_frame *f)
{
	if (c->is_ctl) {
		if (f->type != PROTO_CTL_REQ)
			return GERR_PROTO;
		conn_ref(c);
		c->busy = 1;
		json_incref(f->json);
		control_handle(c->d, f->json, f->bin, f->bin_len, control_done, c);
		return 0;
	}
	switch (c->state) {
	case CONN_HELLO:
		return f->type == PROTO_HELLO ? on_hello(c, f->json) : GERR_PROTO;
	case CONN_AUTH:
		return f->type == PROTO_AUTH ? on_auth(c, f->json) : GERR_PROTO;
	case CONN_READY:
		break;
	}
	switch (f->type) {
	case PROTO_CLAIM:
		return on_claim(c, f->json);
	case PROTO_HEARTBEAT:
		return on_heartbeat(c, f->json);
	case PROTO_CHECKPOINT:
		return on_upload(c, f, 0);
	case PROTO_RESULT:
		return on_upload(c, f, 1);
	case PROTO_RELEASE:
		return on_release(c, f->json);
	case PROTO_FETCH:
		return on_fetch(c, f->json);
	default:
		return GERR_PROTO;
	}
}

static void conn_process(struct conn *c)
{
	size_t off = 0;

	conn_ref(c);
	c->in_process = 1;
	while (!c->busy && !c->closing && off < c->len) {
		struct proto_frame f;
		size_t used = 0, need = 0;
		char err[200] = "";
		int rc = proto_frame_parse(c->buf + off, c->len - off, &f, &used,
					   &need, err, sizeof(err));
		if (rc == GERR_AGAIN)
			break;
		if (rc) {
			char why[260];
			snprintf(why, sizeof(why), "bad frame: %s", err[0] ? err : gerr_str(rc));
			conn_close(c, why);
			break;
		}
		int type = f.type;
		rc = dispatch(c, &f);
		proto_frame_clear(&f);
		off += used;
		if (rc) {
			char why[160];
			snprintf(why, sizeof(why), "%s (%s in state %d)",
				 rc == GERR_PROTO ? "unexpected or invalid message"
						  : gerr_str(rc),
				 proto_type_name(type), (int)c->state);
			if (rc == GERR_PROTO)
				send_error(c, GERR_PROTO, why, 0, 0);
			conn_close(c, why);
			break;
		}
	}
	if (off > 0 && !c->closing) {
		memmove(c->buf, c->buf + off, c->len - off);
		c->len -= off;
	}
	c->in_process = 0;
	conn_unref(c);
}

/* ---- reading ---- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *out)
{
	struct conn *c = h->data;

	if (c->cap - c->len < READ_CHUNK) {
		size_t ncap = c->cap ? c->cap * 2 : 2 * READ_CHUNK;
		uint8_t *nb;
		while (ncap - c->len < READ_CHUNK)
			ncap *= 2;
		nb = realloc(c->buf, ncap);
		if (!nb) {
			*out = uv_buf_init(NULL, 0);
			return;
		}
		c->buf = nb;
		c->cap = ncap;
	}
	*out = uv_buf_init((char *)c->buf + c->len, (unsigned)(c->cap - c->len));
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct conn *c = s->data;

	if (n < 0) {
		conn_close(c, n == UV_EOF ? "peer closed" : uv_strerror((int)n));
		return;
	}
	if (n == 0)
		return;
	c->len += (size_t)n;
	if (c->len > MAX_BUFFER) {
		conn_close(c, "peer sent more than the frame limit");
		return;
	}
	conn_process(c);
}

static struct conn *conn_new(struct gpud *d, int is_ctl)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->d = d;
	c->is_ctl = is_ctl;
	c->refs = 1;
	c->u.h.data = c;
	return c;
}

static int conn_start(struct gpud *d, struct conn *c, uv_stream_t *server)
{
	int rc = uv_accept(server, &c->u.s);

	if (rc == 0 && !c->is_ctl) {
		struct sockaddr_storage ss;
		int len = sizeof(ss);
		char host[48] = "?";
		uv_tcp_nodelay(&c->u.tcp, 1);
		if (uv_tcp_getpeername(&c->u.tcp, (struct sockaddr *)&ss, &len) == 0) {
			if (ss.ss_family == AF_INET)
				uv_ip4_name((struct sockaddr_in *)&ss, host, sizeof(host));
			else
				uv_ip6_name((struct sockaddr_in6 *)&ss, host, sizeof(host));
		}
		snprintf(c->peer, sizeof(c->peer), "%s", host);
	} else {
		snprintf(c->peer, sizeof(c->peer), "control");
	}
	if (rc == 0)
		rc = uv_read_start(&c->u.s, on_alloc, on_read);
	c->next = d->conns;
	if (d->conns)
		d->conns->prev = c;
	d->conns = c;
	if (rc)
		conn_close(c, uv_strerror(rc));
	return rc;
}

int conn_accept_tcp(struct gpud *d, uv_stream_t *server)
{
	struct conn *c = conn_new(d, 0);

	if (!c)
		return GERR_NOMEM;
	uv_tcp_init(d->loop, &c->u.tcp);
	return conn_start(d, c, server);
}

int conn_accept_pipe(struct gpud *d, uv_stream_t *server)
{
	struct conn *c = conn_new(d, 1);

	if (!c)
		return GERR_NOMEM;
	uv_pipe_init(d->loop, &c->u.pipe, 0);
	return conn_start(d, c, server);
}

void conn_close_all(struct gpud *d)
{
	while (d->conns)
		conn_close(d->conns, "shutting down");
}

int64_t conn_worker_lease(struct gpud *d, int64_t worker_id, int64_t *ret_job)
{
	for (struct conn *c = d->conns; c; c = c->next) {
		if (!c->is_ctl && c->worker_id == worker_id && c->lease_id) {
			*ret_job = c->job_id;
			return c->lease_id;
		}
	}
	return 0;
}

void conn_close_token(struct gpud *d, const char *name)
{
	struct conn *c = d->conns, *next;

	for (; c; c = next) {
		next = c->next;
		if (!c->is_ctl && c->state != CONN_HELLO && strcmp(c->name, name) == 0) {
			send_error(c, GERR_AUTH, "token revoked", 0, 0);
			conn_close(c, "token revoked");
		}
	}
}

int conn_count_leases(struct gpud *d)
{
	int n = 0;

	for (struct conn *c = d->conns; c; c = c->next)
		n += !c->is_ctl && c->state == CONN_READY && !c->closing && c->lease_id;
	return n;
}

int conn_count_workers(struct gpud *d)
{
	int n = 0;

	for (struct conn *c = d->conns; c; c = c->next)
		n += !c->is_ctl && c->state == CONN_READY && !c->closing;
	return n;
}

int conn_workload_served(struct gpud *d, const char *workload)
{
	char quoted[80];

	snprintf(quoted, sizeof(quoted), "\"%s\"", workload);
	for (struct conn *c = d->conns; c; c = c->next)
		if (!c->is_ctl && c->state == CONN_READY && c->workloads_json &&
		    strstr(c->workloads_json, quoted))
			return 1;
	return 0;
}
