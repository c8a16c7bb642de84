/* gpu_fx.c - see gpu_fx.h. */
#include <time.h>
#include <unistd.h>

#include "gpu_fx.h"

int gpu_failures;

int gpu_cpu_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : (int)n;
}

double gpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int gpu_result(void)
{
	printf("%s (%d failures)\n", gpu_failures ? "FAILED" : "PASSED",
	       gpu_failures);
	return gpu_failures ? 1 : 0;
}
