/* client_int.h - the state the worker's protocol modules share; private to
 * worker/ (client.h is the public side).
 *
 * The client is split by concern, one prefix each:
 *   wconn.c   wconn_   transport: TCP, framing, reconnects (wconn.h)
 *   client.c  client_  the client's life: start, login, frame dispatch,
 *                      heartbeat timer, shutdown and exit
 *   wlease.c  wlease_  the lease protocol: the lease state machine, what
 *                      is sent for it (CLAIM, HEARTBEAT, CHECKPOINT,
 *                      RESULT, RELEASE) and gpud's answers
 *   wgrant.c  wgrant_  a grant becomes a run: starting the LEASE's run
 *                      and taking its checkpoints, result and fetches
 *   wfetch.c  wfetch_  the blob fetch path (FETCH, BLOB, its ERROR)
 * Every message goes through msg.h; no file here spells a field name.
 *
 * Layers (calls go one way, tools/check_layers.py): client.c -> wgrant.c ->
 * wlease.c -> wfetch.c -> wconn.c, each also calling any file below it
 * (and runner.c, below them all). wlease.c decides when the client is done
 * (lease settled while exiting, --max-leases, --exit-when-idle, the exit
 * timer) but the teardown is client.c's: it reaches it through cl->finish,
 * the one callback, which client_start sets to client.c's client_finish.
 *
 * Ownership: one struct client, owned by main.c through client.h; the
 * modules above share it and own nothing of their own. Blobs in struct
 * wlease_upload and struct runner_result are malloc'ed and owned by the
 * client until freed with wlease_upload_clear / wlease_result_clear.
 *
 * Threads: loop thread only; the runner thread talks to the client only
 * through struct runner (runner.h) and its uv_async_t.
 */
#ifndef GPUD_WORKER_CLIENT_INT_H
#define GPUD_WORKER_CLIENT_INT_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "blob.h"
#include "client.h"
#include "msg.h"
#include "runner.h"
#include "wconn.h"

#define RELEASE_ERROR_MAX 200

/* "job=1 lease=4 epoch=2" on every lease event. */
#define LFMT "job=%" PRIu64 " lease=%" PRIu64 " epoch=%" PRIu64
#define LARGS(cl) (cl)->cur.job, (cl)->cur.lease, (cl)->cur.epoch

/* The lease's states (wlease.c has the moves). */
enum wlease_state {
	WLEASE_IDLE,
	WLEASE_CLAIMING,
	WLEASE_WAITING,
	WLEASE_RUNNING,
	WLEASE_RELEASING,
	WLEASE_STOPPING,
	WLEASE_RESULT,
	WLEASE_EXITED,
	WLEASE_COUNT,
};

/* A checkpoint blob waiting for upload or for its ACK. */
struct wlease_upload {
	uint8_t *blob;
	size_t len;
	uint64_t units_done;
};

/* The lease currently held (valid in RUNNING, RELEASING, STOPPING,
 * RESULT). */
struct wlease_cur {
	uint64_t job, lease, epoch, units;
	char workload[MSG_WORKLOAD_MAX + 1];
	uint64_t run_id;    /* non-zero while the runner works on it */
};

struct client {
	uv_loop_t *loop;
	const struct client_config *cfg;
	const struct glog *log;
	struct runner runner;
	struct wconn conn;
	uv_timer_t heartbeat_timer;
	uint64_t worker_id;
	uint64_t heartbeat_ms;

	/* Lease (wlease.c). */
	enum wlease_state ls;
	struct wlease_cur cur;
	uv_timer_t retry_timer;     /* WAITING */
	uv_timer_t release_timer;   /* bound on the release checkpoint */
	struct wlease_upload ckpt_sent; /* unacknowledged (wlease.c #3) */
	struct wlease_upload ckpt_next; /* waiting to be sent */
	int rel_want_ckpt;          /* RELEASING: waiting for the checkpoint */
	int rel_sent;               /* RELEASING: RELEASE sent */
	struct runner_result result; /* RESULT: held until ACK (wlease.c #5) */
	int result_sent;
	int retry_after_fail;       /* pause before the next CLAIM */
	char rel_error[RELEASE_ERROR_MAX + 1]; /* why, or "" (wlease.c #8) */
	uint64_t leases_done;

	/* Fetch (wfetch.c). */
	char fetch_hash[BLOB_HASH_HEX]; /* outstanding, or "" */
	int fetch_sent;             /* FETCH sent on this connection */

	/* Exit (client.c; the wait for the lease to settle is wlease.c's). */
	int exiting;                /* leave as soon as the lease is settled */
	int shutdown_requested;
	int shutdown_forced;        /* exit_timer ran out once (wlease.c) */
	int exit_code;
	int finished;
	uv_timer_t exit_timer;      /* wlease_arm_exit_timer */
	/* Stop everything and exit with code (client.c's client_finish, set
	 * by client_start): lease EXITED, timers closed, transport stopped,
	 * runner joined, cfg->on_exit called. Once only: cl->finished is set
	 * and later calls (and wlease_pump) do nothing. Loop thread only. */
	void (*finish)(struct client *cl, int code);
};

/* wlease.c */
const char *wlease_state_name(enum wlease_state s);
void wlease_move(struct client *cl, enum wlease_state to);
int wlease_held(const struct client *cl);
/* Send whatever the lease state calls for; any time, no-op offline. */
void wlease_pump(struct client *cl);
void wlease_send_heartbeat(struct client *cl);
/* Is a heartbeat due for the lease (held, RELEASE not sent)? */
int wlease_beating(const struct client *cl);
void wlease_idle(struct client *cl);
void wlease_end(struct client *cl);
void wlease_release(struct client *cl, int want_ckpt);
/* The claim in flight is no longer wanted (WITHDRAW): gpud answers it at
 * once instead of holding it until work appears. */
void wlease_withdraw(struct client *cl, const char *why);
void wlease_set_error(struct client *cl, const char *why);
/* The connection is gone: what was sent on it must be sent again. */
void wlease_connection_lost(struct client *cl);
/* Bound the wait for the lease to settle before exiting (exit_timer,
 * SHUTDOWN_WAIT_MS; no-op while armed): when it runs out, release without
 * the checkpoint, then cl->finish. */
void wlease_arm_exit_timer(struct client *cl);
/* LEASE from gpud: decode it into *m (which points into f, valid as long
 * as f), take the lease (cl->cur, RUNNING) and return 0; GERR_PROTO when
 * none was claimed or it is malformed. Starting its run is the caller's
 * (wgrant_on_lease). */
int wlease_grant(struct client *cl, const struct proto_frame *f,
		 struct msg_lease *m);
int wlease_on_nolease(struct client *cl, const json_t *header);
int wlease_on_hb_ack(struct client *cl, const json_t *header);
int wlease_on_ack(struct client *cl, const json_t *header);
void wlease_on_error(struct client *cl, const struct msg_error *e);
void wlease_upload_clear(struct wlease_upload *u);
void wlease_result_clear(struct runner_result *res);

/* wgrant.c */
/* LEASE from gpud: take it (wlease_grant), then start its run, giving the
 * lease back when it cannot start. 0, or GERR_PROTO as wlease_grant. */
int wgrant_on_lease(struct client *cl, const struct proto_frame *f);
/* runner_wake_fn: the runner has output. */
void wgrant_on_wake(void *opaque);

/* wfetch.c */
/* Send the run's FETCH if it is due; < 0 when sending failed. */
int wfetch_pump(struct client *cl);
int wfetch_on_blob(struct client *cl, const struct proto_frame *f);
void wfetch_on_error(struct client *cl, const struct msg_error *e);
/* The run ended: nobody waits for a blob any more. */
void wfetch_forget(struct client *cl);

#endif
