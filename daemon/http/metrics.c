/* metrics.c - Prometheus text from the control API's replies (see
 * metrics.h). Each family is written whole (HELP, TYPE, its samples), as
 * the format requires; label values are escaped (\\, \", \n). */
#include "metrics.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"

/* The states every scrape shows, at 0 when no job is in them, so a
 * dashboard's series do not come and go; others seen are added. */
static const char *const job_states[] = {
	"queued", "running", "paused", "done", "failed", "cancelled",
};
static const char *const lease_states[] = {
	"pending", "leased", "done", "verified", "failed", "cancelled",
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

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static double num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static int finished(const char *state)
{
	return strcmp(state, "done") == 0 || strcmp(state, "failed") == 0 ||
	       strcmp(state, "cancelled") == 0;
}

/* Whether the job gets series of its own. */
static int job_shown(const json_t *j, double now)
{
	double at = num(j, "finished_at");

	return !finished(str(j, "state")) || at <= 0 ||
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

static void job_labels(FILE *f, const char *metric, const json_t *j)
{
	fprintf(f, "%s{job=\"%" JSON_INTEGER_FORMAT "\",name=", metric,
		json_integer_value(json_object_get(j, "id")));
	put_label(f, str(j, "name"));
	fputs(",workload=", f);
	put_label(f, str(j, "workload"));
	fputs(",unit=", f);
	put_label(f, str(j, "unit_name"));
	fputc('}', f);
}

/* One family over the shown jobs: key's number, when the job has it. */
static void job_family(FILE *f, const json_t *jobs, double now,
		       const char *metric, const char *type, const char *help,
		       const char *key)
{
	size_t i, shown = 0;
	json_t *j;
	int head = 0;

	json_array_foreach(jobs, i, j) {
		const json_t *v = json_object_get(j, key);
		if (!job_shown(j, now))
			continue;
		if (++shown > METRICS_JOBS_MAX)
			break;
		if (!json_is_number(v))
			continue;
		if (!head++)
			family(f, metric, type, help);
		job_labels(f, metric, j);
		put_value(f, json_number_value(v));
	}
}

static void jobs_part(FILE *f, const json_t *jobs, double now)
{
	struct tally states = { .n = 0 }, leases = { .n = 0 };
	size_t i;
	json_t *j;

	for (i = 0; i < sizeof(job_states) / sizeof(job_states[0]); i++)
		tally_add(&states, job_states[i], 0);
	for (i = 0; i < sizeof(lease_states) / sizeof(lease_states[0]); i++)
		tally_add(&leases, lease_states[i], 0);
	json_array_foreach(jobs, i, j) {
		const char *key;
		json_t *v;

		tally_add(&states, str(j, "state"), 1);
		json_object_foreach(json_object_get(j, "leases"), key, v)
			tally_add(&leases, key, json_number_value(v));
	}
	family(f, "gpud_jobs", "gauge", "Jobs by state.");
	tally_put(f, "gpud_jobs", "state", &states);
	family(f, "gpud_leases", "gauge", "Leases of every job by state.");
	tally_put(f, "gpud_leases", "state", &leases);

	job_family(f, jobs, now, "gpud_job_size_units", "gauge",
		   "The job's size in its workload's unit.", "total_units");
	job_family(f, jobs, now, "gpud_job_done_units", "gauge",
		   "Units computed, checkpoints of unfinished leases included.",
		   "units_done");
	job_family(f, jobs, now, "gpud_job_verified_units", "gauge",
		   "Units whose results gpud verified.", "units_verified");
	job_family(f, jobs, now, "gpud_job_rate_units_per_second", "gauge",
		   "The job's recent rate.", "rate");
	job_family(f, jobs, now, "gpud_job_eta_seconds", "gauge",
		   "Seconds left at the recent rate (absent when unknown).",
		   "eta_s");
	job_family(f, jobs, now, "gpud_job_verify_failures_total", "counter",
		   "The job's results refuted by verification.",
		   "verify_failures");
}

static void workers_part(FILE *f, const json_t *workers)
{
	struct tally online = { .n = 0 }, standing = { .n = 0 };
	size_t i;
	json_t *w;

	tally_add(&standing, "online", 0);
	tally_add(&standing, "offline", 0);
	tally_add(&standing, "quarantined", 0);
	json_array_foreach(workers, i, w) {
		int on = json_is_true(json_object_get(w, "online"));
		if (on)
			tally_add(&online, str(w, "device"), 1);
		tally_add(&standing, on ? "online" : "offline", 1);
		if (json_is_true(json_object_get(w, "quarantined")))
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
	jobs_part(f, json_object_get(in->status, "jobs"), in->now);
	workers_part(f, json_object_get(in->workers, "workers"));
	family(f, "gpud_verify_failures_total", "counter",
	       "Results refuted by verification since gpud started.");
	fprintf(f, "gpud_verify_failures_total %" PRIu64 "\n", in->verify_failures);
	if (in->commits)
		commits_part(f, in->commits);
	if (in->blobs_known) {
		family(f, "gpud_blob_stored_bytes", "gauge",
		       "Bytes of the stored blobs (results, checkpoints, inputs).");
		fprintf(f, "gpud_blob_stored_bytes %" PRIu64 "\n", in->blob_bytes);
		family(f, "gpud_blob_files", "gauge", "Stored blobs.");
		fprintf(f, "gpud_blob_files %" PRIu64 "\n", in->blob_files);
	}
	if (fclose(f)) {
		free(text);
		return GERR_NOMEM;
	}
	*ret_text = text;
	*ret_len = len;
	return 0;
}
