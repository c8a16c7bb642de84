/* ctl_status.c - gpuctl status and history: jobs as aligned lines like
 * squeue and sacct, or whole records (ctl_status.h). */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_cmd.h"
#include "ctl_help.h"
#include "ctl_human.h"
#include "ctl_status.h"

static double num(const json_t *j, const char *key)
{
	return json_number_value(json_object_get(j, key));
}

static const char *str(const json_t *j, const char *key)
{
	return json_string_value(json_object_get(j, key));
}

const char *ctl_job_state(const json_t *job)
{
	const char *s = str(job, "state");

	if (!s)
		return "?";
	if (strcmp(s, "active") == 0)
		return num(json_object_get(job, "leases"), "leased") > 0 ? "running" : "queued";
	return s;
}

int ctl_job_finished(const json_t *job)
{
	const char *s = ctl_job_state(job);

	return strcmp(s, "done") == 0 || strcmp(s, "failed") == 0 ||
	       strcmp(s, "cancelled") == 0;
}

/* Seconds it ran: gpud's elapsed_s, else (an older gpud, which keeps no
 * start time) since it was submitted, unless it waits in the queue. */
static double job_elapsed(const json_t *job, double now)
{
	double created = num(job, "created_at"), fin = num(job, "finished_at");

	/* Never started: no time to show, rather than 0s. */
	if (json_is_null(json_object_get(job, "started_at")))
		return -1;
	if (json_is_number(json_object_get(job, "elapsed_s")))
		return num(job, "elapsed_s");
	if (!(created > 0) || strcmp(ctl_job_state(job), "queued") == 0)
		return -1;
	return (fin > 0 ? fin : now) > created ? (fin > 0 ? fin : now) - created : 0;
}

static void job_progress(const json_t *job, char *out, size_t n)
{
	double total = num(job, "total_units"), done = num(job, "units_done");
	const char *unit = str(job, "unit_name");
	char a[48];

	if (total > 0)
		snprintf(out, n, "%5.1f%% of %s", 100 * (done < total ? done : total) / total,
			 human_units(total, unit, a, sizeof(a)));
	else
		snprintf(out, n, "%s", human_units(done, unit, a, sizeof(a)));
}

/* Running: the recent rate; finished: the average over its life. */
static void job_rate(const json_t *job, char *out, size_t n)
{
	const char *s = ctl_job_state(job);
	char r[32];

	double avg = num(job, "avg_rate"), el;

	/* An older gpud sends no avg_rate: units over the time it ran. */
	if (!json_is_number(json_object_get(job, "avg_rate")) &&
	    (el = job_elapsed(job, human_now())) > 0)
		avg = num(job, "units_done") / el;
	if (strcmp(s, "running") == 0)
		human_rate(num(job, "rate"), out, n);
	else if (ctl_job_finished(job) && avg > 0)
		snprintf(out, n, "%s avg", human_rate(avg, r, sizeof(r)));
	else
		snprintf(out, n, "-");
}

static void job_eta(const json_t *job, char *out, size_t n)
{
	const json_t *eta = json_object_get(job, "eta_s");

	if (strcmp(ctl_job_state(job), "running") == 0 && json_is_number(eta))
		human_duration(json_number_value(eta), out, n);
	else
		snprintf(out, n, "-");
}

static void job_int(const json_t *job, const char *key, char *out, size_t n)
{
	const json_t *v = json_object_get(job, key);

	if (json_is_integer(v))
		snprintf(out, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else
		snprintf(out, n, "-");
}

enum col { C_ID, C_NAME, C_WORKLOAD, C_STATE, C_PRIORITY, C_PROGRESS, C_UNITS,
	   C_RATE, C_AVG_RATE, C_ELAPSED, C_ETA, C_SUBMITTED, C_STARTED,
	   C_FINISHED, C_ATTEMPTS, C_VFAIL, C_REASON };

static const struct {
	const char *name, *head;
	int right;
} columns[] = {
	[C_ID] = { "id", "ID", 1 },
	[C_NAME] = { "name", "NAME", 0 },
	[C_WORKLOAD] = { "workload", "WORKLOAD", 0 },
	[C_STATE] = { "state", "STATE", 0 },
	[C_PRIORITY] = { "priority", "PRIO", 1 },
	[C_PROGRESS] = { "progress", "PROGRESS", 0 },
	[C_UNITS] = { "units", "UNITS", 1 },
	[C_RATE] = { "rate", "RATE", 1 },
	[C_AVG_RATE] = { "avg_rate", "AVG_RATE", 1 },
	[C_ELAPSED] = { "elapsed", "ELAPSED", 1 },
	[C_ETA] = { "eta", "ETA", 1 },
	[C_SUBMITTED] = { "submitted", "SUBMITTED", 0 },
	[C_STARTED] = { "started", "STARTED", 0 },
	[C_FINISHED] = { "finished", "FINISHED", 0 },
	[C_ATTEMPTS] = { "attempts", "ATTEMPTS", 1 },
	[C_VFAIL] = { "vfail", "VFAIL", 1 },
	[C_REASON] = { "reason", "REASON", 0 },
};

#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

static void cell(enum col c, const json_t *job, double now, char *out, size_t n)
{
	const char *s;

	switch (c) {
	case C_ID: job_int(job, "id", out, n); break;
	case C_NAME:
		s = str(job, "name");
		snprintf(out, n, "%s", s ? s : "-");
		break;
	case C_WORKLOAD:
		s = str(job, "workload");
		snprintf(out, n, "%s", s ? s : "?");
		break;
	case C_STATE:
		snprintf(out, n, "%s%s", ctl_job_state(job),
			 json_is_string(json_object_get(job, "damaged")) ? "(damaged)" : "");
		break;
	case C_PRIORITY: job_int(job, "priority", out, n); break;
	case C_PROGRESS: job_progress(job, out, n); break;
	case C_UNITS: human_units(num(job, "units_done"), str(job, "unit_name"), out, n); break;
	case C_RATE: job_rate(job, out, n); break;
	case C_AVG_RATE:
		if (json_is_number(json_object_get(job, "avg_rate")))
			human_rate(num(job, "avg_rate"), out, n);
		else
			snprintf(out, n, "-");
		break;
	case C_ELAPSED: human_duration(job_elapsed(job, now), out, n); break;
	case C_ETA: job_eta(job, out, n); break;
	case C_SUBMITTED: human_time(num(job, "created_at"), now, out, n); break;
	case C_STARTED: human_time(num(job, "started_at"), now, out, n); break;
	case C_FINISHED: human_time(num(job, "finished_at"), now, out, n); break;
	case C_ATTEMPTS: job_int(job, "attempts", out, n); break;
	case C_VFAIL: job_int(job, "verify_failures", out, n); break;
	case C_REASON:
		s = str(job, "reason");
		snprintf(out, n, "%s", s ? s : "");
		break;
	}
}

int ctl_jobs_table(struct ctl_table *t, const char *cols, const json_t *jobs,
		   double now)
{
	enum col pick[CTL_TABLE_MAX_COLS];
	const char *head[CTL_TABLE_MAX_COLS];
	int right[CTL_TABLE_MAX_COLS];
	size_t np = 0;
	const char *p = cols;

	while (*p) {
		size_t len = strcspn(p, ",");
		size_t k = 0;
		for (; k < NCOLUMNS; k++)
			if (strlen(columns[k].name) == len &&
			    strncmp(columns[k].name, p, len) == 0)
				break;
		if (k == NCOLUMNS || np == CTL_TABLE_MAX_COLS) {
			fprintf(stderr, "gpuctl: --format: unknown column '%.*s' (the "
				"columns: see gpuctl help status)\n", (int)(len > 64 ? 64 : len), p);
			return -1;
		}
		pick[np] = (enum col)k;
		head[np] = columns[k].head;
		right[np] = columns[k].right;
		np++;
		p += len;
		if (*p == ',')
			p++;
	}
	if (np == 0) {
		fprintf(stderr, "gpuctl: --format wants at least one column\n");
		return -1;
	}
	ctl_table_init(t, np, head, right);
	size_t i;
	json_t *j;
	json_array_foreach(jobs, i, j) {
		char buf[CTL_TABLE_MAX_COLS][640];
		const char *row[CTL_TABLE_MAX_COLS];
		for (size_t c = 0; c < np; c++) {
			cell(pick[c], j, now, buf[c], sizeof(buf[c]));
			row[c] = buf[c];
		}
		ctl_table_row(t, row);
	}
	return 0;
}

void ctl_job_line(char *out, size_t n, const json_t *job)
{
	double total = num(job, "total_units"), done = num(job, "units_done");
	char bar[40], prog[96], rate[48], eta[32];

	human_bar(total > 0 ? done / total : 0, 20, bar);
	job_progress(job, prog, sizeof(prog));
	job_rate(job, rate, sizeof(rate));
	job_eta(job, eta, sizeof(eta));
	snprintf(out, n, "job %" JSON_INTEGER_FORMAT " %s %s %s  %s  ETA %s",
		 json_integer_value(json_object_get(job, "id")), ctl_job_state(job),
		 bar, prog, rate, eta);
}

static void counts_line(FILE *f, const char *what, const json_t *lc, const char *const *keys,
			const char *const *names, size_t n)
{
	fprintf(f, "    %s:", what);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s %s %" JSON_INTEGER_FORMAT, i ? "," : "", names[i],
			json_integer_value(json_object_get(lc, keys[i])));
	fprintf(f, "\n");
}

void ctl_job_long(FILE *f, const json_t *job, double now)
{
	const char *unit = str(job, "unit_name"), *name = str(job, "name");
	const json_t *damaged = json_object_get(job, "damaged");
	double total = num(job, "total_units"), done = num(job, "units_done");
	char bar[40], a[48], b[48], c[48], r[32], e[32], t1[32], t2[32], t3[32];
	static const char *const lk[] = { "pending", "leased", "done", "verified", "failed" };
	static const char *const rk[] = { "pending", "leased", "verified", "failed" };
	static const char *const rn[] = { "pending", "leased", "agreed", "outvoted" };

	human_bar(total > 0 ? done / total : 0, 30, bar);
	fprintf(f, "job %" JSON_INTEGER_FORMAT "%s%s%s  %s  %s %s %5.1f%%  %s of %s (verified %s)\n",
		json_integer_value(json_object_get(job, "id")), name ? " \"" : "",
		name ? name : "", name ? "\"" : "", str(job, "workload"),
		json_is_string(damaged) ? "damaged" : ctl_job_state(job), bar,
		total > 0 ? 100 * (done < total ? done : total) / total : 0,
		human_count(done, a, sizeof(a)), human_units(total, unit, b, sizeof(b)),
		human_count(num(job, "units_verified"), c, sizeof(c)));
	job_rate(job, r, sizeof(r));
	job_eta(job, e, sizeof(e));
	fprintf(f, "    rate %s  ETA %s  elapsed %s", r, e,
		human_duration(job_elapsed(job, now), a, sizeof(a)));
	if (json_is_number(json_object_get(job, "avg_rate")))
		fprintf(f, "  average %s", human_rate(num(job, "avg_rate"), b, sizeof(b)));
	fprintf(f, "\n    submitted %s  started %s  finished %s",
		human_time(num(job, "created_at"), now, t1, sizeof(t1)),
		human_time(num(job, "started_at"), now, t2, sizeof(t2)),
		human_time(num(job, "finished_at"), now, t3, sizeof(t3)));
	if (json_is_integer(json_object_get(job, "priority")))
		fprintf(f, "  priority %" JSON_INTEGER_FORMAT,
			json_integer_value(json_object_get(job, "priority")));
	if (json_is_integer(json_object_get(job, "attempts")))
		fprintf(f, "  attempts %" JSON_INTEGER_FORMAT,
			json_integer_value(json_object_get(job, "attempts")));
	if (json_is_integer(json_object_get(job, "verify_failures")))
		fprintf(f, "  verify failures %" JSON_INTEGER_FORMAT,
			json_integer_value(json_object_get(job, "verify_failures")));
	fprintf(f, "\n");
	counts_line(f, "leases", json_object_get(job, "leases"), lk, lk, 5);
	const json_t *rl = json_object_get(job, "replicas");
	const char *chk = str(job, "check");
	if (num(rl, "pending") + num(rl, "leased") + num(rl, "verified") + num(rl, "failed") > 0 ||
	    (chk && strcmp(chk, "full") == 0)) {
		fprintf(f, "    check %s\n", chk ? chk : "sample");
		counts_line(f, "replicas", rl, rk, rn, 4);
	}
	const json_t *workers = json_object_get(job, "workers");
	if (json_array_size(workers)) {
		size_t i;
		json_t *w;
		fprintf(f, "    workers:");
		json_array_foreach(workers, i, w)
			fprintf(f, " %s", json_string_value(w));
		fprintf(f, "\n");
	}
	if (str(job, "reason"))
		fprintf(f, "    reason: %s\n", str(job, "reason"));
	if (json_is_string(damaged))
		fprintf(f, "    damaged (%s, as gpuctl check found): %s\n", str(job, "state"),
			json_string_value(damaged));
}

/* --state S[,S] and --workload W. */
static int keep(const json_t *job, const char *states, const char *workload)
{
	const char *s = ctl_job_state(job), *w = str(job, "workload");

	if (workload && (!w || strcmp(w, workload) != 0))
		return 0;
	if (!states)
		return 1;
	for (const char *p = states; *p;) {
		size_t len = strcspn(p, ",");
		if (strlen(s) == len && strncmp(s, p, len) == 0)
			return 1;
		p += len + (p[len] == ',');
	}
	return 0;
}

static int check_states(const char *states)
{
	static const char *const known[] = { "queued", "running", "paused", "done",
					     "failed", "cancelled" };

	for (const char *p = states; *p;) {
		size_t len = strcspn(p, ","), k = 0;
		for (; k < sizeof(known) / sizeof(known[0]); k++)
			if (strlen(known[k]) == len && strncmp(known[k], p, len) == 0)
				break;
		if (k == sizeof(known) / sizeof(known[0]) || len == 0) {
			fprintf(stderr, "gpuctl: --state: '%.*s' is no state (queued, running, "
				"paused, done, failed, cancelled)\n", (int)(len > 64 ? 64 : len), p);
			return -1;
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

/* --format's names, checked before gpud is asked. */
static int check_cols(const char *cols)
{
	struct ctl_table t;
	json_t *none = json_array();
	int rc = ctl_jobs_table(&t, cols, none, 0);

	if (rc == 0)
		ctl_table_free(&t);
	json_decref(none);
	return rc;
}

/* Print jobs: whole records or a table; the filters applied here. */
/* The jobs that pass --state and --workload, a new array. */
static json_t *filtered(const json_t *jobs, const char *states, const char *workload)
{
	json_t *kept = json_array(), *j;
	size_t i;

	json_array_foreach(jobs, i, j)
		if (keep(j, states, workload))
			json_array_append(kept, j);
	return kept;
}

static int print_jobs(json_t *jobs, int lng, const char *cols, int no_header,
		      const char *states, const char *workload, const char *none)
{
	double now = human_now();
	json_t *kept = filtered(jobs, states, workload), *j;
	size_t i;
	struct ctl_table t;

	if (json_array_size(kept) == 0) {
		/* --no-header is for scripts: nothing at all. */
		if (!no_header)
			printf("%s\n", none);
	} else if (lng) {
		json_array_foreach(kept, i, j)
			ctl_job_long(stdout, j, now);
	} else {
		if (ctl_jobs_table(&t, cols, kept, now)) {
			json_decref(kept);
			return EXIT_USAGE;
		}
		ctl_table_print(&t, stdout, no_header, 0, 0);
		ctl_table_free(&t);
	}
	json_decref(kept);
	return 0;
}

int cmd_status(const struct ctl_target *to, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "long", no_argument, NULL, 'l' },
		{ "all", no_argument, NULL, 'a' }, { "format", required_argument, NULL, 'f' },
		{ "state", required_argument, NULL, 's' },
		{ "workload", required_argument, NULL, 'w' },
		{ "no-header", no_argument, NULL, 'H' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int as_json = 0, lng = 0, all = 0, no_header = 0, fmt_given = 0, c, ex;
	const char *cols = CTL_STATUS_COLS, *states = NULL, *workload = NULL;
	json_int_t job = 0;

	ctl_opt_reset();
	while ((c = getopt_long(argc, argv, "lah", opts, NULL)) != -1) {
		switch (c) {
		case 'j': as_json = 1; break;
		case 'l': lng = 1; break;
		case 'a': all = 1; break;
		case 'f': cols = optarg; fmt_given = 1; break;
		case 's': states = optarg; break;
		case 'w': workload = optarg; break;
		case 'H': no_header = 1; break;
		case 'h': ctl_help_cmd(stdout, "status"); return 0;
		default: return ctl_usage_error("status");
		}
	}
	if (optind + 1 < argc || (optind < argc && ctl_parse_job(argv[optind], &job)) ||
	    (states && check_states(states)) || check_cols(cols))
		return ctl_usage_error("status");
	json_t *reply = ctl_request(to, &(struct ctlcmd_req){ .cmd = CTLCMD_STATUS, .job = job,
		.all = all }, &ex);
	if (!reply)
		return ex;
	/* gpud's own trouble (e.g. out of descriptors); --json keeps stdout
	 * the jobs alone. */
	ctl_print_warnings(reply, as_json ? stderr : stdout);
	if (as_json) {
		json_t *kept = filtered(json_object_get(reply, "jobs"), states, workload);
		ctl_print_json(kept);
		json_decref(kept);
		json_decref(reply);
		return 0;
	}
	ctl_shown(reply);
	/* One job: its whole record, unless columns were asked for. */
	ex = print_jobs(json_object_get(reply, "jobs"), lng || (job && !fmt_given), cols, no_header,
			states, workload, "no jobs");
	json_int_t hidden = json_integer_value(json_object_get(reply, "hidden"));
	if (!ex && hidden > 0 && !no_header)
		printf("(%" JSON_INTEGER_FORMAT " job%s finished more than a day ago: "
		       "gpuctl status --all)\n", hidden, hidden == 1 ? "" : "s");
	json_decref(reply);
	return ex;
}

int cmd_history(const struct ctl_target *to, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "all", no_argument, NULL, 'a' },
		{ "limit", required_argument, NULL, 'n' },
		{ "format", required_argument, NULL, 'f' },
		{ "no-header", no_argument, NULL, 'H' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int as_json = 0, all = 0, no_header = 0, c, ex;
	long limit = 0;
	const char *cols = "id,name,workload,state,submitted,started,finished,elapsed,"
			   "units,avg_rate,attempts,vfail";

	ctl_opt_reset();
	while ((c = getopt_long(argc, argv, "ah", opts, NULL)) != -1) {
		switch (c) {
		case 'j': as_json = 1; break;
		case 'a': all = 1; break;
		case 'n':
			if (ctl_parse_int("--limit", optarg, 1, 1000000, &limit))
				return ctl_usage_error("history");
			break;
		case 'f': cols = optarg; break;
		case 'H': no_header = 1; break;
		case 'h': ctl_help_cmd(stdout, "history"); return 0;
		default: return ctl_usage_error("history");
		}
	}
	if (optind < argc || check_cols(cols))
		return ctl_usage_error("history");
	json_t *reply = ctl_request(to, &(struct ctlcmd_req){ .cmd = CTLCMD_HISTORY, .all = all,
		.limit = limit ? limit : CTLCMD_HISTORY_LIMIT_DEFAULT }, &ex);
	if (!reply)
		return ex;
	if (as_json) {
		ctl_print_json(json_object_get(reply, "jobs"));
		json_decref(reply);
		return 0;
	}
	ctl_shown(reply);
	ex = print_jobs(json_object_get(reply, "jobs"), 0, cols, no_header, NULL, NULL,
			all ? "no finished jobs" : "no jobs finished in the last 30 days");
	json_decref(reply);
	return ex;
}
