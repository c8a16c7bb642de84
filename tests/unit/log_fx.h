/* log_fx.h - capturing what a test logs: stderr redirected to a temporary
 * file between cap_start and cap_end, and read back as one string. Shared
 * by the tests that check log lines (test_log.c, test_gpud.c,
 * test_results.c) and by those that count a string's occurrences in text
 * (test_plot.c). The helpers fail the running cmocka test on any error. */
#ifndef GPUD_LOG_FX_H
#define GPUD_LOG_FX_H

#include <stddef.h>

struct cap {
	int saved;      /* the real stderr */
	char path[64];
};

/* Redirect stderr to a new temporary file. */
void cap_start(struct cap *c);
/* Restore stderr; what was written to it since cap_start, as a new string
 * (the caller frees it). The temporary file is removed. */
char *cap_end(struct cap *c);
/* The number of times needle occurs in text (overlapping ones included). */
size_t count(const char *text, const char *needle);

#endif
