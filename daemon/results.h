/* results.h - the results directory: each finished job's plot, where the
 * people who submit jobs can open it.
 *
 * Layout: RESULTS/job-N/NAME (NAME the workload's plot_name, e.g.
 * graveler-histogram.svg). RESULTS is gpud's `results` setting (default
 * DATA/results, which stays as private as DATA; the service's gpud.conf
 * points it at /var/lib/gpud-results). gpud makes RESULTS and every job-N
 * mode 0755 and every file 0644 whatever its umask, so any local user can
 * read them once RESULTS' parents let them through. A plot is written when
 * the job finishes (results_job_done), and by `gpuctl result` when it is
 * missing; remote users get the same bytes with `gpuctl export JOB plot`.
 *
 * Safety: RESULTS must not be writable by others (like DATA); files are
 * written to a temporary name and renamed, so a reader never sees half a
 * plot, and a job-N that is not a plain directory is refused rather than
 * followed.
 *
 * Threads: results_prepare on the loop thread at start; results_render and
 * results_store on any thread (the pool); results_job_done on the loop
 * thread. Errors are GERR_* with a one-line reason in err.
 */
#ifndef GPUD_RESULTS_H
#define GPUD_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "workload.h"

struct gpud;

/* At start: create dir (0755) when missing, refuse it when others may write
 * it, and make it 0755 so that the plots can be read. */
int results_prepare(const char *dir, char *err, size_t errlen);

/* Stored blobs of data_dir as a workload reads them (export, plot): the
 * returned reader borrows data_dir. */
struct wl_blob_reader results_blob_reader(const char *data_dir);

/* wl's plot of a job from its stored params and answer (JSON text) and its
 * loaded parts: *ret_svg malloc'ed. GERR_UNSUPPORTED when wl has no plot,
 * GERR_NOTFOUND when there is nothing to plot yet. */
int results_render(const struct workload *wl, const char *params,
		   const char *answer, const struct wl_parts *parts,
		   const char *data_dir, char **ret_svg, size_t *ret_len,
		   char *err, size_t errlen);

/* Write bytes as RESULTS/job-N/name (0644, directory 0755), replacing an
 * older file atomically; ret_path (may be NULL) receives the path. */
int results_store(const char *dir, int64_t job, const char *name,
		  const void *bytes, size_t len, char *ret_path,
		  size_t pathlen, char *err, size_t errlen);

/* The path a job's plot has (or will have); 0, or GERR_TOOBIG when it does
 * not fit in pathlen. */
int results_path(const char *dir, int64_t job, const char *name,
		 char *ret_path, size_t pathlen);

/* Loop thread: the job just finished; its plot is rendered and written in
 * the background (database thread, then the pool) and the outcome logged.
 * Nothing happens for a workload without a plot or while gpud stops. */
void results_job_done(struct gpud *d, int64_t job);

#endif
