/* page_render.c - the status page's HTML on the server (page_render.h).
 * One FILE (open_memstream) is written top to bottom; every value is
 * escaped by put_text. Elements the tests and the script find carry ids
 * (job-N, worker-N, fig-*, health-*, chart) and data-* attributes with
 * the raw figures. */
#define _GNU_SOURCE /* memmem */
#include "page_render.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "gerr.h"

#define MARKER "<!--gpud:main-->"
#define PLOTS_MAX 16   /* a job's plots listed */

/* ---- text ---- */

static void put_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

static const char *str(const char *s)
{
	return s ? s : "";
}

/* 3 significant digits and an SI prefix: 1.00 G, 54.9 M, 312. */
static void put_human(FILE *f, double n)
{
	static const char *const pre[] = { "", " k", " M", " G", " T", " P", " E" };
	size_t i = 0;

	if (!isfinite(n)) {
		fputs("–", f);
		return;
	}
	while (fabs(n) >= 999.5 && i < sizeof(pre) / sizeof(pre[0]) - 1) {
		n /= 1000;
		i++;
	}
	if (i == 0 && n == floor(n))
		fprintf(f, "%.0f", n);
	else
		fprintf(f, "%.3g%s", n, pre[i]);
}

static void put_bytes(FILE *f, uint64_t b)
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)b;
	size_t i = 0;

	while (v >= 1023.5 && i < sizeof(u) / sizeof(u[0]) - 1) {
		v /= 1024;
		i++;
	}
	fprintf(f, i ? "%.3g %s" : "%.0f %s", v, u[i]);
}

/* 3d 04h, 2h 05m, 4m 09s, 12s. */
static void put_duration(FILE *f, double s)
{
	long long t, d, h, m;

	if (!isfinite(s) || s < 0) {
		fputs("–", f);
		return;
	}
	t = llround(s);
	d = t / 86400;
	h = t % 86400 / 3600;
	m = t % 3600 / 60;
	if (d)
		fprintf(f, "%lldd %02lldh", d, h);
	else if (h)
		fprintf(f, "%lldh %02lldm", h, m);
	else if (m)
		fprintf(f, "%lldm %02llds", m, t % 60);
	else
		fprintf(f, "%llds", t);
}

/* "2026-11-29 10:47:03 UTC" in a <time>, the relative time beside it
 * ("3m 12s ago", "in 5m 00s"); "–" for 0 or less. */
static void put_when(FILE *f, double at, double now)
{
	char iso[32], shown[32];
	struct tm tm;
	time_t t = (time_t)at;

	if (!(at > 0) || !gmtime_r(&t, &tm)) {
		fputs("–", f);
		return;
	}
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
	strftime(shown, sizeof(shown), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(f, "<time datetime=\"%s\">%s</time> <span class=\"rel\">(", iso, shown);
	if (at <= now) {
		put_duration(f, now - at);
		fputs(" ago)</span>", f);
	} else {
		fputs("in ", f);
		put_duration(f, at - now);
		fputs(")</span>", f);
	}
}

static int finished(const char *state)
{
	return strcmp(state, "done") == 0 || strcmp(state, "failed") == 0 ||
	       strcmp(state, "cancelled") == 0;
}

/* ---- plots ---- */

static int plot_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 5 || n > 64 || s[0] == '.' || strcmp(s + n - 4, ".svg") != 0)
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789._-") == n;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* The job's plots (as the server serves them: regular files, names of
 * [A-Za-z0-9._-] ending .svg), sorted, at most PLOTS_MAX; returns n. */
static size_t list_plots(const char *results, int64_t job, char names[][72])
{
	char dir[4300];
	struct dirent *e;
	size_t n = 0;
	DIR *dp;

	if (!results)
		return 0;
	snprintf(dir, sizeof(dir), "%s/job-%" PRId64, results, job);
	if (!(dp = opendir(dir)))
		return 0;
	while (n < PLOTS_MAX && (e = readdir(dp))) {
		struct stat st;

		if (plot_name_ok(e->d_name) &&
		    fstatat(dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			snprintf(names[n++], 72, "%s", e->d_name);
	}
	closedir(dp);
	qsort(names, n, 72, cmp_name);
	return n;
}

/* ---- pieces ---- */

static void put_state(FILE *f, const char *state)
{
	fputs("<span class=\"state ", f);
	put_text(f, state);
	fputs("\">", f);
	put_text(f, state);
	fputs("</span>", f);
}

static void put_job_link(FILE *f, int64_t id, const char *text)
{
	fprintf(f, "<a href=\"/job/%" PRId64 "\">", id);
	if (text)
		put_text(f, text);
	else
		fprintf(f, "%" PRId64, id);
	fputs("</a>", f);
}

static double pct_of(const struct ctlcmd_job *j)
{
	if (j->total_units <= 0)
		return finished(str(j->state)) && strcmp(str(j->state), "done") == 0 ? 100 : 0;
	return fmin(100.0, 100.0 * (double)j->units_done / (double)j->total_units);
}

static void put_progress(FILE *f, const struct ctlcmd_job *j)
{
	double pct = pct_of(j);

	fprintf(f, "<span class=\"pct\">%.1f%%</span><span class=\"bar\">"
		"<span class=\"%s\" style=\"width:%.1f%%\"></span></span>"
		"<span class=\"units\">", pct, str(j->state), pct);
	put_human(f, (double)j->units_done);
	fputs(" / ", f);
	put_human(f, (double)j->total_units);
	fputc(' ', f);
	put_text(f, j->unit_name ? j->unit_name : "units");
	if (j->units_running > 0) {
		fputs(" (+", f);
		put_human(f, (double)j->units_running);
		fputs(" running)", f);
	}
	fputs("</span>", f);
}

static double job_elapsed(const struct ctlcmd_job *j, double now)
{
	double from = j->started_at > 0 ? j->started_at : j->created_at;

	if (j->elapsed_s >= 0)
		return j->elapsed_s;
	if (!(from > 0))
		return -1;
	return (j->finished_at > 0 ? j->finished_at : now) - from;
}

static void put_rate(FILE *f, double rate, const char *unit)
{
	if (!(rate > 0)) {
		fputs("–", f);
		return;
	}
	put_human(f, rate);
	fputs(" ", f);
	put_text(f, unit ? unit : "units");
	fputs("/s", f);
}

/* ---- the main page ---- */

/* The strip's figure: <div class="fig" id="fig-ID" data-value="V">. */
static void fig(FILE *f, const char *id, const char *cls, int64_t v,
		const char *label)
{
	fprintf(f, "<div class=\"fig %s\" id=\"fig-%s\" data-value=\"%" PRId64
		"\"><b>%" PRId64 "</b><span>%s</span></div>", cls, id, v, v, label);
}

static void strip(FILE *f, const struct page_input *in)
{
	static const char *const states[] = { "running", "queued", "paused",
					       "done", "failed", "cancelled" };
	const struct ctlcmd_reply *st = in->status;
	const char *units[16];
	double rates[16];
	size_t nu = 0, i, k;
	int64_t online = 0, quar = 0, known = 0;

	fputs("<section class=\"strip\" id=\"strip\">", f);
	for (k = 0; k < sizeof(states) / sizeof(states[0]); k++) {
		int64_t n = 0;

		for (i = 0; i < st->n_jobs; i++)
			n += strcmp(str(st->jobs[i].state), states[k]) == 0;
		fig(f, states[k], states[k], n, states[k]);
	}
	/* The total rate, per unit: battles and positions do not add. */
	for (i = 0; i < st->n_jobs; i++) {
		const struct ctlcmd_job *j = &st->jobs[i];
		const char *u = j->unit_name ? j->unit_name : "units";

		if (finished(str(j->state)) || !(j->rate > 0))
			continue;
		for (k = 0; k < nu && strcmp(units[k], u) != 0; k++)
			;
		if (k == nu && nu < 16) {
			units[nu] = u;
			rates[nu++] = 0;
		}
		if (k < nu)
			rates[k] += j->rate;
	}
	fputs("<div class=\"fig wide\" id=\"fig-rate\"><b>", f);
	if (!nu)
		fputs("–", f);
	for (k = 0; k < nu; k++) {
		if (k)
			fputs(" · ", f);
		put_rate(f, rates[k], units[k]);
	}
	fputs("</b><span>total rate</span></div>", f);
	for (i = 0; in->workers && i < in->workers->n_workers; i++) {
		const struct ctlcmd_worker *w = &in->workers->workers[i];

		known++;
		online += w->online != 0;
		quar += w->quarantined != 0;
	}
	fig(f, "online", "online", online, "workers online");
	fprintf(f, "<div class=\"fig\" id=\"fig-known\" data-value=\"%" PRId64
		"\"><b>%" PRId64 "</b><span>workers known</span></div>", known, known);
	fig(f, "quarantined", quar ? "failed" : "", quar, "quarantined");
	fputs("</section>\n", f);
	if (st->hidden > 0)
		fprintf(f, "<p class=\"note\">Jobs by state count the jobs listed: "
			"unfinished ones and those finished in the last day (%" PRId64
			" older not counted).</p>\n", st->hidden);
}

static void health(FILE *f, const struct page_input *in)
{
	const struct page_health *h = in->health;

	fputs("<section class=\"panel\" id=\"health\"><h2>Server</h2><dl>", f);
	fputs("<dt>Up</dt><dd id=\"health-uptime\">", f);
	if (h->start_time > 0) {
		put_duration(f, in->now - h->start_time);
		fputs(", since ", f);
		put_when(f, h->start_time, in->now);
	} else {
		fputs("–", f);
	}
	fputs("</dd><dt>Database</dt><dd id=\"health-db\">", f);
	if (h->db_known)
		put_bytes(f, h->db_bytes);
	else
		fputs("–", f);
	fputs("</dd><dt>Blobs</dt><dd id=\"health-blobs\">", f);
	if (h->blobs_known) {
		put_bytes(f, h->blob_bytes);
		fprintf(f, " in %" PRIu64 " file%s", h->blob_files,
			h->blob_files == 1 ? "" : "s");
	} else {
		fputs("not measured yet", f);
	}
	fputs("</dd><dt>Last backup</dt><dd id=\"health-backup\">", f);
	if (h->backup_at > 0) {
		put_when(f, h->backup_at, in->now);
		fputs(": ", f);
		put_text(f, h->backup_detail);
	} else {
		fputs("none recorded (gpuctl backup DIR)", f);
	}
	fputs("</dd><dt>Last check</dt><dd id=\"health-check\">", f);
	if (h->check_at > 0) {
		put_when(f, h->check_at, in->now);
		fputs(": ", f);
		put_text(f, h->check_detail);
	} else {
		fputs("none recorded (gpuctl check)", f);
	}
	fputs("</dd><dt>Storage</dt><dd id=\"health-storage\"", f);
	if (h->storage_msg) {
		fputs(" class=\"bad\">", f);
		put_text(f, h->storage_msg);
	} else {
		fputs(">writable", f);
	}
	fputs("</dd></dl></section>\n", f);
}

/* Verified results per bucket as bars (refuted ones on top in red), with
 * hour ticks in UTC; the units verified in the window per workload. */
static void chart(FILE *f, const struct page_input *in)
{
	const struct store_event_tally *t = in->tally;
	const double W = 640, H = 150, L = 44, B = 26, T = 10;
	double bw = (W - L - 8) / (double)t->n_buckets;
	uint64_t max = 0, total = 0, bad = 0;
	size_t i, k;

	for (i = 0; i < t->n_buckets; i++) {
		uint64_t v = t->verified[i] + t->refuted[i];

		max = v > max ? v : max;
		total += t->verified[i];
		bad += t->refuted[i];
	}
	fputs("<section class=\"panel\" id=\"throughput\"><h2>Throughput, last ", f);
	put_duration(f, t->bucket_s * (double)t->n_buckets);
	fprintf(f, "</h2><svg id=\"chart\" role=\"img\" viewBox=\"0 0 %.0f %.0f\" "
		"width=\"%.0f\" height=\"%.0f\" data-verified=\"%" PRIu64 "\" "
		"data-refuted=\"%" PRIu64 "\"><title>results verified per ", W, H,
		W, H, total, bad);
	put_duration(f, t->bucket_s);
	fputs("</title>", f);
	if (max == 0)
		max = 1;
	/* The axis: 0 and the top's count. */
	fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" class=\"axis\"/>"
		"<text x=\"%.0f\" y=\"%.0f\" class=\"tick\" text-anchor=\"end\">0</text>"
		"<text x=\"%.0f\" y=\"%.0f\" class=\"tick\" text-anchor=\"end\">%" PRIu64 "</text>",
		L, H - B, W - 8, H - B, L - 4, H - B + 4, L - 4, T + 8, max);
	for (i = 0; i < t->n_buckets; i++) {
		double x = L + bw * (double)i, hv, hr;
		double at = t->since + t->bucket_s * (double)i;
		time_t tt = (time_t)at;
		struct tm tm;

		hv = (H - B - T) * (double)t->verified[i] / (double)max;
		hr = (H - B - T) * (double)t->refuted[i] / (double)max;
		if (t->verified[i])
			fprintf(f, "<rect class=\"ok\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"%.1f\"><title>%" PRIu64 " verified</title></rect>",
				x + 1, H - B - hv, bw - 2, hv, t->verified[i]);
		if (t->refuted[i])
			fprintf(f, "<rect class=\"bad\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"%.1f\"><title>%" PRIu64 " refuted</title></rect>",
				x + 1, H - B - hv - hr, bw - 2, hr, t->refuted[i]);
		if (gmtime_r(&tt, &tm) && tm.tm_min < t->bucket_s / 60 &&
		    fmod(at, 3600) < t->bucket_s)
			fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" class=\"tick\" "
				"text-anchor=\"middle\">%02d:00</text>", x, H - 8, tm.tm_hour);
	}
	fputs("</svg><p class=\"note\" id=\"throughput-units\">", f);
	fprintf(f, "%" PRIu64 " result%s verified, %" PRIu64 " refuted (bars: per ",
		total, total == 1 ? "" : "s", bad);
	put_duration(f, t->bucket_s);
	fputs(", hours in UTC)", f);
	for (k = 0; k < t->n_wl; k++) {
		uint64_t u = 0;
		const char *unit = NULL;

		for (i = 0; i < t->n_buckets; i++)
			u += t->units[k][i];
		for (i = 0; i < in->status->n_jobs && !unit; i++)
			if (strcmp(str(in->status->jobs[i].workload), t->wl[k]) == 0)
				unit = in->status->jobs[i].unit_name;
		fputs(k ? ", " : "; units verified: ", f);
		put_human(f, (double)u);
		fputc(' ', f);
		put_text(f, unit ? unit : "units");
		fputs(" (", f);
		put_text(f, t->wl[k]);
		fputc(')', f);
	}
	fputs("</p></section>\n", f);
}

static void jobs_table(FILE *f, const struct page_input *in)
{
	const struct ctlcmd_reply *st = in->status;

	fprintf(f, "<h2>Jobs <span class=\"count\">%zu listed", st->n_jobs);
	if (st->hidden > 0)
		fprintf(f, "; %" PRId64 " finished more than a day ago not shown "
			"(gpuctl history)", st->hidden);
	fputs("</span></h2>\n<table id=\"jobs\"><thead><tr><th>ID</th><th>Name</th>"
	      "<th>Workload</th><th>State</th><th>Progress</th><th>Rate</th>"
	      "<th>Submitted</th><th>Elapsed</th><th>ETA</th><th>Reason</th>"
	      "</tr></thead><tbody>\n", f);
	if (!st->n_jobs)
		fputs("<tr><td colspan=\"10\" class=\"empty\">No jobs. Submit one "
		      "with gpuctl submit.</td></tr>\n", f);
	for (size_t i = 0; i < st->n_jobs; i++) {
		const struct ctlcmd_job *j = &st->jobs[i];
		int fin = finished(str(j->state));

		fprintf(f, "<tr id=\"job-%" PRId64 "\" data-state=\"", j->id);
		put_text(f, j->state);
		fprintf(f, "\" data-done=\"%" PRId64 "\" data-total=\"%" PRId64
			"\"><td class=\"num\">", j->units_done, j->total_units);
		put_job_link(f, j->id, NULL);
		fputs("</td><td>", f);
		put_job_link(f, j->id, j->name ? j->name : "–");
		fputs("</td><td>", f);
		put_text(f, j->workload);
		fputs("</td><td>", f);
		put_state(f, str(j->state));
		fputs("</td><td class=\"progress\">", f);
		put_progress(f, j);
		fputs("</td><td class=\"num\">", f);
		put_rate(f, fin ? j->avg_rate : j->rate, j->unit_name);
		fputs("</td><td class=\"when\">", f);
		put_when(f, j->submitted_at > 0 ? j->submitted_at : j->created_at, in->now);
		fputs("</td><td class=\"num\">", f);
		put_duration(f, job_elapsed(j, in->now));
		fputs("</td><td class=\"num\">", f);
		if (fin || !(j->eta_s > 0)) {
			fputs("–", f);
		} else {
			put_duration(f, j->eta_s);
			fputs("<br><span class=\"rel\">", f);
			put_when(f, in->now + j->eta_s, in->now);
			fputs("</span>", f);
		}
		fputs("</td><td class=\"reason\">", f);
		put_text(f, j->reason);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

static void workers_table(FILE *f, const struct page_input *in)
{
	size_t n = in->workers ? in->workers->n_workers : 0;
	size_t online = 0;

	for (size_t i = 0; i < n; i++)
		online += in->workers->workers[i].online != 0;
	fprintf(f, "<h2>Workers <span class=\"count\">%zu online of %zu</span></h2>\n"
		"<table id=\"workers\"><thead><tr><th>Name</th><th>Device</th>"
		"<th>Host</th><th>State</th><th>Job</th><th>Rate</th>"
		"<th>Leases done</th><th>Last seen</th></tr></thead><tbody>\n",
		online, n);
	if (!n)
		fputs("<tr><td colspan=\"8\" class=\"empty\">No worker has "
		      "connected.</td></tr>\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct ctlcmd_worker *w = &in->workers->workers[i];
		const char *state = w->quarantined ? "quarantined" :
				    w->online ? "online" : "offline";

		fprintf(f, "<tr id=\"worker-%" PRId64 "\" data-state=\"%s\"%s><td>",
			w->id, state, w->online ? "" : " class=\"off\"");
		put_text(f, w->name);
		fputs("</td><td>", f);
		put_text(f, w->device ? w->device : "–");
		fputs("</td><td>", f);
		put_text(f, w->place[0] ? w->place[0] : "–");
		fprintf(f, "</td><td><span class=\"state %s\">%s</span></td><td>",
			w->quarantined ? "failed" : w->online ? "running" : "", state);
		if (w->job > 0)
			put_job_link(f, w->job, NULL);
		else
			fputs("–", f);
		fputs("</td><td class=\"num\">", f);
		if (w->online && w->job > 0)
			put_rate(f, w->rate, w->job_unit);
		else
			fputs("–", f);
		fprintf(f, "</td><td class=\"num\">%" PRId64 "</td><td class=\"when\">",
			w->leases_done);
		if (w->online)
			fputs("connected", f);
		else
			put_when(f, w->last_seen, in->now);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

static int by_finish_desc(const void *a, const void *b)
{
	double x = (*(const struct ctlcmd_job *const *)a)->finished_at;
	double y = (*(const struct ctlcmd_job *const *)b)->finished_at;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The first plot of each of the PAGE_RECENT_PLOTS most recently finished
 * jobs that have one, and a link to the list of the rest. */
static void recent_plots(FILE *f, const struct page_input *in)
{
	const struct ctlcmd_reply *st = in->status;
	const struct ctlcmd_job *pick[PAGE_RECENT_PLOTS], **fin;
	char names[PLOTS_MAX][72];
	size_t np = 0, with = 0;

	fin = calloc(st->n_jobs + 1, sizeof(*fin));
	for (size_t i = 0; fin && i < st->n_jobs; i++)
		if (finished(str(st->jobs[i].state)))
			fin[with++] = &st->jobs[i];
	if (fin)
		qsort(fin, with, sizeof(*fin), by_finish_desc);
	for (size_t i = 0; fin && i < with && np < PAGE_RECENT_PLOTS; i++)
		if (list_plots(in->results_dir, fin[i]->id, names) > 0)
			pick[np++] = fin[i];
	free(fin);
	fputs("<h2>Recent plots</h2>\n<div id=\"plots\">", f);
	if (!np)
		fputs("<div class=\"empty\">No plots yet: they appear when a job "
		      "finishes.</div>", f);
	for (size_t i = 0; i < np; i++) {
		const struct ctlcmd_job *j = pick[i];
		size_t n = list_plots(in->results_dir, j->id, names);

		fprintf(f, "<figure><a href=\"/job/%" PRId64 "\"><img src=\"/results/"
			"job-%" PRId64 "/", j->id, j->id);
		put_text(f, names[0]);
		fprintf(f, "\" alt=\"job %" PRId64 "'s plot ", j->id);
		put_text(f, names[0]);
		fputs("\" width=\"600\"></a><figcaption>", f);
		put_job_link(f, j->id, NULL);
		if (j->name) {
			fputc(' ', f);
			put_text(f, j->name);
		}
		fputs(" · ", f);
		put_text(f, j->workload);
		fputs(" · finished ", f);
		put_when(f, j->finished_at, in->now);
		if (n > 1)
			fprintf(f, " · <a href=\"/job/%" PRId64 "\">%zu plots</a>", j->id, n);
		fputs("</figcaption></figure>", f);
	}
	fputs("</div>\n", f);
	fprintf(f, "<p class=\"note\"><a href=\"/plots\" id=\"all-plots\">Every "
		"finished job's plots</a> (%zu finished listed here; each job's page "
		"shows its plots at full size).</p>\n", with);
}

static void main_page(FILE *f, const struct page_input *in)
{
	strip(f, in);
	fputs("<div class=\"row\">", f);
	if (in->health)
		health(f, in);
	if (in->tally && in->tally->n_buckets)
		chart(f, in);
	fputs("</div>\n", f);
	jobs_table(f, in);
	workers_table(f, in);
	recent_plots(f, in);
}

/* ---- /plots ---- */

static void plots_page(FILE *f, const struct page_input *in)
{
	const struct ctlcmd_reply *st = in->status;
	char names[PLOTS_MAX][72];
	size_t shown = 0;

	fputs("<p><a href=\"/\">← the status page</a></p><h2>Finished jobs' "
	      "plots</h2>\n<table id=\"plot-list\"><thead><tr><th>Job</th>"
	      "<th>Name</th><th>Workload</th><th>Finished</th><th>Plots</th>"
	      "</tr></thead><tbody>\n", f);
	/* Newest first: the reply is in id order. */
	for (size_t i = st->n_jobs; i-- > 0;) {
		const struct ctlcmd_job *j = &st->jobs[i];
		size_t n;

		if (!finished(str(j->state)) ||
		    !(n = list_plots(in->results_dir, j->id, names)))
			continue;
		shown++;
		fprintf(f, "<tr id=\"plots-%" PRId64 "\"><td class=\"num\">", j->id);
		put_job_link(f, j->id, NULL);
		fputs("</td><td>", f);
		put_text(f, j->name ? j->name : "–");
		fputs("</td><td>", f);
		put_text(f, j->workload);
		fputs("</td><td class=\"when\">", f);
		put_when(f, j->finished_at, in->now);
		fputs("</td><td>", f);
		for (size_t k = 0; k < n; k++) {
			fprintf(f, "%s<a href=\"/results/job-%" PRId64 "/", k ? ", " : "", j->id);
			put_text(f, names[k]);
			fputs("\">", f);
			put_text(f, names[k]);
			fputs("</a>", f);
		}
		fputs("</td></tr>\n", f);
	}
	if (!shown)
		fputs("<tr><td colspan=\"5\" class=\"empty\">No finished job has "
		      "plots.</td></tr>\n", f);
	fputs("</tbody></table>\n", f);
}

/* ---- /job/N ---- */

static void rec_start(FILE *f, const char *id, const char *label)
{
	fprintf(f, "<tr id=\"rec-%s\"><th>%s</th><td>", id, label);
}

static void put_owner(FILE *f, const struct page_input *in)
{
	const json_t *list = ctlcmd_reply_list(CTLCMD_STATUS, in->status_json);
	const json_t *o = json_is_array(list) ?
		json_object_get(json_array_get(list, 0), "owner") : NULL;

	if (json_is_string(o)) {
		rec_start(f, "owner", "Owner");
		put_text(f, json_string_value(o));
		fputs("</td></tr>\n", f);
	}
}

static void job_page(FILE *f, const struct page_input *in)
{
	const struct ctlcmd_job *j = NULL;
	char names[PLOTS_MAX][72], *params = NULL;
	size_t n;

	for (size_t i = 0; i < in->status->n_jobs; i++)
		if (in->status->jobs[i].id == in->job)
			j = &in->status->jobs[i];
	fputs("<p><a href=\"/\">← all jobs</a></p>\n", f);
	if (!j) {
		fprintf(f, "<h2>No job %" PRId64 "</h2>\n", in->job);
		return;
	}
	fprintf(f, "<h2 id=\"job-title\" data-job=\"%" PRId64 "\">Job %" PRId64,
		j->id, j->id);
	if (j->name) {
		fputs(" · ", f);
		put_text(f, j->name);
	}
	fputs("</h2>\n<table class=\"record\" id=\"record\">\n", f);
	rec_start(f, "workload", "Workload");
	put_text(f, j->workload);
	fputs("</td></tr>\n", f);
	rec_start(f, "state", "State");
	put_state(f, str(j->state));
	if (j->reason) {
		fputs(" <span class=\"reason\">", f);
		put_text(f, j->reason);
		fputs("</span>", f);
	}
	fputs("</td></tr>\n", f);
	put_owner(f, in);
	if (j->params && (params = json_dumps(j->params, JSON_COMPACT | JSON_SORT_KEYS))) {
		rec_start(f, "params", "Parameters");
		fputs("<code>", f);
		put_text(f, params);
		fputs("</code></td></tr>\n", f);
		free(params);
	}
	if (j->priority != INT64_MIN) {
		rec_start(f, "priority", "Priority");
		fprintf(f, "%" PRId64 "</td></tr>\n", j->priority);
	}
	rec_start(f, "submitted", "Submitted");
	put_when(f, j->submitted_at > 0 ? j->submitted_at : j->created_at, in->now);
	fputs("</td></tr>\n", f);
	rec_start(f, "started", "Started");
	put_when(f, j->started_at, in->now);
	fputs("</td></tr>\n", f);
	rec_start(f, "ended", "Ended");
	put_when(f, j->finished_at, in->now);
	fputs("</td></tr>\n", f);
	rec_start(f, "elapsed", "Elapsed");
	put_duration(f, job_elapsed(j, in->now));
	fputs("</td></tr>\n", f);
	rec_start(f, "units", "Units");
	put_progress(f, j);
	fputs("; verified ", f);
	put_human(f, (double)j->units_verified);
	fprintf(f, " (%" PRId64 " exactly)</td></tr>\n", j->units_verified);
	rec_start(f, "rate", finished(str(j->state)) ? "Average rate" : "Rate");
	put_rate(f, finished(str(j->state)) ? j->avg_rate : j->rate, j->unit_name);
	if (!finished(str(j->state)) && j->eta_s > 0) {
		fputs("; ETA ", f);
		put_duration(f, j->eta_s);
		fputs(", ", f);
		put_when(f, in->now + j->eta_s, in->now);
	}
	fputs("</td></tr>\n", f);
	rec_start(f, "leases", "Leases");
	for (int s = 0; s < CTLCMD_LEASE_STATES; s++)
		fprintf(f, "%s<span data-state=\"%s\">%s %" PRId64 "</span>",
			s ? " · " : "", ctlcmd_lease_state_name(s),
			ctlcmd_lease_state_name(s), j->leases[s]);
	fputs("</td></tr>\n", f);
	if (j->n_workers) {
		rec_start(f, "holders", "Held by");
		for (size_t i = 0; i < j->n_workers; i++) {
			if (i)
				fputs(", ", f);
			put_text(f, j->workers[i]);
		}
		fputs("</td></tr>\n", f);
	}
	if (j->check) {
		rec_start(f, "check", "Verification");
		put_text(f, j->check);
		if (j->verify_failures >= 0)
			fprintf(f, "; %" PRId64 " result%s refuted", j->verify_failures,
				j->verify_failures == 1 ? "" : "s");
		fputs("</td></tr>\n", f);
	}
	if (j->damaged) {
		rec_start(f, "damaged", "Damaged");
		fputs("<span class=\"bad\">", f);
		put_text(f, j->damaged);
		fputs("</span></td></tr>\n", f);
	}
	fputs("</table>\n", f);
	n = list_plots(in->results_dir, j->id, names);
	if (n) {
		fputs("<h2>Plots</h2>\n<div id=\"job-plots\">", f);
		for (size_t i = 0; i < n; i++) {
			fprintf(f, "<figure class=\"full\"><a href=\"/results/job-%" PRId64
				"/", j->id);
			put_text(f, names[i]);
			fprintf(f, "\"><img src=\"/results/job-%" PRId64 "/", j->id);
			put_text(f, names[i]);
			fputs("\" alt=\"", f);
			put_text(f, names[i]);
			fputs("\"></a><figcaption>", f);
			put_text(f, names[i]);
			fputs("</figcaption></figure>", f);
		}
		fputs("</div>\n", f);
	}
	fputs("<h2>Answer</h2>\n", f);
	if (in->answer) {
		size_t len = strlen(in->answer);

		fputs("<pre id=\"answer\">", f);
		if (len > PAGE_ANSWER_MAX) {
			char *cut = strndup(in->answer, PAGE_ANSWER_MAX);

			put_text(f, cut);
			free(cut);
			fputs("\n… (cut: gpuctl result shows it whole)", f);
		} else {
			put_text(f, in->answer);
		}
		fputs("</pre>\n", f);
	} else {
		fputs("<p class=\"empty\" id=\"answer\">", f);
		put_text(f, in->answer_error ? in->answer_error : "No answer yet.");
		fputs("</p>\n", f);
	}
	fprintf(f, "<h2>Events <span class=\"count\">the newest %zu</span></h2>\n"
		"<table id=\"events\"><thead><tr><th>#</th><th>Time</th><th>Event</th>"
		"<th>Lease</th><th>Epoch</th><th>Worker</th><th>Detail</th></tr>"
		"</thead><tbody>\n", in->n_events);
	if (!in->n_events)
		fputs("<tr><td colspan=\"7\" class=\"empty\">No events.</td></tr>\n", f);
	for (size_t i = 0; i < in->n_events; i++) {
		const struct store_event_row *e = &in->events[i];

		fprintf(f, "<tr><td class=\"num\">%" PRId64 "</td><td class=\"when\">", e->id);
		put_when(f, e->ts, in->now);
		fputs("</td><td>", f);
		put_text(f, e->kind);
		fputs("</td><td class=\"num\">", f);
		if (e->lease_id)
			fprintf(f, "%" PRId64 "</td><td class=\"num\">%" PRId64,
				e->lease_id, e->epoch);
		else
			fputs("–</td><td class=\"num\">–", f);
		fputs("</td><td class=\"num\">", f);
		if (e->worker_id)
			fprintf(f, "%" PRId64, e->worker_id);
		else
			fputs("–", f);
		fputs("</td><td class=\"reason\">", f);
		put_text(f, e->detail);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

int page_render(const struct page_input *in, const char *tmpl, size_t tmpl_len,
		char **ret_text, size_t *ret_len)
{
	const char *mark = memmem(tmpl, tmpl_len, MARKER, strlen(MARKER));
	char *text = NULL;
	size_t len = 0, before;
	FILE *f;

	if (!mark)
		return GERR_INVAL;
	if (!(f = open_memstream(&text, &len)))
		return GERR_NOMEM;
	before = (size_t)(mark - tmpl);
	fwrite(tmpl, 1, before, f);
	fputs("<header><h1><a href=\"/\">gpud</a></h1><span class=\"meta\" id=\"meta\">gpud ", f);
	put_text(f, in->version);
	fputs(" · rendered ", f);
	put_when(f, in->now, in->now);
	fprintf(f, "</span></header>\n<div id=\"error\"></div>\n<main id=\"content\" "
		"data-now=\"%.3f\" data-page=\"%s\">\n", in->now,
		in->kind == PAGE_JOB ? "job" : in->kind == PAGE_PLOTS ? "plots" : "main");
	if (in->kind == PAGE_JOB)
		job_page(f, in);
	else if (in->kind == PAGE_PLOTS)
		plots_page(f, in);
	else
		main_page(f, in);
	fputs("</main>\n", f);
	fwrite(mark + strlen(MARKER), 1, tmpl_len - before - strlen(MARKER), f);
	if (fclose(f)) {
		free(text);
		return GERR_NOMEM;
	}
	*ret_text = text;
	*ret_len = len;
	return 0;
}
