/* test_ctl_text.c - gpuctl's escaping of text from workers and gpud
 * (tools/gpuctl/ctl_text.c), and the check report built on it (ctl_check.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "ctl_check.h"
#include "ctl_text.h"
#include "unit_main.h"

static void expect(const char *in, int keep_newlines, const char *want)
{
	char *got = ctl_text_escape(in, keep_newlines);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_escape(void **state)
{
	(void)state;
	expect("cuda:0 NVIDIA H100", 0, "cuda:0 NVIDIA H100");
	expect("", 0, "");
	expect(NULL, 0, "");
	/* C0, DEL: a title change, a screen clear, a bell. */
	expect("a\x1b]0;owned\x07" "b\x1b[2J\x7f", 0,
	       "a\\x1b]0;owned\\x07b\\x1b[2J\\x7f");
	/* Newlines and tabs only where multi-line text is expected; a
	 * carriage return never (it overwrites the line). */
	expect("l1\n\tl2\r", 0, "l1\\x0a\\x09l2\\x0d");
	expect("l1\n\tl2\r", 1, "l1\n\tl2\\x0d");
	/* C1 controls (U+009B is CSI on some terminals) and bidi overrides. */
	expect("x\xc2\x9b" "31m", 0, "x\\u009b31m");
	expect("abc\xe2\x80\xae" "fed", 0, "abc\\u202efed");
	expect("\xe2\x81\xa6" "i\xe2\x81\xa9", 0, "\\u2066i\\u2069");
	/* Other UTF-8 kept as it is. */
	expect("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x99\x82", 0,
	       "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x99\x82");
	/* Bytes that are not UTF-8: lone, overlong, surrogate, truncated. */
	expect("\xff\xc0\xaf\xed\xa0\x80\xe2\x80", 0,
	       "\\xff\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x80");
}

static void test_escape_json(void **state)
{
	json_t *v = json_pack("{s:s, s:s, s:[s, {s:s}], s:i}", "device",
			      "cpu\x1b[2J", "text", "line\none\x1b", "workers",
			      "w\x07", "reason", "r\r", "n", 3);
	json_t *arr;

	(void)state;
	assert_non_null(v);
	assert_int_equal(ctl_text_escape_json(v), 0);
	assert_string_equal(json_string_value(json_object_get(v, "device")),
			    "cpu\\x1b[2J");
	assert_string_equal(json_string_value(json_object_get(v, "text")),
			    "line\none\\x1b");
	arr = json_object_get(v, "workers");
	assert_string_equal(json_string_value(json_array_get(arr, 0)), "w\\x07");
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(arr, 1), "reason")), "r\\x0d");
	assert_int_equal(json_integer_value(json_object_get(v, "n")), 3);
	json_decref(v);
}

/* gpuctl check's report, from a reply decoded as gpuctl decodes it, names
 * each problem's job, lease and blob. */
static void test_check_report(void **state)
{
	json_t *r = json_loads("{\"ok\":true,\"damaged\":true,\"database\":[],"
		"\"references\":4,\"blobs_checked\":3,\"problems\":[{\"job\":2,"
		"\"lease\":7,\"where\":\"result of lease\",\"hash\":\"ab12\","
		"\"problem\":\"missing\"},{\"job\":3,\"lease\":null,\"where\":"
		"\"params of job\",\"hash\":\"cd34\",\"problem\":\"corrupt\"}],"
		"\"problems_total\":2,\"damaged_jobs\":[2,3]}", 0, NULL);
	struct ctlcmd_reply rep;
	char err[256], *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	assert_non_null(r);
	assert_non_null(f);
	assert_int_equal(ctlcmd_reply_decode(&ctlcmd_table[CTLCMD_CHECK], r, &rep,
					     err, sizeof(err)), 0);
	ctl_check_print(f, &rep);
	fclose(f);
	assert_non_null(strstr(out, "database: ok"));
	assert_non_null(strstr(out, "blobs: 3 named by 4 references, 2 problem(s)"));
	assert_non_null(strstr(out, "job 2: result of lease 7: blob ab12 missing"));
	assert_non_null(strstr(out, "job 3: params of job 3: blob cd34 corrupt"));
	assert_non_null(strstr(out, "DAMAGED\n"));
	free(out);
	ctlcmd_reply_clear(&rep);
	json_decref(r);
}

UNIT_MAIN(cmocka_unit_test(test_escape),
	cmocka_unit_test(test_escape_json),
	cmocka_unit_test(test_check_report))
