/* test_gerr.c - common/gerr.c: the one table of error codes, each with
 * its own static string and "unknown error" for the rest; errno
 * translated as the header says; the bounded messages of gerr_printf and
 * gerr_fail, which write nothing without a buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "gerr.h"
#include "unit_main.h"

static void test_strings(void **state)
{
	static const struct {
		int code;
		const char *text;
	} table[] = {
		{ GERR_OK, "ok" },
		{ GERR_NOMEM, "out of memory" },
		{ GERR_INVAL, "invalid argument" },
		{ GERR_IO, "input/output error" },
		{ GERR_CORRUPT, "corrupt data" },
		{ GERR_TOOBIG, "too large" },
		{ GERR_AGAIN, "try again" },
		{ GERR_NOTFOUND, "not found" },
		{ GERR_STALE, "stale epoch" },
		{ GERR_AUTH, "authentication failed" },
		{ GERR_PROTO, "protocol violation" },
		{ GERR_DB, "database error" },
		{ GERR_ZLIB, "compression error" },
		{ GERR_DEVICE, "device error" },
		{ GERR_VERIFY, "verification failed" },
		{ GERR_STATE, "not allowed in this state" },
		{ GERR_DONE, "nothing left to do" },
		{ GERR_CANCELLED, "cancelled" },
		{ GERR_NOSPACE, "no space left on device" },
		{ GERR_PERM, "permission denied" },
		{ GERR_UNSUPPORTED, "unsupported" },
	};
	size_t n = sizeof(table) / sizeof(table[0]);

	(void)state;
	/* The codes run 0, -1, -2, ... without a gap. */
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(table[i].code, -(int)i);
		assert_string_equal(gerr_str(table[i].code), table[i].text);
		/* Static: the same pointer every time. */
		assert_ptr_equal(gerr_str(table[i].code), gerr_str(table[i].code));
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(gerr_str(table[i].code),
						gerr_str(table[j].code));
	}
	/* Anything else, never NULL. */
	const int other[] = { 1, 2, -(int)n, -100, INT_MIN, INT_MAX };
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		assert_string_equal(gerr_str(other[i]), "unknown error");
}

static void test_from_errno(void **state)
{
	static const struct {
		int e, code;
	} table[] = {
		{ ENOENT, GERR_NOTFOUND }, { ENOSPC, GERR_NOSPACE },
		{ EDQUOT, GERR_NOSPACE },  { EACCES, GERR_PERM },
		{ EPERM, GERR_PERM },      { ENOMEM, GERR_NOMEM },
		{ ENAMETOOLONG, GERR_INVAL },
		/* Anything unknown is an I/O error. */
		{ EIO, GERR_IO },   { EINVAL, GERR_IO }, { EBADF, GERR_IO },
		{ EEXIST, GERR_IO }, { 0, GERR_IO },     { 99999, GERR_IO },
	};
	char path[PATH_MAX + 64];
	int fd;

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (gerr_from_errno(table[i].e) != table[i].code)
			fail_msg("errno %d: got %d, want %d", table[i].e,
				 gerr_from_errno(table[i].e), table[i].code);
	/* From real calls. */
	fd = open("/nonexistent/gpud-test", O_RDONLY);
	assert_int_equal(fd, -1);
	assert_int_equal(gerr_from_errno(errno), GERR_NOTFOUND);
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	fd = open(path, O_RDONLY);
	assert_int_equal(fd, -1);
	assert_int_equal(gerr_from_errno(errno), GERR_INVAL);
	assert_int_equal(close(-1), -1);
	assert_int_equal(gerr_from_errno(errno), GERR_IO);
}

static void test_messages(void **state)
{
	char err[16];

	(void)state;
	gerr_printf(err, sizeof(err), "lease=%d epoch=%d", 4, 2);
	assert_string_equal(err, "lease=4 epoch=2");
	/* Bounded and terminated. */
	gerr_printf(err, sizeof(err), "%s", "a message longer than the buffer");
	assert_string_equal(err, "a message longe");
	gerr_printf(err, 1, "x");
	assert_string_equal(err, "");
	/* No buffer, or none of it: nothing written. */
	memset(err, 'z', sizeof(err));
	gerr_printf(err, 0, "x");
	assert_int_equal(err[0], 'z');
	gerr_printf(NULL, 100, "x");
	assert_int_equal(gerr_fail(GERR_CORRUPT, err, sizeof(err), "bad %s",
				   "magic"), GERR_CORRUPT);
	assert_string_equal(err, "bad magic");
	memset(err, 'z', sizeof(err));
	assert_int_equal(gerr_fail(GERR_TOOBIG, err, 0, "x"), GERR_TOOBIG);
	assert_int_equal(err[0], 'z');
	assert_int_equal(gerr_fail(GERR_AUTH, NULL, 64, "x"), GERR_AUTH);
	/* Whatever the code, even success. */
	assert_int_equal(gerr_fail(0, err, sizeof(err), "fine"), 0);
	assert_string_equal(err, "fine");
	assert_int_equal(gerr_fail(GERR_IO, err, 5, "%d", 123456), GERR_IO);
	assert_string_equal(err, "1234");
}

UNIT_MAIN(cmocka_unit_test(test_strings),
	cmocka_unit_test(test_from_errno),
	cmocka_unit_test(test_messages))
