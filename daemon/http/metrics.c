/* metrics.c - Prometheus text from the control API's decoded replies
 * (see metrics.h). Each family is written whole (HELP, TYPE, its samples), as
 * the format requires; label values are escaped (\\, \", \n). */
#include "metrics.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"

/* The job states every scrape shows, at 0 when no job is in them, so a
 * dashboard's series do not come and go; others seen are added. Lease
 * states are the reply's (ctlcmd_lease_state_name), all shown alike. */
static const char *const job_states[] = {
	"queued", "running", "paused", "done", "failed", "cancelled",
};

const struct metrics_counter metrics_counters[METRICS_COUNTERS] = {
	{ "grant", "gpud_leases_granted_total", NULL,
	  "Leases granted to workers (the event log's grant)." },
	{ "result", "gpud_leases_completed_total", NULL,
	  "Leases whose result was uploaded and stored (before verification)." },
	{ "expire", "gpud_leases_expired_total", NULL,
	  "Leases whose deadline passed: back to pending." },
	{ "revoked", "gpud_leases_revoked_total", NULL,
	  "Leases taken from their holder (no progress, or refused)." },
	{ "release", "gpud_leases_released_total", NULL,
	  "Leases a worker gave back (drain, take-back)." },
	{ "foreign", "gpud_leases_refused_total", NULL,
	  "Messages about a lease refused: the sender does not hold that grant." },
	{ "run_failed", "gpud_lease_run_failures_total", NULL,
	  "Leases whose run failed on the worker." },
	{ "takeback", "gpud_lease_takebacks_total", NULL,
	  "Leases split at the tail: their holder asked to give part back." },
	{ "checkpoint", "gpud_checkpoints_total", NULL,
	  "Checkpoints stored." },
	{ "verified", "gpud_results_verified_total", NULL,
	  "Results that passed verification and were merged." },
	{ "verify_failed", "gpud_results_rejected_total", "why=\"verification\"",
	  "Results rejected: refuted by verification, or by their replica." },
	{ "refuted", "gpud_results_rejected_total", "why=\"replica\"", NULL },
	{ "submit", "gpud_jobs_submitted_total", NULL, "Jobs submitted." },
	{ "job_done", "gpud_jobs_finished_total", "state=\"done\"",
	  "Jobs that ended, by how." },
	{ "job_failed", "gpud_jobs_finished_total", "state=\"failed\"", NULL },
	{ "cancel", "gpud_jobs_finished_total", "state=\"cancelled\"", NULL },
	{ "connect", "gpud_worker_logins_total", NULL, "Worker logins." },
	{ "check", "gpud_checks_total", NULL,
	  "Store checks run (gpuctl check)." },
};

/* A label value, escaped. */
static void put_label(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A double as Prometheus reads it (integers without an exponent). */
static void put_value(FILE *f, double v)
{
	if (v == (double)(int64_t)v && v < 9e15 && v > -9e15)
		fprintf(f, " %" PRId64 "\n", (int64_t)v);
	else
		fprintf(f, " %.15g\n", v); /* no 0.1+0.2 noise */
}

static const char *str(const char *s)
{
	return s ? s : "";
}

static int finished(const char *state)
{
	return strcmp(state, "done") == 0 || strcmp(state, "failed") == 0 ||
	       strcmp(state, "cancelled") == 0;
}

/* Whether the job gets series of its own. */
static int job_shown(const struct ctlcmd_job *j, double now)
{
	double at = j->finished_at;

	return !finished(str(j->state)) || at <= 0 ||
	       now - at < METRICS_FINISHED_KEEP_S;
}

/* A count per name (label value), in the order first seen; names are
 * borrowed from the input. Past 64 names (devices), the rest are left
 * out: the output stays bounded. */
struct tally {
	const char *name[64];
	double count[64];
	size_t n;
};

static void tally_add(struct tally *t, const char *name, double v)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->name[i], name) == 0) {
			t->count[i] += v;
			return;
		}
	if (t->n < sizeof(t->name) / sizeof(t->name[0])) {
		t->name[t->n] = name;
		t->count[t->n++] = v;
	}
}

static void tally_put(FILE *f, const char *metric, const char *label,
		      const struct tally *t)
{
	for (size_t i = 0; i < t->n; i++) {
		fprintf(f, "%s{%s=", metric, label);
		put_label(f, t->name[i]);
		fputc('}', f);
		put_value(f, t->count[i]);
	}
}

static void job_labels(FILE *f, const char *metric, const struct ctlcmd_job *j)
{
	fprintf(f, "%s{job=\"%" PRId64 "\",name=", metric, j->id);
	put_label(f, j->name);
	fputs(",workload=", f);
	put_label(f, j->workload);
	fputs(",unit=", f);
	put_label(f, j->unit_name);
	fputc('}', f);
}

/* The per-job values, one family each. */
enum job_value { JOB_SIZE, JOB_DONE, JOB_VERIFIED, JOB_RATE, JOB_ETA,
		 JOB_VERIFY_FAILURES, JOB_RUNNING };

/* j's value w in *ret; 0 when the job has none (the reply's null or
 * absence: then no sample). */
static int job_value(const struct ctlcmd_job *j, enum job_value w, double *ret)
{
	switch (w) {
	case JOB_SIZE:
		*ret = (double)j->total_units;
		return 1;
	case JOB_DONE:
		*ret = (double)j->units_done;
		return 1;
	case JOB_VERIFIED:
		*ret = (double)j->units_verified;
		return 1;
	case JOB_RUNNING:       /* not yet checkpointed; may be lost */
		*ret = (double)j->units_running;
		return 1;
	case JOB_RATE:
		*ret = j->rate;
		return 1;
	case JOB_ETA:           /* sent as null when not known */
		*ret = j->eta_s;
		return j->eta_s != 0;
	case JOB_VERIFY_FAILURES: /* not sent by an older gpud */
		*ret = (double)j->verify_failures;
		return j->verify_failures >= 0;
	}
	return 0;
}

/* One family over the shown jobs: value w, when the job has it. */
static void job_family(FILE *f, const struct ctlcmd_reply *st, double now,
		       const char *metric, const char *type, const char *help,
		       enum job_value w)
{
	size_t shown = 0;
	int head = 0;

	for (size_t i = 0; i < st->n_jobs; i++) {
		const struct ctlcmd_job *j = &st->jobs[i];
		double v;

		if (!job_shown(j, now))
			continue;
		if (++shown > METRICS_JOBS_MAX)
			break;
		if (!job_value(j, w, &v))
			continue;
		if (!head++)
			family(f, metric, type, help);
		job_labels(f, metric, j);
		put_value(f, v);
	}
}

static void jobs_part(FILE *f, const struct ctlcmd_reply *st, double now)
{
	struct tally states = { .n = 0 }, leases = { .n = 0 };
	size_t i;

	for (i = 0; i < sizeof(job_states) / sizeof(job_states[0]); i++)
		tally_add(&states, job_states[i], 0);
	for (i = 0; i < CTLCMD_LEASE_STATES; i++)
		tally_add(&leases, ctlcmd_lease_state_name((int)i), 0);
	for (i = 0; i < st->n_jobs; i++) {
		tally_add(&states, str(st->jobs[i].state), 1);
		for (int s = 0; s < CTLCMD_LEASE_STATES; s++)
			tally_add(&leases, ctlcmd_lease_state_name(s),
				  (double)st->jobs[i].leases[s]);
	}
	family(f, "gpud_jobs", "gauge", "Jobs by state.");
	tally_put(f, "gpud_jobs", "state", &states);
	family(f, "gpud_leases", "gauge", "Leases of every job by state.");
	tally_put(f, "gpud_leases", "state", &leases);

	job_family(f, st, now, "gpud_job_size_units", "gauge",
		   "The job's size in its workload's unit.", JOB_SIZE);
	job_family(f, st, now, "gpud_job_done_units", "gauge",
		   "Units computed, checkpoints of unfinished leases included.",
		   JOB_DONE);
	job_family(f, st, now, "gpud_job_running_units", "gauge",
		   "Units held leases computed past their checkpoints (from "
		   "heartbeats; not yet saved): done + running is the progress "
		   "shown.", JOB_RUNNING);
	job_family(f, st, now, "gpud_job_verified_units", "gauge",
		   "Units whose results gpud verified.", JOB_VERIFIED);
	job_family(f, st, now, "gpud_job_rate_units_per_second", "gauge",
		   "The job's recent rate.", JOB_RATE);
	job_family(f, st, now, "gpud_job_eta_seconds", "gauge",
		   "Seconds left at the recent rate (absent when unknown).",
		   JOB_ETA);
	job_family(f, st, now, "gpud_job_verify_failures_total", "counter",
		   "The job's results refuted by verification.",
		   JOB_VERIFY_FAILURES);
}

/* wk: NULL for none. */
static void workers_part(FILE *f, const struct ctlcmd_reply *wk)
{
	struct tally online = { .n = 0 }, standing = { .n = 0 };
	size_t n = wk ? wk->n_workers : 0;

	tally_add(&standing, "online", 0);
	tally_add(&standing, "offline", 0);
	tally_add(&standing, "quarantined", 0);
	for (size_t i = 0; i < n; i++) {
		const struct ctlcmd_worker *w = &wk->workers[i];

		if (w->online)
			tally_add(&online, str(w->device), 1);
		tally_add(&standing, w->online ? "online" : "offline", 1);
		if (w->quarantined)
			tally_add(&standing, "quarantined", 1);
	}
	family(f, "gpud_workers_online", "gauge",
	       "Workers connected, by device.");
	tally_put(f, "gpud_workers_online", "device", &online);
	family(f, "gpud_workers", "gauge",
	       "Workers gpud knows: online, offline; quarantined of either.");
	tally_put(f, "gpud_workers", "standing", &standing);
}

static void commits_part(FILE *f, const struct dbq_commit_stats *c)
{
	const char *m = "gpud_db_commit_seconds";

	family(f, m, "histogram", "Duration of the database's group commits "
	       "(the COMMIT that makes a batch of requests durable).");
	for (int i = 0; i < DBQ_COMMIT_BUCKETS; i++) {
		fprintf(f, "%s_bucket{le=\"%g\"}", m, c->bound[i]);
		put_value(f, (double)c->le[i]);
	}
	fprintf(f, "%s_bucket{le=\"+Inf\"}", m);
	put_value(f, (double)c->count);
	fprintf(f, "%s_sum", m);
	put_value(f, c->sum_s);
	fprintf(f, "%s_count", m);
	put_value(f, (double)c->count);
}

static void counters_part(FILE *f, const uint64_t *counts)
{
	for (size_t i = 0; i < METRICS_COUNTERS; i++) {
		const struct metrics_counter *c = &metrics_counters[i];

		if (i == 0 || strcmp(c->metric, metrics_counters[i - 1].metric) != 0)
			family(f, c->metric, "counter", c->help);
		fputs(c->metric, f);
		if (c->label)
			fprintf(f, "{%s}", c->label);
		put_value(f, (double)counts[i]);
	}
}

static void process_part(FILE *f, const struct procstat *p)
{
	family(f, "process_start_time_seconds", "gauge",
	       "Start time of the process since unix epoch in seconds.");
	fputs("process_start_time_seconds", f);
	put_value(f, p->start_time);
	family(f, "process_cpu_seconds_total", "counter",
	       "Total user and system CPU time spent in seconds.");
	fputs("process_cpu_seconds_total", f);
	put_value(f, p->cpu_seconds);
	family(f, "process_resident_memory_bytes", "gauge",
	       "Resident memory size in bytes.");
	fprintf(f, "process_resident_memory_bytes %" PRIu64 "\n", p->resident_bytes);
	family(f, "process_virtual_memory_bytes", "gauge",
	       "Virtual memory size in bytes.");
	fprintf(f, "process_virtual_memory_bytes %" PRIu64 "\n", p->virtual_bytes);
	family(f, "process_open_fds", "gauge", "Number of open file descriptors.");
	fprintf(f, "process_open_fds %" PRIu64 "\n", p->open_fds);
	if (p->max_fds) {
		family(f, "process_max_fds", "gauge",
		       "Maximum number of open file descriptors.");
		fprintf(f, "process_max_fds %" PRIu64 "\n", p->max_fds);
	}
}

static void health_part(FILE *f, const struct metrics_input *in)
{
	if (in->last_check > 0) {
		family(f, "gpud_last_check_timestamp_seconds", "gauge",
		       "When the last store check (gpuctl check) ended.");
		fputs("gpud_last_check_timestamp_seconds", f);
		put_value(f, in->last_check);
	}
	if (in->last_backup > 0) {
		family(f, "gpud_last_backup_timestamp_seconds", "gauge",
		       "When the last backup (gpuctl backup) ended.");
		fputs("gpud_last_backup_timestamp_seconds", f);
		put_value(f, in->last_backup);
	}
	if (in->db_known) {
		family(f, "gpud_db_bytes", "gauge",
		       "Bytes of the database (gpud.db and its write-ahead log).");
		fprintf(f, "gpud_db_bytes %" PRIu64 "\n", in->db_bytes);
	}
	family(f, "gpud_storage_error", "gauge", "1 while the data directory "
	       "refuses writes (disk full, permissions, I/O): new work stops.");
	fprintf(f, "gpud_storage_error %d\n", in->storage_error ? 1 : 0);
}

int metrics_render(const struct metrics_input *in, char **ret_text,
		   size_t *ret_len)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return GERR_NOMEM;
	family(f, "gpud_info", "gauge", "gpud's version.");
	fputs("gpud_info{version=", f);
	put_label(f, in->version);
	fputs("} 1\n", f);
	jobs_part(f, in->status, in->now);
	workers_part(f, in->workers);
	family(f, "gpud_verify_failures_total", "counter",
	       "Results refuted by verification since gpud started.");
	fprintf(f, "gpud_verify_failures_total %" PRIu64 "\n", in->verify_failures);
	family(f, "gpud_http_closed_total", "counter", "The page's connections "
	       "gpud closed: no request or answer by its deadline, or room made.");
	fprintf(f, "gpud_http_closed_total{why=\"deadline\"} %" PRIu64 "\n"
		"gpud_http_closed_total{why=\"room\"} %" PRIu64 "\n",
		in->http_late, in->http_evicted);
	if (in->commits)
		commits_part(f, in->commits);
	if (in->blobs_known) {
		family(f, "gpud_blob_stored_bytes", "gauge",
		       "Bytes of the stored blobs (results, checkpoints, inputs).");
		fprintf(f, "gpud_blob_stored_bytes %" PRIu64 "\n", in->blob_bytes);
		family(f, "gpud_blob_files", "gauge", "Stored blobs.");
		fprintf(f, "gpud_blob_files %" PRIu64 "\n", in->blob_files);
	}
	if (in->event_counts)
		counters_part(f, in->event_counts);
	health_part(f, in);
	if (in->proc)
		process_part(f, in->proc);
	if (fclose(f)) {
		free(text);
		return GERR_NOMEM;
	}
	*ret_text = text;
	*ret_len = len;
	return 0;
}
