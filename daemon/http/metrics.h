/* metrics.h - the Prometheus text exposition (format 0.0.4) of gpud's
 * state, from the control API's replies as ctlcmd_reply_decode gives
 * them (ctlcmd.h) and a few counters. Plain C on structs, so unit tests
 * drive it without a gpud.
 *
 * Families: gpud_info; gpud_jobs{state}; per job (unfinished, or finished
 * less than METRICS_FINISHED_KEEP_S ago; at most METRICS_JOBS_MAX of them)
 * gpud_job_size_units, gpud_job_done_units, gpud_job_verified_units,
 * gpud_job_rate_units_per_second, gpud_job_eta_seconds (when known),
 * gpud_job_verify_failures_total (when the reply has it), labelled
 * job, name, workload, unit; gpud_leases{state}; gpud_workers_online
 * {device}; gpud_workers{standing}; gpud_verify_failures_total;
 * gpud_db_commit_seconds (histogram); gpud_blob_stored_bytes and
 * gpud_blob_files; gpud_http_closed_total{why} (the page's connections
 * closed by their deadline, or to make room: http_guard.h).
 *
 * Ownership: nothing in the input is kept; the text is the caller's to
 * free(). Threads: any (no state).
 */
#ifndef GPUD_METRICS_H
#define GPUD_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "ctlcmd.h"
#include "dbq.h"

#define METRICS_FINISHED_KEEP_S 86400.0
#define METRICS_JOBS_MAX 1000

struct metrics_input {
	/* Decoded replies (borrowed): status of every job (CTLCMD_STATUS
	 * with all), workers (CTLCMD_WORKERS; NULL: none). */
	const struct ctlcmd_reply *status;
	const struct ctlcmd_reply *workers;
	const struct dbq_commit_stats *commits; /* NULL: left out */
	uint64_t verify_failures;  /* results refuted since gpud started */
	int blobs_known;           /* the blob store was measured */
	uint64_t blob_bytes, blob_files;
	uint64_t http_late, http_evicted; /* the page's connections closed */
	double now;                /* Unix seconds */
	const char *version;
};

/* Render the exposition into a new NUL-terminated buffer (*ret_len bytes
 * without the NUL). Returns 0, or GERR_NOMEM (nothing is returned). */
int metrics_render(const struct metrics_input *in, char **ret_text,
		   size_t *ret_len);

#endif
