/* ctl_human.h - numbers, durations and times as gpuctl prints them for
 * people: three significant digits with an SI prefix ("1.00 G", "54.9 M"),
 * durations as "45s", "12m05s", "3h07m", "2d04h", a progress bar, and a
 * line cut to a terminal's width on a character boundary.
 *
 * Every function writes into the caller's buffer and returns it; NaN or a
 * negative value where none makes sense prints as "-". Any thread; keeps
 * nothing.
 */
#ifndef GPUD_CTL_HUMAN_H
#define GPUD_CTL_HUMAN_H

#include <stddef.h>

/* A count: "950", "1.00 k", "54.9 M", "1.00 G" (to exa). */
char *human_count(double v, char *out, size_t n);
/* A count with its unit: "1.00 G battles", "950 values". */
char *human_units(double v, const char *unit, char *out, size_t n);
/* A rate per second: "54.9 M/s", "0/s". */
char *human_rate(double per_s, char *out, size_t n);
/* A duration in seconds: "0s", "45s", "12m05s", "3h07m", "2d04h". */
char *human_duration(double s, char *out, size_t n);
/* A Unix time: "HH:MM:SS" when it is today (local time), else
 * "YYYY-MM-DD HH:MM"; "-" for 0, negative or NaN. now is the current time. */
char *human_time(double t, double now, char *out, size_t n);
/* "[#####.....]" with width cells, frac clamped to 0..1; out holds at
 * least width + 3 bytes. */
char *human_bar(double frac, int width, char *out);
/* The bytes of s that fit in cols terminal columns: counts UTF-8
 * characters as one column each and never splits one. */
size_t human_fit(const char *s, size_t cols);

#endif
