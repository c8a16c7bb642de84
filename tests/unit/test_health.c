/* test_health.c - daemon/health.c, workers' standing: at start every
 * worker is offline; a closed connection marks its worker offline through
 * the database thread, and nothing is queued for worker 0 or while gpud
 * stops (fixture: store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "clock.h"
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "health.h"
#include "store_fx.h"
#include "unit_main.h"

static int online(struct store *st, int64_t id)
{
	struct store_worker w;
	int on;

	assert_int_equal(store_worker_get(st, id, &w), 0);
	on = w.online;
	store_worker_clear(&w);
	return on;
}

static void test_reset(void **state)
{
	struct fx *f = *state;
	int64_t old = add_worker(f->st, "old");
	int64_t a = add_worker(f->st, "a"), b = add_worker(f->st, "b");
	struct store_worker w;

	/* a and b were seen now; old long ago (store_worker_prune). */
	assert_int_equal(store_worker_set_online(f->st, a, 1, gclock_wall()), 0);
	assert_int_equal(store_worker_set_online(f->st, b, 1, gclock_wall()), 0);
	assert_int_equal(store_worker_set_online(f->st, old, 0, 5.0), 0);
	/* upsert marks a worker online (its login). */
	assert_int_equal(online(f->st, a), 1);
	assert_int_equal(online(f->st, b), 1);
	assert_int_equal(health_reset(f->st), 0);
	assert_int_equal(online(f->st, a), 0);
	assert_int_equal(online(f->st, b), 0);
	/* gpud's start forgets rows nothing needs. */
	assert_int_equal(store_worker_get(f->st, old, &w), GERR_NOTFOUND);
	/* Again, with none online, and on an empty table. */
	assert_int_equal(health_reset(f->st), 0);
	assert_int_equal(online(f->st, a), 0);
}

static void on_closed(void *opaque)
{
	(*(int *)opaque)++;
}

/* health_worker_offline for each id, then dbq_close, which runs what was
 * queued before it returns to the loop. */
static void offline(struct fx *f, int stopping, const int64_t *ids, size_t n)
{
	struct gpud *d = calloc(1, sizeof(*d));
	uv_loop_t loop;
	int closed = 0;
	unsigned queued = 0;

	assert_non_null(d);
	assert_int_equal(uv_loop_init(&loop), 0);
	d->loop = &loop;
	d->stopping = stopping;
	assert_int_equal(dbq_open(&loop, f->st, &d->dbq), 0);
	for (size_t i = 0; i < n; i++) {
		health_worker_offline(d, ids[i]);
		queued += !stopping && ids[i] != 0;
	}
	assert_int_equal(dbq_pending(d->dbq), queued);
	dbq_close(d->dbq, on_closed, &closed);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(closed, 1);
	assert_int_equal(uv_loop_close(&loop), 0);
	free(d);
}

static void test_offline(void **state)
{
	struct fx *f = *state;
	int64_t a = add_worker(f->st, "a"), b = add_worker(f->st, "b");
	int64_t c = add_worker(f->st, "c");
	int64_t ids[] = { a, c, 9999 }; /* an unknown id changes nothing */

	/* While gpud stops: nothing is queued, a stays online. */
	offline(f, 1, &a, 1);
	assert_int_equal(online(f->st, a), 1);
	offline(f, 0, ids, 3);
	assert_int_equal(online(f->st, a), 0);
	assert_int_equal(online(f->st, b), 1);
	assert_int_equal(online(f->st, c), 0);
	/* Worker 0 (a connection that never logged in): nothing queued. */
	int64_t zero[] = { 0, b };
	offline(f, 0, zero, 1);
	assert_int_equal(online(f->st, b), 1);
	offline(f, 0, zero, 2);
	assert_int_equal(online(f->st, b), 0);
}

UNIT_MAIN(T(test_reset),
	T(test_offline))
