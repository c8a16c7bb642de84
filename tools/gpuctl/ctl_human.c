/* ctl_human.c - numbers for people (ctl_human.h). */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "ctl_human.h"

char *human_count(double v, char *out, size_t n)
{
	static const char prefix[] = "kMGTPE";
	int p = -1;

	if (!(v >= 0) || isinf(v)) {
		snprintf(out, n, "-");
		return out;
	}
	/* 999.6 is "1.00 k", never "1000". */
	while (p < 5 && v >= 999.5) {
		v /= 1000;
		p++;
	}
	if (p < 0)
		snprintf(out, n, "%.0f", v);
	else
		snprintf(out, n, "%.*f %c", v < 9.995 ? 2 : v < 99.95 ? 1 : 0, v,
			 prefix[p]);
	return out;
}

char *human_units(double v, const char *unit, char *out, size_t n)
{
	char c[32];

	snprintf(out, n, "%s %s", human_count(v, c, sizeof(c)), unit ? unit : "units");
	return out;
}

char *human_rate(double per_s, char *out, size_t n)
{
	char c[32];

	if (!(per_s >= 0))
		snprintf(out, n, "-");
	else if (per_s > 0 && per_s < 9.995) /* a slow job: 0.42/s, not 0/s */
		snprintf(out, n, "%.2f/s", per_s);
	else
		snprintf(out, n, "%s/s", human_count(per_s, c, sizeof(c)));
	return out;
}

char *human_duration(double s, char *out, size_t n)
{
	long long t;

	if (!(s >= 0) || s > 1e11) {
		snprintf(out, n, "-");
		return out;
	}
	t = llround(s);
	if (t < 60)
		snprintf(out, n, "%llds", t);
	else if (t < 3600)
		snprintf(out, n, "%lldm%02llds", t / 60, t % 60);
	else if (t < 86400)
		snprintf(out, n, "%lldh%02lldm", t / 3600, t / 60 % 60);
	else
		snprintf(out, n, "%lldd%02lldh", t / 86400, t / 3600 % 24);
	return out;
}

char *human_time(double t, double now, char *out, size_t n)
{
	time_t when = (time_t)t, today = (time_t)now;
	struct tm a, b;

	if (!(t > 0) || !localtime_r(&when, &a) || !localtime_r(&today, &b)) {
		snprintf(out, n, "-");
		return out;
	}
	if (a.tm_year == b.tm_year && a.tm_yday == b.tm_yday)
		strftime(out, n, "%H:%M:%S", &a);
	else
		strftime(out, n, "%Y-%m-%d %H:%M", &a);
	return out;
}

char *human_bar(double frac, int width, char *out)
{
	int full = frac > 0 ? (int)(frac * width + 0.5) : 0;

	if (full > width)
		full = width;
	out[0] = '[';
	for (int i = 0; i < width; i++)
		out[1 + i] = i < full ? '#' : '.';
	out[1 + width] = ']';
	out[2 + width] = '\0';
	return out;
}

size_t human_fit(const char *s, size_t cols)
{
	size_t i = 0, used = 0;

	while (s[i]) {
		size_t next = i + 1;
		while (((unsigned char)s[next] & 0xc0) == 0x80)
			next++;
		if (used == cols)
			break;
		used++;
		i = next;
	}
	return i;
}
