/* test_gpud.c - daemon/gpud.c, what every module does to the shared state:
 * the lease policy from the configuration; job rate samples (kept per
 * job, smoothed by rate_smooth.c, which test_rate_smooth.c tests); the data directory's standing (storage errors stop new work
 * with a reason, other errors do not, a success starts the write probe,
 * which clears the reason and wakes the parked claims only once the
 * directory takes writes); and the wake hook. stderr is redirected to a
 * temporary file to read the log lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>

#include <sys/stat.h>
#include <unistd.h>

#include "gerr.h"
#include "gpud.h"
#include "log_fx.h"
#include "scheduler.h"
#include "unit_main.h"

static void test_policy(void **state)
{
	struct gpud *d = calloc(1, sizeof(*d));
	struct sched_policy p;

	(void)state;
	assert_non_null(d);
	d->cfg.lease_target_s = 300;
	d->cfg.lease_units = 1000;
	d->cfg.lease_timeout_s = 15;
	d->cfg.max_failures = 3;
	d->cfg.quarantine_after = 4;
	d->cfg.max_leases_per_worker = 16;
	d->cfg.max_leases_per_credential = 64;
	d->cfg.progress_timeout_s = 600;
	d->cfg.trust_after = 2;
	d->cfg.data_dir = "/srv/gpud";
	p = gpud_policy(d);
	assert_true(p.lease_target_s == 300 && p.lease_units == 1000);
	assert_true(p.lease_timeout_s == 15 && p.progress_timeout_s == 600);
	assert_int_equal(p.max_failures, 3);
	assert_int_equal(p.quarantine_after, 4);
	assert_int_equal(p.max_leases_per_worker, 16);
	assert_int_equal(p.max_leases_per_credential, 64);
	assert_int_equal(p.trust_after, 2);
	assert_ptr_equal(p.data_dir, d->cfg.data_dir); /* d's string */
	free(d);
}

static void test_rates(void **state)
{
	struct gpud *d = calloc(1, sizeof(*d));

	(void)state;
	assert_non_null(d);
	/* Unknown job, then one sample, then the origin: no rate yet. */
	assert_true(gpud_rate_get(d, 1) == 0);
	assert_true(gpud_rate_sample(d, 1, 0, 100.0) == 0);
	assert_true(gpud_rate_sample(d, 1, 500, 101.0) == 0);
	/* 100 units a second from there (rate_smooth.h's rule). */
	for (int i = 1; i <= 5; i++)
		gpud_rate_sample(d, 1, 500 + 100 * (uint64_t)i, 101.0 + i);
	assert_true(fabs(gpud_rate_get(d, 1) - 100) < 1e-9);
	/* Jobs are apart. */
	assert_true(gpud_rate_get(d, 2) == 0);
	assert_true(gpud_rate_eta(d, 2, 100, 106.0) == 0);
	/* Not steady after 5 s: no ETA. */
	assert_true(gpud_rate_eta(d, 1, 1000, 106.0) == 0);
	for (int i = 6; i <= 20; i++)
		gpud_rate_sample(d, 1, 500 + 100 * (uint64_t)i, 101.0 + i);
	assert_true(fabs(gpud_rate_eta(d, 1, 1000, 121.0) - 10) < 1e-6);
	gpud_rate_clear(d);
	assert_null(d->rates);
	assert_true(gpud_rate_get(d, 1) == 0);
	gpud_rate_clear(d); /* nothing left: a no-op */
	free(d);
}

static int woken;

static void wake(struct gpud *d)
{
	(void)d;
	woken++;
}

static void test_wake(void **state)
{
	struct gpud *d = calloc(1, sizeof(*d));

	(void)state;
	assert_non_null(d);
	woken = 0;
	gpud_wake_parked(d); /* nothing installed: nothing */
	d->wake_parked = wake;
	gpud_wake_parked(d);
	gpud_wake_parked(d);
	assert_int_equal(woken, 2);
	free(d);
}

static void test_storage(void **state)
{
	struct gpud *d = calloc(1, sizeof(*d));
	char dir[64], data[96], cmd[128], *log;
	uv_loop_t loop;
	struct cap c;

	(void)state;
	assert_non_null(d);
	snprintf(dir, sizeof(dir), "/tmp/test_gpud.XXXXXX");
	assert_non_null(mkdtemp(dir));
	/* A data directory that is not there yet: the probe fails. */
	snprintf(data, sizeof(data), "%s/data", dir);
	assert_int_equal(uv_loop_init(&loop), 0);
	d->loop = &loop;
	d->log = (struct glog){ .prog = "gpud", .level = GLOG_INFO, .journal = 1 };
	d->cfg.data_dir = data;
	d->wake_parked = wake;
	woken = 0;
	cap_start(&c);
	/* Not a storage error: no standing changes. */
	gpud_storage_outcome(d, GERR_INVAL, "store_job_insert");
	gpud_storage_outcome(d, GERR_NOTFOUND, "blob_store_get");
	assert_int_equal(d->storage_error, 0);
	/* A success with nothing failed: no probe. */
	gpud_storage_outcome(d, 0, "blob_store_put");
	assert_int_equal(d->probing, 0);
	/* A full disk: the reason, logged once. */
	gpud_storage_outcome(d, GERR_NOSPACE, "blob_store_put");
	assert_int_equal(d->storage_error, GERR_NOSPACE);
	assert_string_equal(d->storage_msg, "gpud cannot write its data directory "
			    "(blob_store_put: disk full)");
	gpud_storage_outcome(d, GERR_IO, "store commit");
	assert_int_equal(d->storage_error, GERR_IO);
	assert_string_equal(d->storage_msg, "gpud cannot write its data directory "
			    "(store commit: input/output error)");
	gpud_storage_outcome(d, GERR_PERM, "x");
	gpud_storage_outcome(d, GERR_DB, "y");
	assert_int_equal(d->storage_error, GERR_DB);
	assert_string_equal(d->storage_msg, "gpud cannot write its data directory "
			    "(y: database error)");
	/* A success proves little: a probe runs, and fails here. */
	gpud_storage_outcome(d, 0, "store commit");
	assert_int_equal(d->probing, 1);
	gpud_storage_probe(d); /* one at a time */
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(d->probing, 0);
	assert_true(d->probe_rc < 0);
	assert_int_equal(d->storage_error, GERR_DB);
	assert_int_equal(woken, 0);
	/* Writable again: cleared, logged, the parked claims woken. */
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/blobs'", data);
	assert_int_equal(system(cmd), 0);
	gpud_storage_probe(d);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(d->probe_rc, 0);
	assert_int_equal(d->storage_error, 0);
	assert_string_equal(d->storage_msg, "");
	assert_int_equal(woken, 1);
	/* Nothing failed now: a probe is not even started. */
	gpud_storage_probe(d);
	assert_int_equal(d->probing, 0);
	/* While gpud stops, no probe either. */
	gpud_storage_outcome(d, GERR_IO, "z");
	d->stopping = 1;
	gpud_storage_probe(d);
	assert_int_equal(d->probing, 0);
	log = cap_end(&c);
	/* Logged at the first failure of each spell only. */
	char want[256];
	snprintf(want, sizeof(want), "<3>cannot write the data directory %s "
		 "(blob_store_put: no space left on device); no new leases until "
		 "writes succeed again\n", data);
	assert_non_null(strstr(log, want));
	assert_null(strstr(log, "(store commit: input/output error); no new"));
	assert_non_null(strstr(log, "<6>the data directory is writable again\n"));
	assert_non_null(strstr(log, "(z: input/output error); no new leases"));
	free(log);
	assert_int_equal(uv_loop_close(&loop), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(d);
}

UNIT_MAIN(cmocka_unit_test(test_policy),
	cmocka_unit_test(test_rates),
	cmocka_unit_test(test_wake),
	cmocka_unit_test(test_storage))
