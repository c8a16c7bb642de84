/* detect_fx.c - see detect_fx.h. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "detect_fx.h"
#include "gerr.h"
#include "mix.h"
#include "parts_list.h"

const double detect_fractions[3] = {0.01, 0.10, 1.0};

int detect_setup(void **state, const struct workload *wl, const char *args,
		 uint64_t units)
{
	struct detect_fx *fx = calloc(1, sizeof(*fx));
	void *ctx = workload_ctx(wl);
	struct wl_device dev = {WL_DEVICE_CPU, 0, 2, NULL};
	struct wl_run_io io = WL_RUN_IO_QUIET(NULL, NULL);
	json_t *a = json_loads(args, 0, NULL), *cursor = NULL;
	struct parts_list pl;
	uint64_t total, carved;
	char err[WL_ERRLEN] = "";
	int last;

	assert_non_null(fx);
	assert_non_null(a);
	parts_list_init(&pl);
	assert_int_equal(wl->parse_params(ctx, a, &fx->params, &total, err,
					  sizeof(err)), 0);
	assert_int_equal(wl->carve(ctx, fx->params, NULL, NULL, &pl.pub, units,
				   &fx->spec, &carved, &cursor, &last), 0);
	if (units)
		assert_int_equal(carved, units);
	assert_int_equal(wl->run(ctx, fx->params, fx->spec, NULL, 0, &dev, &io,
				 &fx->res, &fx->len, err, sizeof(err)), 0);
	json_decref(cursor);
	json_decref(a);
	parts_list_clear(&pl);
	*state = fx;
	return 0;
}

int detect_teardown(void **state)
{
	struct detect_fx *fx = *state;

	json_decref(fx->params);
	json_decref(fx->spec);
	free(fx->res);
	free(fx);
	return 0;
}

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
