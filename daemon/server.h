/* server.h - gpud's lifetime (server.c): open the store, listen, run the
 * timers, drain and stop. server.c owns the handler table that every
 * accepted connection gets, and installs struct gpud's wake hook.
 * Loop thread only.
 */
#ifndef GPUD_SERVER_H
#define GPUD_SERVER_H

struct gpud;

/* Open the store, start the database thread and start-up recovery, listen
 * and start the timers. Returns 0 or a GERR_*; on failure the caller still
 * calls server_stop and runs the loop until it ends. */
int server_start(struct gpud *d);
/* Close listeners, timers and connections, and the database thread once
 * its queued work is done; the loop then ends. Idempotent. */
void server_stop(struct gpud *d);
/* Stop granting leases and ask every worker holding one to checkpoint and
 * release it; call done(d) once none holds a lease or cfg.drain_s passed. */
void server_drain(struct gpud *d, void (*done)(struct gpud *d));

#endif
