/* bench_verify - what gpud's verification of one lease costs beside the
 * lease's run, on this machine's CPU, for any workload:
 *
 *   bench_verify WORKLOAD --KEY VALUE... [--lease-units N] [--threads T]
 *                [--seeds K]
 *
 * Parses the job's arguments as gpud does, carves its first lease of about
 * N units (0: the planner's default), runs it on the CPU with T threads
 * (default 2) and verifies the result with K seeds (default 5). Prints the
 * run's and one verification's wall and CPU seconds (the process's, all
 * threads) and verify/run of each: the CPU ratio is the share of a lease's
 * work gpud spends recomputing. bench/verify.md keeps the figures. Jobs
 * that need an input file are not taken.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "bench_util.h"
#include "gerr.h"
#include "workload.h"

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const struct workload *wl;
	json_t *args, *params = NULL, *spec = NULL, *cursor = NULL;
	uint64_t total, want = 0, units = 0, seeds = 5;
	struct wl_device dev = { WL_DEVICE_CPU, 0, 2, NULL };
	struct wl_run_io io = WL_RUN_IO_QUIET(NULL, NULL);
	char err[WL_ERRLEN] = "";
	void *res = NULL, *ctx;
	size_t len = 0;
	double w0, c0, run_w, run_c, ver_w = 0, ver_c = 0;
	int last, rc;

	if (argc < 2 || !(wl = workload_find(argv[1]))) {
		fprintf(stderr, "usage: bench_verify WORKLOAD --KEY VALUE... "
			"[--lease-units N] [--threads T] [--seeds K]\n");
		return 2;
	}
	args = json_object();
	for (int i = 2; i + 1 < argc; i += 2) {
		if (strncmp(argv[i], "--", 2) != 0 || strlen(argv[i]) > 64) {
			fprintf(stderr, "bench_verify: expected --KEY VALUE\n");
			return 2;
		}
		if (strcmp(argv[i], "--lease-units") == 0)
			want = strtoull(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--threads") == 0)
			dev.threads = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--seeds") == 0)
			seeds = strtoull(argv[i + 1], NULL, 10);
		else
			json_object_set_new(args, argv[i] + 2,
					    json_string(argv[i + 1]));
	}
	if (dev.threads < 1 || seeds < 1 || seeds > 1000) {
		fprintf(stderr, "bench_verify: --threads >= 1, --seeds 1..1000\n");
		return 2;
	}
	rc = workload_open_all(err, sizeof(err));
	ctx = workload_ctx(wl);
	if (rc == 0)
		rc = wl->parse_params(ctx, args, &params, &total, err,
				      sizeof(err));
	if (rc == 0 && (rc = wl->carve(ctx, params, NULL, NULL, NULL, want,
				       &spec, &units, &cursor, &last)) != 0)
		snprintf(err, sizeof(err), "carve: %s", gerr_str(rc));
	if (rc) {
		fprintf(stderr, "bench_verify: %s\n", err);
		return 1;
	}
	/* a first run builds what the workload's context keeps (Sudoku's
	 * tables), as a worker's first lease does; the second is timed */
	rc = wl->run(ctx, params, spec, NULL, 0, &dev, &io, &res, &len, err,
		     sizeof(err));
	free(res);
	res = NULL;
	w0 = gclock_mono();
	c0 = cpu_s();
	if (rc == 0)
		rc = wl->run(ctx, params, spec, NULL, 0, &dev, &io, &res, &len,
			     err, sizeof(err));
	run_w = gclock_mono() - w0;
	run_c = cpu_s() - c0;
	for (uint64_t s = 0; rc == 0 && s < seeds; s++) {
		w0 = gclock_mono();
		c0 = cpu_s();
		rc = wl->verify(ctx, params, spec, res, len, 0x9e37 + s * 7919,
				err, sizeof(err));
		if (rc == WL_VERIFY_SPOT) /* passed; a replica is asked for */
			rc = 0;
		ver_w += gclock_mono() - w0;
		ver_c += cpu_s() - c0;
	}
	if (rc) {
		fprintf(stderr, "bench_verify: %s\n", err);
		return 1;
	}
	ver_w /= (double)seeds;
	ver_c /= (double)seeds;
	{
		char *sp = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
		printf("%s %s: %llu units, run %.3f s wall %.3f s CPU (%d "
		       "threads); verify %.4f s wall %.4f s CPU; verify/run "
		       "wall %.2f%% CPU %.2f%%\n", wl->name, sp ? sp : "?",
		       (unsigned long long)units, run_w, run_c, dev.threads,
		       ver_w, ver_c, 100 * ver_w / run_w, 100 * ver_c / run_c);
		free(sp);
	}
	free(res);
	json_decref(spec);
	json_decref(cursor);
	json_decref(params);
	json_decref(args);
	workload_close_all();
	return 0;
}
