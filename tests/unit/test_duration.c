/* test_duration.c - unit tests of common/duration.c: what --time-limit
 * reads and what the time-limit reason writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "duration.h"
#include "gerr.h"
#include "unit_main.h"

static void test_parse(void **state)
{
	static const struct { const char *s; double v; } ok[] = {
		{ "90s", 90 }, { "30m", 1800 }, { "2h", 7200 }, { "1d", 86400 },
		{ "1h30m", 5400 }, { "1d2h3m4s", 93784 }, { "0m1s", 1 },
		{ "366d", 366 * 86400.0 },
	};
	static const char *const bad[] = {
		"", "90", "s", "5x", "1m2h", "1h1h", "-5s", "1.5h", " 5s", "5s ",
		"1234567890s", "0s", "367d", "1d1s1d", "h1",
	};
	double v = -1;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(duration_parse(ok[i].s, 1, 366 * 86400.0, &v), 0);
		assert_true(v == ok[i].v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = -1;
		assert_int_equal(duration_parse(bad[i], 1, 366 * 86400.0, &v), GERR_INVAL);
		assert_true(v == -1); /* nothing written */
	}
	assert_int_equal(duration_parse(NULL, 1, 10, &v), GERR_INVAL);
	char longest[DURATION_TEXT_MAX + 1];
	memset(longest, '0', sizeof(longest));
	longest[DURATION_TEXT_MAX - 1] = 's';
	longest[DURATION_TEXT_MAX] = '\0';
	assert_int_equal(duration_parse(longest, 0, 10, &v), GERR_INVAL);
}

static void test_format(void **state)
{
	char b[DURATION_TEXT_MAX];
	double v;

	(void)state;
	assert_string_equal(duration_format(1800, b, sizeof(b)), "30m");
	assert_string_equal(duration_format(5400, b, sizeof(b)), "1h30m");
	assert_string_equal(duration_format(90, b, sizeof(b)), "1m30s");
	assert_string_equal(duration_format(0, b, sizeof(b)), "0s");
	assert_string_equal(duration_format(-3, b, sizeof(b)), "0s");
	assert_string_equal(duration_format(86400 + 1, b, sizeof(b)), "1d1s");
	assert_string_equal(duration_format(2.6, b, sizeof(b)), "3s");
	/* What it writes, parse reads back. */
	for (double s = 1; s < 400 * 86400.0; s = s * 3 + 7) {
		duration_format(s, b, sizeof(b));
		assert_int_equal(duration_parse(b, 0, 1e12, &v), 0);
		assert_true(v == s);
	}
	char small[4];
	assert_string_equal(duration_format(93784, small, sizeof(small)), "1d2");
}

UNIT_MAIN(cmocka_unit_test(test_parse), cmocka_unit_test(test_format))
