/* ctl_watch.c - gpuctl's live views and the workers: watch (jobs and
 * workers redrawn, fitted to the terminal), wait (one progress line until
 * the job ends) and workers. watch and wait ride over a gpud restart: once
 * gpud has answered, a lost or refused connection is tried again until
 * the command's own end. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ctl_cmd.h"
#include "ctl_help.h"
#include "ctl_human.h"
#include "ctl_status.h"
#include "ctl_table.h"

/* Where a worker runs, in a few words: "node7 slurm 1234_0 (job 1240)",
 * "node7 pod gpuworker-2"; "-" when not known. */
static void fmt_where(const struct ctlcmd_worker *w, char *buf, size_t len)
{
	const char *host = w->place[0], *job = w->place[1];
	const char *arr = w->place[2], *pod = w->place[3];
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
 * gpud) the job's unit_name from a status reply (jobs: may be NULL). */
static const char *worker_unit(const struct ctlcmd_worker *w,
			       const struct ctlcmd_reply *jobs)
{
	if (w->job_unit || !w->job)
		return w->job_unit;
	for (size_t i = 0; jobs && i < jobs->n_jobs; i++)
		if (jobs->jobs[i].id == w->job)
			return jobs->jobs[i].unit_name;
	return NULL;
}

static void workers_table(struct ctl_table *t, const struct ctlcmd_reply *workers,
			  const struct ctlcmd_reply *jobs, double now)
{
	/* A row is one process (NAME is TOKEN@INSTANCE); TOKEN, whom it
	 * acts for, is shared by the processes of one credential. */
	static const char *const head[] = { "ID", "NAME", "TOKEN", "STATE", "DEVICE",
		"THREADS", "LEASE", "RATE", "LEASES", "FAILURES", "FOREIGN", "STALLS",
		"TRUST", "SEEN", "WHERE" };
	static const int right[] = { 1, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0 };

	ctl_table_init(t, sizeof(head) / sizeof(head[0]), head, right);
	for (size_t i = 0; i < workers->n_workers; i++) {
		const struct ctlcmd_worker *w = &workers->workers[i];
		char id[24], threads[24] = "-", lease[64] = "-", rate[64] = "-", n[3][24];
		char trust[48] = "-", seen[32] = "-", where[640], c[32], stalls[24];
		const char *state = w->quarantined ? "quarantined" : w->drained ? "drained"
						   : w->online ? "online" : "offline";
		const char *unit = worker_unit(w, jobs);

		snprintf(id, sizeof(id), "%" PRId64, w->id);
		if (w->threads)
			snprintf(threads, sizeof(threads), "%" PRId64, w->threads);
		if (w->lease) {
			snprintf(lease, sizeof(lease), "%" PRId64 " (job %" PRId64 ")",
				 w->lease, w->job);
			/* Its rate in its own job's unit: battles and values
			 * never add up. */
			if (w->rate > 0 && w->rate < 9.995)
				snprintf(rate, sizeof(rate), "%.2f %s/s", w->rate,
					 unit ? unit : "units");
			else if (w->rate > 0)
				snprintf(rate, sizeof(rate), "%s %s/s",
					 human_count(w->rate, c, sizeof(c)),
					 unit ? unit : "units");
			/* else "-": not measured yet in this job */
		}
		snprintf(n[0], sizeof(n[0]), "%" PRId64, w->leases_done);
		snprintf(n[1], sizeof(n[1]), "%" PRId64, w->failures);
		snprintf(n[2], sizeof(n[2]), "%" PRId64, w->foreign_msgs);
		/* trust: "-" with --trust-after off, else trusted or k/N
		 * results confirmed in a row (its results are replicated). */
		if (w->trust_after > 0 && w->trusted)
			snprintf(trust, sizeof(trust), "trusted");
		else if (w->trust_after > 0)
			snprintf(trust, sizeof(trust), "%" PRId64 "/%" PRId64, w->streak,
				 w->trust_after);
		if (w->last_seen > 0)
			snprintf(seen, sizeof(seen), "%s ago", human_duration(
				 now > w->last_seen ? now - w->last_seen : 0, c, sizeof(c)));
		snprintf(stalls, sizeof(stalls), "%" PRId64, w->stalls);
		fmt_where(w, where, sizeof(where));
		const char *row[] = { id, w->name, w->credential ? w->credential : "-",
			state, w->device, threads, lease, rate, n[0], n[1], n[2], stalls,
			trust, seen, where };
		ctl_table_row(t, row);
	}
}

/* A status reply for the units of the workers' jobs into *jobs (zeroed
 * when gpud sends job_unit itself or there is no lease). 0 or the exit
 * status. */
static int units_source(const struct ctl_target *to, const struct ctlcmd_reply *workers,
			struct ctl_reply *jobs)
{
	memset(jobs, 0, sizeof(*jobs));
	for (size_t i = 0; i < workers->n_workers; i++)
		if (workers->workers[i].job && !workers->workers[i].job_unit_sent)
			return ctl_ask(to, &(struct ctlcmd_req){ .cmd = CTLCMD_STATUS }, 1, jobs);
	return 0;
}

int cmd_workers(const struct ctl_target *to, int argc, char **argv)
{
	int as_json, ex;
	struct ctl_reply reply, jobs;
	struct ctl_table t;

	if (ctl_json_only_request(to, CTLCMD_WORKERS, 1, argc, argv, &as_json, &reply, &ex))
		return ex;
	/* An older gpud's missing units: without them, "units". */
	units_source(to, &reply.f, &jobs);
	workers_table(&t, &reply.f, &jobs.f, gclock_wall());
	if (t.nrows)
		ctl_table_print(&t, stdout, 0, 0, 0);
	else
		printf("no workers\n");
	ctl_table_free(&t);
	ctl_reply_free(&jobs);
	ctl_reply_free(&reply);
	return 0;
}

/* Riding over a gpud restart: once gpud has answered, a failure that a
 * restart explains (ctl_quiet's transient) is tried again after a pause
 * of RIDE_PAUSE_MIN s, doubling to RIDE_PAUSE_MAX s. Any other failure,
 * or one before gpud ever answered (a wrong --socket), ends the command
 * with its exit status as before. */
#define RIDE_PAUSE_MIN 0.2
#define RIDE_PAUSE_MAX 2.0

struct ride {
	struct ctl_quiet q;     /* the target's: each request's errors */
	int reached;            /* gpud answered once */
	double down_since;      /* gclock_mono of the outage's first failure; < 0: none */
	double pause;           /* the next pause, seconds */
};

/* to with r's error sink, into *out (to itself is only read). */
static void ride_init(struct ride *r, const struct ctl_target *to, struct ctl_target *out)
{
	memset(r, 0, sizeof(*r));
	r->down_since = -1;
	r->pause = RIDE_PAUSE_MIN;
	*out = *to;
	out->quiet = &r->q;
}

/* After a request that failed: 1 when it is to be tried again (an outage
 * begins or goes on), 0 when the failure ends the command (its errors
 * then printed). */
static int ride_failed(struct ride *r)
{
	if (!r->reached || !r->q.transient) {
		fputs(r->q.why, stderr);
		return 0;
	}
	if (r->down_since < 0)
		r->down_since = gclock_mono();
	return 1;
}

/* After a request that succeeded: how long the outage it ends lasted (s),
 * or -1 when there was none; the pause starts over. */
static double ride_back(struct ride *r)
{
	double down = r->down_since < 0 ? -1 : gclock_mono() - r->down_since;

	r->reached = 1;
	r->down_since = -1;
	r->pause = RIDE_PAUSE_MIN;
	return down;
}

/* The last failure's first line, without "gpuctl: ". */
static void ride_reason(const struct ride *r, char *buf, size_t len)
{
	const char *s = r->q.why;
	size_t n;

	if (strncmp(s, "gpuctl: ", 8) == 0)
		s += 8;
	n = strcspn(s, "\n");
	snprintf(buf, len, "%.*s", (int)n, s);
}

/* The pause before the next try, at most limit seconds (limit <= 0: no
 * bound); the next one twice as long, to RIDE_PAUSE_MAX. */
static void ride_pause(struct ride *r, double limit)
{
	double p = limit > 0 && limit < r->pause ? limit : r->pause;

	poll(NULL, 0, (int)(p * 1000) + 1);
	r->pause = r->pause * 2 < RIDE_PAUSE_MAX ? r->pause * 2 : RIDE_PAUSE_MAX;
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

/* Where a job comes in watch: running, queued, paused, then the finished
 * ones, so that a list cut to a small terminal keeps what moves. */
static int live_rank(const struct ctlcmd_job *j)
{
	const char *s = ctl_job_state(j);

	if (strcmp(s, "running") == 0)
		return 0;
	if (strcmp(s, "queued") == 0)
		return 1;
	return ctl_job_finished(j) ? 3 : 2;
}

/* jobs[0..n) in live_rank's order, each rank in gpud's order, as a new
 * array of shallow copies (its strings are still the reply's); NULL when
 * out of memory. */
static struct ctlcmd_job *live_first(const struct ctlcmd_job *jobs, size_t n)
{
	struct ctlcmd_job *out = malloc((n ? n : 1) * sizeof(*out));
	size_t k = 0;

	if (!out)
		return NULL;
	for (int rank = 0; rank <= 3; rank++)
		for (size_t i = 0; i < n; i++)
			if (live_rank(&jobs[i]) == rank)
				out[k++] = jobs[i];
	return out;
}

/* watch's title line, cut to cols (0: not cut). */
static void title_line(double now, double interval, size_t cols)
{
	char when[32], title[128];
	time_t t = (time_t)now;
	struct tm tm;

	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
	snprintf(title, sizeof(title), "gpud %s   (every %.1fs, Ctrl-C to quit)", when, interval);
	printf("%.*s\n\n", (int)(cols ? human_fit(title, cols) : strlen(title)), title);
}

/* One line cut to cols (0: not cut). */
static void fitted(const char *line, size_t cols)
{
	printf("%.*s\n", (int)(cols ? human_fit(line, cols) : strlen(line)), line);
}

/* The screen while gpud does not answer: the title, that it is retried,
 * the last failure and since when. Returns fflush's result. */
static int draw_down(const struct ride *r, double interval, int tty)
{
	double now = gclock_wall();
	size_t rows, cols;
	char line[1024], why[800], since[32], c[32];

	term_size(&rows, &cols);
	if (!tty)
		rows = cols = 0;
	if (tty)
		printf("\033[H\033[2J"); /* home, clear */
	title_line(now, interval, cols);
	fitted("gpud is not answering; retrying", cols);
	ride_reason(r, why, sizeof(why));
	human_time(now - (gclock_mono() - r->down_since), now, since, sizeof(since));
	snprintf(line, sizeof(line), "  since %s (%s): %s", since,
		 human_duration(gclock_mono() - r->down_since, c, sizeof(c)), why);
	fitted(line, cols);
	return fflush(stdout);
}

/* One screen: a title, the jobs (running and queued first), the workers;
 * on a terminal of rows x cols, every line cut to cols and the lists to
 * what fits, workers getting at least a third of the room when both
 * overflow. Returns fflush's result: EOF when stdout is gone. */
static int draw(const struct ctlcmd_reply *jobs, const struct ctlcmd_reply *workers,
		double interval, int tty)
{
	double now = gclock_wall();
	size_t rows, cols, jrows = 0, wrows = 0;
	struct ctl_table jt, wt;

	term_size(&rows, &cols);
	if (!tty)
		rows = cols = 0;
	if (tty)
		printf("\033[H\033[2J"); /* home, clear */
	title_line(now, interval, cols);
	struct ctlcmd_job *order = live_first(jobs->jobs, jobs->n_jobs);
	ctl_jobs_table(&jt, CTL_STATUS_COLS, order ? order : jobs->jobs, jobs->n_jobs, now);
	free(order);
	workers_table(&wt, workers, jobs, now);
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
	return fflush(stdout);
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
	struct ride ride;
	struct ctl_target rt;

	ride_init(&ride, to, &rt);
	/* n counts the screens of gpud's answers; an outage's screens are
	 * redrawn at each try (once when stdout is no terminal). */
	for (long n = 0; count == 0 || n < count;) {
		struct ctl_reply jobs, workers;
		int gone, ex = ctl_ask(&rt, &(struct ctlcmd_req){ .cmd = CTLCMD_STATUS,
			.job = job, .all = all }, 1, &jobs);
		if (!ex) {
			ex = ctl_ask(&rt, &(struct ctlcmd_req){ .cmd = CTLCMD_WORKERS }, 1,
				     &workers);
			if (ex)
				ctl_reply_free(&jobs);
		}
		if (ex) {
			int first = ride.down_since < 0;
			if (!ride_failed(&ride))
				return ex;
			gone = (tty || first) && draw_down(&ride, interval, tty) == EOF;
			if (gone)
				return errno == EPIPE ? 0 : EXIT_FAIL;
			ride_pause(&ride, 0);
			continue;
		}
		ride_back(&ride);
		gone = draw(&jobs.f, &workers.f, interval, tty) == EOF;
		ctl_reply_free(&jobs);
		ctl_reply_free(&workers);
		/* Nobody reads any more (gpuctl watch | head): done. */
		if (gone)
			return errno == EPIPE ? 0 : EXIT_FAIL;
		if (count == 0 || ++n < count)
			poll(NULL, 0, (int)(interval * 1000));
	}
	return 0;
}

int cmd_wait(const struct ctl_target *to, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	double timeout = 0, t0 = gclock_mono(), last_line = -1e9;
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
	/* A gpud that stops answering cannot hold wait past --timeout (and a
	 * second, so that a request begun just before it still ends); one
	 * that went away is tried again until then (ride). */
	struct ride ride;
	struct ctl_target bounded;
	ride_init(&ride, to, &bounded);
	if (timeout > 0)
		bounded.deadline = t0 + timeout + 1.0;
	for (;;) {
		struct ctl_reply reply;
		int first = ride.down_since < 0;
		int ex = ctl_ask(&bounded, &(struct ctlcmd_req){ .cmd = CTLCMD_STATUS, .job = job },
				 1, &reply);
		/* The progress line ends before any other line (reset below
		 * while gpud does not answer). */
		if (ex && tty && last_line > -1e9)
			fprintf(stderr, "\n");
		if (ex && !ride_failed(&ride))
			return ex;
		if (ex) {
			double left = timeout > 0 ? t0 + timeout - gclock_mono() : 0;
			if (first) {
				char why[800];
				ride_reason(&ride, why, sizeof(why));
				fprintf(stderr, "gpuctl: gpud is not answering (%s); retrying\n", why);
				/* Redrawn afresh when gpud is back. */
				last_line = -1e9;
			}
			if (timeout > 0 && left <= 0) {
				fprintf(stderr, "gpuctl: timed out waiting for job %" JSON_INTEGER_FORMAT
					"\n", job);
				return EXIT_TIMEOUT;
			}
			ride_pause(&ride, left);
			continue;
		}
		double down = ride_back(&ride);
		if (down >= 0)
			fprintf(stderr, "gpuctl: gpud answers again (after %.1f s)\n", down);
		/* gpud answers an unknown job with an error: one job here. */
		const struct ctlcmd_job *j = reply.f.n_jobs ? &reply.f.jobs[0] : NULL;
		double elapsed = gclock_mono() - t0;
		/* On a terminal the line is redrawn in place, cleared to its
		 * end so a shorter line leaves nothing behind; in a log, one
		 * line every 5 s. */
		if (j && (tty || elapsed - last_line >= 5.0)) {
			char line[512];
			ctl_job_line(line, sizeof(line), j);
			fprintf(stderr, tty ? "\r%s\033[K" : "%s\n", line);
			last_line = elapsed;
		}
		if (j && ctl_job_finished(j)) {
			const char *state = ctl_job_state(j);
			const char *reason = j->reason;
			int ok = strcmp(state, "done") == 0;
			if (tty)
				fprintf(stderr, "\n");
			if (!ok)
				fprintf(stderr, "gpuctl: job %" JSON_INTEGER_FORMAT " %s%s%s\n", job,
					state, reason ? ": " : "", reason ? reason : "");
			ctl_reply_free(&reply);
			return ok ? 0 : EXIT_JOB_FAILED;
		}
		ctl_reply_free(&reply);
		if (timeout > 0 && elapsed > timeout) {
			if (tty)
				fprintf(stderr, "\n");
			fprintf(stderr, "gpuctl: timed out waiting for job %" JSON_INTEGER_FORMAT "\n", job);
			return EXIT_TIMEOUT;
		}
		poll(NULL, 0, 200);
	}
}
