/* test_graveler_blame.c - the Graveler workload's blame hook (issue 34):
 * when a job's final check fails, the lease whose histogram does not fit
 * on its own is named and the answer rebuilt without it, from merge's
 * notes or from the stored results; honest leases are never blamed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gerr.h"
#include "graveler/graveler.h"
#include "graveler_fx.h"
#include "workload.h"

extern const struct workload graveler_workload;
static const struct workload *W = &graveler_workload;

static void lease_result(json_t *params, uint64_t begin, uint64_t end,
			 json_t **ret_spec, void **res, size_t *len)
{
	json_t *spec = json_pack("{s:I, s:I}", "begin", (json_int_t)begin,
				 "end", (json_int_t)end);
	graveler_fx_run(params, spec, NULL, 0, NULL, 2, 0, res, len);
	*ret_spec = spec;
}

static void reencode(const struct graveler_acc *a, void **res, size_t *len)
{
	free(*res);
	assert_int_equal(graveler_result_encode(a, res, len), 0);
}

/* Move d battles 57 -> 58 with the sum and sketch of segment k moved to
 * match (records consistent: the result decodes). */
static void hist_shift(struct graveler_acc *a, uint32_t k, uint32_t d)
{
	a->hist[57] -= d;
	a->hist[58] += d;
	a->seg_sum[k] += d;
	a->seg_sk[k] += d * (graveler_sketch_word(58) -
			     graveler_sketch_word(57));
}

/* Three leases' results as parts (in memory) and their blobs, for the
 * blame hook. */
struct blame_fx {
	json_t *spec[3], *note[3];
	int notes; /* give merge's notes (else none: blame reads results) */
	void *res[3];
	size_t len[3];
	char hash[3][65];
};

static int blame_get(void *o, uint64_t k, struct wl_part *ret)
{
	struct blame_fx *f = o;

	if (k >= 3)
		return GERR_NOTFOUND;
	*ret = (struct wl_part){f->spec[k], 1u << 20, f->hash[k],
				f->notes ? f->note[k] : NULL};
	return 0;
}

static int blame_fetch(void *o, const char *hash, void **ret, size_t *ret_len)
{
	struct blame_fx *f = o;

	for (int k = 0; k < 3; k++)
		if (strcmp(f->hash[k], hash) == 0) {
			*ret = malloc(f->len[k]);
			memcpy(*ret, f->res[k], f->len[k]);
			*ret_len = f->len[k];
			return 0;
		}
	return GERR_NOTFOUND;
}

/* The final check blames the one lease whose histogram does not fit on
 * its own (5 battles of every segment moved 57 -> 58, records kept
 * consistent), and rebuilds the answer from the two others; honest leases
 * are never blamed. */
static void test_blame(void **state)
{
	(void)state;
	json_t *params = graveler_fx_params(3u << 20, 88);
	struct blame_fx f = {0};
	struct wl_parts parts = {&f, 3, blame_get};
	struct wl_blob_reader rd = {&f, blame_fetch};
	json_t *answer = NULL, *t, *rebuilt = NULL, *two = NULL;
	struct graveler_acc *a = malloc(sizeof(*a));
	char err[WL_ERRLEN];
	uint64_t k = 99;

	for (int i = 0; i < 3; i++) {
		lease_result(params, (uint64_t)i << 20, (uint64_t)(i + 1) << 20,
			     &f.spec[i], &f.res[i], &f.len[i]);
		snprintf(f.hash[i], sizeof(f.hash[i]), "%064d", i);
	}
	for (int i = 0; i < 3; i++) {
		assert_int_equal(W->merge(workload_ctx(W), params, answer,
					  f.spec[i], f.res[i], f.len[i], NULL, &t,
					  NULL), 0);
		json_decref(answer);
		answer = t;
	}
	assert_int_equal(W->blame(workload_ctx(W), params, answer, &parts, &rd,
				  &k, &rebuilt, err, sizeof(err)),
			 GERR_NOTFOUND);
	assert_int_equal(k, 99);
	assert_non_null(strstr(err, "fits on its own"));
	json_decref(answer);
	answer = NULL;
	assert_int_equal(graveler_result_decode(f.res[1], f.len[1], a, err,
						sizeof(err)), 0);
	for (uint32_t s = 0; s < a->nseg; s++) {
		hist_shift(a, s, 5);
	}
	reencode(a, &f.res[1], &f.len[1]);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(W->verify(workload_ctx(W), params, f.spec[i],
					   f.res[i], f.len[i], 0, err,
					   sizeof(err)), i == 1 ? GERR_VERIFY : 0);
		assert_int_equal(W->merge(workload_ctx(W), params, answer,
					  f.spec[i], f.res[i], f.len[i], NULL, &t,
					  &f.note[i]), 0);
		assert_non_null(json_object_get(f.note[i], "score"));
		json_decref(answer);
		answer = t;
		if (i != 1) {
			assert_int_equal(W->merge(workload_ctx(W), params, two,
						  f.spec[i], f.res[i], f.len[i],
						  NULL, &t, NULL), 0);
			json_decref(two);
			two = t;
		}
	}
	assert_int_not_equal(W->finish(workload_ctx(W), params, answer, &parts,
				       err, sizeof(err)), 0);
	/* From the results, then from merge's notes: the same verdict. */
	for (f.notes = 0; f.notes < 2; f.notes++) {
		k = 99;
		assert_int_equal(W->blame(workload_ctx(W), params, answer,
					  &parts, &rd, &k, &rebuilt, err,
					  sizeof(err)), 0);
		assert_int_equal(k, 1);
		assert_non_null(strstr(err, "Binomial"));
		assert_true(json_equal(rebuilt, two));
		json_decref(rebuilt);
	}
	json_decref(two);
	json_decref(answer);
	for (int i = 0; i < 3; i++) {
		free(f.res[i]);
		json_decref(f.spec[i]);
		json_decref(f.note[i]);
	}
	free(a);
	json_decref(params);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
