/* ctl_status.c - gpuctl status and history: jobs as aligned lines like
 * squeue and sacct, or whole records (ctl_status.h). */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "ctl_cmd.h"
#include "ctl_help.h"
#include "ctl_human.h"
#include "ctl_status.h"

const char *ctl_job_state(const struct ctlcmd_job *job)
{
	if (strcmp(job->state, "active") == 0)
		return job->leases[1] > 0 ? "running" : "queued";  /* leased */
	return job->state;
}

int ctl_job_finished(const struct ctlcmd_job *job)
{
	const char *s = ctl_job_state(job);

	return strcmp(s, "done") == 0 || strcmp(s, "failed") == 0 ||
	       strcmp(s, "cancelled") == 0;
}

/* A time to show: 0 for not yet and not sent. */
static double when(double t)
{
	return t > 0 ? t : 0;
}

/* Seconds it ran: gpud's elapsed_s, else (an older gpud, which keeps no
 * start time) since it was submitted, unless it waits in the queue. */
static double job_elapsed(const struct ctlcmd_job *job, double now)
{
	double created = job->created_at, fin = job->finished_at;

	/* Never started: no time to show, rather than 0s. */
	if (job->started_at == 0)
		return -1;
	if (job->elapsed_s >= 0)
		return job->elapsed_s;
	if (!(created > 0) || strcmp(ctl_job_state(job), "queued") == 0)
		return -1;
	return (fin > 0 ? fin : now) > created ? (fin > 0 ? fin : now) - created : 0;
}

/* What a job's progress shows: its checkpointed units (units_done,
 * which never goes back) plus what its held leases did since their
 * checkpoints (units_running, from heartbeats), capped at the total. A
 * landing checkpoint moves units from running to done: the sum stays. */
double ctl_job_shown_units(const struct ctlcmd_job *job)
{
	double total = (double)job->total_units;
	double v = (double)job->units_done + (double)job->units_running;

	return total > 0 && v > total ? total : v;
}

/* "12.3% of 44 gangsters", and while part of it is not yet checkpointed
 * (held leases' heartbeats) " (4.1% saved)": the part a worker's loss
 * would not take back. */
static void job_progress(const struct ctlcmd_job *job, char *out, size_t n)
{
	double total = (double)job->total_units, done = (double)job->units_done;
	double shown = ctl_job_shown_units(job);
	char a[48], b[48];

	if (total > 0 && job->units_running > 0)
		snprintf(out, n, "%5.1f%% of %s (%.1f%% saved)", 100 * shown / total,
			 human_units(total, job->unit_name, a, sizeof(a)),
			 100 * (done < total ? done : total) / total);
	else if (total > 0)
		snprintf(out, n, "%5.1f%% of %s", 100 * shown / total,
			 human_units(total, job->unit_name, a, sizeof(a)));
	else if (job->units_running > 0)
		snprintf(out, n, "%s (%s saved)", human_units(shown, job->unit_name, a,
			 sizeof(a)), human_count(done, b, sizeof(b)));
	else
		snprintf(out, n, "%s", human_units(done, job->unit_name, a, sizeof(a)));
}

/* Running: the recent rate; finished: the average over its life. */
static void job_rate(const struct ctlcmd_job *job, char *out, size_t n)
{
	const char *s = ctl_job_state(job);
	char r[32];
	double avg = job->avg_rate, el;

	/* An older gpud sends no avg_rate: units over the time it ran. */
	if (avg < 0)
		avg = (el = job_elapsed(job, gclock_wall())) > 0 ?
		      (double)job->units_done / el : 0;
	if (strcmp(s, "running") == 0)
		human_rate(job->rate, out, n);
	else if (ctl_job_finished(job) && avg > 0)
		snprintf(out, n, "%s avg", human_rate(avg, r, sizeof(r)));
	else
		snprintf(out, n, "-");
}

static void job_eta(const struct ctlcmd_job *job, char *out, size_t n)
{
	if (strcmp(ctl_job_state(job), "running") == 0 && job->eta_s > 0)
		human_duration(job->eta_s, out, n);
	else
		snprintf(out, n, "-");
}

/* An integer, or "-" when not sent (below lo). */
static void job_int(int64_t v, int64_t lo, char *out, size_t n)
{
	if (v >= lo)
		snprintf(out, n, "%" PRId64, v);
	else
		snprintf(out, n, "-");
}

enum col { C_ID, C_NAME, C_WORKLOAD, C_STATE, C_PRIORITY, C_PROGRESS, C_UNITS,
	   C_RATE, C_AVG_RATE, C_ELAPSED, C_ETA, C_SUBMITTED, C_STARTED,
	   C_FINISHED, C_ATTEMPTS, C_VFAIL, C_REASON, C_USER };

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
	[C_USER] = { "user", "USER", 0 },
};

#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

static void cell(enum col c, const struct ctlcmd_job *job, double now, char *out,
		 size_t n)
{
	switch (c) {
	case C_ID: job_int(job->id, 0, out, n); break;
	case C_NAME: snprintf(out, n, "%s", job->name ? job->name : "-"); break;
	case C_WORKLOAD: snprintf(out, n, "%s", job->workload); break;
	case C_STATE:
		snprintf(out, n, "%s%s", ctl_job_state(job), job->damaged ? "(damaged)" : "");
		break;
	case C_PRIORITY: job_int(job->priority, CTLCMD_PRIORITY_MIN, out, n); break;
	case C_PROGRESS: job_progress(job, out, n); break;
	case C_UNITS: human_units(ctl_job_shown_units(job), job->unit_name, out, n); break;
	case C_RATE: job_rate(job, out, n); break;
	case C_AVG_RATE:
		if (job->avg_rate >= 0)
			human_rate(job->avg_rate, out, n);
		else
			snprintf(out, n, "-");
		break;
	case C_ELAPSED: human_duration(job_elapsed(job, now), out, n); break;
	case C_ETA: job_eta(job, out, n); break;
	case C_SUBMITTED: human_time(when(job->created_at), now, out, n); break;
	case C_STARTED: human_time(when(job->started_at), now, out, n); break;
	case C_FINISHED: human_time(when(job->finished_at), now, out, n); break;
	case C_ATTEMPTS: job_int(job->attempts, 0, out, n); break;
	case C_VFAIL: job_int(job->verify_failures, 0, out, n); break;
	case C_REASON: snprintf(out, n, "%s", job->reason ? job->reason : ""); break;
	case C_USER: snprintf(out, n, "%s", job->owner ? job->owner : "-"); break;
	}
}

int ctl_jobs_table(struct ctl_table *t, const char *cols,
		   const struct ctlcmd_job *jobs, size_t n_jobs, double now)
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
	for (size_t i = 0; i < n_jobs; i++) {
		char buf[CTL_TABLE_MAX_COLS][640];
		const char *row[CTL_TABLE_MAX_COLS];
		for (size_t c = 0; c < np; c++) {
			cell(pick[c], &jobs[i], now, buf[c], sizeof(buf[c]));
			row[c] = buf[c];
		}
		ctl_table_row(t, row);
	}
	return 0;
}

void ctl_job_line(char *out, size_t n, const struct ctlcmd_job *job)
{
	double total = (double)job->total_units, done = ctl_job_shown_units(job);
	char bar[40], prog[96], rate[48], eta[32];

	human_bar(total > 0 ? done / total : 0, 20, bar);
	job_progress(job, prog, sizeof(prog));
	job_rate(job, rate, sizeof(rate));
	job_eta(job, eta, sizeof(eta));
	snprintf(out, n, "job %" PRId64 " %s %s %s  %s  ETA %s", job->id,
		 ctl_job_state(job), bar, prog, rate, eta);
}

/* Lease counts by state, as a job's "leases" and "replicas" index them. */
enum { L_PENDING, L_LEASED, L_DONE, L_VERIFIED, L_FAILED };

static void counts_line(FILE *f, const char *what, const int64_t *counts,
			const int *keys, const char *const *names, size_t n)
{
	fprintf(f, "    %s:", what);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s %s %" PRId64, i ? "," : "", names[i], counts[keys[i]]);
	fprintf(f, "\n");
}

void ctl_job_long(FILE *f, const struct ctlcmd_job *job, double now)
{
	const char *unit = job->unit_name, *name = job->name;
	double total = (double)job->total_units, done = ctl_job_shown_units(job);
	char bar[40], a[48], b[48], c[48], r[32], e[32], t1[32], t2[32], t3[32];
	char saved[48];
	static const int lk[] = { L_PENDING, L_LEASED, L_DONE, L_VERIFIED, L_FAILED };
	static const char *const ln[] = { "pending", "leased", "done", "verified", "failed" };
	static const int rk[] = { L_PENDING, L_LEASED, L_VERIFIED, L_FAILED };
	static const char *const rn[] = { "pending", "leased", "agreed", "outvoted" };
	const int64_t *rl = job->replicas;

	human_bar(total > 0 ? done / total : 0, 30, bar);
	/* Past the checkpoints: shown, and what of it is saved. */
	saved[0] = '\0';
	if (job->units_running > 0)
		snprintf(saved, sizeof(saved), ", saved %s",
			 human_count((double)job->units_done, a, sizeof(a)));
	fprintf(f, "job %" PRId64 "%s%s%s  %s  %s %s %5.1f%%  %s of %s (verified %s%s)\n",
		job->id, name ? " \"" : "", name ? name : "", name ? "\"" : "", job->workload,
		job->damaged ? "damaged" : ctl_job_state(job), bar,
		total > 0 ? 100 * (done < total ? done : total) / total : 0,
		human_count(done, a, sizeof(a)), human_units(total, unit, b, sizeof(b)),
		human_count((double)job->units_verified, c, sizeof(c)), saved);
	job_rate(job, r, sizeof(r));
	job_eta(job, e, sizeof(e));
	fprintf(f, "    rate %s  ETA %s  elapsed %s", r, e,
		human_duration(job_elapsed(job, now), a, sizeof(a)));
	if (job->avg_rate >= 0)
		fprintf(f, "  average %s", human_rate(job->avg_rate, b, sizeof(b)));
	fprintf(f, "\n    submitted %s  started %s  finished %s",
		human_time(when(job->created_at), now, t1, sizeof(t1)),
		human_time(when(job->started_at), now, t2, sizeof(t2)),
		human_time(when(job->finished_at), now, t3, sizeof(t3)));
	if (job->priority >= CTLCMD_PRIORITY_MIN)
		fprintf(f, "  priority %" PRId64, job->priority);
	fprintf(f, "  user %s", job->owner ? job->owner : "-");
	if (job->attempts >= 0)
		fprintf(f, "  attempts %" PRId64, job->attempts);
	if (job->verify_failures >= 0)
		fprintf(f, "  verify failures %" PRId64, job->verify_failures);
	fprintf(f, "\n");
	ctl_lifecycle_line(f, job);
	counts_line(f, "leases", job->leases, lk, ln, 5);
	if (rl[L_PENDING] + rl[L_LEASED] + rl[L_VERIFIED] + rl[L_FAILED] > 0 ||
	    (job->check && strcmp(job->check, "full") == 0)) {
		fprintf(f, "    check %s\n", job->check ? job->check : "sample");
		counts_line(f, "replicas", rl, rk, rn, 4);
	}
	if (job->n_workers) {
		fprintf(f, "    workers:");
		for (size_t i = 0; i < job->n_workers; i++)
			fprintf(f, " %s", job->workers[i]);
		fprintf(f, "\n");
	}
	if (job->reason)
		fprintf(f, "    reason: %s\n", job->reason);
	if (job->damaged)
		fprintf(f, "    damaged (%s, as gpuctl check found): %s\n", job->state,
			job->damaged);
}

/* --state S[,S] and --workload W. */
static int keep(const struct ctlcmd_job *job, const char *states, const char *workload)
{
	const char *s = ctl_job_state(job);

	if (workload && strcmp(job->workload, workload) != 0)
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
	int rc = ctl_jobs_table(&t, cols, NULL, 0, 0);

	if (rc == 0)
		ctl_table_free(&t);
	return rc;
}

/* The jobs that pass --state and --workload: their rows (a new array,
 * *ret_n of them) and, when raw is not NULL, gpud's records of them (a
 * new JSON array into *ret_raw). -1 when out of memory. */
static int filtered(const struct ctlcmd_reply *rep, const json_t *raw,
		    const char *states, const char *workload,
		    struct ctlcmd_job **ret, size_t *ret_n, json_t **ret_raw)
{
	struct ctlcmd_job *kept = calloc(rep->n_jobs ? rep->n_jobs : 1, sizeof(*kept));
	json_t *rkept = raw ? json_array() : NULL;
	size_t n = 0;

	if (!kept || (raw && !rkept)) {
		free(kept);
		json_decref(rkept);
		fprintf(stderr, "gpuctl: out of memory\n");
		return -1;
	}
	for (size_t i = 0; i < rep->n_jobs; i++) {
		if (!keep(&rep->jobs[i], states, workload))
			continue;
		kept[n++] = rep->jobs[i];
		if (rkept)
			json_array_append(rkept, json_array_get(raw, i));
	}
	*ret = kept;
	*ret_n = n;
	if (ret_raw)
		*ret_raw = rkept;
	return 0;
}

/* Print jobs: whole records or a table; the filters applied here. */
static int print_jobs(const struct ctlcmd_reply *rep, int lng, const char *cols,
		      int no_header, const char *states, const char *workload,
		      const char *none)
{
	double now = gclock_wall();
	struct ctlcmd_job *kept;
	size_t n;
	struct ctl_table t;

	if (filtered(rep, NULL, states, workload, &kept, &n, NULL))
		return EXIT_FAIL;
	if (n == 0) {
		/* --no-header is for scripts: nothing at all. */
		if (!no_header)
			printf("%s\n", none);
	} else if (lng) {
		for (size_t i = 0; i < n; i++)
			ctl_job_long(stdout, &kept[i], now);
	} else {
		if (ctl_jobs_table(&t, cols, kept, n, now)) {
			free(kept);
			return EXIT_USAGE;
		}
		ctl_table_print(&t, stdout, no_header, 0, 0);
		ctl_table_free(&t);
	}
	free(kept);
	return 0;
}

int cmd_status(const struct ctl_target *to, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "long", no_argument, NULL, 'l' },
		{ "all", no_argument, NULL, 'a' }, { "format", required_argument, NULL, 'f' },
		{ "state", required_argument, NULL, 's' },
		{ "workload", required_argument, NULL, 'w' },
		{ "user", required_argument, NULL, 'u' },
		{ "no-header", no_argument, NULL, 'H' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int as_json = 0, lng = 0, all = 0, no_header = 0, fmt_given = 0, c, ex;
	const char *cols = CTL_STATUS_COLS, *states = NULL, *workload = NULL, *user = NULL;
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
		case 'u':
			if (ctl_check_user(optarg))
				return ctl_usage_error("status");
			user = optarg;
			break;
		case 'H': no_header = 1; break;
		case 'h': ctl_help_cmd(stdout, "status"); return 0;
		default: return ctl_usage_error("status");
		}
	}
	if (optind + 1 < argc || (optind < argc && ctl_parse_job(argv[optind], &job)) ||
	    (states && check_states(states)) || check_cols(cols))
		return ctl_usage_error("status");
	struct ctl_reply reply;
	ex = ctl_ask(to, &(struct ctlcmd_req){ .cmd = CTLCMD_STATUS, .job = job, .all = all,
		     .user = user }, !as_json, &reply);
	if (ex)
		return ex;
	/* gpud's own trouble (e.g. out of descriptors); --json keeps stdout
	 * the jobs alone. */
	ctl_print_warnings(&reply.f, as_json ? stderr : stdout);
	if (as_json) {
		struct ctlcmd_job *rows;
		size_t n;
		json_t *kept;
		ex = filtered(&reply.f, ctlcmd_reply_list(CTLCMD_STATUS, reply.json), states,
			      workload, &rows, &n, &kept);
		if (!ex) {
			ctl_print_json(kept);
			json_decref(kept);
			free(rows);
		}
		ctl_reply_free(&reply);
		return ex;
	}
	/* One job: its whole record, unless columns were asked for. */
	ex = print_jobs(&reply.f, lng || (job && !fmt_given), cols, no_header, states,
			workload, "no jobs");
	int64_t hidden = reply.f.hidden;
	if (!ex && hidden > 0 && !no_header)
		printf("(%" PRId64 " job%s finished more than a day ago: "
		       "gpuctl status --all)\n", hidden, hidden == 1 ? "" : "s");
	ctl_reply_free(&reply);
	return ex;
}

int cmd_history(const struct ctl_target *to, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "all", no_argument, NULL, 'a' },
		{ "limit", required_argument, NULL, 'n' },
		{ "format", required_argument, NULL, 'f' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "state", required_argument, NULL, 's' },
		{ "workload", required_argument, NULL, 'w' },
		{ "user", required_argument, NULL, 'u' },
		{ "no-header", no_argument, NULL, 'H' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int as_json = 0, all = 0, no_header = 0, c, ex;
	long limit = 0;
	const char *cols = "id,name,user,workload,state,submitted,started,finished,"
			   "elapsed,units,avg_rate,attempts,vfail";
	struct ctlcmd_req req = { .cmd = CTLCMD_HISTORY };

	ctl_opt_reset();
	while ((c = getopt_long(argc, argv, "ah", opts, NULL)) != -1) {
		switch (c) {
		case 'j': as_json = 1; break;
		case 'a': all = 1; break;
		case 'n':
			if (ctl_parse_int("--limit", optarg, 1, CTLCMD_HISTORY_LIMIT_MAX, &limit))
				return ctl_usage_error("history");
			break;
		case 'f': cols = optarg; break;
		case 'S':
		case 'U':
			if (ctl_parse_time(c == 'S' ? "--since" : "--until", optarg,
					   c == 'S' ? &req.since : &req.until))
				return ctl_usage_error("history");
			/* 0 would read as no bound (the last 30 days): 1 keeps
			 * the same jobs. */
			if (c == 'S' && req.since == 0)
				req.since = 1;
			if (c == 'U' && req.until == 0) {
				fprintf(stderr, "gpuctl: --until: no job finished before 1970\n");
				return ctl_usage_error("history");
			}
			break;
		case 's':
			if (strcmp(optarg, "done") && strcmp(optarg, "failed") &&
			    strcmp(optarg, "cancelled")) {
				fprintf(stderr, "gpuctl: --state: a finished job is done, "
					"failed or cancelled, not '%.64s'\n", optarg);
				return ctl_usage_error("history");
			}
			req.state = optarg;
			break;
		case 'w': req.workload = optarg; break;
		case 'u':
			if (ctl_check_user(optarg))
				return ctl_usage_error("history");
			req.user = optarg;
			break;
		case 'H': no_header = 1; break;
		case 'h': ctl_help_cmd(stdout, "history"); return 0;
		default: return ctl_usage_error("history");
		}
	}
	if (req.since && req.until && req.since >= req.until) {
		fprintf(stderr, "gpuctl: --since must be before --until\n");
		return ctl_usage_error("history");
	}
	if (optind < argc || check_cols(cols))
		return ctl_usage_error("history");
	struct ctl_reply reply;
	req.all = all;
	req.limit = limit ? limit : CTLCMD_HISTORY_LIMIT_DEFAULT;
	ex = ctl_ask(to, &req, !as_json, &reply);
	if (ex)
		return ex;
	if (as_json)
		ctl_print_json(ctlcmd_reply_list(CTLCMD_HISTORY, reply.json));
	else
		ex = print_jobs(&reply.f, 0, cols, no_header, NULL, NULL,
				all || req.since || req.until || req.state ||
				req.workload || req.user ? "no finished jobs match" :
				"no jobs finished in the last 30 days");
	ctl_reply_free(&reply);
	return ex;
}
