/* ctl_client.c - gpuctl's transport: one request per connection to gpud's
 * control socket, or to a remote gpud over TLS 1.3 with a credential's key
 * (chan.h), in proto.h frames (ctl_client.h). Every wait is bounded by a
 * deadline (poll on a non-blocking socket). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "auth.h"
#include "chan.h"
#include "clock.h"
#include "ctl_client.h"
#include "ctl_text.h"
#include "gerr.h"
#include "msg.h"
#include "proto.h"

/* Until deadline (gclock_mono seconds), for events on fd: 0 when ready,
 * -1 with errno ETIMEDOUT when the deadline passed first. */
static int wait_fd(int fd, short events, double deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		double left = deadline - gclock_mono();
		int r;

		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* An error for people: to stderr, or kept in q (ctl_client.h) with its
 * class, the failure's being that of its last line. */
__attribute__((format(printf, 3, 4)))
static void say(struct ctl_quiet *q, int transient, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (!q) {
		fputs("gpuctl: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	} else {
		size_t used = strlen(q->why), cap = sizeof(q->why);

		/* Room for "gpuctl: ", a few characters and "\n". */
		if (used + 16 < cap) {
			int n = snprintf(q->why + used, cap - used - 1, "gpuctl: ");
			used += (size_t)n;
			vsnprintf(q->why + used, cap - used - 1, fmt, ap);
			used = strlen(q->why);
			q->why[used] = '\n';
			q->why[used + 1] = '\0';
		}
		q->transient = transient;
	}
	va_end(ap);
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -1 : 0;
}

/* A local connect's failures that a gpud restart explains: no socket
 * yet, nobody listening, a full backlog. */
static int local_transient(int e)
{
	return e == ENOENT || e == ECONNREFUSED || e == EAGAIN || e == ETIMEDOUT;
}

static int ctl_connect(const char *path, struct ctl_quiet *q)
{
	struct sockaddr_un sa;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		say(q, 0, "socket path too long: %s", path);
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    set_nonblock(fd) != 0) {
		int e = errno;

		say(q, local_transient(e), "cannot reach gpud at %s: %s", path,
		    strerror(e));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* All n bytes to fd before deadline (a non-blocking socket; EINTR
 * retried): 0 or -1 (errno says why; ETIMEDOUT for the deadline). */
static int write_until(int fd, const uint8_t *p, size_t n, double deadline)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (wait_fd(fd, POLLOUT, deadline))
				return -1;
			continue;
		}
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int ctl_write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* One connection to gpud: plain frames on the Unix socket, TLS records
 * (chan.h) over TCP. */
struct ctl_conn {
	int fd;
	int sealed;
	struct chan ch;
	uint8_t *raw;           /* bytes read, not yet through TLS */
	size_t rlen, rcap;
	uint8_t *buf;           /* frames read */
	size_t len, cap;
	double deadline;        /* of the step under way (gclock_mono) */
	const char *step;       /* its name, for a timeout's message */
	struct ctl_quiet *quiet; /* the target's: errors kept, not printed */
};

#define FRAME_MAX ((size_t)PROTO_HEADER_LEN + PROTO_MAX_JSON + PROTO_MAX_BIN)

static void conn_free(struct ctl_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	chan_clear(&c->ch);
	free(c->raw);
	free(c->buf);
}

/* The next step has seconds (less when the target's deadline is
 * nearer). */
static void step(struct ctl_conn *c, const struct ctl_target *to,
		 const char *what, double seconds)
{
	c->deadline = gclock_mono() + seconds;
	if (to->deadline > 0 && to->deadline < c->deadline)
		c->deadline = to->deadline;
	c->step = what;
}

/* A socket's failure (a timeout, a reset, a closed pipe): transient. */
static void say_io(const struct ctl_conn *c, const char *doing)
{
	if (errno == ETIMEDOUT)
		say(c->quiet, 1, "gpud did not answer in time (%s)",
		    c->step ? c->step : doing);
	else
		say(c->quiet, 1, "cannot %s: %s", doing,
		    errno == EPIPE || errno == ECONNRESET
			? "gpud closed the connection" : strerror(errno));
}

/* Grow *buf to hold room more bytes after len (at most limit in all). */
static int room(uint8_t **buf, size_t len, size_t *cap, size_t more,
		size_t limit)
{
	size_t ncap = *cap ? *cap : 131072;
	uint8_t *nb;

	if (*cap - len >= more)
		return 0;
	while (ncap - len < more)
		ncap *= 2;
	if (ncap > limit)
		ncap = limit;
	if (ncap - len < more)
		return -1;
	nb = realloc(*buf, ncap);
	if (!nb)
		return -1;
	*buf = nb;
	*cap = ncap;
	return 0;
}

/* What TLS has to send (handshake messages, records): 0 or -1 (said). */
static int flush_chan(struct ctl_conn *c)
{
	uint8_t *out = NULL;
	size_t olen = 0;
	int rc;

	chan_take_output(&c->ch, &out, &olen);
	if (!out)
		return 0;
	rc = write_until(c->fd, out, olen, c->deadline);
	free(out);
	if (rc)
		say_io(c, "send to gpud");
	return rc;
}

static int send_frame(struct ctl_conn *c, enum proto_type type,
		      const json_t *msg, const void *bin, size_t bin_len)
{
	uint8_t *out = NULL, *sealed = NULL;
	size_t outlen = 0, slen = 0;
	int rc;

	if (proto_frame_encode(type, (json_t *)msg, bin, bin_len, &out,
			       &outlen)) {
		say(c->quiet, 0, "cannot encode the request");
		free(out);
		return -1;
	}
	if (c->sealed) {
		rc = chan_seal(&c->ch, out, outlen, &sealed, &slen);
		free(out);
		if (rc) {
			say(c->quiet, 0, "cannot seal the request");
			return -1;
		}
		out = sealed;
		outlen = slen;
	}
	rc = write_until(c->fd, out, outlen, c->deadline);
	free(out);
	if (rc)
		say_io(c, "send the request to gpud");
	return rc;
}

/* Read what has come (waiting until the step's deadline for something);
 * over TCP through TLS into buf. 0 or -1 (said). */
static int read_more(struct ctl_conn *c)
{
	uint8_t **into = c->sealed ? &c->raw : &c->buf;
	size_t *ilen = c->sealed ? &c->rlen : &c->len;
	size_t *icap = c->sealed ? &c->rcap : &c->cap;
	char err[400] = "";
	ssize_t r;

	if (room(into, *ilen, icap, 65536, FRAME_MAX + 131072)) {
		say(c->quiet, 0, "reply too large");
		return -1;
	}
	for (;;) {
		r = read(c->fd, *into + *ilen, *icap - *ilen);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (wait_fd(c->fd, POLLIN, c->deadline)) {
				say_io(c, "read gpud's reply");
				return -1;
			}
			continue;
		}
		break;
	}
	if (r <= 0) {
		say(c->quiet, 1, "gpud closed the connection%s%s",
		    c->step ? " in the " : "", c->step ? c->step : "");
		return -1;
	}
	*ilen += (size_t)r;
	if (c->sealed) {
		size_t n = 0;
		int rc = chan_open(&c->ch, c->raw, c->rlen, &n, &c->buf,
				   &c->len, &c->cap, FRAME_MAX, err,
				   sizeof(err));

		if (rc == 0)
			rc = flush_chan(c);
		else
			flush_chan(c); /* the alert that says why */
		if (rc) {
			if (err[0])
				say(c->quiet, 0, "TLS: %s", err);
			return -1;
		}
		memmove(c->raw, c->raw + n, c->rlen - n);
		c->rlen -= n;
	}
	return 0;
}

/* Read until one frame is whole; *f borrows c->buf until consume(used). */
static int recv_frame(struct ctl_conn *c, struct proto_frame *f,
		      size_t *used)
{
	for (;;) {
		size_t need = 0;
		char err[300] = "";
		int rc = c->len ? proto_frame_parse(c->buf, c->len, f, used,
						    &need, err, sizeof(err))
				: GERR_AGAIN;

		if (rc == 0)
			return 0;
		if (rc != GERR_AGAIN) {
			say(c->quiet, 0, "bad reply from gpud: %s", err);
			return -1;
		}
		if (read_more(c))
			return -1;
	}
}

static void consume(struct ctl_conn *c, struct proto_frame *f, size_t used)
{
	proto_frame_clear(f);
	memmove(c->buf, c->buf + used, c->len - used);
	c->len -= used;
}

/* Send one request (with an optional binary attachment), read one reply;
 * its binary attachment goes to *ret_bin (malloc'ed) when ret_bin is not
 * NULL. Returns a new reference or NULL. */
static json_t *ctl_call_full(struct ctl_conn *c, json_t *req, const void *bin,
			     size_t bin_len, uint8_t **ret_bin, size_t *ret_bin_len)
{
	struct proto_frame f;
	json_t *reply = NULL;
	size_t used = 0;

	if (send_frame(c, PROTO_CTL_REQ, req, bin, bin_len) ||
	    recv_frame(c, &f, &used))
		return NULL;
	if (f.type == PROTO_CTL_REPLY) {
		reply = json_incref(f.json);
		if (ret_bin) {
			*ret_bin = malloc(f.bin_len ? f.bin_len : 1);
			if (*ret_bin && f.bin_len)
				memcpy(*ret_bin, f.bin, f.bin_len);
			*ret_bin_len = *ret_bin ? f.bin_len : 0;
		}
	} else {
		const char *m = json_string_value(json_object_get(f.json,
								  "message"));
		char *esc = ctl_text_escape(m ? m : "", 0);

		say(c->quiet, 0, "unexpected reply %s%s%s",
		    proto_type_name(f.type), m ? ": " : "", esc ? esc : "");
		free(esc);
	}
	consume(c, &f, used);
	return reply;
}

/* The next frame must be want: 0, or -1 with gpud's reason printed. */
static int expect(struct ctl_conn *c, enum proto_type want, json_t **ret)
{
	struct proto_frame f;
	size_t used = 0;

	if (recv_frame(c, &f, &used))
		return -1;
	if (f.type != want) {
		const char *m = json_string_value(json_object_get(f.json,
								  "message"));
		char *esc = ctl_text_escape(m ? m : proto_type_name(f.type), 0);

		say(c->quiet, 0, "gpud refused the credential: %s",
		    esc ? esc : "?");
		free(esc);
		consume(c, &f, used);
		return -1;
	}
	*ret = json_incref(f.json);
	consume(c, &f, used);
	return 0;
}

/* TCP to host:port, the first address that answers before the step's
 * deadline; the socket stays non-blocking. */
static int tcp_connect(struct ctl_conn *c, const char *host, const char *port)
{
	struct addrinfo hints = { 0 }, *res = NULL;
	int fd = -1, rc, e = 0;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		say(c->quiet, rc == EAI_AGAIN, "cannot resolve %s: %s", host,
		    gai_strerror(rc));
		return -1;
	}
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		socklen_t elen = sizeof(e);

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
			    SOCK_NONBLOCK, ai->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		e = 0;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
			e = errno;
			if (e == EINPROGRESS)
				e = wait_fd(fd, POLLOUT, c->deadline) ? errno
					: getsockopt(fd, SOL_SOCKET, SO_ERROR,
						     &e, &elen) ? errno : e;
		}
		if (e) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		say(c->quiet, 1, "cannot reach gpud at %s:%s: %s", host, port,
		    e == ETIMEDOUT ? "no answer to the connect in time"
		    : strerror(e ? e : errno));
	return fd;
}

/* TLS with the credential's key, then its login. 0, or -1 (printed);
 * *ret_exit says which kind. */
static int remote_open(struct ctl_conn *c, const struct ctl_target *to,
		       int *ret_exit)
{
	char err[400] = "";
	struct msg_ctl_hello h = { .proto = PROTO_VERSION,
				   .name = to->cred.name };
	json_t *j = NULL;

	*ret_exit = EXIT_UNREACHABLE;
	step(c, to, "connect", CTL_CONNECT_TIMEOUT_S);
	c->fd = tcp_connect(c, to->host, to->port);
	if (c->fd < 0)
		return -1;
	step(c, to, "TLS handshake", CTL_LOGIN_TIMEOUT_S);
	if (chan_client_start(&c->ch, &to->id, to->cred.gpud_key, err,
			      sizeof(err))) {
		say(c->quiet, 0, "TLS: %s", err);
		return -1;
	}
	c->sealed = 1;
	if (flush_chan(c))
		return -1;
	while (!chan_is_open(&c->ch)) {
		if (read_more(c)) {
			if (c->ch.state == CHAN_FAILED)
				say(c->quiet, 0, "refusing gpud at %s:%s",
				    to->host, to->port);
			return -1;
		}
	}
	step(c, to, "login", CTL_LOGIN_TIMEOUT_S);
	if (msg_ctl_hello_encode(&h, &j) ||
	    send_frame(c, PROTO_CTL_HELLO, j, NULL, 0)) {
		json_decref(j);
		return -1;
	}
	json_decref(j);
	j = NULL;
	*ret_exit = EXIT_FAIL;
	if (expect(c, PROTO_WELCOME, &j))
		return -1;
	json_decref(j);
	*ret_exit = 0;
	return 0;
}

static int ctl_open(struct ctl_conn *c, const struct ctl_target *to,
		    int *ret_exit)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->quiet = to->quiet;
	if (to->host)
		return remote_open(c, to, ret_exit);
	*ret_exit = EXIT_UNREACHABLE;
	c->fd = ctl_connect(to->socket, to->quiet);
	return c->fd < 0 ? -1 : 0;
}

/* One request on a fresh connection; prints gpud's error and returns NULL
 * when the reply is not ok. *ret_exit says why. The reply's binary part is
 * returned in *ret_out (malloc'ed) when ret_out is not NULL. */
/* gpud's errors are sentences for people, without a code; every command
 * that names a job answers "no job N" when there is none. */
static int not_found(const char *e)
{
	char tail;
	long long id;

	return e && sscanf(e, "no job %lld%c", &id, &tail) == 1;
}

json_t *ctl_request_full(const struct ctl_target *to, const struct ctlcmd_req *q,
			 const void *bin, size_t bin_len, uint8_t **ret_out,
			 size_t *ret_out_len, int *ret_exit)
{
	struct ctl_conn c;
	json_t *reply, *req;

	if (to->quiet) {
		to->quiet->why[0] = '\0';
		to->quiet->transient = 0;
	}
	req = ctlcmd_encode(q);
	if (!req) {
		/* Out of memory, or text that is not UTF-8 (JSON's). */
		say(to->quiet, 0, "cannot encode the request: out of memory or "
		    "text that is not UTF-8");
		*ret_exit = EXIT_FAIL;
		return NULL;
	}
	if (ctl_open(&c, to, ret_exit)) {
		conn_free(&c);
		json_decref(req);
		return NULL;
	}
	step(&c, to, "reply", CTL_REPLY_TIMEOUT_S);
	reply = ctl_call_full(&c, req, bin, bin_len, ret_out, ret_out_len);
	conn_free(&c);
	json_decref(req);
	if (!reply) {
		*ret_exit = EXIT_UNREACHABLE;
		return NULL;
	}
	const char *e = NULL;
	if (!ctlcmd_reply_ok(reply, &e)) {
		char *shown = ctl_text_escape(e ? e : "request failed", 0);
		int missing = not_found(e);
		say(to->quiet, 0, "%s", shown ? shown : "request failed");
		free(shown);
		json_decref(reply);
		if (ret_out) {
			free(*ret_out);
			*ret_out = NULL;
		}
		*ret_exit = missing ? EXIT_NOTFOUND : EXIT_FAIL;
		return NULL;
	}
	*ret_exit = 0;
	return reply;
}

int ctl_reply_fields(enum ctlcmd_id id, const json_t *reply,
		     struct ctlcmd_reply *ret)
{
	char err[256];

	if (ctlcmd_reply_decode(&ctlcmd_table[id], reply, ret, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "gpuctl: gpud's reply to %s: %s\n", ctlcmd_table[id].name, err);
	return -1;
}

int ctl_ask(const struct ctl_target *to, const struct ctlcmd_req *req,
	    int shown, struct ctl_reply *ret)
{
	int ex;

	memset(ret, 0, sizeof(*ret));
	ret->json = ctl_request(to, req, &ex);
	if (!ret->json)
		return ex;
	if (shown)
		ctl_text_escape_json(ret->json);
	if (ctl_reply_fields(req->cmd, ret->json, &ret->f)) {
		ctl_reply_free(ret);
		return EXIT_FAIL;
	}
	return 0;
}

void ctl_reply_free(struct ctl_reply *r)
{
	if (!r)
		return;
	ctlcmd_reply_clear(&r->f);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

json_t *ctl_request_bin(const struct ctl_target *to, const struct ctlcmd_req *req,
			const void *bin, size_t bin_len, int *ret_exit)
{
	return ctl_request_full(to, req, bin, bin_len, NULL, NULL, ret_exit);
}

json_t *ctl_request(const struct ctl_target *to, const struct ctlcmd_req *req,
		    int *ret_exit)
{
	return ctl_request_bin(to, req, NULL, 0, ret_exit);
}

int ctl_target_remote(struct ctl_target *to, const char *hostport,
		      const char *cred_file)
{
	char err[800] = "";
	const char *colon = strrchr(hostport, ':');
	size_t hl;

	if (!colon || colon == hostport || !colon[1] ||
	    strlen(hostport) >= sizeof(to->hostbuf) ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    strlen(colon + 1) > 5) {
		fprintf(stderr, "gpuctl: --connect wants HOST:PORT (IPv6 in "
			"brackets), got '%s'\n", hostport);
		return EXIT_USAGE;
	}
	hl = (size_t)(colon - hostport);
	if (hostport[0] == '[' && hl > 2 && hostport[hl - 1] == ']')
		snprintf(to->hostbuf, sizeof(to->hostbuf), "%.*s",
			 (int)(hl - 2), hostport + 1);
	else
		snprintf(to->hostbuf, sizeof(to->hostbuf), "%.*s", (int)hl,
			 hostport);
	snprintf(to->portbuf, sizeof(to->portbuf), "%s", colon + 1);
	to->host = to->hostbuf;
	to->port = to->portbuf;
	if (!cred_file) {
		fprintf(stderr, "gpuctl: --connect needs --credential FILE (a "
			"viewer or admin credential from gpuctl token add)\n");
		return EXIT_USAGE;
	}
	if (auth_init() < 0 ||
	    auth_token_read_file(cred_file, &to->cred, err, sizeof(err))) {
		fprintf(stderr, "gpuctl: %s\n", err[0] ? err
			: "cannot initialise libsodium");
		return EXIT_USAGE;
	}
	if (!to->cred.has_gpud_key) {
		fprintf(stderr, "gpuctl: %s has no 'gpud-key = ' line: gpuctl "
			"cannot tell gpud from an impostor\n", cred_file);
		return EXIT_USAGE;
	}
	/* The key gpuctl proves in TLS, in a self-signed certificate. */
	chan_identity_from_seed(&to->id, to->cred.seed);
	if (chan_identity_cert(&to->id, to->cred.name, err, sizeof(err))) {
		fprintf(stderr, "gpuctl: %s\n", err);
		return EXIT_USAGE;
	}
	return 0;
}

