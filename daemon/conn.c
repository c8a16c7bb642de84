/* conn.c - one client connection (conn.h): a worker on TCP or gpuctl on the
 * Unix socket: accepting, reading and framing, writing, closing, and
 * dispatching each frame through the handler table its owner passed.
 *
 * Frames of one connection are handled strictly one after another: while a
 * frame's database or verification steps run, the connection is "busy" and
 * later frames wait in the buffer. That keeps replies in request order
 * (a checkpoint's ACK never overtakes the result that follows it).
 *
 * A TCP connection speaks TLS 1.3 (chan.h): every byte read goes through
 * the channel (its handshake first, then records whose plaintext is
 * framed here), and every frame written is sealed. A record that does not
 * authenticate closes the connection, and nothing of it reaches a handler.
 *
 * TCP connection states and moves:
 *   HELLO --HELLO--> AUTH --the key's credential, checked--> READY
 *   --(CLAIM|HEARTBEAT|CHECKPOINT|
 *   RESULT|RELEASE|FETCH|WITHDRAW)--> READY; anything else closes the
 *   connection, and so does a frame header that the state's limits refuse
 *   (state_limits) before its payload is read. Remote gpuctl: HELLO
 *   --CTL_HELLO--> AUTH --checked (a viewer or admin token)--> READY
 *   --CTL_REQ--> READY.
 *
 * Lifetime: a conn is reference counted; every pending asynchronous step
 * holds a reference, so after-callbacks may run after the socket closed and
 * simply skip the reply.
 *
 * Memory: conn.h's invariants M1-M3.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chan.h"
#include "conn.h"
#include "gerr.h"
#include "gpud.h"
#include "msg.h"
#include "peer_user.h"
#include "proto.h"
#include "workload.h"

_Static_assert(AUTH_NAME_MAX + 1 >= PEER_USER_MAX, "a local user fits c->name");

#define READ_CHUNK CONN_READ_CHUNK
#define LOGIN_CHUNK (4u * 1024)
#define MAX_BUFFER ((size_t)PROTO_HEADER_LEN + PROTO_MAX_JSON + PROTO_MAX_BIN)
#define SPOOL_WRITE_MAX (1u << 20) /* bytes one write takes to the file */
/* One login frame: a peer sends nothing more before WELCOME. */
#define LOGIN_BUFFER ((size_t)PROTO_HEADER_LEN + PROTO_LOGIN_MAX_JSON)

#define WORKER_SENDS                                                          \
	(PROTO_BIT(PROTO_CLAIM) | PROTO_BIT(PROTO_HEARTBEAT) |                \
	 PROTO_BIT(PROTO_CHECKPOINT) | PROTO_BIT(PROTO_RESULT) |              \
	 PROTO_BIT(PROTO_RELEASE) | PROTO_BIT(PROTO_FETCH) |                  \
	 PROTO_BIT(PROTO_WITHDRAW))

/* Sealed bytes a TCP connection buffers: a read (chan_open takes all of
 * it; GnuTLS keeps at most one partial record). */
#define MAX_SEALED ((size_t)CHAN_RECORD_MAX + CHAN_RECORD_OVERHEAD + \
		    READ_CHUNK)

/* What a TCP connection accepts in each state. */
static const struct proto_limits state_limits[] = {
	[CONN_HELLO] = { PROTO_BIT(PROTO_HELLO) | PROTO_BIT(PROTO_CTL_HELLO),
			 PROTO_LOGIN_MAX_JSON, 0, 0 },
	/* The login is being checked: frames wait (busy); none is taken. */
	[CONN_AUTH] = { 0, PROTO_LOGIN_MAX_JSON, 0, 0 },
	[CONN_READY] = { WORKER_SENDS, PROTO_WORKER_MAX_JSON, PROTO_MAX_BIN,
			 PROTO_BIT(PROTO_CHECKPOINT) | PROTO_BIT(PROTO_RESULT) },
};

/* A viewer's remote gpuctl sends requests, never an input file. */
static const struct proto_limits viewer_ctl_limits = {
	PROTO_BIT(PROTO_CTL_REQ), PROTO_MAX_JSON, 0, 0
};

/* What remote gpuctl sends once logged in: requests, an input file. */
static const struct proto_limits remote_ctl_limits = {
	PROTO_BIT(PROTO_CTL_REQ), PROTO_MAX_JSON, PROTO_MAX_BIN,
	PROTO_BIT(PROTO_CTL_REQ)
};

struct write_req {
	uv_write_t req;
	uint8_t *buf;
};

static void conn_process(struct conn *c);

/* ---- lifetime ---- */

void conn_ref(struct conn *c)
{
	c->refs++;
}

void conn_unref(struct conn *c)
{
	if (--c->refs > 0)
		return;
	c->cap = c->scap = c->spool_inflight = 0; /* its charge goes back */
	if (conn_mem_update(c))
		conn_resume_paused(c->d);
	free(c->buf);
	free(c->sealed);
	proto_frame_clear(&c->spool_frame);
	conn_spool_free(c->spool);
	chan_clear(&c->ch);
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

void conn_close(struct conn *c, const char *why)
{
	struct gpud *d = c->d;

	if (c->closing)
		return;
	c->closing = 1;
	if (c->parked) {
		/* The parked claim holds a reference; give it back. */
		conn_set_parked(c, 0);
		c->busy = 0;
		conn_unref(c);
	}
	if (c->park_timer.data) {
		conn_ref(c);
		uv_close((uv_handle_t *)&c->park_timer, on_park_timer_closed);
	}
	/* gpuctl's connections come and go with every command (watch: one
	 * a second): routine, so debug. */
	if (why)
		GLOG(&d->log, c->is_ctl || c->remote_ctl ? GLOG_DEBUG : GLOG_INFO,
		     "close %s %s=%s reason=%s", c->peer,
		     c->is_ctl || c->remote_ctl ? "gpuctl" : "worker",
		     c->name[0] ? c->name : "-", why);
	if (c->prev)
		c->prev->next = c->next;
	else
		d->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->ops->closed)
		c->ops->closed(c);
	uv_close(&c->u.h, on_closed);
}

/* ---- memory: the budget for what connections buffer ---- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *out);
static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);

static void pause_reads(struct conn *c)
{
	if (c->read_paused || c->closing)
		return;
	uv_read_stop(&c->u.s);
	c->read_paused = 1;
	c->d->frame_paused++;
	LOG_DEBUG(&c->d->log, "reads paused %s %s: %" PRIu64 " of %" PRIu64
		  " bytes of frames buffered (--frame-memory)", c->peer,
		  c->name[0] ? c->name : "-", c->d->frame_mem,
		  c->d->cfg.frame_mem_max);
}

static void resume_reads(struct conn *c)
{
	if (!c->read_paused || c->closing)
		return;
	c->read_paused = 0;
	c->d->frame_paused--;
	if (uv_read_start(&c->u.s, on_alloc, on_read) != 0)
		conn_close(c, "cannot read again");
}

/* ---- an upload's attachment, streamed to a file ---- */

struct spool_write {
	uv_fs_t req;
	struct conn *c;
	uint8_t *buf;
	size_t len;
};

static void on_spool_written(uv_fs_t *req)
{
	struct spool_write *w = req->data;
	struct conn *c = w->c;
	ssize_t rc = req->result;

	uv_fs_req_cleanup(req);
	free(w->buf);
	c->spool_inflight = 0;
	if (conn_mem_update(c))
		conn_resume_paused(c->d);
	if (c->spool) {
		c->spool->written += w->len;
		if ((rc < 0 || (size_t)rc != w->len) && !c->spool->rc)
			c->spool->rc = rc < 0 ? gerr_from_errno((int)-rc)
					      : GERR_NOSPACE;
	}
	free(w);
	if (!c->closing && !c->in_process)
		conn_process(c);
	conn_unref(c);
}

/* Write len bytes at buf to the file (copied; one write at a time).
 * Returns 0 or closes c. */
static int spool_write(struct conn *c, const uint8_t *buf, size_t len)
{
	struct spool_write *w = malloc(sizeof(*w));
	uv_buf_t b;

	if (w)
		w->buf = malloc(len);
	if (!w || !w->buf) {
		free(w);
		conn_close(c, "out of memory");
		return GERR_NOMEM;
	}
	memcpy(w->buf, buf, len);
	w->c = c;
	w->len = len;
	w->req.data = w;
	b = uv_buf_init((char *)w->buf, (unsigned)len);
	if (uv_fs_write(c->d->loop, &w->req, c->spool->fd, &b, 1,
			(int64_t)c->spool->written, on_spool_written) != 0) {
		free(w->buf);
		free(w);
		conn_close(c, "cannot write the upload");
		return GERR_IO;
	}
	conn_ref(c);
	c->spool_inflight = len;
	if (conn_mem_update(c))
		conn_resume_paused(c->d);
	return 0;
}

void conn_resume_paused(struct gpud *d)
{
	struct conn *c, *next;

	if (!d->frame_paused || d->frame_mem >= d->cfg.frame_mem_max)
		return;
	for (c = d->conns; c && d->frame_paused; c = next) {
		next = c->next;
		if (c->read_paused && !conn_held_back(c))
			resume_reads(c);
	}
}

/* ---- writing ---- */

static void on_written(uv_write_t *req, int status)
{
	struct write_req *w = (struct write_req *)req;
	struct conn *c = req->handle->data;

	(void)status;
	free(w->buf);
	free(w);
	c->written_ms = uv_now(c->d->loop);
	/* The peer reads its replies again: its waiting frames go on. */
	if (!c->closing && !c->in_process && !c->busy && !c->spool_inflight &&
	    (c->len || c->read_paused) && !conn_replies_unread(c))
		conn_process(c);
}

/* Queue len bytes (buf: malloc'ed, taken). */
static void write_bytes(struct conn *c, uint8_t *buf, size_t len)
{
	struct write_req *w = malloc(sizeof(*w));

	if (uv_stream_get_write_queue_size(&c->u.s) == 0)
		c->written_ms = uv_now(c->d->loop);

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

void conn_send(struct conn *c, enum proto_type type, json_t *msg,
	       const void *bin, size_t bin_len)
{
	uint8_t *buf = NULL;
	size_t len = 0;

	if (c->closing || !msg) {
		json_decref(msg);
		return;
	}
	if (proto_frame_encode(type, msg, bin, bin_len, &buf, &len) != 0) {
		json_decref(msg);
		/* gpuctl gets a reason instead of a closed socket. */
		msg = type == PROTO_CTL_REPLY
			? json_pack("{s:b, s:s}", "ok", 0, "error",
				    "the reply does not fit in one frame")
			: NULL;
		if (!msg || proto_frame_encode(type, msg, NULL, 0, &buf, &len)) {
			json_decref(msg);
			conn_close(c, "cannot encode reply");
			return;
		}
	}
	json_decref(msg);
	if (!c->is_ctl) {
		uint8_t *sealed = NULL;
		size_t slen = 0;
		int rc = chan_seal(&c->ch, buf, len, &sealed, &slen);

		free(buf);
		if (rc) {
			conn_close(c, rc == GERR_NOMEM ? "out of memory"
						       : "secure channel not open");
			return;
		}
		buf = sealed;
		len = slen;
	}
	write_bytes(c, buf, len);
}

void conn_send_error(struct conn *c, int code, const char *msg,
		     int64_t lease, uint64_t epoch)
{
	struct msg_error e = { .code = code, .message = msg };
	json_t *j = NULL;

	if (lease) {
		e.lease = (uint64_t)lease;
		e.epoch = epoch;
	}
	msg_error_encode(&e, &j); /* j stays NULL when it fails */
	conn_send(c, PROTO_ERROR, j, NULL, 0);
}

void conn_step_done(struct conn *c)
{
	c->busy = 0;
	if (!c->closing && !c->in_process)
		conn_process(c);
	conn_unref(c);
}

/* ---- dispatch ---- */

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

static int dispatch(struct conn *c, const struct proto_frame *f)
{
	const struct conn_handlers *h = c->ops;

	if (c->is_ctl || (c->remote_ctl && c->state == CONN_READY)) {
		if (f->type != PROTO_CTL_REQ || !h->control)
			return GERR_PROTO;
		conn_ref(c);
		c->busy = 1;
		json_incref(f->json);
		h->control(c->d, c->role, c->name[0] ? c->name : NULL, f->json,
			   f->bin, f->bin_len, control_done, c);
		return 0;
	}
	switch (c->state) {
	case CONN_HELLO:
		if (f->type == PROTO_CTL_HELLO && h->ctl_hello)
			return h->ctl_hello(c, f->json);
		return f->type == PROTO_HELLO && h->hello ? h->hello(c, f->json)
							  : GERR_PROTO;
	case CONN_AUTH:
		return GERR_PROTO;
	case CONN_READY:
		break;
	}
	switch (f->type) {
	case PROTO_CLAIM:
		return h->claim ? h->claim(c, f->json) : GERR_PROTO;
	case PROTO_HEARTBEAT:
		return h->heartbeat ? h->heartbeat(c, f->json) : GERR_PROTO;
	case PROTO_CHECKPOINT:
	case PROTO_RESULT: {
		struct conn_spool *sp = c->spool;

		c->spool = NULL;
		if (!h->upload) {
			conn_spool_free(sp);
			return GERR_PROTO;
		}
		return h->upload(c, f, f->type == PROTO_RESULT, sp);
	}
	case PROTO_RELEASE:
		return h->release ? h->release(c, f->json) : GERR_PROTO;
	case PROTO_FETCH:
		return h->fetch ? h->fetch(c, f->json) : GERR_PROTO;
	case PROTO_WITHDRAW:
		return h->withdraw ? h->withdraw(c, f->json) : GERR_PROTO;
	default:
		return GERR_PROTO;
	}
}

static int logged_in(const struct conn *c)
{
	return c->is_ctl || c->state == CONN_READY;
}

/* Close c for a frame its limits refuse (or that does not parse). */
static void bad_frame(struct conn *c, int rc, const char *err)
{
	char why[260];

	snprintf(why, sizeof(why), "bad frame: %s", err[0] ? err : gerr_str(rc));
	if (rc == GERR_TOOBIG)
		conn_send_error(c, rc, why, 0, 0);
	conn_close(c, why);
}

/* Hand a frame to its handler; 0, or c is closed. */
static int handle(struct conn *c, struct proto_frame *f)
{
	int type = f->type;
	int rc = dispatch(c, f);

	proto_frame_clear(f);
	if (rc) {
		char why[160];
		snprintf(why, sizeof(why), "%s (%s in state %d)",
			 rc == GERR_PROTO ? "unexpected or invalid message"
					  : gerr_str(rc),
			 proto_type_name(type), (int)c->state);
		if (rc == GERR_PROTO)
			conn_send_error(c, GERR_PROTO, why, 0, 0);
		conn_close(c, why);
	}
	return rc;
}

static const struct proto_limits *limits_now(const struct conn *c)
{
	if (c->remote_ctl && c->state == CONN_READY)
		return c->role == AUTH_ROLE_ADMIN ? &remote_ctl_limits
						  : &viewer_ctl_limits;
	return &state_limits[c->state];
}

/* A logged-in worker's upload: its attachment streams to a file. */
static int streams(const struct conn *c, const uint8_t *p, size_t n)
{
	return !c->is_ctl && !c->remote_ctl && c->state == CONN_READY &&
	       n >= 6 && (p[5] == PROTO_CHECKPOINT || p[5] == PROTO_RESULT);
}

/* The bytes of an upload's attachment at buf (n of them) go to its file,
 * a write at a time; once all are written its frame is handled. Returns
 * the bytes taken. */
static size_t spool_feed(struct conn *c, const uint8_t *buf, size_t n)
{
	struct conn_spool *sp = c->spool;
	uint64_t left = sp->len - sp->written - c->spool_inflight;

	if (c->spool_inflight)
		return 0;
	if (left == 0) {
		struct proto_frame f = c->spool_frame;

		c->spool_frame = (struct proto_frame){ 0 };
		handle(c, &f);
		return 0;
	}
	if (n > left)
		n = (size_t)left;
	if (sp->rc) { /* the file failed: the bytes are dropped */
		sp->written += n;
		return n;
	}
	if (n > SPOOL_WRITE_MAX)
		n = SPOOL_WRITE_MAX;
	if (n == 0 || spool_write(c, buf, n))
		return 0;
	return n;
}

static void conn_process(struct conn *c)
{
	size_t off = 0;

	conn_ref(c);
	c->in_process = 1;
	if (c->parked && !c->closing && c->len > 0 && c->ops->unpark)
		c->ops->unpark(c);
	while (!c->busy && !c->closing && !conn_replies_unread(c) &&
	       (off < c->len || (c->spool && !c->spool_inflight &&
				 c->spool->written == c->spool->len))) {
		struct proto_frame f;
		size_t used = 0, need = 0;
		char err[200] = "";
		int rc, stream;

		if (c->spool) {
			size_t n = spool_feed(c, c->buf ? c->buf + off : NULL,
					      c->len - off);

			if (n == 0 && c->spool)
				break; /* a write is under way */
			off += n;
			continue;
		}
		/* gpuctl's socket is its owner's: the frame limits suffice. */
		rc = c->is_ctl ? 0 : proto_header_limit(c->buf + off,
			c->len - off, limits_now(c), err, sizeof(err));
		stream = streams(c, c->buf + off, c->len - off);
		if (!rc && stream)
			rc = proto_frame_parse_head(c->buf + off, c->len - off,
						    &f, &used, &need, err,
						    sizeof(err));
		else if (!rc)
			rc = proto_frame_parse(c->buf + off, c->len - off, &f,
					       &used, &need, err, sizeof(err));
		if (rc == GERR_AGAIN)
			break;
		if (rc) {
			bad_frame(c, rc, err);
			break;
		}
		off += used;
		if (stream && f.bin_len > 0) {
			rc = conn_spool_begin(c, &f, err, sizeof(err));
			if (rc) {
				proto_frame_clear(&f);
				bad_frame(c, rc, err);
				break;
			}
			c->spool_frame = f;
			continue;
		}
		if (handle(c, &f))
			break;
	}
	if (off > 0 && !c->closing) {
		c->progress_ms = uv_now(c->d->loop);
		memmove(c->buf, c->buf + off, c->len - off);
		c->len -= off;
	}
	/* A buffer goes back once it is handled: a connection between
	 * frames holds nothing (invariant 3), one mid-frame little. */
	if (c->len == 0 && c->buf) {
		free(c->buf);
		c->buf = NULL;
		c->cap = 0;
	} else if (c->cap > 4 * READ_CHUNK && c->len <= READ_CHUNK) {
		uint8_t *nb = realloc(c->buf, 2 * READ_CHUNK);
		if (nb) {
			c->buf = nb;
			c->cap = 2 * READ_CHUNK;
		}
	}
	if (conn_mem_update(c))
		conn_resume_paused(c->d);
	if (c->read_paused && !conn_held_back(c) &&
	    c->d->frame_mem < c->d->cfg.frame_mem_max)
		resume_reads(c);
	c->in_process = 0;
	conn_unref(c);
}

/* ---- reading ---- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *out)
{
	struct conn *c = h->data;
	/* Before login a read is small: one login frame is all it may hold;
	 * so is a frame's first (most frames are small). */
	int first = c->len == 0 && c->slen == 0;
	size_t chunk = logged_in(c) && (c->is_ctl || !first) ? READ_CHUNK
							    : LOGIN_CHUNK;
	/* TCP reads sealed bytes; their plaintext goes to buf (unseal). */
	uint8_t **buf = c->is_ctl ? &c->buf : &c->sealed;
	size_t *len = c->is_ctl ? &c->len : &c->slen;
	size_t *cap = c->is_ctl ? &c->cap : &c->scap;

	(void)suggested;
	*out = uv_buf_init(NULL, 0); /* no read now: on_read pauses */
	if (conn_held_back(c))
		return;
	if (*cap - *len < chunk) {
		size_t ncap = c->is_ctl ? (*cap ? *cap * 2 : 2 * chunk)
					: *len + chunk;
		uint8_t *nb;
		while (ncap - *len < chunk)
			ncap *= 2;
		/* The sealed bytes and the plaintext they open: both count. */
		if (conn_budgeted(c) &&
		    !conn_mem_fits(c->d, 2 * (ncap - *cap), first
				   ? CONN_MEM_ALL : CONN_MEM_MIDFRAME))
			return;
		nb = realloc(*buf, ncap);
		if (!nb)
			return;
		*buf = nb;
		*cap = ncap;
	}
	/* A sealed read takes at most a chunk, and chan_open takes it all:
	 * what waits stays under MAX_SEALED. */
	*out = uv_buf_init((char *)*buf + *len, (unsigned)(c->is_ctl
			   ? *cap - *len : chunk));
}

/* The bytes read so far through TLS: the handshake (whose answers are
 * written here), then records, whose plaintext joins buf. Returns 0, or
 * closes c. */
static int unseal(struct conn *c)
{
	int in = logged_in(c);
	size_t used = 0, olen = 0;
	uint8_t *out = NULL;
	char err[300] = "";
	int rc = 0;

	if (c->ch.state == CHAN_NONE)
		rc = chan_server_start(&c->ch, &c->d->identity, err,
				       sizeof(err));
	if (rc == 0)
		rc = chan_open(&c->ch, c->sealed, c->slen, &used, &c->buf,
			       &c->len, &c->cap, in ? MAX_BUFFER : LOGIN_BUFFER,
			       err, sizeof(err));
	/* Handshake messages, or the alert that says why it failed. */
	chan_take_output(&c->ch, &out, &olen);
	if (out)
		write_bytes(c, out, olen);
	if (rc) {
		char why[340];

		snprintf(why, sizeof(why), "TLS: %s", err);
		conn_close(c, rc == GERR_DONE ? "peer closed" : why);
		return rc;
	}
	if (c->closing)
		return GERR_IO;
	memmove(c->sealed, c->sealed + used, c->slen - used);
	c->slen -= used;
	return 0;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct conn *c = s->data;

	if (n == UV_ENOBUFS) { /* on_alloc found no room: wait for it */
		pause_reads(c);
		return;
	}
	if (n < 0) {
		conn_close(c, n == UV_EOF ? "peer closed" : uv_strerror((int)n));
		return;
	}
	if (n == 0)
		return;
	c->active_ms = uv_now(c->d->loop);
	if (c->len == 0 && c->slen == 0)
		c->progress_ms = c->active_ms; /* a new frame starts */
	if (!c->is_ctl) {
		c->slen += (size_t)n;
		if (c->slen > MAX_SEALED) {
			conn_close(c, "peer sent more than a record");
			return;
		}
		if (unseal(c))
			return;
		if (c->slen == 0) { /* nothing sealed waits: no buffer */
			free(c->sealed);
			c->sealed = NULL;
			c->scap = 0;
		}
	} else {
		c->len += (size_t)n;
	}
	if (c->len > MAX_BUFFER) {
		conn_close(c, "peer sent more than the frame limit");
		return;
	}
	if (!logged_in(c) && c->len > LOGIN_BUFFER) {
		conn_close(c, "peer sent more than login needs");
		return;
	}
	conn_process(c);
}

static struct conn *conn_new(struct gpud *d, int is_ctl,
			     const struct conn_handlers *ops)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->d = d;
	c->ops = ops;
	c->is_ctl = is_ctl;
	c->role = is_ctl ? AUTH_ROLE_ADMIN : 0;
	c->refs = 1;
	c->u.h.data = c;
	return c;
}

int conn_open_fd(struct gpud *d, int fd, int is_ctl, const char *peer,
		 const struct conn_handlers *ops)
{
	struct conn *c = conn_new(d, is_ctl, ops);
	int rc;

	if (!c) {
		close(fd);
		return GERR_NOMEM;
	}
	if (is_ctl) {
		/* The jobs it submits are its Unix user's. */
		if (peer_user_of_fd(fd, c->name, sizeof(c->name)))
			c->name[0] = '\0';
		uv_pipe_init(d->loop, &c->u.pipe, 0);
		rc = uv_pipe_open(&c->u.pipe, fd);
	} else {
		uv_tcp_init(d->loop, &c->u.tcp);
		rc = uv_tcp_open(&c->u.tcp, fd);
		if (rc == 0)
			uv_tcp_nodelay(&c->u.tcp, 1);
	}
	if (rc)
		close(fd); /* the handle did not take it; it closes alone */
	snprintf(c->peer, sizeof(c->peer), "%s", is_ctl ? "control" : peer);
	c->opened_ms = c->active_ms = c->progress_ms = c->written_ms =
		uv_now(d->loop);
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
