/* bench_graveler.c - time the Graveler kernel and the fast CPU path.
 *
 * usage: bench_graveler [-n battles] [-r runs] [-t threads] [-d device]
 *                       [-s seed] [-c cpu_battles]
 *
 * GPU: kernel time of one launch over the battles (CUDA events around the
 * kernel alone), two warm-up launches, then the median of the runs, scaled
 * to 1e9 battles; also the wall time of a whole step (kernel, copy back
 * of the segment records and the host fold). CPU: one step with the given
 * threads; then the coordinator's verification cost for a largest lease.
 * The reference figure is the public cuRAND kernel (5.37 ms per 1e9
 * battles on an H200, not reproducible per battle). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "gerr.h"
#include "graveler/graveler.h"
#include "graveler/graveler_cuda.h"
#include "workload.h"

#define REF_MS 5.37

static uint64_t num(const char *s)
{
	json_t *o = json_pack("{s:s}", "v", s);
	uint64_t v = 0;
	char err[WL_ERRLEN];
	if (!o || wl_json_u64(o, "v", 1, 0, &v, err, sizeof(err)) != 0) {
		fprintf(stderr, "bad number '%s'\n", s);
		exit(2);
	}
	json_decref(o);
	return v;
}

int main(int argc, char **argv)
{
	uint64_t n = 1000000000ull, seed = 0, cpu_n = 1ull << 26;
	int runs = 10, threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	int device = 0, opt;
	char err[WL_ERRLEN] = "";

	while ((opt = getopt(argc, argv, "n:r:t:d:s:c:h")) != -1) {
		switch (opt) {
		case 'n': n = num(optarg); break;
		case 'r': runs = atoi(optarg); break;
		case 't': threads = atoi(optarg); break;
		case 'd': device = atoi(optarg); break;
		case 's': seed = num(optarg); break;
		case 'c': cpu_n = num(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-n battles] [-r runs] "
				"[-t threads] [-d device] [-s seed] "
				"[-c cpu_battles]\n", argv[0]);
			return 2;
		}
	}
	if (runs < 1)
		runs = 1;
	if (threads < 1)
		threads = 1;
	if (n < 1 || n > GRAVELER_CUDA_MAX_STEP || n > GRAVELER_MAX_BATTLES) {
		fprintf(stderr, "battles must be 1..2^32\n");
		return 2;
	}
	struct graveler_acc *acc = malloc(sizeof(*acc));
	printf("graveler bench: %llu battles, seed %llu, %d runs\n",
	       (unsigned long long)n, (unsigned long long)seed, runs);

	struct graveler_cuda *ctx = NULL;
	if (graveler_cuda_open(device, &ctx, err, sizeof(err)) == 0) {
		char name[256];
		float *ms = calloc((size_t)runs, sizeof(float));
		graveler_cuda_device_name(ctx, name, sizeof(name));
		printf("device %d: %s\n", device, name);
		printf("kernel: graveler.cu (MWC64X with a C multiply, one "
		       "chunk per thread at a time, 6 POPC, 16-bit shared "
		       "histogram)\n");
		double wall = 0;
		for (int r = -2; r < runs; r++) {
			float k = 0;
			double t0 = gclock_mono();
			graveler_acc_init(acc, seed, 0, n);
			if (graveler_cuda_step(ctx, acc, n, &k, err,
					       sizeof(err)) != 0) {
				fprintf(stderr, "%s\n", err);
				return 1;
			}
			if (r >= 0) {
				ms[r] = k;
				wall += gclock_mono() - t0;
			}
		}
		qsort(ms, (size_t)runs, sizeof(float), bench_cmp_float);
		double med = ms[runs / 2] * 1e9 / (double)n;
		printf("kernel %.3f ms per 1e9 battles (median of %d; min "
		       "%.3f, max %.3f), %.3g battles/s; step wall %.3f ms; "
		       "reference %.2f ms (cuRAND, H200): %.2fx; max %u first "
		       "%llu\n",
		       med, runs, ms[0] * 1e9 / (double)n,
		       ms[runs - 1] * 1e9 / (double)n,
		       (double)n / (ms[runs / 2] * 1e-3), wall / runs * 1e3,
		       REF_MS, REF_MS / med, acc->max,
		       (unsigned long long)acc->first);
		free(ms);
		graveler_cuda_close(ctx);
	} else {
		printf("no CUDA device (%s): CPU only\n", err);
	}

	graveler_acc_init(acc, seed, 0, cpu_n);
	double t0 = gclock_mono();
	if (graveler_cpu_step(acc, cpu_n, threads) != 0)
		return 1;
	double dt = gclock_mono() - t0;
	printf("cpu: %llu battles, %d threads: %.3f s, %.3g battles/s, "
	       "%.3g battles/s per thread; max %u first %llu\n",
	       (unsigned long long)cpu_n, threads, dt, (double)cpu_n / dt,
	       (double)cpu_n / dt / threads, acc->max,
	       (unsigned long long)acc->first);

	/* The coordinator's verification of a largest lease recomputes
	 * 33 of its segments on one thread (graveler_workload.c). */
	struct graveler_rec rec;
	t0 = gclock_mono();
	graveler_segment_eval(seed, 0, GRAVELER_MAX_LEASE, 0, &rec);
	dt = gclock_mono() - t0;
	printf("verify: one segment of a %llu-battle lease (%llu battles) "
	       "%.3f s on one thread; 33 segments %.2f s\n",
	       (unsigned long long)GRAVELER_MAX_LEASE,
	       (unsigned long long)(GRAVELER_MAX_LEASE / GRAVELER_SEGMENTS),
	       dt, 33 * dt);
	free(acc);
	return 0;
}
