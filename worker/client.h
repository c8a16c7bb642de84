/* client.h - gpuworker's connection to gpud and the lease protocol.
 *
 * The client owns: the connection to gpud (wconn.h: TCP, reconnecting with
 * backoff), the login (HELLO / WELCOME), the lease
 * state machine (CLAIM, heartbeats, checkpoint and result uploads, RELEASE
 * with the run's error when it failed), the FETCH of the blobs a run reads,
 * and the runner thread that executes leases (runner.h). main.c owns the
 * loop, the signal handles and the device contexts. client_int.h says
 * which file has which part.
 *
 * Two state machines, each with a transition table checked on every move:
 * the connection (wconn.c) and the lease (wlease.c). The lease outlives
 * connections: a lease keeps running while disconnected and its pending
 * uploads are resent after the next WELCOME.
 *
 * Threads: every client_* function must be called on the loop thread.
 */
#ifndef GPUD_WORKER_CLIENT_H
#define GPUD_WORKER_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "auth.h"
#include "chan.h"
#include "log.h"
#include "place.h"
#include "workload.h"

/* A workload this worker advertises, with its device context (NULL on
 * CPU). Owned by main.c; borrowed for the client's lifetime. */
struct client_workload {
	const struct workload *wl;
	void *cuda_ctx;
};

/* Everything is borrowed and must outlive the client. */
struct client_config {
	const struct glog *log;
	const char *host;                /* name or address, no brackets */
	const char *port;                /* decimal */
	const struct auth_token *token;
	const char *token_file;          /* where token came from: messages */
	/* The exit code when gpud refuses the credential (unknown, revoked,
	 * of the old kind or the wrong role): no retry can succeed. */
	int refused_exit;
	/* The token's key with its TLS certificate (chan_identity_cert). */
	const struct chan_identity *identity;
	const char *device_name;         /* "cpu" or "cuda:N", sent in HELLO */
	enum wl_device_kind device_kind;
	int device_index;
	int threads;
	double checkpoint_interval_s;    /* 0: gpud's, from WELCOME */
	uint64_t max_leases;             /* 0: no limit */
	int exit_when_idle;
	int run_ahead;                   /* runner.h invariant 7 */
	const struct client_workload *workloads;
	size_t n_workloads;
	const struct place *place;       /* sent in HELLO; NULL: none */
	const char *instance;            /* sent in HELLO: this process among
					  * its token's (place.h's rule) */
	/* Called once on the loop thread when the client has stopped and
	 * closed its handles; main closes its own handles there. */
	void (*on_exit)(void *opaque, int exit_code);
	void *on_exit_opaque;
};

struct client;

/* Create the client and start connecting. *ret is owned by the caller and
 * freed with client_free after uv_run returned. */
int client_start(uv_loop_t *loop, const struct client_config *cfg,
		 struct client **ret);

/* Graceful stop (SIGTERM): checkpoint the current lease, upload it, release
 * it, then exit 0; bounded to about 10 seconds. Idempotent. */
void client_shutdown(struct client *cl);

/* The exit code decided by the client (0, 1 after a device error, or
 * cfg->refused_exit when gpud refused the credential). */
int client_exit_code(const struct client *cl);

/* NULL-safe. Only after the loop has run to completion. */
void client_free(struct client *cl);

#endif
