/* test_othello_gpu.c - the Othello CUDA batch solver against the CPU
 * solvers: generated positions on the device against the same positions
 * generated and solved on the CPU (fast solver and the kernel's own code
 * compiled for the host), given positions of every empties count the GPU
 * takes, a whole lease through the workload's run (CUDA bytes == CPU
 * bytes, accepted by verify), and perft to depth 9. Exits 77 without a
 * GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gerr.h"
#include "othello/othello.h"
#include "othello/othello_cuda.h"
#include "gpu_fx.h"
#include "workload.h"

extern const struct workload othello_workload;

int main(void)
{
	struct othello_cuda *ctx = NULL;
	char err[WL_ERRLEN] = "";
	int threads = gpu_cpu_threads();
	const size_t N = 20000; /* positions per empties count */
	uint64_t *P = malloc(N * 8), *O = malloc(N * 8), nodes = 0;
	int8_t *gs = malloc(N), *cs = malloc(N);
	uint8_t *gm = malloc(N), *cm = malloc(N);

	setvbuf(stdout, NULL, _IOLBF, 0); /* a timeout keeps the lines so far */
	GPU_OPEN(othello, ctx, threads);

	/* perft, deeper than the unit suite. */
	CHECK(othello_perft(0x0000000810000000ull, 0x0000001008000000ull, 8) ==
	      390216);
	CHECK(othello_perft(0x0000000810000000ull, 0x0000001008000000ull, 9) ==
	      3005288);
	printf("perft 8, 9: %s\n", gpu_failures ? "FAIL" : "ok");

	/* Generated on the device vs generated and solved on the CPU. */
	for (int e = 1; e <= OTHELLO_CUDA_MAX_EMPTIES; e++) {
		size_t n = e <= 12 ? N : e == 13 ? 4000 : 2000;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		uint64_t seed = 1000 + (uint64_t)e, begin = (uint64_t)e * 777777;
		CHECK(othello_cuda_solve_random(ctx, seed, e, begin, n, gs, gm,
						&nodes, NULL, err,
						sizeof(err)) == 0);
		for (size_t i = 0; i < n; i++) {
			int black;
			oth_generate(seed, begin + i, e, &P[i], &O[i], &black);
		}
		CHECK(othello_solve_batch(P, O, n, threads, cs, cm, NULL, NULL,
					  NULL) == 0);
		size_t bad = 0;
		for (size_t i = 0; i < n; i++)
			if (gs[i] != cs[i] || gm[i] != cm[i]) {
				if (bad++ < 3)
					fprintf(stderr, "e=%d i=%zu: gpu %+d %u, "
						"cpu %+d %u\n", e, i, gs[i],
						gm[i], cs[i], cm[i]);
			}
		CHECK(bad == 0);
		/* The kernel's search on the host, on a few (every one up to
		 * 6 empties, where the node counts must add up to the
		 * kernel's: the same tree). */
		uint64_t hnodes = 0;
		for (size_t i = 0; i < n; i += e <= 6 ? 1 : 97) {
			int mv;
			uint64_t k;
			int v = othello_solve_shallow(P[i], O[i], &mv, &k);
			CHECK(v == gs[i] && mv == gm[i]);
			hnodes += k;
		}
		CHECK(e > 6 || hnodes == nodes);
		/* Given positions: the same answers. */
		CHECK(othello_cuda_solve(ctx, P, O, n, cs, cm, NULL, NULL, err,
					 sizeof(err)) == 0);
		CHECK(memcmp(cs, gs, n) == 0 && memcmp(cm, gm, n) == 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		/* the seconds say where a device call's time limit goes */
		printf("empties %2d: %zu positions, %s (%.1f s)\n", e, n,
		       bad ? "FAIL" : "ok",
		       (double)(t1.tv_sec - t0.tv_sec) +
			       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	}

	/* A whole lease through the workload: CUDA bytes == CPU bytes. */
	{
		json_t *args = json_pack("{s:s, s:s, s:s}", "random", "100000",
					 "empties", "11", "seed", "5");
		json_t *spec = json_pack("{s:I, s:I}", "begin", (json_int_t)333,
					 "count", (json_int_t)50000);
		/* Scores and moves equal; the header's nodes and time differ. */
		gpu_run_lease(&othello_workload, args, spec, ctx, threads,
			      threads, OTHELLO_RES_HDR);
		json_decref(spec);
		json_decref(args);
	}
	printf("workload run: %s\n", gpu_failures ? "FAIL" : "ok");
	othello_cuda_close(ctx);
	free(P); free(O); free(gs); free(cs); free(gm); free(cm);
	return gpu_result();
}
