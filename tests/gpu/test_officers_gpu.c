/* test_officers_gpu.c - the Officers CUDA kernels against the CPU path, bit
 * for bit: the candidate kernel alone, the exact kernel alone (and that it
 * flags a wrong candidate), the whole GPU extension from scratch, and a
 * lease through the workload's run. Exits 77 without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "officers/officers.h"
#include "officers/officers_cuda.h"
#include "gpu_fx.h"
#include "workload.h"

extern const struct workload officers_workload;

#define N1 (3u << 20)

int main(void)
{
	struct officers_cuda *ctx = NULL;
	char err[WL_ERRLEN] = "";
	int threads = gpu_cpu_threads();
	struct officers_seq *cpu = calloc(1, sizeof(*cpu));
	struct officers_seq *g = calloc(1, sizeof(*g));
	struct officers_cuda_times t;

	GPU_OPEN(officers, ctx, threads);

	/* The CPU reference sequence. */
	CHECK(officers_seq_init(cpu, N1) == 0);
	CHECK(officers_cpu_extend(cpu, N1, threads, NULL, 0, err,
				  sizeof(err)) == 0);
	CHECK(cpu->st.fnv != 0);

	/* Candidate kernel alone, from several starts. */
	uint64_t starts[] = {65536, 100003, 1u << 20, (1u << 20) + 12345};
	for (int k = 0; k < 4; k++) {
		uint64_t n0 = starts[k], len = k == 3 ? 1000000 : 777777;
		uint16_t *gout = malloc(len * 2), *cout = malloc(len * 2);
		memset(g, 0, sizeof(*g));
		CHECK(officers_seq_init(g, n0 + len) == 0);
		CHECK(officers_seq_append(g, cpu->vals, n0) == 0);
		officers_cpu_candidates(g, len, cout);
		CHECK(memcmp(cout, cpu->vals + n0, len * 2) == 0);
		/* the candidate kernel, bit for bit */
		memset(&t, 0, sizeof(t));
		memset(gout, 0xee, len * 2);
		int rc = officers_cuda_candidates(ctx, g, len, gout, &t, err,
						  sizeof(err));
		if (rc)
			fprintf(stderr, "candidates: %s\n", err);
		CHECK(rc == 0);
		CHECK(memcmp(gout, cout, len * 2) == 0);
		for (uint64_t i = 0; i < len; i++)
			if (gout[i] != cout[i]) {
				fprintf(stderr, "candidates: first difference "
					"at %llu: gpu %u cpu %u\n",
					(unsigned long long)(n0 + i), gout[i],
					cout[i]);
				break;
			}
		printf("candidate kernel from %llu: %llu values, %llu rounds, "
		       "%.2f ms, %.1f M values/s\n", (unsigned long long)n0,
		       (unsigned long long)len, (unsigned long long)t.rounds,
		       t.cand_ms, len / t.cand_ms / 1e3);
		/* Exact kernel alone on those candidates. */
		uint8_t *st = malloc(len);
		memset(&t, 0, sizeof(t));
		rc = officers_cuda_exact(ctx, g, len, st, &t, err, sizeof(err));
		CHECK(rc == 0);
		uint64_t flagged = 0;
		for (uint64_t i = 0; i < len; i++)
			flagged += st[i] != 0;
		CHECK(flagged == 0);
		printf("exact: %.2f ms, %.1f M values/s, %llu flagged\n",
		       t.exact_ms, len / t.exact_ms / 1e3,
		       (unsigned long long)flagged);
		/* A wrong candidate is flagged (2), its neighbours not. */
		g->vals[n0 + 1000 - g->base] ^= 2;
		rc = officers_cuda_exact(ctx, g, 2000, st, NULL, err,
					 sizeof(err));
		CHECK(rc == 0 && st[1000] == 2 && st[999] == 0);
		free(st);
		free(gout);
		free(cout);
		officers_seq_free(g);
	}

	/* The whole GPU extension from scratch: one chunk (the default), then
	 * chunks of 2^20, so the two-buffer pipeline runs, then in two calls
	 * (the second adopts the chunk the first launched past its end) with
	 * a stranger's call between them whose n matches (dropped). */
	int rc = 0;
	for (int m = 0; m < 3; m++) {
		unsigned chunk = m ? 1u << 20 : 0;
		CHECK(officers_cuda_set_chunk(ctx, chunk) == 0);
		memset(g, 0, sizeof(*g));
		CHECK(officers_seq_init(g, N1) == 0);
		memset(&t, 0, sizeof(t));
		rc = 0;
		if (m == 2) {
			const uint64_t mid = N1 - (3u << 19);
			rc = officers_cuda_extend(ctx, g, mid, threads, NULL, 0,
						  &t, err, sizeof(err));
			CHECK(rc == 0 && g->n == mid);
			/* the same length, another checksum: not adopted */
			struct officers_seq *o = calloc(1, sizeof(*o));
			CHECK(o && officers_seq_init(o, N1) == 0);
			CHECK(officers_seq_append(o, g->vals, mid) == 0);
			o->st.fnv ^= 1;
			memset(&t, 0, sizeof(t));
			CHECK(officers_cuda_extend(ctx, o, mid + 1000, threads,
						   NULL, 0, &t, err,
						   sizeof(err)) == 0);
			CHECK(t.adopted == 0);
			officers_seq_free(o);
			free(o);
			/* g's chunk ahead is gone; relaunch one for g */
			CHECK(officers_cuda_extend(ctx, g, mid + (1u << 19),
						   threads, NULL, 0, &t, err,
						   sizeof(err)) == 0);
			CHECK(t.adopted == 0);
			memset(&t, 0, sizeof(t));
		}
		if (rc == 0)
			rc = officers_cuda_extend(ctx, g, N1, threads, NULL, 0,
						  &t, err, sizeof(err));
		if (m == 2)
			CHECK(t.adopted == 1);
		if (rc)
			fprintf(stderr, "extend: %s\n", err);
		CHECK(rc == 0);
		CHECK(g->n == N1);
		CHECK(memcmp(g->vals, cpu->vals, (size_t)N1 * 2) == 0);
		CHECK(g->st.fnv == cpu->st.fnv);
		CHECK(memcmp(g->st.count, cpu->st.count,
			     sizeof(g->st.count)) == 0);
		CHECK(memcmp(g->st.first, cpu->st.first,
			     sizeof(g->st.first)) == 0);
		printf("extend to %u (chunk %u): fnv %016llx (cpu %016llx), "
		       "cand %.1f ms, exact %.1f ms, host %.1f ms\n", N1, chunk,
		       (unsigned long long)g->st.fnv,
		       (unsigned long long)cpu->st.fnv, t.cand_ms, t.exact_ms,
		       t.host_ms);
		officers_seq_free(g);
	}
	CHECK(officers_cuda_set_chunk(ctx, 0) == 0);

	/* A lease through the workload with a CUDA device. */
	{
		json_t *args = json_pack("{s:s}", "to", "2000000"), *p = NULL,
		       *spec = NULL, *cur = NULL;
		uint64_t total, units;
		void *res = NULL;
		size_t len = 0;
		int last;
		struct wl_device dev = {WL_DEVICE_CUDA, 0, threads, ctx};
		CHECK(officers_workload.parse_params(workload_ctx(&officers_workload), args, &p, &total, err,
						     sizeof(err)) == 0);
		CHECK(officers_workload.carve(workload_ctx(&officers_workload), p, NULL, NULL, NULL, 0, &spec, &units,
					      &cur, &last) == 0);
		rc = officers_workload.run(workload_ctx(&officers_workload), p, spec, NULL, 0, &dev, NULL, &res,
					   &len, err, sizeof(err));
		if (rc)
			fprintf(stderr, "run: %s\n", err);
		CHECK(rc == 0);
		CHECK(officers_workload.verify(workload_ctx(&officers_workload), p, spec, res, len, 3, err,
					       sizeof(err)) == 0);
		struct officers_result r;
		CHECK(officers_result_parse(res, len, &r, err, sizeof(err)) == 0);
		CHECK(r.fnv_out == officers_fnv(OFFICERS_FNV_BASIS, cpu->vals,
						2000000));
		free(res);
		json_decref(args);
		json_decref(p);
		json_decref(spec);
		json_decref(cur);
	}
	officers_seq_free(cpu);
	free(cpu);
	free(g);
	officers_cuda_close(ctx);
	return gpu_result();
}
