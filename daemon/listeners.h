/* listeners.h - gpud's listening sockets (listeners.c): the worker
 * listener (TCP) and the control socket (Unix), and what bounds the
 * connections they accept.
 *
 * gpud accepts by hand rather than through uv_listen: when descriptors run
 * out, libuv sheds the waiting connections without a word (gpuctl's among
 * them), where gpud must say so and keep serving gpuctl. So:
 *   1. A worker connection over --max-connections-per-address from its
 *      address, or over --max-prelogin-per-address not logged in from
 *      it, is accepted and closed at once, with a log line at most every
 *      10 s per cause. Past --max-prelogin connections not logged in, or
 *      --max-connections in all, a new one sheds the oldest not logged
 *      in of the address with the most, or the oldest of all when
 *      none has two (closed only when every connection is logged in).
 *   2. One spare descriptor is held back. When accept() fails for want of
 *      descriptors (EMFILE, ENFILE), gpud logs it (rate-limited), records
 *      it for gpuctl status (gpud->fd_msg), and frees the spare to take
 *      the waiting connection: a control connection is served with it, a
 *      worker's is closed. Without a spare the listener pauses; a tick
 *      every 500 ms takes the spare back and resumes it.
 *   3. The same tick closes worker connections past their login or idle
 *      timeout (conn_sweep).
 *
 * Ownership: listeners_start allocates the state (gpud->listeners);
 * listeners_stop closes every socket and handle, and frees it once libuv
 * has closed them. The handler table passed to listeners_start must
 * outlive every connection. Loop thread only.
 */
#ifndef GPUD_LISTENERS_H
#define GPUD_LISTENERS_H

#include <sys/socket.h>

struct gpud;
struct conn_handlers;

/* Hold the spare descriptor and start the tick. 0 or GERR_NOMEM. */
int listeners_start(struct gpud *d, const struct conn_handlers *ops);
/* Listen for workers on sa; the address bound (port 0 picks one) in
 * *ret_bound. Returns 0 or a negative errno (uv_strerror names it). */
int listeners_add_tcp(struct gpud *d, const struct sockaddr *sa,
		      struct sockaddr_storage *ret_bound);
/* Listen for gpuctl on the Unix socket path (mode 0600); the caller
 * removes a stale file first. 0 or a negative errno. */
int listeners_add_pipe(struct gpud *d, const char *path);
/* Close the listeners, the tick and the spare. Idempotent. */
void listeners_stop(struct gpud *d);

#endif
