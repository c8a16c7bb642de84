/* worker_proto.h - the worker side of gpud's protocol (worker_proto.c;
 * wp_fetch in worker_fetch.c; uploads are upload.h's): one handler per
 * worker message, for the handler table that server.c gives worker
 * connections (conn.h's struct conn_handlers).
 *
 * Each handler returns 0 (maybe having started an asynchronous step:
 * c->busy set, and a reference held until conn_step_done) or GERR_PROTO
 * for an invalid message, which closes the connection; GERR_NOMEM or
 * GERR_STATE when the step could not start. Loop thread only.
 */
#ifndef GPUD_WORKER_PROTO_H
#define GPUD_WORKER_PROTO_H

#include <jansson.h>

#include "conn.h"
#include "proto.h"

int wp_claim(struct conn *c, const json_t *msg);
int wp_heartbeat(struct conn *c, const json_t *msg);
int wp_release(struct conn *c, const json_t *msg);
int wp_fetch(struct conn *c, const json_t *msg);
/* A parked claim, when work may have appeared: claim again (or NOLEASE
 * while draining); the parked claim's busy flag and reference carry over. */
void wp_wake(struct conn *c);
/* WITHDRAW: the worker stops claiming. Its claim, if gpud still holds it,
 * was answered just before (wp_unpark, or claim_after when the frame came
 * while the claim was in the database thread's queue); logged, no reply. */
int wp_withdraw(struct conn *c, const json_t *msg);
/* A parked claim whose worker sent a frame (WITHDRAW, or a FETCH): its
 * NOLEASE now, as when the park times out; the parked claim's busy flag
 * and reference are given back. */
void wp_unpark(struct conn *c);
/* A message about a lease its sender was never granted (sched_hold.c,
 * invariant 3): refused like any stale one, and a warning naming who and
 * why. Nothing is kept of the strings. */
void wp_log_foreign(struct conn *c, const char *what, int64_t lease,
		    uint64_t epoch, const char *why, int quarantined);

#endif
