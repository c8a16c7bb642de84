/* test_store_workers.c - unit tests of daemon/store/store_workers.c (fixture:
 * store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "gerr.h"
#include "store_fx.h"

/* ---- workers ---- */

static void test_workers(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	struct store_worker wk, *a;
	int64_t id = 0, id2 = 0, id3 = 0;
	size_t n;
	int q = -1;

	assert_int_equal(store_worker_upsert(st, "alpha", "cuda:0", 10.0, &id),
			 0);
	assert_int_equal(store_worker_upsert(st, "beta", "cpu", 11.0, &id2), 0);
	assert_int_not_equal(id, id2);
	assert_int_equal(store_worker_upsert(st, "alpha", "cuda:1", 12.0, &id3),
			 0);
	assert_int_equal(id3, id);

	assert_int_equal(store_worker_get(st, id, &wk), 0);
	assert_string_equal(wk.name, "alpha");
	assert_string_equal(wk.device, "cuda:1");
	assert_int_equal(wk.online, 1);
	assert_true(wk.first_seen == 10.0);
	assert_true(wk.last_seen == 12.0);
	store_worker_clear(&wk);

	assert_int_equal(store_worker_set_online(st, id, 0, 13.0), 0);
	assert_int_equal(store_worker_get(st, id, &wk), 0);
	assert_int_equal(wk.online, 0);
	store_worker_clear(&wk);
	assert_int_equal(store_worker_all_offline(st), 0);
	assert_int_equal(store_worker_get(st, id2, &wk), 0);
	assert_int_equal(wk.online, 0);
	store_worker_clear(&wk);

	assert_int_equal(store_worker_credit(st, id, 100, 2.5, 20.0), 0);
	assert_int_equal(store_worker_credit(st, id, 50, 3.5, 21.0), 0);
	assert_int_equal(store_worker_get(st, id, &wk), 0);
	assert_int_equal(wk.leases_done, 2);
	assert_int_equal(wk.units_done, 150);
	assert_true(wk.rate == 3.5);
	assert_true(wk.last_seen == 21.0);
	store_worker_clear(&wk);

	assert_int_equal(store_worker_fail(st, id, 3, &q), 0);
	assert_int_equal(q, 0);
	assert_int_equal(store_worker_fail(st, id, 3, NULL), 0);
	assert_int_equal(store_worker_fail(st, id, 3, &q), 0);
	assert_int_equal(q, 1);
	assert_int_equal(store_worker_fail(st, id2, 0, &q), 0);
	assert_int_equal(q, 0); /* threshold 0: never */
	assert_int_equal(store_worker_get(st, id, &wk), 0);
	assert_int_equal(wk.failures, 3);
	assert_int_equal(wk.quarantined, 1);
	store_worker_clear(&wk);
	/* Reconnecting does not lift a quarantine. */
	assert_int_equal(store_worker_upsert(st, "alpha", "cuda:1", 30.0, &id3),
			 0);
	assert_int_equal(store_worker_get(st, id, &wk), 0);
	assert_int_equal(wk.quarantined, 1);
	store_worker_clear(&wk);

	/* Messages about leases it was not granted, and stalls: counted
	 * apart, each quarantining at the threshold. */
	assert_int_equal(store_worker_charge(st, id2, STORE_CHARGE_FOREIGN, 2,
					     &q), 0);
	assert_int_equal(q, 0);
	assert_int_equal(store_worker_charge(st, id2, STORE_CHARGE_STALL, 2,
					     &q), 0);
	assert_int_equal(q, 0);
	assert_int_equal(store_worker_charge(st, id2, STORE_CHARGE_STALL, 2,
					     NULL), 0);
	assert_int_equal(store_worker_get(st, id2, &wk), 0);
	assert_int_equal(wk.foreign_msgs, 1);
	assert_int_equal(wk.stalls, 2);
	assert_int_equal(wk.failures, 1);
	assert_int_equal(wk.quarantined, 1);
	store_worker_clear(&wk);
	assert_int_equal(store_worker_charge(st, id2, STORE_CHARGE_FOREIGN, 0,
					     &q), 0);
	assert_int_equal(q, 1); /* stays quarantined */
	assert_int_equal(store_worker_charge(st, id2, (enum store_charge)7, 2,
					     &q), GERR_INVAL);
	assert_int_equal(store_worker_charge(st, 999, STORE_CHARGE_FOREIGN, 2,
					     &q), GERR_NOTFOUND);

	assert_int_equal(store_worker_list(st, &a, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(a[0].name, "alpha");
	assert_string_equal(a[1].name, "beta");
	store_worker_free_array(a, n);

	assert_int_equal(store_worker_get(st, 999, &wk), GERR_NOTFOUND);
	assert_int_equal(store_worker_credit(st, 999, 1, 1.0, 1.0),
			 GERR_NOTFOUND);
	assert_int_equal(store_worker_fail(st, 999, 3, &q), GERR_NOTFOUND);
	assert_int_equal(store_worker_set_online(st, 999, 1, 1.0),
			 GERR_NOTFOUND);
}

/* Where a worker runs (migration 009): stored with its row, replaced by
 * its next login's, every field checked again on the way in. */
static void test_worker_place(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	struct store_worker wk, *a;
	struct place p = { 0 }, bad;
	int64_t id = 0, id2 = 0;
	size_t n;

	assert_int_equal(store_worker_upsert(st, "slurm", "cpu", 1.0, &id), 0);
	assert_int_equal(store_worker_upsert(st, "plain", "cpu", 1.0, &id2), 0);
	assert_int_equal(store_worker_get(st, id, &wk), 0);
	assert_string_equal(wk.place.host, "");
	store_worker_clear(&wk);

	assert_int_equal(place_set(&p, PLACE_HOST, "node7"), 0);
	assert_int_equal(place_set(&p, PLACE_SLURM_JOB, "1240"), 0);
	assert_int_equal(place_set(&p, PLACE_SLURM_ARRAY, "1234_0"), 0);
	assert_int_equal(store_worker_set_place(st, id, &p), 0);
	assert_int_equal(store_worker_get(st, id, &wk), 0);
	assert_string_equal(wk.place.host, "node7");
	assert_string_equal(wk.place.slurm_job, "1240");
	assert_string_equal(wk.place.slurm_array, "1234_0");
	assert_string_equal(wk.place.pod, "");
	store_worker_clear(&wk);

	/* The next login from a pod replaces the whole place. */
	memset(&p, 0, sizeof(p));
	assert_int_equal(place_set(&p, PLACE_POD, "gpuworker-1-abcde"), 0);
	assert_int_equal(store_worker_set_place(st, id, &p), 0);
	assert_int_equal(store_worker_list(st, &a, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(a[0].place.pod, "gpuworker-1-abcde");
	assert_string_equal(a[0].place.slurm_job, "");
	assert_string_equal(a[1].place.pod, "");
	store_worker_free_array(a, n);

	/* A place that breaks a rule never reaches the table. */
	memset(&bad, 0, sizeof(bad));
	memcpy(bad.host, "a b", 4);
	assert_int_equal(store_worker_set_place(st, id, &bad), GERR_INVAL);
	assert_int_equal(store_worker_get(st, id, &wk), 0);
	assert_string_equal(wk.place.pod, "gpuworker-1-abcde");
	store_worker_clear(&wk);
	assert_int_equal(store_worker_set_place(st, 999, &p), GERR_NOTFOUND);
	assert_int_equal(store_worker_set_place(st, id, NULL), GERR_INVAL);
}

FX_MAIN(T(test_workers), T(test_worker_place))
