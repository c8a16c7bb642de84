/* dbq.c - a single database thread fed by a queue; completions come back
 * to the loop through one uv_async_t.
 *
 * Group commit: consecutive batchable requests (up to DBQ_BATCH_MAX) run in
 * one outer transaction and become durable with one commit, before any of
 * their after() callbacks run. If that commit fails, the batch was rolled
 * back as a whole and each request runs again alone, in its own
 * transaction, so each gets its own outcome. */
#include <stdlib.h>

#include "clock.h"
#include "dbq.h"
#include "gerr.h"
#include "store.h"

#define DBQ_BATCH_MAX 256

/* From a fast SSD's fsync to a disk in trouble. */
static const double commit_bounds[DBQ_COMMIT_BUCKETS] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
};

struct dbq_req {
	dbq_work_fn work;
	dbq_after_fn after;
	void *arg;
	int batchable;
	struct dbq_req *next;
};

struct dbq {
	uv_loop_t *loop;
	struct store *st;
	uv_thread_t thread;
	uv_mutex_t mu;
	uv_cond_t cv;
	uv_async_t async;
	struct dbq_req *queue_head, *queue_tail; /* guarded by mu */
	struct dbq_req *done_head, *done_tail; /* guarded by mu */
	int stopping;                          /* guarded by mu */
	struct dbq_commit_stats commits;       /* guarded by mu */
	unsigned pending;                      /* loop thread */
	void (*close_cb)(void *);
	void *close_opaque;
};

static void push(struct dbq_req **head, struct dbq_req **tail, struct dbq_req *r)
{
	r->next = NULL;
	if (*tail)
		(*tail)->next = r;
	else
		*head = r;
	*tail = r;
}

/* Database thread. */
static void note_commit(struct dbq *q, double s)
{
	uv_mutex_lock(&q->mu);
	q->commits.count++;
	q->commits.sum_s += s;
	for (int i = 0; i < DBQ_COMMIT_BUCKETS; i++)
		if (s <= commit_bounds[i])
			q->commits.le[i]++;
	uv_mutex_unlock(&q->mu);
}

void dbq_commit_stats(struct dbq *q, struct dbq_commit_stats *ret)
{
	uv_mutex_lock(&q->mu);
	*ret = q->commits;
	uv_mutex_unlock(&q->mu);
	for (int i = 0; i < DBQ_COMMIT_BUCKETS; i++)
		ret->bound[i] = commit_bounds[i];
}

/* Run one batch of batchable requests (a list linked through next). */
static void run_batch(struct dbq *q, struct dbq_req *batch)
{
	struct dbq_req *r;
	int rc = store_batch_begin(q->st);

	for (r = batch; rc == 0 && r; r = r->next)
		r->work(q->st, r->arg);
	if (rc == 0) {
		int64_t t0 = gclock_mono_ns();

		rc = store_batch_commit(q->st);
		if (rc == 0)
			note_commit(q, (double)(gclock_mono_ns() - t0) / 1e9);
	}
	if (rc == 0)
		return;
	store_batch_rollback(q->st);
	/* Nothing of the batch is stored: give each its own transaction. */
	for (r = batch; r; r = r->next)
		r->work(q->st, r->arg);
}

static void db_thread(void *opaque)
{
	struct dbq *q = opaque;

	uv_mutex_lock(&q->mu);
	for (;;) {
		while (!q->queue_head && !q->stopping)
			uv_cond_wait(&q->cv, &q->mu);
		struct dbq_req *r = q->queue_head, *last = r;
		if (!r)
			break; /* stopping and drained */
		/* Take the first request, and with it the batchable ones that
		 * follow it directly (order is kept). */
		unsigned n = 1;
		if (r->batchable)
			while (last->next && last->next->batchable && n < DBQ_BATCH_MAX) {
				last = last->next;
				n++;
			}
		q->queue_head = last->next;
		if (!q->queue_head)
			q->queue_tail = NULL;
		last->next = NULL;
		uv_mutex_unlock(&q->mu);
		if (r->batchable)
			run_batch(q, r);
		else if (r->work)
			r->work(q->st, r->arg);
		uv_mutex_lock(&q->mu);
		for (struct dbq_req *x = r, *next; x; x = next) {
			next = x->next;
			push(&q->done_head, &q->done_tail, x);
		}
		uv_async_send(&q->async);
	}
	uv_mutex_unlock(&q->mu);
}

static void on_async(uv_async_t *a)
{
	struct dbq *q = a->data;
	struct dbq_req *r;

	uv_mutex_lock(&q->mu);
	r = q->done_head;
	q->done_head = q->done_tail = NULL;
	uv_mutex_unlock(&q->mu);
	while (r) {
		struct dbq_req *next = r->next;
		q->pending--;
		if (r->after)
			r->after(r->arg);
		free(r);
		r = next;
	}
}

static void on_async_closed(uv_handle_t *h)
{
	struct dbq *q = h->data;
	void (*cb)(void *) = q->close_cb;
	void *opaque = q->close_opaque;

	uv_cond_destroy(&q->cv);
	uv_mutex_destroy(&q->mu);
	free(q);
	if (cb)
		cb(opaque);
}

int dbq_open(uv_loop_t *loop, struct store *st, struct dbq **ret)
{
	struct dbq *q = calloc(1, sizeof(*q));

	if (!q)
		return GERR_NOMEM;
	q->loop = loop;
	q->st = st;
	if (uv_mutex_init(&q->mu) || uv_cond_init(&q->cv)) {
		free(q);
		return GERR_NOMEM;
	}
	if (uv_async_init(loop, &q->async, on_async)) {
		uv_cond_destroy(&q->cv);
		uv_mutex_destroy(&q->mu);
		free(q);
		return GERR_NOMEM;
	}
	q->async.data = q;
	if (uv_thread_create(&q->thread, db_thread, q)) {
		/* close_cb is NULL: the close frees q, its mutex and its cv. */
		uv_close((uv_handle_t *)&q->async, on_async_closed);
		return GERR_NOMEM;
	}
	*ret = q;
	return 0;
}

static int submit(struct dbq *q, dbq_work_fn work, dbq_after_fn after,
		  void *arg, int batchable)
{
	struct dbq_req *r;

	if (!q)
		return GERR_STATE; /* closed: gpud is stopping */
	r = calloc(1, sizeof(*r));
	if (!r)
		return GERR_NOMEM;
	r->work = work;
	r->after = after;
	r->arg = arg;
	r->batchable = batchable && work;
	uv_mutex_lock(&q->mu);
	if (q->stopping) {
		uv_mutex_unlock(&q->mu);
		free(r);
		return GERR_STATE;
	}
	push(&q->queue_head, &q->queue_tail, r);
	q->pending++;
	uv_cond_signal(&q->cv);
	uv_mutex_unlock(&q->mu);
	return 0;
}

int dbq_submit(struct dbq *q, dbq_work_fn work, dbq_after_fn after, void *arg)
{
	return submit(q, work, after, arg, 0);
}

int dbq_submit_batch(struct dbq *q, dbq_work_fn work, dbq_after_fn after,
		     void *arg)
{
	return submit(q, work, after, arg, 1);
}

unsigned dbq_pending(const struct dbq *q)
{
	return q->pending;
}

void dbq_close(struct dbq *q, void (*cb)(void *opaque), void *opaque)
{
	uv_mutex_lock(&q->mu);
	q->stopping = 1;
	uv_cond_signal(&q->cv);
	uv_mutex_unlock(&q->mu);
	uv_thread_join(&q->thread);
	on_async(&q->async); /* run the remaining completions */
	q->close_cb = cb;
	q->close_opaque = opaque;
	uv_close((uv_handle_t *)&q->async, on_async_closed);
}
