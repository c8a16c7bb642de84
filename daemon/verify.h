/* verify.h - verification of a stored result, entered from outside an
 * upload's way (upload.c, whose steps 4 to 6 it runs): start-up recovery
 * and the storage wake verify every result left done.
 *
 * A verification holds no connection: its row is loaded and its verdict
 * (and merge) committed on the database thread, the workload's check runs
 * on the thread pool, and the verdict is durable before it is logged. One
 * left unfinished at shutdown leaves the result done. Loop thread only.
 */
#ifndef GPUD_VERIFY_H
#define GPUD_VERIFY_H

#include <stdint.h>

struct gpud;

/* Start verification of a lease whose result is stored (state done) at
 * epoch. Nothing is returned, nothing is kept of the caller's: the outcome
 * is committed and logged (a lease no longer done at epoch is left alone). */
void verify_lease(struct gpud *d, int64_t lease_id, uint64_t epoch);

#endif
