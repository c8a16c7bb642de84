/* duration.c - durations as people write them (duration.h). */
#include "duration.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gerr.h"

static const struct {
	char unit;
	uint64_t seconds;
} units[] = { { 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 } };

#define N_UNITS (sizeof(units) / sizeof(units[0]))

int duration_parse(const char *s, double min_s, double max_s, double *ret_s)
{
	/* Bounded before any arithmetic: a group has at most 9 digits, and
	 * four groups stay far below 2^63. */
	uint64_t total = 0;
	size_t next = 0; /* units[] index the next group may use */
	const char *p = s;

	if (!s || !*s || strlen(s) >= DURATION_TEXT_MAX)
		return GERR_INVAL;
	while (*p) {
		uint64_t v = 0;
		int digits = 0;
		size_t u;

		while (*p >= '0' && *p <= '9') {
			if (++digits > 9)
				return GERR_INVAL;
			v = v * 10 + (uint64_t)(*p++ - '0');
		}
		if (!digits)
			return GERR_INVAL;
		for (u = next; u < N_UNITS && units[u].unit != *p; u++)
			;
		if (u == N_UNITS)
			return GERR_INVAL;  /* no unit, an unknown one, or out of order */
		total += v * units[u].seconds;
		next = u + 1;
		p++;
	}
	if ((double)total < min_s || (double)total > max_s)
		return GERR_INVAL;
	*ret_s = (double)total;
	return 0;
}

char *duration_format(double seconds, char *buf, size_t len)
{
	uint64_t left;
	size_t n = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	/* Finite, at most about a hundred years: what a job's limit is. */
	if (!(seconds >= 0) || seconds > 3.2e9)
		seconds = seconds > 0 ? 3.2e9 : 0;
	left = (uint64_t)(seconds + 0.5);
	for (size_t u = 0; u < N_UNITS && n < len; u++) {
		uint64_t k = left / units[u].seconds;

		if (!k)
			continue;
		left -= k * units[u].seconds;
		int w = snprintf(buf + n, len - n, "%llu%c", (unsigned long long)k,
				 units[u].unit);
		if (w < 0)
			break;
		n += (size_t)w;
	}
	if (n == 0)
		snprintf(buf, len, "0s");
	return buf;
}
