/* ctl_status.h - jobs as gpuctl shows them (ctl_status.c): the status
 * table's columns, a job's whole record (--long), and the state and times
 * of a job from gpud's record, degrading to what an older gpud sends
 * (state "active", no elapsed_s or avg_rate). The records are read
 * through ctlcmd's job rows; their strings must already be escaped for
 * the terminal (ctl_text.h).
 *
 * Single-threaded; records are borrowed; keeps nothing.
 */
#ifndef GPUD_CTL_STATUS_H
#define GPUD_CTL_STATUS_H

#include <stdio.h>

#include "ctl_table.h"
#include "ctlcmd.h"

/* The default columns of gpuctl status and watch. */
#define CTL_STATUS_COLS "id,name,user,workload,state,progress,rate,elapsed,eta,reason"

/* The columns of cols (comma-separated names) into t, with its rows from
 * jobs. -1 after printing which name is unknown. now: time(NULL). */
int ctl_jobs_table(struct ctl_table *t, const char *cols,
		   const struct ctlcmd_job *jobs, size_t n_jobs, double now);
/* A job's whole record, a few lines. */
void ctl_job_long(FILE *f, const struct ctlcmd_job *job, double now);
/* queued/running/paused/done/failed/cancelled (an older gpud's "active"
 * told apart by its leases). */
const char *ctl_job_state(const struct ctlcmd_job *job);
/* 1 when the job's state is done, failed or cancelled. */
int ctl_job_finished(const struct ctlcmd_job *job);
/* The units a job's progress shows: units_done + units_running (held
 * leases' progress past their checkpoints), at most the total. */
double ctl_job_shown_units(const struct ctlcmd_job *job);
/* One line of progress for wait: state, bar, percent, units, rate, ETA. */
void ctl_job_line(char *out, size_t n, const struct ctlcmd_job *job);

#endif
