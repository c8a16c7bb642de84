/* client.c - gpuworker's connection to gpud and the lease protocol.
 *
 * Invariants:
 *  1. There is at most one connection (cl->conn) and at most one lease
 *     (cl->cur). The lease does not depend on the connection: it keeps
 *     running while disconnected, and after the next WELCOME the worker
 *     heartbeats it and resends whatever was not acknowledged.
 *  2. Nothing is sent before WELCOME except HELLO and AUTH, and everything
 *     the lease state asks to send is sent from one place, pump().
 *  3. At most one CHECKPOINT is unacknowledged; a newer checkpoint waits in
 *     ckpt_next and replaces an older waiting one (only the newest matters).
 *  4. RELEASE is sent only when no checkpoint is waiting or unacknowledged,
 *     so the last checkpoint is stored before the lease is given back.
 *  5. A result is kept until gpud acknowledges it (or says the lease is
 *     stale); it survives reconnects.
 *  6. A new lease is claimed only once the runner is idle (runner.h #1); a
 *     run ahead (runner.h #7) is not a lease and does not count.
 *  7. At most one FETCH is outstanding (the run's, runner.h #5). It is sent
 *     from pump() while the run goes on, again after every reconnect, and
 *     forgotten when gpud answers (BLOB, or ERROR naming the hash) or the
 *     run ends. An answer for any other hash is late and dropped.
 *  8. A RELEASE after a failed run (not a stop) carries the run's one-line
 *     message as "error" (printable ASCII, at most RELEASE_ERROR_MAX
 *     characters), so gpud can tell the user why the lease does not move.
 *
 * Connection states (conn_move checks every move against conn_next):
 *
 *   IDLE -> RESOLVING -> CONNECTING -> HELLO -> AUTH -> READY
 *    ^         |            |            |       |       |
 *    |         v            +------------+-------+-------+--> CLOSING
 *    +------ (fail) <----------------------------------------- CLOSING
 *   CLOSING -> CONNECTING (next address) ; any -> STOPPED (on exit)
 *
 * Lease states (lease_move checks every move against lease_next):
 *
 *   IDLE -> CLAIMING -> RUNNING -> RESULT -> IDLE
 *     ^        |           |  \
 *     |     (NOLEASE)      |   +-> RELEASING -> IDLE (ACK release)
 *     +---- WAITING        |          |
 *                          +--------> STOPPING -> IDLE (runner done)
 *   any -> EXITED
 *
 *   RUNNING    the runner works on the lease; heartbeats, checkpoints.
 *   RELEASING  the lease is given back: wait for the requested checkpoint
 *              (if any), upload it, send RELEASE, wait for its ACK.
 *   STOPPING   the lease is gone; wait for the runner to return and discard
 *              what it produced.
 *   RESULT     the result waits for its ACK.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "blob.h"
#include "client.h"
#include "gerr.h"
#include "proto.h"
#include "runner.h"

#define FRAME_MAX ((size_t)PROTO_HEADER_LEN + PROTO_MAX_JSON + PROTO_MAX_BIN)
#define READ_CHUNK ((size_t)64 * 1024)
#define SHRINK_ABOVE ((size_t)1 << 20)

#define BACKOFF_MIN_S 0.2
#define BACKOFF_MAX_S 30.0
#define HANDSHAKE_TIMEOUT_MS 30000
#define WATCHDOG_MS 5000
#define SILENCE_MIN_MS 60000      /* at least; 3 heartbeats when longer */
#define RELEASE_CKPT_WAIT_MS 10000
#define SHUTDOWN_WAIT_MS 10000
#define SHUTDOWN_GRACE_MS 2000    /* for the RELEASE after a timeout */
#define RETRY_AFTER_FAIL_MS 1000
#define RELEASE_ERROR_MAX 200

/* "job=1 lease=4 epoch=2" on every lease event. */
#define LFMT "job=%" PRIu64 " lease=%" PRIu64 " epoch=%" PRIu64
#define LARGS(cl) (cl)->cur.job, (cl)->cur.lease, (cl)->cur.epoch

enum conn_state {
	CS_IDLE,
	CS_RESOLVING,
	CS_CONNECTING,
	CS_HELLO,
	CS_AUTH,
	CS_READY,
	CS_CLOSING,
	CS_STOPPED,
	CS_COUNT,
};

enum lease_state {
	LS_IDLE,
	LS_CLAIMING,
	LS_WAITING,
	LS_RUNNING,
	LS_RELEASING,
	LS_STOPPING,
	LS_RESULT,
	LS_EXITED,
	LS_COUNT,
};

static const char *const conn_names[CS_COUNT] = {
	"idle", "resolving", "connecting", "hello", "auth", "ready",
	"closing", "stopped",
};

static const char *const lease_names[LS_COUNT] = {
	"idle", "claiming", "waiting", "running", "releasing", "stopping",
	"result", "exited",
};

#define BIT(s) (1u << (s))

static const unsigned conn_next[CS_COUNT] = {
	[CS_IDLE] = BIT(CS_RESOLVING) | BIT(CS_STOPPED),
	[CS_RESOLVING] = BIT(CS_CONNECTING) | BIT(CS_IDLE) | BIT(CS_STOPPED),
	[CS_CONNECTING] = BIT(CS_HELLO) | BIT(CS_CLOSING),
	[CS_HELLO] = BIT(CS_AUTH) | BIT(CS_CLOSING),
	[CS_AUTH] = BIT(CS_READY) | BIT(CS_CLOSING),
	[CS_READY] = BIT(CS_CLOSING),
	[CS_CLOSING] = BIT(CS_CONNECTING) | BIT(CS_IDLE) | BIT(CS_STOPPED),
	[CS_STOPPED] = 0,
};

static const unsigned lease_next[LS_COUNT] = {
	[LS_IDLE] = BIT(LS_CLAIMING) | BIT(LS_WAITING) | BIT(LS_EXITED),
	[LS_CLAIMING] = BIT(LS_IDLE) | BIT(LS_WAITING) | BIT(LS_RUNNING) |
			BIT(LS_RELEASING) | BIT(LS_EXITED),
	[LS_WAITING] = BIT(LS_IDLE) | BIT(LS_EXITED),
	[LS_RUNNING] = BIT(LS_RELEASING) | BIT(LS_STOPPING) | BIT(LS_RESULT) |
		       BIT(LS_EXITED),
	[LS_RELEASING] = BIT(LS_IDLE) | BIT(LS_STOPPING) | BIT(LS_RESULT) |
			 BIT(LS_EXITED),
	[LS_STOPPING] = BIT(LS_IDLE) | BIT(LS_EXITED),
	[LS_RESULT] = BIT(LS_IDLE) | BIT(LS_EXITED),
	[LS_EXITED] = 0,
};

/* One TCP connection. Owned by the client while cl->conn points to it;
 * freed in its close callback (after all its write callbacks ran). */
struct conn {
	uv_tcp_t tcp;
	uv_connect_t connect_req;
	struct client *cl;
	uint8_t *buf;       /* accumulated input, at most FRAME_MAX bytes */
	size_t len, cap;
	size_t need;        /* bytes the next frame needs in total, if known */
	int closing;
};

struct write_req {
	uv_write_t req;
	struct conn *c;
	uint8_t *buf;       /* the encoded frame */
};

/* A checkpoint blob waiting for upload or for its ACK. */
struct upload {
	uint8_t *blob;
	size_t len;
	uint64_t units_done;
};

/* The lease currently held (valid in RUNNING, RELEASING, STOPPING,
 * RESULT). */
struct lease {
	uint64_t job, lease, epoch, units;
	char workload[32];
	uint64_t run_id;    /* non-zero while the runner works on it */
};

struct client {
	uv_loop_t *loop;
	const struct client_config *cfg;
	const struct glog *log;
	struct runner runner;

	/* Connection. */
	enum conn_state cs;
	struct conn *conn;
	uv_getaddrinfo_t gai;
	struct addrinfo *ai_list;   /* from the last resolution */
	struct addrinfo *ai_next;   /* next address to try */
	int try_next_addr;          /* set when a connect attempt failed */
	uv_timer_t reconnect_timer;
	uv_timer_t heartbeat_timer;
	uv_timer_t watchdog_timer;
	double backoff_s;
	uint64_t conn_start_ms;     /* uv_now when this attempt started */
	uint64_t wait_since_ms;     /* first write since the last frame in */
	uint64_t worker_id;
	uint64_t heartbeat_ms;

	/* Lease. */
	enum lease_state ls;
	struct lease cur;
	uv_timer_t retry_timer;     /* WAITING */
	uv_timer_t release_timer;   /* bound on the release checkpoint */
	struct upload ckpt_sent;    /* unacknowledged (invariant 3) */
	struct upload ckpt_next;    /* waiting to be sent */
	int rel_want_ckpt;          /* RELEASING: waiting for the checkpoint */
	int rel_sent;               /* RELEASING: RELEASE sent */
	struct runner_result result; /* RESULT: held until ACK (invariant 5) */
	int result_sent;
	int retry_after_fail;       /* pause before the next CLAIM */
	char rel_error[RELEASE_ERROR_MAX + 1]; /* why, or "" (invariant 8) */

	/* Fetch (invariant 7). */
	char fetch_hash[BLOB_HASH_HEX]; /* outstanding, or "" */
	int fetch_sent;             /* FETCH sent on this connection */
	double last_rate;
	uint64_t leases_done;

	/* Exit. */
	int exiting;                /* leave as soon as the lease is settled */
	int shutdown_requested;
	int shutdown_forced;
	int exit_code;
	int finished;
	uv_timer_t exit_timer;
};

static void pump(struct client *cl);
static void start_connect(struct client *cl);
static void conn_close(struct client *cl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void lease_idle(struct client *cl);
static void client_finish(struct client *cl, int code);
static void on_reconnect_timer(uv_timer_t *t);
static void on_heartbeat_timer(uv_timer_t *t);
static void on_watchdog_timer(uv_timer_t *t);
static void on_retry_timer(uv_timer_t *t);
static void on_release_timer(uv_timer_t *t);
static void on_exit_timer(uv_timer_t *t);

/* ---- state moves ---- */

static void conn_move(struct client *cl, enum conn_state to)
{
	assert(conn_next[cl->cs] & BIT(to));
	LOG_DEBUG(cl->log, "connection %s -> %s", conn_names[cl->cs],
		  conn_names[to]);
	cl->cs = to;
}

static void lease_move(struct client *cl, enum lease_state to)
{
	assert(lease_next[cl->ls] & BIT(to));
	LOG_DEBUG(cl->log, "lease %s -> %s " LFMT, lease_names[cl->ls],
		  lease_names[to], LARGS(cl));
	cl->ls = to;
}

static int lease_held(const struct client *cl)
{
	return cl->ls == LS_RUNNING || cl->ls == LS_RELEASING ||
	       cl->ls == LS_RESULT;
}

static void upload_clear(struct upload *u)
{
	free(u->blob);
	memset(u, 0, sizeof(*u));
}

static void result_clear(struct runner_result *res)
{
	free(res->blob);
	memset(res, 0, sizeof(*res));
}

/* ---- sending ---- */

static void on_written(uv_write_t *req, int status)
{
	struct write_req *w = req->data;
	struct conn *c = w->c;
	struct client *cl = c->cl;

	free(w->buf);
	free(w);
	if (c->closing || cl->conn != c)
		return;
	if (status < 0) {
		conn_close(cl, "write failed: %s", uv_strerror(status));
		return;
	}
	/* Every message the worker sends expects an answer: start the
	 * silence clock (watchdog) unless one is already running. */
	if (!cl->wait_since_ms)
		cl->wait_since_ms = uv_now(cl->loop);
}

/* Send one frame. json is stolen. Returns 0, or an error after closing the
 * connection (callers check cl->cs before sending more). */
static int send_frame(struct client *cl, enum proto_type type, json_t *json,
		      const void *bin, size_t bin_len)
{
	struct conn *c = cl->conn;
	struct write_req *w = NULL;
	uv_buf_t b;
	size_t len = 0;
	int rc;

	if (!c || c->closing) {
		json_decref(json);
		return GERR_STATE;
	}
	if (!json) {
		conn_close(cl, "out of memory building %s", proto_type_name(type));
		return GERR_NOMEM;
	}
	w = calloc(1, sizeof(*w));
	rc = w ? proto_frame_encode(type, json, bin, bin_len, &w->buf, &len)
	       : GERR_NOMEM;
	json_decref(json);
	if (rc < 0) {
		free(w);
		conn_close(cl, "cannot encode %s: %s", proto_type_name(type),
			   gerr_str(rc));
		return rc;
	}
	w->c = c;
	w->req.data = w;
	b = uv_buf_init((char *)w->buf, (unsigned)len);
	rc = uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, on_written);
	if (rc < 0) {
		free(w->buf);
		free(w);
		conn_close(cl, "write failed: %s", uv_strerror(rc));
		return GERR_IO;
	}
	LOG_DEBUG(cl->log, "sent %s bytes=%zu", proto_type_name(type), len);
	return 0;
}

static void send_heartbeat(struct client *cl)
{
	send_frame(cl, PROTO_HEARTBEAT,
		   json_pack("{s:I, s:I, s:I}", "lease", (json_int_t)cl->cur.lease,
			     "epoch", (json_int_t)cl->cur.epoch, "units_done",
			     (json_int_t)runner_units_done(&cl->runner)),
		   NULL, 0);
}

/* Send whatever the lease state calls for (invariant 2). Safe to call at
 * any time; does nothing while not connected. */
static void pump(struct client *cl)
{
	if (cl->finished || cl->cs != CS_READY)
		return;
	/* Invariant 7: the run blocks until the blob comes. */
	if (cl->fetch_hash[0] && !cl->fetch_sent && cl->cur.run_id &&
	    (cl->ls == LS_RUNNING || (cl->ls == LS_RELEASING && !cl->rel_sent))) {
		cl->fetch_sent = 1;
		LOG_DEBUG(cl->log, "fetch request hash=%.16s " LFMT,
			  cl->fetch_hash, LARGS(cl));
		if (send_frame(cl, PROTO_FETCH,
			       json_pack("{s:s}", "hash", cl->fetch_hash), NULL,
			       0) < 0)
			return;
	}
	switch (cl->ls) {
	case LS_IDLE:
		if (cl->exiting)
			return;
		lease_move(cl, LS_CLAIMING);
		LOG_DEBUG(cl->log, "claim rate=%.3g", cl->last_rate);
		send_frame(cl, PROTO_CLAIM,
			   json_pack("{s:f}", "rate", cl->last_rate), NULL, 0);
		return;
	case LS_RUNNING:
	case LS_RELEASING:
		if (!cl->ckpt_sent.blob && cl->ckpt_next.blob) {
			cl->ckpt_sent = cl->ckpt_next;
			memset(&cl->ckpt_next, 0, sizeof(cl->ckpt_next));
			LOG_INFO(cl->log, "checkpoint upload " LFMT
				 " units_done=%" PRIu64 " bytes=%zu", LARGS(cl),
				 cl->ckpt_sent.units_done, cl->ckpt_sent.len);
			if (send_frame(cl, PROTO_CHECKPOINT,
				       json_pack("{s:I, s:I, s:I}", "lease",
						 (json_int_t)cl->cur.lease, "epoch",
						 (json_int_t)cl->cur.epoch,
						 "units_done",
						 (json_int_t)cl->ckpt_sent.units_done),
				       cl->ckpt_sent.blob, cl->ckpt_sent.len) < 0)
				return;
		}
		if (cl->ls == LS_RELEASING && !cl->rel_want_ckpt &&
		    !cl->rel_sent && !cl->ckpt_sent.blob &&
		    !cl->ckpt_next.blob) {
			json_t *msg = json_pack("{s:I, s:I}", "lease",
						(json_int_t)cl->cur.lease,
						"epoch",
						(json_int_t)cl->cur.epoch);

			cl->rel_sent = 1;
			if (msg && cl->rel_error[0] &&
			    json_object_set_new(msg, "error",
						json_string(cl->rel_error)) < 0) {
				json_decref(msg);
				msg = NULL;
			}
			LOG_INFO(cl->log, "lease release " LFMT "%s%s",
				 LARGS(cl), cl->rel_error[0] ? " error=" : "",
				 cl->rel_error);
			send_frame(cl, PROTO_RELEASE, msg, NULL, 0);
		}
		return;
	case LS_RESULT:
		if (cl->result_sent)
			return;
		cl->result_sent = 1;
		LOG_INFO(cl->log, "result upload " LFMT " units_done=%" PRIu64
			 " seconds=%.3f bytes=%zu", LARGS(cl),
			 cl->result.units_done, cl->result.seconds,
			 cl->result.blob_len);
		send_frame(cl, PROTO_RESULT,
			   json_pack("{s:I, s:I, s:I, s:f}", "lease",
				     (json_int_t)cl->cur.lease, "epoch",
				     (json_int_t)cl->cur.epoch, "units_done",
				     (json_int_t)cl->result.units_done, "seconds",
				     cl->result.seconds),
			   cl->result.blob, cl->result.blob_len);
		return;
	default:
		return;
	}
}

/* ---- the lease ---- */

/* The current lease is over (result acknowledged, released, or lost).
 * Wait for the runner if it still works on it (invariant 6). */
static void lease_end(struct client *cl)
{
	upload_clear(&cl->ckpt_sent);
	upload_clear(&cl->ckpt_next);
	result_clear(&cl->result);
	cl->result_sent = 0;
	cl->rel_want_ckpt = 0;
	cl->rel_sent = 0;
	cl->rel_error[0] = '\0';
	uv_timer_stop(&cl->release_timer);
	if (cl->cur.run_id) {
		runner_stop(&cl->runner);
		if (cl->ls != LS_STOPPING)
			lease_move(cl, LS_STOPPING);
		return;
	}
	lease_move(cl, LS_IDLE);
	memset(&cl->cur, 0, sizeof(cl->cur));
	lease_idle(cl);
}

/* No lease: exit if asked to, pause after a failure, or claim. */
static void lease_idle(struct client *cl)
{
	assert(cl->ls == LS_IDLE);
	if (cl->exiting) {
		client_finish(cl, cl->exit_code);
		return;
	}
	if (cl->cfg->max_leases && cl->leases_done >= cl->cfg->max_leases) {
		LOG_INFO(cl->log, "finished %" PRIu64 " leases (--max-leases), "
			 "exiting", cl->leases_done);
		client_finish(cl, 0);
		return;
	}
	if (cl->retry_after_fail) {
		cl->retry_after_fail = 0;
		lease_move(cl, LS_WAITING);
		/* Do not spin on a lease that fails at once. */
		uv_timer_start(&cl->retry_timer,
			       on_retry_timer,
			       RETRY_AFTER_FAIL_MS, 0);
		return;
	}
	pump(cl);
}

/* Keep why the lease is given back (invariant 8): printable ASCII only, so
 * the JSON string is always valid, cut to RELEASE_ERROR_MAX characters. */
static void set_release_error(struct client *cl, const char *why)
{
	size_t n = 0;

	for (; why && *why && n < RELEASE_ERROR_MAX; why++) {
		unsigned char ch = (unsigned char)*why;

		cl->rel_error[n++] = ch >= 0x20 && ch < 0x7f ? (char)ch
			: ch == '\n' || ch == '\t' || ch == '\r' ? ' ' : '?';
	}
	cl->rel_error[n] = '\0';
}

/* gpud took the lease away (HB_ACK stop, ERROR for this lease). */
static void lease_lost(struct client *cl, const char *why)
{
	LOG_WARN(cl->log, "lease lost " LFMT ": %s", LARGS(cl), why);
	lease_end(cl);
}

/* Give the lease back: with a fresh checkpoint first when want_ckpt and the
 * run is still going (pause, shutdown), at once otherwise (run error). */
static void start_release(struct client *cl, int want_ckpt)
{
	lease_move(cl, LS_RELEASING);
	cl->rel_sent = 0;
	cl->rel_want_ckpt = 0;
	if (want_ckpt && cl->cur.run_id) {
		cl->rel_want_ckpt = 1;
		runner_request_checkpoint(&cl->runner);
		uv_timer_start(&cl->release_timer,
			       on_release_timer,
			       RELEASE_CKPT_WAIT_MS, 0);
	} else if (cl->cur.run_id) {
		runner_stop(&cl->runner);
	}
	pump(cl);
}

static void on_release_timer(uv_timer_t *t)
{
	struct client *cl = t->data;

	if (cl->ls != LS_RELEASING || !cl->rel_want_ckpt)
		return;
	LOG_WARN(cl->log, "no checkpoint within %d s, releasing without it "
		 LFMT, RELEASE_CKPT_WAIT_MS / 1000, LARGS(cl));
	cl->rel_want_ckpt = 0;
	runner_stop(&cl->runner);
	pump(cl);
}

static void on_retry_timer(uv_timer_t *t)
{
	struct client *cl = t->data;

	if (cl->ls != LS_WAITING)
		return;
	lease_move(cl, LS_IDLE);
	lease_idle(cl);
}

static void on_checkpoint_made(struct client *cl, struct runner_ckpt *ck)
{
	int usable = ck->run_id == cl->cur.run_id &&
		     (cl->ls == LS_RUNNING ||
		      (cl->ls == LS_RELEASING && !cl->rel_sent));

	if (!usable) {
		free(ck->blob);
		return;
	}
	/* Invariant 3: only the newest waiting checkpoint is kept. */
	upload_clear(&cl->ckpt_next);
	cl->ckpt_next = (struct upload){ .blob = ck->blob, .len = ck->blob_len,
					 .units_done = ck->units_done };
	if (cl->ls == LS_RELEASING && cl->rel_want_ckpt && ck->requested) {
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

	/* The run is over: nobody waits for a blob any more (invariant 7). */
	cl->fetch_hash[0] = '\0';
	cl->fetch_sent = 0;
	if (res->run_id != cl->cur.run_id) {
		result_clear(res);
		return;
	}
	cl->cur.run_id = 0;

	if (cl->ls == LS_STOPPING) {
		LOG_DEBUG(cl->log, "run output discarded " LFMT " rc=%s",
			  LARGS(cl), gerr_str(rc));
		result_clear(res);
		lease_end(cl);
		return;
	}
	assert(cl->ls == LS_RUNNING || cl->ls == LS_RELEASING);

	if (rc == 0 && !(cl->ls == LS_RELEASING && cl->rel_sent)) {
		/* A finished result beats a release: send it instead. */
		uv_timer_stop(&cl->release_timer);
		upload_clear(&cl->ckpt_sent);
		upload_clear(&cl->ckpt_next);
		cl->rel_want_ckpt = 0;
		cl->result = *res;
		cl->result_sent = 0;
		if (res->seconds > 0)
			cl->last_rate = (double)res->units_run / res->seconds;
		LOG_INFO(cl->log, "run done " LFMT " units=%" PRIu64
			 " seconds=%.3f rate=%.4g/s", LARGS(cl), res->units_done,
			 res->seconds, cl->last_rate);
		lease_move(cl, LS_RESULT);
		return;
	}
	if (rc == 0 || (rc == GERR_CANCELLED && cl->ls == LS_RELEASING)) {
		/* Stopped (or finished too late) for the release: expected. */
		result_clear(res);
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
		if (!uv_is_active((uv_handle_t *)&cl->exit_timer))
			uv_timer_start(&cl->exit_timer,
				       on_exit_timer,
				       SHUTDOWN_WAIT_MS, 0);
	} else {
		cl->retry_after_fail = 1;
	}
	/* Invariant 8; too late when RELEASE already went. */
	if (!cl->rel_sent)
		set_release_error(cl, res->err);
	result_clear(res);
	if (cl->ls == LS_RUNNING) {
		start_release(cl, 0);
	} else {
		cl->rel_want_ckpt = 0;
		uv_timer_stop(&cl->release_timer);
	}
}

/* The runner has output (loop thread, via its uv_async_t). */
static void on_runner_wake(void *opaque)
{
	struct client *cl = opaque;
	struct runner_ckpt ck;
	struct runner_result res;

	if (cl->finished)
		return;
	if (runner_take_fetch(&cl->runner, cl->fetch_hash))
		cl->fetch_sent = 0; /* a new request: pump sends it */
	if (runner_take_checkpoint(&cl->runner, &ck))
		on_checkpoint_made(cl, &ck);
	if (runner_take_result(&cl->runner, &res))
		on_run_finished(cl, &res);
	pump(cl);
}

/* ---- incoming messages ---- */

static int json_u64_opt(const json_t *obj, const char *key, uint64_t *ret)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return 0;
	*ret = (uint64_t)json_integer_value(v);
	return 1;
}

static const struct client_workload *find_workload(const struct client *cl,
						   const char *name)
{
	for (size_t i = 0; i < cl->cfg->n_workloads; i++)
		if (strcmp(cl->cfg->workloads[i].wl->name, name) == 0)
			return &cl->cfg->workloads[i];
	return NULL;
}

static int on_challenge(struct client *cl, const json_t *msg)
{
	const char *hex = NULL;
	uint8_t nonce[AUTH_NONCE_LEN], mac[AUTH_MAC_LEN];
	char mac_hex[2 * AUTH_MAC_LEN + 1];

	if (proto_get_str(msg, "nonce", 2 * AUTH_NONCE_LEN, &hex) < 0 ||
	    auth_unhex(hex, nonce, sizeof(nonce)) < 0)
		return GERR_PROTO;
	auth_proof(cl->cfg->token->key, nonce, cl->cfg->token->name, mac);
	auth_hex(mac, sizeof(mac), mac_hex);
	if (send_frame(cl, PROTO_AUTH, json_pack("{s:s}", "mac", mac_hex),
		       NULL, 0) == 0)
		conn_move(cl, CS_AUTH);
	return 0;
}

static int on_welcome(struct client *cl, const json_t *msg)
{
	const json_t *hb = json_object_get(msg, "heartbeat_s");
	double hb_s;

	if (proto_get_u64(msg, "worker_id", &cl->worker_id) < 0 ||
	    !json_is_number(hb))
		return GERR_PROTO;
	/* Bound what gpud asks for: a heartbeat every 50 ms .. 1 h. */
	hb_s = json_number_value(hb);
	if (!(hb_s >= 0.05))
		hb_s = 0.05;
	if (hb_s > 3600)
		hb_s = 3600;
	cl->heartbeat_ms = (uint64_t)(hb_s * 1000);
	conn_move(cl, CS_READY);
	LOG_INFO(cl->log, "connected to %s:%s worker=%s worker_id=%" PRIu64
		 " heartbeat_s=%.3g", cl->cfg->host, cl->cfg->port,
		 cl->cfg->token->name, cl->worker_id, hb_s);
	uv_timer_start(&cl->heartbeat_timer,
		       on_heartbeat_timer,
		       cl->heartbeat_ms, cl->heartbeat_ms);

	/* Invariant 1: a lease that ran on while disconnected is heartbeated
	 * at once; gpud answers "stop" if it was re-issued meanwhile. */
	if (cl->ls == LS_RUNNING || (cl->ls == LS_RELEASING && !cl->rel_sent))
		send_heartbeat(cl);
	if (cl->ls == LS_IDLE && cl->exiting)
		client_finish(cl, cl->exit_code);
	else
		pump(cl);
	return 0;
}

static int on_lease(struct client *cl, const struct proto_frame *f)
{
	const json_t *m = f->json;
	const json_t *params = json_object_get(m, "params");
	const json_t *spec = json_object_get(m, "spec");
	const json_t *deadline = json_object_get(m, "deadline_s");
	const char *workload = NULL;
	const struct client_workload *cw;
	struct lease l = { 0 };
	struct runner_job job = { 0 };
	uint64_t units_done = 0;
	int rc;

	if (cl->ls != LS_CLAIMING)
		return GERR_PROTO;
	if (proto_get_u64(m, "lease", &l.lease) < 0 ||
	    proto_get_u64(m, "epoch", &l.epoch) < 0 ||
	    proto_get_u64(m, "job", &l.job) < 0 ||
	    proto_get_u64(m, "units", &l.units) < 0 ||
	    proto_get_str(m, "workload", sizeof(l.workload) - 1, &workload) < 0 ||
	    !json_is_object(params) || !json_is_object(spec))
		return GERR_PROTO;
	json_u64_opt(m, "units_done", &units_done);
	snprintf(l.workload, sizeof(l.workload), "%s", workload);
	cl->cur = l;
	cl->rel_error[0] = '\0';
	lease_move(cl, LS_RUNNING);
	LOG_INFO(cl->log, "lease granted " LFMT " workload=%s units=%" PRIu64
		 " units_done=%" PRIu64 " deadline_s=%.3g checkpoint_bytes=%zu",
		 LARGS(cl), l.workload, l.units, units_done,
		 json_is_number(deadline) ? json_number_value(deadline) : 0.0,
		 f->bin_len);

	cw = find_workload(cl, l.workload);
	if (cl->exiting || !cw) {
		/* Give it straight back: shutting down, or a lease for a
		 * workload this worker never offered. */
		if (!cw) {
			char why[96];

			LOG_ERROR(cl->log, "gpud leased workload '%s' which this "
				  "worker does not run " LFMT, l.workload,
				  LARGS(cl));
			snprintf(why, sizeof(why), "worker does not run workload "
				 "'%s'", l.workload);
			set_release_error(cl, why);
			cl->retry_after_fail = 1;
		}
		start_release(cl, 0);
		return 0;
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
	job.params = json_deep_copy(params);
	job.spec = json_deep_copy(spec);
	job.job = l.job;
	job.lease = l.lease;
	job.epoch = l.epoch;
	job.units = l.units;
	job.units_done = units_done;
	rc = job.params && job.spec ? 0 : GERR_NOMEM;
	if (rc == 0 && f->bin_len) {
		/* f->bin points into the read buffer: copy it. */
		job.ckpt_blob = malloc(f->bin_len);
		if (!job.ckpt_blob)
			rc = GERR_NOMEM;
		else
			memcpy(job.ckpt_blob, f->bin, f->bin_len);
		job.ckpt_blob_len = f->bin_len;
	}
	if (rc == 0)
		rc = runner_start(&cl->runner, &job, &cl->cur.run_id);
	if (rc < 0) {
		char why[96];

		LOG_ERROR(cl->log, "cannot start the run " LFMT ": %s",
			  LARGS(cl), gerr_str(rc));
		snprintf(why, sizeof(why), "worker cannot start the run: %s",
			 gerr_str(rc));
		set_release_error(cl, why);
		json_decref(job.params);
		json_decref(job.spec);
		free(job.ckpt_blob);
		cl->retry_after_fail = 1;
		start_release(cl, 0);
	}
	return 0;
}

static int on_nolease(struct client *cl, const json_t *msg)
{
	const json_t *retry = json_object_get(msg, "retry_s");
	const char *reason = json_string_value(json_object_get(msg, "reason"));
	double retry_s = json_is_number(retry) ? json_number_value(retry) : 1;

	if (cl->ls != LS_CLAIMING)
		return GERR_PROTO;
	if (!reason)
		reason = "";
	/* Bound what gpud asks for. */
	if (!(retry_s >= 0.2))
		retry_s = 0.2;
	if (retry_s > 60)
		retry_s = 60;
	lease_move(cl, LS_WAITING);
	if (cl->exiting) {
		client_finish(cl, cl->exit_code);
		return 0;
	}
	if (cl->cfg->exit_when_idle && strstr(reason, "no jobs")) {
		LOG_INFO(cl->log, "no lease (%s), exiting (--exit-when-idle)",
			 reason);
		client_finish(cl, 0);
		return 0;
	}
	LOG_DEBUG(cl->log, "no lease (%s), retry in %.1f s", reason, retry_s);
	uv_timer_start(&cl->retry_timer, on_retry_timer,
		       (uint64_t)(retry_s * 1000), 0);
	return 0;
}

/* Does (lease, epoch) in msg name the lease held? */
static int is_current(const struct client *cl, const json_t *msg)
{
	uint64_t lease, epoch;

	return lease_held(cl) && proto_get_u64(msg, "lease", &lease) == 0 &&
	       proto_get_u64(msg, "epoch", &epoch) == 0 &&
	       lease == cl->cur.lease && epoch == cl->cur.epoch;
}

static int on_hb_ack(struct client *cl, const json_t *msg)
{
	const char *action = NULL;

	if (proto_get_str(msg, "action", 16, &action) < 0)
		return GERR_PROTO;
	if (strcmp(action, "continue") != 0 && strcmp(action, "stop") != 0 &&
	    strcmp(action, "release") != 0)
		return GERR_PROTO;
	if (!is_current(cl, msg) || cl->ls == LS_RESULT) {
		LOG_DEBUG(cl->log, "late heartbeat answer ignored");
		return 0;
	}
	if (strcmp(action, "stop") == 0) {
		lease_lost(cl, "gpud says stop (lease re-issued or job cancelled)");
	} else if (strcmp(action, "release") == 0 && cl->ls == LS_RUNNING) {
		LOG_INFO(cl->log, "gpud asks for the lease back (job paused) "
			 LFMT, LARGS(cl));
		start_release(cl, 1);
	}
	return 0;
}

static int on_ack(struct client *cl, const json_t *msg)
{
	const char *what = NULL;

	if (proto_get_str(msg, "what", 16, &what) < 0)
		return GERR_PROTO;
	if (!is_current(cl, msg)) {
		LOG_DEBUG(cl->log, "late ACK %s ignored", what);
		return 0;
	}
	if (strcmp(what, "checkpoint") == 0) {
		if (cl->ckpt_sent.blob) {
			LOG_INFO(cl->log, "checkpoint stored " LFMT
				 " units_done=%" PRIu64, LARGS(cl),
				 cl->ckpt_sent.units_done);
			upload_clear(&cl->ckpt_sent);
		}
	} else if (strcmp(what, "result") == 0) {
		if (cl->ls == LS_RESULT && cl->result_sent) {
			LOG_INFO(cl->log, "result stored " LFMT, LARGS(cl));
			cl->leases_done++;
			lease_end(cl);
		}
	} else if (strcmp(what, "release") == 0) {
		if (cl->ls == LS_RELEASING && cl->rel_sent) {
			LOG_INFO(cl->log, "lease released " LFMT, LARGS(cl));
			lease_end(cl);
		}
	} else {
		return GERR_PROTO;
	}
	return 0;
}

/* Hand gpud's answer to the run's fetch over (invariant 7). bin is copied:
 * it points into the read buffer. Hashing and inflating happen on the
 * runner thread. */
static void fetch_answered(struct client *cl, int rc, const uint8_t *bin,
			   size_t len)
{
	uint8_t *copy = NULL;

	if (rc == 0) {
		copy = malloc(len ? len : 1);
		if (copy)
			memcpy(copy, bin, len);
		else
			rc = GERR_NOMEM;
	}
	if (!runner_fetch_done(&cl->runner, cl->fetch_hash, rc, copy, len))
		LOG_DEBUG(cl->log, "blob answer for a fetch no run waits for "
			  "hash=%.16s", cl->fetch_hash);
	cl->fetch_hash[0] = '\0';
	cl->fetch_sent = 0;
}

static int on_blob(struct client *cl, const struct proto_frame *f)
{
	const char *hash = NULL;

	if (proto_get_str(f->json, "hash", BLOB_HASH_HEX - 1, &hash) < 0)
		return GERR_PROTO;
	if (!cl->fetch_hash[0] || strcmp(hash, cl->fetch_hash) != 0) {
		/* Asked for by a run that has since been stopped. */
		LOG_DEBUG(cl->log, "late BLOB ignored hash=%.16s bytes=%zu",
			  hash, f->bin_len);
		return 0;
	}
	LOG_DEBUG(cl->log, "blob received hash=%.16s bytes=%zu", hash,
		  f->bin_len);
	fetch_answered(cl, 0, f->bin, f->bin_len);
	return 0;
}

static int on_error_frame(struct client *cl, const json_t *msg)
{
	const json_t *code = json_object_get(msg, "code");
	const char *text = json_string_value(json_object_get(msg, "message"));
	long long c = json_is_integer(code) ? (long long)json_integer_value(code)
					    : 0;
	uint64_t lease, epoch;

	if (!text)
		text = "(no message)";
	if (json_is_string(json_object_get(msg, "hash"))) {
		/* The answer to a FETCH: gpud has no such blob (or cannot read
		 * it). Not about the connection, which stays. */
		const char *hash = json_string_value(json_object_get(msg, "hash"));

		if (!cl->fetch_hash[0] || strcmp(hash, cl->fetch_hash) != 0) {
			LOG_DEBUG(cl->log, "late fetch error ignored hash=%.16s: "
				  "%s", hash, text);
			return 0;
		}
		LOG_WARN(cl->log, "gpud cannot serve blob hash=%.16s " LFMT
			 ": %s (%lld)", hash, LARGS(cl), text, c);
		/* Keep gpud's code when it is one of ours. */
		fetch_answered(cl, c < 0 && c >= GERR_UNSUPPORTED ? (int)c
							: GERR_NOTFOUND,
			       NULL, 0);
		return 0;
	}
	if (proto_get_u64(msg, "lease", &lease) == 0 &&
	    proto_get_u64(msg, "epoch", &epoch) == 0) {
		char why[320];

		if (!is_current(cl, msg)) {
			LOG_INFO(cl->log, "gpud error about an old lease lease=%"
				 PRIu64 " epoch=%" PRIu64 ": %s", lease, epoch,
				 text);
			return 0;
		}
		if (c == GERR_NOSPACE || c == GERR_PERM || c == GERR_IO ||
		    c == GERR_DB) {
			/* gpud could not store it (disk full, permissions):
			 * the work is good. Reconnect with backoff, which
			 * resends whatever was not acknowledged. */
			conn_close(cl, "gpud cannot store our upload (%lld: %s); "
				   "will send it again", c, text);
			return 0;
		}
		/* Stale epoch, cancelled job, rejected upload: the lease is
		 * not ours any more, and a held result is dropped. */
		snprintf(why, sizeof(why), "gpud error %lld: %.256s", c, text);
		lease_lost(cl, why);
		return 0;
	}
	if (c == GERR_AUTH)
		LOG_ERROR(cl->log, "gpud refused worker '%s': %s (check "
			  "--token-file)", cl->cfg->token->name, text);
	conn_close(cl, "gpud error %lld: %s", c, text);
	return 0;
}

static void handle_frame(struct client *cl, const struct proto_frame *f)
{
	int rc = GERR_PROTO;

	LOG_DEBUG(cl->log, "received %s bin=%zu", proto_type_name(f->type),
		  f->bin_len);
	cl->wait_since_ms = 0;
	if (f->type == PROTO_ERROR) {
		on_error_frame(cl, f->json);
		return;
	}
	switch (cl->cs) {
	case CS_HELLO:
		if (f->type == PROTO_CHALLENGE)
			rc = on_challenge(cl, f->json);
		break;
	case CS_AUTH:
		if (f->type == PROTO_WELCOME)
			rc = on_welcome(cl, f->json);
		break;
	case CS_READY:
		/* A useful answer: this connection works, so the next
		 * reconnect starts from the shortest delay again. */
		cl->backoff_s = BACKOFF_MIN_S;
		switch (f->type) {
		case PROTO_LEASE: rc = on_lease(cl, f); break;
		case PROTO_NOLEASE: rc = on_nolease(cl, f->json); break;
		case PROTO_HB_ACK: rc = on_hb_ack(cl, f->json); break;
		case PROTO_ACK: rc = on_ack(cl, f->json); break;
		case PROTO_BLOB: rc = on_blob(cl, f); break;
		default: break;
		}
		break;
	default:
		return;
	}
	if (rc < 0) {
		conn_close(cl, "protocol violation: unexpected or malformed %s "
			   "in state %s", proto_type_name(f->type),
			   conn_names[cl->cs]);
		return;
	}
	/* An answer may unblock the next send (invariants 3, 4). */
	pump(cl);
}

/* ---- reading ---- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *ret)
{
	struct conn *c = h->data;
	size_t want = c->len + READ_CHUNK;

	(void)suggested;
	if (c->need > want)
		want = c->need;
	if (want > FRAME_MAX)
		want = FRAME_MAX;
	if (c->cap < want) {
		size_t ncap = c->cap ? c->cap : READ_CHUNK;
		uint8_t *p;

		while (ncap < want)
			ncap *= 2;
		if (ncap > FRAME_MAX)
			ncap = FRAME_MAX;
		p = realloc(c->buf, ncap);
		if (!p) {
			*ret = uv_buf_init(NULL, 0); /* read_cb gets UV_ENOBUFS */
			return;
		}
		c->buf = p;
		c->cap = ncap;
	}
	*ret = uv_buf_init((char *)c->buf + c->len, (unsigned)(c->cap - c->len));
}

static void parse_frames(struct client *cl, struct conn *c)
{
	size_t off = 0;

	while (!c->closing) {
		struct proto_frame f;
		size_t used = 0, need = 0;
		char err[256] = "";
		int rc = proto_frame_parse(c->buf + off, c->len - off, &f, &used,
					   &need, err, sizeof(err));
		if (rc == GERR_AGAIN) {
			c->need = need;
			break;
		}
		if (rc < 0) {
			conn_close(cl, "bad frame from gpud: %s",
				   err[0] ? err : gerr_str(rc));
			return;
		}
		c->need = 0;
		handle_frame(cl, &f);
		proto_frame_clear(&f);
		off += used;
	}
	if (c->closing)
		return;
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
	/* Give back the memory of a big frame (a LEASE with its checkpoint). */
	if (c->len == 0 && c->cap > SHRINK_ABOVE) {
		free(c->buf);
		c->buf = NULL;
		c->cap = 0;
	}
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct conn *c = s->data;
	struct client *cl = c->cl;

	(void)buf;
	if (c->closing || nread == 0)
		return;
	if (nread < 0) {
		conn_close(cl, "%s", nread == UV_EOF ? "gpud closed the connection"
						       : uv_strerror((int)nread));
		return;
	}
	c->len += (size_t)nread;
	parse_frames(cl, c);
}

/* ---- connecting ---- */

static void schedule_reconnect(struct client *cl)
{
	uint32_t r;
	double delay;

	auth_random(&r, sizeof(r));
	/* Jitter (x0.75..1.25) keeps many workers from reconnecting in
	 * lockstep after gpud restarts. */
	delay = cl->backoff_s * (0.75 + 0.5 * ((double)r / 4294967296.0));
	if (delay > BACKOFF_MAX_S)
		delay = BACKOFF_MAX_S;
	cl->backoff_s *= 2;
	if (cl->backoff_s > BACKOFF_MAX_S)
		cl->backoff_s = BACKOFF_MAX_S;
	LOG_INFO(cl->log, "reconnecting in %.1f s", delay);
	uv_timer_start(&cl->reconnect_timer,
		       on_reconnect_timer,
		       (uint64_t)(delay * 1000), 0);
}

static void free_addresses(struct client *cl)
{
	if (cl->ai_list)
		uv_freeaddrinfo(cl->ai_list);
	cl->ai_list = cl->ai_next = NULL;
}

/* The connection is gone: what was sent on it must be sent again. */
static void on_disconnect(struct client *cl)
{
	uv_timer_stop(&cl->heartbeat_timer);
	cl->wait_since_ms = 0;
	if (cl->ls == LS_CLAIMING)
		lease_move(cl, LS_IDLE); /* a LEASE in flight just expires */
	if (cl->ckpt_sent.blob) {
		if (cl->ckpt_next.blob)
			upload_clear(&cl->ckpt_sent);
		else
			cl->ckpt_next = cl->ckpt_sent;
		memset(&cl->ckpt_sent, 0, sizeof(cl->ckpt_sent));
	}
	cl->rel_sent = 0;
	cl->result_sent = 0;
	cl->fetch_sent = 0; /* invariant 7: asked again after WELCOME */
}

static void try_connect(struct client *cl);

static void on_conn_closed(uv_handle_t *h)
{
	struct conn *c = h->data;
	struct client *cl = c->cl;
	int next = cl->try_next_addr;

	free(c->buf);
	free(c);
	cl->conn = NULL;
	cl->try_next_addr = 0;
	if (cl->finished) {
		free_addresses(cl);
		conn_move(cl, CS_STOPPED);
		return;
	}
	if (next && cl->ai_next) {
		try_connect(cl);
		return;
	}
	free_addresses(cl);
	uv_timer_stop(&cl->watchdog_timer);
	conn_move(cl, CS_IDLE);
	if (cl->ls == LS_IDLE && cl->exiting) {
		client_finish(cl, cl->exit_code);
		return;
	}
	schedule_reconnect(cl);
}

/* Close the connection with a logged reason; reconnects unless finished.
 * Idempotent. */
static void conn_close(struct client *cl, const char *fmt, ...)
{
	struct conn *c = cl->conn;
	char why[512];
	va_list ap;

	if (!c || c->closing)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (cl->cs == CS_CONNECTING)
		LOG_DEBUG(cl->log, "connect attempt failed: %s", why);
	else if (!cl->finished)
		LOG_WARN(cl->log, "disconnected from %s:%s: %s", cl->cfg->host,
			 cl->cfg->port, why);
	c->closing = 1;
	if (cl->cs == CS_READY)
		on_disconnect(cl);
	conn_move(cl, CS_CLOSING);
	uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

static void on_connected(uv_connect_t *req, int status)
{
	struct conn *c = req->data;
	struct client *cl = c->cl;
	json_t *wls;

	if (status == UV_ECANCELED || c->closing)
		return;
	if (status < 0) {
		cl->try_next_addr = 1;
		LOG_WARN(cl->log, "cannot connect to %s:%s: %s", cl->cfg->host,
			 cl->cfg->port, uv_strerror(status));
		conn_close(cl, "%s", uv_strerror(status));
		return;
	}
	free_addresses(cl);
	uv_tcp_nodelay(&c->tcp, 1);
	/* Notice a vanished gpud host even when nothing is being sent. */
	uv_tcp_keepalive(&c->tcp, 1, 30);
	status = uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
	if (status < 0) {
		conn_close(cl, "read failed: %s", uv_strerror(status));
		return;
	}
	conn_move(cl, CS_HELLO);

	wls = json_array();
	for (size_t i = 0; wls && i < cl->cfg->n_workloads; i++)
		json_array_append_new(wls,
				      json_string(cl->cfg->workloads[i].wl->name));
	send_frame(cl, PROTO_HELLO,
		   wls ? json_pack("{s:i, s:s, s:s, s:o, s:b, s:i}", "proto",
				   PROTO_VERSION, "worker", cl->cfg->token->name,
				   "device", cl->cfg->device_name, "workloads",
				   wls, "cuda",
				   cl->cfg->device_kind == WL_DEVICE_CUDA,
				   "threads", cl->cfg->threads)
		       : NULL,
		   NULL, 0);
}

/* Try the next resolved address (IPv6 and IPv4 of "localhost", say). */
static void try_connect(struct client *cl)
{
	struct addrinfo *ai = cl->ai_next;
	struct conn *c;
	int rc;

	if (!ai) {
		free_addresses(cl);
		conn_move(cl, CS_IDLE);
		schedule_reconnect(cl);
		return;
	}
	cl->ai_next = ai->ai_next;
	c = calloc(1, sizeof(*c));
	if (!c || uv_tcp_init(cl->loop, &c->tcp) < 0) {
		free(c);
		LOG_ERROR(cl->log, "out of memory for a connection");
		free_addresses(cl);
		conn_move(cl, CS_IDLE);
		schedule_reconnect(cl);
		return;
	}
	c->cl = cl;
	c->tcp.data = c;
	c->connect_req.data = c;
	cl->conn = c;
	cl->conn_start_ms = uv_now(cl->loop);
	conn_move(cl, CS_CONNECTING);
	if (!uv_is_active((uv_handle_t *)&cl->watchdog_timer))
		uv_timer_start(&cl->watchdog_timer,
			       on_watchdog_timer,
			       WATCHDOG_MS, WATCHDOG_MS);
	rc = uv_tcp_connect(&c->connect_req, &c->tcp, ai->ai_addr,
			    on_connected);
	if (rc < 0) {
		cl->try_next_addr = 1;
		conn_close(cl, "%s", uv_strerror(rc));
	}
}

static void on_resolved(uv_getaddrinfo_t *req, int status,
			struct addrinfo *res)
{
	struct client *cl = req->data;

	if (cl->finished) {
		if (res)
			uv_freeaddrinfo(res);
		conn_move(cl, CS_STOPPED);
		return;
	}
	if (status < 0) {
		LOG_WARN(cl->log, "cannot resolve %s: %s", cl->cfg->host,
			 uv_strerror(status));
		conn_move(cl, CS_IDLE);
		schedule_reconnect(cl);
		return;
	}
	cl->ai_list = cl->ai_next = res;
	try_connect(cl);
}

static void start_connect(struct client *cl)
{
	struct addrinfo hints = { 0 };
	int rc;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	conn_move(cl, CS_RESOLVING);
	cl->gai.data = cl;
	rc = uv_getaddrinfo(cl->loop, &cl->gai, on_resolved, cl->cfg->host,
			    cl->cfg->port, &hints);
	if (rc < 0) {
		LOG_WARN(cl->log, "cannot resolve %s: %s", cl->cfg->host,
			 uv_strerror(rc));
		conn_move(cl, CS_IDLE);
		schedule_reconnect(cl);
	}
}

/* ---- timers ---- */

static void on_reconnect_timer(uv_timer_t *t)
{
	struct client *cl = t->data;

	if (cl->cs == CS_IDLE && !cl->finished)
		start_connect(cl);
}

static void on_heartbeat_timer(uv_timer_t *t)
{
	struct client *cl = t->data;

	if (cl->cs != CS_READY)
		return;
	if (cl->ls == LS_RUNNING || (cl->ls == LS_RELEASING && !cl->rel_sent))
		send_heartbeat(cl);
}

static void on_watchdog_timer(uv_timer_t *t)
{
	struct client *cl = t->data;
	uint64_t now = uv_now(cl->loop);
	uint64_t silence = 3 * cl->heartbeat_ms;

	if (silence < SILENCE_MIN_MS)
		silence = SILENCE_MIN_MS;
	switch (cl->cs) {
	case CS_CONNECTING:
	case CS_HELLO:
	case CS_AUTH:
		if (now - cl->conn_start_ms > HANDSHAKE_TIMEOUT_MS) {
			if (cl->cs == CS_CONNECTING)
				cl->try_next_addr = 1;
			conn_close(cl, "no handshake within %d s",
				   HANDSHAKE_TIMEOUT_MS / 1000);
		}
		break;
	case CS_READY:
		/* A peer that stopped answering (host gone, gpud hung). */
		if (cl->wait_since_ms && now - cl->wait_since_ms > silence)
			conn_close(cl, "no answer from gpud for %" PRIu64 " s",
				   (now - cl->wait_since_ms) / 1000);
		break;
	default:
		break;
	}
}

/* Shutdown took too long: give up on the checkpoint, try a last RELEASE,
 * then leave. */
static void on_exit_timer(uv_timer_t *t)
{
	struct client *cl = t->data;

	if (cl->shutdown_forced || cl->cs != CS_READY ||
	    cl->ls != LS_RELEASING) {
		if (!runner_busy(&cl->runner))
			LOG_WARN(cl->log, "shutdown: giving up waiting for "
				 "gpud's answer");
		client_finish(cl, cl->exit_code);
		return;
	}
	cl->shutdown_forced = 1;
	LOG_WARN(cl->log, "shutdown: checkpoint not stored in time, releasing "
		 "without it " LFMT, LARGS(cl));
	cl->rel_want_ckpt = 0;
	runner_stop(&cl->runner);
	upload_clear(&cl->ckpt_next);
	upload_clear(&cl->ckpt_sent);
	pump(cl);
	uv_timer_start(&cl->exit_timer, on_exit_timer, SHUTDOWN_GRACE_MS, 0);
}

/* ---- lifecycle ---- */

static void client_finish(struct client *cl, int code)
{
	if (cl->finished)
		return;
	cl->finished = 1;
	cl->exit_code = code;
	LOG_INFO(cl->log, "worker stopping exit_code=%d leases_done=%" PRIu64,
		 code, cl->leases_done);
	if (cl->ls != LS_EXITED)
		lease_move(cl, LS_EXITED);
	uv_close((uv_handle_t *)&cl->reconnect_timer, NULL);
	uv_close((uv_handle_t *)&cl->heartbeat_timer, NULL);
	uv_close((uv_handle_t *)&cl->watchdog_timer, NULL);
	uv_close((uv_handle_t *)&cl->retry_timer, NULL);
	uv_close((uv_handle_t *)&cl->release_timer, NULL);
	uv_close((uv_handle_t *)&cl->exit_timer, NULL);
	switch (cl->cs) {
	case CS_IDLE:
		conn_move(cl, CS_STOPPED);
		break;
	case CS_RESOLVING:
		/* on_resolved moves to STOPPED (with UV_EAI_CANCELED). */
		uv_cancel((uv_req_t *)&cl->gai);
		break;
	case CS_CLOSING:
		break; /* on_conn_closed moves to STOPPED */
	default:
		conn_close(cl, "worker stopping");
		break;
	}
	/* Blocks until the workload notices its stop flag. */
	if (runner_busy(&cl->runner))
		LOG_INFO(cl->log, "the workload is still running; waiting for "
			 "it (a second signal exits at once)");
	runner_close(&cl->runner);
	upload_clear(&cl->ckpt_sent);
	upload_clear(&cl->ckpt_next);
	result_clear(&cl->result);
	if (cl->cfg->on_exit)
		cl->cfg->on_exit(cl->cfg->on_exit_opaque, code);
}

void client_shutdown(struct client *cl)
{
	if (cl->finished || cl->shutdown_requested)
		return;
	cl->shutdown_requested = 1;
	cl->exiting = 1;
	LOG_INFO(cl->log, "shutdown requested (lease state %s)",
		 lease_names[cl->ls]);
	if (!uv_is_active((uv_handle_t *)&cl->exit_timer))
		uv_timer_start(&cl->exit_timer, on_exit_timer, SHUTDOWN_WAIT_MS, 0);
	switch (cl->ls) {
	case LS_IDLE:
	case LS_WAITING:
	case LS_STOPPING:
		client_finish(cl, cl->exit_code);
		return;
	case LS_CLAIMING:
		return; /* the answer decides: NOLEASE exits, LEASE is released */
	case LS_RUNNING:
		start_release(cl, 1);
		return;
	case LS_RELEASING: /* already on its way out */
	case LS_RESULT:    /* wait for the result's ACK */
	default:
		return;
	}
}

int client_exit_code(const struct client *cl)
{
	return cl->exit_code;
}

int client_start(uv_loop_t *loop, const struct client_config *cfg,
		 struct client **ret)
{
	struct client *cl = calloc(1, sizeof(*cl));
	uv_timer_t *timers[6];
	int rc;

	if (!cl)
		return GERR_NOMEM;
	cl->loop = loop;
	cl->cfg = cfg;
	cl->log = cfg->log;
	cl->backoff_s = BACKOFF_MIN_S;
	cl->heartbeat_ms = 10000;
	rc = runner_init(&cl->runner, loop, cfg->log, cfg->checkpoint_interval_s,
			 cfg->run_ahead, on_runner_wake, cl);
	if (rc < 0) {
		free(cl);
		return rc;
	}
	timers[0] = &cl->reconnect_timer;
	timers[1] = &cl->heartbeat_timer;
	timers[2] = &cl->watchdog_timer;
	timers[3] = &cl->retry_timer;
	timers[4] = &cl->release_timer;
	timers[5] = &cl->exit_timer;
	for (size_t i = 0; i < 6; i++) {
		uv_timer_init(loop, timers[i]);
		timers[i]->data = cl;
	}
	*ret = cl;
	start_connect(cl);
	return 0;
}

void client_free(struct client *cl)
{
	if (!cl)
		return;
	free_addresses(cl);
	free(cl);
}
