/* page_job.c - a job's page, /job/N (page_render.h): its record (state,
 * owner when gpud sends one, parameters, times absolute and relative,
 * units, rate, leases by state, holders, verification), its plots at full
 * size, its answer's summary (the result's text, cut at PAGE_ANSWER_MAX)
 * and its newest events. */
#define _GNU_SOURCE /* strndup */
#include "page_text.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

static void rec_start(FILE *f, const char *id, const char *label)
{
	fprintf(f, "<tr id=\"rec-%s\"><th>%s</th><td>", id, label);
}

/* Who submitted it ("–": a job from before gpud kept it). */
static void put_owner(FILE *f, const struct ctlcmd_job *j)
{
	rec_start(f, "owner", "Owner");
	page_text(f, j->owner ? j->owner : "–");
	fputs("</td></tr>\n", f);
}

void page_job(FILE *f, const struct page_input *in)
{
	const struct ctlcmd_job *j = NULL;
	char names[PAGE_PLOTS_MAX][PAGE_PLOT_NAME], *params = NULL;
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
		page_text(f, j->name);
	}
	fputs("</h2>\n<table class=\"record\" id=\"record\">\n", f);
	rec_start(f, "workload", "Workload");
	page_text(f, j->workload);
	fputs("</td></tr>\n", f);
	rec_start(f, "state", "State");
	page_state(f, page_str(j->state));
	if (j->reason) {
		fputs(" <span class=\"reason\">", f);
		page_text(f, j->reason);
		fputs("</span>", f);
	}
	fputs("</td></tr>\n", f);
	put_owner(f, j);
	if (j->params && (params = json_dumps(j->params, JSON_COMPACT | JSON_SORT_KEYS))) {
		rec_start(f, "params", "Parameters");
		fputs("<code>", f);
		page_text(f, params);
		fputs("</code></td></tr>\n", f);
		free(params);
	}
	if (j->priority != INT64_MIN) {
		rec_start(f, "priority", "Priority");
		fprintf(f, "%" PRId64 "</td></tr>\n", j->priority);
	}
	rec_start(f, "submitted", "Submitted");
	page_when(f, j->submitted_at > 0 ? j->submitted_at : j->created_at, in->now);
	fputs("</td></tr>\n", f);
	rec_start(f, "started", "Started");
	page_when(f, j->started_at, in->now);
	fputs("</td></tr>\n", f);
	rec_start(f, "ended", "Ended");
	page_when(f, j->finished_at, in->now);
	fputs("</td></tr>\n", f);
	rec_start(f, "elapsed", "Elapsed");
	page_duration(f, page_job_elapsed(j, in->now));
	fputs("</td></tr>\n", f);
	rec_start(f, "units", "Units");
	page_progress(f, j);
	fputs("; verified ", f);
	page_human(f, (double)j->units_verified);
	fprintf(f, " (%" PRId64 " exactly)</td></tr>\n", j->units_verified);
	rec_start(f, "rate", page_finished(page_str(j->state)) ? "Average rate" : "Rate");
	page_rate(f, page_finished(page_str(j->state)) ? j->avg_rate : j->rate, j->unit_name);
	if (!page_finished(page_str(j->state)) && j->eta_s > 0) {
		fputs("; ETA ", f);
		page_duration(f, j->eta_s);
		fputs(", ", f);
		page_when(f, in->now + j->eta_s, in->now);
	} else if (strcmp(page_str(j->state), "running") == 0 && j->rate > 0) {
		/* gpud sends none until its smoothed rate is steady. */
		fputs("; ETA when the rate is steady", f);
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
			page_text(f, j->workers[i]);
		}
		fputs("</td></tr>\n", f);
	}
	if (j->check) {
		rec_start(f, "check", "Verification");
		page_text(f, j->check);
		if (j->verify_failures >= 0)
			fprintf(f, "; %" PRId64 " result%s refuted", j->verify_failures,
				j->verify_failures == 1 ? "" : "s");
		fputs("</td></tr>\n", f);
	}
	if (j->damaged) {
		rec_start(f, "damaged", "Damaged");
		fputs("<span class=\"bad\">", f);
		page_text(f, j->damaged);
		fputs("</span></td></tr>\n", f);
	}
	fputs("</table>\n", f);
	n = page_list_plots(in->results_dir, j->id, names);
	if (n) {
		fputs("<h2>Plots</h2>\n<div id=\"job-plots\">", f);
		for (size_t i = 0; i < n; i++) {
			fprintf(f, "<figure class=\"full\"><a href=\"/results/job-%" PRId64
				"/", j->id);
			page_text(f, names[i]);
			fprintf(f, "\"><img src=\"/results/job-%" PRId64 "/", j->id);
			page_text(f, names[i]);
			fputs("\" alt=\"", f);
			page_text(f, names[i]);
			fputs("\"></a><figcaption>", f);
			page_text(f, names[i]);
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

			page_text(f, cut);
			free(cut);
			fputs("\n… (cut: gpuctl result shows it whole)", f);
		} else {
			page_text(f, in->answer);
		}
		fputs("</pre>\n", f);
	} else {
		fputs("<p class=\"empty\" id=\"answer\">", f);
		page_text(f, in->answer_error ? in->answer_error : "No answer yet.");
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
		page_when(f, e->ts, in->now);
		fputs("</td><td>", f);
		page_text(f, e->kind);
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
		page_text(f, e->detail);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}
