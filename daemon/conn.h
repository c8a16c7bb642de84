/* conn.h - a client connection, shared by conn.c (framing, lifetime,
 * dispatch, gpuctl's requests) and worker_proto.c (the worker side of the
 * protocol). Private to daemon/; gpud.h has what the rest of gpud uses.
 *
 * Lifetime: a conn is reference counted; every asynchronous step holds a
 * reference (conn_ref before, conn_step_done or conn_unref after), so
 * after-callbacks may run after the socket closed and then skip the reply.
 * Loop thread only.
 */
#ifndef GPUD_CONN_H
#define GPUD_CONN_H

#include <jansson.h>
#include <uv.h>

#include "auth.h"
#include "gpud.h"
#include "proto.h"
#include "scheduler.h"

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

void conn_ref(struct conn *c);
void conn_unref(struct conn *c);
/* Close once (logging why); pending steps still hold their references. */
void conn_close(struct conn *c, const char *why);
/* Encode and queue a frame; takes the reference to msg; bin is copied. */
void conn_send(struct conn *c, enum proto_type type, json_t *msg,
	       const void *bin, size_t bin_len);
/* An ERROR frame, naming the lease when lease != 0. */
void conn_send_error(struct conn *c, int code, const char *msg, int64_t lease,
		     uint64_t epoch);
/* End an asynchronous step: clear busy, go on with buffered frames, drop
 * the step's reference. */
void conn_step_done(struct conn *c);
/* The lease policy from gpud's configuration. */
struct sched_policy conn_policy(struct gpud *d);

/* worker_proto.c: one handler per worker message. Each returns 0 (maybe
 * having started an asynchronous step: c->busy set) or GERR_PROTO for an
 * invalid message, which closes the connection. */
int wp_hello(struct conn *c, const json_t *msg);
int wp_auth(struct conn *c, const json_t *msg);
int wp_claim(struct conn *c, const json_t *msg);
int wp_heartbeat(struct conn *c, const json_t *msg);
int wp_upload(struct conn *c, const struct proto_frame *f, int is_result);
int wp_release(struct conn *c, const json_t *msg);
int wp_fetch(struct conn *c, const json_t *msg);

#endif
