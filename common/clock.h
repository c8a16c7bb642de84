/* clock.h - the one place gpud, gpuworker and gpuctl read the time.
 *
 * Two clocks: wall (CLOCK_REALTIME: seconds since the epoch, for what is
 * stored or shown, and may jump when the system's time is set) and
 * monotonic (CLOCK_MONOTONIC: for durations and deadlines, never jumps).
 * Seconds as double (microsecond resolution for a century), nanoseconds as
 * int64_t where a caller formats or compares exactly.
 *
 * A module whose tests must set the time takes a struct gclock (dqlite's
 * way): the caller's functions, or the system's where it passes NULL.
 *
 * Threads: every function, from any thread; no state.
 */
#ifndef GPUD_CLOCK_H
#define GPUD_CLOCK_H

#include <stdint.h>

double gclock_wall(void);      /* seconds since 1970-01-01 UTC */
double gclock_mono(void);      /* seconds since an arbitrary start */
int64_t gclock_wall_ns(void);
int64_t gclock_mono_ns(void);

/* A clock handed to a module; borrowed, it outlives the module. A NULL
 * clock, or a NULL function in it, reads the system's. */
struct gclock {
	double (*wall)(void *opaque);
	double (*mono)(void *opaque);
	void *opaque;
};

double gclock_wall_of(const struct gclock *c);
double gclock_mono_of(const struct gclock *c);

#endif
