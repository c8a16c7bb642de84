/* test_metrics.c - the Prometheus text of the control API's replies,
 * decoded as gpud's server decodes them (ctlcmd_reply_decode): jobs
 * by state with the fixed states at 0, per-job series for unfinished and
 * recently finished jobs only, leases summed over jobs, workers online by
 * device, label values escaped, the commit histogram cumulative with its
 * +Inf bucket equal to the count, and families written whole; the event
 * log's counters (one family per metric, labels for its rows), gpud's
 * health and the process's figures as client libraries name them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdio.h>

#include <cmocka.h>

#include "metrics.h"
#include "unit_main.h"

static const char *status_json =
	"{\"ok\":true,\"jobs\":["
	"{\"id\":3,\"name\":\"big-run\",\"workload\":\"graveler\",\"unit_name\":\"battles\","
	" \"state\":\"running\",\"total_units\":1000000000,\"units_done\":420000000,"
	" \"units_verified\":400000000,\"rate\":54900000.5,\"eta_s\":10.5,"
	" \"verify_failures\":2,\"finished_at\":null,"
	" \"leases\":{\"pending\":3,\"leased\":2,\"done\":1,\"verified\":9,\"failed\":0,\"cancelled\":0}},"
	"{\"id\":4,\"name\":null,\"workload\":\"othello\",\"unit_name\":\"positions\","
	" \"state\":\"queued\",\"total_units\":500,\"units_done\":0,\"units_verified\":0,"
	" \"rate\":0,\"eta_s\":null,\"finished_at\":null,"
	" \"leases\":{\"pending\":1}},"
	"{\"id\":1,\"name\":\"old\",\"workload\":\"graveler\",\"unit_name\":\"battles\","
	" \"state\":\"done\",\"total_units\":10,\"units_done\":10,\"units_verified\":10,"
	" \"rate\":0,\"eta_s\":null,\"finished_at\":1000.0,"
	" \"leases\":{\"verified\":4}},"
	"{\"id\":2,\"name\":\"recent\",\"workload\":\"graveler\",\"unit_name\":\"battles\","
	" \"state\":\"failed\",\"total_units\":10,\"units_done\":5,\"units_verified\":5,"
	" \"rate\":0,\"eta_s\":null,\"finished_at\":199000.0,"
	" \"leases\":{\"failed\":1}}"
	"]}";

static const char *workers_json =
	"{\"ok\":true,\"workers\":["
	"{\"id\":1,\"name\":\"a\",\"device\":\"cuda:0\",\"online\":true,\"quarantined\":false},"
	"{\"id\":2,\"name\":\"b\",\"device\":\"cuda:0\",\"online\":true,\"quarantined\":true},"
	"{\"id\":3,\"name\":\"c\",\"device\":\"cpu\\\"x\\\\y\\nz\",\"online\":true,\"quarantined\":false},"
	"{\"id\":4,\"name\":\"d\",\"device\":\"cpu:1\",\"online\":false,\"quarantined\":false}"
	"]}";

/* text of command id's reply, decoded into *ret. */
static json_t *decode(enum ctlcmd_id id, const char *text, struct ctlcmd_reply *ret)
{
	json_t *j = json_loads(text, 0, NULL);
	char err[256] = "";

	assert_non_null(j);
	if (ctlcmd_reply_decode(&ctlcmd_table[id], j, ret, err, sizeof(err)))
		fail_msg("%s", err);
	return j;
}

/* with_workers 0: no workers reply (gpud's was not ok). */
static char *render_with(struct dbq_commit_stats *c, int with_workers)
{
	struct ctlcmd_reply st, wk;
	json_t *stj = decode(CTLCMD_STATUS, status_json, &st);
	json_t *wkj = decode(CTLCMD_WORKERS, workers_json, &wk);
	struct metrics_input in = {
		.status = &st, .workers = with_workers ? &wk : NULL, .commits = c, .verify_failures = 7,
		.blobs_known = 1, .blob_bytes = 123456789, .blob_files = 12,
		.http_late = 3, .http_evicted = 40, .now = 200000.0, .version = "0.1.0",
	};
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(metrics_render(&in, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	ctlcmd_reply_clear(&st);
	ctlcmd_reply_clear(&wk);
	json_decref(stj);
	json_decref(wkj);
	return text;
}

static char *render(struct dbq_commit_stats *c)
{
	return render_with(c, 1);
}

static uint64_t counts[METRICS_COUNTERS];
static const struct procstat proc = {
	.start_time = 1700000000.5, .cpu_seconds = 12.25,
	.resident_bytes = 4096 * 100, .virtual_bytes = 1 << 30,
	.open_fds = 17, .max_fds = 1024,
};

/* Everything optional given: counters, health, the process. */
static char *render_full(void)
{
	struct ctlcmd_reply st;
	json_t *stj = decode(CTLCMD_STATUS, status_json, &st);
	struct metrics_input in = {
		.status = &st, .event_counts = counts, .proc = &proc,
		.last_check = 199000.0, .last_backup = 0, .db_known = 1,
		.db_bytes = 5000, .storage_error = 1, .now = 200000.0,
		.version = "0.1.0",
	};
	char *text = NULL;
	size_t len = 0;

	for (size_t i = 0; i < METRICS_COUNTERS; i++)
		counts[i] = 10 + i;
	assert_int_equal(metrics_render(&in, &text, &len), 0);
	ctlcmd_reply_clear(&st);
	json_decref(stj);
	return text;
}

#define HAS(t, line) assert_non_null(strstr((t), line "\n"))
#define HASNT(t, s) assert_null(strstr((t), s))

static void test_jobs(void **state)
{
	char *t = render(NULL);

	(void)state;
	HAS(t, "gpud_info{version=\"0.1.0\"} 1");
	HAS(t, "gpud_jobs{state=\"queued\"} 1");
	HAS(t, "gpud_jobs{state=\"running\"} 1");
	HAS(t, "gpud_jobs{state=\"paused\"} 0");
	HAS(t, "gpud_jobs{state=\"done\"} 1");
	HAS(t, "gpud_jobs{state=\"failed\"} 1");
	HAS(t, "gpud_leases{state=\"pending\"} 4");
	HAS(t, "gpud_leases{state=\"verified\"} 13");
	HAS(t, "gpud_leases{state=\"failed\"} 1");
	HAS(t, "gpud_job_size_units{job=\"3\",name=\"big-run\",workload=\"graveler\",unit=\"battles\"} 1000000000");
	HAS(t, "gpud_job_done_units{job=\"3\",name=\"big-run\",workload=\"graveler\",unit=\"battles\"} 420000000");
	HAS(t, "gpud_job_verified_units{job=\"3\",name=\"big-run\",workload=\"graveler\",unit=\"battles\"} 400000000");
	HAS(t, "gpud_job_rate_units_per_second{job=\"3\",name=\"big-run\",workload=\"graveler\",unit=\"battles\"} 54900000.5");
	HAS(t, "gpud_job_eta_seconds{job=\"3\",name=\"big-run\",workload=\"graveler\",unit=\"battles\"} 10.5");
	HAS(t, "gpud_job_verify_failures_total{job=\"3\",name=\"big-run\",workload=\"graveler\",unit=\"battles\"} 2");
	/* No name: an empty label; no ETA: no sample. */
	HAS(t, "gpud_job_done_units{job=\"4\",name=\"\",workload=\"othello\",unit=\"positions\"} 0");
	HASNT(t, "gpud_job_eta_seconds{job=\"4\"");
	/* Finished a day and more ago: counted by state, no series. */
	HASNT(t, "job=\"1\"");
	HAS(t, "gpud_job_done_units{job=\"2\",name=\"recent\",workload=\"graveler\",unit=\"battles\"} 5");
	HAS(t, "# TYPE gpud_job_verify_failures_total counter");
	HAS(t, "gpud_verify_failures_total 7");
	HAS(t, "gpud_blob_stored_bytes 123456789");
	HAS(t, "gpud_blob_files 12");
	HAS(t, "# TYPE gpud_http_closed_total counter");
	HAS(t, "gpud_http_closed_total{why=\"deadline\"} 3");
	HAS(t, "gpud_http_closed_total{why=\"room\"} 40");
	HASNT(t, "gpud_db_commit_seconds");
	free(t);
}

static void test_workers(void **state)
{
	char *t = render(NULL);

	(void)state;
	HAS(t, "gpud_workers_online{device=\"cuda:0\"} 2");
	HAS(t, "gpud_workers_online{device=\"cpu\\\"x\\\\y\\nz\"} 1");
	HASNT(t, "gpud_workers_online{device=\"cpu:1\"}");
	HAS(t, "gpud_workers{standing=\"online\"} 3");
	HAS(t, "gpud_workers{standing=\"offline\"} 1");
	HAS(t, "gpud_workers{standing=\"quarantined\"} 1");
	free(t);
}

static void test_no_workers(void **state)
{
	char *t = render_with(NULL, 0);

	(void)state;
	HAS(t, "# TYPE gpud_workers_online gauge");
	HASNT(t, "gpud_workers_online{");
	HAS(t, "gpud_workers{standing=\"online\"} 0");
	HAS(t, "gpud_workers{standing=\"offline\"} 0");
	HAS(t, "gpud_workers{standing=\"quarantined\"} 0");
	HAS(t, "gpud_jobs{state=\"running\"} 1");
	free(t);
}

static void test_histogram(void **state)
{
	struct dbq_commit_stats c = { .count = 5, .sum_s = 0.75 };
	char *t;
	const char *p, *q;

	(void)state;
	for (int i = 0; i < DBQ_COMMIT_BUCKETS; i++) {
		c.bound[i] = 0.001 * (i + 1);
		c.le[i] = i < 2 ? 1 : i < 6 ? 3 : 4;
	}
	t = render(&c);
	HAS(t, "# TYPE gpud_db_commit_seconds histogram");
	HAS(t, "gpud_db_commit_seconds_bucket{le=\"0.001\"} 1");
	HAS(t, "gpud_db_commit_seconds_bucket{le=\"0.003\"} 3");
	HAS(t, "gpud_db_commit_seconds_bucket{le=\"0.012\"} 4");
	HAS(t, "gpud_db_commit_seconds_bucket{le=\"+Inf\"} 5");
	HAS(t, "gpud_db_commit_seconds_sum 0.75");
	HAS(t, "gpud_db_commit_seconds_count 5");
	/* Buckets in order, +Inf last. */
	p = strstr(t, "le=\"0.012\"");
	q = strstr(t, "le=\"+Inf\"");
	assert_true(p && q && p < q);
	free(t);
}

static void test_counters(void **state)
{
	char *t = render_full(), line[160];

	(void)state;
	/* Each row its sample; a metric's HELP and TYPE once. */
	for (size_t i = 0; i < METRICS_COUNTERS; i++) {
		const struct metrics_counter *c = &metrics_counters[i];

		snprintf(line, sizeof(line), "%s%s%s%s %zu\n", c->metric,
			 c->label ? "{" : "", c->label ? c->label : "",
			 c->label ? "}" : "", 10 + i);
		assert_non_null(strstr(t, line));
		snprintf(line, sizeof(line), "# TYPE %s counter\n", c->metric);
		assert_non_null(strstr(t, line));
		assert_null(strstr(strstr(t, line) + 1, line));
		assert_true(strlen(c->metric) > 6 &&
			    strcmp(c->metric + strlen(c->metric) - 6, "_total") == 0);
	}
	HAS(t, "gpud_results_verified_total 19");
	HAS(t, "gpud_results_rejected_total{why=\"verification\"} 20");
	HAS(t, "gpud_last_check_timestamp_seconds 199000");
	HASNT(t, "gpud_last_backup_timestamp_seconds");
	HAS(t, "gpud_db_bytes 5000");
	HAS(t, "gpud_storage_error 1");
	free(t);
}

static void test_process(void **state)
{
	struct dbq_commit_stats c = { .count = 0 };
	char *t = render_full(), *u = render(&c);

	(void)state;
	HAS(t, "# TYPE process_start_time_seconds gauge");
	HAS(t, "process_start_time_seconds 1700000000.5");
	HAS(t, "# TYPE process_cpu_seconds_total counter");
	HAS(t, "process_cpu_seconds_total 12.25");
	HAS(t, "process_resident_memory_bytes 409600");
	HAS(t, "process_virtual_memory_bytes 1073741824");
	HAS(t, "process_open_fds 17");
	HAS(t, "process_max_fds 1024");
	/* Left out when not read; the storage gauge is always there. */
	HASNT(u, "process_");
	HASNT(u, "gpud_leases_granted_total");
	HAS(u, "gpud_storage_error 0");
	free(t);
	free(u);
}

/* This process's own figures, read from /proc. */
static void test_procstat_self(void **state)
{
	struct procstat p;
	char *big = malloc(8 << 20);

	(void)state;
	assert_non_null(big);
	memset(big, 1, 8 << 20);  /* resident */
	assert_int_equal(procstat_read(&p), 0);
	assert_true(p.start_time > 1.5e9 && p.start_time <= (double)time(NULL) + 1);
	assert_true(p.cpu_seconds >= 0);
	assert_true(p.resident_bytes >= 8u << 20);
	assert_true(p.virtual_bytes >= p.resident_bytes);
	assert_true(p.open_fds >= 3);
	free(big);
}

/* Each family's samples follow its own TYPE line, none elsewhere. */
static void test_families_whole(void **state)
{
	struct dbq_commit_stats c = { .count = 0 };
	char *t = render(&c), *line, *save = NULL;
	char current[128] = "";

	(void)state;
	for (line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# TYPE ", 7) == 0) {
			size_t n = strcspn(line + 7, " ");
			assert_true(n < sizeof(current));
			memcpy(current, line + 7, n);
			current[n] = '\0';
			continue;
		}
		if (line[0] == '#')
			continue;
		size_t n = strlen(current);
		assert_true(n > 0);
		assert_int_equal(strncmp(line, current, n), 0);
		assert_true(strchr("{ _", line[n]) != NULL);
	}
	free(t);
}

UNIT_MAIN(cmocka_unit_test(test_jobs),
	cmocka_unit_test(test_workers),
	cmocka_unit_test(test_no_workers),
	cmocka_unit_test(test_histogram),
	cmocka_unit_test(test_counters),
	cmocka_unit_test(test_process),
	cmocka_unit_test(test_procstat_self),
	cmocka_unit_test(test_families_whole))
