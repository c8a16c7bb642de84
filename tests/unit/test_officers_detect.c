/* test_officers_detect.c - how often a partly fabricated Officers result
 * passes verification, measured against the formula officers_verify.c
 * states: a real lease result with a fraction f of its values made up
 * (v ^ 1 keeps a value's rarity, so the rare table stays valid), its
 * statistics, checksum, prefix and tail rebuilt from the made-up values
 * (officers_seq_append, officers_result_encode), verified with many seeds.
 * Expected: P(pass) = (1 - m / L)^K when none of the fixed positions is
 * inconsistent, else 0, with m the positions whose value differs from the
 * exact value recomputed from the result's own values (counted here by
 * recomputing every one). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "detect_fx.h"
#include "gerr.h"
#include "mix.h"
#include "officers/officers.h"
#include "officers/officers_wl.h"

extern const struct workload officers_workload;
static const struct workload *W = &officers_workload;

#define L 40000u

/* The honest lease's values, from setup. */
static uint16_t *honest;

static int setup(void **state)
{
	struct detect_fx *fx;
	struct officers_result r;
	char err[WL_ERRLEN] = "";

	detect_setup(state, W, "{\"to\": \"40000\"}", L);
	fx = *state;
	assert_int_equal(officers_result_parse(fx->res, fx->len, &r, err,
					       sizeof(err)), 0);
	honest = malloc(L * sizeof(uint16_t));
	for (uint64_t x = 0; x < L; x++)
		honest[x] = (uint16_t)officers_result_get(&r, x);
	return 0;
}

static int teardown(void **state)
{
	free(honest);
	return detect_teardown(state);
}

/* The result of lease [0, L) whose values are v (the worker's claim). */
static void encode(const uint16_t *v, void **ret, size_t *ret_len)
{
	struct officers_seq *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	assert_int_equal(officers_seq_init(s, L), 0);
	assert_int_equal(officers_seq_append(s, v, L), 0);
	assert_int_equal(officers_result_encode(s, 0, OFFICERS_FNV_BASIS, 0,
						ret, ret_len), 0);
	officers_seq_free(s);
	free(s);
}

/* Positions of res inconsistent with the values before them (m), and
 * whether one of the positions verify always checks is; those before
 * `from` are known consistent. */
static uint64_t inconsistent(const void *res, size_t len, uint64_t from,
			     int *ret_fixed)
{
	struct officers_seq *s = calloc(1, sizeof(*s));
	struct officers_result r;
	char err[WL_ERRLEN];
	uint64_t m = 0;

	*ret_fixed = 0;
	assert_int_equal(officers_result_parse(res, len, &r, err, sizeof(err)),
			 0);
	assert_int_equal(officers_seq_from_result(s, &r, 0, L), 0);
	for (uint64_t x = from < 2 ? 2 : from; x < L; x++) {
		int v = officers_value(s, x);
		int bad = v != (int)officers_seq_get(s, x);
		int rare_pos = 0;
		for (uint32_t i = 0; i < s->nrare && !rare_pos; i++)
			rare_pos = s->rare[i].pos == x;
		m += bad;
		if (bad && (x < 8 || x >= L - 8 || rare_pos))
			*ret_fixed = 1;
	}
	officers_seq_free(s);
	free(s);
	return m;
}

static void expect_rate(struct detect_fx *fx, const char *what, double f,
			const void *res, size_t len, uint64_t m, int fixed,
			unsigned nseeds)
{
	double p = fixed ? 0 : pow(1 - (double)m / L, OFFICERS_VERIFY_SAMPLES);
	unsigned passes = detect_passes(W, fx->params, fx->spec, res, len,
					nseeds, (uint64_t)(f * 1e9) + m);
	char label[96];

	snprintf(label, sizeof(label), "officers %s (%llu of %u positions "
		 "inconsistent)", what, (unsigned long long)m, L);
	detect_expect(label, f, passes, nseeds, p);
}

/* Fabricate a fraction f of positions >= 2, verify nseeds times. */
static void measure(struct detect_fx *fx, double f, unsigned nseeds)
{
	uint16_t *v = malloc(L * sizeof(uint16_t));
	uint64_t m, fab = 0;
	int fixed;
	void *res;
	size_t len;

	memcpy(v, honest, L * sizeof(uint16_t));
	for (uint64_t x = 2; x < L; x++)
		if (f >= 1 || (double)(mix64(x ^ 0x6c617a79) >> 11) * 0x1p-53 < f) {
			v[x] ^= 1;
			fab++;
		}
	encode(v, &res, &len);
	m = inconsistent(res, len, 0, &fixed);
	/* a made-up value is inconsistent unless it guessed right */
	assert_true(m >= fab * 9 / 10);
	expect_rate(fx, "fabricated", f, res, len, m, fixed, nseeds);
	free(res);
	free(v);
}

static void test_honest_passes(void **state)
{
	struct detect_fx *fx = *state;
	void *res;
	size_t len;

	encode(honest, &res, &len);
	clock_t t0 = clock();
	assert_int_equal(detect_passes(W, fx->params, fx->spec, res, len, 20, 1),
			 20);
	printf("detect: officers verify of an honest lease of %u: %.1f ms\n", L,
	       1e3 * (double)(clock() - t0) / CLOCKS_PER_SEC / 20);
	free(res);
}

/* One made-up value past the last rare position whose consequences miss
 * the positions verify always checks: a pass rate well inside (0, 1),
 * where the formula's exponent shows. */
static void test_one(void **state)
{
	struct detect_fx *fx = *state;
	uint16_t *v = malloc(L * sizeof(uint16_t));
	uint64_t m = 0;
	int fixed = 1;
	void *res = NULL;
	size_t len = 0;

	for (uint64_t k = 0; fixed && k < 64; k++) {
		uint64_t x = 30000 + mix64(k) % (L - 8 - 30000);
		free(res);
		memcpy(v, honest, L * sizeof(uint16_t));
		v[x] ^= 1;
		encode(v, &res, &len);
		m = inconsistent(res, len, x, &fixed);
	}
	assert_false(fixed);
	expect_rate(fx, "one value", 1.0 / L, res, len, m, fixed, 200);
	free(res);
	free(v);
}

static void test_fractions(void **state)
{
	for (int i = 0; i < 3; i++)
		measure(*state, detect_fractions[i], 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_honest_passes),
		cmocka_unit_test(test_one),
		cmocka_unit_test(test_fractions),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
