/* test_page_render.c - the status page's HTML (daemon/http/page_render.c)
 * from decoded replies: every value escaped (a job named like markup
 * stays text), the strip's figures (jobs by state, the total rate per
 * unit, workers online and quarantined), times absolute beside relative,
 * only the newest finished jobs' plots as thumbnails linking to their
 * page, a job's record and events, and the template's marker required. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gerr.h"
#include "page_render.h"
#include "unit_main.h"

static const char *tmpl = "<html><body><!--gpud:main--><script></script></body></html>";

static const char *status_json =
	"{\"ok\":true,\"jobs\":["
	"{\"id\":1,\"name\":\"job-one\",\"owner\":\"<ann>\",\"reason\":\"<b>x</b>&\\\"'\",\"workload\":\"graveler\",\"unit_name\":\"battles\","
	" \"state\":\"running\",\"total_units\":1000,\"units_done\":250,\"units_running\":50,\"units_verified\":200,"
	" \"rate\":1500.0,\"eta_s\":30,\"submitted_at\":1700000000.0,\"created_at\":1700000000.0,"
	" \"finished_at\":null,\"leases\":{\"pending\":3,\"leased\":1,\"verified\":2}},"
	"{\"id\":2,\"name\":null,\"workload\":\"othello\",\"unit_name\":\"positions\","
	" \"state\":\"running\",\"total_units\":10,\"units_done\":1,\"units_verified\":0,"
	" \"rate\":2.0,\"eta_s\":null,\"finished_at\":null,\"leases\":{}},"
	"{\"id\":3,\"name\":\"a\",\"workload\":\"graveler\",\"unit_name\":\"battles\","
	" \"state\":\"done\",\"total_units\":10,\"units_done\":10,\"units_verified\":10,"
	" \"rate\":0,\"eta_s\":null,\"finished_at\":1700000100.0,\"leases\":{\"verified\":1}},"
	"{\"id\":4,\"name\":\"b\",\"workload\":\"graveler\",\"unit_name\":\"battles\","
	" \"state\":\"done\",\"total_units\":10,\"units_done\":10,\"units_verified\":10,"
	" \"rate\":0,\"eta_s\":null,\"finished_at\":1700000300.0,\"leases\":{\"verified\":1}},"
	"{\"id\":5,\"name\":\"c\",\"workload\":\"graveler\",\"unit_name\":\"battles\","
	" \"state\":\"failed\",\"total_units\":10,\"units_done\":5,\"units_verified\":5,"
	" \"rate\":0,\"eta_s\":null,\"finished_at\":1700000200.0,\"leases\":{\"failed\":1}},"
	"{\"id\":6,\"name\":\"d\",\"workload\":\"graveler\",\"unit_name\":\"battles\","
	" \"state\":\"done\",\"total_units\":10,\"units_done\":10,\"units_verified\":10,"
	" \"rate\":0,\"eta_s\":null,\"finished_at\":1700000400.0,\"leases\":{\"verified\":1}},"
	"{\"id\":7,\"name\":\"e\",\"workload\":\"graveler\",\"unit_name\":\"battles\","
	" \"state\":\"done\",\"total_units\":10,\"units_done\":10,\"units_verified\":10,"
	" \"rate\":0,\"eta_s\":null,\"finished_at\":1700000500.0,\"leases\":{\"verified\":1}},"
	"{\"id\":8,\"name\":\"f\",\"workload\":\"graveler\",\"unit_name\":\"battles\","
	" \"state\":\"done\",\"total_units\":10,\"units_done\":10,\"units_verified\":10,"
	" \"rate\":0,\"eta_s\":null,\"finished_at\":1700000600.0,\"leases\":{\"verified\":1}}"
	"]}";

static const char *workers_json =
	"{\"ok\":true,\"workers\":["
	"{\"id\":1,\"name\":\"w<1>\",\"device\":\"cuda:0\",\"online\":true,\"quarantined\":false,\"job\":1},"
	"{\"id\":2,\"name\":\"w2\",\"device\":\"cpu\",\"online\":true,\"quarantined\":true},"
	"{\"id\":3,\"name\":\"w3\",\"device\":\"cpu\",\"online\":false,\"quarantined\":false,"
	" \"last_seen\":1700000000.0}"
	"]}";

static json_t *decode(enum ctlcmd_id id, const char *text, struct ctlcmd_reply *ret)
{
	json_t *j = json_loads(text, 0, NULL);
	char err[256] = "";

	assert_non_null(j);
	if (ctlcmd_reply_decode(&ctlcmd_table[id], j, ret, err, sizeof(err)))
		fail_msg("%s", err);
	return j;
}

/* A results directory with plots for jobs 3..8 but 5. */
static void make_results(char *dir, size_t n)
{
	char path[512];

	snprintf(dir, n, "/tmp/gpud-page-render-XXXXXX");
	assert_non_null(mkdtemp(dir));
	for (int job = 3; job <= 8; job++) {
		FILE *f;

		if (job == 5)
			continue;
		snprintf(path, sizeof(path), "%s/job-%d", dir, job);
		assert_int_equal(mkdir(path, 0700), 0);
		snprintf(path, sizeof(path), "%s/job-%d/plot.svg", dir, job);
		assert_non_null(f = fopen(path, "w"));
		fputs("<svg/>", f);
		fclose(f);
	}
}

static void rm_results(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static char *render(enum page_kind kind, int64_t job, const char *results,
		    const struct store_event_row *ev, size_t nev)
{
	struct ctlcmd_reply st, wk;
	json_t *stj = decode(CTLCMD_STATUS, status_json, &st);
	json_t *wkj = decode(CTLCMD_WORKERS, workers_json, &wk);
	struct store_event_tally t = { .since = 1700000000.0, .bucket_s = 600, .n_buckets = 6 };
	struct page_health h = { .start_time = 1699990000.0, .db_known = 1, .db_bytes = 3 << 20,
				 .check_at = 1700000050.0, .check_detail = "sound" };
	struct page_input in = {
		.kind = kind, .status = &st, .workers = &wk, .status_json = stj, .job = job,
		.answer = job ? "answer <1>" : NULL, .events = ev, .n_events = nev,
		.tally = &t, .health = &h, .results_dir = results, .now = 1700001000.0,
		.version = "0.1.0",
	};
	char *text = NULL;
	size_t len = 0;

	t.verified[5] = 3;
	t.refuted[5] = 1;
	assert_int_equal(page_render(&in, tmpl, strlen(tmpl), &text, &len), 0);
	assert_int_equal(strlen(text), len);
	ctlcmd_reply_clear(&st);
	ctlcmd_reply_clear(&wk);
	json_decref(stj);
	json_decref(wkj);
	return text;
}

#define HAS(t, s) do { if (!strstr((t), (s))) fail_msg("missing: %s", (s)); } while (0)
#define HASNT(t, s) do { if (strstr((t), (s))) fail_msg("present: %s", (s)); } while (0)

static void test_main(void **state)
{
	char dir[64], *t;

	(void)state;
	make_results(dir, sizeof(dir));
	t = render(PAGE_MAIN, 0, dir, NULL, 0);
	/* The template around the page; markup in names stays text. */
	assert_int_equal(strncmp(t, "<html><body><header>", 20), 0);
	HAS(t, "</main>\n<script></script></body></html>");
	HAS(t, "&lt;b&gt;x&lt;/b&gt;&amp;&quot;&#39;");
	HASNT(t, "<b>x</b>");
	HAS(t, "w&lt;1&gt;");
	/* Who submitted each job; "–" for one from before owners. */
	HAS(t, "<th>Name</th><th>User</th><th>Workload</th>");
	HAS(t, "<td class=\"user\">&lt;ann&gt;</td>");
	HAS(t, "<td class=\"user\">–</td>");
	/* The strip. */
	HAS(t, "id=\"fig-running\" data-value=\"2\"");
	HAS(t, "id=\"fig-done\" data-value=\"5\"");
	HAS(t, "id=\"fig-failed\" data-value=\"1\"");
	HAS(t, "id=\"fig-online\" data-value=\"2\"");
	HAS(t, "id=\"fig-quarantined\" data-value=\"1\"");
	HAS(t, "1.5 k battles/s · 2 positions/s</b>");
	/* Rows, links, times absolute and relative. */
	HAS(t, "<tr id=\"job-1\" data-state=\"running\" data-done=\"250\" data-running=\"50\" data-total=\"1000\">");
	HAS(t, "<a href=\"/job/1\">");
	HAS(t, "2023-11-14 22:13:20 UTC</time> <span class=\"rel\">(16m 40s ago)</span>");
	/* Saved and running: 30% shown, 25% of it saved, the rest pale. */
	HAS(t, "<span class=\"pct\">30.0%</span>");
	HAS(t, "(25.0% saved)");
	HAS(t, "class=\"running unsaved\"");
	HAS(t, "<tr id=\"worker-3\" data-state=\"offline\" class=\"off\">");
	/* Thumbnails: the 4 newest finished jobs with plots, newest first. */
	{
		const char *p = t;
		int want[] = { 8, 7, 6, 4 };
		char img[96];

		for (size_t i = 0; i < 4; i++) {
			snprintf(img, sizeof(img), "<figure><a href=\"/job/%d\"><img src=\"/results/job-%d/plot.svg\"",
				 want[i], want[i]);
			assert_non_null(p = strstr(p, img));
		}
		HASNT(t, "/results/job-3/plot.svg");
		HAS(t, "href=\"/plots\"");
	}
	/* Health and the chart. */
	HAS(t, "id=\"health-db\">3 MiB");
	HAS(t, "id=\"health-check\"><time datetime=\"2023-11-14T22:14:10Z\">");
	HAS(t, "none recorded (gpuctl backup DIR)");
	HAS(t, "data-verified=\"3\" data-refuted=\"1\"");
	free(t);
	rm_results(dir);
}

static void test_job(void **state)
{
	struct store_event_row ev[2] = {
		{ .id = 9, .job_id = 1, .lease_id = 4, .epoch = 2, .worker_id = 1,
		  .ts = 1700000500.0, .kind = "verified", .detail = NULL },
		{ .id = 8, .job_id = 1, .ts = 1700000400.0, .kind = "submit",
		  .detail = "{\"x\":\"<i>\"}" },
	};
	char *t;

	(void)state;
	t = render(PAGE_JOB, 1, NULL, ev, 2);
	HAS(t, "data-page=\"job\"");
	HAS(t, "<h2 id=\"job-title\" data-job=\"1\">Job 1 · job-one</h2>");
	HAS(t, "<span class=\"reason\">&lt;b&gt;x&lt;/b&gt;&amp;&quot;&#39;</span>");
	HAS(t, "<tr id=\"rec-state\"><th>State</th><td><span class=\"state running\">running</span>");
	HAS(t, "<tr id=\"rec-owner\"><th>Owner</th><td>&lt;ann&gt;</td></tr>");
	HAS(t, "<span data-state=\"pending\">pending 3</span> · <span data-state=\"leased\">leased 1</span>");
	HAS(t, "<pre id=\"answer\">answer &lt;1&gt;</pre>");
	HAS(t, "<td>verified</td><td class=\"num\">4</td><td class=\"num\">2</td>");
	HAS(t, "{&quot;x&quot;:&quot;&lt;i&gt;&quot;}");
	HAS(t, "id=\"rec-ended\"><th>Ended</th><td>–</td>");
	free(t);
	t = render(PAGE_JOB, 99, NULL, NULL, 0);
	HAS(t, "<h2>No job 99</h2>");
	free(t);
}

static void test_no_marker(void **state)
{
	struct ctlcmd_reply st = { .n_jobs = 0 };
	struct page_input in = { .kind = PAGE_MAIN, .status = &st, .now = 1, .version = "x" };
	char *text = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(page_render(&in, "<html>", 6, &text, &len), GERR_INVAL);
	assert_null(text);
}

UNIT_MAIN(cmocka_unit_test(test_main),
	cmocka_unit_test(test_job),
	cmocka_unit_test(test_no_marker))
