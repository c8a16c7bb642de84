/* wlease.c - gpuworker's lease protocol: the lease state machine, what is
 * sent for a lease (CLAIM, HEARTBEAT, CHECKPOINT, RESULT, RELEASE) and
 * gpud's answers (LEASE, NOLEASE, HB_ACK, ACK, an ERROR about the lease),
 * and the bound on the wait for the lease to settle at shutdown (the exit
 * timer). LEASE comes through wgrant_on_lease (wgrant.c starts the run,
 * above this file); when the client is done this file calls cl->finish,
 * the one way up (client_int.h), never client.c or wgrant.c by name.
 *
 * Invariants:
 *  1. There is at most one lease (cl->cur). The lease does not depend on
 *     the connection: it keeps running while disconnected, and after the
 *     next WELCOME the worker heartbeats it and resends whatever was not
 *     acknowledged.
 *  2. Nothing is sent before WELCOME except HELLO and AUTH, and everything
 *     the lease state asks to send is sent from one place, wlease_pump().
 *  3. At most one CHECKPOINT is unacknowledged; a newer checkpoint waits in
 *     ckpt_next and replaces an older waiting one (only the newest matters).
 *  4. RELEASE is sent only when no checkpoint is waiting or unacknowledged,
 *     so the last checkpoint is stored before the lease is given back.
 *  5. A result is kept until gpud acknowledges it (or says the lease is
 *     stale); it survives reconnects.
 *  6. A new lease is claimed only once the runner is idle (runner.h #1); a
 *     run ahead (runner.h #7) is not a lease and does not count.
 *  7. (wfetch.c) At most one FETCH is outstanding.
 *  8. A RELEASE after a failed run (not a stop) carries the run's one-line
 *     message as its error (printable ASCII, at most RELEASE_ERROR_MAX
 *     characters), so gpud can tell the user why the lease does not move.
 *
 * Lease states (wlease_move checks every move against lease_next):
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
 *
 * Threads: loop thread only.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "gerr.h"
#include "msg.h"

#define RELEASE_CKPT_WAIT_MS 10000
#define RETRY_AFTER_FAIL_MS 1000
#define SHUTDOWN_WAIT_MS 10000
#define SHUTDOWN_GRACE_MS 2000    /* for the RELEASE after a timeout */

static const char *const lease_names[WLEASE_COUNT] = {
	"idle", "claiming", "waiting", "running", "releasing", "stopping",
	"result", "exited",
};

#define BIT(s) (1u << (s))

static const unsigned lease_next[WLEASE_COUNT] = {
	[WLEASE_IDLE] = BIT(WLEASE_CLAIMING) | BIT(WLEASE_WAITING) |
			BIT(WLEASE_EXITED),
	[WLEASE_CLAIMING] = BIT(WLEASE_IDLE) | BIT(WLEASE_WAITING) |
			    BIT(WLEASE_RUNNING) | BIT(WLEASE_RELEASING) |
			    BIT(WLEASE_EXITED),
	[WLEASE_WAITING] = BIT(WLEASE_IDLE) | BIT(WLEASE_EXITED),
	[WLEASE_RUNNING] = BIT(WLEASE_RELEASING) | BIT(WLEASE_STOPPING) |
			   BIT(WLEASE_RESULT) | BIT(WLEASE_EXITED),
	[WLEASE_RELEASING] = BIT(WLEASE_IDLE) | BIT(WLEASE_STOPPING) |
			     BIT(WLEASE_RESULT) | BIT(WLEASE_EXITED),
	[WLEASE_STOPPING] = BIT(WLEASE_IDLE) | BIT(WLEASE_EXITED),
	[WLEASE_RESULT] = BIT(WLEASE_IDLE) | BIT(WLEASE_EXITED),
	[WLEASE_EXITED] = 0,
};

static void on_retry_timer(uv_timer_t *t);
static void on_release_timer(uv_timer_t *t);
static void on_exit_timer(uv_timer_t *t);

/* ---- state ---- */

const char *wlease_state_name(enum wlease_state s)
{
	return (unsigned)s < WLEASE_COUNT ? lease_names[s] : "?";
}

void wlease_move(struct client *cl, enum wlease_state to)
{
	assert(lease_next[cl->ls] & BIT(to));
	LOG_DEBUG(cl->log, "lease %s -> %s " LFMT, lease_names[cl->ls],
		  lease_names[to], LARGS(cl));
	cl->ls = to;
}

int wlease_held(const struct client *cl)
{
	return cl->ls == WLEASE_RUNNING || cl->ls == WLEASE_RELEASING ||
	       cl->ls == WLEASE_RESULT;
}

int wlease_beating(const struct client *cl)
{
	return cl->ls == WLEASE_RUNNING ||
	       (cl->ls == WLEASE_RELEASING && !cl->rel_sent);
}

void wlease_upload_clear(struct wlease_upload *u)
{
	free(u->blob);
	memset(u, 0, sizeof(*u));
}

void wlease_result_clear(struct runner_result *res)
{
	free(res->blob);
	memset(res, 0, sizeof(*res));
}

/* ---- sending ---- */

/* Encode m (msg_*_encode's rc, header h) and send it. */
static int send_msg(struct client *cl, enum proto_type type, int rc,
		    json_t *h, const void *bin, size_t bin_len)
{
	if (rc < 0) {
		json_decref(h);
		h = NULL; /* wconn_send closes the connection */
	}
	return wconn_send(&cl->conn, type, h, bin, bin_len);
}

void wlease_send_heartbeat(struct client *cl)
{
	struct msg_heartbeat m = {
		.lease = cl->cur.lease, .epoch = cl->cur.epoch,
		.units_done = runner_units_done(&cl->runner),
	};
	json_t *h = NULL;
	int rc = msg_heartbeat_encode(&m, &h);

	send_msg(cl, PROTO_HEARTBEAT, rc, h, NULL, 0);
}

static void send_claim(struct client *cl)
{
	struct msg_claim m = {0}; /* no field: gpud measures the rate */
	json_t *h = NULL;
	int rc = msg_claim_encode(&m, &h);

	LOG_DEBUG(cl->log, "claim");
	send_msg(cl, PROTO_CLAIM, rc, h, NULL, 0);
}

void wlease_withdraw(struct client *cl, const char *why)
{
	struct msg_withdraw m = { .reason = why };
	json_t *h = NULL;
	int rc = msg_withdraw_encode(&m, &h);

	LOG_DEBUG(cl->log, "claim withdrawn (%s)", why);
	send_msg(cl, PROTO_WITHDRAW, rc, h, NULL, 0);
}

static int send_checkpoint(struct client *cl)
{
	struct msg_checkpoint m = {
		.lease = cl->cur.lease, .epoch = cl->cur.epoch,
		.units_done = cl->ckpt_sent.units_done,
	};
	json_t *h = NULL;
	int rc = msg_checkpoint_encode(&m, &h);

	LOG_INFO(cl->log, "checkpoint upload " LFMT " units_done=%" PRIu64
		 " bytes=%zu", LARGS(cl), cl->ckpt_sent.units_done,
		 cl->ckpt_sent.len);
	return send_msg(cl, PROTO_CHECKPOINT, rc, h, cl->ckpt_sent.blob,
			cl->ckpt_sent.len);
}

static void send_release(struct client *cl)
{
	struct msg_release m = {
		.lease = cl->cur.lease, .epoch = cl->cur.epoch,
		.error = cl->rel_error[0] ? cl->rel_error : NULL,
	};
	json_t *h = NULL;
	int rc = msg_release_encode(&m, &h);

	cl->rel_sent = 1;
	LOG_INFO(cl->log, "lease release " LFMT "%s%s", LARGS(cl),
		 cl->rel_error[0] ? " error=" : "", cl->rel_error);
	send_msg(cl, PROTO_RELEASE, rc, h, NULL, 0);
}

static void send_result(struct client *cl)
{
	struct msg_result m = {
		.lease = cl->cur.lease, .epoch = cl->cur.epoch,
		.units_done = cl->result.units_done,
		.seconds = cl->result.seconds,
	};
	json_t *h = NULL;
	int rc = msg_result_encode(&m, &h);

	cl->result_sent = 1;
	LOG_INFO(cl->log, "result upload " LFMT " units_done=%" PRIu64
		 " seconds=%.3f bytes=%zu", LARGS(cl), cl->result.units_done,
		 cl->result.seconds, cl->result.blob_len);
	send_msg(cl, PROTO_RESULT, rc, h, cl->result.blob,
		 cl->result.blob_len);
}

/* Invariant 2. */
void wlease_pump(struct client *cl)
{
	if (cl->finished || cl->conn.state != WCONN_READY)
		return;
	if (wfetch_pump(cl) < 0)
		return;
	switch (cl->ls) {
	case WLEASE_IDLE:
		if (cl->exiting)
			return;
		wlease_move(cl, WLEASE_CLAIMING);
		send_claim(cl);
		return;
	case WLEASE_RUNNING:
	case WLEASE_RELEASING:
		if (!cl->ckpt_sent.blob && cl->ckpt_next.blob) {
			cl->ckpt_sent = cl->ckpt_next;
			memset(&cl->ckpt_next, 0, sizeof(cl->ckpt_next));
			if (send_checkpoint(cl) < 0)
				return;
		}
		/* Invariant 4. */
		if (cl->ls == WLEASE_RELEASING && !cl->rel_want_ckpt &&
		    !cl->rel_sent && !cl->ckpt_sent.blob &&
		    !cl->ckpt_next.blob)
			send_release(cl);
		return;
	case WLEASE_RESULT:
		if (!cl->result_sent)
			send_result(cl);
		return;
	default:
		return;
	}
}

/* ---- the lease ---- */

/* The current lease is over (result acknowledged, released, or lost).
 * Wait for the runner if it still works on it (invariant 6). */
void wlease_end(struct client *cl)
{
	wlease_upload_clear(&cl->ckpt_sent);
	wlease_upload_clear(&cl->ckpt_next);
	wlease_result_clear(&cl->result);
	cl->result_sent = 0;
	cl->rel_want_ckpt = 0;
	cl->rel_sent = 0;
	cl->rel_error[0] = '\0';
	uv_timer_stop(&cl->release_timer);
	if (cl->cur.run_id) {
		runner_stop(&cl->runner);
		if (cl->ls != WLEASE_STOPPING)
			wlease_move(cl, WLEASE_STOPPING);
		return;
	}
	wlease_move(cl, WLEASE_IDLE);
	memset(&cl->cur, 0, sizeof(cl->cur));
	wlease_idle(cl);
}

/* No lease: exit if asked to, pause after a failure, or claim. */
void wlease_idle(struct client *cl)
{
	assert(cl->ls == WLEASE_IDLE);
	if (cl->exiting) {
		cl->finish(cl, cl->exit_code);
		return;
	}
	if (cl->cfg->max_leases && cl->leases_done >= cl->cfg->max_leases) {
		LOG_INFO(cl->log, "finished %" PRIu64 " leases (--max-leases), "
			 "exiting", cl->leases_done);
		cl->finish(cl, 0);
		return;
	}
	if (cl->retry_after_fail) {
		cl->retry_after_fail = 0;
		wlease_move(cl, WLEASE_WAITING);
		/* Do not spin on a lease that fails at once. */
		uv_timer_start(&cl->retry_timer, on_retry_timer,
			       RETRY_AFTER_FAIL_MS, 0);
		return;
	}
	wlease_pump(cl);
}

/* Keep why the lease is given back (invariant 8): printable ASCII only, so
 * the JSON string is always valid, cut to RELEASE_ERROR_MAX characters. */
void wlease_set_error(struct client *cl, const char *why)
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
	wlease_end(cl);
}

/* Give the lease back: with a fresh checkpoint first when want_ckpt and the
 * run is still going (pause, shutdown), at once otherwise (run error). */
void wlease_release(struct client *cl, int want_ckpt)
{
	wlease_move(cl, WLEASE_RELEASING);
	cl->rel_sent = 0;
	cl->rel_want_ckpt = 0;
	if (want_ckpt && cl->cur.run_id) {
		cl->rel_want_ckpt = 1;
		runner_request_checkpoint(&cl->runner);
		uv_timer_start(&cl->release_timer, on_release_timer,
			       RELEASE_CKPT_WAIT_MS, 0);
	} else if (cl->cur.run_id) {
		runner_stop(&cl->runner);
	}
	wlease_pump(cl);
}

/* Shutdown took too long: drop the checkpoints, release without them. */
static void force_release(struct client *cl)
{
	cl->rel_want_ckpt = 0;
	runner_stop(&cl->runner);
	wlease_upload_clear(&cl->ckpt_next);
	wlease_upload_clear(&cl->ckpt_sent);
	wlease_pump(cl);
}

void wlease_arm_exit_timer(struct client *cl)
{
	if (!uv_is_active((uv_handle_t *)&cl->exit_timer))
		uv_timer_start(&cl->exit_timer, on_exit_timer, SHUTDOWN_WAIT_MS,
			       0);
}

/* Shutdown took too long: give up on the checkpoint, try a last RELEASE,
 * then leave. */
static void on_exit_timer(uv_timer_t *t)
{
	struct client *cl = t->data;

	if (cl->shutdown_forced || cl->conn.state != WCONN_READY ||
	    cl->ls != WLEASE_RELEASING) {
		if (!runner_busy(&cl->runner))
			LOG_WARN(cl->log, "shutdown: giving up waiting for "
				 "gpud's answer");
		cl->finish(cl, cl->exit_code);
		return;
	}
	cl->shutdown_forced = 1;
	LOG_WARN(cl->log, "shutdown: checkpoint not stored in time, releasing "
		 "without it " LFMT, LARGS(cl));
	force_release(cl);
	uv_timer_start(&cl->exit_timer, on_exit_timer, SHUTDOWN_GRACE_MS, 0);
}

static void on_release_timer(uv_timer_t *t)
{
	struct client *cl = t->data;

	if (cl->ls != WLEASE_RELEASING || !cl->rel_want_ckpt)
		return;
	LOG_WARN(cl->log, "no checkpoint within %d s, releasing without it "
		 LFMT, RELEASE_CKPT_WAIT_MS / 1000, LARGS(cl));
	cl->rel_want_ckpt = 0;
	runner_stop(&cl->runner);
	wlease_pump(cl);
}

static void on_retry_timer(uv_timer_t *t)
{
	struct client *cl = t->data;

	if (cl->ls != WLEASE_WAITING)
		return;
	wlease_move(cl, WLEASE_IDLE);
	wlease_idle(cl);
}

void wlease_connection_lost(struct client *cl)
{
	if (cl->ls == WLEASE_CLAIMING)
		wlease_move(cl, WLEASE_IDLE); /* a LEASE in flight just expires */
	if (cl->ckpt_sent.blob) {
		if (cl->ckpt_next.blob)
			wlease_upload_clear(&cl->ckpt_sent);
		else
			cl->ckpt_next = cl->ckpt_sent;
		memset(&cl->ckpt_sent, 0, sizeof(cl->ckpt_sent));
	}
	cl->rel_sent = 0;
	cl->result_sent = 0;
}

/* ---- gpud's answers ---- */

int wlease_grant(struct client *cl, const struct proto_frame *f,
		 struct msg_lease *m)
{
	char err[200];

	if (cl->ls != WLEASE_CLAIMING ||
	    msg_lease_decode(f->json, m, err, sizeof(err)) < 0)
		return GERR_PROTO;
	cl->cur = (struct wlease_cur){ .job = m->job, .lease = m->lease,
				       .epoch = m->epoch, .units = m->units };
	snprintf(cl->cur.workload, sizeof(cl->cur.workload), "%s", m->workload);
	cl->rel_error[0] = '\0';
	wlease_move(cl, WLEASE_RUNNING);
	LOG_INFO(cl->log, "lease granted " LFMT " workload=%s units=%" PRIu64
		 " units_done=%" PRIu64 " deadline_s=%.3g checkpoint_bytes=%zu",
		 LARGS(cl), cl->cur.workload, m->units, m->units_done,
		 m->deadline_s, f->bin_len);
	return 0;
}

int wlease_on_nolease(struct client *cl, const json_t *header)
{
	struct msg_nolease m;
	const char *reason;
	double retry_s;

	if (cl->ls != WLEASE_CLAIMING ||
	    msg_nolease_decode(header, &m, NULL, 0) < 0)
		return GERR_PROTO;
	reason = m.reason ? m.reason : "";
	retry_s = m.retry_s;
	/* Bound what gpud asks for. */
	if (!(retry_s >= 0.2))
		retry_s = 0.2;
	if (retry_s > 60)
		retry_s = 60;
	wlease_move(cl, WLEASE_WAITING);
	if (cl->exiting) {
		cl->finish(cl, cl->exit_code);
		return 0;
	}
	if (cl->cfg->exit_when_idle && strstr(reason, "no jobs")) {
		LOG_INFO(cl->log, "no lease (%s), exiting (--exit-when-idle)",
			 reason);
		cl->finish(cl, 0);
		return 0;
	}
	LOG_DEBUG(cl->log, "no lease (%s), retry in %.1f s", reason, retry_s);
	uv_timer_start(&cl->retry_timer, on_retry_timer,
		       (uint64_t)(retry_s * 1000), 0);
	return 0;
}

/* Does (lease, epoch) name the lease held? */
static int is_current(const struct client *cl, uint64_t lease, uint64_t epoch)
{
	return wlease_held(cl) && lease == cl->cur.lease &&
	       epoch == cl->cur.epoch;
}

int wlease_on_hb_ack(struct client *cl, const json_t *header)
{
	struct msg_hb_ack m;

	if (msg_hb_ack_decode(header, &m, NULL, 0) < 0)
		return GERR_PROTO;
	if (!is_current(cl, m.lease, m.epoch) || cl->ls == WLEASE_RESULT) {
		LOG_DEBUG(cl->log, "late heartbeat answer ignored");
		return 0;
	}
	if (m.action == MSG_HB_STOP) {
		lease_lost(cl, "gpud says stop (lease re-issued or job cancelled)");
	} else if (m.action == MSG_HB_RELEASE && cl->ls == WLEASE_RUNNING) {
		LOG_INFO(cl->log, "gpud asks for the lease back (job paused) "
			 LFMT, LARGS(cl));
		wlease_release(cl, 1);
	} else if (m.action == MSG_HB_GIVE_BACK && cl->ls == WLEASE_RUNNING) {
		LOG_INFO(cl->log, "gpud takes the lease back to share its rest "
			 "with idle workers " LFMT, LARGS(cl));
		wlease_release(cl, 1);
	}
	return 0;
}

int wlease_on_ack(struct client *cl, const json_t *header)
{
	struct msg_ack m;

	if (msg_ack_decode(header, &m, NULL, 0) < 0)
		return GERR_PROTO;
	if (!is_current(cl, m.lease, m.epoch)) {
		LOG_DEBUG(cl->log, "late ACK %s ignored",
			  msg_ack_what_name(m.what));
		return 0;
	}
	switch (m.what) {
	case MSG_ACK_CHECKPOINT:
		if (cl->ckpt_sent.blob) {
			LOG_INFO(cl->log, "checkpoint stored " LFMT
				 " units_done=%" PRIu64, LARGS(cl),
				 cl->ckpt_sent.units_done);
			wlease_upload_clear(&cl->ckpt_sent);
		}
		break;
	case MSG_ACK_RESULT:
		if (cl->ls == WLEASE_RESULT && cl->result_sent) {
			LOG_INFO(cl->log, "result stored " LFMT, LARGS(cl));
			cl->leases_done++;
			wlease_end(cl);
		}
		break;
	case MSG_ACK_RELEASE:
		if (cl->ls == WLEASE_RELEASING && cl->rel_sent) {
			LOG_INFO(cl->log, "lease released " LFMT, LARGS(cl));
			wlease_end(cl);
		}
		break;
	}
	return 0;
}

/* An ERROR naming a lease (e->lease != 0). */
void wlease_on_error(struct client *cl, const struct msg_error *e)
{
	long long c = (long long)e->code;
	char why[320];

	if (!is_current(cl, e->lease, e->epoch)) {
		LOG_INFO(cl->log, "gpud error about an old lease lease=%" PRIu64
			 " epoch=%" PRIu64 ": %s", e->lease, e->epoch,
			 e->message);
		return;
	}
	if (c == GERR_NOSPACE || c == GERR_PERM || c == GERR_IO ||
	    c == GERR_DB) {
		/* gpud could not store it (disk full, permissions): the work
		 * is good. Reconnect with backoff, which resends whatever was
		 * not acknowledged. */
		wconn_close(&cl->conn, "gpud cannot store our upload (%lld: %s); "
			    "will send it again", c, e->message);
		return;
	}
	/* Stale epoch, cancelled job, rejected upload: the lease is not ours
	 * any more, and a held result is dropped. */
	snprintf(why, sizeof(why), "gpud error %lld: %.256s", c, e->message);
	lease_lost(cl, why);
}
