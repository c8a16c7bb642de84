/* test_graveler_split.c - the Graveler workload's split (workload.h):
 * a cut at a chunk boundary, a lease's checkpoint adopted by its head
 * (which keeps the lease's segments, its frame), head and tail merging
 * to the lease's answer, and the cuts refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graveler_fx.h"

#include "gerr.h"
#include "graveler/graveler.h"
#include "unit_main.h"
#include "workload.h"

extern const struct workload graveler_workload;
static const struct workload *W = &graveler_workload;


/* One of a cut lease's halves run and verified: its result. */
static void *run_verified(json_t *params, json_t *spec, const void *ckpt,
			  size_t ckpt_len, size_t *len)
{
	char err[WL_ERRLEN];
	void *res = NULL;

	graveler_fx_run(params, spec, ckpt, ckpt_len, NULL, 2, 0, &res, len);
	assert_int_equal(W->verify(workload_ctx(W), params, spec, res, *len, 7,
				   err, sizeof(err)), 0);
	return res;
}

static json_t *merged(json_t *params, json_t *answer, json_t *spec,
		      const void *res, size_t len)
{
	json_t *t = NULL;

	assert_int_equal(W->merge(workload_ctx(W), params, answer, spec, res,
				  len, NULL, &t, NULL), 0);
	json_decref(answer);
	return t;
}

/* split (workload.h): a checkpoint of the lease is one of its head, the
 * head resumed from it gives a fresh head's bytes, and head and tail
 * merge to the lease's answer. */
static void test_split(void **state)
{
	(void)state;
	const uint64_t end = 4500000;
	json_t *params = graveler_fx_params(5000000, 17);
	json_t *spec = json_pack("{s:I, s:I}", "begin", (json_int_t)0, "end",
				 (json_int_t)end);
	struct graveler_acc *a = malloc(sizeof(*a));
	struct io_state s = {.stop_after = 2};
	char err[WL_ERRLEN];
	void *whole = NULL, *res = NULL;
	size_t whole_len = 0, len = 0;
	uint64_t done, mx;

	graveler_fx_run(params, spec, NULL, 0, &s, 1, GERR_CANCELLED, &res, &len);
	assert_non_null(s.ckpt);
	assert_int_equal(graveler_ckpt_decode(s.ckpt, s.ckpt_len, a, err,
					      sizeof(err)), 0);
	done = a->next - a->begin;
	assert_true(done > 0 && done < end);
	whole = run_verified(params, spec, NULL, 0, &whole_len);

	/* Cut just past the checkpoint, and exactly at it. */
	const uint64_t ats[] = { done + 1000, done };
	for (size_t i = 0; i < sizeof(ats) / sizeof(ats[0]); i++) {
		json_t *head = NULL, *tail = NULL, *ans = NULL, *all = NULL;
		uint64_t hu = 0, tu = 0, cut;
		void *rh, *rf, *rt;
		size_t lh, lf, lt;

		assert_int_equal(W->split(workload_ctx(W), params, spec, ats[i],
					  &head, &hu, &tail, &tu), 0);
		cut = (uint64_t)json_integer_value(json_object_get(head, "end"));
		assert_int_equal(cut % GRAVELER_CHUNK, 0);
		assert_true(cut >= ats[i] && cut < ats[i] + GRAVELER_CHUNK);
		assert_int_equal(hu, cut);
		assert_int_equal(hu + tu, end);
		assert_int_equal(json_integer_value(json_object_get(tail,
			"begin")), cut);
		assert_int_equal(json_integer_value(json_object_get(tail,
			"end")), end);
		/* The lease's checkpoint is one of the head's. */
		assert_int_equal(W->check_checkpoint(workload_ctx(W), params,
						     head, s.ckpt, s.ckpt_len,
						     err, sizeof(err)), 0);
		assert_int_equal(W->blob_max(workload_ctx(W), params, head, 1,
					     &mx, err, sizeof(err)), 0);
		rh = run_verified(params, head, s.ckpt, s.ckpt_len, &lh);
		rf = run_verified(params, head, NULL, 0, &lf);
		assert_true(lh <= mx);
		assert_int_equal(lh, lf);
		assert_memory_equal(rh, rf, lh);
		/* The tail is a lease of its own: the head's checkpoint is
		 * not its. */
		assert_int_not_equal(W->check_checkpoint(workload_ctx(W),
			params, tail, s.ckpt, s.ckpt_len, err, sizeof(err)), 0);
		rt = run_verified(params, tail, NULL, 0, &lt);
		/* Head and tail merge to the lease's histogram, max and
		 * first, in either order. */
		ans = merged(params, merged(params, NULL, head, rh, lh), tail,
			     rt, lt);
		all = merged(params, NULL, spec, whole, whole_len);
		assert_true(json_equal(json_object_get(ans, "histogram"),
				       json_object_get(all, "histogram")));
		for (const char *const *k = (const char *const[]){"battles",
		     "max", "first", NULL}; *k; k++)
			assert_int_equal(json_integer_value(json_object_get(
				ans, *k)), json_integer_value(json_object_get(
				all, *k)));
		json_decref(all);
		all = merged(params, merged(params, NULL, tail, rt, lt), head,
			     rh, lh);
		assert_true(json_equal(ans, all));
		json_decref(ans);
		json_decref(all);
		free(rh);
		free(rf);
		free(rt);
		json_decref(head);
		json_decref(tail);
	}

	/* No cut: at 0, at or past the end, no chunk boundary inside, and
	 * a lease whose segments span several chunks. */
	json_t *h = NULL, *t = NULL, *small, *big, *bigp;
	uint64_t hu = 0, tu = 0;
	assert_int_equal(W->split(workload_ctx(W), params, spec, 0, &h, &hu, &t,
				  &tu), GERR_AGAIN);
	assert_int_equal(W->split(workload_ctx(W), params, spec, end, &h, &hu,
				  &t, &tu), GERR_AGAIN);
	assert_int_equal(W->split(workload_ctx(W), params, spec, end + 5, &h,
				  &hu, &t, &tu), GERR_AGAIN);
	assert_int_equal(W->split(workload_ctx(W), params, spec,
				  end - end % GRAVELER_CHUNK + 1, &h, &hu, &t,
				  &tu), GERR_AGAIN);
	small = json_pack("{s:I, s:I}", "begin", (json_int_t)256, "end",
			  (json_int_t)512);
	assert_int_equal(W->split(workload_ctx(W), params, small, 100, &h, &hu,
				  &t, &tu), GERR_AGAIN);
	assert_null(h);
	assert_null(t);
	/* A frame before the end, or a framed lease that ends inside a
	 * chunk, is no lease. */
	bigp = json_pack("{s:I, s:I, s:I}", "begin", (json_int_t)0, "end",
			 (json_int_t)4096, "frame", (json_int_t)4000);
	big = json_pack("{s:I, s:I, s:I}", "begin", (json_int_t)0, "end",
			(json_int_t)4000, "frame", (json_int_t)8192);
	assert_int_equal(W->blob_max(workload_ctx(W), params, bigp, 1, &mx,
				     err, sizeof(err)), GERR_INVAL);
	assert_int_equal(W->blob_max(workload_ctx(W), params, big, 1, &mx, err,
				     sizeof(err)), GERR_INVAL);
	json_decref(small);
	json_decref(big);
	json_decref(bigp);
	free(s.ckpt);
	free(res);
	free(whole);
	free(a);
	json_decref(spec);
	json_decref(params);
}

/* A lease of segments of two chunks (over 2^28 battles) cut near its
 * start: the head keeps its frame, so the lease's checkpoint is the
 * head's and so is it for the head's own head. */
static void test_split_framed(void **state)
{
	(void)state;
	const uint64_t end = (1ull << 29) + 12345 * GRAVELER_CHUNK;
	json_t *params = graveler_fx_params(end + 77, 23);
	json_t *spec = json_pack("{s:I, s:I}", "begin", (json_int_t)0, "end",
				 (json_int_t)end);
	json_t *head = NULL, *tail = NULL, *head2 = NULL, *tail2 = NULL;
	struct graveler_acc *a = malloc(sizeof(*a));
	struct io_state s = {.stop_after = 1};
	uint64_t hu, tu, done;
	char err[WL_ERRLEN];
	void *res = NULL;
	size_t len = 0;

	assert_true(graveler_nsegments(0, end) < (end - 1) / GRAVELER_CHUNK + 1);
	graveler_fx_run(params, spec, NULL, 0, &s, 1, GERR_CANCELLED, &res, &len);
	assert_int_equal(graveler_ckpt_decode(s.ckpt, s.ckpt_len, a, err,
					      sizeof(err)), 0);
	done = a->next - a->begin;
	assert_int_equal(W->split(workload_ctx(W), params, spec, done + 3000,
				  &head, &hu, &tail, &tu), 0);
	assert_int_equal(json_integer_value(json_object_get(head, "frame")),
			 end);
	assert_null(json_object_get(tail, "frame"));
	assert_int_equal(hu + tu, end);
	assert_int_equal(W->split(workload_ctx(W), params, head, done + 700,
				  &head2, &hu, &tail2, &tu), 0);
	assert_int_equal(json_integer_value(json_object_get(head2, "frame")),
			 end);
	json_t *heads[] = { head, head2 };
	for (int i = 0; i < 2; i++) {
		void *rh, *rf;
		size_t lh, lf;

		assert_int_equal(W->check_checkpoint(workload_ctx(W), params,
						     heads[i], s.ckpt,
						     s.ckpt_len, err,
						     sizeof(err)), 0);
		rh = run_verified(params, heads[i], s.ckpt, s.ckpt_len, &lh);
		rf = run_verified(params, heads[i], NULL, 0, &lf);
		assert_int_equal(lh, lf);
		assert_memory_equal(rh, rf, lh);
		/* Its result decodes only under its frame. */
		assert_int_not_equal(graveler_result_decode(rh, lh, a, err,
							    sizeof(err)), 0);
		free(rh);
		free(rf);
	}
	/* The tail of a head is no head: the lease's checkpoint is not its. */
	assert_int_not_equal(W->check_checkpoint(workload_ctx(W), params, tail2,
						 s.ckpt, s.ckpt_len, err,
						 sizeof(err)), 0);
	free(s.ckpt);
	free(res);
	free(a);
	json_decref(head);
	json_decref(tail);
	json_decref(head2);
	json_decref(tail2);
	json_decref(spec);
	json_decref(params);
}

UNIT_MAIN(cmocka_unit_test(test_split),
	cmocka_unit_test(test_split_framed))
