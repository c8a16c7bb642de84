/* http_guard.h - the page's connections kept from being held by slow
 * clients (issue 34): a client that drips its request a byte a second,
 * or opens many connections and sends nothing, must not make the page
 * unreachable for others. libmicrohttpd's own bounds (a connection cap,
 * a cap per address, an idle timeout) count silence only, and refuse
 * the newcomer when full; this guard adds what they lack:
 *
 *  1. a deadline per request: its line and headers within
 *     HTTP_REQUEST_S of the connection (or of its previous answer), its
 *     answer written within HTTP_ANSWER_S (time waiting for gpud's loop
 *     not counted);
 *  2. room for the newcomer: when a connection arrives and its address
 *     already has HTTP_CONN_PER_IP, or gpud HTTP_CONN_MAX, the oldest
 *     connection of that address (or of all) is closed, one that waits
 *     for a request before one that is being answered, never one waiting
 *     for gpud's loop. An ordinary request takes milliseconds to send, so
 *     the connections that go are the slow ones.
 *
 * A connection is closed by shutdown(2) of its socket: libmicrohttpd sees
 * the end on its next poll and closes it (with its own bookkeeping).
 *
 * Threads: http_guard_notify, _request and _answered run on
 * libmicrohttpd's thread; http_guard_sweep on any (gpud's loop, by
 * timer); all under the guard's mutex. A socket is shut down only while
 * its connection is listed, and libmicrohttpd reports a close before it
 * closes the socket, so the descriptor is never another file's.
 *
 * Ownership: the caller owns the guard (http_guard_new, _free after
 * libmicrohttpd stopped); each connection's entry is the guard's, hung
 * on the connection's socket context.
 */
#ifndef GPUD_HTTP_GUARD_H
#define GPUD_HTTP_GUARD_H

#include <stdint.h>
#include <microhttpd.h>

#define HTTP_REQUEST_S 5.0   /* a request's line and headers, at most */
#define HTTP_ANSWER_S 30.0   /* an answer's writing, at most */

struct http_guard;

/* A new guard in *ret: per_ip and max connections before the oldest
 * goes. 0 or GERR_NOMEM. */
int http_guard_new(unsigned per_ip, unsigned max, struct http_guard **ret);
/* NULL is a no-op. Only once libmicrohttpd stopped. */
void http_guard_free(struct http_guard *g);
/* MHD_OPTION_NOTIFY_CONNECTION's callback (cls: the guard). */
void http_guard_notify(void *cls, struct MHD_Connection *conn,
		       void **socket_context,
		       enum MHD_ConnectionNotificationCode code);
/* conn's request arrived whole (held 0), or waits for gpud's loop
 * (held 1: no deadline runs), or came back from it (held 0 again). */
void http_guard_request(struct http_guard *g, struct MHD_Connection *conn,
			int held);
/* conn's answer was sent: it may carry another request. */
void http_guard_answered(struct http_guard *g, struct MHD_Connection *conn);
/* Close the connections past their deadline at now (gclock_mono). The
 * number closed. */
unsigned http_guard_sweep(struct http_guard *g, double now);
/* Connections closed so far: for their deadline, for room. */
void http_guard_counts(struct http_guard *g, uint64_t *ret_late,
		       uint64_t *ret_evicted);

#endif
