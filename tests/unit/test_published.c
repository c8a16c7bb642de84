/* test_published.c - the published results gpuctl prints beside an answer
 * (tools/published.c): agrees, differs, and nothing for answers no table
 * entry matches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "published.h"
#include "unit_main.h"

static const char *note_for(const char *workload, const char *answer,
			    char *buf, size_t len)
{
	json_t *a = json_loads(answer, 0, NULL);
	const char *n;

	assert_non_null(a);
	n = published_note(workload, a, buf, len);
	json_decref(a);
	return n;
}

static void test_notes(void **state)
{
	char buf[160];
	const char *n;

	(void)state;
	n = note_for("sudoku", "{\"rows\":3,\"cols\":3,\"total\":"
		     "\"6670903752021072936960\"}", buf, sizeof(buf));
	assert_non_null(n);
	assert_non_null(strstr(n, "agrees with the published count"));
	n = note_for("sudoku", "{\"rows\":3,\"cols\":3,\"total\":\"7\"}", buf,
		     sizeof(buf));
	assert_non_null(n);
	assert_non_null(strstr(n, "differs from the published count "
			       "6670903752021072936960"));
	/* 3x2 and 2x3 are different entries with the same count */
	n = note_for("sudoku", "{\"rows\":2,\"cols\":3,\"total\":\"28200960\"}",
		     buf, sizeof(buf));
	assert_non_null(n);
	assert_non_null(strstr(n, "agrees"));
	/* no total yet, another shape, another workload: nothing to say */
	assert_null(note_for("sudoku", "{\"rows\":3,\"cols\":3}", buf, sizeof(buf)));
	assert_null(note_for("sudoku", "{\"rows\":6,\"cols\":2,\"total\":\"1\"}",
			     buf, sizeof(buf)));
	assert_null(note_for("graveler", "{\"rows\":3,\"cols\":3,\"total\":"
			     "\"6670903752021072936960\"}", buf, sizeof(buf)));
}

UNIT_MAIN(cmocka_unit_test(test_notes))
