/* test_ctl_text.c - gpuctl's escaping of text from workers and gpud
 * (tools/ctl_text.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "ctl_text.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_escape_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
