/* test_graveler_gpu.c - the Graveler CUDA kernel against the CPU path, bit
 * for bit (histogram, max/first and every segment record): random seeds
 * and ranges (unaligned too, segments spanning steps), steps of random
 * sizes, resume from a checkpoint across devices, a whole lease through the
 * workload's run, and a largest lease's records against single-threaded
 * recomputation. Exits 77 without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "mix.h"
#include "graveler/graveler.h"
#include "graveler/graveler_cuda.h"
#include "gpu_fx.h"
#include "workload.h"

extern const struct workload graveler_workload;

static uint64_t rs = 0x1234567;
static uint64_t rnd(void)
{
	rs += MIX_GOLDEN;
	return mix64(rs);
}

static int same(const struct graveler_acc *a, const struct graveler_acc *b)
{
	return a->next == b->next && a->max == b->max && a->first == b->first &&
	       memcmp(a->hist, b->hist, sizeof(a->hist)) == 0 &&
	       a->nseg == b->nseg &&
	       memcmp(a->seg_max, b->seg_max, a->nseg) == 0 &&
	       memcmp(a->seg_sum, b->seg_sum,
		      a->nseg * sizeof(a->seg_sum[0])) == 0 &&
	       memcmp(a->seg_sk, b->seg_sk,
		      a->nseg * sizeof(a->seg_sk[0])) == 0;
}

int main(void)
{
	struct graveler_cuda *ctx = NULL;
	char err[WL_ERRLEN] = "";
	int threads = gpu_cpu_threads();
	struct graveler_acc *g = malloc(sizeof(*g)), *c = malloc(sizeof(*c));

	GPU_OPEN(graveler, ctx, threads);

	/* Random ranges, steps of random sizes. */
	for (int r = 0; r < 40; r++) {
		uint64_t seed = r < 3 ? (uint64_t)r : rnd();
		uint64_t len = r < 10 ? 1 + rnd() % 5000
				      : 1 + rnd() % (r < 36 ? (1u << 22) : (1u << 26));
		uint64_t begin = rnd() % (GRAVELER_MAX_BATTLES - len);
		if (r % 4 == 0)
			begin -= begin % GRAVELER_CHUNK;
		if (r == 7)
			begin = GRAVELER_MAX_BATTLES - len;
		graveler_acc_init(c, seed, begin, begin + len);
		CHECK(graveler_cpu_step(c, c->end, threads) == 0);
		graveler_acc_init(g, seed, begin, begin + len);
		while (g->next < g->end) {
			uint64_t want = r % 2 ? len : 1 + rnd() % (len / 3 + 1);
			uint64_t to = graveler_step_end(g, want);
			int rc = graveler_cuda_step(ctx, g, to, NULL, err,
						    sizeof(err));
			if (rc) {
				fprintf(stderr, "step: %s\n", err);
				return 1;
			}
		}
		if (!same(g, c)) {
			fprintf(stderr, "mismatch r=%d seed=%llu [%llu,+%llu): "
				"gpu max %u first %llu, cpu max %u first %llu\n",
				r, (unsigned long long)seed,
				(unsigned long long)begin,
				(unsigned long long)len, g->max,
				(unsigned long long)g->first, c->max,
				(unsigned long long)c->first);
			gpu_failures++;
		}
	}
	printf("random ranges: %s\n", gpu_failures ? "FAIL" : "ok");

	/* Resume: GPU half, checkpoint bytes, CPU rest == all GPU. */
	for (int r = 0; r < 4; r++) {
		uint64_t seed = rnd(), begin = rnd() % 1000000000000ull;
		uint64_t len = (1u << 24) + rnd() % 100000;
		struct graveler_acc *m = malloc(sizeof(*m));
		void *ck;
		size_t cl;
		graveler_acc_init(g, seed, begin, begin + len);
		CHECK(graveler_cuda_step(ctx, g, graveler_step_end(g, len / 2),
					 NULL, err, sizeof(err)) == 0);
		CHECK(graveler_ckpt_encode(g, &ck, &cl) == 0);
		CHECK(graveler_ckpt_decode(ck, cl, m, err, sizeof(err)) == 0);
		free(ck);
		if (r % 2)
			CHECK(graveler_cpu_step(m, m->end, threads) == 0);
		else
			CHECK(graveler_cuda_step(ctx, m, m->end, NULL, err,
						 sizeof(err)) == 0);
		graveler_acc_init(c, seed, begin, begin + len);
		CHECK(graveler_cpu_step(c, c->end, threads) == 0);
		CHECK(same(m, c));
		free(m);
	}
	printf("resume: %s\n", gpu_failures ? "FAIL" : "ok");

	/* The head of a cut lease (graveler.h, "Frames"): its segments are
	 * those of the lease it was cut from, several chunks each past 2^28
	 * battles; GPU steps == CPU. */
	for (int r = 0; r < 4; r++) {
		uint64_t seed = rnd(), begin = rnd() % 1000000000000ull;
		uint64_t frame, end;
		begin -= begin % GRAVELER_CHUNK;
		frame = begin + (1ull << 30) + (uint64_t)r * 4096;
		end = begin + (1ull << 24) + (uint64_t)r * GRAVELER_CHUNK * 3;
		graveler_acc_init_framed(c, seed, begin, end, frame);
		CHECK(graveler_cpu_step(c, c->end, threads) == 0);
		graveler_acc_init_framed(g, seed, begin, end, frame);
		while (g->next < g->end)
			CHECK(graveler_cuda_step(ctx, g, graveler_step_end(g,
				1 + rnd() % (1u << 23)), NULL, err,
				sizeof(err)) == 0);
		CHECK(same(g, c));
	}
	{
		json_t *args = json_pack("{s:s, s:s}", "battles", "3e9", "seed",
					 "43");
		json_t *spec = json_pack("{s:I, s:I, s:I}", "begin",
					 (json_int_t)0, "end",
					 (json_int_t)(1ull << 25), "frame",
					 (json_int_t)(3ull << 29));
		gpu_run_lease(&graveler_workload, args, spec, ctx, 1, threads, 0);
		json_decref(spec);
		json_decref(args);
	}
	printf("cut leases: %s\n", gpu_failures ? "FAIL" : "ok");

	/* A whole lease through the workload: CUDA bytes == CPU bytes, and
	 * the coordinator's verify accepts them. */
	{
		json_t *args = json_pack("{s:s, s:s}", "battles", "3e9", "seed",
					 "42");
		json_t *spec = json_pack("{s:I, s:I}", "begin", (json_int_t)5000,
					 "end",
					 (json_int_t)(5000 + (1ull << 26) + 77));
		gpu_run_lease(&graveler_workload, args, spec, ctx, 1, threads, 0);
		json_decref(spec);
		json_decref(args);
	}
	printf("workload run: %s\n", gpu_failures ? "FAIL" : "ok");

	/* A largest lease (GRAVELER_MAX_LEASE, 2^20 segments of 2^20
	 * battles; a few seconds) on the GPU alone: sampled segments
	 * recomputed on one CPU thread, and the encoded result decodes (every
	 * invariant). */
	{
		uint64_t begin = 3 * GRAVELER_MAX_LEASE;
		graveler_acc_init(g, 5, begin, begin + GRAVELER_MAX_LEASE);
		while (g->next < g->end) {
			uint64_t to = graveler_step_end(g, 1ull << 31);
			if (graveler_cuda_step(ctx, g, to, NULL, err,
					       sizeof(err)) != 0) {
				fprintf(stderr, "step: %s\n", err);
				return 1;
			}
		}
		for (int t = 0; t < 12; t++) {
			uint32_t k = t == 0 ? 0 : (uint32_t)(rnd() % g->nseg);
			struct graveler_rec r;
			graveler_segment_eval(5, g->begin, g->end, k, &r);
			CHECK(r.max == g->seg_max[k] && r.sum == g->seg_sum[k] &&
			      r.sketch == g->seg_sk[k]);
		}
		void *buf;
		size_t len;
		CHECK(graveler_result_encode(g, &buf, &len) == 0);
		CHECK(graveler_result_decode(buf, len, c, err, sizeof(err)) ==
		      0);
		free(buf);
	}
	printf("largest lease: %s\n", gpu_failures ? "FAIL" : "ok");

	graveler_cuda_close(ctx);
	free(g);
	free(c);
	return gpu_result();
}
