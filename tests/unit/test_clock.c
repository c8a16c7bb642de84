/* test_clock.c - common/clock.c: the monotonic clock never goes back, the
 * wall clock is the system's time, seconds and nanoseconds agree, and an
 * injected clock is the one read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <time.h>

#include "clock.h"
#include "unit_main.h"

static void test_mono(void **state)
{
	int64_t prev = gclock_mono_ns();
	double s;

	(void)state;
	for (int i = 0; i < 10000; i++) {
		int64_t now = gclock_mono_ns();

		assert_true(now >= prev);
		prev = now;
	}
	s = gclock_mono();
	assert_true(s >= (double)prev / 1e9);
	assert_true(s - (double)prev / 1e9 < 1.0);
}

static void test_wall(void **state)
{
	time_t before = time(NULL);
	double s = gclock_wall();
	int64_t ns = gclock_wall_ns();
	time_t after = time(NULL);

	(void)state;
	/* time(2) truncates, and reads the kernel's coarse clock, which may
	 * lag a tick behind: the clock may read up to a second past it. */
	assert_true(s >= (double)before && s < (double)after + 1.0);
	assert_true(ns / 1000000000 >= before &&
		    ns / 1000000000 <= after + 1);
	/* Seconds since the epoch as a double round to about 0.2 us, so the
	 * later reading may come out that much below the earlier one. */
	assert_true((double)ns / 1e9 >= s - 1e-6 &&
		    (double)ns / 1e9 - s < 1.0);
}

static double fake_wall(void *opaque)
{
	return *(double *)opaque + 1000.0;
}

static double fake_mono(void *opaque)
{
	return *(double *)opaque;
}

static void test_injected(void **state)
{
	double t = 42.5;
	struct gclock c = { fake_wall, fake_mono, &t };
	struct gclock half = { .mono = fake_mono, .opaque = &t };
	double sys = gclock_wall();

	(void)state;
	assert_true(gclock_mono_of(&c) == 42.5);
	assert_true(gclock_wall_of(&c) == 1042.5);
	t = 50.0;
	assert_true(gclock_mono_of(&c) == 50.0);
	/* NULL, or a NULL function, reads the system's. */
	assert_true(gclock_wall_of(NULL) >= sys);
	assert_true(gclock_wall_of(&half) >= sys);
	assert_true(gclock_mono_of(&half) == 50.0);
	assert_true(gclock_mono_of(NULL) > 0.0);
}

UNIT_MAIN(cmocka_unit_test(test_mono),
	cmocka_unit_test(test_wall),
	cmocka_unit_test(test_injected))
