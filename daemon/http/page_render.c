/* page_render.c - the status page's HTML on the server (page_render.h):
 * the main page and /plots here, a job's page in page_job.c, the values
 * and pieces both write in page_text.c. One FILE (open_memstream) is
 * written top to bottom; every value is escaped (page_text). Elements the
 * tests and the script find carry ids (job-N, worker-N, fig-*, health-*,
 * chart) and data-* attributes with the raw figures. */
#define _GNU_SOURCE /* memmem */
#include "page_text.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gerr.h"

#define MARKER "<!--gpud:main-->"

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
			n += strcmp(page_str(st->jobs[i].state), states[k]) == 0;
		fig(f, states[k], states[k], n, states[k]);
	}
	/* The total rate, per unit: battles and positions do not add. */
	for (i = 0; i < st->n_jobs; i++) {
		const struct ctlcmd_job *j = &st->jobs[i];
		const char *u = j->unit_name ? j->unit_name : "units";

		if (page_finished(page_str(j->state)) || !(j->rate > 0))
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
		page_rate(f, rates[k], units[k]);
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
		page_duration(f, in->now - h->start_time);
		fputs(", since ", f);
		page_when(f, h->start_time, in->now);
	} else {
		fputs("–", f);
	}
	fputs("</dd><dt>Database</dt><dd id=\"health-db\">", f);
	if (h->db_known)
		page_bytes(f, h->db_bytes);
	else
		fputs("–", f);
	fputs("</dd><dt>Blobs</dt><dd id=\"health-blobs\">", f);
	if (h->blobs_known) {
		page_bytes(f, h->blob_bytes);
		fprintf(f, " in %" PRIu64 " file%s", h->blob_files,
			h->blob_files == 1 ? "" : "s");
	} else {
		fputs("not measured yet", f);
	}
	fputs("</dd><dt>Last backup</dt><dd id=\"health-backup\">", f);
	if (h->backup_at > 0) {
		page_when(f, h->backup_at, in->now);
		fputs(": ", f);
		page_text(f, h->backup_detail);
	} else {
		fputs("none recorded (gpuctl backup DIR)", f);
	}
	fputs("</dd><dt>Last check</dt><dd id=\"health-check\">", f);
	if (h->check_at > 0) {
		page_when(f, h->check_at, in->now);
		fputs(": ", f);
		page_text(f, h->check_detail);
	} else {
		fputs("none recorded (gpuctl check)", f);
	}
	fputs("</dd><dt>Storage</dt><dd id=\"health-storage\"", f);
	if (h->storage_msg) {
		fputs(" class=\"bad\">", f);
		page_text(f, h->storage_msg);
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
	page_duration(f, t->bucket_s * (double)t->n_buckets);
	fprintf(f, "</h2><svg id=\"chart\" role=\"img\" viewBox=\"0 0 %.0f %.0f\" "
		"width=\"%.0f\" height=\"%.0f\" data-verified=\"%" PRIu64 "\" "
		"data-refuted=\"%" PRIu64 "\"><title>results verified per ", W, H,
		W, H, total, bad);
	page_duration(f, t->bucket_s);
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
	page_duration(f, t->bucket_s);
	fputs(", hours in UTC)", f);
	for (k = 0; k < t->n_wl; k++) {
		uint64_t u = 0;
		const char *unit = NULL;

		for (i = 0; i < t->n_buckets; i++)
			u += t->units[k][i];
		for (i = 0; i < in->status->n_jobs && !unit; i++)
			if (strcmp(page_str(in->status->jobs[i].workload), t->wl[k]) == 0)
				unit = in->status->jobs[i].unit_name;
		fputs(k ? ", " : "; units verified: ", f);
		page_human(f, (double)u);
		fputc(' ', f);
		page_text(f, unit ? unit : "units");
		fputs(" (", f);
		page_text(f, t->wl[k]);
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
	      "<th>User</th><th>Workload</th><th>State</th><th>Progress</th><th>Rate</th>"
	      "<th>Submitted</th><th>Elapsed</th><th>ETA</th><th>Reason</th>"
	      "</tr></thead><tbody>\n", f);
	if (!st->n_jobs)
		fputs("<tr><td colspan=\"11\" class=\"empty\">No jobs. Submit one "
		      "with gpuctl submit.</td></tr>\n", f);
	for (size_t i = 0; i < st->n_jobs; i++) {
		const struct ctlcmd_job *j = &st->jobs[i];
		int fin = page_finished(page_str(j->state));

		fprintf(f, "<tr id=\"job-%" PRId64 "\" data-state=\"", j->id);
		page_text(f, j->state);
		fprintf(f, "\" data-done=\"%" PRId64 "\" data-running=\"%" PRId64
			"\" data-total=\"%" PRId64 "\"><td class=\"num\">",
			j->units_done, j->units_running, j->total_units);
		page_job_link(f, j->id, NULL);
		fputs("</td><td>", f);
		page_job_link(f, j->id, j->name ? j->name : "–");
		fputs("</td><td class=\"user\">", f);
		page_text(f, j->owner ? j->owner : "–");
		fputs("</td><td>", f);
		page_text(f, j->workload);
		fputs("</td><td>", f);
		page_state(f, page_str(j->state));
		fputs("</td><td class=\"progress\">", f);
		page_progress(f, j);
		fputs("</td><td class=\"num\">", f);
		page_rate(f, fin ? j->avg_rate : j->rate, j->unit_name);
		fputs("</td><td class=\"when\">", f);
		page_when(f, j->submitted_at > 0 ? j->submitted_at : j->created_at, in->now);
		fputs("</td><td class=\"num\">", f);
		page_duration(f, page_job_elapsed(j, in->now));
		fputs("</td><td class=\"num\">", f);
		if (fin || !(j->eta_s > 0)) {
			fputs("–", f);
		} else {
			page_duration(f, j->eta_s);
			fputs("<br><span class=\"rel\">", f);
			page_when(f, in->now + j->eta_s, in->now);
			fputs("</span>", f);
		}
		fputs("</td><td class=\"reason\">", f);
		page_text(f, j->reason);
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
				    w->drained ? "drained" :
				    w->online ? "online" : "offline";

		fprintf(f, "<tr id=\"worker-%" PRId64 "\" data-state=\"%s\"%s><td>",
			w->id, state, w->online ? "" : " class=\"off\"");
		page_text(f, w->name);
		fputs("</td><td>", f);
		page_text(f, w->device ? w->device : "–");
		fputs("</td><td>", f);
		page_text(f, w->place[0] ? w->place[0] : "–");
		fprintf(f, "</td><td><span class=\"state %s\">%s</span></td><td>",
			w->quarantined ? "failed" : w->online ? "running" : "", state);
		if (w->job > 0)
			page_job_link(f, w->job, NULL);
		else
			fputs("–", f);
		fputs("</td><td class=\"num\">", f);
		if (w->online && w->job > 0)
			page_rate(f, w->rate, w->job_unit);
		else
			fputs("–", f);
		fprintf(f, "</td><td class=\"num\">%" PRId64 "</td><td class=\"when\">",
			w->leases_done);
		if (w->online)
			fputs("connected", f);
		else
			page_when(f, w->last_seen, in->now);
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
	char names[PAGE_PLOTS_MAX][PAGE_PLOT_NAME];
	size_t np = 0, with = 0;

	fin = calloc(st->n_jobs + 1, sizeof(*fin));
	for (size_t i = 0; fin && i < st->n_jobs; i++)
		if (page_finished(page_str(st->jobs[i].state)))
			fin[with++] = &st->jobs[i];
	if (fin)
		qsort(fin, with, sizeof(*fin), by_finish_desc);
	for (size_t i = 0; fin && i < with && np < PAGE_RECENT_PLOTS; i++)
		if (page_list_plots(in->results_dir, fin[i]->id, names) > 0)
			pick[np++] = fin[i];
	free(fin);
	fputs("<h2>Recent plots</h2>\n<div id=\"plots\">", f);
	if (!np)
		fputs("<div class=\"empty\">No plots yet: they appear when a job "
		      "finishes.</div>", f);
	for (size_t i = 0; i < np; i++) {
		const struct ctlcmd_job *j = pick[i];
		size_t n = page_list_plots(in->results_dir, j->id, names);

		fprintf(f, "<figure><a href=\"/job/%" PRId64 "\"><img src=\"/results/"
			"job-%" PRId64 "/", j->id, j->id);
		page_text(f, names[0]);
		fprintf(f, "\" alt=\"job %" PRId64 "'s plot ", j->id);
		page_text(f, names[0]);
		fputs("\" width=\"600\"></a><figcaption>", f);
		page_job_link(f, j->id, NULL);
		if (j->name) {
			fputc(' ', f);
			page_text(f, j->name);
		}
		fputs(" · ", f);
		page_text(f, j->workload);
		fputs(" · finished ", f);
		page_when(f, j->finished_at, in->now);
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
	char names[PAGE_PLOTS_MAX][PAGE_PLOT_NAME];
	size_t shown = 0;

	fputs("<p><a href=\"/\">← the status page</a></p><h2>Finished jobs' "
	      "plots</h2>\n<table id=\"plot-list\"><thead><tr><th>Job</th>"
	      "<th>Name</th><th>Workload</th><th>Finished</th><th>Plots</th>"
	      "</tr></thead><tbody>\n", f);
	/* Newest first: the reply is in id order. */
	for (size_t i = st->n_jobs; i-- > 0;) {
		const struct ctlcmd_job *j = &st->jobs[i];
		size_t n;

		if (!page_finished(page_str(j->state)) ||
		    !(n = page_list_plots(in->results_dir, j->id, names)))
			continue;
		shown++;
		fprintf(f, "<tr id=\"plots-%" PRId64 "\"><td class=\"num\">", j->id);
		page_job_link(f, j->id, NULL);
		fputs("</td><td>", f);
		page_text(f, j->name ? j->name : "–");
		fputs("</td><td>", f);
		page_text(f, j->workload);
		fputs("</td><td class=\"when\">", f);
		page_when(f, j->finished_at, in->now);
		fputs("</td><td>", f);
		for (size_t k = 0; k < n; k++) {
			fprintf(f, "%s<a href=\"/results/job-%" PRId64 "/", k ? ", " : "", j->id);
			page_text(f, names[k]);
			fputs("\">", f);
			page_text(f, names[k]);
			fputs("</a>", f);
		}
		fputs("</td></tr>\n", f);
	}
	if (!shown)
		fputs("<tr><td colspan=\"5\" class=\"empty\">No finished job has "
		      "plots.</td></tr>\n", f);
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
	page_text(f, in->version);
	fputs(" · rendered ", f);
	page_when(f, in->now, in->now);
	fprintf(f, "</span></header>\n<div id=\"error\"></div>\n<main id=\"content\" "
		"data-now=\"%.3f\" data-page=\"%s\">\n", in->now,
		in->kind == PAGE_JOB ? "job" : in->kind == PAGE_PLOTS ? "plots" : "main");
	if (in->kind == PAGE_JOB)
		page_job(f, in);
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
