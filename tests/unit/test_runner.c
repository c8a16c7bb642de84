/* test_runner.c - the worker's runner thread and its runs ahead (runner.h
 * invariant 7), with a small chained workload: a guessed lease is adopted
 * (same run id, the lease's identity in the result blob, its progress kept),
 * a wrong guess is dropped without posting anything, a run ahead that
 * finished first waits for its lease, an adopted run's failure is the
 * lease's, and nothing runs ahead when it is off or after the last lease. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "blob.h"
#include "gerr.h"
#include "runner.h"
#include "unit_main.h"

/* ---- the chained workload ---- */

/* Lease [from, to) of params "to": one unit every params "us" microseconds,
 * failing after a stall at unit params "fail" (0: never). A lease from > 0 starts by
 * fetching its state, the previous result (spec "state"). The result is
 * {from, to} as two u64. */
static int chain_run(void *ctx, const json_t *params, const json_t *spec,
		     const void *checkpoint, size_t checkpoint_len,
		     const struct wl_device *dev, const struct wl_run_io *io,
		     void **ret, size_t *ret_len, char *err, size_t errlen)
{
	uint64_t from = (uint64_t)json_integer_value(json_object_get(spec, "from"));
	uint64_t to = (uint64_t)json_integer_value(json_object_get(spec, "to"));
	useconds_t us = (useconds_t)json_integer_value(json_object_get(params, "us"));
	uint64_t *out;

	(void)checkpoint, (void)checkpoint_len, (void)dev, (void)err,
		(void)errlen;
	if (from > 0) {
		const char *state = json_string_value(json_object_get(spec,
								      "state"));
		void *b = NULL;
		size_t n = 0;
		int rc = io->fetch(io->opaque, state, &b, &n);

		if (rc)
			return rc;
		rc = n == 16 && ((uint64_t *)b)[1] == from ? 0 : GERR_VERIFY;
		free(b);
		if (rc)
			return rc;
	}
	for (uint64_t u = from; u < to; u++) {
		if (io->should_stop(io->opaque))
			return GERR_CANCELLED;
		if (u && u == (uint64_t)json_integer_value(
				     json_object_get(params, "fail"))) {
			usleep(200000); /* a stall without callbacks */
			return GERR_IO;
		}
		usleep(us);
		io->progress(io->opaque, u + 1 - from);
	}
	out = malloc(16);
	if (!out)
		return GERR_NOMEM;
	out[0] = from;
	out[1] = to;
	*ret = out;
	*ret_len = 16;
	return 0;
}

static int chain_next(void *ctx, const json_t *params, const json_t *spec,
		      const void *result, size_t len, const char *hash,
		      json_t **ret_spec)
{
	uint64_t n = (uint64_t)json_integer_value(json_object_get(params, "to"));
	const uint64_t *r = result;
	uint64_t size = r[1] - r[0];

	(void)spec, (void)len;
	if (r[1] >= n)
		return GERR_DONE;
	*ret_spec = json_pack("{s:I, s:I, s:s}", "from", (json_int_t)r[1], "to",
			      (json_int_t)(n - r[1] < size ? n : r[1] + size),
			      "state", hash);
	return *ret_spec ? 0 : GERR_NOMEM;
}

static const struct workload chain = {
	.name = "chain",
	.unit_name = "units",
	.run = chain_run,
	.next_lease = chain_next,
};

/* ---- fixture ---- */

struct fix {
	uv_loop_t loop;
	struct runner r;
	struct glog log;
	int us, fail;
};

static void on_wake(void *opaque)
{
	(void)opaque;
}

static struct fix *fix_new(int run_ahead, int us)
{
	struct fix *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->log = (struct glog){ .prog = "test_runner", .level = GLOG_WARN };
	f->us = us;
	assert_int_equal(uv_loop_init(&f->loop), 0);
	assert_int_equal(runner_init(&f->r, &f->loop, &f->log, 60, run_ahead,
				     on_wake, f), 0);
	return f;
}

static void fix_free(struct fix *f)
{
	runner_close(&f->r);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&f->loop), 0);
	free(f);
}

/* Start lease `lease` of the job with spec [from, to) (state: hash or
 * NULL). Returns the run id. */
static uint64_t start(struct fix *f, uint64_t lease, uint64_t from,
		      uint64_t to, const char *state)
{
	struct runner_job job = {
		.wl = &chain,
		.dev = { .kind = WL_DEVICE_CPU, .threads = 1 },
		.params = json_pack("{s:i, s:i, s:i}", "to", 300, "us", f->us,
				    "fail", f->fail),
		.spec = state ? json_pack("{s:I, s:I, s:s}", "from",
					  (json_int_t)from, "to",
					  (json_int_t)to, "state", state)
			      : json_pack("{s:I, s:I}", "from",
					  (json_int_t)from, "to",
					  (json_int_t)to),
		.job = 1,
		.lease = lease,
		.epoch = 7,
		.units = to - from,
	};
	uint64_t id = 0;

	assert_non_null(job.params);
	assert_non_null(job.spec);
	assert_int_equal(runner_start(&f->r, &job, &id), 0);
	assert_true(id > 0);
	return id;
}

/* The next posted result, within 5 s; 0 when none came. */
static int take(struct fix *f, struct runner_result *res, int ms)
{
	for (int i = 0; i < ms; i++) {
		uv_run(&f->loop, UV_RUN_NOWAIT);
		if (runner_take_result(&f->r, res))
			return 1;
		usleep(1000);
	}
	return 0;
}

static int ahead_now(struct fix *f)
{
	int a;

	uv_mutex_lock(&f->r.mu);
	a = f->r.ahead;
	uv_mutex_unlock(&f->r.mu);
	return a;
}

static int wait_ahead(struct fix *f)
{
	for (int i = 0; i < 5000 && !ahead_now(f); i++)
		usleep(1000);
	return ahead_now(f);
}

/* The result blob: its lease, epoch and {from, to}; its hash in hash. */
static void check_blob(const struct runner_result *res, uint64_t lease,
		       uint64_t from, uint64_t to, char hash[BLOB_HASH_HEX])
{
	struct blob_info info;
	uint8_t *raw = NULL;
	size_t len = 0;
	char err[128];

	assert_int_equal(res->rc, 0);
	assert_int_equal(blob_decode(res->blob, res->blob_len, &info, &raw,
				     &len, err, sizeof(err)), 0);
	assert_int_equal(info.lease, lease);
	assert_int_equal(info.epoch, 7);
	assert_int_equal(len, 16);
	assert_int_equal(((uint64_t *)raw)[0], from);
	assert_int_equal(((uint64_t *)raw)[1], to);
	free(raw);
	blob_hash_hex(res->blob, res->blob_len, hash);
}

/* ---- tests ---- */

static void test_adopt_and_drop(void **state)
{
	struct fix *f = fix_new(1, 2000);
	struct runner_result res;
	char h1[BLOB_HASH_HEX], h2[BLOB_HASH_HEX], h3[BLOB_HASH_HEX];
	uint64_t id1, id2, id3;

	(void)state;
	id1 = start(f, 1, 0, 100, NULL);
	assert_true(take(f, &res, 5000));
	assert_int_equal(res.run_id, id1);
	check_blob(&res, 1, 0, 100, h1);
	free(res.blob);

	/* It guessed [100, 200) from h1 and has already started. */
	assert_true(wait_ahead(f));
	assert_false(runner_busy(&f->r));
	usleep(30000);
	id2 = start(f, 2, 100, 200, h1);
	assert_int_equal(id2, id1 + 1); /* the run ahead's id: adopted */
	assert_false(ahead_now(f));
	assert_true(runner_busy(&f->r));
	assert_true(runner_units_done(&f->r) > 0); /* its progress kept */
	assert_true(take(f, &res, 5000));
	assert_int_equal(res.run_id, id2);
	assert_int_equal(res.units_done, 100);
	check_blob(&res, 2, 100, 200, h2); /* the lease's identity */
	free(res.blob);

	/* A grant that differs from the guess [200, 300): dropped, and only
	 * the granted run posts. */
	assert_true(wait_ahead(f));
	id3 = start(f, 3, 200, 250, h2);
	assert_true(id3 > id2 + 1);
	assert_true(take(f, &res, 5000));
	assert_int_equal(res.run_id, id3);
	check_blob(&res, 3, 200, 250, h3);
	free(res.blob);
	/* [250, 300) follows: ahead again, and it ends the job. */
	assert_true(wait_ahead(f));
	assert_int_equal(start(f, 4, 250, 300, h3), id3 + 1);
	assert_true(take(f, &res, 5000));
	check_blob(&res, 4, 250, 300, h3);
	free(res.blob);
	usleep(20000);
	assert_false(ahead_now(f)); /* nothing after the last lease */
	assert_false(take(f, &res, 20));
	fix_free(f);
}

static void test_finished_ahead_waits(void **state)
{
	struct fix *f = fix_new(1, 1);
	struct runner_result res;
	char h1[BLOB_HASH_HEX], h2[BLOB_HASH_HEX];

	(void)state;
	start(f, 1, 0, 100, NULL);
	assert_true(take(f, &res, 5000));
	check_blob(&res, 1, 0, 100, h1);
	free(res.blob);
	assert_true(wait_ahead(f));
	usleep(100000); /* 100 units of 1 us: long done */
	assert_false(take(f, &res, 1)); /* holds its output, posts nothing */
	assert_true(ahead_now(f));
	start(f, 2, 100, 200, h1);
	assert_true(take(f, &res, 1000));
	check_blob(&res, 2, 100, 200, h2);
	free(res.blob);
	fix_free(f); /* closes while the next run ahead waits */
}

/* An adopted run that fails is the lease's failure: posted, not dropped,
 * even when it learns of the adoption only after it returned. */
static void test_adopted_failure(void **state)
{
	struct fix *f = fix_new(1, 2000);
	struct runner_result res;
	char h1[BLOB_HASH_HEX];
	uint64_t id2;

	(void)state;
	f->fail = 150;
	start(f, 1, 0, 100, NULL);
	assert_true(take(f, &res, 5000));
	check_blob(&res, 1, 0, 100, h1);
	free(res.blob);
	assert_true(wait_ahead(f));
	/* Adopt it inside the stall: no callback runs between the adoption
	 * and the failure. */
	for (int i = 0; i < 5000; i++) {
		uint64_t u;
		uv_mutex_lock(&f->r.mu);
		u = f->r.ahead_units;
		uv_mutex_unlock(&f->r.mu);
		if (u >= 50)
			break;
		usleep(1000);
	}
	usleep(20000);
	id2 = start(f, 2, 100, 200, h1);
	assert_true(take(f, &res, 5000));
	assert_int_equal(res.run_id, id2);
	assert_int_equal(res.rc, GERR_IO);
	assert_null(res.blob);
	assert_int_equal(res.units_done, 50);
	fix_free(f);
}

static void test_off(void **state)
{
	struct fix *f = fix_new(0, 1);
	struct runner_result res;
	char h1[BLOB_HASH_HEX];
	uint64_t id1;

	(void)state;
	id1 = start(f, 1, 0, 100, NULL);
	assert_true(take(f, &res, 5000));
	check_blob(&res, 1, 0, 100, h1);
	free(res.blob);
	usleep(20000);
	assert_false(ahead_now(f));
	/* The next lease runs from scratch, under a new id. */
	assert_int_equal(start(f, 2, 100, 200, h1), id1 + 1);
	assert_true(take(f, &res, 5000));
	check_blob(&res, 2, 100, 200, h1);
	free(res.blob);
	fix_free(f);
}

UNIT_MAIN(cmocka_unit_test(test_adopt_and_drop),
	cmocka_unit_test(test_finished_ahead_waits),
	cmocka_unit_test(test_adopted_failure),
	cmocka_unit_test(test_off))
