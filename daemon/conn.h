/* conn.h - one client connection (conn.c): a worker on TCP or gpuctl on
 * the Unix socket. conn.c frames the bytes, keeps the connection's
 * lifetime and the list of open connections, and hands each frame to the
 * handler table its owner (server.c) gave at accept; it calls no handler
 * module by name.
 *
 * Lifetime: a conn is reference counted; every asynchronous step holds a
 * reference (conn_ref before, conn_step_done or conn_unref after), so
 * after-callbacks may run after the socket closed and then skip the reply.
 * Every function here: loop thread only.
 *
 * Bounds: a worker connection before login buffers at most one HELLO or
 * AUTH frame (proto.h's login limits, checked from the frame header) and
 * is closed when it has not logged in within cfg.login_timeout_s; after
 * login it is closed when silent for cfg.idle_timeout_s while gpud owes
 * it nothing (no step under way, no parked claim, no reply unsent, no
 * read paused by gpud), when it holds part of a frame or record of which
 * nothing was handled for as long (paused or trickled), and when its
 * replies wait unread for as long. While more than 4 MiB of replies wait
 * unread, its frames wait too. After login each frame is held to its type's
 * bounds from its header; a CHECKPOINT's or RESULT's attachment, bounded
 * by its lease (or its workloads' largest), streams to an unnamed file in
 * the data directory as it arrives (struct conn_spool), never to memory.
 * The bytes TCP connections buffer are charged to d->frame_mem; a read
 * that would take it past cfg.frame_mem_max waits (the connection's reads
 * pause) until others free theirs. *
 * Memory (invariants):
 *  M1. A logged-in worker's frame is held to its type's bounds from its
 *     header (proto_header_limit); a CHECKPOINT's or RESULT's attachment
 *     to its lease's upload bound (c->lease_upload_max) or, for another
 *     lease, to the largest of its workloads' (workload_upload_bound), as
 *     soon as its JSON is read, and then streams to an unnamed file
 *     (struct conn_spool), one write at a time: the plaintext buffer holds
 *     at most a frame's header and JSON, a record and a read.
 *  M2. Every byte a TCP connection buffers (its buffers' capacity, the
 *     write under way) is charged to d->frame_mem, and a read that would
 *     grow a buffer past cfg.frame_mem_max is not made: the connection's
 *     reads pause (read_paused) until memory is freed, when every paused
 *     connection reads again. A frame's first read is small (4 KiB) and
 *     may use the whole budget; the reads after it 7/8 of it; uploads
 *     read back half (upload.c). Remote gpuctl with an admin's token is
 *     exempt (its input files are the operator's).
 *  M3. A connection that holds nothing between frames holds no buffer.
 */
#ifndef GPUD_CONN_H
#define GPUD_CONN_H

#include <jansson.h>
#include <uv.h>

#include "auth.h"
#include "chan.h"
#include "dbq.h"
#include "place.h"
#include "proto.h"

struct gpud;
struct conn;

#define MAX_WORKLOADS 32

/* CONN_AUTH: the login is being checked (no frame is taken meanwhile). */
enum conn_state { CONN_HELLO, CONN_AUTH, CONN_READY };

/* An upload's attachment, streamed as it arrives to an unnamed file of
 * the data directory: len bytes from offset 0 of fd. The handler given
 * one owns it; conn_spool_read and conn_spool_free may run on any
 * thread. */
struct conn_spool {
	int fd;
	uint64_t len;      /* the attachment's length, from the header */
	uint64_t written;  /* bytes in the file (or dropped) so far */
	int rc;            /* 0, or why the file failed (GERR_NOSPACE...):
			    * the rest of the bytes are dropped */
};

/* Read the whole attachment into a malloc'ed buffer (*ret_buf, sp->len
 * bytes). 0, GERR_NOMEM or GERR_IO (a short file: reason in err). */
int conn_spool_read(const struct conn_spool *sp, uint8_t **ret_buf, char *err,
		    size_t errlen);
/* Close the file (its bytes go with it) and free sp. NULL-safe. */
void conn_spool_free(struct conn_spool *sp);

/* A control request's reply: reply is a new reference, bin (may be NULL)
 * passes to the callee. Same shape as control.h's control_done_fn. */
typedef void (*conn_reply_fn)(void *opaque, json_t *reply, void *bin,
			      size_t bin_len);

/* What a connection's frames go to. Worker handlers get one message each
 * and return 0 (maybe having started an asynchronous step: c->busy set)
 * or GERR_PROTO for an invalid message, which closes the connection. The
 * table must outlive every connection given it. */
struct conn_handlers {
	int (*hello)(struct conn *c, const json_t *msg);     /* CONN_HELLO */
	int (*ctl_hello)(struct conn *c, const json_t *msg); /* CONN_HELLO */
	int (*claim)(struct conn *c, const json_t *msg);     /* CONN_READY.. */
	int (*heartbeat)(struct conn *c, const json_t *msg);
	/* CHECKPOINT, RESULT: f's JSON, its attachment in sp (taken, in
	 * every case; f->bin is NULL). */
	int (*upload)(struct conn *c, const struct proto_frame *f,
		      int is_result, struct conn_spool *sp);
	int (*release)(struct conn *c, const json_t *msg);
	int (*fetch)(struct conn *c, const json_t *msg);
	int (*withdraw)(struct conn *c, const json_t *msg);
	/* A parked connection (c->parked set, not closing): work may have
	 * appeared. Takes over the parked step (its busy flag and ref). */
	void (*wake)(struct conn *c);
	/* A parked connection received bytes: its worker speaks (WITHDRAW,
	 * or a FETCH) while its claim waits, so the claim is answered now and
	 * the frame handled. Takes over the parked step; called from frame
	 * processing, which goes on after. */
	void (*unpark)(struct conn *c);
	/* The connection closes (called once, before the socket closes). */
	void (*closed)(struct conn *c);
	/* gpuctl's request with the rights of role, from caller (its
	 * credential's name, or the local Unix user; NULL: not known):
	 * takes req; calls done exactly once, maybe later. */
	void (*control)(struct gpud *d, enum auth_role role, const char *caller,
			json_t *req, const void *bin, size_t bin_len,
			conn_reply_fn done, void *opaque);
};

struct conn {
	struct gpud *d;
	const struct conn_handlers *ops;
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
	uint8_t *buf;           /* frames (plaintext) */
	size_t len, cap;
	struct chan ch;         /* TCP: TLS 1.3 (chan.h) */
	uint8_t *sealed;        /* TCP: bytes read, not yet unsealed */
	size_t slen, scap;
	enum conn_state state;
	enum auth_role role;    /* logged in as (ADMIN on the Unix socket) */
	int remote_ctl;         /* TCP: gpuctl (CTL_HELLO), not a worker */
	char peer[64];
	char name[AUTH_NAME_MAX + 1];  /* the credential; on the Unix socket
				       * the peer's Unix user (peer_user.h) */
	char instance[PLACE_INSTANCE_MAX + 1]; /* a worker's, from its HELLO */
	char device[64];
	struct place place;     /* where the worker runs, from its HELLO */
	char *workloads_json;   /* ["graveler",..] of registered names */
	int64_t worker_id;
	int64_t lease_id, job_id;
	uint64_t epoch;
	/* Its rate in its lease's unit, from what its heartbeats report:
	 * units at rate_ms since the baseline of lease rate_lease. */
	double rate;
	int64_t rate_lease;
	uint64_t rate_units, rate_ms;
	int64_t rate_job;       /* the job rate was measured in */
	uint32_t threads;       /* from its HELLO; 0 when not known */
	const char *job_unit;   /* its lease's unit name (static), or NULL */
	/* A claim that found nothing waits here (long poll) until work appears
	 * or park_timer fires, so an idle worker starts new work at once. */
	int parked;             /* set and cleared by conn_set_parked */
	uint32_t park_mask;     /* the workloads it waits for (bit: registry
				 * index), set before it parks */
	uv_timer_t park_timer;
	char park_reason[256];
	/* An upload's frame whose attachment streams to a file: its JSON,
	 * the file, and whether a write is under way (spool_inflight bytes). */
	struct proto_frame spool_frame;
	struct conn_spool *spool;
	size_t spool_inflight;
	/* The most bytes an upload of lease_id may take (the worker protocol
	 * sets it at the grant: workload_upload_bound), 0 when not known. */
	uint64_t lease_upload_max;
	size_t mem;             /* bytes charged to d->frame_mem */
	int read_paused;        /* reads stopped until memory frees up */
	uint64_t opened_ms;     /* uv_now() at accept */
	uint64_t active_ms;     /* uv_now() when the peer last sent bytes */
	uint64_t written_ms;    /* uv_now() when a reply was last written
				 * (or queued on an empty queue) */
	uint64_t progress_ms;   /* uv_now() when bytes last went to a frame
				 * or an upload's file (the stall rule) */
	struct conn *next, *prev;
};

/* Serve an accepted socket: a worker's (TCP, peer its address) or
 * gpuctl's (Unix socket), its frames going to ops. Takes fd in every case:
 * on failure (GERR_NOMEM, or a libuv error) it is closed. */
int conn_open_fd(struct gpud *d, int fd, int is_ctl, const char *peer,
		 const struct conn_handlers *ops);

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
/* Start an asynchronous step on the database thread: work(arg) there (in
 * the next group commit when batch), then after(arg) on the loop, which
 * ends it with conn_step_done; c is busy and referenced until then.
 * GERR_STATE when it cannot start: c is as before and arg still the
 * caller's. */
int conn_step_db(struct conn *c, int batch, dbq_work_fn work,
		 dbq_after_fn after, void *arg);

/* ---- the open connections ---- */

/* Close every connection (shutdown). */
void conn_close_all(struct gpud *d);
/* Close the worker connections past their login or idle timeout. */
void conn_sweep(struct gpud *d);
/* M1's bounds: a read; a logged-in worker's plaintext (a frame's header
 * and JSON: its attachment streams to a file); the replies a worker may
 * leave unread before its frames wait and its reads pause. */
#define CONN_READ_CHUNK (64u * 1024)
#define CONN_WORKER_PLAIN ((size_t)PROTO_HEADER_LEN + PROTO_WORKER_MAX_JSON)
#define CONN_WRITE_QUEUE_MAX (4u << 20)

/* conn.c's and spool.c's own: whether c's reads wait for its frames to
 * be handled (or its replies to be read); charge c's buffers again after
 * they changed; resume every paused connection that has room; the
 * largest upload c's workloads can send (workload_upload_bound). */
int conn_held_back(const struct conn *c);
int conn_budgeted(const struct conn *c);    /* reads under --frame-memory */
int conn_replies_unread(const struct conn *c); /* past CONN_WRITE_QUEUE_MAX */
int conn_mem_update(struct conn *c); /* non-zero: c freed some */
void conn_resume_paused(struct gpud *d);
uint64_t conn_workloads_upload_max(const struct conn *c);
/* A logged-in worker's upload frame f, its JSON read: its attachment held
 * to its lease's bound (or its workloads'), and its file opened
 * (c->spool). 0, or GERR_TOOBIG (or the file's error) with a reason. */
int conn_spool_begin(struct conn *c, const struct proto_frame *f, char *err,
		     size_t errlen);

/* Charge n more bytes (may be negative) of buffered uploads to
 * d->frame_mem; after freeing, conn_resume_paused lets connections whose
 * reads wait read again. */
void conn_mem_charge(struct gpud *d, int64_t n);
/* Whether n more bytes fit in eighths/8 of d's budget now. The budget's
 * shares (M2): uploads read back take at most half of it (but one alone),
 * a read in the middle of a frame at most 7/8, so that the first small
 * read of a frame (a heartbeat, a claim) always finds room. */
#define CONN_MEM_UPLOADS 4
#define CONN_MEM_MIDFRAME 7
#define CONN_MEM_ALL 8
int conn_mem_fits(const struct gpud *d, uint64_t n, unsigned eighths);
/* Connections not logged in yet: in all (the return value), and from
 * peer in *ret_peer. */
int conn_count_prelogin(struct gpud *d, const char *peer, int *ret_peer);
/* Close the oldest connection not logged in yet of the address that has
 * the most of them (at least min), or, when no address has two, the
 * oldest of all; saying why (NULL: no log line). Returns 1 when one
 * closed. O(connections). */
int conn_shed_prelogin(struct gpud *d, int min, const char *why);
/* Logged-in connections of token name (workers and remote gpuctl), but
 * those of worker_id (which a new login of that worker replaces). */
int conn_count_token(struct gpud *d, const char *name, int64_t worker_id);
/* Open worker connections: in all (the return value), and from peer in
 * *ret_peer (peer may be NULL). */
int conn_count_tcp(struct gpud *d, const char *peer, int *ret_peer);
/* The lease a worker's connection holds (its job in *ret_job), or 0. */
int64_t conn_worker_lease(struct gpud *d, int64_t worker_id, int64_t *ret_job);
/* A connection of worker_id (a token's row): one holding a lease if any,
 * else any logged in; NULL when none. */
const struct conn *conn_find_worker(struct gpud *d, int64_t worker_id);
/* Work may have appeared: hand every parked connection to its wake
 * handler. */
void conn_wake_parked(struct gpud *d);
/* Park c's claim (on) or end its parking, keeping d->parked's counts of
 * c->park_mask's workloads. Loop thread. */
void conn_set_parked(struct conn *c, int on);
/* Close every worker connection authenticated with that token name. */
void conn_close_token(struct gpud *d, const char *name);
/* Worker connections holding a lease now. */
int conn_count_leases(struct gpud *d);
/* Authenticated worker connections now. */
int conn_count_workers(struct gpud *d);
/* Non-zero when some authenticated worker connection runs that workload. */
int conn_workload_served(struct gpud *d, const char *workload);

#endif
