/* test_ctl_time.c - unit tests of tools/gpuctl/ctl_time.c: the times
 * gpuctl history and events take (dates local or UTC, times ago), and
 * what they refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_time.h"
#include "unit_main.h"

#define NOW 1796000000LL  /* 2026-11-29 */

static int64_t ok(const char *s)
{
	char err[256] = "";
	int64_t t = -1;

	assert_int_equal(ctl_time_parse(s, NOW, &t, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	return t;
}

static void bad(const char *s, const char *says)
{
	char err[256] = "";
	int64_t t = 12345;

	assert_int_equal(ctl_time_parse(s, NOW, &t, err, sizeof(err)), -1);
	assert_int_equal(t, 12345);
	if (!strstr(err, says))
		fail_msg("%s: %s", s, err);
}

/* A date in UTC (Z), and in local time under a zone set here. */
static void test_absolute(void **state)
{
	(void)state;
	assert_int_equal(ok("2026-11-29T00:00Z"), 1795910400LL);
	assert_int_equal(ok("2026-11-29T13:00Z"), 1795910400LL + 13 * 3600);
	assert_int_equal(ok("2026-11-29 13:00:30Z"), 1795910400LL + 13 * 3600 + 30);
	assert_int_equal(ok("1970-01-01T00:00Z"), 0);
	/* Local: UTC-5 all year, so the answer is 5 hours later. */
	setenv("TZ", "EST5", 1);
	tzset();
	assert_int_equal(ok("2026-11-29"), 1795910400LL + 5 * 3600);
	assert_int_equal(ok("2026-11-29T13:00"), 1795910400LL + 18 * 3600);
	assert_int_equal(ok("2024-02-29"), 1709164800LL + 5 * 3600);
	setenv("TZ", "UTC0", 1);
	tzset();
}

static void test_relative(void **state)
{
	(void)state;
	assert_int_equal(ok("90s"), NOW - 90);
	assert_int_equal(ok("30m"), NOW - 1800);
	assert_int_equal(ok("2h"), NOW - 7200);
	assert_int_equal(ok("2h ago"), NOW - 7200);
	assert_int_equal(ok("3d"), NOW - 3 * 86400);
	assert_int_equal(ok("1w"), NOW - 7 * 86400);
	assert_int_equal(ok("0s"), NOW);
	assert_int_equal(ok("now"), NOW);
	assert_int_equal(ok("20000d"), NOW - 20000LL * 86400);
}

static void test_refused(void **state)
{
	(void)state;
	bad("", "wants a date");
	bad("yesterday", "wants a date");
	bad("2h later", "wants a date");
	bad("2x", "wants a date");
	bad("-2h", "wants a date");
	bad("h", "wants a date");
	bad("2026-11-29T13", "wants a date");
	bad("2026-11-29T13:00+01", "wants a date");
	bad("2026-1-29", "wants a date");
	bad("29/11/2026", "wants a date");
	bad("2026-11-29T13:00:30:00", "wants a date");
	bad("2026-02-30", "no such time");
	bad("2026-13-01", "no such time");
	bad("2026-11-29T24:00", "no such time");
	bad("1969-12-31", "no such time");
	bad("2100-01-01", "no such time");
	bad("36501d", "longer ago than 100 years");
	bad("999999999999w", "longer ago than 100 years");
	bad("9999999999999w", "wants a date");
	bad("21000d", "before 1970");
	bad("2026-11-29T13:00:00Z and more than thirty-two bytes", "wants a date");
}

UNIT_MAIN(cmocka_unit_test(test_absolute), cmocka_unit_test(test_relative),
	  cmocka_unit_test(test_refused))
