/* verify.h - verification of stored results (verify.c).
 *
 * A verification holds no connection: it runs after the upload's ACK, on
 * the database thread (load, commit) and the thread pool (the workload's
 * check); its verdict is durable before it is logged. A verification left
 * unfinished at shutdown leaves the result done; start-up recovery
 * verifies it again. Every function here: loop thread only.
 */
#ifndef GPUD_VERIFY_H
#define GPUD_VERIFY_H

#include <stdint.h>

struct gpud;
struct sched_upload;
struct verify_req;

/* Start verification of a lease whose result is stored (state done).
 * Nothing is returned: the outcome is logged and committed. */
void verify_lease(struct gpud *d, int64_t lease_id, uint64_t epoch);
/* Start checking a result upload's decoded bytes while the upload is still
 * being stored, so the check overlaps the durable writes. Takes u->raw
 * (u->raw is NULL afterwards) and copies what else it needs. Returns NULL
 * when it cannot start (u unchanged: verify the usual way once stored).
 * Otherwise the caller must call verify_stored exactly once. */
struct verify_req *verify_early(struct gpud *d, struct sched_upload *u);
/* The upload's outcome: stored (durable, lease done) lets the early check
 * commit its verdict and merge; not stored drops it. Frees r (now or when
 * its check is back). */
void verify_stored(struct verify_req *r, int stored);

#endif
