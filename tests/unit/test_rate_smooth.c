/* test_rate_smooth.c - daemon/rate_smooth.c, a job's smoothed rate and
 * when it is steady enough for an ETA (the rule in rate_smooth.h):
 * progress that arrives in heartbeat steps gives the rate of the steps,
 * not their spikes; no ETA before RATE_STEADY_S nor while the rate still
 * moves; a still job's rate falls and loses its ETA; a step back or a
 * gap starts over. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>

#include "rate_smooth.h"
#include "unit_main.h"

static int near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b);
}

/* Samples every second from t to t + secs of a job that makes rate units
 * a second, reported every hb seconds (a heartbeat's step); *u and *t
 * move on. */
static void feed(struct rate_smooth *r, double *t, uint64_t *u, double secs,
		 double rate, int hb)
{
	for (int i = 1; i <= (int)secs; i++) {
		*t += 1;
		if (i % hb == 0)
			*u += (uint64_t)(rate * hb);
		rate_smooth_add(r, *t, *u);
	}
}

static void test_steps(void **state)
{
	struct rate_smooth r = {0};
	double t = 1000;
	uint64_t u = 0;

	(void)state;
	assert_true(rate_smooth_rate(&r) == 0);
	rate_smooth_add(&r, t, 0);
	/* The first step (the lease's start: a time unknown) is the origin
	 * and brings no rate; a 5 s heartbeat at 10 units/s after it. */
	feed(&r, &t, &u, 5, 10, 5);
	assert_true(rate_smooth_rate(&r) == 0);
	assert_true(rate_smooth_eta(&r, t, 1000) == 0);
	feed(&r, &t, &u, 10, 10, 5);
	assert_true(near(rate_smooth_rate(&r), 10, 1e-9));
	/* Two steps, 10 s since the origin: not steady yet. */
	assert_false(rate_smooth_steady(&r, t));
	assert_true(rate_smooth_eta(&r, t, 1000) == 0);
	feed(&r, &t, &u, 10, 10, 5);
	assert_true(rate_smooth_steady(&r, t));
	assert_true(near(rate_smooth_eta(&r, t, 1000), 100, 1e-9));
	/* Between steps (no move yet) the rate holds: no sawtooth. */
	rate_smooth_add(&r, t + 1, u);
	assert_true(near(rate_smooth_rate(&r), 10, 1e-9));
}

static void test_change(void **state)
{
	struct rate_smooth r = {0};
	double t = 0;
	uint64_t u = 0;

	(void)state;
	rate_smooth_add(&r, t, u);
	feed(&r, &t, &u, 60, 100, 2);
	assert_true(rate_smooth_steady(&r, t));
	/* Four times faster (a second worker came): the rate follows
	 * smoothly, and the ETA waits until it settles. */
	feed(&r, &t, &u, 4, 400, 2);
	double mid = rate_smooth_rate(&r);
	assert_true(mid > 100 && mid < 400);
	assert_false(rate_smooth_steady(&r, t));
	assert_true(rate_smooth_eta(&r, t, 1000) == 0);
	feed(&r, &t, &u, 120, 400, 2);
	assert_true(near(rate_smooth_rate(&r), 400, 0.02));
	assert_true(rate_smooth_steady(&r, t));
}

static void test_stall(void **state)
{
	struct rate_smooth r = {0};
	double t = 0;
	uint64_t u = 0;

	(void)state;
	rate_smooth_add(&r, t, u);
	feed(&r, &t, &u, 40, 50, 1);
	assert_true(rate_smooth_steady(&r, t));
	/* Nothing moves (the worker is gone): the ETA goes at once after
	 * RATE_STALL_S, and the rate falls. */
	for (int i = 0; i < (int)RATE_STALL_S; i++)
		rate_smooth_add(&r, ++t, u);
	assert_false(rate_smooth_steady(&r, t));
	assert_true(rate_smooth_rate(&r) < 50);
	assert_true(rate_smooth_rate(&r) > 0);
}

static void test_back_and_gap(void **state)
{
	struct rate_smooth r = {0};
	double t = 0;
	uint64_t u = 1000;

	(void)state;
	rate_smooth_add(&r, t, u);
	feed(&r, &t, &u, 30, 20, 1);
	assert_true(rate_smooth_steady(&r, t));
	/* A lost lease's progress: fewer units. The rate stays, the ETA
	 * waits for a new origin and steps. */
	u -= 300;
	rate_smooth_add(&r, ++t, u);
	assert_true(near(rate_smooth_rate(&r), 20, 1e-9));
	assert_false(rate_smooth_steady(&r, t));
	feed(&r, &t, &u, 20, 20, 1);
	assert_true(rate_smooth_steady(&r, t));
	/* A gap in the samples (the job was paused): all over again. */
	t += RATE_GAP_S + 1;
	rate_smooth_add(&r, t, u);
	assert_true(rate_smooth_rate(&r) == 0);
	/* Time going back is ignored. */
	rate_smooth_add(&r, t - 5, u + 100);
	assert_true(rate_smooth_rate(&r) == 0);
}

UNIT_MAIN(cmocka_unit_test(test_steps), cmocka_unit_test(test_change),
	  cmocka_unit_test(test_stall), cmocka_unit_test(test_back_and_gap))
