/* test_dbq.c - daemon/dbq.c, the database thread: work runs on its own
 * thread and after() on the loop's, both in submission order; the pending
 * count; batchable requests queued together share one commit (the commit
 * histogram counts one) and every write of the batch is stored; a closed
 * or closing queue refuses work with GERR_STATE; dbq_close drains what
 * was queued and calls back once all is closed (fixture: store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <uv.h>

#include "dbq.h"
#include "gerr.h"
#include "store_fx.h"
#include "unit_main.h"

#define N 64

struct run {
	uv_loop_t loop;
	struct dbq *q;
	uv_thread_t loop_thread;
	uv_thread_t db_thread;
	int db_thread_set;
	int worked[N], work_order[N], after_order[N];
	int nwork, nafter;
	int wrong_thread;
	int64_t job[N];
	uv_sem_t gate; /* holds the database thread in block_work */
	int closed;
	int resubmit_rc;
};

struct item {
	struct run *r;
	int i;
};

static void run_init(struct run *r, struct store *st)
{
	memset(r, 0, sizeof(*r));
	assert_int_equal(uv_loop_init(&r->loop), 0);
	r->loop_thread = uv_thread_self();
	assert_int_equal(uv_sem_init(&r->gate, 0), 0);
	assert_int_equal(dbq_open(&r->loop, st, &r->q), 0);
}

static void on_closed(void *opaque)
{
	((struct run *)opaque)->closed++;
}

static void run_close(struct run *r)
{
	dbq_close(r->q, on_closed, r);
	assert_int_equal(uv_run(&r->loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(r->closed, 1);
	assert_int_equal(uv_loop_close(&r->loop), 0);
	uv_sem_destroy(&r->gate);
}

/* Database thread: note the order; every work on one thread, not the
 * loop's. */
static void work(struct store *st, void *arg)
{
	struct item *it = arg;
	struct run *r = it->r;
	uv_thread_t self = uv_thread_self();

	(void)st;
	if (uv_thread_equal(&self, &r->loop_thread))
		r->wrong_thread++;
	if (!r->db_thread_set) {
		r->db_thread = self;
		r->db_thread_set = 1;
	} else if (!uv_thread_equal(&self, &r->db_thread)) {
		r->wrong_thread++;
	}
	r->worked[it->i]++;
	r->work_order[r->nwork++] = it->i;
}

/* A batchable work: one job row, set each time it runs. */
static void insert_work(struct store *st, void *arg)
{
	struct item *it = arg;

	work(st, arg);
	it->r->job[it->i] = 0;
	if (store_job_insert(st, "graveler", "{\"n\":1}", 1, 1.0,
			     &it->r->job[it->i]))
		it->r->job[it->i] = -1;
}

static void after(void *arg)
{
	struct item *it = arg;
	struct run *r = it->r;
	uv_thread_t self = uv_thread_self();

	if (!uv_thread_equal(&self, &r->loop_thread))
		r->wrong_thread++;
	r->after_order[r->nafter++] = it->i;
}

static void block_work(struct store *st, void *arg)
{
	(void)st;
	uv_sem_wait(&((struct run *)arg)->gate);
}

/* Run the loop until n after() calls have come back. */
static void wait_after(struct run *r, int n)
{
	while (r->nafter < n)
		assert_int_equal(uv_run(&r->loop, UV_RUN_ONCE) >= 0, 1);
}

static void test_order(void **state)
{
	struct fx *f = *state;
	struct run *r = calloc(1, sizeof(*r));
	struct item it[N];

	assert_non_null(r);
	run_init(r, f->st);
	assert_int_equal(dbq_pending(r->q), 0);
	for (int i = 0; i < N; i++) {
		it[i] = (struct item){ r, i };
		/* Plain and batchable mixed: the order is kept across both. */
		assert_int_equal((i % 3 ? dbq_submit_batch : dbq_submit)(
					 r->q, i % 3 ? insert_work : work, after,
					 &it[i]), 0);
	}
	assert_int_equal(dbq_pending(r->q), N); /* counted down on the loop */
	wait_after(r, N);
	assert_int_equal(dbq_pending(r->q), 0);
	assert_int_equal(r->nwork, N);
	for (int i = 0; i < N; i++) {
		assert_int_equal(r->worked[i], 1); /* each ran once */
		assert_int_equal(r->work_order[i], i);
		assert_int_equal(r->after_order[i], i);
		if (i % 3)
			assert_true(r->job[i] > 0);
	}
	assert_int_equal(r->wrong_thread, 0);
	run_close(r);
	free(r);
}

static void test_group_commit(void **state)
{
	struct fx *f = *state;
	struct run *r = calloc(1, sizeof(*r));
	struct dbq_commit_stats cs;
	struct item it[N];
	struct store_job job;

	assert_non_null(r);
	run_init(r, f->st);
	dbq_commit_stats(r->q, &cs);
	assert_true(cs.count == 0 && cs.sum_s == 0);
	/* The thread waits in block_work while the batch is queued behind. */
	assert_int_equal(dbq_submit(r->q, block_work, NULL, r), 0);
	for (int i = 0; i < 10; i++) {
		it[i] = (struct item){ r, i };
		assert_int_equal(dbq_submit_batch(r->q, insert_work, after, &it[i]),
				 0);
	}
	assert_int_equal(dbq_pending(r->q), 11);
	uv_sem_post(&r->gate);
	wait_after(r, 10);
	assert_int_equal(dbq_pending(r->q), 0);
	/* One commit for the ten, each of whose rows is there, durable. */
	dbq_commit_stats(r->q, &cs);
	assert_true(cs.count == 1);
	assert_true(cs.sum_s >= 0);
	for (int i = 0; i < DBQ_COMMIT_BUCKETS; i++) {
		assert_true(cs.bound[i] > 0);
		if (i) {
			assert_true(cs.bound[i] > cs.bound[i - 1]);
			assert_true(cs.le[i] >= cs.le[i - 1]); /* cumulative */
		}
		assert_true(cs.le[i] <= cs.count);
	}
	run_close(r);
	reopen(f);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(r->worked[i], 1);
		assert_true(r->job[i] > 0);
		assert_int_equal(store_job_get(f->st, r->job[i], &job), 0);
		assert_string_equal(job.workload, "graveler");
		store_job_clear(&job);
	}
	/* Distinct rows. */
	for (int i = 1; i < 10; i++)
		assert_true(r->job[i] != r->job[i - 1]);
	free(r);
}

/* after() that tries to queue more while the queue closes. */
static void resubmit_after(void *arg)
{
	struct run *r = arg;

	r->resubmit_rc = dbq_submit(r->q, NULL, NULL, NULL);
	r->nafter++;
}

static void test_close(void **state)
{
	struct fx *f = *state;
	struct run *r = calloc(1, sizeof(*r));
	struct item it[8];

	assert_non_null(r);
	/* No queue: refused. */
	assert_int_equal(dbq_submit(NULL, work, after, NULL), GERR_STATE);
	assert_int_equal(dbq_submit_batch(NULL, work, after, NULL), GERR_STATE);
	run_init(r, f->st);
	/* A request with neither work nor after is fine. */
	assert_int_equal(dbq_submit(r->q, NULL, NULL, NULL), 0);
	for (int i = 0; i < 8; i++) {
		it[i] = (struct item){ r, i };
		assert_int_equal((i % 2 ? dbq_submit_batch : dbq_submit)(
					 r->q, i % 2 ? insert_work : work, after,
					 &it[i]), 0);
	}
	assert_int_equal(dbq_submit(r->q, NULL, resubmit_after, r), 0);
	/* Closed at once, without running the loop: everything queued
	 * still runs, in order, and its after() comes back; one that
	 * queues more then is refused. */
	r->resubmit_rc = 1;
	run_close(r);
	assert_int_equal(r->nwork, 8);
	assert_int_equal(r->nafter, 9);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(r->work_order[i], i);
		assert_int_equal(r->after_order[i], i);
	}
	assert_int_equal(r->resubmit_rc, GERR_STATE);
	assert_int_equal(r->wrong_thread, 0);
	free(r);
}

UNIT_MAIN(T(test_order),
	T(test_group_commit),
	T(test_close))
