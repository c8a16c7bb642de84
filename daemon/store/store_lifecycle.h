/* store_lifecycle.h - the store's side of the lifecycles the operator
 * steers (store_lifecycle.c, migration 021): a job that waits for an
 * earlier one (submit --after), a job's time limit and the time it ran,
 * requeueing a failed or cancelled job, and the jobs' ends as 'job_end'
 * events.
 *
 * Threads, ownership, errors: as store.h says (one thread at a time per
 * struct store; strings returned are malloc'ed and freed by the matching
 * *_free; ret_* written only on success).
 */
#ifndef GPUD_STORE_LIFECYCLE_H
#define GPUD_STORE_LIFECYCLE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* A job may wait for an earlier one (granted nothing until that job is
 * done; failed when it fails or is cancelled), have a time limit on the
 * time it runs, and be requeued when failed or cancelled. */
#define STORE_TIME_LIMIT_MIN 1
#define STORE_TIME_LIMIT_MAX (366 * 86400)
struct store_lifecycle {
	int64_t after_job;          /* 0: waits for no job */
	enum job_state after_state; /* after_job's; JOB_NSTATES when none */
	double time_limit;          /* seconds; 0: none */
	double ran_s;               /* active since its first grant, so far */
};
/* GERR_NOTFOUND (message) when there is no job id. */
int store_job_lifecycle_get(struct store *st, int64_t id,
			    struct store_lifecycle *ret);
/* At submit: job id waits for after (0: none), an earlier job that must
 * exist (GERR_NOTFOUND "no job N to run after"), and may run time_limit
 * seconds (0: no limit; else STORE_TIME_LIMIT_MIN..MAX, GERR_INVAL). */
int store_job_set_lifecycle(struct store *st, int64_t id, int64_t after,
			    double time_limit);
/* A failed or cancelled job back to active, keeping every verified lease,
 * its part and the job's answer: its other primary leases become pending
 * (their checkpoints kept, results not verified dropped, failures and the
 * workers that failed them forgotten), its undecided replicas cancelled,
 * its time run back to 0. GERR_STATE with the reason when it is done,
 * active or paused, when the job it runs after is failed or cancelled, or
 * when every lease is verified (its final check failed). *ret_leases (may
 * be NULL): the leases that will run again. One write call. */
int store_job_requeue(struct store *st, int64_t id, double now,
		      uint64_t *ret_leases);
/* The lifecycle tick (gpud's loop, about once a second): every active,
 * started job with a time limit ran ran_s more; each that reached its
 * limit fails ("time limit 30m reached"), its pending, held and done
 * leases cancelled (verified ones kept for a requeue), event "time_limit".
 * Their ids in ret_stopped (at most STORE_TICK_MAX a tick; the rest the
 * next tick), their number in *ret_n. One write call. */
#define STORE_TICK_MAX 64
int store_lifecycle_tick(struct store *st, double now, double ran_s,
			 int64_t ret_stopped[STORE_TICK_MAX], size_t *ret_n);
/* A job's end, as the schema's trigger records each (a 'job_end' event in
 * the transaction that ends it). Strings malloc'ed; name may be NULL. */
struct store_job_end {
	int64_t event_id, job_id;
	char *state;                /* done, failed or cancelled */
	char *workload, *name;
};
/* The ends recorded after event after_event, oldest first, at most max
 * (1..100000). Free with store_job_end_free_array. */
int store_job_ends(struct store *st, int64_t after_event, size_t max,
		   struct store_job_end **ret, size_t *ret_n);
void store_job_end_free_array(struct store_job_end *a, size_t n);
/* The newest event's id (0: none). */
int store_event_last_id(struct store *st, int64_t *ret_id);
/* Jobs never granted anything that wait for job_id (0: for any job) while
 * it is failed or cancelled fail too, with the reason; *ret_n (may be
 * NULL): how many. Their own ends are 'job_end' events, so a chain fails
 * link by link. One write call. */
int store_job_fail_dependents(struct store *st, int64_t job_id, double now,
			      uint64_t *ret_n);

#endif
