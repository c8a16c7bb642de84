/* job_parts.h - a job's verified leases (the store's parts) as the struct
 * wl_parts that workload hooks read.
 *
 * Two forms:
 *  - live: each get is one indexed lookup in the store. Database thread
 *    only, for the hooks that run there (carve, finish).
 *  - loaded: every part read at once on the database thread, then read by
 *    a hook on any one thread (render and export on the thread pool).
 *
 * Ownership: the struct is the caller's (on its stack or in a request);
 * job_parts_clear frees what it holds and is safe on a zeroed or cleared
 * struct. What a get returns is borrowed until the next get or the clear.
 * The wl_parts to pass to hooks is &jp->pub.
 */
#ifndef GPUD_JOB_PARTS_H
#define GPUD_JOB_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "workload.h"

struct job_parts {
	struct wl_parts pub;
	struct store *st;           /* live form; NULL when loaded */
	int64_t job_id;
	struct store_part *loaded;  /* loaded form: pub.n parts */
	struct store_part cur;      /* live form: the last part read */
	json_t *spec, *note;        /* the last get's, parsed */
};

/* Live form over st (database thread only). */
int job_parts_open(struct job_parts *jp, struct store *st, int64_t job_id);
/* Loaded form: reads every part of the job now (database thread); then
 * usable on any one thread without the store. */
int job_parts_load(struct job_parts *jp, struct store *st, int64_t job_id);
void job_parts_clear(struct job_parts *jp);

#endif
