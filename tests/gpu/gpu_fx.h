/* gpu_fx.h - what the GPU tests (test_*_gpu.c) share: a check that counts
 * failures instead of stopping, device 0 of a workload's CUDA interface or
 * a skip, the CPU threads to compare with, a clock, and the exit status.
 *
 * Threads: the test's main thread only. */
#ifndef GPUD_GPU_FX_H
#define GPUD_GPU_FX_H

#include <stdio.h>
#include <stdlib.h>

#include "workload.h"

/* Checks that failed so far. */
extern int gpu_failures;

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: check failed: %s\n",       \
				__FILE__, __LINE__, #cond);                \
			gpu_failures++;                                    \
		}                                                          \
	} while (0)

/* The CPU threads to run the reference on: every online CPU, at least 1. */
int gpu_cpu_threads(void);

/* Seconds on the monotonic clock. */
double gpu_now(void);

/* Open device 0 of workload NAME's CUDA interface (NAME_cuda_open) into CTX
 * (a struct NAME_cuda *) and print its name beside THREADS; exit 77, meson's
 * "skipped", where there is no device or it does not open. */
#define GPU_OPEN(NAME, CTX, THREADS)                                         \
	do {                                                                 \
		char name_[WL_ERRLEN] = "";                                  \
		if (NAME##_cuda_device_count() < 1) {                        \
			printf("no CUDA device: skipped\n");                 \
			exit(77);                                            \
		}                                                            \
		if (NAME##_cuda_open(0, &(CTX), name_, sizeof(name_)) != 0) { \
			fprintf(stderr, "open: %s\n", name_);                \
			exit(77);                                            \
		}                                                            \
		NAME##_cuda_device_name((CTX), name_, sizeof(name_));        \
		printf("device: %s, cpu threads %d\n", name_, (THREADS));    \
	} while (0)

/* A whole lease of wl through its run hook: the job of args, the lease of
 * spec (both borrowed), on the CUDA context cuda (cuda_threads host
 * threads) and on threads CPU threads. CHECKs that both run, that the
 * results are the same bytes from byte skip on (before it, a header that
 * may differ: timings) and that verify accepts the CUDA one. */
void gpu_run_lease(const struct workload *wl, const json_t *args,
		   const json_t *spec, void *cuda, int cuda_threads,
		   int threads, size_t skip);

/* Print how the checks went; main's exit status (0 when none failed). */
int gpu_result(void);

#endif
