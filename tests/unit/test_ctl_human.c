/* test_ctl_human.c - gpuctl's numbers for people (tools/ctl_human.c) and
 * its aligned tables (tools/ctl_table.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctl_human.h"
#include "ctl_table.h"
#include "unit_main.h"

static void count_is(double v, const char *want)
{
	char buf[32];

	assert_string_equal(human_count(v, buf, sizeof(buf)), want);
}

static void test_count(void **state)
{
	char buf[64];

	(void)state;
	count_is(0, "0");
	count_is(999, "999");
	count_is(999.4, "999");
	count_is(999.6, "1.00 k");  /* never "1000" */
	count_is(1234, "1.23 k");
	count_is(54.9e6, "54.9 M");
	count_is(1e8, "100 M");
	count_is(1e9, "1.00 G");
	count_is(999.6e9, "1.00 T");
	count_is(2.5e18, "2.50 E");
	count_is(-1, "-");
	count_is(0.0 / 0.0, "-");
	assert_string_equal(human_units(1e9, "battles", buf, sizeof(buf)), "1.00 G battles");
	assert_string_equal(human_units(12, NULL, buf, sizeof(buf)), "12 units");
	assert_string_equal(human_rate(54.9e6, buf, sizeof(buf)), "54.9 M/s");
	assert_string_equal(human_rate(0, buf, sizeof(buf)), "0/s");
	/* A slow job (a Sudoku 5x2 gangster takes 1.7 s): not "0/s". */
	assert_string_equal(human_rate(0.42, buf, sizeof(buf)), "0.42/s");
	assert_string_equal(human_rate(9.5, buf, sizeof(buf)), "9.50/s");
	assert_string_equal(human_rate(12, buf, sizeof(buf)), "12/s");
	assert_string_equal(human_rate(-1, buf, sizeof(buf)), "-");
}

static void test_duration(void **state)
{
	(void)state;
	formats_as(human_duration, 0, "0s");
	formats_as(human_duration, 44.6, "45s");
	formats_as(human_duration, 59.6, "1m00s");
	formats_as(human_duration, 725, "12m05s");
	formats_as(human_duration, 3 * 3600 + 7 * 60 + 10, "3h07m");
	formats_as(human_duration, 2 * 86400 + 4 * 3600 + 59, "2d04h");
	formats_as(human_duration, -3, "-");
	formats_as(human_duration, 1e12, "-");
}

static void test_bar_fit_time(void **state)
{
	char bar[16], buf[32];

	(void)state;
	assert_string_equal(human_bar(0.5, 10, bar), "[#####.....]");
	assert_string_equal(human_bar(2, 4, bar), "[####]");
	assert_string_equal(human_bar(-1, 4, bar), "[....]");
	assert_int_equal(human_fit("abcdef", 3), 3);
	assert_int_equal(human_fit("ab", 3), 2);
	/* é is two bytes, one column: never split. */
	assert_int_equal(human_fit("caf\xc3\xa9s", 4), 5);
	assert_int_equal(human_fit("", 0), 0);
	assert_string_equal(human_time(0, 1e9, buf, sizeof(buf)), "-");
	/* Today: the time alone; another day: the date too. */
	assert_int_equal(strlen(human_time(1e9, 1e9 + 1, buf, sizeof(buf))), 8);
	assert_int_equal(strlen(human_time(1e9, 1e9 + 10 * 86400, buf, sizeof(buf))), 16);
}

/* The table's printed text (malloc'ed). */
static char *printed(const struct ctl_table *t, int no_header, size_t rows, size_t cols)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	ctl_table_print(t, f, no_header, rows, cols);
	fclose(f);
	return buf;
}

static void test_table(void **state)
{
	static const char *const head[] = { "ID", "NAME", "REASON" };
	static const int right[] = { 1, 0, 0 };
	struct ctl_table t;
	char *out, *line, *save;
	int n = 0;

	(void)state;
	ctl_table_init(&t, 3, head, right);
	for (int i = 1; i <= 12; i++) {
		char id[8];
		snprintf(id, sizeof(id), "%d", i);
		const char *row[] = { id, i == 3 ? "caf\xc3\xa9" : "job", i % 2 ? "behind job 2" : NULL };
		ctl_table_row(&t, row);
	}
	/* Every column starts at the same place on every line, job 1 as job
	 * 12; a UTF-8 name counts its characters; no trailing blanks. */
	out = printed(&t, 0, 0, 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		const char *reason = strstr(line, n == 0 ? "REASON" : n % 2 ? "behind" : "-");
		size_t width = 0;
		for (const char *p = line; p < reason; p++)
			width += ((unsigned char)*p & 0xc0) != 0x80;
		assert_int_equal(width, 10);
		assert_true(line[strlen(line) - 1] != ' ');
		if (n == 1)
			assert_memory_equal(line, " 1  job", 7);
		if (n == 12)
			assert_memory_equal(line, "12  job", 7);
	}
	assert_int_equal(n, 13);
	free(out);
	/* Cut to 5 lines of 9 columns: 4 rows, then "+8 more". */
	out = printed(&t, 1, 5, 9);
	assert_string_equal(out, " 1  job\n 2  job\n 3  caf\xc3\xa9\n 4  job\n+8 more\n");
	free(out);
	ctl_table_free(&t);
}

UNIT_MAIN(cmocka_unit_test(test_count),
	cmocka_unit_test(test_duration),
	cmocka_unit_test(test_bar_fit_time),
	cmocka_unit_test(test_table))
