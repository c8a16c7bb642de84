/* wconn.c - gpuworker's transport to gpud (see wconn.h).
 *
 * Invariants:
 *  1. There is at most one TCP connection (w->tcp); a new one is made only
 *     after the old one's close callback ran.
 *  2. The read buffer holds at most one frame's worth (FRAME_MAX) and is
 *     given back after a big frame.
 *  3. Every frame the worker sends expects an answer: the watchdog counts
 *     the silence from the first write since the last frame read.
 *  5. Every byte after the TCP connect is TLS 1.3's (chan.h): the
 *     handshake first, which only the holder of the pinned gpud key
 *     completes, then records; a record that does not open closes the
 *     connection before any of it reaches a frame.
 *  4. Reconnects wait backoff_s (x0.75..1.25 jitter), which doubles up to
 *     BACKOFF_MAX_S and drops back to BACKOFF_MIN_S with the first frame
 *     other than ERROR read on a READY connection.
 */
#include "wconn.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "chan.h"
#include "gerr.h"

#define FRAME_MAX ((size_t)PROTO_HEADER_LEN + PROTO_MAX_JSON + PROTO_MAX_BIN)
#define READ_CHUNK ((size_t)64 * 1024)
#define SHRINK_ABOVE ((size_t)1 << 20)

#define BACKOFF_MIN_S 0.2
#define BACKOFF_MAX_S 30.0
#define HANDSHAKE_TIMEOUT_MS 30000
#define WATCHDOG_MS 5000
#define SILENCE_MIN_MS 60000      /* at least; 3 heartbeats when longer */

/* One TCP connection. Owned by the wconn while w->tcp points to it; freed
 * in its close callback (after all its write callbacks ran). */
struct wconn_tcp {
	uv_tcp_t handle;
	uv_connect_t connect_req;
	struct wconn *w;
	uint8_t *buf;       /* frames read, at most FRAME_MAX bytes */
	size_t len, cap;
	struct chan ch;
	uint8_t *sealed;    /* bytes read, not yet unsealed */
	size_t slen, scap;
	size_t need;        /* bytes the next frame needs in total, if known */
	int closing;
};

struct write_req {
	uv_write_t req;
	struct wconn_tcp *t;
	uint8_t *buf;       /* the encoded frame */
};

static const char *const state_names[WCONN_COUNT] = {
	"idle", "resolving", "connecting", "secure", "hello", "auth", "ready",
	"closing", "stopped",
};

#define BIT(s) (1u << (s))

static const unsigned state_next[WCONN_COUNT] = {
	[WCONN_IDLE] = BIT(WCONN_RESOLVING) | BIT(WCONN_STOPPED),
	[WCONN_RESOLVING] = BIT(WCONN_CONNECTING) | BIT(WCONN_IDLE) |
			    BIT(WCONN_STOPPED),
	[WCONN_CONNECTING] = BIT(WCONN_SECURE) | BIT(WCONN_CLOSING),
	[WCONN_SECURE] = BIT(WCONN_HELLO) | BIT(WCONN_CLOSING),
	[WCONN_HELLO] = BIT(WCONN_AUTH) | BIT(WCONN_CLOSING),
	[WCONN_AUTH] = BIT(WCONN_READY) | BIT(WCONN_CLOSING),
	[WCONN_READY] = BIT(WCONN_CLOSING),
	[WCONN_CLOSING] = BIT(WCONN_CONNECTING) | BIT(WCONN_IDLE) |
			  BIT(WCONN_STOPPED),
	[WCONN_STOPPED] = 0,
};

static void try_connect(struct wconn *w);
static void on_reconnect_timer(uv_timer_t *t);
static void on_watchdog_timer(uv_timer_t *t);

void wconn_move(struct wconn *w, enum wconn_state to)
{
	assert(state_next[w->state] & BIT(to));
	LOG_DEBUG(w->log, "connection %s -> %s", state_names[w->state],
		  state_names[to]);
	w->state = to;
}

const char *wconn_state_name(enum wconn_state s)
{
	return (unsigned)s < WCONN_COUNT ? state_names[s] : "?";
}

void wconn_set_heartbeat(struct wconn *w, uint64_t ms)
{
	w->heartbeat_ms = ms;
}

/* ---- sending ---- */

static void on_written(uv_write_t *req, int status);

/* Queue len bytes (buf: malloc'ed, taken). Returns 0, or an error after
 * closing the connection. */
static int write_bytes(struct wconn *w, struct wconn_tcp *t, uint8_t *buf,
		       size_t len)
{
	struct write_req *wr = calloc(1, sizeof(*wr));
	uv_buf_t b;
	int rc;

	if (!wr) {
		free(buf);
		wconn_close(w, "out of memory");
		return GERR_NOMEM;
	}
	wr->buf = buf;
	wr->t = t;
	wr->req.data = wr;
	b = uv_buf_init((char *)buf, (unsigned)len);
	rc = uv_write(&wr->req, (uv_stream_t *)&t->handle, &b, 1, on_written);
	if (rc < 0) {
		free(wr->buf);
		free(wr);
		wconn_close(w, "write failed: %s", uv_strerror(rc));
		return GERR_IO;
	}
	return 0;
}

static void on_written(uv_write_t *req, int status)
{
	struct write_req *wr = req->data;
	struct wconn_tcp *t = wr->t;
	struct wconn *w = t->w;

	free(wr->buf);
	free(wr);
	if (t->closing || w->tcp != t)
		return;
	if (status < 0) {
		wconn_close(w, "write failed: %s", uv_strerror(status));
		return;
	}
	/* Invariant 3: start the silence clock unless it runs already. */
	if (!w->wait_since_ms)
		w->wait_since_ms = uv_now(w->loop);
}

int wconn_send(struct wconn *w, enum proto_type type, json_t *header,
	       const void *bin, size_t bin_len)
{
	struct wconn_tcp *t = w->tcp;
	uint8_t *frame = NULL, *sealed = NULL;
	size_t len = 0, slen = 0;
	int rc;

	if (!t || t->closing) {
		json_decref(header);
		return GERR_STATE;
	}
	if (!header) {
		wconn_close(w, "cannot build %s", proto_type_name(type));
		return GERR_NOMEM;
	}
	rc = proto_frame_encode(type, header, bin, bin_len, &frame, &len);
	json_decref(header);
	if (rc == 0) {
		rc = chan_seal(&t->ch, frame, len, &sealed, &slen);
		free(frame);
	}
	if (rc < 0) {
		wconn_close(w, "cannot encode %s: %s", proto_type_name(type),
			    gerr_str(rc));
		return rc;
	}
	rc = write_bytes(w, t, sealed, slen);
	if (rc == 0)
		LOG_DEBUG(w->log, "sent %s bytes=%zu", proto_type_name(type),
			  len);
	return rc;
}

/* ---- reading ---- */

/* Sealed bytes buffered: a read (chan_open takes all of it; GnuTLS keeps
 * at most one partial record). */
#define SEALED_MAX ((size_t)CHAN_RECORD_MAX + CHAN_RECORD_OVERHEAD + \
		    READ_CHUNK)

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *ret)
{
	struct wconn_tcp *t = h->data;

	(void)suggested;
	if (t->scap - t->slen < READ_CHUNK) {
		size_t ncap = t->scap ? 2 * t->scap : 2 * READ_CHUNK;
		uint8_t *p;

		while (ncap - t->slen < READ_CHUNK)
			ncap *= 2;
		p = realloc(t->sealed, ncap);
		if (!p) {
			*ret = uv_buf_init(NULL, 0); /* read_cb gets UV_ENOBUFS */
			return;
		}
		t->sealed = p;
		t->scap = ncap;
	}
	/* One chunk a read: what waits to be opened stays under SEALED_MAX. */
	*ret = uv_buf_init((char *)t->sealed + t->slen, (unsigned)READ_CHUNK);
}

static void parse_frames(struct wconn *w, struct wconn_tcp *t)
{
	size_t off = 0;

	while (!t->closing) {
		struct proto_frame f;
		size_t used = 0, need = 0;
		char err[256] = "";
		int rc = proto_frame_parse(t->buf + off, t->len - off, &f, &used,
					   &need, err, sizeof(err));
		if (rc == GERR_AGAIN) {
			t->need = need;
			break;
		}
		if (rc < 0) {
			wconn_close(w, "bad frame from gpud: %s",
				    err[0] ? err : gerr_str(rc));
			return;
		}
		t->need = 0;
		LOG_DEBUG(w->log, "received %s bin=%zu",
			  proto_type_name(f.type), f.bin_len);
		w->wait_since_ms = 0;
		/* Invariant 4: this connection works (an ERROR does not
		 * say so: one that closes it keeps the backoff growing). */
		if (w->state == WCONN_READY && f.type != PROTO_ERROR)
			w->backoff_s = BACKOFF_MIN_S;
		w->ops.frame(w->opaque, &f);
		proto_frame_clear(&f);
		off += used;
	}
	if (t->closing || off == 0)
		return;
	memmove(t->buf, t->buf + off, t->len - off);
	t->len -= off;
	/* Invariant 2: give back the memory of a big frame (a LEASE with its
	 * checkpoint). */
	if (t->len == 0 && t->cap > SHRINK_ABOVE) {
		free(t->buf);
		t->buf = NULL;
		t->cap = 0;
	}
}

/* Send what the channel has to send (handshake messages, an alert). */
static int flush_chan(struct wconn *w, struct wconn_tcp *t)
{
	uint8_t *out = NULL;
	size_t olen = 0;

	chan_take_output(&t->ch, &out, &olen);
	return out ? write_bytes(w, t, out, olen) : 0;
}

/* The bytes read so far through TLS: gpud's handshake, then records whose
 * plaintext joins buf. Returns 0, or an error after closing. */
static int unseal(struct wconn *w, struct wconn_tcp *t)
{
	size_t used = 0;
	char err[400] = "";
	int rc;

	rc = chan_open(&t->ch, t->sealed, t->slen, &used, &t->buf, &t->len,
		       &t->cap, FRAME_MAX, err, sizeof(err));
	if (flush_chan(w, t))
		return GERR_IO;
	if (rc) {
		if (w->state == WCONN_SECURE)
			LOG_ERROR(w->log, "refusing gpud at %s:%s: %s",
				  w->host, w->port, err);
		wconn_close(w, "TLS: %s", err);
		return rc;
	}
	memmove(t->sealed, t->sealed + used, t->slen - used);
	t->slen -= used;
	if (w->state == WCONN_SECURE && chan_is_open(&t->ch)) {
		wconn_move(w, WCONN_HELLO);
		w->ops.opened(w->opaque);
		if (t->closing)
			return GERR_STATE;
	}
	return 0;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct wconn_tcp *t = s->data;
	struct wconn *w = t->w;

	(void)buf;
	if (t->closing || nread == 0)
		return;
	if (nread < 0) {
		wconn_close(w, "%s", nread == UV_EOF ? "gpud closed the connection"
						       : uv_strerror((int)nread));
		return;
	}
	t->slen += (size_t)nread;
	if (t->slen > SEALED_MAX) {
		wconn_close(w, "gpud sent more than a record");
		return;
	}
	if (unseal(w, t) == 0)
		parse_frames(w, t);
}

/* ---- connecting ---- */

static void schedule_reconnect(struct wconn *w)
{
	uint32_t r;
	double delay;

	auth_random(&r, sizeof(r));
	/* Jitter (x0.75..1.25) keeps many workers from reconnecting in
	 * lockstep after gpud restarts. */
	delay = w->backoff_s * (0.75 + 0.5 * ((double)r / 4294967296.0));
	if (delay > BACKOFF_MAX_S)
		delay = BACKOFF_MAX_S;
	w->backoff_s *= 2;
	if (w->backoff_s > BACKOFF_MAX_S)
		w->backoff_s = BACKOFF_MAX_S;
	LOG_INFO(w->log, "reconnecting in %.1f s", delay);
	uv_timer_start(&w->reconnect_timer, on_reconnect_timer,
		       (uint64_t)(delay * 1000), 0);
}

static void free_addresses(struct wconn *w)
{
	if (w->ai_list)
		uv_freeaddrinfo(w->ai_list);
	w->ai_list = w->ai_next = NULL;
}

static void on_tcp_closed(uv_handle_t *h)
{
	struct wconn_tcp *t = h->data;
	struct wconn *w = t->w;
	int next = w->try_next_addr;

	free(t->buf);
	free(t->sealed);
	chan_clear(&t->ch);
	free(t);
	w->tcp = NULL;
	w->try_next_addr = 0;
	if (w->stopping) {
		free_addresses(w);
		wconn_move(w, WCONN_STOPPED);
		return;
	}
	if (next && w->ai_next) {
		try_connect(w);
		return;
	}
	free_addresses(w);
	uv_timer_stop(&w->watchdog_timer);
	wconn_move(w, WCONN_IDLE);
	if (w->ops.closed(w->opaque) || w->stopping)
		return;
	schedule_reconnect(w);
}

void wconn_close(struct wconn *w, const char *fmt, ...)
{
	struct wconn_tcp *t = w->tcp;
	char why[512];
	va_list ap;

	if (!t || t->closing)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (w->state == WCONN_CONNECTING)
		LOG_DEBUG(w->log, "connect attempt failed: %s", why);
	else if (!w->stopping)
		LOG_WARN(w->log, "disconnected from %s:%s: %s", w->host, w->port,
			 why);
	t->closing = 1;
	if (w->state == WCONN_READY) {
		w->wait_since_ms = 0;
		w->ops.lost(w->opaque);
	}
	wconn_move(w, WCONN_CLOSING);
	uv_close((uv_handle_t *)&t->handle, on_tcp_closed);
}

static void on_connected(uv_connect_t *req, int status)
{
	struct wconn_tcp *t = req->data;
	struct wconn *w = t->w;
	char err[300] = "";

	if (status == UV_ECANCELED || t->closing)
		return;
	if (status < 0) {
		w->try_next_addr = 1;
		LOG_WARN(w->log, "cannot connect to %s:%s: %s", w->host, w->port,
			 uv_strerror(status));
		wconn_close(w, "%s", uv_strerror(status));
		return;
	}
	free_addresses(w);
	uv_tcp_nodelay(&t->handle, 1);
	/* Notice a vanished gpud host even when nothing is being sent. */
	uv_tcp_keepalive(&t->handle, 1, 30);
	status = uv_read_start((uv_stream_t *)&t->handle, on_alloc, on_read);
	if (status < 0) {
		wconn_close(w, "read failed: %s", uv_strerror(status));
		return;
	}
	if (chan_client_start(&t->ch, w->mine, w->gpud_key, err,
			      sizeof(err))) {
		wconn_close(w, "TLS: %s", err);
		return;
	}
	wconn_move(w, WCONN_SECURE);
	flush_chan(w, t); /* the ClientHello */
}

/* Try the next resolved address (IPv6 and IPv4 of "localhost", say). */
static void try_connect(struct wconn *w)
{
	struct addrinfo *ai = w->ai_next;
	struct wconn_tcp *t;
	int rc;

	if (!ai) {
		free_addresses(w);
		wconn_move(w, WCONN_IDLE);
		schedule_reconnect(w);
		return;
	}
	w->ai_next = ai->ai_next;
	t = calloc(1, sizeof(*t));
	if (!t || uv_tcp_init(w->loop, &t->handle) < 0) {
		free(t);
		LOG_ERROR(w->log, "out of memory for a connection");
		free_addresses(w);
		wconn_move(w, WCONN_IDLE);
		schedule_reconnect(w);
		return;
	}
	t->w = w;
	t->handle.data = t;
	t->connect_req.data = t;
	w->tcp = t;
	w->start_ms = uv_now(w->loop);
	wconn_move(w, WCONN_CONNECTING);
	if (!uv_is_active((uv_handle_t *)&w->watchdog_timer))
		uv_timer_start(&w->watchdog_timer, on_watchdog_timer,
			       WATCHDOG_MS, WATCHDOG_MS);
	rc = uv_tcp_connect(&t->connect_req, &t->handle, ai->ai_addr,
			    on_connected);
	if (rc < 0) {
		w->try_next_addr = 1;
		wconn_close(w, "%s", uv_strerror(rc));
	}
}

static void on_resolved(uv_getaddrinfo_t *req, int status,
			struct addrinfo *res)
{
	struct wconn *w = req->data;

	if (w->stopping) {
		if (res)
			uv_freeaddrinfo(res);
		wconn_move(w, WCONN_STOPPED);
		return;
	}
	if (status < 0) {
		LOG_WARN(w->log, "cannot resolve %s: %s", w->host,
			 uv_strerror(status));
		wconn_move(w, WCONN_IDLE);
		schedule_reconnect(w);
		return;
	}
	w->ai_list = w->ai_next = res;
	try_connect(w);
}

void wconn_start(struct wconn *w)
{
	struct addrinfo hints = { 0 };
	int rc;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	wconn_move(w, WCONN_RESOLVING);
	w->gai.data = w;
	rc = uv_getaddrinfo(w->loop, &w->gai, on_resolved, w->host, w->port,
			    &hints);
	if (rc < 0) {
		LOG_WARN(w->log, "cannot resolve %s: %s", w->host,
			 uv_strerror(rc));
		wconn_move(w, WCONN_IDLE);
		schedule_reconnect(w);
	}
}

/* ---- timers ---- */

static void on_reconnect_timer(uv_timer_t *t)
{
	struct wconn *w = t->data;

	if (w->state == WCONN_IDLE && !w->stopping)
		wconn_start(w);
}

static void on_watchdog_timer(uv_timer_t *t)
{
	struct wconn *w = t->data;
	uint64_t now = uv_now(w->loop);
	uint64_t silence = 3 * w->heartbeat_ms;

	if (silence < SILENCE_MIN_MS)
		silence = SILENCE_MIN_MS;
	switch (w->state) {
	case WCONN_CONNECTING:
	case WCONN_SECURE:
	case WCONN_HELLO:
	case WCONN_AUTH:
		if (now - w->start_ms > HANDSHAKE_TIMEOUT_MS) {
			if (w->state == WCONN_CONNECTING)
				w->try_next_addr = 1;
			wconn_close(w, "no handshake within %d s",
				    HANDSHAKE_TIMEOUT_MS / 1000);
		}
		break;
	case WCONN_READY:
		/* A peer that stopped answering (host gone, gpud hung). */
		if (w->wait_since_ms && now - w->wait_since_ms > silence)
			wconn_close(w, "no answer from gpud for %" PRIu64 " s",
				    (now - w->wait_since_ms) / 1000);
		break;
	default:
		break;
	}
}

/* ---- lifecycle ---- */

void wconn_init(struct wconn *w, uv_loop_t *loop, const struct glog *log,
		const char *host, const char *port,
		const struct chan_identity *mine,
		const uint8_t gpud_key[CHAN_PK_LEN],
		const struct wconn_ops *ops, void *opaque)
{
	memset(w, 0, sizeof(*w));
	w->mine = mine;
	memcpy(w->gpud_key, gpud_key, CHAN_PK_LEN);
	w->loop = loop;
	w->log = log;
	w->host = host;
	w->port = port;
	w->ops = *ops;
	w->opaque = opaque;
	w->backoff_s = BACKOFF_MIN_S;
	w->heartbeat_ms = 10000;
	uv_timer_init(loop, &w->reconnect_timer);
	uv_timer_init(loop, &w->watchdog_timer);
	w->reconnect_timer.data = w;
	w->watchdog_timer.data = w;
}

void wconn_stop(struct wconn *w)
{
	if (w->stopping)
		return;
	w->stopping = 1;
	uv_close((uv_handle_t *)&w->reconnect_timer, NULL);
	uv_close((uv_handle_t *)&w->watchdog_timer, NULL);
	switch (w->state) {
	case WCONN_IDLE:
		wconn_move(w, WCONN_STOPPED);
		break;
	case WCONN_RESOLVING:
		/* on_resolved moves to STOPPED (with UV_EAI_CANCELED). */
		uv_cancel((uv_req_t *)&w->gai);
		break;
	case WCONN_CLOSING:
	case WCONN_STOPPED:
		break; /* on_tcp_closed moves to STOPPED */
	default:
		wconn_close(w, "worker stopping");
		break;
	}
}

void wconn_free(struct wconn *w)
{
	if (w)
		free_addresses(w);
}
