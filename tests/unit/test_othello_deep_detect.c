/* test_othello_deep_detect.c - deep Othello results are checked by default
 * (issue 34, item 8): how often a made-up result of positions above 14
 * empties passes verification, against othello_verify.c's formula.
 *
 *  - The attack: a lease of 32 random 20-empty positions whose
 *    every answer is made up. k = 32 / 32 = 1 position re-solved a seed:
 *    it never passes (unless the made-up answer is the true one).
 *  - The formula on cheaper deep positions (16 empties): a lease of 40
 *    positions re-solves k = 1 (probability 24/32) or 2 (8/32), so m made
 *    up of n pass with 3/4 (1 - f) + 1/4 (1 - f)^2; a lease of 8 made up
 *    whole passes with 1 - 8/32 (re-solved one time in four). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "detect_fx.h"
#include "mix.h"
#include "othello/othello.h"
#include "othello/othello_wl.h"

extern const struct workload othello_workload;
static const struct workload *W = &othello_workload;

/* Params and the first lease of a random job of n positions of e empties,
 * without running it. */
static void job_lease(uint64_t n, int e, json_t **ret_params,
		      json_t **ret_spec)
{
	char args_text[128], err[WL_ERRLEN] = "";
	json_t *args, *cursor = NULL;
	uint64_t total, units;
	int last;

	snprintf(args_text, sizeof(args_text), "{\"random\": \"%llu\", "
		 "\"empties\": \"%d\", \"seed\": \"34\"}",
		 (unsigned long long)n, e);
	args = json_loads(args_text, 0, NULL);
	assert_non_null(args);
	assert_int_equal(W->parse_params(workload_ctx(W), args, ret_params,
					 &total, err, sizeof(err)), 0);
	assert_int_equal(W->carve(workload_ctx(W), *ret_params, NULL, NULL,
				  NULL, n, ret_spec, &units, &cursor, &last),
			 0);
	assert_int_equal(units, n);
	json_decref(cursor);
	json_decref(args);
}

/* The attack: every answer of a 20-empty lease made up. */
static void test_made_up_20_empties(void **state)
{
	json_t *params, *spec;
	struct othello_res r;
	void *res;
	size_t len;

	(void)state;
	job_lease(32, 20, &params, &spec);
	assert_int_equal(othello_verify_k_drawn(20, 32, 1), 1);
	assert_int_equal(othello_res_init(&r, 0, 32, 0), 0);
	for (unsigned i = 0; i < 32; i++) {
		r.score[i] = (int8_t)(2 * (int)(i % 5) - 4);
		r.move[i] = (uint8_t)(19 + i % 7);
	}
	r.done = 32;
	assert_int_equal(othello_res_encode(&r, 0, &res, &len), 0);
	unsigned passes = detect_passes(W, params, spec, res, len, 3, 20);
	detect_expect("othello E=20 k=1 (32 of 32 made up)", 1.0, passes, 3,
		      0.0);
	free(res);
	othello_res_clear(&r);
	json_decref(spec);
	json_decref(params);
}

/* Make up m of the fixture's n positions (each score +-1), verify with
 * nseeds seeds and compare with the formula for k drawn. */
static void measure(struct detect_fx *fx, uint64_t n, uint64_t m,
		    unsigned nseeds)
{
	const uint8_t *honest = fx->res;
	uint8_t *bad = malloc(fx->len);
	uint64_t done = 0;
	unsigned k0 = (unsigned)(n / OTHELLO_VERIFY_SHARE);
	double f = (double)m / (double)n, r = (double)(n % 32) / 32.0, p;
	char what[96];

	memcpy(bad, fx->res, fx->len);
	for (uint64_t t = 0; done < m; t++) {
		uint64_t i = m == n ? t : mix64(t ^ m) % n;
		uint8_t *q = bad + OTHELLO_RES_HDR + 2 * i;
		if (q[0] != honest[OTHELLO_RES_HDR + 2 * i])
			continue;
		q[0] = q[0] < 64 ? q[0] + 1 : q[0] - 1;
		done++;
	}
	p = (1 - r) * pow(1 - f, k0) + r * pow(1 - f, k0 + 1);
	unsigned passes = detect_passes(W, fx->params, fx->spec, bad, fx->len,
					nseeds, m * 131 + n);
	snprintf(what, sizeof(what), "othello E=16 n=%llu k=%u or %u (%llu "
		 "made up)", (unsigned long long)n, k0, k0 + 1,
		 (unsigned long long)m);
	detect_expect(what, f, passes, nseeds, p);
	free(bad);
}

static void test_deep_formula(void **state)
{
	void *fx = NULL;

	(void)state;
	assert_int_equal(detect_setup(&fx, W, "{\"random\": \"40\", "
				      "\"empties\": \"16\", \"seed\": \"35\"}",
				      40), 0);
	assert_int_equal(detect_passes(W, ((struct detect_fx *)fx)->params,
				       ((struct detect_fx *)fx)->spec,
				       ((struct detect_fx *)fx)->res,
				       ((struct detect_fx *)fx)->len, 10, 1),
			 10);
	measure(fx, 40, 20, 200);
	measure(fx, 40, 40, 40);
	detect_teardown(&fx);
	assert_int_equal(detect_setup(&fx, W, "{\"random\": \"8\", "
				      "\"empties\": \"16\", \"seed\": \"36\"}",
				      8), 0);
	measure(fx, 8, 8, 300);
	detect_teardown(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_made_up_20_empties),
		cmocka_unit_test(test_deep_formula),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
