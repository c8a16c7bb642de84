/* ctl_time.c - the times gpuctl's filters take (ctl_time.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* timegm */
#endif
#include "ctl_time.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define DAY_S 86400
#define REL_MAX_S (36500LL * DAY_S)

static const char want[] = "a date (2026-11-29, 2026-11-29T13:00, "
			   "2026-11-29T13:00Z for UTC) or a time ago (90s, "
			   "30m, 2h, 3d, 1w)";

/* Exactly n digits at s into *ret; the digits' count, or 0. */
static size_t digits(const char *s, size_t n, int *ret)
{
	int v = 0;

	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	*ret = v;
	return n;
}

/* "N[smhdw]" with an optional " ago": seconds into *ret; -1 otherwise. */
static int relative(const char *s, long long *ret)
{
	long long v = 0, unit;
	size_t i = 0;

	for (; isdigit((unsigned char)s[i]) && i < 12; i++)
		v = v * 10 + (s[i] - '0');
	if (i == 0 || isdigit((unsigned char)s[i]))
		return -1;
	switch (s[i]) {
	case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = DAY_S; break;
	case 'w': unit = 7 * DAY_S; break;
	default: return -1;
	}
	s += i + 1;
	if (*s && strcmp(s, " ago") != 0)
		return -1;
	if (v > REL_MAX_S / unit)
		return -2;
	*ret = v * unit;
	return 0;
}

/* YYYY-MM-DD[(T| )HH:MM[:SS]][Z]: Unix seconds into *ret; -1 when s is
 * not of that shape, -2 when it is but names no such time. */
static int absolute(const char *s, int64_t *ret)
{
	struct tm tm, back;
	int y, mo, d, h = 0, mi = 0, se = 0, utc = 0;
	size_t n = strlen(s);
	time_t t;

	if (n < 10 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
	    s[7] != '-' || !digits(s + 8, 2, &d))
		return -1;
	s += 10;
	if (*s == 'T' || *s == ' ') {
		if (!digits(s + 1, 2, &h) || s[3] != ':' || !digits(s + 4, 2, &mi))
			return -1;
		s += 6;
		if (*s == ':') {
			if (!digits(s + 1, 2, &se))
				return -1;
			s += 3;
		}
	}
	if (*s == 'Z') {
		utc = 1;
		s++;
	}
	if (*s)
		return -1;
	if (y < 1970 || y > 2099 || mo < 1 || mo > 12 || d < 1 || d > 31 ||
	    h > 23 || mi > 59 || se > 59)
		return -2;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	tm.tm_isdst = -1;
	back = tm;
	t = utc ? timegm(&tm) : mktime(&tm);
	/* 2026-02-30 normalises to March: no such day. */
	if (t == (time_t)-1 || tm.tm_mday != back.tm_mday || tm.tm_mon != back.tm_mon)
		return -2;
	*ret = (int64_t)t;
	return 0;
}

int ctl_time_parse(const char *s, int64_t now, int64_t *ret, char *err,
		   size_t errlen)
{
	long long ago = 0;
	int64_t t = 0;
	int rc;

	if (!s || !*s || strlen(s) > 32) {
		snprintf(err, errlen, "wants %s", want);
		return -1;
	}
	if (strcmp(s, "now") == 0) {
		*ret = now;
		return 0;
	}
	rc = relative(s, &ago);
	if (rc == 0) {
		if (ago > now) {
			snprintf(err, errlen, "'%s' is before 1970", s);
			return -1;
		}
		*ret = now - ago;
		return 0;
	}
	if (rc == -2) {
		snprintf(err, errlen, "'%s' is longer ago than 100 years", s);
		return -1;
	}
	rc = absolute(s, &t);
	if (rc == -2 || (rc == 0 && t < 0)) {
		snprintf(err, errlen, "'%s' is no such time (years 1970 to 2099)", s);
		return -1;
	}
	if (rc) {
		snprintf(err, errlen, "'%s': wants %s", s, want);
		return -1;
	}
	*ret = t;
	return 0;
}
