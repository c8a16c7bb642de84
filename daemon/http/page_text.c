/* page_text.c - values and pieces the status page's files write (see
 * page_text.h). */
#include "page_text.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- text ---- */

void page_text(FILE *f, const char *s)
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

const char *page_str(const char *s)
{
	return s ? s : "";
}

/* 3 significant digits and an SI prefix: 1.00 G, 54.9 M, 312. */
void page_human(FILE *f, double n)
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

void page_bytes(FILE *f, uint64_t b)
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
void page_duration(FILE *f, double s)
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
void page_when(FILE *f, double at, double now)
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
		page_duration(f, now - at);
		fputs(" ago)</span>", f);
	} else {
		fputs("in ", f);
		page_duration(f, at - now);
		fputs(")</span>", f);
	}
}

int page_finished(const char *state)
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
 * [A-Za-z0-9._-] ending .svg), sorted, at most PAGE_PLOTS_MAX; returns n. */
size_t page_list_plots(const char *results, int64_t job, char names[][PAGE_PLOT_NAME])
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
	while (n < PAGE_PLOTS_MAX && (e = readdir(dp))) {
		struct stat st;

		if (plot_name_ok(e->d_name) &&
		    fstatat(dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			snprintf(names[n++], PAGE_PLOT_NAME, "%s", e->d_name);
	}
	closedir(dp);
	qsort(names, n, PAGE_PLOT_NAME, cmp_name);
	return n;
}

/* ---- pieces ---- */

void page_state(FILE *f, const char *state)
{
	fputs("<span class=\"state ", f);
	page_text(f, state);
	fputs("\">", f);
	page_text(f, state);
	fputs("</span>", f);
}

void page_job_link(FILE *f, int64_t id, const char *text)
{
	fprintf(f, "<a href=\"/job/%" PRId64 "\">", id);
	if (text)
		page_text(f, text);
	else
		fprintf(f, "%" PRId64, id);
	fputs("</a>", f);
}

/* Units shown: checkpointed (units_done, never back) plus held leases'
 * progress past their checkpoints (units_running, from heartbeats), at
 * most the total; as gpuctl status shows them. */
static double shown_units(const struct ctlcmd_job *j)
{
	double v = (double)j->units_done + (double)j->units_running;

	return j->total_units > 0 && v > (double)j->total_units ? (double)j->total_units : v;
}

static double pct_of(const struct ctlcmd_job *j, double units)
{
	if (j->total_units <= 0)
		return page_finished(page_str(j->state)) && strcmp(page_str(j->state), "done") == 0 ? 100 : 0;
	return fmin(100.0, 100.0 * units / (double)j->total_units);
}

void page_progress(FILE *f, const struct ctlcmd_job *j)
{
	double pct = pct_of(j, shown_units(j));
	double saved = pct_of(j, (double)j->units_done);

	/* The saved part solid, the part not yet checkpointed pale. */
	fprintf(f, "<span class=\"pct\">%.1f%%</span><span class=\"bar\">"
		"<span class=\"%s\" style=\"width:%.1f%%;float:left\"></span>",
		pct, page_str(j->state), saved);
	if (pct > saved)
		fprintf(f, "<span class=\"%s unsaved\" title=\"not yet "
			"checkpointed\" style=\"width:%.1f%%;float:left;"
			"opacity:.45\"></span>", page_str(j->state), pct - saved);
	fputs("</span><span class=\"units\">", f);
	page_human(f, shown_units(j));
	fputs(" / ", f);
	page_human(f, (double)j->total_units);
	fputc(' ', f);
	page_text(f, j->unit_name ? j->unit_name : "units");
	/* On a line of its own, so the column stays narrow. */
	if (j->units_running > 0) {
		if (j->total_units > 0) {
			fprintf(f, "<span class=\"saved\">(%.1f%% saved)</span>", saved);
		} else {
			fputs("<span class=\"saved\">(", f);
			page_human(f, (double)j->units_done);
			fputs(" saved)</span>", f);
		}
	}
	fputs("</span>", f);
}

double page_job_elapsed(const struct ctlcmd_job *j, double now)
{
	double from = j->started_at > 0 ? j->started_at : j->created_at;

	if (j->elapsed_s >= 0)
		return j->elapsed_s;
	if (!(from > 0))
		return -1;
	return (j->finished_at > 0 ? j->finished_at : now) - from;
}

void page_rate(FILE *f, double rate, const char *unit)
{
	if (!(rate > 0)) {
		fputs("–", f);
		return;
	}
	page_human(f, rate);
	fputs(" ", f);
	page_text(f, unit ? unit : "units");
	fputs("/s", f);
}
