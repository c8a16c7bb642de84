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

	assert_int_equal(store_worker_upsert(st, "alpha", "n1:7", "cuda:0", 10.0, &id),
			 0);
	assert_int_equal(store_worker_upsert(st, "beta", "n1:8", "cpu", 11.0, &id2), 0);
	assert_int_not_equal(id, id2);
	assert_int_equal(store_worker_upsert(st, "alpha", "n1:7", "cuda:1", 12.0, &id3),
			 0);
	assert_int_equal(id3, id);

	assert_int_equal(store_worker_get(st, id, &wk), 0);
	assert_string_equal(wk.name, "alpha@n1:7");
	assert_string_equal(wk.credential, "alpha");
	assert_string_equal(wk.instance, "n1:7");
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
	assert_int_equal(store_worker_upsert(st, "alpha", "n1:7", "cuda:1", 30.0, &id3),
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

	assert_int_equal(store_worker_list(st, 0, &a, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(a[0].name, "alpha@n1:7");
	assert_string_equal(a[1].name, "beta@n1:8");
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

	assert_int_equal(store_worker_upsert(st, "slurm", "n7/slurm1234_0/cpu", "cpu", 1.0, &id), 0);
	assert_int_equal(store_worker_upsert(st, "plain", "n7:1", "cpu", 1.0, &id2), 0);
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
	assert_int_equal(store_worker_list(st, 0, &a, &n), 0);
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

/* A worker is a process: one credential's instances are rows of their
 * own (counters, quarantine), its leases counted together for the
 * per-credential cap. */
static void test_worker_process(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	struct store_worker wk;
	int64_t a = 0, b = 0, c = 0, legacy = 0, again = 0, job;
	uint64_t n = 9;
	int q = -1;

	assert_int_equal(store_worker_upsert(st, "fleet", "n1/slurm9_0/cpu",
					     "cpu", 1.0, &a), 0);
	assert_int_equal(store_worker_upsert(st, "fleet", "n2/slurm9_1/cpu",
					     "cpu", 1.0, &b), 0);
	assert_int_equal(store_worker_upsert(st, "other", "n1/slurm9_0/cpu",
					     "cpu", 1.0, &c), 0);
	assert_int_equal(store_worker_upsert(st, "fleet", "", "cpu", 1.0,
					     &legacy), 0);
	assert_true(a != b && a != c && b != c && legacy != a && legacy != b);
	assert_int_equal(store_worker_upsert(st, "fleet", "n2/slurm9_1/cpu",
					     "cpu", 2.0, &again), 0);
	assert_int_equal(again, b);
	assert_int_equal(store_worker_get(st, legacy, &wk), 0);
	assert_string_equal(wk.name, "fleet"); /* as before migration 012 */
	assert_string_equal(wk.credential, "fleet"); /* 012's trigger */
	assert_string_equal(wk.instance, "");
	store_worker_clear(&wk);

	/* Bad names never reach the table. */
	assert_int_equal(store_worker_upsert(st, "fleet", "a b", "cpu", 1.0,
					     &again), GERR_INVAL);
	assert_int_equal(store_worker_upsert(st, "fl@et", "x", "cpu", 1.0,
					     &again), GERR_INVAL);
	assert_int_equal(store_worker_upsert(st, "", "x", "cpu", 1.0, &again),
			 GERR_INVAL);
	assert_int_equal(store_worker_upsert(st, "fleet", NULL, "cpu", 1.0,
					     &again), GERR_INVAL);

	/* One process quarantined, the other of its credential not. */
	assert_int_equal(store_worker_fail(st, a, 1, &q), 0);
	assert_int_equal(q, 1);
	assert_int_equal(store_worker_get(st, b, &wk), 0);
	assert_int_equal(wk.quarantined, 0);
	assert_int_equal(wk.failures, 0);
	store_worker_clear(&wk);

	/* Leases held by a credential: all its processes', no other's. */
	job = add_job(st, "graveler");
	for (int k = 0; k < 3; k++) {
		struct store_lease l = add_lease(st, job,
						 k == 0 ? a : k == 1 ? b : c, 10);

		store_lease_clear(&l);
	}
	assert_int_equal(store_worker_credential_held(st, b, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(store_worker_credential_held(st, c, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_lease_held_count(st, b, &n), 0);
	assert_int_equal(n, 1);
}

/* Rows nothing needs go after STORE_WORKER_KEEP_S: offline, unseen since
 * the cut, named by no lease or failure memory, not quarantined, not the
 * newest. */
static void test_worker_prune(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	struct store_worker *a;
	int64_t gone = 0, online = 0, leased = 0, quar = 0, recent = 0;
	int64_t newest = 0, job;
	struct store_lease held;
	uint64_t n = 9;
	size_t nw;

	assert_int_equal(store_worker_upsert(st, "f", "gone", "cpu", 1.0,
					     &gone), 0);
	assert_int_equal(store_worker_upsert(st, "f", "online", "cpu", 1.0,
					     &online), 0);
	assert_int_equal(store_worker_upsert(st, "f", "leased", "cpu", 1.0,
					     &leased), 0);
	assert_int_equal(store_worker_upsert(st, "f", "quar", "cpu", 1.0,
					     &quar), 0);
	assert_int_equal(store_worker_upsert(st, "f", "recent", "cpu", 50.0,
					     &recent), 0);
	assert_int_equal(store_worker_upsert(st, "f", "newest", "cpu", 1.0,
					     &newest), 0);
	assert_int_equal(store_rate_register(st, gone, "[\"graveler\"]", 1.0),
			 0);
	job = add_job(st, "graveler");
	held = add_lease(st, job, leased, 10);
	store_lease_clear(&held);
	assert_int_equal(store_worker_fail(st, quar, 1, NULL), 0);
	assert_int_equal(store_worker_all_offline(st), 0);
	assert_int_equal(store_worker_set_online(st, online, 1, 1.0), 0);

	/* A window that misses its last sight leaves it. */
	assert_int_equal(store_worker_prune(st, 2.0, 10.0, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_worker_prune(st, 0, 10.0, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_worker_list(st, 0, &a, &nw), 0);
	assert_int_equal(nw, 5);
	for (size_t i = 0; i < nw; i++)
		assert_int_not_equal(a[i].id, gone);
	store_worker_free_array(a, nw);
	/* Nothing more to forget; and the name can come back as a new row. */
	assert_int_equal(store_worker_prune(st, 0, 10.0, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_worker_upsert(st, "f", "gone", "cpu", 60.0,
					     &gone), 0);
	assert_true(gone > newest);
	/* The list since a time: rows online or seen since (gone is online
	 * again, recent was seen at 50). */
	assert_int_equal(store_worker_set_online(st, online, 0, 1.0), 0);
	assert_int_equal(store_worker_list(st, 40.0, &a, &nw), 0);
	assert_int_equal(nw, 2);
	assert_int_equal(a[0].id, recent);
	assert_int_equal(a[1].id, gone);
	store_worker_free_array(a, nw);
}

/* Migration 012: a token's row from before is that token's own
 * (credential = name, instance ''), and its processes get rows of their
 * own beside it. */
static void test_worker_migration(void **state)
{
	struct fx *f = *state;
	struct store_worker wk;
	int64_t old, again = 0, proc = 0;

	open_old(f, 11);
	old = add_worker(f->st, "fleet");
	assert_int_equal(store_worker_fail(f->st, old, 1, NULL), 0);
	reopen(f);
	assert_int_equal(store_worker_get(f->st, old, &wk), 0);
	assert_string_equal(wk.name, "fleet");
	assert_string_equal(wk.credential, "fleet");
	assert_string_equal(wk.instance, "");
	assert_int_equal(wk.quarantined, 1);
	store_worker_clear(&wk);
	assert_int_equal(store_worker_upsert(f->st, "fleet", "", "cpu", 9.0,
					     &again), 0);
	assert_int_equal(again, old);
	assert_int_equal(store_worker_upsert(f->st, "fleet", "n1:5", "cpu", 9.0,
					     &proc), 0);
	assert_true(proc != old);
	assert_int_equal(store_worker_get(f->st, proc, &wk), 0);
	assert_string_equal(wk.name, "fleet@n1:5");
	assert_int_equal(wk.quarantined, 0);
	store_worker_clear(&wk);
}

/* drained and quarantined, by a process's name or by its credential's;
 * forgive resets the counts; other rows untouched. */
static void test_worker_drain_forgive(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	struct store_worker wk;
	int64_t a = 0, b = 0, c = 0;
	uint64_t n = 0;
	int q = 0;

	assert_int_equal(store_worker_upsert(st, "fleet", "n1:1", "cpu", 1.0, &a), 0);
	assert_int_equal(store_worker_upsert(st, "fleet", "n1:2", "cpu", 1.0, &b), 0);
	assert_int_equal(store_worker_upsert(st, "other", "n2:1", "cpu", 1.0, &c), 0);
	assert_int_equal(store_worker_drain(st, "fleet@n1:2", 1, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_worker_get(st, b, &wk), 0);
	assert_int_equal(wk.drained, 1);
	store_worker_clear(&wk);
	assert_int_equal(store_worker_get(st, a, &wk), 0);
	assert_int_equal(wk.drained, 0);
	store_worker_clear(&wk);
	/* A credential: every process of it. */
	assert_int_equal(store_worker_drain(st, "fleet", 1, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(store_worker_get(st, a, &wk), 0);
	assert_int_equal(wk.drained, 1);
	store_worker_clear(&wk);
	assert_int_equal(store_worker_get(st, c, &wk), 0);
	assert_int_equal(wk.drained, 0);
	store_worker_clear(&wk);
	/* A drained row survives a new login of its process. */
	assert_int_equal(store_worker_upsert(st, "fleet", "n1:1", "cpu", 2.0, &a), 0);
	assert_int_equal(store_worker_get(st, a, &wk), 0);
	assert_int_equal(wk.drained, 1);
	store_worker_clear(&wk);
	assert_int_equal(store_worker_drain(st, "fleet@n1:1", 0, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_worker_get(st, a, &wk), 0);
	assert_int_equal(wk.drained, 0);
	store_worker_clear(&wk);
	assert_int_equal(store_worker_drain(st, "nobody", 1, &n), GERR_NOTFOUND);
	assert_int_equal(store_worker_drain(st, "fleet@n9:9", 1, &n), GERR_NOTFOUND);
	assert_int_equal(store_worker_drain(st, "", 1, &n), GERR_INVAL);
	assert_int_equal(store_worker_drain(st, "a b", 1, &n), GERR_INVAL);
	assert_int_equal(store_worker_drain(st, NULL, 1, &n), GERR_INVAL);

	/* Quarantined by failures, stalls and foreign messages; forgiven. */
	assert_int_equal(store_worker_fail(st, c, 2, &q), 0);
	assert_int_equal(store_worker_charge(st, c, STORE_CHARGE_STALL, 2, &q), 0);
	assert_int_equal(store_worker_charge(st, c, STORE_CHARGE_FOREIGN, 2, &q), 0);
	assert_int_equal(store_worker_fail(st, c, 2, &q), 0);
	assert_int_equal(q, 1);
	assert_int_equal(store_worker_forgive(st, "other@n2:1", &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_worker_get(st, c, &wk), 0);
	assert_int_equal(wk.quarantined, 0);
	assert_int_equal(wk.failures, 0);
	assert_int_equal(wk.stalls, 0);
	assert_int_equal(wk.foreign_msgs, 0);
	store_worker_clear(&wk);
	/* It counts from zero again: one failure does not quarantine. */
	assert_int_equal(store_worker_fail(st, c, 2, &q), 0);
	assert_int_equal(q, 0);
	assert_int_equal(store_worker_forgive(st, "nobody@x", &n), GERR_NOTFOUND);
}

FX_MAIN(T(test_workers), T(test_worker_place), T(test_worker_process),
	T(test_worker_prune), T(test_worker_migration), T(test_worker_drain_forgive))
