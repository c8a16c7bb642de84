/* page_render.h - the status page's HTML, rendered with its data on the
 * server (page_render.c), so that the page shows the jobs and workers
 * before any script runs; the page's script (page.html) then fetches the
 * same address every few seconds and swaps in the new <main>.
 *
 * Pages:
 *   main     the summary strip (jobs by state, total rate per unit,
 *            workers online and quarantined), server health, throughput
 *            over the last hours (a bar chart of verified results), the
 *            jobs, the workers, and the plots of the few most recently
 *            finished jobs (thumbnails linking to their job's page)
 *   job      /job/N: the job's record, its answer's summary, its plots at
 *            full size, its newest events
 *   plots    /plots: every listed finished job with plots, as links
 *
 * Every value from gpud or a worker is written escaped (&, <, >, ", ');
 * times are absolute (UTC) beside relative.
 *
 * Ownership: nothing in the input is kept; the text is the caller's to
 * free(). Threads: any (no state; the results directory is read for the
 * plots' names).
 */
#ifndef GPUD_PAGE_RENDER_H
#define GPUD_PAGE_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "ctlcmd.h"
#include "store_events.h"

#define PAGE_RECENT_PLOTS 4      /* finished jobs whose plot the main page shows */
#define PAGE_EVENTS_MAX 200      /* a job page's newest events */
#define PAGE_ANSWER_MAX 65536    /* bytes of the answer's text shown */
#define PAGE_BUCKET_S 600.0      /* the throughput chart: 10-minute bars */
#define PAGE_BUCKETS 36          /* over 6 hours */

enum page_kind { PAGE_MAIN, PAGE_JOB, PAGE_PLOTS };

/* Server health; a time of 0 or a size not known is shown as such. */
struct page_health {
	double start_time;              /* gpud's start, Unix seconds; 0: unknown */
	int db_known, blobs_known;
	uint64_t db_bytes, blob_bytes, blob_files;
	double check_at, backup_at;     /* 0: none recorded */
	const char *check_detail, *backup_detail; /* or NULL */
	const char *storage_msg;        /* gpud's storage trouble, or NULL */
};

struct page_input {
	enum page_kind kind;
	/* Decoded replies (borrowed): status (the job page's: of its job),
	 * workers (NULL: none), and the raw status reply for what an older
	 * or newer gpud sends beyond the table. */
	const struct ctlcmd_reply *status, *workers;
	const void *status_json;        /* json_t *, or NULL */
	/* The job page: the result's text (NULL: none) or why not. */
	int64_t job;
	const char *answer, *answer_error;
	const struct store_event_row *events;
	size_t n_events;
	const struct store_event_tally *tally; /* NULL: no chart */
	const struct page_health *health;      /* NULL: no health */
	const char *results_dir;        /* the plots' directory */
	double now;                     /* Unix seconds */
	const char *version;
};

/* Render the page whole around the template (page.html: the text before
 * and after its "<!--gpud:main-->" marker) into a new NUL-terminated
 * buffer of *ret_len bytes. Returns 0, GERR_INVAL (no marker) or
 * GERR_NOMEM; nothing is returned on error. */
int page_render(const struct page_input *in, const char *tmpl, size_t tmpl_len,
		char **ret_text, size_t *ret_len);

#endif
