/* health.c - workers' standing (health.h): online/offline bookkeeping as
 * their connections come and go. */
#include <stdlib.h>

#include "clock.h"
#include "dbq.h"
#include "gpud.h"
#include "health.h"
#include "scheduler.h"
#include "store.h"

struct offline_req {
	int64_t worker_id;
};

static void offline_work(struct store *st, void *arg)
{
	struct offline_req *r = arg;
	double now = gclock_wall();

	store_worker_set_online(st, r->worker_id, 0, now);
	/* Keep the table bounded for fleets that start many processes. */
	store_worker_prune(st, now - STORE_WORKER_KEEP_S - 86400,
			   now - STORE_WORKER_KEEP_S, NULL);
}

void health_worker_offline(struct gpud *d, int64_t worker_id)
{
	struct offline_req *r;

	if (!worker_id || d->stopping)
		return;
	r = malloc(sizeof(*r));
	if (!r)
		return;
	r->worker_id = worker_id;
	if (dbq_submit(d->dbq, offline_work, free, r))
		free(r);
}

int health_reset(struct store *st)
{
	int r = store_worker_all_offline(st);

	return r ? r : store_worker_prune(st, 0, gclock_wall() -
					  STORE_WORKER_KEEP_S, NULL);
}
