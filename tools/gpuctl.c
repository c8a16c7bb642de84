/* gpuctl - control gpud over its Unix socket.
 *
 *   gpuctl [--socket PATH] submit WORKLOAD --KEY VALUE...   prints the job id
 *   gpuctl [--socket PATH] status [JOB] [--json]
 *   gpuctl [--socket PATH] wait JOB [--timeout SECONDS]     exit 0 if verified
 *   gpuctl [--socket PATH] result JOB [--json]
 *   gpuctl [--socket PATH] cancel|pause|resume JOB
 *   gpuctl [--socket PATH] workers [--json]
 *   gpuctl [--socket PATH] watch [JOB] [--interval S] [--count N]
 *   gpuctl [--socket PATH] token add|revoke NAME, token list
 *   gpuctl [--socket PATH] extend JOB --KEY VALUE...
 *   gpuctl [--socket PATH] export JOB WHAT [--KEY VALUE...] > FILE
 *   gpuctl [--socket PATH] check [--json]                   exit 1 if damaged
 *   gpuctl [--socket PATH] backup DIR [--copy] [--json]     exit 1 if unsound
 *
 * Text from gpud (names, devices, errors, reasons, answers) is printed
 * with its control characters escaped (ctl_text.h); --json output is JSON
 * with everything outside ASCII escaped.
 *
 * The socket is --socket, else $GPUD_SOCKET, else /var/lib/gpud/gpud.to.
 * Exit codes: 0 ok, 1 the request failed (or the job did not verify),
 * 2 usage error, 3 gpud unreachable.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ctl_check.h"
#include "ctl_client.h"
#include "ctl_text.h"
#include "gerr.h"
#include "proto.h"
#include "published.h"

#define DEFAULT_SOCKET "/var/lib/gpud/gpud.to"
#define ARG_MAX_LEN 4096

static void usage(FILE *f)
{
	fprintf(f,
"usage: gpuctl [--socket PATH | --connect HOST:PORT --credential FILE]\n"
"              COMMAND ...\n"
"  submit WORKLOAD --KEY VALUE...  queue a job, print its id\n"
"                                  e.g. submit graveler --battles 1e9 --seed 7\n"
"                                  --file F sends F as the job's input\n"
"                                  --name N, --priority P (higher runs first)\n"
"                                  --check full: every lease computed again by\n"
"                                  another worker, merged when both agree\n"
"                                  (default sample: gpud verifies a sample)\n"
"  status [JOB] [--all] [--json]   jobs with progress, rate, ETA, leases, reason\n"
"  history [--all] [--json]        finished jobs; priority JOB P (-1000..1000)\n"
"  wait JOB [--timeout SECONDS]    block until the job ends; exit 0 if verified\n"
"  result JOB [--json]             the job's answer (bulk results to stdout)\n"
"  result JOB --values FROM:TO     a range of values (Officers), to stdout\n"
"  extend JOB --KEY VALUE...       take a job further (e.g. officers --to N)\n"
"  export JOB WHAT [--KEY VALUE]   a job's bulk output, to stdout\n"
"  cancel|pause|resume JOB\n"
"  workers [--json]                connected and known workers\n"
"  watch [JOB] [--interval S] [--count N]  live view of jobs and workers\n"
"  token add NAME [--role R]       a credential (printed once): worker\n"
"                                  (default), viewer or admin\n"
"  token list | token revoke NAME  tokens; a revoked token's workers are cut off\n"
"  check [--json]                  the database's integrity and every stored blob\n"
"                                  it names; exit 1 when anything is damaged\n"
"  backup DIR [--copy] [--json]    a consistent backup of gpud's data while jobs\n"
"                                  run, into DIR (new or empty; on gpud's host);\n"
"                                  blobs hard-linked unless --copy or another\n"
"                                  filesystem; exit 1 when its check finds damage\n"
"socket: --socket, else $GPUD_SOCKET, else " DEFAULT_SOCKET "\n"
"remote: --connect HOST:PORT (or $GPUD_CONNECT) with --credential FILE (or\n"
"        $GPUD_CREDENTIAL): a viewer may status, result, export, workers;\n"
"        an admin everything. Encrypted, and gpud must hold the key the\n"
"        credential pins.\n");
}

/* A reply about to be printed as text: its strings escaped (ctl_text.h). */
static json_t *shown(json_t *reply)
{
	if (reply)
		ctl_text_escape_json(reply);
	return reply;
}

/* --json output: valid JSON whose non-ASCII characters (C1 controls
 * included) are \u escapes, so it is as safe on a terminal. */
static void print_json(const json_t *v)
{
	json_dumpf(v, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	printf("\n");
}

/* Read a whole input file, at most PROTO_MAX_BIN bytes. */
static int read_input(const char *path, uint8_t **ret, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "gpuctl: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (cap == len) {
			size_t ncap = cap ? cap * 2 : 1 << 20;
			uint8_t *nb;
			if (cap >= (size_t)PROTO_MAX_BIN + 1) {
				fprintf(stderr, "gpuctl: %s is larger than %u bytes\n",
					path, PROTO_MAX_BIN);
				free(buf);
				fclose(f);
				return -1;
			}
			if (ncap > (size_t)PROTO_MAX_BIN + 1)
				ncap = (size_t)PROTO_MAX_BIN + 1;
			nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
			cap = ncap;
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		if (n == 0)
			break;
		len += n;
	}
	if (ferror(f)) {
		fprintf(stderr, "gpuctl: cannot read %s\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	*ret = buf;
	*ret_len = len;
	return 0;
}

/* ---- rendering ---- */

static void fmt_units(double v, char *out, size_t n)
{
	if (v < 1e6)
		snprintf(out, n, "%.0f", v);
	else
		snprintf(out, n, "%.3g", v);
}

static void fmt_duration(double s, char *out, size_t n)
{
	if (!(s >= 0) || s > 1e9)
		snprintf(out, n, "-");
	else if (s < 60)
		snprintf(out, n, "%.0fs", s);
	else if (s < 3600)
		snprintf(out, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
	else if (s < 86400 * 3)
		snprintf(out, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
	else
		snprintf(out, n, "%.1fd", s / 86400);
}

static void progress_bar(double frac, char *out, int width)
{
	int full = (int)(frac * width + 0.5);

	if (full > width)
		full = width;
	if (full < 0)
		full = 0;
	out[0] = '[';
	for (int i = 0; i < width; i++)
		out[1 + i] = i < full ? '#' : '.';
	out[1 + width] = ']';
	out[2 + width] = '\0';
}

static void print_job(const json_t *j)
{
	double total = (double)json_integer_value(json_object_get(j, "total_units"));
	double done = (double)json_integer_value(json_object_get(j, "units_done"));
	double verified = (double)json_integer_value(json_object_get(j, "units_verified"));
	double rate = json_number_value(json_object_get(j, "rate"));
	const json_t *eta = json_object_get(j, "eta_s");
	const char *unit = json_string_value(json_object_get(j, "unit_name"));
	const json_t *lc = json_object_get(j, "leases");
	const json_t *reason = json_object_get(j, "reason");
	const json_t *damaged = json_object_get(j, "damaged");
	const json_t *workers = json_object_get(j, "workers");
	char bar[64], a[32], b[32], c[32], r[32], e[32];
	double frac = total > 0 ? done / total : 0;

	progress_bar(frac, bar, 30);
	fmt_units(done, a, sizeof(a));
	fmt_units(total, b, sizeof(b));
	fmt_units(verified, c, sizeof(c));
	fmt_units(rate, r, sizeof(r));
	fmt_duration(json_is_number(eta) ? json_number_value(eta) : -1, e, sizeof(e));
	printf("job %" JSON_INTEGER_FORMAT "  %s  %-9s %s %5.1f%%  %s/%s %s (verified %s)\n",
	       json_integer_value(json_object_get(j, "id")),
	       json_string_value(json_object_get(j, "workload")),
	       json_is_string(damaged) ? "damaged" : json_string_value(json_object_get(j, "state")),
	       bar, 100 * frac, a, b,
	       unit ? unit : "units", c);
	printf("    rate %s %s/s  ETA %s  leases: pending %" JSON_INTEGER_FORMAT
	       ", leased %" JSON_INTEGER_FORMAT ", done %" JSON_INTEGER_FORMAT
	       ", verified %" JSON_INTEGER_FORMAT ", failed %" JSON_INTEGER_FORMAT "\n",
	       r, unit ? unit : "units", e,
	       json_integer_value(json_object_get(lc, "pending")),
	       json_integer_value(json_object_get(lc, "leased")),
	       json_integer_value(json_object_get(lc, "done")),
	       json_integer_value(json_object_get(lc, "verified")),
	       json_integer_value(json_object_get(lc, "failed")));
	const json_t *rl = json_object_get(j, "replicas");
	json_int_t rn = 0;
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)rl, key, val)
		rn += json_integer_value(val);
	const char *chk = json_string_value(json_object_get(j, "check"));
	if (rn || (chk && strcmp(chk, "full") == 0))
		printf("    check %s  replicas: pending %" JSON_INTEGER_FORMAT
		       ", leased %" JSON_INTEGER_FORMAT ", agreed %" JSON_INTEGER_FORMAT
		       ", outvoted %" JSON_INTEGER_FORMAT "\n",
		       json_string_value(json_object_get(j, "check")) ?
		       json_string_value(json_object_get(j, "check")) : "sample",
		       json_integer_value(json_object_get(rl, "pending")),
		       json_integer_value(json_object_get(rl, "leased")) +
		       json_integer_value(json_object_get(rl, "done")),
		       json_integer_value(json_object_get(rl, "verified")),
		       json_integer_value(json_object_get(rl, "failed")));
	if (json_array_size(workers)) {
		size_t i;
		json_t *w;
		printf("    workers:");
		json_array_foreach(workers, i, w)
			printf(" %s", json_string_value(w));
		printf("\n");
	}
	if (json_is_string(reason))
		printf("    reason: %s\n", json_string_value(reason));
	if (json_is_string(damaged))
		printf("    damaged (%s, as gpuctl check found): %s\n",
		       json_string_value(json_object_get(j, "state")), json_string_value(damaged));
}

/* ---- commands ---- */

static int parse_job(const char *s, json_int_t *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v <= 0) {
		fprintf(stderr, "gpuctl: '%s' is not a job id (a positive integer)\n", s);
		return -1;
	}
	*ret = v;
	return 0;
}

/* --KEY VALUE pairs into a JSON object of strings (dashes in keys become
 * underscores). NULL after printing why. */
static json_t *parse_kv(int argc, char **argv)
{
	json_t *args = json_object();

	for (int i = 0; i < argc; i += 2) {
		char key[64];
		if (strncmp(argv[i], "--", 2) != 0 || strlen(argv[i]) < 3 ||
		    strlen(argv[i]) > sizeof(key) + 1) {
			fprintf(stderr, "gpuctl: expected --KEY VALUE, got '%s'\n", argv[i]);
			json_decref(args);
			return NULL;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "gpuctl: %s needs a value\n", argv[i]);
			json_decref(args);
			return NULL;
		}
		if (strlen(argv[i + 1]) > ARG_MAX_LEN) {
			fprintf(stderr, "gpuctl: value of %s is too long\n", argv[i]);
			json_decref(args);
			return NULL;
		}
		snprintf(key, sizeof(key), "%s", argv[i] + 2);
		for (char *p = key; *p; p++)
			if (*p == '-')
				*p = '_';
		if (json_object_get(args, key)) {
			fprintf(stderr, "gpuctl: %s given twice\n", argv[i]);
			json_decref(args);
			return NULL;
		}
		json_object_set_new(args, key, json_string(argv[i + 1]));
	}
	return args;
}

/* Ask for a job's bulk output and write it to stdout. */
static int do_export(const struct ctl_target *to, json_int_t job, const char *what, json_t *args)
{
	int ex;
	uint8_t *bin = NULL;
	size_t bin_len = 0;
	json_t *req = json_pack("{s:s, s:I, s:s, s:o}", "cmd", "export", "job", job,
				"what", what, "args", args);
	json_t *reply = ctl_request_full(to, req, NULL, 0, &bin, &bin_len, &ex);

	if (!reply)
		return ex;
	ex = ctl_write_all(STDOUT_FILENO, bin, bin_len) ? EXIT_FAIL : 0;
	if (ex)
		fprintf(stderr, "gpuctl: cannot write the output: %s\n", strerror(errno));
	free(bin);
	json_decref(reply);
	return ex;
}

static int cmd_export(const struct ctl_target *to, int argc, char **argv)
{
	json_int_t job;
	json_t *args;

	if (argc < 2 || parse_job(argv[0], &job)) {
		fprintf(stderr, "gpuctl: usage: gpuctl export JOB WHAT [--KEY VALUE...] > FILE\n");
		return EXIT_USAGE;
	}
	args = parse_kv(argc - 2, argv + 2);
	return args ? do_export(to, job, argv[1], args) : EXIT_USAGE;
}

static int cmd_extend(const struct ctl_target *to, int argc, char **argv)
{
	json_int_t job;
	json_t *args;
	int ex;

	if (argc < 3 || parse_job(argv[0], &job)) {
		fprintf(stderr, "gpuctl: usage: gpuctl extend JOB --KEY VALUE...\n");
		return EXIT_USAGE;
	}
	args = parse_kv(argc - 1, argv + 1);
	if (!args)
		return EXIT_USAGE;
	json_t *reply = shown(ctl_request(to, json_pack("{s:s, s:I, s:o}", "cmd", "extend",
						      "job", job, "args", args), &ex));
	if (!reply)
		return ex;
	printf("job %" JSON_INTEGER_FORMAT ": %s, %" JSON_INTEGER_FORMAT " units\n", job,
	       json_string_value(json_object_get(reply, "state")),
	       json_integer_value(json_object_get(reply, "total_units")));
	json_decref(reply);
	return 0;
}

static int cmd_submit(const struct ctl_target *to, int argc, char **argv)
{
	json_t *args;
	int ex;

	if (argc < 1) {
		fprintf(stderr, "gpuctl: submit needs a workload, e.g. "
			"gpuctl submit graveler --battles 1e9\n");
		return EXIT_USAGE;
	}
	args = parse_kv(argc - 1, argv + 1);
	if (!args)
		return EXIT_USAGE;
	/* --name and --priority are gpud's, not the workload's. */
	json_t *name = json_incref(json_object_get(args, "name"));
	const char *prio = json_string_value(json_object_get(args, "priority"));
	json_t *p = prio ? json_loads(prio, JSON_DECODE_ANY, NULL) : NULL; /* gpud checks it */
	if (prio && !json_is_integer(p)) {
		json_decref(p);
		p = json_string(prio);
	}
	json_object_del(args, "name");
	json_object_del(args, "priority");
	uint8_t *input = NULL;
	size_t input_len = 0;
	const char *file = json_string_value(json_object_get(args, "file"));
	if (file) {
		const char *base = strrchr(file, '/');
		if (read_input(file, &input, &input_len)) {
			json_decref(name);
			json_decref(p);
			json_decref(args);
			return EXIT_FAIL;
		}
		/* gpud gets the content; the name is only for the user. */
		json_object_set_new(args, "file", json_string(base ? base + 1 : file));
	}
	json_t *reply = ctl_request_bin(to, json_pack("{s:s, s:s, s:o, s:o*, s:o*}", "cmd", "submit",
						    "workload", argv[0], "args", args, "name", name,
						    "priority", p), input, input_len, &ex);
	free(input);
	if (!reply)
		return ex;
	printf("%" JSON_INTEGER_FORMAT "\n", json_integer_value(json_object_get(reply, "job")));
	json_decref(reply);
	return 0;
}

/* status [JOB] [--all] [--json], and history [--all] [--json]. */
static int cmd_status(const struct ctl_target *to, const char *cmd, int argc, char **argv)
{
	int as_json = 0, ex;
	json_int_t job = 0;
	json_t *req = json_pack("{s:s}", "cmd", cmd);

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			as_json = 1;
		} else if (strcmp(argv[i], "--all") == 0) {
			json_object_set_new(req, "all", json_true());
		} else if (!job && strcmp(cmd, "status") == 0 && parse_job(argv[i], &job) == 0) {
			json_object_set_new(req, "job", json_integer(job));
		} else {
			json_decref(req);
			return EXIT_USAGE;
		}
	}
	json_t *reply = ctl_request(to, req, &ex);
	if (!reply)
		return ex;
	/* gpud's own trouble (e.g. out of descriptors); --json keeps stdout
	 * the jobs alone. */
	size_t wi;
	json_t *w;
	json_array_foreach(json_object_get(reply, "warnings"), wi, w)
		fprintf(as_json ? stderr : stdout, "warning: %s\n",
			json_string_value(w) ? json_string_value(w) : "?");
	if (as_json) {
		print_json(json_object_get(reply, "jobs"));
	} else {
		size_t i;
		json_t *j;
		shown(reply);
		if (json_array_size(json_object_get(reply, "jobs")) == 0)
			printf("no jobs\n");
		json_array_foreach(json_object_get(reply, "jobs"), i, j)
			print_job(j);
	}
	json_decref(reply);
	return 0;
}

static int cmd_wait(const struct ctl_target *to, int argc, char **argv)
{
	json_int_t job;
	double timeout = 0;
	int tty = isatty(STDERR_FILENO);
	struct timespec t0, now;

	if (argc < 1 || parse_job(argv[0], &job))
		return EXIT_USAGE;
	for (int i = 1; i < argc; i++) {
		char *end;
		if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
			timeout = strtod(argv[++i], &end);
			if (*end || !(timeout > 0)) {
				fprintf(stderr, "gpuctl: --timeout wants seconds > 0\n");
				return EXIT_USAGE;
			}
		} else {
			fprintf(stderr, "gpuctl: unexpected '%s'\n", argv[i]);
			return EXIT_USAGE;
		}
	}
	double last_line = -1e9;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int ex;
		json_t *reply = shown(ctl_request(to, json_pack("{s:s, s:I}", "cmd", "status",
							      "job", job), &ex));
		if (!reply)
			return ex;
		json_t *j = json_array_get(json_object_get(reply, "jobs"), 0);
		const char *state = json_string_value(json_object_get(j, "state"));
		clock_gettime(CLOCK_MONOTONIC, &now);
		double elapsed = (double)(now.tv_sec - t0.tv_sec) +
				 (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
		/* On a terminal the line redraws in place; in a log, one line
		 * every 5 s. */
		if (tty || elapsed - last_line >= 5.0) {
			double total = (double)json_integer_value(json_object_get(j, "total_units"));
			double done = (double)json_integer_value(json_object_get(j, "units_done"));
			double rate = json_number_value(json_object_get(j, "rate"));
			const json_t *eta = json_object_get(j, "eta_s");
			char bar[64], e[32], r[32];
			progress_bar(total > 0 ? done / total : 0, bar, 30);
			fmt_duration(json_is_number(eta) ? json_number_value(eta) : -1, e, sizeof(e));
			fmt_units(rate, r, sizeof(r));
			fprintf(stderr, "%sjob %" JSON_INTEGER_FORMAT " %-9s %s %5.1f%% rate %s/s ETA %s%s",
				tty ? "\r" : "", job, state, bar,
				total > 0 ? 100 * done / total : 0, r, e, tty ? "   " : "\n");
			last_line = elapsed;
		}
		if (state && (strcmp(state, "done") == 0 || strcmp(state, "failed") == 0 ||
			      strcmp(state, "cancelled") == 0)) {
			int ok = strcmp(state, "done") == 0;
			const json_t *reason = json_object_get(j, "reason");
			if (tty)
				fprintf(stderr, "\n");
			if (!ok)
				fprintf(stderr, "gpuctl: job %" JSON_INTEGER_FORMAT " %s%s%s\n", job,
					state, json_is_string(reason) ? ": " : "",
					json_is_string(reason) ? json_string_value(reason) : "");
			json_decref(reply);
			return ok ? 0 : EXIT_FAIL;
		}
		json_decref(reply);
		if (timeout > 0 && elapsed > timeout) {
			if (tty)
				fprintf(stderr, "\n");
			fprintf(stderr, "gpuctl: timed out waiting for job %" JSON_INTEGER_FORMAT "\n", job);
			return EXIT_FAIL;
		}
		poll(NULL, 0, 200);
	}
}

static int cmd_result(const struct ctl_target *to, int argc, char **argv)
{
	json_int_t job;
	int as_json = argc > 1 && strcmp(argv[1], "--json") == 0, ex;

	if (argc == 3 && strcmp(argv[1], "--values") == 0 && parse_job(argv[0], &job) == 0)
		return do_export(to, job, "values", json_pack("{s:s}", "range", argv[2]));
	if (argc < 1 || argc > 2 || (argc == 2 && !as_json) || parse_job(argv[0], &job))
		return EXIT_USAGE;
	uint8_t *abin = NULL;
	size_t alen = 0;
	json_t *reply = ctl_request_full(to, json_pack("{s:s, s:I}", "cmd", "result", "job", job),
				     NULL, 0, &abin, &alen, &ex);
	if (!reply)
		return ex;
	if (as_json) {
		/* The answer travels as the reply's binary part (control.h). */
		json_error_t jerr;
		json_t *answer = alen ? json_loadb((const char *)abin, alen, 0, &jerr) : json_null();
		free(abin);
		if (!answer) {
			fprintf(stderr, "gpuctl: gpud sent an answer that is not JSON: %s\n", jerr.text);
			json_decref(reply);
			return EXIT_FAIL;
		}
		json_object_set_new(reply, "answer", answer);
		json_object_del(reply, "answer_bytes");
		json_object_del(reply, "ok");
		json_object_del(reply, "text");
		print_json(reply);
	} else {
		shown(reply);
		const char *text = json_string_value(json_object_get(reply, "text"));
		const char *state = json_string_value(json_object_get(reply, "state"));
		const char *wname = json_string_value(json_object_get(reply, "workload"));
		json_t *answer = alen ? json_loadb((const char *)abin, alen, 0, NULL) : NULL;
		char buf[160];
		const char *note = answer && wname
			? published_note(wname, answer, buf, sizeof(buf)) : NULL;
		size_t i;

		json_decref(answer);
		free(abin);
		json_t *f;
		json_array_foreach(json_object_get(reply, "exports"), i, f) {
			if (strcmp(json_string_value(f), "result") != 0)
				continue;
			/* Bulk results go to stdout, the summary to stderr. */
			fprintf(stderr, "%s", text ? text : "");
			json_decref(reply);
			return do_export(to, job, "result", json_object());
		}
		printf("job %" JSON_INTEGER_FORMAT " (%s): %s\n", job,
		       json_string_value(json_object_get(reply, "workload")), state);
		if (strcmp(state, "done") != 0)
			printf("note: the job is not finished; this is the answer merged so far\n");
		printf("%s", text ? text : "no verified results yet\n");
		if (note && strcmp(state, "done") == 0)
			printf("%s", note); /* information only */
		json_array_foreach(json_object_get(reply, "files"), i, f)
			printf("files: %s\n", json_string_value(f));
	}
	json_decref(reply);
	return 0;
}

static int cmd_simple(const struct ctl_target *to, const char *cmd, int argc, char **argv)
{
	json_int_t job;
	int ex;

	int prio = strcmp(cmd, "priority") == 0; /* priority JOB P */
	json_t *p = prio && argc == 2 ? json_loads(argv[1], JSON_DECODE_ANY, NULL) : NULL;
	if (argc != 1 + prio || parse_job(argv[0], &job) || (prio && !json_is_integer(p))) {
		fprintf(stderr, "gpuctl: %s needs exactly one job id%s\n", cmd, prio ? " and an integer" : "");
		json_decref(p);
		return EXIT_USAGE;
	}
	json_t *reply = shown(ctl_request(to, json_pack("{s:s, s:I, s:o*}", "cmd", cmd, "job", job,
							"priority", p), &ex));
	if (!reply)
		return ex;
	printf("job %" JSON_INTEGER_FORMAT ": %s\n", job, prio ? "priority changed" :
	       json_string_value(json_object_get(reply, "state")));
	json_decref(reply);
	return 0;
}

static void print_workers(json_t *reply);

/* A live view, refreshing like top: jobs with progress bars, rates and
 * ETAs, then the workers. Ends on Ctrl-C or after --count refreshes. */
static int cmd_watch(const struct ctl_target *to, int argc, char **argv)
{
	double interval = 2;
	long count = 0;
	json_int_t job = 0;
	int tty = isatty(STDOUT_FILENO);

	for (int i = 0; i < argc; i++) {
		char *end;
		if (strcmp(argv[i], "--interval") == 0 && i + 1 < argc) {
			interval = strtod(argv[++i], &end);
			if (*end || !(interval >= 0.1 && interval <= 3600)) {
				fprintf(stderr, "gpuctl: --interval wants 0.1..3600 seconds\n");
				return EXIT_USAGE;
			}
		} else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) {
			count = strtol(argv[++i], &end, 10);
			if (*end || count < 1) {
				fprintf(stderr, "gpuctl: --count wants a positive integer\n");
				return EXIT_USAGE;
			}
		} else if (!job && parse_job(argv[i], &job) == 0) {
			continue;
		} else {
			return EXIT_USAGE;
		}
	}
	for (long n = 0; count == 0 || n < count; n++) {
		int ex;
		json_t *req = json_pack("{s:s}", "cmd", "status");
		if (job)
			json_object_set_new(req, "job", json_integer(job));
		json_t *jobs = shown(ctl_request(to, req, &ex));
		if (!jobs)
			return ex;
		json_t *workers = shown(ctl_request(to, json_pack("{s:s}", "cmd", "workers"), &ex));
		if (!workers) {
			json_decref(jobs);
			return ex;
		}
		time_t now = time(NULL);
		char when[32];
		size_t i;
		json_t *j;
		strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
		if (tty)
			printf("\033[H\033[2J"); /* home, clear */
		printf("gpud %s   (every %.1fs, Ctrl-C to quit)\n\n", when, interval);
		if (json_array_size(json_object_get(jobs, "jobs")) == 0)
			printf("no jobs\n");
		json_array_foreach(json_object_get(jobs, "jobs"), i, j)
			print_job(j);
		printf("\n");
		print_workers(workers);
		fflush(stdout);
		json_decref(jobs);
		json_decref(workers);
		if (count == 0 || n + 1 < count)
			poll(NULL, 0, (int)(interval * 1000));
	}
	return 0;
}

static int cmd_workers(const struct ctl_target *to, int argc, char **argv)
{
	int as_json = argc == 1 && strcmp(argv[0], "--json") == 0, ex;

	if (argc > 1 || (argc == 1 && !as_json))
		return EXIT_USAGE;
	json_t *reply = ctl_request(to, json_pack("{s:s}", "cmd", "workers"), &ex);
	if (!reply)
		return ex;
	if (as_json)
		print_json(json_object_get(reply, "workers"));
	else
		print_workers(shown(reply));
	json_decref(reply);
	return 0;
}

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

static void print_workers(json_t *reply)
{
	size_t i;
	json_t *w;

	/* failures: failed verifications; foreign: messages about leases it
	 * was not granted; stalls: leases revoked for no progress. */
	printf("%-4s %-16s %-10s %-12s %8s %8s %8s %8s %12s %-9s %-16s %s\n",
	       "id", "name", "device", "state", "leases", "failures", "foreign",
	       "stalls", "units", "trust", "lease", "where");
	json_array_foreach(json_object_get(reply, "workers"), i, w) {
		char u[32], lease[32] = "-";
		const char *state = json_is_true(json_object_get(w, "quarantined"))
			? "quarantined" : json_is_true(json_object_get(w, "online"))
			? "online" : "offline";
		fmt_units((double)json_integer_value(json_object_get(w, "units_done")), u, sizeof(u));
		if (json_is_integer(json_object_get(w, "lease")))
			snprintf(lease, sizeof(lease), "%" JSON_INTEGER_FORMAT " (job %" JSON_INTEGER_FORMAT ")",
				 json_integer_value(json_object_get(w, "lease")),
				 json_integer_value(json_object_get(w, "job")));
		/* trust: "-" with --trust-after off, else trusted or k/N
		 * results confirmed in a row (its results are replicated). */
		char trust[32] = "-";
		json_int_t need = json_integer_value(json_object_get(w, "trust_after"));
		if (need > 0 && json_is_true(json_object_get(w, "trusted")))
			snprintf(trust, sizeof(trust), "trusted");
		else if (need > 0)
			snprintf(trust, sizeof(trust), "%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
				 json_integer_value(json_object_get(w, "streak")), need);
		char where[640];
		fmt_where(w, where, sizeof(where));
		printf("%-4" JSON_INTEGER_FORMAT " %-16s %-10s %-12s %8" JSON_INTEGER_FORMAT
		       " %8" JSON_INTEGER_FORMAT " %8" JSON_INTEGER_FORMAT " %8"
		       JSON_INTEGER_FORMAT " %12s %-9s %-16s %s\n",
		       json_integer_value(json_object_get(w, "id")),
		       json_string_value(json_object_get(w, "name")),
		       json_string_value(json_object_get(w, "device")), state,
		       json_integer_value(json_object_get(w, "leases_done")),
		       json_integer_value(json_object_get(w, "failures")),
		       json_integer_value(json_object_get(w, "foreign_msgs")),
		       json_integer_value(json_object_get(w, "stalls")), u, trust,
		       lease, where);
	}
}

static int cmd_token(const struct ctl_target *to, int argc, char **argv)
{
	int ex;

	if (argc == 1 && strcmp(argv[0], "list") == 0) {
		size_t i;
		json_t *t;
		json_t *reply = shown(ctl_request(to, json_pack("{s:s}", "cmd", "token_list"), &ex));
		if (!reply)
			return ex;
		json_array_foreach(json_object_get(reply, "tokens"), i, t) {
			time_t when = (time_t)json_number_value(json_object_get(t, "created_at"));
			char date[32];
			strftime(date, sizeof(date), "%Y-%m-%d %H:%M", localtime(&when));
			printf("%-24s %-7s %s%s\n", json_string_value(json_object_get(t, "name")),
			       json_string_value(json_object_get(t, "role")), date,
			       json_is_true(json_object_get(t, "revoked")) ? "  revoked" : "");
		}
		json_decref(reply);
		return 0;
	}
	if (argc == 2 && strcmp(argv[0], "revoke") == 0) {
		json_t *reply = ctl_request(to, json_pack("{s:s, s:s}", "cmd", "token_revoke",
							"name", argv[1]), &ex);
		if (!reply)
			return ex;
		printf("revoked %s\n", argv[1]);
		json_decref(reply);
		return 0;
	}
	const char *role = "worker";
	if (argc == 4 && strcmp(argv[2], "--role") == 0)
		role = argv[3];
	if ((argc != 2 && argc != 4) || strcmp(argv[0], "add") != 0 ||
	    (argc == 4 && strcmp(argv[2], "--role") != 0)) {
		fprintf(stderr, "gpuctl: usage: gpuctl token add NAME [--role worker|viewer|admin], "
			"gpuctl token revoke NAME, gpuctl token list\n");
		return EXIT_USAGE;
	}
	json_t *reply = ctl_request(to, json_pack("{s:s, s:s, s:s}", "cmd", "token_add",
						"name", argv[1], "role", role), &ex);
	if (!reply)
		return ex;
	const char *cred = json_string_value(json_object_get(reply, "credential"));
	if (!cred) {
		fprintf(stderr, "gpuctl: gpud sent no credential\n");
		json_decref(reply);
		return EXIT_FAIL;
	}
	fputs(cred, stdout);
	fprintf(stderr, "gpuctl: a %s credential pinning gpud-key %s\n"
		"gpuctl: save the lines above in a file readable only by its user "
		"(chmod 600) and pass it with %s\n", role,
		json_string_value(json_object_get(reply, "gpud_key")),
		strcmp(role, "worker") == 0 ? "gpuworker --token-file"
					    : "gpuctl --credential");
	json_decref(reply);
	return 0;
}

/* The database's integrity and every blob it names; exit 1 when damaged. */
static int cmd_check(const struct ctl_target *to, int argc, char **argv)
{
	int as_json = argc == 1 && strcmp(argv[0], "--json") == 0, ex;

	if (argc > 1 || (argc == 1 && !as_json))
		return EXIT_USAGE;
	json_t *reply = ctl_request(to, json_pack("{s:s}", "cmd", "check"), &ex);
	if (!reply)
		return ex;
	ex = json_is_true(json_object_get(reply, "damaged")) ? EXIT_FAIL : 0;
	if (as_json) {
		json_object_del(reply, "ok");
		print_json(reply);
		json_decref(reply);
		return ex;
	}
	ctl_check_print(stdout, shown(reply));
	json_decref(reply);
	return ex;
}

/* gpud writes the backup: a relative DIR is made absolute here, where the
 * user meant it. */
static int cmd_backup(const struct ctl_target *to, int argc, char **argv)
{
	const char *dir = NULL;
	int as_json = 0, copy = 0, ex;
	char path[ARG_MAX_LEN + 1], cwd[ARG_MAX_LEN];

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			as_json = 1;
		else if (strcmp(argv[i], "--copy") == 0)
			copy = 1;
		else if (!dir && argv[i][0] != '-')
			dir = argv[i];
		else
			return EXIT_USAGE;
	}
	if (!dir || !*dir)
		return EXIT_USAGE;
	if (dir[0] != '/' && to->host) {
		fprintf(stderr, "gpuctl: with --connect, DIR is on gpud's host: give an "
			"absolute path\n");
		return EXIT_USAGE;
	}
	if (dir[0] == '/') {
		if (strlen(dir) >= sizeof(path)) {
			fprintf(stderr, "gpuctl: the backup path is too long\n");
			return EXIT_USAGE;
		}
		snprintf(path, sizeof(path), "%s", dir);
	} else if (!getcwd(cwd, sizeof(cwd)) ||
		   snprintf(path, sizeof(path), "%s/%s", cwd, dir) >= (int)sizeof(path)) {
		fprintf(stderr, "gpuctl: cannot make %s an absolute path\n", dir);
		return EXIT_USAGE;
	}
	json_t *reply = ctl_request(to, json_pack("{s:s, s:s, s:b}", "cmd",
				    "backup", "dir", path, "copy", copy), &ex);
	if (!reply)
		return ex;
	ex = json_is_true(json_object_get(reply, "verified")) ? 0 : EXIT_FAIL;
	json_object_del(reply, "ok");
	if (as_json)
		print_json(reply);
	else
		ctl_backup_print(stdout, shown(reply));
	json_decref(reply);
	return ex;
}

int main(int argc, char **argv)
{
	static struct ctl_target target;
	const struct ctl_target *to = &target;
	const char *connect_to = getenv("GPUD_CONNECT");
	const char *cred = getenv("GPUD_CREDENTIAL");
	int i = 1;

	/* A connection gpud closes is an error to report, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	target.socket = getenv("GPUD_SOCKET");
	if (!target.socket || !*target.socket)
		target.socket = DEFAULT_SOCKET;
	while (i < argc && strncmp(argv[i], "--", 2) == 0) {
		if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
			target.socket = argv[i + 1];
			connect_to = NULL;
			i += 2;
		} else if (strcmp(argv[i], "--connect") == 0 && i + 1 < argc) {
			connect_to = argv[i + 1];
			i += 2;
		} else if (strcmp(argv[i], "--credential") == 0 && i + 1 < argc) {
			cred = argv[i + 1];
			i += 2;
		} else if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "gpuctl: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (connect_to && *connect_to) {
		int rc = ctl_target_remote(&target, connect_to, cred);

		if (rc)
			return rc;
	}
	const char *cmd = argv[i];
	int n = argc - i - 1;
	char **rest = argv + i + 1;
	int rc;

	if (strcmp(cmd, "submit") == 0)
		rc = cmd_submit(to, n, rest);
	else if (strcmp(cmd, "status") == 0 || strcmp(cmd, "history") == 0)
		rc = cmd_status(to, cmd, n, rest);
	else if (strcmp(cmd, "wait") == 0)
		rc = cmd_wait(to, n, rest);
	else if (strcmp(cmd, "result") == 0)
		rc = cmd_result(to, n, rest);
	else if (strcmp(cmd, "cancel") == 0 || strcmp(cmd, "pause") == 0 ||
		 strcmp(cmd, "resume") == 0 || strcmp(cmd, "priority") == 0)
		rc = cmd_simple(to, cmd, n, rest);
	else if (strcmp(cmd, "workers") == 0)
		rc = cmd_workers(to, n, rest);
	else if (strcmp(cmd, "token") == 0)
		rc = cmd_token(to, n, rest);
	else if (strcmp(cmd, "watch") == 0)
		rc = cmd_watch(to, n, rest);
	else if (strcmp(cmd, "extend") == 0)
		rc = cmd_extend(to, n, rest);
	else if (strcmp(cmd, "export") == 0)
		rc = cmd_export(to, n, rest);
	else if (strcmp(cmd, "check") == 0)
		rc = cmd_check(to, n, rest);
	else if (strcmp(cmd, "backup") == 0)
		rc = cmd_backup(to, n, rest);
	else {
		fprintf(stderr, "gpuctl: unknown command '%s'\n", cmd);
		usage(stderr);
		rc = EXIT_USAGE;
	}
	if (rc == EXIT_USAGE && strcmp(cmd, "submit") && strcmp(cmd, "token"))
		fprintf(stderr, "gpuctl: see gpuctl --help\n");
	return rc;
}
