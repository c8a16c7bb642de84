/* page_text.h - what the status page's files share (page_render.c, the
 * main page and /plots; page_job.c, a job's page): values written as HTML
 * (escaped text, figures with SI prefixes, byte sizes, durations, times
 * absolute in UTC beside relative), a job's pieces (its state, link,
 * progress, rate) and the plots of the results directory. Private to
 * daemon/http/.
 *
 * Threads: any (no state). Strings are borrowed; nothing is kept.
 */
#ifndef GPUD_PAGE_TEXT_H
#define GPUD_PAGE_TEXT_H

#include <stdint.h>
#include <stdio.h>

#include "page_render.h"

#define PAGE_PLOTS_MAX 16   /* a job's plots listed */
#define PAGE_PLOT_NAME 72   /* a plot's name's buffer */

/* s escaped (&, <, >, ", '); NULL writes nothing. */
void page_text(FILE *f, const char *s);
/* s, or "" for NULL. */
const char *page_str(const char *s);
/* 3 significant digits and an SI prefix: 1.00 G, 54.9 M, 312. */
void page_human(FILE *f, double n);
/* 2.09 MiB. */
void page_bytes(FILE *f, uint64_t b);
/* 3d 04h, 2h 05m, 4m 09s, 12s; "–" when negative or not finite. */
void page_duration(FILE *f, double s);
/* A <time> in UTC and the relative time beside it; "–" for 0 or less. */
void page_when(FILE *f, double at, double now);
/* done, failed or cancelled. */
int page_finished(const char *state);
/* The job's plots in results (regular files named [A-Za-z0-9._-] ending
 * .svg, as the server serves them), sorted, at most PAGE_PLOTS_MAX;
 * returns how many. */
size_t page_list_plots(const char *results, int64_t job,
		       char names[][PAGE_PLOT_NAME]);
void page_state(FILE *f, const char *state);
/* <a href="/job/ID">text</a> (the id when text is NULL). */
void page_job_link(FILE *f, int64_t id, const char *text);
/* The percentage, its bar and the units of the total: checkpointed plus
 * held leases' progress, with "(P% saved)" while some is not yet
 * checkpointed. */
void page_progress(FILE *f, const struct ctlcmd_job *j);
/* Seconds from start (or creation) to the end or now; < 0: unknown. */
double page_job_elapsed(const struct ctlcmd_job *j, double now);
/* "1.5 k battles/s"; "–" when not positive. */
void page_rate(FILE *f, double rate, const char *unit);

/* A job's page (page_job.c). */
void page_job(FILE *f, const struct page_input *in);

#endif
