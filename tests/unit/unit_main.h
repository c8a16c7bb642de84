/* unit_main.h - a unit test program's main: run the tests named (each a
 * cmocka_unit_test(fn) or one with its own setup and teardown), in order,
 * with no group setup; the exit status is the number that failed. And
 * formats_as, for the formatters of numbers for people. Include after
 * <cmocka.h>. */
#ifndef GPUD_UNIT_MAIN_H
#define GPUD_UNIT_MAIN_H

#include <stdio.h>
#include <time.h>

#define UNIT_MAIN(...)                                                       \
	int main(void)                                                       \
	{                                                                    \
		const struct CMUnitTest tests[] = {__VA_ARGS__};             \
		return cmocka_run_group_tests(tests, NULL, NULL);            \
	}

/* TIMED(fn): a test that prints its wall time on stderr (suites that
 * must stay fast show where the time goes). */
static inline struct timespec *unit_t0(void)
{
	static struct timespec t;

	return &t;
}

static inline int unit_timer_start(void **state)
{
	(void)state;
	clock_gettime(CLOCK_MONOTONIC, unit_t0());
	return 0;
}

static inline int unit_timer_stop(void **state)
{
	struct timespec t, *t0 = unit_t0();

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t);
	fprintf(stderr, "  %.2f s\n", (double)(t.tv_sec - t0->tv_sec) +
			(double)(t.tv_nsec - t0->tv_nsec) * 1e-9);
	return 0;
}

#define TIMED(fn)                                                            \
	cmocka_unit_test_setup_teardown(fn, unit_timer_start, unit_timer_stop)

/* A formatter of one number into the caller's buffer (human_duration,
 * plot_num, ...) writes exactly want. */
typedef char *unit_fmt_fn(double v, char *buf, size_t len);
static inline void formats_as(unit_fmt_fn *fmt, double v, const char *want)
{
	char buf[64];

	assert_string_equal(fmt(v, buf, sizeof(buf)), want);
}

#endif
