/* gpu_fx.c - see gpu_fx.h. */
#include <string.h>
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

void gpu_run_lease(const struct workload *wl, const json_t *args,
		   const json_t *spec, void *cuda, int cuda_threads,
		   int threads, size_t skip)
{
	void *ctx = workload_ctx(wl), *rg = NULL, *rc = NULL;
	struct wl_device dg = {WL_DEVICE_CUDA, 0, cuda_threads, cuda};
	struct wl_device dc = {WL_DEVICE_CPU, 0, threads, NULL};
	char err[WL_ERRLEN] = "";
	size_t lg = 0, lc = 0;
	json_t *params = NULL;
	uint64_t total;

	CHECK(wl->parse_params(ctx, args, &params, &total, err,
			       sizeof(err)) == 0);
	CHECK(wl->run(ctx, params, spec, NULL, 0, &dg, NULL, &rg, &lg, err,
		      sizeof(err)) == 0);
	CHECK(wl->run(ctx, params, spec, NULL, 0, &dc, NULL, &rc, &lc, err,
		      sizeof(err)) == 0);
	CHECK(lg == lc && lg >= skip && rg && rc &&
	      memcmp((char *)rg + skip, (char *)rc + skip, lg - skip) == 0);
	CHECK(wl->verify(ctx, params, spec, rg, lg, 9, err, sizeof(err)) == 0);
	free(rg);
	free(rc);
	json_decref(params);
}

int gpu_result(void)
{
	printf("%s (%d failures)\n", gpu_failures ? "FAILED" : "PASSED",
	       gpu_failures);
	return gpu_failures ? 1 : 0;
}
