/* listeners.c - gpud's listening sockets (listeners.h): accepting by hand,
 * the connection caps, the spare descriptor for when descriptors run out,
 * and the tick that enforces the connections' timeouts.
 *
 * Invariants:
 *  1. Every accepted descriptor either becomes a conn (conn_open_fd takes
 *     it) or is closed before the accept loop goes on.
 *  2. A listener is polled unless it is paused; it is paused only when
 *     descriptors ran out and no spare was left to shed with, and the tick
 *     resumes it.
 *  3. Log lines about refused or shed connections come at most once per
 *     LOG_EVERY_MS per cause, and say how many were held back.
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "conn.h"
#include "gerr.h"
#include "gpud.h"
#include "listeners.h"

#define TICK_MS 500
#define LOG_EVERY_MS 10000
#define ACCEPT_BATCH 64   /* accepts per poll callback: others get a turn */
#define TCP_BACKLOG 128
#define PIPE_BACKLOG 64

struct rate_log {
	uint64_t last_ms;
	unsigned held;      /* lines held back since the last one */
	int logged;
};

struct listener {
	struct listeners *ls;
	uv_poll_t poll;
	int fd;             /* -1 when not listening */
	int is_ctl;
	int paused;
	struct rate_log rl_short; /* descriptor shortage, per listener */
};

struct listeners {
	struct gpud *d;
	const struct conn_handlers *ops;
	struct listener tcp, ctl;
	uv_timer_t tick;
	int spare;          /* held back for shedding; -1 while in use */
	int handles;        /* libuv handles not yet closed */
	int stopping;
	struct rate_log rl_total, rl_addr, rl_err, rl_pre_addr, rl_shed;
};

/* Non-zero when a line may be logged now; *ret_held: lines held back
 * since the last one. */
static int rate_ok(struct rate_log *r, uint64_t now, unsigned *ret_held)
{
	if (r->logged && now - r->last_ms < LOG_EVERY_MS) {
		r->held++;
		return 0;
	}
	*ret_held = r->held;
	r->held = 0;
	r->last_ms = now;
	r->logged = 1;
	return 1;
}

static void held_note(char *buf, size_t n, unsigned held)
{
	if (held)
		snprintf(buf, n, " (%u more since the last such line)", held);
	else
		buf[0] = '\0';
}

static unsigned long long nofile_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	return (unsigned long long)rl.rlim_cur;
}

static void spare_refill(struct listeners *ls)
{
	if (ls->spare < 0 && !ls->stopping)
		ls->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void on_poll(uv_poll_t *p, int status, int events);

static void listener_pause(struct listener *l)
{
	if (!l->paused) {
		uv_poll_stop(&l->poll);
		l->paused = 1;
	}
}

static void listener_resume(struct listener *l)
{
	if (l->paused && l->fd >= 0 &&
	    uv_poll_start(&l->poll, UV_READABLE, on_poll) == 0)
		l->paused = 0;
}

/* accept() found no descriptor: say so, then take the waiting connection
 * with the spare's slot (served if it is gpuctl's, closed if a worker's).
 * Returns non-zero when one was taken, so the accept loop may go on. */
static int fd_shortage(struct listener *l, int e)
{
	struct listeners *ls = l->ls;
	struct gpud *d = ls->d;
	uint64_t now = uv_now(d->loop);
	unsigned long long lim = nofile_limit();
	int open_conns = conn_count_tcp(d, NULL, NULL), fd = -1;
	const char *what;
	char held[64];
	unsigned n;

	if (ls->spare >= 0) {
		close(ls->spare);
		ls->spare = -1;
		fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	}
	if (fd >= 0 && l->is_ctl) {
		what = "a gpuctl connection was served with the spare descriptor";
		conn_open_fd(d, fd, 1, NULL, ls->ops);
	} else if (fd >= 0) {
		what = "a worker connection was closed at once";
		close(fd);
	} else {
		what = "accepting paused until descriptors free up";
		listener_pause(l);
	}
	spare_refill(ls);
	d->fd_short_ms = now;
	snprintf(d->fd_msg, sizeof(d->fd_msg),
		 "out of file descriptors (limit %llu, %d worker connections "
		 "open): connections are shed; raise LimitNOFILE= or ulimit -n, "
		 "or lower --max-connections", lim, open_conns);
	if (rate_ok(&l->rl_short, now, &n)) {
		held_note(held, sizeof(held), n);
		LOG_WARN(&d->log, "out of file descriptors on the %s listener "
			 "(%s; limit %llu, %d worker connections open): %s; raise "
			 "LimitNOFILE= (systemd) or ulimit -n, or lower "
			 "--max-connections%s", l->is_ctl ? "control" : "worker",
			 strerror(e), lim, open_conns, what, held);
	}
	return fd >= 0;
}

/* Log (rate-limited by cause) why a connection from host was refused or
 * one was shed. */
static void refused(struct listeners *ls, struct rate_log *rl,
		    const char *host, const char *fmt, int n, int max)
{
	char held[64], what[200];
	unsigned h;

	if (!rate_ok(rl, uv_now(ls->d->loop), &h))
		return;
	held_note(held, sizeof(held), h);
	snprintf(what, sizeof(what), fmt, n, max);
	LOG_WARN(&ls->d->log, "%s %s: %s%s", rl == &ls->rl_shed ? "for a "
		 "connection from" : "refused a connection from", host, what,
		 held);
}

/* A worker's connection: within the caps it is served, else closed.
 * Connections not logged in yet get only part of the slots
 * (--max-prelogin, --max-prelogin-per-address): when they are full, or
 * every slot is, a new one sheds the oldest not logged in of the address
 * that has the most (or the oldest of all), so a flood from many addresses never keeps a fresh
 * login, whose handshake takes milliseconds, out. */
static void take_tcp(struct listeners *ls, int fd,
		     const struct sockaddr_storage *ss)
{
	struct gpud *d = ls->d;
	const struct gpud_config *cfg = &d->cfg;
	char host[64] = "?";
	int from_peer = 0, all, pre_peer = 0, pre;

	if (ss->ss_family == AF_INET)
		uv_ip4_name((const struct sockaddr_in *)ss, host, sizeof(host));
	else if (ss->ss_family == AF_INET6)
		uv_ip6_name((const struct sockaddr_in6 *)ss, host, sizeof(host));
	all = conn_count_tcp(d, host, &from_peer);
	pre = conn_count_prelogin(d, host, &pre_peer);
	if (from_peer >= cfg->max_conns_per_addr) {
		close(fd);
		refused(ls, &ls->rl_addr, host, "%d connections open from that "
			"address (--max-connections-per-address %d)", from_peer,
			cfg->max_conns_per_addr);
		return;
	}
	if (pre_peer >= cfg->max_prelogin_per_addr) {
		close(fd);
		refused(ls, &ls->rl_pre_addr, host, "%d connections not logged in "
			"from that address (--max-prelogin-per-address %d)",
			pre_peer, cfg->max_prelogin_per_addr);
		return;
	}
	if (pre >= cfg->max_prelogin || all >= cfg->max_conns) {
		if (!conn_shed_prelogin(d, 1, NULL)) {
			close(fd);
			refused(ls, &ls->rl_total, host, "%d worker connections "
				"open, all logged in (--max-connections %d)", all,
				cfg->max_conns);
			return;
		}
		if (all >= cfg->max_conns)
			refused(ls, &ls->rl_shed, host, "the oldest connection not "
				"logged in of the address with the most was closed "
				"(%d open, --max-connections %d)", all,
				cfg->max_conns);
		else
			refused(ls, &ls->rl_shed, host, "the oldest connection not "
				"logged in of the address with the most was closed "
				"(%d not logged in, --max-prelogin %d)", pre,
				cfg->max_prelogin);
	}
	conn_open_fd(d, fd, 0, host, ls->ops);
}

/* Say (rate-limited) why l failed, "WHAT WHY", and pause it until the
 * next tick. */
static void listener_fail(struct listener *l, const char *what,
			  const char *why)
{
	struct listeners *ls = l->ls;
	unsigned n;

	if (rate_ok(&ls->rl_err, uv_now(ls->d->loop), &n))
		LOG_WARN(&ls->d->log, "%s listener: %s%s",
			 l->is_ctl ? "control" : "worker", what, why);
	listener_pause(l);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
	struct listener *l = p->data;
	struct listeners *ls = l->ls;

	(void)events;
	if (status < 0) {
		listener_fail(l, "", uv_strerror(status));
		return;
	}
	for (int i = 0; i < ACCEPT_BATCH && !l->paused; i++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(l->fd, (struct sockaddr *)&ss, &sl,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			if (l->is_ctl)
				conn_open_fd(ls->d, fd, 1, NULL, ls->ops);
			else
				take_tcp(ls, fd, &ss);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		if (errno == EMFILE || errno == ENFILE) {
			if (fd_shortage(l, errno))
				continue;
			return;
		}
		/* ENOBUFS, ENOMEM, EPERM (a firewall): try again next tick. */
		listener_fail(l, "accept failed: ", strerror(errno));
		return;
	}
}

static void on_tick(uv_timer_t *t)
{
	struct listeners *ls = t->data;

	conn_sweep(ls->d);
	spare_refill(ls);
	listener_resume(&ls->tcp);
	listener_resume(&ls->ctl);
}

/* The listeners' handles close one by one; the last frees the state. A
 * polled socket is closed only once libuv no longer watches it. */
static void on_handle_closed(uv_handle_t *h)
{
	struct listeners *ls;

	if (h->type == UV_POLL) {
		struct listener *l = h->data;

		ls = l->ls;
		close(l->fd);
		l->fd = -1;
	} else {
		ls = h->data;
	}
	if (--ls->handles == 0)
		free(ls);
}

int listeners_start(struct gpud *d, const struct conn_handlers *ops)
{
	struct listeners *ls = calloc(1, sizeof(*ls));

	if (!ls)
		return GERR_NOMEM;
	ls->d = d;
	ls->ops = ops;
	ls->tcp = (struct listener){ .ls = ls, .fd = -1 };
	ls->ctl = (struct listener){ .ls = ls, .fd = -1, .is_ctl = 1 };
	ls->spare = -1;
	spare_refill(ls);
	uv_timer_init(d->loop, &ls->tick);
	ls->tick.data = ls;
	ls->handles = 1;
	uv_timer_start(&ls->tick, on_tick, TICK_MS, TICK_MS);
	d->listeners = ls;
	return 0;
}

/* Poll an open, bound socket for connections. */
static int listener_open(struct listener *l, int fd, int backlog)
{
	struct gpud *d = l->ls->d;
	int rc;

	if (listen(fd, backlog) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = uv_poll_init_socket(d->loop, &l->poll, fd);
	if (rc) {
		close(fd);
		return rc;
	}
	l->fd = fd;
	l->poll.data = l;
	l->ls->handles++;
	rc = uv_poll_start(&l->poll, UV_READABLE, on_poll);
	if (rc) {
		l->ls->handles--;
		uv_close((uv_handle_t *)&l->poll, NULL);
		close(fd);
		l->fd = -1;
	}
	return rc;
}

int listeners_add_tcp(struct gpud *d, const struct sockaddr *sa,
		      struct sockaddr_storage *ret_bound)
{
	struct listener *l = &d->listeners->tcp;
	socklen_t len = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						  : sizeof(struct sockaddr_in);
	int one = 1, rc;
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			0);

	if (fd < 0)
		return -errno;
	/* A restart must not wait for the old connections' TIME_WAIT. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, sa, len) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	len = sizeof(*ret_bound);
	if (getsockname(fd, (struct sockaddr *)ret_bound, &len) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return listener_open(l, fd, TCP_BACKLOG);
}

int listeners_add_pipe(struct gpud *d, const char *path)
{
	struct listener *l = &d->listeners->ctl;
	struct sockaddr_un sa;
	int rc, fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0600) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return listener_open(l, fd, PIPE_BACKLOG);
}

void listeners_stop(struct gpud *d)
{
	struct listeners *ls = d->listeners;

	if (!ls)
		return;
	d->listeners = NULL;
	ls->stopping = 1;
	if (ls->spare >= 0)
		close(ls->spare);
	ls->spare = -1;
	for (int i = 0; i < 2; i++) {
		struct listener *l = i ? &ls->ctl : &ls->tcp;

		if (l->fd >= 0) {
			uv_poll_stop(&l->poll);
			uv_close((uv_handle_t *)&l->poll, on_handle_closed);
		}
	}
	uv_close((uv_handle_t *)&ls->tick, on_handle_closed);
}
