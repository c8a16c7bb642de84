/* bench_merge - what one lease costs gpud's database thread as a job grows.
 *
 * Every claim carves the next lease and every verified result is merged
 * into the job's answer on the database thread, which every lease
 * operation waits for. That cost must not grow with the number of leases
 * merged before. This drives the real path (sched_claim, then
 * store_lease_set_result, sched_verify_load and sched_verify_commit) over
 * a store in a fresh directory, with synthetic results of the right shape
 * (verification is not what is measured), and prints the mean time of
 * claim + commit per decile of the job: flat deciles mean linear total.
 *
 *   bench_merge graveler N     N leases of 2^20 battles
 *   bench_merge sudoku         the 4x3 job at its default lease size
 *
 * The directory defaults to /dev/shm, so that fsync does not drown the
 * work measured; -d DIR puts it elsewhere.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "gerr.h"
#include "graveler/graveler.h"
#include "scheduler.h"
#include "store.h"
#include "sudoku/sudoku_format.h"
#include "workload.h"

static uint64_t spec_u64(const char *spec, const char *key)
{
	json_t *j = json_loads(spec, 0, NULL);
	uint64_t v = (uint64_t)json_integer_value(json_object_get(j, key));
	json_decref(j);
	return v;
}

/* A Graveler result for [begin, end): every battle (and so every
 * segment's maximum) at 57 paralysed turns. */
static int graveler_result(const char *spec, uint64_t seed, void **ret,
			   size_t *ret_len)
{
	static struct graveler_acc acc;
	uint64_t begin = spec_u64(spec, "begin"), end = spec_u64(spec, "end");

	graveler_acc_init(&acc, seed, begin, end);
	acc.next = end;
	acc.max = 57;
	acc.first = begin;
	acc.hist[57] = end - begin;
	for (uint32_t k = 0; k < acc.nseg; k++) {
		uint64_t lo = graveler_segment_chunk(begin, end, k) *
			      GRAVELER_CHUNK;
		uint64_t hi = graveler_segment_chunk(begin, end, k + 1) *
			      GRAVELER_CHUNK;
		lo = lo < begin ? begin : lo;
		hi = hi > end ? end : hi;
		acc.seg_max[k] = 57;
		acc.seg_sum[k] = (uint32_t)(57 * (hi - lo));
		acc.seg_sk[k] = (uint32_t)(hi - lo) * graveler_sketch_word(57);
	}
	return graveler_result_encode(&acc, ret, ret_len);
}

/* A Sudoku result for gangsters [from, to): counts from a counter. */
static int sudoku_result(const char *spec, void **ret, size_t *ret_len)
{
	uint64_t from = spec_u64(spec, "from"), to = spec_u64(spec, "to");
	struct sudoku_res r = {.R = 4, .C = 3, .from = (uint32_t)from,
			       .to = (uint32_t)to, .done = (uint32_t)(to - from)};
	int rc;

	r.v = calloc(to - from ? to - from : 1, sizeof(*r.v));
	if (!r.v)
		return GERR_NOMEM;
	for (uint64_t i = 0; i < to - from; i++)
		r.v[i][0] = 1000003 * (from + i + 1);
	rc = sudoku_res_encode(&r, 0, ret, ret_len);
	free(r.v);
	return rc;
}

int main(int argc, char **argv)
{
	const char *dir = "/dev/shm", *name;
	char path[4096], err[256];
	uint64_t n = 0;
	int opt;

	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd') {
			fprintf(stderr, "usage: bench_merge [-d DIR] graveler N | sudoku\n");
			return 2;
		}
		dir = optarg;
	}
	name = optind < argc ? argv[optind] : "";
	if (strcmp(name, "graveler") == 0 && optind + 1 < argc)
		n = strtoull(argv[optind + 1], NULL, 10);
	if (!(strcmp(name, "sudoku") == 0 ||
	      (strcmp(name, "graveler") == 0 && n > 0 && n <= 1000000))) {
		fprintf(stderr, "usage: bench_merge [-d DIR] graveler N | sudoku\n");
		return 2;
	}
	const struct workload *wl = workload_find(name);
	if (workload_open_all(err, sizeof(err))) {
		fprintf(stderr, "bench_merge: %s\n", err);
		return 1;
	}
	json_t *args = strcmp(name, "sudoku") == 0
		? json_pack("{s:s}", "box", "4x3")
		: json_pack("{s:s, s:s}", "battles", "0", "seed", "7");
	if (n) {
		char b[32];
		snprintf(b, sizeof(b), "%" PRIu64, n << 20);
		json_object_set_new(args, "battles", json_string(b));
	}
	json_t *params = NULL;
	uint64_t total = 0;
	if (wl->parse_params(workload_ctx(wl), args, &params, &total, err,
			     sizeof(err))) {
		fprintf(stderr, "bench_merge: %s\n", err);
		return 1;
	}
	char *ptext = json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS);
	snprintf(path, sizeof(path), "%s/bench_merge.%d.db", dir, (int)getpid());
	struct store *st;
	int64_t job, worker;
	if (store_open(path, &st, err, sizeof(err)) ||
	    store_job_insert(st, name, ptext, total, 1.0, &job) ||
	    store_worker_upsert(st, "bench", "", "cpu", 1.0, &worker)) {
		fprintf(stderr, "bench_merge: store: %s\n", err);
		return 1;
	}
	struct sched_policy pol = {
		.lease_target_s = 300, .lease_units = n ? 1u << 20 : 0,
		.lease_timeout_s = 3600, .max_failures = 3,
		.quarantine_after = 3, .data_dir = dir,
	};
	size_t cap = 1024, k = 0;
	double *t = malloc(cap * sizeof(*t)), t_all = gclock_mono();
	for (;; k++) {
		struct sched_claim c = {.pol = &pol, .worker_id = worker};
		struct sched_verify v = {.pol = &pol};
		void *res = NULL;
		size_t len = 0;
		int rc;

		c.workloads_json = malloc(64);
		snprintf(c.workloads_json, 64, "[\"%s\"]", name);
		double t0 = gclock_mono();
		sched_claim(st, &c);
		double tc = gclock_mono() - t0;
		if (c.rc == GERR_NOTFOUND) {
			sched_claim_clear(&c);
			break;
		}
		rc = c.rc;
		if (!rc)
			rc = n ? graveler_result(c.lease.spec, 7, &res, &len)
			       : sudoku_result(c.lease.spec, &res, &len);
		if (!rc)
			rc = store_lease_set_result(st, c.lease.id,
						    c.lease.epoch,
						    "00000000000000000000000000000000"
						    "00000000000000000000000000000000",
						    c.lease.units, 2.0);
		v.lease_id = c.lease.id;
		v.epoch = c.lease.epoch;
		sched_claim_clear(&c);
		if (!rc) {
			sched_verify_load(st, &v);
			rc = v.rc;
		}
		if (!rc) {
			v.raw = res;
			v.raw_len = len;
			res = NULL;
			v.passed = 1;
			t0 = gclock_mono();
			sched_verify_commit(st, &v);
			tc += gclock_mono() - t0;
			rc = v.rc;
		}
		sched_verify_clear(&v);
		free(res);
		if (rc) {
			fprintf(stderr, "bench_merge: lease %zu: %s %s\n", k,
				gerr_str(rc), store_errmsg(st));
			return 1;
		}
		if (k == cap) {
			cap *= 2;
			t = realloc(t, cap * sizeof(*t));
		}
		t[k] = tc;
	}
	t_all = gclock_mono() - t_all;
	struct store_job j = {0};
	store_job_get(st, job, &j);
	printf("bench_merge %s: %zu leases, job %s, answer %zu bytes, %.3f s "
	       "in all (result building included)\n", name, k,
	       job_state_name(j.state), j.answer ? strlen(j.answer) : 0, t_all);
	/* The first merge may build the workload's tables (Sudoku's band
	 * counts), which in gpud verification has built on the thread pool
	 * before any merge: shown apart. */
	if (k)
		printf("first lease: %.3f s\n", t[0]);
	printf("claim + merge commit per lease after the first, mean by "
	       "tenth of the job:\n");
	for (int d = 0; d < 10 && k >= 11; d++) {
		double s = 0;
		size_t a = 1 + (k - 1) * (size_t)d / 10,
		       b = 1 + (k - 1) * (size_t)(d + 1) / 10;
		for (size_t i = a; i < b; i++)
			s += t[i];
		printf("  leases %6zu..%6zu  %8.1f us\n", a, b - 1,
		       1e6 * s / (double)(b - a));
	}
	store_job_clear(&j);
	store_close(st);
	unlink(path);
	snprintf(path + strlen(path), 16, "-wal");
	unlink(path);
	path[strlen(path) - 4] = '\0';
	snprintf(path + strlen(path), 16, "-shm");
	unlink(path);
	free(t);
	free(ptext);
	json_decref(params);
	json_decref(args);
	workload_close_all();
	return 0;
}
