/* http_guard.c - deadlines and room for the page's connections (see
 * http_guard.h). Every open connection is an entry on one list, newest
 * last; the lists are short (libmicrohttpd caps them), so each choice is
 * a walk.
 */
#include "http_guard.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "clock.h"
#include "gerr.h"

enum gstate {
	G_WAITING,  /* for a request (new, or answered) */
	G_ANSWERING,
	G_HELD,     /* suspended: gpud's loop answers it */
};

struct gconn {
	int fd;
	int family;
	uint8_t addr[16];
	double since;         /* gclock_mono of its state's start */
	enum gstate state;
	int closing;          /* shut down by us: no longer counted */
	struct gconn *prev, *next;
};

struct http_guard {
	pthread_mutex_t mu;
	unsigned per_ip, max;
	struct gconn *head, *tail;  /* under mu */
	uint64_t late, evicted;     /* under mu */
};

int http_guard_new(unsigned per_ip, unsigned max, struct http_guard **ret)
{
	struct http_guard *g = calloc(1, sizeof(*g));

	if (!g)
		return GERR_NOMEM;
	if (pthread_mutex_init(&g->mu, NULL)) {
		free(g);
		return GERR_NOMEM;
	}
	g->per_ip = per_ip;
	g->max = max;
	*ret = g;
	return 0;
}

void http_guard_free(struct http_guard *g)
{
	struct gconn *c, *next;

	if (!g)
		return;
	/* Left only if libmicrohttpd never reported their close. */
	for (c = g->head; c; c = next) {
		next = c->next;
		free(c);
	}
	pthread_mutex_destroy(&g->mu);
	free(g);
}

static void set_addr(struct gconn *c, const struct sockaddr *sa)
{
	if (sa && sa->sa_family == AF_INET) {
		c->family = AF_INET;
		memcpy(c->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa && sa->sa_family == AF_INET6) {
		c->family = AF_INET6;
		memcpy(c->addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

static int same_addr(const struct gconn *a, const struct gconn *b)
{
	return a->family == b->family &&
	       memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16) == 0;
}

/* Under mu. */
static void close_conn(struct gconn *c)
{
	c->closing = 1;
	shutdown(c->fd, SHUT_RDWR);
}

/* Under mu: the oldest open connection other than fresh (of fresh's
 * address when same), waiting ones before answering ones, never held
 * ones; NULL when none may go. */
static struct gconn *oldest(struct http_guard *g, const struct gconn *fresh,
			    int same)
{
	struct gconn *best = NULL;

	for (struct gconn *c = g->head; c; c = c->next) {
		if (c == fresh || c->closing || c->state == G_HELD ||
		    (same && !same_addr(c, fresh)))
			continue;
		/* The list is oldest first: the first waiting one wins. */
		if (c->state == G_WAITING)
			return c;
		if (!best)
			best = c;
	}
	return best;
}

/* Under mu: how many open connections (of fresh's address when same). */
static unsigned count(const struct http_guard *g, const struct gconn *fresh,
		      int same)
{
	unsigned n = 0;

	for (const struct gconn *c = g->head; c; c = c->next)
		if (!c->closing && (!same || same_addr(c, fresh)))
			n++;
	return n;
}

/* Under mu: room for fresh, which is listed. */
static void make_room(struct http_guard *g, const struct gconn *fresh)
{
	struct gconn *victim;

	if (count(g, fresh, 1) > g->per_ip && (victim = oldest(g, fresh, 1))) {
		close_conn(victim);
		g->evicted++;
	}
	if (count(g, fresh, 0) > g->max && (victim = oldest(g, fresh, 0))) {
		close_conn(victim);
		g->evicted++;
	}
}

void http_guard_notify(void *cls, struct MHD_Connection *conn,
		       void **socket_context,
		       enum MHD_ConnectionNotificationCode code)
{
	struct http_guard *g = cls;
	struct gconn *c = *socket_context;
	const union MHD_ConnectionInfo *fd, *addr;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (!c)
			return;
		pthread_mutex_lock(&g->mu);
		if (c->prev)
			c->prev->next = c->next;
		else
			g->head = c->next;
		if (c->next)
			c->next->prev = c->prev;
		else
			g->tail = c->prev;
		pthread_mutex_unlock(&g->mu);
		free(c);
		*socket_context = NULL;
		return;
	}
	fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	addr = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	/* Not tracked (out of memory): libmicrohttpd's own caps still hold. */
	if (!fd || !(c = calloc(1, sizeof(*c))))
		return;
	c->fd = fd->connect_fd;
	set_addr(c, addr ? addr->client_addr : NULL);
	c->since = gclock_mono();
	c->state = G_WAITING;
	pthread_mutex_lock(&g->mu);
	c->prev = g->tail;
	if (g->tail)
		g->tail->next = c;
	else
		g->head = c;
	g->tail = c;
	make_room(g, c);
	pthread_mutex_unlock(&g->mu);
	*socket_context = c;
}

static struct gconn *entry(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

void http_guard_request(struct http_guard *g, struct MHD_Connection *conn,
			int held)
{
	struct gconn *c = entry(conn);

	if (!c)
		return;
	pthread_mutex_lock(&g->mu);
	c->state = held ? G_HELD : G_ANSWERING;
	c->since = gclock_mono();
	pthread_mutex_unlock(&g->mu);
}

void http_guard_answered(struct http_guard *g, struct MHD_Connection *conn)
{
	struct gconn *c = entry(conn);

	if (!c)
		return;
	pthread_mutex_lock(&g->mu);
	c->state = G_WAITING;
	c->since = gclock_mono();
	pthread_mutex_unlock(&g->mu);
}

unsigned http_guard_sweep(struct http_guard *g, double now)
{
	unsigned n = 0;

	pthread_mutex_lock(&g->mu);
	for (struct gconn *c = g->head; c; c = c->next) {
		double limit = c->state == G_WAITING ? HTTP_REQUEST_S :
			       c->state == G_ANSWERING ? HTTP_ANSWER_S : -1;

		if (!c->closing && limit > 0 && now - c->since > limit) {
			close_conn(c);
			n++;
		}
	}
	g->late += n;
	pthread_mutex_unlock(&g->mu);
	return n;
}

void http_guard_counts(struct http_guard *g, uint64_t *ret_late,
		       uint64_t *ret_evicted)
{
	pthread_mutex_lock(&g->mu);
	*ret_late = g->late;
	*ret_evicted = g->evicted;
	pthread_mutex_unlock(&g->mu);
}
