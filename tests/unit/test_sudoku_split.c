/* test_sudoku_split.c - the Sudoku split hook's contract on a C == 3
 * (3x3) and a C == 2 (4x2) shape: a checkpoint of a lease is one of the
 * head cut at or after it, head and tail merge to the whole lease's
 * answer, no cut at 0 or at the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "first_ckpt.h"
#include "gerr.h"
#include "workload.h"

extern const struct workload sudoku_workload;
static const struct workload *W = &sudoku_workload;

static json_t *params_of(const char *box, uint64_t *units)
{
	char err[WL_ERRLEN] = "";
	json_t *args = json_pack("{s:s}", "box", box), *p = NULL;
	assert_int_equal(W->parse_params(workload_ctx(W), args, &p, units, err,
					 sizeof(err)), 0);
	json_decref(args);
	return p;
}

/* split's contract for a C == 3 (3x3) and a C == 2 (4x2) shape: a lease
 * run to a checkpoint, cut at or after it; the head resumed from that
 * checkpoint gives a fresh head's bytes, check_checkpoint takes it for the
 * head, head and tail merge to the whole lease's answer; no cut at 0, at
 * the end or past it. */
static void test_split_contract(void **state)
{
	static const char *boxes[] = { "3x3", "4x2" };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		char err[WL_ERRLEN] = "";
		uint64_t u, units, hu, tu;
		json_t *p = params_of(boxes[i], &u), *spec = NULL, *cur = NULL,
		       *best = NULL, *head = NULL, *tail = NULL, *a1 = NULL,
		       *a2 = NULL, *a3 = NULL;
		uint64_t best_units = 0;
		struct first_ckpt c = { NULL, 0, 0 };
		struct wl_run_io io = FIRST_CKPT_IO(&c);
		struct wl_run_io quiet = WL_RUN_IO_QUIET(NULL, NULL);
		struct wl_device dev = { WL_DEVICE_CPU, 0, 2, NULL };
		void *rs, *rh, *rh2, *rt;
		size_t ls, lh, lh2, lt;
		int last;

		/* the largest lease of the job */
		json_t *nc = NULL;
		while (W->carve(workload_ctx(W), p, cur, NULL, NULL, 1u << 20,
				&spec, &units, &nc, &last) == 0) {
			/* the cursor after this lease replaces the one before */
			json_decref(cur);
			cur = nc;
			nc = NULL;
			if (units > best_units) {
				json_decref(best);
				best = spec;
				best_units = units;
			} else {
				json_decref(spec);
			}
			spec = NULL;
		}
		assert_true(best_units > 8);
		assert_int_equal(W->run(workload_ctx(W), p, best, NULL, 0, &dev, &io,
					&rs, &ls, err, sizeof(err)), 0);
		assert_non_null(c.ck);
		assert_true(c.units > 0 && c.units < best_units);
		assert_int_equal(W->split(workload_ctx(W), p, best, 0, &head, &hu,
					  &tail, &tu), GERR_AGAIN);
		assert_int_equal(W->split(workload_ctx(W), p, best, best_units, &head,
					  &hu, &tail, &tu), GERR_AGAIN);
		assert_int_equal(W->split(workload_ctx(W), p, best, best_units + 5,
					  &head, &hu, &tail, &tu), GERR_AGAIN);
		assert_int_equal(W->split(workload_ctx(W), p, best, c.units + 1, &head,
					  &hu, &tail, &tu), 0);
		assert_int_equal(hu, c.units + 1);
		assert_int_equal(hu + tu, best_units);
		assert_int_equal(W->check_checkpoint(workload_ctx(W), p, head, c.ck,
						     c.len, err, sizeof(err)), 0);
		assert_int_equal(W->run(workload_ctx(W), p, head, c.ck, c.len, &dev,
					&quiet, &rh, &lh, err, sizeof(err)), 0);
		assert_int_equal(W->run(workload_ctx(W), p, head, NULL, 0, &dev,
					&quiet, &rh2, &lh2, err, sizeof(err)), 0);
		assert_int_equal(lh, lh2);
		assert_memory_equal(rh, rh2, lh);
		assert_int_equal(W->verify(workload_ctx(W), p, head, rh, lh, 3, err,
					   sizeof(err)), 0);
		/* the tail cannot resume from the head's checkpoint */
		assert_int_equal(W->check_checkpoint(workload_ctx(W), p, tail, c.ck,
						     c.len, err, sizeof(err)),
				 GERR_VERIFY);
		assert_int_equal(W->run(workload_ctx(W), p, tail, NULL, 0, &dev,
					&quiet, &rt, &lt, err, sizeof(err)), 0);
		assert_int_equal(W->verify(workload_ctx(W), p, tail, rt, lt, 3, err,
					   sizeof(err)), 0);
		/* head then tail, and tail then head, merge to the whole's */
		assert_int_equal(W->merge(workload_ctx(W), p, NULL, best, rs, ls, "s",
					  &a1, NULL), 0);
		assert_int_equal(W->merge(workload_ctx(W), p, NULL, head, rh, lh, "h",
					  &a2, NULL), 0);
		assert_int_equal(W->merge(workload_ctx(W), p, a2, tail, rt, lt, "t",
					  &a3, NULL), 0);
		assert_string_equal(json_string_value(json_object_get(a1, "sum")),
				    json_string_value(json_object_get(a3, "sum")));
		assert_int_equal(json_integer_value(json_object_get(a1, "done")),
				 json_integer_value(json_object_get(a3, "done")));
		json_decref(a2);
		json_decref(a3);
		assert_int_equal(W->merge(workload_ctx(W), p, NULL, tail, rt, lt, "t",
					  &a2, NULL), 0);
		assert_int_equal(W->merge(workload_ctx(W), p, a2, head, rh, lh, "h",
					  &a3, NULL), 0);
		assert_string_equal(json_string_value(json_object_get(a1, "sum")),
				    json_string_value(json_object_get(a3, "sum")));
		free(rs);
		free(rh);
		free(rh2);
		free(rt);
		free(c.ck);
		json_decref(a1);
		json_decref(a2);
		json_decref(a3);
		json_decref(head);
		json_decref(tail);
		json_decref(best);
		json_decref(cur);
		json_decref(p);
	}
}

static int group_open(void **state)
{
	char err[WL_ERRLEN] = "";

	(void)state;
	if (workload_open_all(err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

static int group_close(void **state)
{
	(void)state;
	workload_close_all();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_contract),
	};
	return cmocka_run_group_tests(tests, group_open, group_close);
}
