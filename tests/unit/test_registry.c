/* Unit tests of the workload registry and the shared parameter helper. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gerr.h"
#include "unit_main.h"
#include "workload.h"

static void test_every_workload_is_complete(void **state)
{
	const struct workload *const *all = workload_all();
	size_t n = 0;

	(void)state;
	for (; all[n]; n++) {
		const struct workload *w = all[n];
		assert_non_null(w->name);
		assert_non_null(w->unit_name);
		assert_true(strlen(w->name) > 0 && strlen(w->name) <= 16); /* blob header */
		assert_non_null(w->parse_params);
		assert_non_null(w->carve);
		assert_non_null(w->run);
		assert_non_null(w->blob_max);
		assert_non_null(w->check_checkpoint);
		assert_non_null(w->verify);
		assert_non_null(w->merge);
		assert_non_null(w->finish);
		assert_non_null(w->render_text);
		assert_true((w->cuda_open == NULL) == (w->cuda_close == NULL));
		assert_ptr_equal(workload_find(w->name), w);
		for (size_t k = 0; k < n; k++)
			assert_string_not_equal(all[k]->name, w->name);
	}
	assert_true(n >= 1);
	assert_null(workload_find("no-such-workload"));
	assert_null(workload_find(NULL));
}

/* ---- declared blob bounds hold for real runs ---- */

struct bound_io {
	size_t max_ckpt;
	unsigned ckpts;
};

static void bio_progress(void *o, uint64_t u)
{
	(void)o, (void)u;
}

static int bio_due(void *o)
{
	(void)o;
	return 1; /* a checkpoint at every chance: the largest one is seen */
}

static int bio_ckpt(void *o, const void *b, size_t len, uint64_t u)
{
	struct bound_io *io = o;

	(void)b, (void)u;
	io->ckpts++;
	if (len > io->max_ckpt)
		io->max_ckpt = len;
	return 0;
}

static int bio_stop(void *o)
{
	(void)o;
	return 0;
}

/* One small job per workload: its first lease runs on the CPU, and every
 * checkpoint and the result fit what blob_max declared for that lease,
 * while a bound far above them would let a bomb through (it stays within
 * a few times the real size plus a fixed header). */
static void test_blob_max_covers_runs(void **state)
{
	static const struct {
		const char *wl, *args;
	} jobs[] = {
		{ "graveler", "{\"battles\": \"1048576\", \"seed\": \"5\"}" },
		{ "officers", "{\"to\": \"3000\"}" },
		{ "othello", "{\"random\": \"3\", \"empties\": \"8\", \"seed\": \"2\"}" },
		{ "sudoku", "{\"box\": \"2x2\"}" },
	};
	char err[WL_ERRLEN];

	(void)state;
	assert_int_equal(workload_open_all(err, sizeof(err)), 0);
	for (size_t k = 0; k < sizeof(jobs) / sizeof(jobs[0]); k++) {
		const struct workload *w = workload_find(jobs[k].wl);
		void *ctx = workload_ctx(w);
		json_t *args = json_loads(jobs[k].args, 0, NULL);
		json_t *params = NULL, *spec = NULL, *cursor = NULL;
		uint64_t total = 0, units = 0, rmax = 0, cmax = 0;
		struct wl_parts none = { NULL, 0, NULL };
		struct bound_io bio = { 0, 0 };
		struct wl_run_io io = { &bio, bio_progress, bio_due, bio_ckpt,
					bio_stop, NULL };
		struct wl_device dev = { WL_DEVICE_CPU, 0, 1, NULL };
		void *res = NULL;
		size_t res_len = 0;
		int last = 0;

		assert_non_null(w);
		assert_non_null(args);
		assert_int_equal(w->parse_params(ctx, args, &params, &total, err,
						 sizeof(err)), 0);
		assert_int_equal(w->carve(ctx, params, NULL, NULL, &none, 1u << 20,
					  &spec, &units, &cursor, &last), 0);
		assert_int_equal(w->blob_max(ctx, params, spec, 1, &rmax, err,
					     sizeof(err)), 0);
		assert_int_equal(w->blob_max(ctx, params, spec, 0, &cmax, err,
					     sizeof(err)), 0);
		/* The same bound from the stored text, as gpud asks for it. */
		char *pt = json_dumps(params, JSON_COMPACT);
		char *st = json_dumps(spec, JSON_COMPACT);
		uint64_t tmax = 0;
		assert_int_equal(workload_blob_max(w, pt, st, 1, &tmax, err,
						   sizeof(err)), 0);
		assert_int_equal(tmax, rmax);
		assert_int_equal(workload_blob_max(w, pt, "{", 1, &tmax, err,
						   sizeof(err)), GERR_CORRUPT);
		assert_non_null(strstr(err, "do not parse"));
		free(pt);
		free(st);
		assert_int_equal(w->run(ctx, params, spec, NULL, 0, &dev, &io,
					&res, &res_len, err, sizeof(err)), 0);
		assert_true(res_len <= rmax);
		assert_true(bio.max_ckpt <= cmax);
		assert_true(rmax <= 4 * res_len + (1u << 20));
		/* A spec it cannot read is refused with a reason. */
		json_t *bad = json_pack("{s:s}", "from", "x");
		err[0] = 0;
		assert_int_not_equal(w->blob_max(ctx, params, bad, 1, &rmax, err,
						 sizeof(err)), 0);
		assert_true(strlen(err) > 0);
		json_decref(bad);
		free(res);
		json_decref(args);
		json_decref(params);
		json_decref(spec);
		json_decref(cursor);
	}
	workload_close_all();
}

static void test_json_u64(void **state)
{
	char err[WL_ERRLEN];
	uint64_t v = 0;
	json_t *o = json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:I, s:f, s:s}",
			      "plain", "12345", "sci", "1e9", "int", (json_int_t)77,
			      "neg", "-3", "junk", "12x", "empty", "", "huge",
			      "99999999999999999999", "negint", (json_int_t)-1, "real", 1.5,
			      "bigsci", "2e19");

	(void)state;
	assert_int_equal(wl_json_u64(o, "plain", 1, 0, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 12345);
	assert_int_equal(wl_json_u64(o, "sci", 1, 0, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 1000000000ull);
	assert_int_equal(wl_json_u64(o, "int", 1, 0, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 77);
	assert_int_equal(wl_json_u64(o, "missing", 0, 5, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 5);
	assert_int_equal(wl_json_u64(o, "missing", 1, 5, &v, err, sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, "missing parameter 'missing'"));
	const char *bad[] = {"neg", "junk", "empty", "huge", "negint", "real", "bigsci"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(wl_json_u64(o, bad[i], 1, 0, &v, err, sizeof(err)), GERR_INVAL);
		assert_non_null(strstr(err, bad[i]));
	}
	json_decref(o);
}

/* gpuctl workloads and submit W --help show these tables: every
 * workload describes itself, every parameter it lists is one parse_params
 * knows (whatever else it says of the value, never "unknown parameter"),
 * and every export has its line. */
static void test_docs_match_the_workloads(void **state)
{
	const struct workload *const *all = workload_all();
	char err[WL_ERRLEN];

	(void)state;
	for (size_t n = 0; all[n]; n++) {
		const struct workload *w = all[n];
		size_t np = 0;

		assert_non_null(w->description);
		assert_true(strlen(w->description) > 20);
		assert_non_null(w->params_doc);
		for (const struct wl_param_doc *p = w->params_doc; p->name; p++, np++) {
			json_t *args = json_pack("{s:s}", p->name, "1"), *params = NULL;
			uint64_t total = 0;

			assert_non_null(p->help);
			assert_true(strcmp(p->type, "integer") == 0 || strcmp(p->type, "string") == 0 ||
				    strcmp(p->type, "file") == 0);
			err[0] = '\0';
			if (w->parse_params(workload_ctx(w), args, &params, &total, err, sizeof(err)) == 0)
				json_decref(params);
			assert_null(strstr(err, "unknown parameter"));
			json_decref(args);
		}
		assert_true(np >= 1);
		/* The criterion holds: a name not in the table is unknown. */
		json_t *bogus = json_pack("{s:s}", "no_such_param", "1"), *params = NULL;
		uint64_t total = 0;
		err[0] = '\0';
		assert_int_not_equal(w->parse_params(workload_ctx(w), bogus, &params, &total, err,
						     sizeof(err)), 0);
		assert_non_null(strstr(err, "unknown parameter"));
		json_decref(bogus);
		for (size_t e = 0; w->exports && w->exports[e]; e++) {
			const struct wl_export_doc *d = w->exports_doc;
			while (d && d->name && strcmp(d->name, w->exports[e]) != 0)
				d++;
			assert_true(d && d->name && strlen(d->help) > 10);
		}
	}
}

UNIT_MAIN(cmocka_unit_test(test_every_workload_is_complete),
	cmocka_unit_test(test_json_u64),
	cmocka_unit_test(test_blob_max_covers_runs),
	cmocka_unit_test(test_docs_match_the_workloads))
