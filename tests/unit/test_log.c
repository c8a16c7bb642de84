/* test_log.c - log lines: the plain format with its timestamp, journald's
 * <N> priorities without one, the JOURNAL_STREAM check, control characters
 * replaced, and repeated identical lines held back and summed up (on an
 * injected clock). stderr is redirected to a temporary file and read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gerr.h"
#include "log.h"
#include "log_fx.h"
#include "unit_main.h"

static void test_plain(void **state)
{
	struct glog lg = { .prog = "gpud", .level = GLOG_INFO };
	struct cap c;
	char *t;
	int y, mo, d, h, mi, s, ms, used = 0;

	(void)state;
	cap_start(&c);
	LOG_INFO(&lg, "lease claim job=%d", 7);
	LOG_DEBUG(&lg, "not shown");
	LOG_WARN(&lg, "two\nlines\x1b[2J");
	t = cap_end(&c);
	assert_int_equal(sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ gpud info lease claim job=7\n%n",
				&y, &mo, &d, &h, &mi, &s, &ms, &used), 7);
	assert_true(used > 0);
	assert_null(strstr(t, "not shown"));
	/* The newline and the escape cannot forge a line of their own. */
	assert_non_null(strstr(t, "gpud warn two lines [2J\n"));
	assert_int_equal(count(t, "\n"), 2);
	free(t);
}

static void test_journal(void **state)
{
	struct glog lg = { .prog = "gpud", .level = GLOG_DEBUG, .journal = 1 };
	struct cap c;
	char *t;

	(void)state;
	cap_start(&c);
	LOG_ERROR(&lg, "e %d", 1);
	LOG_WARN(&lg, "w");
	LOG_INFO(&lg, "i");
	LOG_DEBUG(&lg, "d");
	t = cap_end(&c);
	assert_string_equal(t, "<3>e 1\n<4>w\n<6>i\n<7>d\n");
	free(t);
}

static void test_journal_detect(void **state)
{
	struct stat st;
	char v[64];
	struct cap c;

	(void)state;
	cap_start(&c); /* stderr is now a file of our own */
	assert_int_equal(fstat(STDERR_FILENO, &st), 0);
	unsetenv("JOURNAL_STREAM");
	assert_int_equal(glog_journal_detect(), 0);
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", v, 1);
	assert_int_equal(glog_journal_detect(), 1);
	/* Inherited by a process whose stderr is elsewhere. */
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", v, 1);
	assert_int_equal(glog_journal_detect(), 0);
	setenv("JOURNAL_STREAM", "12:x", 1);
	assert_int_equal(glog_journal_detect(), 0);
	setenv("JOURNAL_STREAM", "", 1);
	assert_int_equal(glog_journal_detect(), 0);
	unsetenv("JOURNAL_STREAM");
	free(cap_end(&c));
}

static double fake_now(void *opaque)
{
	return *(double *)opaque;
}

/* lg's lines through the limiter lim, whose clock reads *now, captured
 * from here on. */
static void limit_start(struct glog *lg, struct glog_limit *lim,
			double *now, struct cap *c)
{
	assert_int_equal(glog_limit_init(lim), 0);
	lim->now = fake_now;
	lim->opaque = now;
	lg->limit = lim;
	cap_start(c);
}

static void test_limit(void **state)
{
	struct glog_limit lim;
	struct glog lg = { .prog = "gpud", .level = GLOG_INFO, .journal = 1 };
	double now = 100;
	struct cap c;
	char *t, want[128];

	(void)state;
	limit_start(&lg, &lim, &now, &c);
	for (int i = 0; i < 25; i++)
		LOG_WARN(&lg, "disk slow");
	/* Lines that differ are not held back. */
	for (int i = 0; i < 15; i++)
		LOG_INFO(&lg, "lease claim lease=%d", i);
	now += 5; /* still in the window */
	LOG_WARN(&lg, "disk slow");
	now += GLOG_WINDOW_S;
	LOG_INFO(&lg, "something else");
	LOG_WARN(&lg, "disk slow"); /* a new window */
	t = cap_end(&c);
	assert_int_equal(count(t, "<4>disk slow\n"), GLOG_BURST + 1);
	assert_int_equal(count(t, "<6>lease claim lease="), 15);
	snprintf(want, sizeof(want), "<4>%d similar messages suppressed in 10 s: "
		 "disk slow\n<6>something else\n", 26 - GLOG_BURST);
	assert_non_null(strstr(t, want));
	free(t);

	/* A burst that stopped: the flush sums it up once its window ends,
	 * and at shutdown (force) at once. */
	cap_start(&c);
	for (int i = 0; i < GLOG_BURST + 3; i++)
		LOG_ERROR(&lg, "cannot write");
	glog_flush(&lg, 0);
	t = cap_end(&c);
	assert_null(strstr(t, "suppressed"));
	free(t);
	cap_start(&c);
	now += GLOG_WINDOW_S;
	glog_flush(&lg, 0);
	glog_flush(&lg, 0);
	t = cap_end(&c);
	assert_int_equal(count(t, "<3>3 similar messages suppressed in 10 s: cannot write\n"), 1);
	free(t);
	cap_start(&c);
	LOG_ERROR(&lg, "x");
	LOG_ERROR(&lg, "x");
	for (int i = 0; i < GLOG_BURST; i++)
		LOG_ERROR(&lg, "x");
	glog_flush(&lg, 1);
	t = cap_end(&c);
	assert_int_equal(count(t, "<3>x\n"), GLOG_BURST);
	assert_non_null(strstr(t, "<3>2 similar messages suppressed in 10 s: x\n"));
	free(t);
	glog_limit_free(&lim);
}

/* More distinct lines at once than the table has slots: none is lost. */
static void test_limit_full(void **state)
{
	struct glog_limit lim;
	struct glog lg = { .prog = "gpud", .level = GLOG_INFO, .journal = 1 };
	double now = 0;
	struct cap c;
	char *t;

	(void)state;
	limit_start(&lg, &lim, &now, &c);
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < 3 * GLOG_LIMIT_SLOTS; i++)
			LOG_INFO(&lg, "line %d", i);
	t = cap_end(&c);
	assert_int_equal(count(t, "\n"), 3 * 3 * GLOG_LIMIT_SLOTS);
	assert_null(strstr(t, "suppressed"));
	free(t);
	glog_limit_free(&lim);
}

static void test_levels(void **state)
{
	enum glog_level l;

	(void)state;
	assert_int_equal(glog_level_parse("warn", &l), 0);
	assert_int_equal(l, GLOG_WARN);
	assert_int_equal(glog_level_parse("loud", &l), GERR_INVAL);
	assert_string_equal(glog_level_name(GLOG_DEBUG), "debug");
	assert_string_equal(glog_level_name((enum glog_level)9), "?");
}

UNIT_MAIN(cmocka_unit_test(test_plain),
	cmocka_unit_test(test_journal),
	cmocka_unit_test(test_journal_detect),
	cmocka_unit_test(test_limit),
	cmocka_unit_test(test_limit_full),
	cmocka_unit_test(test_levels))
