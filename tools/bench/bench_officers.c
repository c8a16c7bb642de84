/* bench_officers - Officers rates: the fast CPU path per core and on all
 * cores, the CUDA candidate kernel alone, the exact kernel alone, and both
 * together (officers_cuda_extend, the path a GPU worker runs).
 *
 *   bench_officers [-n VALUES] [-s START] [-c CPU_VALUES]
 *
 * The CPU builds G(0..START-1) first (all cores); the GPU figures are
 * measured from START on. Without a GPU only the CPU figures are printed.
 * Reference figures: an H100 with the default START and VALUES
 * (bench/officers.md, commit c5a59f1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "gerr.h"
#include "officers/officers.h"
#include "officers/officers_cuda.h"
#include "workload.h"

#define DEF_N (1ull << 28)
#define DEF_START (1ull << 21)
#define REF_CAND 77.8   /* M values/s, candidate kernel alone */
#define REF_EXACT 289.0 /* M values/s, exact kernel alone */
#define REF_BOTH 59.5   /* M values/s, both kernels + host fold */
#define REF_FNV 0x7858ac6eeefd2af2ull /* s->st.fnv after the default run */

static struct officers_seq *copy_to(const struct officers_seq *src,
				    uint64_t n, uint64_t cap)
{
	struct officers_seq *s = calloc(1, sizeof(*s));
	if (!s || officers_seq_init(s, cap) ||
	    officers_seq_append(s, src->vals, n)) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	return s;
}

/* The candidate kernel alone, reps times, then the median. */
static int bench_candidates(struct officers_cuda *ctx,
			    const struct officers_seq *s, uint64_t len,
			    uint16_t *out, int reps)
{
	char err[WL_ERRLEN] = "";
	double ms[16];
	struct officers_cuda_times t;

	for (int rep = 0; rep < reps; rep++) {
		memset(&t, 0, sizeof(t));
		if (officers_cuda_candidates(ctx, s, len, out, &t, err,
					     sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		ms[rep] = t.cand_ms;
	}
	qsort(ms, (size_t)reps, sizeof(double), bench_cmp_double);
	double med = ms[reps / 2];
	printf("gpu candidate kernel alone: %llu values, median of %d "
	       "%.2f ms (%.2f..%.2f), %llu rounds (%.1f values/round, %.2f "
	       "us/round): %.1f M values/s (reference %.1f, H100)\n",
	       (unsigned long long)len, reps, med, ms[0], ms[reps - 1],
	       (unsigned long long)t.rounds, (double)len / (double)t.rounds,
	       med * 1e3 / (double)t.rounds, (double)len / med / 1e3,
	       REF_CAND);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t n = DEF_N, start = DEF_START, cpun = 200000;
	int threads = (int)sysconf(_SC_NPROCESSORS_ONLN), opt;
	char err[WL_ERRLEN] = "";
	double t0, t1;

	while ((opt = getopt(argc, argv, "n:s:c:")) != -1) {
		if (opt == 'n')
			n = strtoull(optarg, NULL, 0);
		else if (opt == 's')
			start = strtoull(optarg, NULL, 0);
		else if (opt == 'c')
			cpun = strtoull(optarg, NULL, 0);
		else {
			fprintf(stderr, "usage: bench_officers [-n VALUES] "
				"[-s START] [-c CPU_VALUES]\n");
			return 2;
		}
	}
	if (threads < 1)
		threads = 1;
	struct officers_seq *base = calloc(1, sizeof(*base));
	officers_seq_init(base, start + cpun);
	t0 = gclock_mono();
	if (officers_cpu_extend(base, start + cpun, threads, NULL, 0, err,
				sizeof(err))) {
		fprintf(stderr, "cpu: %s\n", err);
		return 1;
	}
	t1 = gclock_mono();
	printf("cpu build G(0..%llu): %.2f s on %d threads\n",
	       (unsigned long long)(start + cpun), t1 - t0, threads);
	/* CPU rates from start: 1 thread and all threads. */
	for (int th = 1; th <= threads; th = th == 1 ? threads : th + 1) {
		struct officers_seq *s = copy_to(base, start, start + cpun);
		t0 = gclock_mono();
		officers_cpu_extend(s, start + cpun, th, NULL, 0, err,
				    sizeof(err));
		t1 = gclock_mono();
		printf("cpu exact (candidate + exact step), %d thread%s: "
		       "%.3f M values/s (%.3f M/s per thread)\n", th,
		       th > 1 ? "s" : "", (double)cpun / (t1 - t0) / 1e6,
		       (double)cpun / (t1 - t0) / 1e6 / th);
		if (memcmp(s->vals + start, base->vals + start, cpun * 2))
			printf("MISMATCH\n");
		officers_seq_free(s);
		free(s);
		if (th == threads)
			break;
	}
	{
		/* candidate step alone, one thread */
		struct officers_seq *s = copy_to(base, start, start + cpun);
		uint16_t *out = malloc(cpun * 2);
		t0 = gclock_mono();
		officers_cpu_candidates(s, cpun, out);
		t1 = gclock_mono();
		printf("cpu candidate step alone, 1 thread: %.3f M values/s\n",
		       (double)cpun / (t1 - t0) / 1e6);
		uint64_t sum, mx, arg;
		t0 = gclock_mono();
		officers_cpu_depths(base, start, start + cpun, &sum, &mx, &arg);
		t1 = gclock_mono();
		printf("cpu candidate + exact, 1 thread, no threading: %.3f M "
		       "values/s; exact scan depth mean %.0f pairs, max %llu "
		       "at %llu\n", (double)cpun / (t1 - t0) / 1e6,
		       (double)sum / (double)cpun, (unsigned long long)mx,
		       (unsigned long long)arg);
		free(out);
		officers_seq_free(s);
		free(s);
	}

	struct officers_cuda *ctx;
	if (officers_cuda_device_count() < 1 ||
	    officers_cuda_open(0, &ctx, err, sizeof(err))) {
		printf("no GPU: %s\n", err);
		return 0;
	}
	officers_cuda_device_name(ctx, err, sizeof(err));
	printf("device: %s\n", err);
	{
		uint64_t len = OFFICERS_CUDA_CHUNK;
		struct officers_seq *s = copy_to(base, start, start + len);
		uint16_t *out = malloc(len * 2);
		uint8_t *st = malloc(len);
		struct officers_cuda_times t;
		if (bench_candidates(ctx, s, len, out, 5))
			return 1;
		memcpy(s->vals + (start - s->base), out, len * 2);
		for (int rep = 0; rep < 3; rep++) {
			memset(&t, 0, sizeof(t));
			if (officers_cuda_exact(ctx, s, len, st, &t, err,
						sizeof(err))) {
				fprintf(stderr, "%s\n", err);
				return 1;
			}
			printf("gpu exact kernel alone: %.2f ms: %.1f M "
			       "values/s (reference %.0f, H100)\n", t.exact_ms,
			       (double)len / t.exact_ms / 1e3, REF_EXACT);
		}
		officers_seq_free(s);
		free(s);
		free(out);
		free(st);
	}
	{
		struct officers_seq *s = copy_to(base, start, start + n);
		struct officers_cuda_times t;
		memset(&t, 0, sizeof(t));
		t0 = gclock_mono();
		if (officers_cuda_extend(ctx, s, start + n, threads, NULL, 0,
					 &t, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		t1 = gclock_mono();
		printf("gpu exact values (both kernels + host fold), G(%llu.."
		       "%llu): %.2f s = %.1f M values/s (reference %.1f, "
		       "H100; candidate kernel %.0f ms, exact kernel %.0f ms, "
		       "host fold %.0f ms); fnv %016llx\n",
		       (unsigned long long)start,
		       (unsigned long long)(start + n), t1 - t0,
		       (double)n / (t1 - t0) / 1e6, REF_BOTH, t.cand_ms,
		       t.exact_ms, t.host_ms, (unsigned long long)s->st.fnv);
		if (start == DEF_START && n == DEF_N)
			printf("fnv %s the reference %016llx\n",
			       s->st.fnv == REF_FNV ? "matches" : "DIFFERS from",
			       (unsigned long long)REF_FNV);
		if (start + n >= 10000000)
			printf("fnv G(0..1e7-1) = %016llx (want "
			       "c9482f4816741e82)\n",
			       (unsigned long long)officers_fnv(
				       OFFICERS_FNV_BASIS, s->vals, 10000000));
		unsigned top = 0;
		for (unsigned v = 0; v < OFFICERS_VMAX; v++)
			if (s->st.count[v])
				top = v;
		printf("largest value %u first at %llu; rare positions %u\n",
		       top, (unsigned long long)s->st.first[top], s->nrare);
		officers_seq_free(s);
		free(s);
	}
	officers_cuda_close(ctx);
	return 0;
}
