/* bench_sudoku.c - time the Sudoku 4x3 setup and kernel.
 *
 * usage: bench_sudoku [-s set] [-o offset] [-n gangsters] [-r runs]
 *                     [-t threads] [-c cpu_gangsters]
 *
 * Setup: the gangster enumeration alone, then the full setup (enumeration,
 * 144,578 band counts, T) on `threads` threads. GPU: W of gangsters
 * [set_start + offset, + n) with kernel time by CUDA events (and the
 * call's wall time), after one warm-up call that also uploads T and the
 * set's outer pairs; each run times W alone (1 piece) and then W with its
 * SUDOKU_PIECES pieces (what the workload runs); the medians of the runs,
 * and the pieces' W must equal W alone (exit 1 when not). Rate:
 * multiply-adds = n x 59,858 x 346 x 346 (the half sum the kernel does).
 * CPU: the pieces of cpu_gangsters gangsters (default 1), compared with the
 * GPU's pieces and W (exit 1 when they differ).
 * Default range: set 1, offsets 242..482 (240 gangsters). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "gerr.h"
#include "sudoku/sudoku.h"
#include "sudoku/sudoku_cuda.h"
#include "sudoku/sudoku_format.h"
#include "workload.h"

int main(int argc, char **argv)
{
	uint32_t set = 1, off = 242, n = 240, cpu_n = 1;
	int gpu_done = 0, ex = 0;
	int runs = 3, threads = (int)sysconf(_SC_NPROCESSORS_ONLN), opt;
	char err[WL_ERRLEN] = "", name[160] = "cpu";
	struct sudoku_setup *E = NULL;
	struct sudoku_setup *S = NULL;
	struct sudoku_cuda *ctx = NULL;
	double t0, te, tf, mads;

	while ((opt = getopt(argc, argv, "s:o:n:r:t:c:")) != -1) {
		switch (opt) {
		case 's': set = (uint32_t)atoi(optarg); break;
		case 'o': off = (uint32_t)atoi(optarg); break;
		case 'n': n = (uint32_t)atoi(optarg); break;
		case 'r': runs = atoi(optarg); break;
		case 't': threads = atoi(optarg); break;
		case 'c': cpu_n = (uint32_t)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-s set] [-o offset] [-n gangsters] "
				"[-r runs] [-t threads] [-c cpu_gangsters]\n", argv[0]);
			return 2;
		}
	}
	if (threads < 1)
		threads = 1;
	if (runs < 1 || runs > 64)
		runs = 3;
	t0 = gclock_mono();
	if (sudoku_setup_build(4, 3, 0, threads, &E, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	te = gclock_mono() - t0;
	sudoku_setup_free(E);
	t0 = gclock_mono();
	if (sudoku_setup_build(4, 3, SUDOKU_BUILD_T, threads, &S, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	tf = gclock_mono() - t0;
	printf("setup on %d threads: enumeration %.2f s (144,578 gangsters), "
	       "full (enumeration, band counts, T %.2f GB) %.2f s\n", threads, te,
	       S->Tlen * 4e-9, tf);
	if (set >= S->nnodes || S->set_start[set] + off >= S->set_start[set + 1]) {
		fprintf(stderr, "no such range\n");
		return 2;
	}
	uint32_t from = S->set_start[set] + off, to = from + n;
	if (to > S->set_start[set + 1])
		to = S->set_start[set + 1];
	n = to - from;
	{
		struct sudoku_outer *o;
		uint32_t no;
		t0 = gclock_mono();
		sudoku_outer_build(S, set, &o, &no);
		printf("per-set table (outer pairs of set %u): %u pairs, %.3f s\n",
		       set, no, gclock_mono() - t0);
		free(o);
		mads = (double)n * no * S->ncompat * S->ncompat;
	}
	const uint32_t P = SUDOKU_PIECES;
	uint64_t(*w)[2] = calloc(n, 16), (*wp)[2] = calloc(n, 16),
		(*pc)[2] = calloc((size_t)n * P, 16);
	if (!w || !wp || !pc) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	if (sudoku_cuda_device_count() > 0 &&
	    sudoku_cuda_open(0, &ctx, err, sizeof(err)) == 0) {
		float ms[64], msp[64], wall[64], wallp[64];
		sudoku_cuda_device_name(ctx, name, sizeof(name));
		t0 = gclock_mono();
		if (sudoku_cuda_w(ctx, S, from, from + 1, w, NULL, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		printf("device %s: upload of T and set tables + 1 gangster %.2f s\n",
		       name, gclock_mono() - t0);
		for (int r = 0; r < runs; r++) {
			t0 = gclock_mono();
			if (sudoku_cuda_w(ctx, S, from, to, w, &ms[r], err, sizeof(err))) {
				fprintf(stderr, "%s\n", err);
				return 1;
			}
			wall[r] = (float)((gclock_mono() - t0) * 1e3);
			t0 = gclock_mono();
			if (sudoku_cuda_w_pieces(ctx, S, from, to, P, pc, wp, &msp[r],
						 err, sizeof(err))) {
				fprintf(stderr, "%s\n", err);
				return 1;
			}
			wallp[r] = (float)((gclock_mono() - t0) * 1e3);
			printf("  run %d: 1 piece %.1f ms (%.1f wall), %u pieces %.1f ms "
			       "(%.1f wall)\n", r, ms[r], wall[r], P, msp[r], wallp[r]);
		}
		qsort(ms, (size_t)runs, sizeof(float), bench_cmp_float);
		qsort(msp, (size_t)runs, sizeof(float), bench_cmp_float);
		qsort(wall, (size_t)runs, sizeof(float), bench_cmp_float);
		qsort(wallp, (size_t)runs, sizeof(float), bench_cmp_float);
		float med = ms[runs / 2], medp = msp[runs / 2];
		printf("GPU gangsters [%u, %u) (set %u, offsets %u..%u): %.2f ms per "
		       "gangster (median of %d), %.3e multiply-adds/s\n", from, to, set,
		       off, off + n, med / n, runs, mads / (med * 1e-3));
		printf("GPU with %u pieces (the workload's path): %.2f ms per gangster "
		       "(%+.1f%% against 1 piece); wall %.2f against %.2f ms per "
		       "gangster\n", P, medp / n, (medp / med - 1) * 100,
		       wallp[runs / 2] / n, wall[runs / 2] / n);
		if (memcmp(w, wp, (size_t)n * 16) != 0) {
			printf("GPU W with and without pieces: DIFFERENT\n");
			ex = 1;
		}
		sudoku_cuda_close(ctx);
		gpu_done = 1;
	} else {
		printf("no CUDA device\n");
	}
	if (cpu_n) {
		if (cpu_n > n)
			cpu_n = n;
		uint64_t(*wc)[2] = calloc(cpu_n, 16),
			(*pcc)[2] = calloc((size_t)cpu_n * P, 16);
		if (!wc || !pcc) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		t0 = gclock_mono();
		if (sudoku_w_pieces_cpu(S, NULL, 0, from, from + cpu_n, P, 0, P,
					threads, pcc)) {
			fprintf(stderr, "cpu count failed\n");
			return 1;
		}
		double t = gclock_mono() - t0;
		for (uint32_t i = 0; i < cpu_n; i++)
			for (uint32_t j = 0; j < P; j++) {
				const uint64_t *x = pcc[(size_t)i * P + j];
				wc[i][0] += x[0];
				wc[i][1] += x[1] + (wc[i][0] < x[0]);
			}
		printf("CPU %u gangster(s) (%u pieces each) on %d threads: %.2f s per "
		       "gangster, %.3e multiply-adds/s\n", cpu_n, P, threads,
		       t / cpu_n, mads / n * cpu_n / t);
		if (gpu_done) {
			int same = memcmp(w, wc, (size_t)cpu_n * 16) == 0 &&
				   memcmp(pc, pcc, (size_t)cpu_n * P * 16) == 0;
			printf("CPU and GPU W and pieces of these gangsters: %s\n",
			       same ? "identical" : "DIFFERENT");
			if (!same)
				ex = 1;
		}
		free(pcc);
		free(wc);
	}
	free(pc);
	free(wp);
	free(w);
	sudoku_setup_free(S);
	return ex;
}
