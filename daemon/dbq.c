/* dbq.c - a single database thread fed by a queue; completions come back
 * to the loop through one uv_async_t. */
#include <stdlib.h>

#include "dbq.h"
#include "gerr.h"

struct dbq_req {
	dbq_work_fn work;
	dbq_after_fn after;
	void *arg;
	struct dbq_req *next;
};

struct dbq {
	uv_loop_t *loop;
	struct store *st;
	uv_thread_t thread;
	uv_mutex_t mu;
	uv_cond_t cv;
	uv_async_t async;
	struct dbq_req *todo_head, *todo_tail; /* guarded by mu */
	struct dbq_req *done_head, *done_tail; /* guarded by mu */
	int stopping;                          /* guarded by mu */
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

static void db_thread(void *opaque)
{
	struct dbq *q = opaque;

	uv_mutex_lock(&q->mu);
	for (;;) {
		while (!q->todo_head && !q->stopping)
			uv_cond_wait(&q->cv, &q->mu);
		struct dbq_req *r = q->todo_head;
		if (!r)
			break; /* stopping and drained */
		q->todo_head = r->next;
		if (!q->todo_head)
			q->todo_tail = NULL;
		uv_mutex_unlock(&q->mu);
		if (r->work)
			r->work(q->st, r->arg);
		uv_mutex_lock(&q->mu);
		push(&q->done_head, &q->done_tail, r);
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
		uv_close((uv_handle_t *)&q->async, (uv_close_cb)free);
		return GERR_NOMEM;
	}
	*ret = q;
	return 0;
}

int dbq_submit(struct dbq *q, dbq_work_fn work, dbq_after_fn after, void *arg)
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
	uv_mutex_lock(&q->mu);
	if (q->stopping) {
		uv_mutex_unlock(&q->mu);
		free(r);
		return GERR_STATE;
	}
	push(&q->todo_head, &q->todo_tail, r);
	q->pending++;
	uv_cond_signal(&q->cv);
	uv_mutex_unlock(&q->mu);
	return 0;
}

unsigned dbq_pending(const struct dbq *q)
{
	return q->pending;
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
