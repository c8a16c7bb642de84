/* wconn.h - gpuworker's transport to gpud: one TCP connection at a time,
 * resolved and reconnected with jittered exponential backoff, framed with
 * proto.h inside TLS 1.3 (chan.h: gpud must hold the key the credential
 * pins; the worker shows its own key's certificate), with a watchdog for a
 * handshake that never ends and a peer that stops answering.
 *
 * The transport knows frames, not messages: the client (client.c) reads
 * and writes the messages (msg.h) and drives the login part of the
 * connection's states (HELLO -> AUTH (HELLO sent, gpud checks the key)
 * -> READY) with wconn_move; the
 * transport moves through the rest itself.
 *
 * Connection states (wconn_move checks every move against a table):
 *
 *   IDLE -> RESOLVING -> CONNECTING -> SECURE -> HELLO -> AUTH -> READY
 *    ^         |            |            |         |       |       |
 *    |         v            +------------+---------+-------+-------+->CLOSING
 *    +------ (fail) <----------------------------------------- CLOSING
 *   CLOSING -> CONNECTING (next address) ; any -> STOPPED (on exit)
 *
 * Ownership: struct wconn is embedded in its owner (struct client) and
 * must stay valid until the loop has run to completion after wconn_stop;
 * the configuration strings are borrowed. Each TCP connection is owned by
 * the wconn and freed in its close callback, after its writes' callbacks.
 *
 * Threads: loop thread only, every function and every callback.
 */
#ifndef GPUD_WORKER_WCONN_H
#define GPUD_WORKER_WCONN_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include <uv.h>

#include "chan.h"
#include "log.h"
#include "proto.h"

enum wconn_state {
	WCONN_IDLE,
	WCONN_RESOLVING,
	WCONN_CONNECTING,
	WCONN_SECURE,     /* the channel's handshake */
	WCONN_HELLO,
	WCONN_AUTH,
	WCONN_READY,
	WCONN_CLOSING,
	WCONN_STOPPED,
	WCONN_COUNT,
};

/* What the transport tells its owner; each gets the opaque pointer. */
struct wconn_ops {
	/* The secure channel is up and the state is HELLO: send the HELLO. */
	void (*opened)(void *opaque);
	/* A frame arrived (f->bin points into the read buffer: copy what
	 * is kept). The owner may close the connection from here. */
	void (*frame)(void *opaque, const struct proto_frame *f);
	/* A READY connection is closing: what was sent on it is lost. */
	void (*lost)(void *opaque);
	/* The connection is gone and the state IDLE. Return 0 to reconnect
	 * (after the backoff), non-zero when the owner stops instead. */
	int (*closed)(void *opaque);
};

struct wconn_tcp;

struct wconn {
	uv_loop_t *loop;
	const struct glog *log;
	const char *host, *port;       /* borrowed */
	const struct chan_identity *mine; /* borrowed: our key, certificate */
	uint8_t gpud_key[CHAN_PK_LEN]; /* gpud must prove it holds this */
	struct wconn_ops ops;
	void *opaque;

	enum wconn_state state;
	struct wconn_tcp *tcp;         /* the connection, or NULL */
	uv_getaddrinfo_t gai;
	struct addrinfo *ai_list;      /* from the last resolution */
	struct addrinfo *ai_next;      /* next address to try */
	int try_next_addr;             /* set when a connect attempt failed */
	uv_timer_t reconnect_timer;
	uv_timer_t watchdog_timer;
	double backoff_s;
	uint64_t start_ms;             /* uv_now when this attempt started */
	uint64_t wait_since_ms;        /* first write since the last frame in */
	uint64_t heartbeat_ms;         /* the silence bound is 3 of these */
	int stopping;                  /* wconn_stop was called */
};

/* Set up the timers; nothing connects before wconn_start. Only a gpud
 * holding gpud_key's secret completes a connection; mine (borrowed, with
 * its certificate made) is the key the worker proves. */
void wconn_init(struct wconn *w, uv_loop_t *loop, const struct glog *log,
		const char *host, const char *port,
		const struct chan_identity *mine,
		const uint8_t gpud_key[CHAN_PK_LEN],
		const struct wconn_ops *ops, void *opaque);

/* Resolve and connect (from IDLE). */
void wconn_start(struct wconn *w);

/* Move along the login states (HELLO -> AUTH -> READY); a move the table
 * does not allow is a bug (assert). */
void wconn_move(struct wconn *w, enum wconn_state to);

/* The heartbeat period gpud asked for: the peer is declared silent after
 * three of them (at least a minute) without any frame. */
void wconn_set_heartbeat(struct wconn *w, uint64_t ms);

/* Encode and queue a frame. header is stolen; NULL (the message could not
 * be built) closes the connection. Returns 0, or an error after closing
 * the connection (callers check the state before sending more). */
int wconn_send(struct wconn *w, enum proto_type type, json_t *header,
	       const void *bin, size_t bin_len);

/* Close the connection with a logged reason; reconnects unless stopping.
 * Idempotent. */
void wconn_close(struct wconn *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Stop for good: close the connection, cancel a resolution, close the
 * timers; the state ends STOPPED once the handles are closed. */
void wconn_stop(struct wconn *w);

/* Free what the last resolution left. After the loop has finished. */
void wconn_free(struct wconn *w);

const char *wconn_state_name(enum wconn_state s);

#endif
