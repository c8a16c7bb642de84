/* bench_officers - Officers rates: the fast CPU path per core and on all
 * cores, the CUDA candidate kernel alone, the exact kernel alone, and both
 * together (officers_cuda_extend, the path a GPU worker runs).
 *
 *   bench_officers [-n VALUES] [-s START] [-c CPU_VALUES] [-T]
 *
 * The candidate kernels are timed alone on one chunk: the frontier kernel
 * and the chain kernel (the default), and with -T the chain kernel over a
 * sweep of its tuning (near, helper warps, producer CTAs); every output is
 * compared with the frontier kernel's.
 *
 * The CPU builds G(0..START-1) first (all cores); the GPU figures are
 * measured from START on. Without a GPU only the CPU figures are printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gerr.h"
#include "officers/officers.h"
#include "officers/officers_cuda.h"
#include "workload.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

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

int main(int argc, char **argv)
{
	uint64_t n = 1ull << 28, start = 1ull << 21, cpun = 200000;
	int threads = (int)sysconf(_SC_NPROCESSORS_ONLN), opt, sweep = 0;
	char err[WL_ERRLEN] = "";
	double t0, t1;

	while ((opt = getopt(argc, argv, "n:s:c:T")) != -1) {
		if (opt == 'n')
			n = strtoull(optarg, NULL, 0);
		else if (opt == 's')
			start = strtoull(optarg, NULL, 0);
		else if (opt == 'c')
			cpun = strtoull(optarg, NULL, 0);
		else if (opt == 'T')
			sweep = 1;
		else {
			fprintf(stderr, "usage: bench_officers [-n VALUES] "
				"[-s START] [-c CPU_VALUES] [-T]\n");
			return 2;
		}
	}
	if (threads < 1)
		threads = 1;
	struct officers_seq *base = calloc(1, sizeof(*base));
	officers_seq_init(base, start + cpun);
	t0 = now();
	if (officers_cpu_extend(base, start + cpun, threads, NULL, 0, err,
				sizeof(err))) {
		fprintf(stderr, "cpu: %s\n", err);
		return 1;
	}
	t1 = now();
	printf("cpu build G(0..%llu): %.2f s on %d threads\n",
	       (unsigned long long)(start + cpun), t1 - t0, threads);
	/* CPU rates from start: 1 thread and all threads. */
	for (int th = 1; th <= threads; th = th == 1 ? threads : th + 1) {
		struct officers_seq *s = copy_to(base, start, start + cpun);
		t0 = now();
		officers_cpu_extend(s, start + cpun, th, NULL, 0, err,
				    sizeof(err));
		t1 = now();
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
		t0 = now();
		officers_cpu_candidates(s, cpun, out);
		t1 = now();
		printf("cpu candidate step alone, 1 thread: %.3f M values/s\n",
		       (double)cpun / (t1 - t0) / 1e6);
		uint64_t sum, mx, arg;
		t0 = now();
		officers_cpu_depths(base, start, start + cpun, &sum, &mx, &arg);
		t1 = now();
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
		uint16_t *want = malloc(len * 2);
		struct officers_cuda_times t;
		/* kernel, near, helpers, producers, batch; the default last */
		static const unsigned tunings[][5] = {
			{OFFICERS_KERNEL_FRONTIER, 0, 0, 0, 0},
			{OFFICERS_KERNEL_CHAIN, 128, 8, 0, 0},
			{OFFICERS_KERNEL_CHAIN, 256, 13, 0, 0},
			{OFFICERS_KERNEL_CHAIN, 256, 8, 0, 0},
			{OFFICERS_KERNEL_CHAIN, 256, 8, 16, 0},
			{OFFICERS_KERNEL_CHAIN, 256, 8, 0, 4},
			{OFFICERS_KERNEL_CHAIN, 256, 13, 0, 4},
			{OFFICERS_KERNEL_CHAIN, 0, 0, 0, 0},
		};
		unsigned ntun = sizeof(tunings) / sizeof(tunings[0]);
		for (unsigned k = 0; k < ntun; k++) {
			const unsigned *tu = tunings[k];
			if (!sweep && k > 0 && k < ntun - 1)
				continue;
			if (officers_cuda_set_kernel(ctx, (int)tu[0], tu[1],
						     tu[2], tu[3], tu[4])) {
				printf("tuning %u: refused\n", k);
				continue;
			}
			officers_cuda_device_name(ctx, err, sizeof(err));
			double ms[5];
			for (int rep = 0; rep < 5; rep++) {
				memset(&t, 0, sizeof(t));
				if (officers_cuda_candidates(ctx, s, len, out, &t,
							     err, sizeof(err))) {
					fprintf(stderr, "%s\n", err);
					return 1;
				}
				ms[rep] = t.cand_ms;
			}
			for (int a = 0; a < 5; a++)
				for (int b = a + 1; b < 5; b++)
					if (ms[b] < ms[a]) {
						double x = ms[a];
						ms[a] = ms[b];
						ms[b] = x;
					}
			if (k == 0)
				memcpy(want, out, len * 2);
			printf("gpu candidate kernel alone [%s]: %llu values, "
			       "median of 5 %.2f ms (min %.2f max %.2f): %.1f M "
			       "values/s; frontier rounds %llu, chain slow paths "
			       "%llu, waits %llu, %.1f cycles/step (records %.1f, "
			       "picks %.1f)%s\n", err,
			       (unsigned long long)len, ms[2], ms[0], ms[4],
			       (double)len / ms[2] / 1e3,
			       (unsigned long long)t.rounds,
			       (unsigned long long)t.slow,
			       (unsigned long long)t.waits,
			       (double)t.cycles / (double)len,
			       (double)t.cyc_rec / (double)len,
			       (double)t.cyc_pick / (double)len,
			       memcmp(out, want, len * 2) ? " MISMATCH" : "");
		}
		free(want);
		memcpy(s->vals + (start - s->base), out, len * 2);
		for (int rep = 0; rep < 3; rep++) {
			memset(&t, 0, sizeof(t));
			if (officers_cuda_exact(ctx, s, len, st, &t, err,
						sizeof(err))) {
				fprintf(stderr, "%s\n", err);
				return 1;
			}
			printf("gpu exact kernel alone: %.2f ms: %.1f M "
			       "values/s\n", t.exact_ms,
			       (double)len / t.exact_ms / 1e3);
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
		t0 = now();
		if (officers_cuda_extend(ctx, s, start + n, threads, NULL, 0,
					 &t, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		t1 = now();
		printf("gpu exact values (both kernels + host fold), G(%llu.."
		       "%llu): %.2f s = %.1f M values/s (candidate kernel "
		       "%.0f ms, exact kernel %.0f ms, host fold %.0f ms); "
		       "fnv %016llx\n", (unsigned long long)start,
		       (unsigned long long)(start + n), t1 - t0,
		       (double)n / (t1 - t0) / 1e6, t.cand_ms, t.exact_ms,
		       t.host_ms, (unsigned long long)s->st.fnv);
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
