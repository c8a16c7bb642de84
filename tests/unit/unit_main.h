/* unit_main.h - a unit test program's main: run the tests named (each a
 * cmocka_unit_test(fn) or one with its own setup and teardown), in order,
 * with no group setup; the exit status is the number that failed. And
 * formats_as, for the formatters of numbers for people. Include after
 * <cmocka.h>. */
#ifndef GPUD_UNIT_MAIN_H
#define GPUD_UNIT_MAIN_H

#define UNIT_MAIN(...)                                                       \
	int main(void)                                                       \
	{                                                                    \
		const struct CMUnitTest tests[] = {__VA_ARGS__};             \
		return cmocka_run_group_tests(tests, NULL, NULL);            \
	}

/* A formatter of one number into the caller's buffer (human_duration,
 * plot_num, ...) writes exactly want. */
typedef char *unit_fmt_fn(double v, char *buf, size_t len);
static inline void formats_as(unit_fmt_fn *fmt, double v, const char *want)
{
	char buf[64];

	assert_string_equal(fmt(v, buf, sizeof(buf)), want);
}

#endif
