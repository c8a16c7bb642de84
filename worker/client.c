/* client.c - gpuworker's client: its life (start, shutdown, exit), the
 * login (HELLO / WELCOME), the dispatch of gpud's frames
 * to the modules of client_int.h, and the heartbeat timer.
 *
 * Invariants:
 *  1. Before WELCOME only HELLO is sent, and only WELCOME is accepted
 *     (an ERROR always is); after it, the lease
 *     protocol's messages (wlease.c) and BLOB (wfetch.c).
 *  2. Every frame the client reads goes through msg.h's decoder; one that
 *     does not decode, or comes in the wrong state, closes the connection
 *     (and the transport reconnects).
 *  3. Exit happens once (client_finish): the transport stops, every timer
 *     closes, the runner thread is joined, and cfg->on_exit is called.
 *
 * Threads: loop thread only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "client_int.h"
#include "gerr.h"
#include "msg.h"

static void client_finish(struct client *cl, int code);

/* ---- login ---- */

/* Transport up: introduce ourselves. */
static void on_opened(void *opaque)
{
	struct client *cl = opaque;
	struct msg_hello m = {
		.proto = PROTO_VERSION,
		.worker = cl->cfg->token->name,
		.instance = cl->cfg->instance,
		.device = cl->cfg->device_name,
		.cuda = cl->cfg->device_kind == WL_DEVICE_CUDA,
		.threads = cl->cfg->threads > 0 ? (uint64_t)cl->cfg->threads : 0,
	};
	const struct place *p = cl->cfg->place;
	json_t *h = NULL;

	/* Absent fields (place.h's "") stay out of the message. */
	if (p) {
		m.host = p->host[0] ? p->host : NULL;
		m.slurm_job = p->slurm_job[0] ? p->slurm_job : NULL;
		m.slurm_array = p->slurm_array[0] ? p->slurm_array : NULL;
		m.pod = p->pod[0] ? p->pod : NULL;
	}

	for (size_t i = 0; i < cl->cfg->n_workloads && i < MSG_WORKLOADS_MAX;
	     i++)
		m.workloads[m.n_workloads++] = cl->cfg->workloads[i].wl->name;
	if (msg_hello_encode(&m, &h) < 0)
		h = NULL; /* wconn_send closes the connection */
	/* gpud checks the key the TLS handshake proved, then answers. */
	if (wconn_send(&cl->conn, PROTO_HELLO, h, NULL, 0) == 0)
		wconn_move(&cl->conn, WCONN_AUTH);
}

static void on_heartbeat_timer(uv_timer_t *t)
{
	struct client *cl = t->data;

	if (cl->conn.state == WCONN_READY && wlease_beating(cl))
		wlease_send_heartbeat(cl);
}

static int on_welcome(struct client *cl, const json_t *header)
{
	struct msg_welcome m;
	double hb_s;

	if (msg_welcome_decode(header, &m, NULL, 0) < 0)
		return GERR_PROTO;
	cl->worker_id = m.worker_id;
	/* Bound what gpud asks for: a heartbeat every 50 ms .. 1 h. */
	hb_s = m.heartbeat_s;
	if (!(hb_s >= 0.05))
		hb_s = 0.05;
	if (hb_s > 3600)
		hb_s = 3600;
	cl->heartbeat_ms = (uint64_t)(hb_s * 1000);
	/* gpud's cadence, unless --checkpoint-interval chose one; bounded as
	 * the option is. */
	if (!(cl->cfg->checkpoint_interval_s > 0) && m.checkpoint_s >= 0.1 &&
	    m.checkpoint_s <= 86400)
		runner_set_checkpoint_interval(&cl->runner, m.checkpoint_s);
	wconn_set_heartbeat(&cl->conn, cl->heartbeat_ms);
	wconn_move(&cl->conn, WCONN_READY);
	LOG_INFO(cl->log, "connected to %s:%s worker=%s@%s worker_id=%" PRIu64
		 " heartbeat_s=%.3g", cl->cfg->host, cl->cfg->port,
		 cl->cfg->token->name, cl->cfg->instance, cl->worker_id, hb_s);
	uv_timer_start(&cl->heartbeat_timer, on_heartbeat_timer,
		       cl->heartbeat_ms, cl->heartbeat_ms);

	/* wlease.c #1: a lease that ran on while disconnected is heartbeated
	 * at once; gpud answers "stop" if it was re-issued meanwhile. */
	if (wlease_beating(cl))
		wlease_send_heartbeat(cl);
	if (cl->ls == WLEASE_IDLE && cl->exiting)
		client_finish(cl, cl->exit_code);
	else
		wlease_pump(cl);
	return 0;
}

/* ---- frames from gpud ---- */

static void on_error_frame(struct client *cl, const json_t *header)
{
	struct msg_error e;
	char err[200];

	if (msg_error_decode(header, &e, err, sizeof(err)) < 0) {
		wconn_close(&cl->conn, "protocol violation: %s", err);
		return;
	}
	if (e.hash) {
		wfetch_on_error(cl, &e);
		return;
	}
	if (e.lease) {
		wlease_on_error(cl, &e);
		return;
	}
	/* gpud refuses the credential itself (login.c, a revoked token's
	 * connections): no retry can succeed, so the worker exits at once
	 * with a status of its own, which the unit does not restart. */
	if (e.code == GERR_AUTH) {
		const char *file = cl->cfg->token_file ? cl->cfg->token_file
						       : "--token-file";

		LOG_ERROR(cl->log, "gpud refused credential '%s' (%s): %s. "
			  "Not retrying: ask gpud's operator for a new credential "
			  "(gpuctl token add NAME), put it in %s and start "
			  "gpuworker again (exit status %d)", cl->cfg->token->name,
			  file, e.message, file, cl->cfg->refused_exit);
		client_finish(cl, cl->cfg->refused_exit);
		return;
	}
	/* gpud keeps one connection per worker (token, instance): a second
	 * process with our name took it (login.c). */
	if (e.code == GERR_STATE && strstr(e.message, "replaced"))
		LOG_WARN(cl->log, "gpud: %s: another process logged in as "
			 "worker %s@%s (each process needs its own --instance)",
			 e.message, cl->cfg->token->name, cl->cfg->instance);
	wconn_close(&cl->conn, "gpud error %lld: %s", (long long)e.code,
		    e.message);
}

static void on_frame(void *opaque, const struct proto_frame *f)
{
	struct client *cl = opaque;
	enum wconn_state cs = cl->conn.state;
	int rc = GERR_PROTO;

	if (f->type == PROTO_ERROR) {
		on_error_frame(cl, f->json);
		return;
	}
	switch (cs) {
	case WCONN_AUTH:
		if (f->type == PROTO_WELCOME)
			rc = on_welcome(cl, f->json);
		break;
	case WCONN_READY:
		switch (f->type) {
		case PROTO_LEASE: rc = wgrant_on_lease(cl, f); break;
		case PROTO_NOLEASE: rc = wlease_on_nolease(cl, f->json); break;
		case PROTO_HB_ACK: rc = wlease_on_hb_ack(cl, f->json); break;
		case PROTO_ACK: rc = wlease_on_ack(cl, f->json); break;
		case PROTO_BLOB: rc = wfetch_on_blob(cl, f); break;
		default: break;
		}
		break;
	default:
		return;
	}
	if (rc < 0) {
		wconn_close(&cl->conn, "protocol violation: unexpected or "
			    "malformed %s in state %s", proto_type_name(f->type),
			    wconn_state_name(cs));
		return;
	}
	/* An answer may unblock the next send (wlease.c #3, #4). */
	wlease_pump(cl);
}

/* A READY connection is gone: what was sent on it must be sent again. */
static void on_lost(void *opaque)
{
	struct client *cl = opaque;

	uv_timer_stop(&cl->heartbeat_timer);
	wlease_connection_lost(cl);
	cl->fetch_sent = 0; /* wfetch.c: asked again after WELCOME */
}

static int on_closed(void *opaque)
{
	struct client *cl = opaque;

	if (cl->ls == WLEASE_IDLE && cl->exiting) {
		client_finish(cl, cl->exit_code);
		return 1;
	}
	return 0;
}

/* ---- exit ---- */

/* Invariant 3; also cl->finish, the lease layer's way up (client_int.h). */
static void client_finish(struct client *cl, int code)
{
	if (cl->finished)
		return;
	cl->finished = 1;
	cl->exit_code = code;
	LOG_INFO(cl->log, "worker stopping exit_code=%d leases_done=%" PRIu64,
		 code, cl->leases_done);
	if (cl->ls != WLEASE_EXITED)
		wlease_move(cl, WLEASE_EXITED);
	uv_close((uv_handle_t *)&cl->heartbeat_timer, NULL);
	uv_close((uv_handle_t *)&cl->retry_timer, NULL);
	uv_close((uv_handle_t *)&cl->release_timer, NULL);
	uv_close((uv_handle_t *)&cl->exit_timer, NULL);
	wconn_stop(&cl->conn);
	/* Blocks until the workload notices its stop flag. */
	if (runner_busy(&cl->runner))
		LOG_INFO(cl->log, "the workload is still running; waiting for "
			 "it (a second signal exits at once)");
	runner_close(&cl->runner);
	wlease_upload_clear(&cl->ckpt_sent);
	wlease_upload_clear(&cl->ckpt_next);
	wlease_result_clear(&cl->result);
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
		 wlease_state_name(cl->ls));
	wlease_arm_exit_timer(cl);
	switch (cl->ls) {
	case WLEASE_IDLE:
	case WLEASE_WAITING:
	case WLEASE_STOPPING:
		client_finish(cl, cl->exit_code);
		return;
	case WLEASE_CLAIMING:
		/* The answer decides: NOLEASE exits, LEASE is released. gpud
		 * answers a withdrawn claim at once rather than holding it for
		 * work to appear (up to 10 s). */
		wlease_withdraw(cl, "worker stopping");
		return;
	case WLEASE_RUNNING:
		wlease_release(cl, 1);
		return;
	case WLEASE_RELEASING: /* already on its way out */
	case WLEASE_RESULT:    /* wait for the result's ACK */
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
	static const struct wconn_ops ops = {
		.opened = on_opened,
		.frame = on_frame,
		.lost = on_lost,
		.closed = on_closed,
	};
	struct client *cl = calloc(1, sizeof(*cl));
	uv_timer_t *timers[4];
	int rc;

	if (!cl)
		return GERR_NOMEM;
	cl->loop = loop;
	cl->cfg = cfg;
	cl->log = cfg->log;
	cl->heartbeat_ms = 10000;
	cl->finish = client_finish;
	rc = runner_init(&cl->runner, loop, cfg->log, cfg->checkpoint_interval_s,
			 cfg->run_ahead, wgrant_on_wake, cl);
	if (rc < 0) {
		free(cl);
		return rc;
	}
	timers[0] = &cl->heartbeat_timer;
	timers[1] = &cl->retry_timer;
	timers[2] = &cl->release_timer;
	timers[3] = &cl->exit_timer;
	for (size_t i = 0; i < 4; i++) {
		uv_timer_init(loop, timers[i]);
		timers[i]->data = cl;
	}
	wconn_init(&cl->conn, loop, cfg->log, cfg->host, cfg->port,
		   cfg->identity, cfg->token->gpud_key, &ops, cl);
	*ret = cl;
	wconn_start(&cl->conn);
	return 0;
}

void client_free(struct client *cl)
{
	if (!cl)
		return;
	wconn_free(&cl->conn);
	free(cl);
}
