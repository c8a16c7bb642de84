/* worker_proto.c - the worker side of gpud's protocol: login (HELLO,
 * AUTH), CLAIM (with parking while no work exists), HEARTBEAT, CHECKPOINT
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
#include "blob.h"
#include "conn.h"
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "proto.h"
#include "scheduler.h"
#include "store.h"
#include "verify.h"
#include "worker_proto.h"
#include "workload.h"

/* How long a claim that found no work waits before NOLEASE. */
#define PARK_MS 10000

static int claim_submit(struct conn *c);

/* ---- worker: hello and authentication ---- */

int wp_hello(struct conn *c, const json_t *msg)
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
			conn_send_error(c, GERR_AUTH, "authentication failed", 0, 0);
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

int wp_auth(struct conn *c, const json_t *msg)
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

void wp_wake(struct conn *c)
{
	struct gpud *d = c->d;

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
			conn_send_error(c, r->hb.rc, gerr_str(r->hb.rc), r->hb.lease_id,
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

int wp_heartbeat(struct conn *c, const json_t *msg)
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
	r->pol = gpud_policy(c->d);
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

	gpud_storage_outcome(d, u->rc, u->is_result ? "storing a result" : "storing a checkpoint");
	if (u->rc) {
		LOG_WARN(&d->log, "%s refused job=%" PRId64 " lease=%" PRId64
			 " epoch=%" PRIu64 " worker=%s reason=%s", what, u->job_id,
			 u->lease_id, u->epoch, c->name, u->err[0] ? u->err : gerr_str(u->rc));
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
		if (!c->closing)
			conn_send(c, PROTO_ACK,
				  json_pack("{s:I, s:I, s:s}", "lease",
					    (json_int_t)u->lease_id, "epoch",
					    (json_int_t)u->epoch, "what", what),
				  NULL, 0);
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
	r->pol = gpud_policy(c->d);
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
			conn_send_error(c, r->rel.rc, gerr_str(r->rel.rc),
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

int wp_release(struct conn *c, const json_t *msg)
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

int wp_fetch(struct conn *c, const json_t *msg)
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

