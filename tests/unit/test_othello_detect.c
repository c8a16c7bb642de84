/* test_othello_detect.c - how often a partly fabricated Othello result
 * passes verification, measured against the formula othello_verify.c
 * states: a real lease of random 6-empty positions (cheap to re-solve; k =
 * min(1024, 4000 / 32) = 125) with a fraction f of its scores made up (each one
 * wrong: the true score +- 2), verified with many seeds.
 * Expected: P(pass) = (1 - m / n)^k, m made-up positions of n. */
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
#include "mix.h"
#include "othello/othello.h"
#include "othello/othello_wl.h"

extern const struct workload othello_workload;
static const struct workload *W = &othello_workload;

#define N 4000u
#define EMPTIES 6

static int setup(void **state)
{
	return detect_setup(state, W, "{\"random\": \"4000\", \"empties\": "
			    "\"6\", \"seed\": \"20\"}", N);
}

/* Make up m positions' scores (distinct, spread by mix64), verify. */
static void measure(struct detect_fx *fx, uint64_t m, unsigned nseeds)
{
	const uint8_t *honest = fx->res;
	uint8_t *bad = malloc(fx->len);
	unsigned k = othello_verify_k(EMPTIES, N);
	uint64_t done = 0;
	char what[64];

	memcpy(bad, fx->res, fx->len);
	for (uint64_t t = 0; done < m; t++) {
		uint64_t i = m == N ? t : mix64(t ^ m) % N;
		uint8_t *q = bad + OTHELLO_RES_HDR + 2 * i;
		if (q[0] != honest[OTHELLO_RES_HDR + 2 * i])
			continue; /* already made up */
		q[0] = q[0] < 64 ? q[0] + 1 : q[0] - 1;
		done++;
	}
	double f = (double)m / N, p = pow(1 - f, k);
	clock_t t0 = clock();
	unsigned passes = detect_passes(W, fx->params, fx->spec, bad, fx->len,
					nseeds, m);
	snprintf(what, sizeof(what), "othello E=%d k=%u (%llu of %u made up)",
		 EMPTIES, k, (unsigned long long)m, N);
	detect_expect(what, f, passes, nseeds, p);
	printf("detect: othello verify %.1f ms CPU per lease\n",
	       1e3 * (double)(clock() - t0) / CLOCKS_PER_SEC / nseeds);
	free(bad);
}

static void test_honest_passes(void **state)
{
	struct detect_fx *fx = *state;

	assert_int_equal(othello_verify_samples(EMPTIES), 1024);
	assert_int_equal(detect_passes(W, fx->params, fx->spec, fx->res,
				       fx->len, 10, 1), 10);
}

/* A few made-up scores: a pass rate well inside (0, 1). */
static void test_few(void **state)
{
	measure(*state, 4, 150);
}

static void test_fractions(void **state)
{
	for (int i = 0; i < 3; i++)
		measure(*state, (uint64_t)(detect_fractions[i] * N), 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_honest_passes),
		cmocka_unit_test(test_few),
		cmocka_unit_test(test_fractions),
	};
	return cmocka_run_group_tests(tests, setup, detect_teardown);
}
