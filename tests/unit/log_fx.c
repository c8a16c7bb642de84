/* log_fx.c - see log_fx.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log_fx.h"

void cap_start(struct cap *c)
{
	int fd;

	snprintf(c->path, sizeof(c->path), "/tmp/test_log_fx.XXXXXX");
	fd = mkstemp(c->path);
	assert_true(fd >= 0);
	fflush(stderr);
	c->saved = dup(STDERR_FILENO);
	assert_true(c->saved >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
}

char *cap_end(struct cap *c)
{
	FILE *f;
	char *text = NULL;
	size_t len = 0, cap = 0, n;

	fflush(stderr);
	assert_int_equal(dup2(c->saved, STDERR_FILENO), STDERR_FILENO);
	close(c->saved);
	f = fopen(c->path, "r");
	assert_non_null(f);
	do {
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 1 << 16;
			text = realloc(text, cap);
			assert_non_null(text);
		}
		n = fread(text + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	text[len] = '\0';
	fclose(f);
	unlink(c->path);
	return text;
}

size_t count(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}
