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
 * Counters to take a rate of, from the event log (append-only, so they
 * count since the data directory was made and never go back, across
 * gpud's restarts): one family or label per row of metrics_counters
 * (leases granted, completed, expired, revoked, released, refused; results
 * verified and rejected; jobs submitted and finished; ...). gpud's own
 * health: gpud_last_check_timestamp_seconds, gpud_last_backup_timestamp_
 * seconds (when one is recorded), gpud_db_bytes, gpud_storage_error. And
 * what every Prometheus client library exports: process_start_time_seconds,
 * process_cpu_seconds_total, process_resident_memory_bytes,
 * process_virtual_memory_bytes, process_open_fds, process_max_fds.
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
#include "procstat.h"

#define METRICS_FINISHED_KEEP_S 86400.0
#define METRICS_JOBS_MAX 1000

/* An event kind of the log and the counter it is: metric{label} (label
 * NULL: none, else "name=\"value\""). Rows of one metric are adjacent. */
struct metrics_counter {
	const char *kind, *metric, *label, *help;
};
#define METRICS_COUNTERS 18
extern const struct metrics_counter metrics_counters[METRICS_COUNTERS];

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
	/* Counts of metrics_counters[i].kind in the log; NULL: left out. */
	const uint64_t *event_counts;
	const struct procstat *proc;  /* NULL: left out */
	double last_check, last_backup; /* Unix seconds; 0: none recorded */
	int db_known;
	uint64_t db_bytes;         /* gpud.db and its WAL */
	int storage_error;         /* the data directory refuses writes */
	double now;                /* Unix seconds */
	const char *version;
};

/* Render the exposition into a new NUL-terminated buffer (*ret_len bytes
 * without the NUL). Returns 0, or GERR_NOMEM (nothing is returned). */
int metrics_render(const struct metrics_input *in, char **ret_text,
		   size_t *ret_len);

#endif
