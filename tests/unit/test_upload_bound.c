/* Unit tests for the upload bounds of kernels/registry.c: zlib's bound
 * for a blob of n decoded bytes holds for every blob gpud's own encoder
 * makes (both versions, both packings, incompressible bytes), and each
 * workload's declared largest blob covers its leases'. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "blob.h"
#include "gerr.h"
#include "unit_main.h"
#include "workload.h"

/* xorshift: incompressible bytes, the worst case for the bound. */
static void noise(uint8_t *p, size_t n, uint64_t s)
{
	for (size_t i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		p[i] = (uint8_t)s;
	}
}

static void test_comp_bound_holds(void **state)
{
	static const size_t sizes[] = { 0, 1, 100, 4095, 65536, 65537,
					1u << 20, (16u << 20) + 12345 };
	uint8_t *raw = malloc(sizes[7]);

	(void)state;
	assert_non_null(raw);
	noise(raw, sizes[7], 0x9e3779b97f4a7c15ull);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int pack = 0; pack < 2; pack++) {
			uint8_t *b = NULL;
			size_t len = 0;

			assert_int_equal(blob_encode_pack(BLOB_RESULT, "graveler",
				1, 1, raw, sizes[i], (enum blob_pack)pack, &b,
				&len), 0);
			assert_true(len <= workload_comp_bound(sizes[i]));
			free(b);
		}
	}
	/* Tight enough to refuse padding: within 1 % and a few KiB. */
	assert_true(workload_comp_bound(1u << 20) < (1u << 20) + (1u << 20) / 100 + 4096);
	free(raw);
}

static void test_declared_covers_leases(void **state)
{
	static const struct {
		const char *wl, *args;
	} jobs[] = {
		{ "graveler", "{\"battles\": \"1099511627776\", \"seed\": \"5\"}" },
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
		uint64_t total = 0, units = 0, rmax = 0, any;
		struct wl_parts none = { NULL, 0, NULL };
		int last = 0;

		assert_non_null(w);
		assert_true(w->blob_raw_max > 0 && w->blob_raw_max <= BLOB_MAX_RAW);
		assert_int_equal(w->parse_params(ctx, args, &params, &total, err,
						 sizeof(err)), 0);
		/* The largest lease the planner carves. */
		assert_int_equal(w->carve(ctx, params, NULL, NULL, &none,
					  UINT64_MAX / 4, &spec, &units, &cursor,
					  &last), 0);
		assert_int_equal(w->blob_max(ctx, params, spec, 1, &rmax, err,
					     sizeof(err)), 0);
		assert_true(rmax <= w->blob_raw_max);
		char *pt = json_dumps(params, JSON_COMPACT);
		char *st = json_dumps(spec, JSON_COMPACT);
		any = workload_upload_bound(w, NULL, NULL);
		assert_int_equal(workload_upload_bound(w, pt, st),
				 workload_comp_bound(rmax));
		assert_true(workload_upload_bound(w, pt, st) <= any);
		/* A lease it cannot bound has no bound: refused. */
		assert_int_equal(workload_upload_bound(w, pt, "{"), 0);
		assert_int_equal(workload_upload_bound(NULL, pt, st), 0);
		free(pt);
		free(st);
		json_decref(args);
		json_decref(params);
		json_decref(spec);
		json_decref(cursor);
	}
	workload_close_all();
}

UNIT_MAIN(cmocka_unit_test(test_comp_bound_holds),
	  cmocka_unit_test(test_declared_covers_leases))
