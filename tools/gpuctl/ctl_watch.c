/* ctl_watch.c - gpuctl's live views and the workers: watch (jobs and
 * workers redrawn, fitted to the terminal), wait (one progress line until
 * the job ends) and workers. */
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "ctl_cmd.h"
#include "ctl_help.h"
#include "ctl_human.h"
#include "ctl_status.h"
#include "ctl_table.h"

/* Where a worker runs, in a few words: "node7 slurm 1234_0 (job 1240)",
 * "node7 pod gpuworker-2"; "-" when not known. */
static void fmt_where(const json_t *w, char *buf, size_t len)
{
	const char *host = json_string_value(json_object_get(w, "host"));
	const char *job = json_string_value(json_object_get(w, "slurm_job"));
	const char *arr = json_string_value(json_object_get(w, "slurm_array"));
	const char *pod = json_string_value(json_object_get(w, "pod"));
	size_t used = 0;

	buf[0] = '\0';
	if (host)
		used += (size_t)snprintf(buf + used, len - used, "%s", host);
	if (arr && used < len)
		used += (size_t)snprintf(buf + used, len - used, "%sslurm %s%s%s%s",
					 used ? " " : "", arr, job ? " (job " : "",
					 job ? job : "", job ? ")" : "");
	else if (job && used < len)
		used += (size_t)snprintf(buf + used, len - used, "%sslurm %s",
					 used ? " " : "", job);
	if (pod && used < len)
		used += (size_t)snprintf(buf + used, len - used, "%spod %s",
					 used ? " " : "", pod);
	if (!buf[0])
		snprintf(buf, len, "-");
}

/* The unit of the job a worker works on: gpud's job_unit, else (an older
 * gpud) the job's unit_name from a status reply. */
static const char *worker_unit(const json_t *w, const json_t *jobs)
{
	const char *u = json_string_value(json_object_get(w, "job_unit"));
	json_int_t job = json_integer_value(json_object_get(w, "job"));
	size_t i;
	json_t *j;

	if (u || !job)
		return u;
	json_array_foreach(jobs, i, j)
		if (json_integer_value(json_object_get(j, "id")) == job)
			return json_string_value(json_object_get(j, "unit_name"));
	return NULL;
}

static void workers_table(struct ctl_table *t, const json_t *workers,
			  const json_t *jobs, double now)
{
	static const char *const head[] = { "ID", "NAME", "STATE", "DEVICE", "THREADS",
		"LEASE", "RATE", "LEASES", "FAILURES", "FOREIGN", "STALLS", "TRUST",
		"SEEN", "WHERE" };
	static const int right[] = { 1, 0, 0, 0, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0 };
	size_t i;
	json_t *w;

	ctl_table_init(t, sizeof(head) / sizeof(head[0]), head, right);
	json_array_foreach(workers, i, w) {
		char id[24], threads[24] = "-", lease[64] = "-", rate[64] = "-", n[3][24];
		char trust[48] = "-", seen[32] = "-", where[640], c[32];
		const char *state = json_is_true(json_object_get(w, "quarantined"))
			? "quarantined" : json_is_true(json_object_get(w, "online"))
			? "online" : "offline";
		const char *unit = worker_unit(w, jobs);
		double last = json_number_value(json_object_get(w, "last_seen"));
		json_int_t need = json_integer_value(json_object_get(w, "trust_after"));

		snprintf(id, sizeof(id), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(json_object_get(w, "id")));
		if (json_is_integer(json_object_get(w, "threads")))
			snprintf(threads, sizeof(threads), "%" JSON_INTEGER_FORMAT,
				 json_integer_value(json_object_get(w, "threads")));
		if (json_is_integer(json_object_get(w, "lease"))) {
			snprintf(lease, sizeof(lease), "%" JSON_INTEGER_FORMAT " (job %"
				 JSON_INTEGER_FORMAT ")",
				 json_integer_value(json_object_get(w, "lease")),
				 json_integer_value(json_object_get(w, "job")));
			/* Its rate in its own job's unit: battles and values
			 * never add up. */
			snprintf(rate, sizeof(rate), "%s %s/s",
				 human_count(json_number_value(json_object_get(w, "rate")), c,
					     sizeof(c)), unit ? unit : "units");
		}
		snprintf(n[0], sizeof(n[0]), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(json_object_get(w, "leases_done")));
		snprintf(n[1], sizeof(n[1]), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(json_object_get(w, "failures")));
		snprintf(n[2], sizeof(n[2]), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(json_object_get(w, "foreign_msgs")));
		/* trust: "-" with --trust-after off, else trusted or k/N
		 * results confirmed in a row (its results are replicated). */
		if (need > 0 && json_is_true(json_object_get(w, "trusted")))
			snprintf(trust, sizeof(trust), "trusted");
		else if (need > 0)
			snprintf(trust, sizeof(trust), "%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
				 json_integer_value(json_object_get(w, "streak")), need);
		if (last > 0)
			snprintf(seen, sizeof(seen), "%s ago",
				 human_duration(now > last ? now - last : 0, c, sizeof(c)));
		char stalls[24];
		snprintf(stalls, sizeof(stalls), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(json_object_get(w, "stalls")));
		fmt_where(w, where, sizeof(where));
		const char *row[] = { id, json_string_value(json_object_get(w, "name")), state,
			json_string_value(json_object_get(w, "device")), threads, lease, rate,
			n[0], n[1], n[2], stalls, trust, seen, where };
		ctl_table_row(t, row);
	}
}

/* A status reply for the units of the workers' jobs; NULL when gpud
 * sends job_unit itself or there is no lease. */
static json_t *units_source(const struct ctl_target *to, const json_t *workers)
{
	size_t i;
	json_t *w;
	int ex;

	json_array_foreach(workers, i, w)
		if (json_is_integer(json_object_get(w, "job")) &&
		    !json_object_get(w, "job_unit"))
			return ctl_shown(ctl_request(to, &(struct ctlcmd_req){ .cmd = CTLCMD_STATUS }, &ex));
	return NULL;
}

int cmd_workers(const struct ctl_target *to, int argc, char **argv)
{
	int as_json, ex;
	json_t *reply = ctl_json_only_request(to, CTLCMD_WORKERS, "workers", argc, argv,
					      &as_json, &ex);
	struct ctl_table t;

	if (!reply)
		return ex;
	json_t *jobs = units_source(to, json_object_get(ctl_shown(reply), "workers"));
	workers_table(&t, json_object_get(reply, "workers"), json_object_get(jobs, "jobs"),
		      human_now());
	if (t.nrows)
		ctl_table_print(&t, stdout, 0, 0, 0);
	else
		printf("no workers\n");
	ctl_table_free(&t);
	json_decref(jobs);
	json_decref(reply);
	return 0;
}

/* The terminal's size, or 0 x 0 when stdout is none. */
static void term_size(size_t *rows, size_t *cols)
{
	struct winsize ws;

	*rows = *cols = 0;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* One screen: a title, the jobs, the workers; on a terminal of rows x
 * cols, every line cut to cols and the lists to what fits, workers
 * getting at least a third of the room when both overflow. */
static void draw(const json_t *jobs, const json_t *workers, double interval,
		 int tty)
{
	double now = human_now();
	size_t rows, cols, jrows = 0, wrows = 0;
	struct ctl_table jt, wt;
	char when[32], title[128];
	time_t t = (time_t)now;
	struct tm tm;

	term_size(&rows, &cols);
	if (!tty)
		rows = cols = 0;
	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
	snprintf(title, sizeof(title), "gpud %s   (every %.1fs, Ctrl-C to quit)", when, interval);
	if (tty)
		printf("\033[H\033[2J"); /* home, clear */
	printf("%.*s\n\n", (int)(cols ? human_fit(title, cols) : strlen(title)), title);
	ctl_jobs_table(&jt, CTL_STATUS_COLS, json_object_get(jobs, "jobs"), now);
	workers_table(&wt, json_object_get(workers, "workers"), json_object_get(jobs, "jobs"), now);
	if (rows) {
		/* Title, blank, blank between, and the cursor's last line. */
		size_t room = rows > 5 ? rows - 4 : 1;
		size_t jneed = 1 + (jt.nrows ? jt.nrows : 1), wneed = 1 + (wt.nrows ? wt.nrows : 1);
		if (jneed + wneed > room) {
			size_t wmin = room / 3 > 2 ? room / 3 : 2;
			wrows = wneed < wmin ? wneed : wmin;
			jrows = room > wrows ? room - wrows : 1;
			if (jneed < jrows) {
				jrows = jneed;
				wrows = room - jrows;
			}
			/* Less the header line each. */
			jrows = jrows > 1 ? jrows - 1 : 1;
			wrows = wrows > 1 ? wrows - 1 : 1;
		}
	}
	if (jt.nrows)
		ctl_table_print(&jt, stdout, 0, jrows, cols);
	else
		printf("no jobs\n");
	printf("\n");
	if (wt.nrows)
		ctl_table_print(&wt, stdout, 0, wrows, cols);
	else
		printf("no workers\n");
	ctl_table_free(&jt);
	ctl_table_free(&wt);
	fflush(stdout);
}

int cmd_watch(const struct ctl_target *to, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' }, { "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	double interval = 2;
	long count = 0;
	int all = 0, c, tty = isatty(STDOUT_FILENO);
	json_int_t job = 0;

	ctl_opt_reset();
	while ((c = getopt_long(argc, argv, "ah", opts, NULL)) != -1) {
		if (c == 'i' && ctl_parse_seconds("--interval", optarg, 0.1, 3600, &interval))
			return ctl_usage_error("watch");
		if (c == 'n' && ctl_parse_int("--count", optarg, 1, 1000000000, &count))
			return ctl_usage_error("watch");
		if (c == 'a')
			all = 1;
		if (c == 'h')
			return ctl_help_cmd(stdout, "watch"), 0;
		if (c == '?')
			return ctl_usage_error("watch");
	}
	if (optind + 1 < argc || (optind < argc && ctl_parse_job(argv[optind], &job)))
		return ctl_usage_error("watch");
	for (long n = 0; count == 0 || n < count; n++) {
		int ex;
		json_t *jobs = ctl_shown(ctl_request(to, &(struct ctlcmd_req){ .cmd = CTLCMD_STATUS,
			.job = job, .all = all }, &ex));
		if (!jobs)
			return ex;
		json_t *workers = ctl_shown(ctl_request(to, &(struct ctlcmd_req){ .cmd = CTLCMD_WORKERS }, &ex));
		if (!workers) {
			json_decref(jobs);
			return ex;
		}
		draw(jobs, workers, interval, tty);
		json_decref(jobs);
		json_decref(workers);
		if (count == 0 || n + 1 < count)
			poll(NULL, 0, (int)(interval * 1000));
	}
	return 0;
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cmd_wait(const struct ctl_target *to, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	double timeout = 0, t0 = mono_now(), last_line = -1e9;
	int tty = isatty(STDERR_FILENO), c;
	json_int_t job;

	ctl_opt_reset();
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 't' && ctl_parse_seconds("--timeout", optarg, 0.001, 1e9, &timeout))
			return ctl_usage_error("wait");
		if (c == 'h')
			return ctl_help_cmd(stdout, "wait"), 0;
		if (c == '?')
			return ctl_usage_error("wait");
	}
	if (optind + 1 != argc || ctl_parse_job(argv[optind], &job))
		return ctl_usage_error("wait");
	for (;;) {
		int ex;
		json_t *reply = ctl_shown(ctl_request(to, &(struct ctlcmd_req){ .cmd = CTLCMD_STATUS,
			.job = job }, &ex));
		if (!reply) {
			if (tty && last_line > -1e9)
				fprintf(stderr, "\n");
			return ex;
		}
		json_t *j = json_array_get(json_object_get(reply, "jobs"), 0);
		double elapsed = mono_now() - t0;
		/* On a terminal the line is redrawn in place, cleared to its
		 * end so a shorter line leaves nothing behind; in a log, one
		 * line every 5 s. */
		if (tty || elapsed - last_line >= 5.0) {
			char line[512];
			ctl_job_line(line, sizeof(line), j);
			fprintf(stderr, tty ? "\r%s\033[K" : "%s\n", line);
			last_line = elapsed;
		}
		if (ctl_job_finished(j)) {
			const char *state = ctl_job_state(j);
			const char *reason = json_string_value(json_object_get(j, "reason"));
			int ok = strcmp(state, "done") == 0;
			if (tty)
				fprintf(stderr, "\n");
			if (!ok)
				fprintf(stderr, "gpuctl: job %" JSON_INTEGER_FORMAT " %s%s%s\n", job,
					state, reason ? ": " : "", reason ? reason : "");
			json_decref(reply);
			return ok ? 0 : EXIT_JOB_FAILED;
		}
		json_decref(reply);
		if (timeout > 0 && elapsed > timeout) {
			if (tty)
				fprintf(stderr, "\n");
			fprintf(stderr, "gpuctl: timed out waiting for job %" JSON_INTEGER_FORMAT "\n", job);
			return EXIT_TIMEOUT;
		}
		poll(NULL, 0, 200);
	}
}
