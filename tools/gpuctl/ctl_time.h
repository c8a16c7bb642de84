/* ctl_time.h - the times gpuctl history and events take (--since,
 * --until), as Unix seconds for gpud's request:
 *
 *   2026-11-29            that day's start, local time
 *   2026-11-29T13:00      (or with a space, or :SS) local time
 *   2026-11-29T13:00Z     the same in UTC (a trailing Z)
 *   90s 30m 2h 3d 1w      that long ago (an optional " ago" after it)
 *   now
 *
 * Dates run from 1970 to 2099; a relative time is at most 36500 days.
 * Anything else is refused with a message saying what was wanted.
 *
 * Pure functions (the time zone is the process's); keep nothing.
 */
#ifndef GPUD_CTL_TIME_H
#define GPUD_CTL_TIME_H

#include <stddef.h>
#include <stdint.h>

/* s as Unix seconds into *ret, relative to now (Unix seconds). 0, or -1
 * with the reason in err (one line, without the option's name). */
int ctl_time_parse(const char *s, int64_t now, int64_t *ret, char *err,
		   size_t errlen);

#endif
