/* store_events.h - reading the event log (store_events.c): what the status
 * page and /metrics show of it. The log is append-only (schema 001), so a
 * reader that remembers the last id it read needs only the rows after it:
 * counts by kind and the verified results per time bucket are kept by the
 * caller and fed from store_event_since.
 *
 * Ownership: the rows returned are the caller's (store_event_rows_free).
 * Threads: the database thread (as every store call).
 */
#ifndef GPUD_STORE_EVENTS_H
#define GPUD_STORE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* At most this many rows of the log are read by one store_event_since:
 * the first read of a long log starts this far from its end. */
#define STORE_EVENTS_SCAN_MAX 200000

/* One row of the log, as a job's page lists it. */
struct store_event_row {
	int64_t id, job_id, lease_id, epoch, worker_id;
	double ts;
	char *kind, *detail;  /* detail: NULL when none */
	char *worker;         /* store_event_job: the worker's name, or NULL */
};

/* What store_event_since adds up: a count per kind (fixed names the
 * caller gives, kinds[i] for counts[i]; other kinds are not counted) and,
 * for rows with ts >= since, per bucket of bucket_s seconds from since:
 * verified results, refuted ones, and the verified units per workload
 * (wl[k] names a workload, up to STORE_EVENTS_WL; more: not counted). */
#define STORE_EVENTS_KINDS 24
#define STORE_EVENTS_BUCKETS 48
#define STORE_EVENTS_WL 8
struct store_event_tally {
	/* In: */
	const char *const *kinds;
	size_t n_kinds;            /* <= STORE_EVENTS_KINDS */
	double since, bucket_s;
	size_t n_buckets;          /* <= STORE_EVENTS_BUCKETS */
	/* Out (added to; the caller zeroes them first): */
	uint64_t counts[STORE_EVENTS_KINDS];
	uint64_t verified[STORE_EVENTS_BUCKETS], refuted[STORE_EVENTS_BUCKETS];
	char wl[STORE_EVENTS_WL][32];
	size_t n_wl;
	uint64_t units[STORE_EVENTS_WL][STORE_EVENTS_BUCKETS];
	int64_t last_id;           /* in: read after it; out: the last read */
	int whole;                 /* out: every row after last_id was read
				    * (0: the log was longer than the scan) */
};

/* Add the rows after t->last_id (at most STORE_EVENTS_SCAN_MAX, the
 * newest) to *t. Counts of the kinds over the whole log come from the
 * index when t->last_id is 0 (the first read), so they do not depend on
 * the scan's bound. Returns 0 or a GERR_* (st's message). */
int store_event_since(struct store *st, struct store_event_tally *t);

/* The newest max events of job_id, newest first, in a malloc'ed array
 * (*ret, *ret_n). Returns 0 or a GERR_*; nothing is returned on error. */
int store_event_list(struct store *st, int64_t job_id, size_t max,
		     struct store_event_row **ret, size_t *ret_n);
void store_event_rows_free(struct store_event_row *rows, size_t n);

/* gpuctl events: job_id's events and those of its leases that name no
 * job (an expiry, a foreign message), with id > after_id and ts >= since,
 * the newest max (1..STORE_EVENTS_JOB_MAX) of them, oldest first, in a
 * malloc'ed array (store_event_rows_free). GERR_INVAL for bad arguments;
 * nothing is returned on error. */
#define STORE_EVENTS_JOB_MAX 100000
int store_event_job(struct store *st, int64_t job_id, int64_t after_id,
		    double since, size_t max, struct store_event_row **ret,
		    size_t *ret_n);

/* The newest event of kind about no job (gpud's own: check, backup): its
 * time and detail (malloc'ed, or NULL). GERR_NOTFOUND when there is none. */
int store_event_last(struct store *st, const char *kind, double *ret_ts,
		     char **ret_detail);

#endif
