/* test_sudoku_gpu.c - the Sudoku 4x3 kernel against the CPU path, bit for
 * bit, on gangsters of two GangSets (a c2 group boundary included), the 4x3
 * band-count invariants, and one lease through the workload's run on CUDA,
 * then verify (which recounts 128 random (gangster, piece) units on the
 * CPU); the kernel's pieces of W against the CPU's. Exits 77 without a
 * GPU. Prints the setup time (all cores) and the kernel time for W alone
 * and with its pieces (they should be within about 1%). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gerr.h"
#include "sudoku/sudoku.h"
#include "sudoku/sudoku_cuda.h"
#include "sudoku/sudoku_format.h"
#include "sudoku/sudoku_wide.h"
#include "gpu_fx.h"
#include "workload.h"

extern const struct workload sudoku_workload;

static void compare(struct sudoku_cuda *ctx, const struct sudoku_setup *S,
		    uint32_t from, uint32_t to, int threads)
{
	uint64_t(*g)[2] = calloc(to - from, 16), (*c)[2] = calloc(to - from, 16);
	char err[WL_ERRLEN] = "";
	float ms = 0, msp = 0;
	double t0 = gpu_now(), t1, t2;
	int rc = sudoku_cuda_w(ctx, S, from, to, g, &ms, err, sizeof(err));

	if (rc)
		fprintf(stderr, "cuda: %s\n", err);
	CHECK(rc == 0);
	t1 = gpu_now();
	CHECK(sudoku_w_cpu(S, NULL, 0, from, to, threads, c) == 0);
	printf("gangsters [%u, %u): gpu %.1f ms (%.1f ms wall), cpu %.1f s on %d threads\n",
	       from, to, ms, (t1 - t0) * 1e3, gpu_now() - t1, threads);
	for (uint32_t i = 0; i < to - from; i++) {
		if (g[i][0] != c[i][0] || g[i][1] != c[i][1])
			fprintf(stderr, "gangster %u: gpu (%llu, %llu) cpu (%llu, %llu)\n",
				from + i, (unsigned long long)g[i][1],
				(unsigned long long)g[i][0],
				(unsigned long long)c[i][1],
				(unsigned long long)c[i][0]);
		CHECK(g[i][0] == c[i][0] && g[i][1] == c[i][1]);
		CHECK(g[i][0] % 2 == 0 && (g[i][0] | g[i][1]) != 0);
	}
	printf("  W(%u) = %llu (+ %llu * 2^64)\n", from,
	       (unsigned long long)c[0][0], (unsigned long long)c[0][1]);
	/* W's pieces (what results commit to): the same single launch, so
	 * about the same time as W alone */
	{
		size_t np = (size_t)(to - from) * SUDOKU_PIECES;
		uint64_t(*gp)[2] = calloc(np, 16), (*cp)[2] = calloc(np, 16);
		CHECK(gp && cp);
		t2 = gpu_now();
		rc = sudoku_cuda_w_pieces(ctx, S, from, to, SUDOKU_PIECES, gp, g,
					  &msp, err, sizeof(err));
		t2 = gpu_now() - t2;
		if (rc)
			fprintf(stderr, "cuda pieces: %s\n", err);
		CHECK(rc == 0);
		CHECK(sudoku_w_pieces_cpu(S, NULL, 0, from, to, SUDOKU_PIECES, 0,
					  SUDOKU_PIECES, threads, cp) == 0);
		printf("  %u pieces a gangster: gpu %.1f ms (%.1f ms wall) against "
		       "%.1f ms for 1 piece (%+.1f%%)\n", SUDOKU_PIECES, msp,
		       t2 * 1e3, ms, ms > 0 ? (msp / ms - 1) * 100 : 0.0);
		CHECK(memcmp(gp, cp, np * 16) == 0);
		for (uint32_t i = 0; i < to - from; i++)
			CHECK(g[i][0] == c[i][0] && g[i][1] == c[i][1]);
		free(gp);
		free(cp);
	}
	free(g);
	free(c);
}

int main(void)
{
	struct sudoku_cuda *ctx = NULL;
	const struct sudoku_setup *S = NULL;
	char err[WL_ERRLEN] = "";
	int threads = gpu_cpu_threads();
	double t0;

	GPU_OPEN(sudoku, ctx, threads);
	t0 = gpu_now();
	/* the workload's context, so the lease below uses the same setup */
	if (workload_open_all(err, sizeof(err)) != 0 ||
	    sudoku_ctx_setup(workload_ctx(&sudoku_workload), 4, 3,
			     SUDOKU_BUILD_T, threads, &S, err, sizeof(err)) != 0) {
		fprintf(stderr, "setup: %s\n", err);
		return 1;
	}
	printf("setup (gangsters, band counts, T) %.1f s on %d threads\n",
	       gpu_now() - t0, threads);
	{
		struct u256 cs = u256_of(0, 0), mc = u256_of(0, 0);
		char b1[U256_DECLEN], b2[U256_DECLEN];
		for (uint32_t g = 0; g < S->ngang; g++) {
			struct u256 c = u256_of(S->cnt[g], 0), m = u256_of(S->members[g], 0);
			u256_add(&cs, &c);
			u256_mul_u64(&m, S->cnt[g]);
			u256_add(&mc, &m);
		}
		u256_to_dec(&cs, b1);
		u256_to_dec(&mc, b2);
		printf("sum of band counts %s, of members x band count %s, max %u\n",
		       b1, b2, S->max_cnt);
		CHECK(strcmp(b1, "9977652472") == 0);
		CHECK(strcmp(b2, "12657519098855424") == 0);
		CHECK(S->max_cnt < (1u << 28));
	}
	{
		/* warm-up: uploads T and loads the kernel, so the timings below
		 * compare launches alone */
		uint64_t w1[1][2];
		t0 = gpu_now();
		CHECK(sudoku_cuda_w(ctx, S, S->set_start[8], S->set_start[8] + 1, w1,
				    NULL, err, sizeof(err)) == 0);
		printf("upload of T and set tables + 1 gangster: %.2f s\n", gpu_now() - t0);
	}
	compare(ctx, S, S->set_start[8], S->set_start[8] + 4, threads);
	{
		/* a stretch of set 3 across a c2 group boundary */
		uint32_t a = S->set_start[3] + 100, b;
		while (S->gang_tuple[(size_t)a * 3 + 1] == S->gang_tuple[(size_t)(a + 1) * 3 + 1])
			a++;
		a = a > 3 ? a - 3 : a;
		b = a + 8;
		compare(ctx, S, a, b, threads);
	}
	/* one lease through the workload on CUDA, then verify */
	{
		const struct workload *W = &sudoku_workload;
		json_t *args = json_pack("{s:s}", "box", "3x4"), *p = NULL,
		       *spec = NULL, *cur = NULL;
		uint64_t units;
		int last;
		struct wl_run_io io = WL_RUN_IO_QUIET(NULL, NULL);
		struct wl_device dev = { WL_DEVICE_CUDA, 0, threads, ctx };
		void *res = NULL;
		size_t len = 0;
		CHECK(W->parse_params(workload_ctx(W), args, &p, &units, err, sizeof(err)) == 0);
		CHECK(W->carve(workload_ctx(W), p, NULL, NULL, NULL, 24, &spec, &units, &cur, &last) == 0);
		t0 = gpu_now();
		int rc = W->run(workload_ctx(W), p, spec, NULL, 0, &dev, &io, &res, &len, err, sizeof(err));
		if (rc)
			fprintf(stderr, "run: %s\n", err);
		CHECK(rc == 0);
		printf("workload lease of %llu gangsters on CUDA: %.2f s\n",
		       (unsigned long long)units, gpu_now() - t0);
		t0 = gpu_now();
		rc = W->verify(workload_ctx(W), p, spec, res, len, 12345, err, sizeof(err));
		if (rc)
			fprintf(stderr, "verify: %s\n", err);
		CHECK(rc == 0);
		printf("verify (%u units recounted on CPU): %.2f s\n", SUDOKU_PIECES, gpu_now() - t0);
		free(res);
		json_decref(args);
		json_decref(p);
		json_decref(spec);
		json_decref(cur);
	}
	sudoku_cuda_close(ctx);
	workload_close_all();
	return gpu_result();
}
