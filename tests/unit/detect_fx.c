/* detect_fx.c - see detect_fx.h. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "detect_fx.h"
#include "gerr.h"
#include "mix.h"

const double detect_fractions[3] = {0.01, 0.10, 1.0};

unsigned detect_passes(const struct workload *wl, const json_t *params,
		       const json_t *spec, const void *res, size_t len,
		       unsigned nseeds, uint64_t seed0)
{
	unsigned passes = 0;
	uint64_t s = seed0;

	for (unsigned i = 0; i < nseeds; i++) {
		char err[WL_ERRLEN] = "";
		int rc;
		s += MIX_GOLDEN;
		rc = wl->verify(workload_ctx(wl), params, spec, res, len,
				mix64(s), err, sizeof(err));
		if (rc != 0 && rc != GERR_VERIFY)
			fail_msg("%s verify: %s (%s)", wl->name, gerr_str(rc), err);
		passes += rc == 0;
	}
	return passes;
}

void detect_expect(const char *what, double f, unsigned passes, unsigned n,
		   double p)
{
	double mean = n * p, sd = sqrt(n * p * (1 - p));

	printf("detect: %s f=%g: passed %u of %u (%.4f), formula %.3g\n", what,
	       f, passes, n, (double)passes / n, p);
	if (mean < 1e-3) {
		assert_int_equal(passes, 0);
		return;
	}
	assert_true(fabs(passes - mean) <= 4 * sd + 1);
}
