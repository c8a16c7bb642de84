/* upload.h - a checkpoint's or result's way through gpud (upload.c):
 * upload_receive is the CHECKPOINT and RESULT handler that server.c gives
 * worker connections (conn.h's struct conn_handlers); upload_verify enters
 * the same way at its verify step for a result stored earlier (start-up
 * recovery and the storage wake verify every result left done).
 *
 * upload_receive returns 0 (an asynchronous step started: c->busy set, a
 * reference held until conn_step_done) or GERR_PROTO for an invalid frame,
 * which closes the connection; GERR_NOMEM or GERR_STATE when the step
 * could not start.
 *
 * An upload's blob is read back from its file only once gpud's budget
 * for buffered frames and uploads (cfg.frame_mem_max, d->frame_mem) has
 * room for it, or when no other upload is read back (one larger than the
 * whole budget goes alone); until then its connection waits (busy).
 *
 * A verification holds no connection: its row is loaded and its verdict
 * (and merge) committed on the database thread, the workload's check runs
 * on the thread pool, and the verdict is durable before it is logged. One
 * left unfinished at shutdown leaves the result done. Loop thread only.
 */
#ifndef GPUD_UPLOAD_H
#define GPUD_UPLOAD_H

#include <stdint.h>

#include "conn.h"
#include "proto.h"

struct gpud;

/* Takes sp (the blob's file, conn.c) in every case. */
int upload_receive(struct conn *c, const struct proto_frame *f, int is_result,
		   struct conn_spool *sp);

/* Start verification of a lease whose result is stored (state done) at
 * epoch. Nothing is returned, nothing is kept of the caller's: the outcome
 * is committed and logged (a lease no longer done at epoch is left alone). */
void upload_verify(struct gpud *d, int64_t lease_id, uint64_t epoch);

#endif
