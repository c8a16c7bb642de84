/* clock.c - wall and monotonic time (clock.h). */
#include "clock.h"

#include <time.h>

static int64_t read_ns(clockid_t id)
{
	struct timespec ts;

	/* Cannot fail for these two clocks on Linux. */
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double read_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t gclock_wall_ns(void)
{
	return read_ns(CLOCK_REALTIME);
}

int64_t gclock_mono_ns(void)
{
	return read_ns(CLOCK_MONOTONIC);
}

double gclock_wall(void)
{
	return read_s(CLOCK_REALTIME);
}

double gclock_mono(void)
{
	return read_s(CLOCK_MONOTONIC);
}

double gclock_wall_of(const struct gclock *c)
{
	return c && c->wall ? c->wall(c->opaque) : gclock_wall();
}

double gclock_mono_of(const struct gclock *c)
{
	return c && c->mono ? c->mono(c->opaque) : gclock_mono();
}
