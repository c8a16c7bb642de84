/* duration.h - durations as people write them: "90s", "30m", "2h", "1d",
 * "1h30m" (gpuctl submit --time-limit, gpud's time-limit reason).
 *
 * Threads: pure functions; any thread.
 */
#ifndef GPUD_DURATION_H
#define GPUD_DURATION_H

#include <stddef.h>

/* Longest text duration_parse reads (and duration_format writes, NUL
 * included, is at most DURATION_TEXT_MAX). */
#define DURATION_TEXT_MAX 32

/* s: one or more groups of digits each followed by one unit (s, m, h or
 * d), largest first, no unit twice ("1h30m"; "90" alone is refused: a
 * unit is always said). The sum must lie in [min_s, max_s].
 * 0 and *ret_s; GERR_INVAL (nothing written) otherwise. */
int duration_parse(const char *s, double min_s, double max_s, double *ret_s);

/* seconds (rounded to whole seconds, >= 0) as duration_parse reads it,
 * largest units first ("1h30m", "45s", "0s"); buf of len bytes
 * (DURATION_TEXT_MAX suffices). Returns buf. */
char *duration_format(double seconds, char *buf, size_t len);

#endif
