/* dbq.h - the database thread.
 *
 * gpud owns one SQLite connection, used only on this thread, so SQLite never
 * blocks the event loop and store calls are serialised. A request is a pair
 * of functions: work(st, arg) runs on the database thread, then after(arg)
 * runs on the loop thread. Requests run in submission order.
 *
 * Ownership: arg is owned by the caller until after() runs; dbq keeps no
 * reference afterwards. dbq_close drains queued requests (their after()
 * still runs if the loop runs) and joins the thread.
 */
#ifndef GPUD_DBQ_H
#define GPUD_DBQ_H

#include <stdint.h>
#include <uv.h>

struct store;
struct dbq;

/* Group commits' durations (the COMMIT that makes a batch durable) as a
 * histogram: le[i] counts commits of at most bound[i] seconds. */
#define DBQ_COMMIT_BUCKETS 12
struct dbq_commit_stats {
	uint64_t count;
	double sum_s;
	double bound[DBQ_COMMIT_BUCKETS];
	uint64_t le[DBQ_COMMIT_BUCKETS]; /* cumulative, as Prometheus wants */
};

typedef void (*dbq_work_fn)(struct store *st, void *arg);
typedef void (*dbq_after_fn)(void *arg);

int dbq_open(uv_loop_t *loop, struct store *st, struct dbq **ret);
/* Loop thread only. after may be NULL. Returns 0 or GERR_NOMEM, or
 * GERR_STATE when q is NULL or closing (after() then never runs). */
int dbq_submit(struct dbq *q, dbq_work_fn work, dbq_after_fn after, void *arg);
/* The same for a request that may share one commit with its neighbours
 * (group commit): work must touch nothing but the store and its own arg,
 * and must be safe to run twice (it runs again alone if the shared commit
 * fails), setting all of its outputs each time. */
int dbq_submit_batch(struct dbq *q, dbq_work_fn work, dbq_after_fn after,
		     void *arg);
/* A copy of the commit histogram (any thread). */
void dbq_commit_stats(struct dbq *q, struct dbq_commit_stats *ret);
/* Number of requests queued or running (loop thread). */
unsigned dbq_pending(const struct dbq *q);
/* Stop accepting work, finish what is queued, join the thread, then close
 * the async handle; cb runs when everything is closed. */
void dbq_close(struct dbq *q, void (*cb)(void *opaque), void *opaque);

#endif
