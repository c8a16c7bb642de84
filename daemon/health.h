/* health.h - workers' standing (health.c): a worker's row is online while
 * it has an authenticated connection (login marks it, store.h's
 * store_worker_upsert) and offline otherwise. Quarantine after failed
 * verifications is decided with the verdict (sched_merge.c) and refused at
 * claim; gpuctl workers shows both.
 */
#ifndef GPUD_HEALTH_H
#define GPUD_HEALTH_H

#include <stdint.h>

struct gpud;
struct store;

/* A worker's connection closed: mark it offline (queued on the database
 * thread; nothing while gpud stops, start-up resets every row). Loop
 * thread only. */
void health_worker_offline(struct gpud *d, int64_t worker_id);
/* At start: no worker is connected yet, so none is online. Database
 * thread (or before it starts). Returns 0 or a GERR_* from the store. */
int health_reset(struct store *st);

#endif
