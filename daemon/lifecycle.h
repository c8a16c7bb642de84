/* lifecycle.h - gpud's lifecycle tick and end hook: once a second, on the
 * database thread, active jobs with a time limit are charged the time
 * they ran and those past it stopped (store_lifecycle_tick); then the
 * jobs' ends recorded since the last tick ('job_end' events) are read:
 * each runs the configured end hook (--end-hook), a failed or cancelled
 * one fails the jobs that were to run after it, and a done one wakes the
 * parked claims (a job that waited for it may run now).
 *
 * The end hook is a process (uv_spawn, never a shell): PATH JOB STATE
 * RESULT WORKLOAD NAME, and the same in GPUD_JOB_ID, GPUD_JOB_STATE,
 * GPUD_JOB_RESULT, GPUD_JOB_WORKLOAD, GPUD_JOB_NAME. At most
 * cfg.end_hook_max run at once (the others wait, up to a bound; past it an
 * end is logged and its hook skipped); each is killed, with its process
 * group, after cfg.end_hook_timeout_s; its output goes to gpud's log (the
 * first LIFECYCLE_HOOK_LOG_MAX bytes); a failure is logged, never fatal.
 * An end is handed to the hook at most once: ends recorded before gpud
 * started (or while it was down) run none.
 *
 * Ownership: lifecycle_start allocates d->lifecycle; lifecycle_stop
 * releases it once the tick in flight and the hooks running are over
 * (it kills them). Threads: loop thread only.
 */
#ifndef GPUD_LIFECYCLE_H
#define GPUD_LIFECYCLE_H

#include "gpud.h"

#define LIFECYCLE_PERIOD_MS 1000
#define LIFECYCLE_HOOK_QUEUE_MAX 1000
#define LIFECYCLE_HOOK_LOG_MAX 4096

/* 0, or GERR_NOMEM. */
int lifecycle_start(struct gpud *d);
/* NULL-safe; d->lifecycle is NULL after. */
void lifecycle_stop(struct gpud *d);

#endif
