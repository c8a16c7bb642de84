/* ctl_jobs.c - gpuctl's commands on jobs and workloads: submit, extend,
 * export, result, cancel/pause/resume, priority, workloads (ctl_cmd.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_cmd.h"
#include "ctl_help.h"
#include "published.h"

#define NAME_MAX_LEN 64

/* --name: 1..64 of [A-Za-z0-9._-], as gpud stores it. */
static int check_name(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > NAME_MAX_LEN ||
	    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		      "0123456789._-") != n) {
		fprintf(stderr, "gpuctl: --name wants 1..%d characters of A-Z a-z 0-9 . _ -\n",
			NAME_MAX_LEN);
		return -1;
	}
	return 0;
}

/* One workload's row of gpud's "workloads" reply (escaped), or NULL:
 * *ret holds the reply (zeroed when the request failed, *ret_exit then
 * its status). */
static const struct ctlcmd_workload *find_workload(const struct ctl_target *to,
						   const char *name, struct ctl_reply *ret,
						   int *ret_exit)
{
	*ret_exit = ctl_ask(to, &(struct ctlcmd_req){ .cmd = CTLCMD_WORKLOADS }, 1, ret);
	for (size_t i = 0; !*ret_exit && name && i < ret->f.n_workloads; i++)
		if (strcmp(ret->f.workloads[i].name, name) == 0)
			return &ret->f.workloads[i];
	return NULL;
}

/* "    LABEL   text" with text wrapped at 79 columns under itself. */
static void print_item(FILE *f, int indent, int label_w, const char *label, const char *text)
{
	int col = fprintf(f, "%*s%-*s", indent, "", label_w, label), start = col;
	const char *p = text ? text : "";

	if (col > start || label_w < (int)strlen(label))
		start = col = indent + label_w;
	while (*p) {
		size_t len = strcspn(p, " ");
		if (col > start && col + 1 + (int)len > 79) {
			fprintf(f, "\n%*s", start, "");
			col = start;
		}
		col += fprintf(f, "%s%.*s", col > start ? " " : "", (int)len, p);
		p += len;
		while (*p == ' ')
			p++;
	}
	fprintf(f, "\n");
}

static void print_workload(FILE *f, const struct ctlcmd_workload *w)
{
	fprintf(f, "%s (units: %s)\n", w->name, w->unit_name);
	if (w->description && *w->description)
		print_item(f, 2, 0, "", w->description);
	fprintf(f, "  parameters:\n");
	for (size_t i = 0; i < w->n_params; i++) {
		const struct ctlcmd_wl_param *p = &w->params[i];
		char opt[96], help[1024];
		snprintf(opt, sizeof(opt), "--%s %s", p->name,
			 p->type && strcmp(p->type, "file") == 0 ? "FILE" :
			 p->type && strcmp(p->type, "integer") == 0 ? "N" : "VALUE");
		snprintf(help, sizeof(help), "%s%s%s%s", p->help, p->def ? " (default " : "",
			 p->def ? p->def : "", p->def ? ")" : "");
		print_item(f, 4, 17, opt, help);
	}
	if (w->n_exports == 0) {
		fprintf(f, "  exports: none\n");
	} else {
		fprintf(f, "  exports (gpuctl export JOB WHAT):\n");
		for (size_t i = 0; i < w->n_exports; i++)
			print_item(f, 4, 17, w->exports[i].name, w->exports[i].help);
	}
	if (w->extend)
		fprintf(f, "  gpuctl extend JOB takes its jobs further\n");
}

int cmd_workloads(const struct ctl_target *to, int argc, char **argv)
{
	int as_json, ex;
	struct ctl_reply reply;

	if (ctl_json_only_request(to, CTLCMD_WORKLOADS, 1, argc, argv, &as_json, &reply, &ex))
		return ex;
	for (size_t i = 0; i < reply.f.n_workloads; i++)
		print_workload(stdout, &reply.f.workloads[i]);
	ctl_reply_free(&reply);
	return 0;
}

/* submit WORKLOAD --help: gpuctl's options, then the workload's, as
 * this gpud knows them. */
static int submit_help(const struct ctl_target *to, const char *workload)
{
	struct ctl_reply reply;
	int ex;

	ctl_help_cmd(stdout, "submit");
	if (!workload)
		return 0;
	const struct ctlcmd_workload *w = find_workload(to, workload, &reply, &ex);
	if (w) {
		printf("\n");
		print_workload(stdout, w);
	} else if (!ex) {
		fprintf(stderr, "gpuctl: gpud has no workload '%s' (gpuctl workloads lists "
			"them)\n", workload);
		ex = EXIT_USAGE;
	}
	ctl_reply_free(&reply);
	return ex;
}

/* gpuctl's own options of submit (the rest go to the workload). */
struct submit_opts {
	const char *name, *check, *file;
	long priority;
	int has_priority, help;
	json_int_t after;       /* --after JOB; 0 none */
	double time_limit;      /* --time-limit, seconds; 0 none */
};

/* Split argv (after WORKLOAD) into gpuctl's options and the workload's
 * --KEY VALUE pairs (left in kv, *nkv of them). -1 after printing why. */
static int split_submit(int argc, char **argv, struct submit_opts *o, char **kv, int *nkv)
{
	static const char *const own[] = { "name", "priority", "check", "file",
					   "after", "time-limit" };

	*nkv = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		size_t k = 0, len;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			o->help = 1;
			continue;
		}
		len = strncmp(a, "--", 2) == 0 ? strcspn(a + 2, "=") : 0;
		for (; len && k < sizeof(own) / sizeof(own[0]); k++)
			if (strlen(own[k]) == len && strncmp(a + 2, own[k], len) == 0)
				break;
		if (!len || k == sizeof(own) / sizeof(own[0])) {
			kv[(*nkv)++] = argv[i];
			continue;
		}
		if (a[2 + len] == '=') {
			val = a + 3 + len;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			fprintf(stderr, "gpuctl: --%s needs a value\n", own[k]);
			return -1;
		}
		if (k == 0 && check_name(val))
			return -1;
		if (k == 1 && ctl_parse_int("--priority", val, -1000, 1000, &o->priority))
			return -1;
		if (k == 2 && strcmp(val, "full") && strcmp(val, "sample")) {
			fprintf(stderr, "gpuctl: --check is sample (gpud verifies a sample "
				"of every result) or full (every lease computed twice)\n");
			return -1;
		}
		if (strlen(val) > CTL_ARG_MAX) {
			fprintf(stderr, "gpuctl: --%s is too long\n", own[k]);
			return -1;
		}
		if (k >= 4 && ctl_submit_lifecycle_opt(own[k], val, &o->after,
							 &o->time_limit))
			return -1;
		if (k == 0)
			o->name = val;
		else if (k == 1)
			o->has_priority = 1;
		else if (k == 2)
			o->check = val;
		else if (k == 3)
			o->file = val;
	}
	return 0;
}

int cmd_submit(const struct ctl_target *to, int argc, char **argv)
{
	struct submit_opts o = { 0 };
	char **kv = calloc((size_t)argc + 1, sizeof(*kv));
	int nkv, ex;
	const char *workload = argc > 1 && argv[1][0] != '-' ? argv[1] : NULL;
	int first = workload ? 2 : 1;

	if (!kv)
		return EXIT_FAIL;
	if (split_submit(argc - first, argv + first, &o, kv, &nkv)) {
		free(kv);
		return ctl_usage_error("submit");
	}
	if (o.help) {
		free(kv);
		return submit_help(to, workload);
	}
	if (!workload) {
		free(kv);
		fprintf(stderr, "gpuctl: submit needs a workload, e.g. gpuctl submit "
			"graveler --battles 1e9 (gpuctl workloads lists them)\n");
		return ctl_usage_error("submit");
	}
	json_t *args = ctl_parse_kv(nkv, kv);
	free(kv);
	if (!args)
		return ctl_usage_error("submit");
	if (o.check)
		json_object_set_new(args, "check", json_string(o.check));
	uint8_t *input = NULL;
	size_t input_len = 0;
	if (o.file) {
		const char *base = strrchr(o.file, '/');
		if (ctl_read_input(o.file, &input, &input_len)) {
			json_decref(args);
			return EXIT_FAIL;
		}
		/* gpud gets the content; the name is only for the user. */
		json_object_set_new(args, "file", json_string(base ? base + 1 : o.file));
	}
	struct ctlcmd_reply rep;
	json_t *reply = ctl_request_bin(to, &(struct ctlcmd_req){ .cmd = CTLCMD_SUBMIT,
		.workload = workload, .args = args, .name = o.name,
		.priority = o.has_priority ? o.priority : 0, .after = o.after,
		.time_limit = (int64_t)o.time_limit }, input, input_len, &ex);
	json_decref(args);
	free(input);
	if (!reply)
		return ex;
	ex = ctl_reply_fields(CTLCMD_SUBMIT, reply, &rep) ? EXIT_FAIL : 0;
	if (!ex)
		printf("%" PRId64 "\n", rep.job);
	json_decref(reply);
	return ex;
}

/* JOB then --KEY VALUE pairs, for extend and export (whose options are
 * the workload's). 1 when --help was asked. */
static int job_and_kv(int argc, char **argv, int skip, json_int_t *job, json_t **args)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	if (argc < 2 || ctl_parse_job(argv[1], job))
		return -1;
	*args = ctl_parse_kv(argc - 2 - skip, argv + 2 + skip);
	return *args ? 0 : -1;
}

int cmd_extend(const struct ctl_target *to, int argc, char **argv)
{
	json_int_t job;
	json_t *args;
	struct ctlcmd_reply rep;
	int ex, rc = job_and_kv(argc, argv, 0, &job, &args);

	if (rc == 1)
		return ctl_help_cmd(stdout, "extend"), 0;
	if (rc || json_object_size(args) == 0) {
		if (!rc)
			json_decref(args);
		return ctl_usage_error("extend");
	}
	json_t *reply = ctl_shown(ctl_request(to, &(struct ctlcmd_req){ .cmd = CTLCMD_EXTEND,
		.job = job, .args = args }, &ex));
	json_decref(args);
	if (!reply)
		return ex;
	ex = ctl_reply_fields(CTLCMD_EXTEND, reply, &rep) ? EXIT_FAIL : 0;
	if (!ex)
		printf("job %" JSON_INTEGER_FORMAT ": %s, %" PRId64 " units\n", job,
		       rep.state, rep.total_units);
	json_decref(reply);
	return ex;
}

/* Whether p[0..n) is text a terminal shows as it is: printable ASCII,
 * tab, newline, carriage return, and UTF-8's bytes. */
static int printable(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r') || p[i] == 0x7f)
			return 0;
	return 1;
}

/* Ask for a job's bulk output and write it to stdout; a terminal gets no
 * binary. */
static int do_export(const struct ctl_target *to, json_int_t job, const char *what, json_t *args)
{
	int ex;
	uint8_t *bin = NULL;
	size_t bin_len = 0;
	json_t *reply = ctl_request_full(to, &(struct ctlcmd_req){ .cmd = CTLCMD_EXPORT,
		.job = job, .what = what, .args = args }, NULL, 0, &bin, &bin_len, &ex);

	json_decref(args);

	if (!reply)
		return ex;
	if (isatty(STDOUT_FILENO) && !printable(bin, bin_len)) {
		fprintf(stderr, "gpuctl: job %" JSON_INTEGER_FORMAT "'s export is binary "
			"(%zu bytes); redirect it to a file or a pipe: ... > FILE\n", job,
			bin_len);
		ex = EXIT_USAGE;
	} else if (ctl_write_all(STDOUT_FILENO, bin, bin_len)) {
		/* A reader that stopped (gpuctl export ... | head) wanted no
		 * more: no error. */
		ex = errno == EPIPE ? 0 : EXIT_FAIL;
		if (ex)
			fprintf(stderr, "gpuctl: cannot write the output: %s\n", strerror(errno));
	}
	free(bin);
	json_decref(reply);
	return ex;
}

/* export JOB with no WHAT: what the job's workload exports. */
static int list_exports(const struct ctl_target *to, json_int_t job)
{
	struct ctl_reply st, wl_reply;
	const struct ctlcmd_workload *w;
	const char *name;
	int ex = ctl_ask(to, &(struct ctlcmd_req){ .cmd = CTLCMD_STATUS, .job = job }, 1, &st);

	if (ex)
		return ex;
	name = st.f.n_jobs ? st.f.jobs[0].workload : NULL;
	w = find_workload(to, name, &wl_reply, &ex);
	if (!w) {
		ctl_reply_free(&st);
		ctl_reply_free(&wl_reply);
		return ex ? ex : EXIT_FAIL;
	}
	if (w->n_exports == 0) {
		printf("job %" JSON_INTEGER_FORMAT " (%s) has nothing to export; gpuctl result "
		       "%" JSON_INTEGER_FORMAT " shows its answer\n", job, name, job);
	} else {
		printf("job %" JSON_INTEGER_FORMAT " (%s) exports (gpuctl export %"
		       JSON_INTEGER_FORMAT " WHAT > FILE):\n", job, name, job);
		for (size_t i = 0; i < w->n_exports; i++)
			print_item(stdout, 2, 10, w->exports[i].name, w->exports[i].help);
	}
	ctl_reply_free(&st);
	ctl_reply_free(&wl_reply);
	return 0;
}

int cmd_export(const struct ctl_target *to, int argc, char **argv)
{
	json_int_t job;
	json_t *args;
	int rc;

	if (argc == 2 && ctl_parse_job(argv[1], &job) == 0)
		return list_exports(to, job);
	if (argc >= 3 && argv[2][0] == '-' && strcmp(argv[2], "--help") && strcmp(argv[2], "-h")) {
		fprintf(stderr, "gpuctl: export JOB WHAT: WHAT comes before its options "
			"(gpuctl export JOB lists what JOB has)\n");
		return ctl_usage_error("export");
	}
	rc = job_and_kv(argc, argv, 1, &job, &args);
	if (rc == 1)
		return ctl_help_cmd(stdout, "export"), 0;
	if (rc || argc < 3) {
		if (!rc)
			json_decref(args);
		return ctl_usage_error("export");
	}
	return do_export(to, job, argv[2], args);
}

static int print_result(const struct ctl_target *to, json_int_t job,
			const struct ctlcmd_reply *rep, uint8_t *abin, size_t alen)
{
	const char *text = rep->text, *state = rep->state, *wname = rep->workload;
	json_t *answer = alen ? json_loadb((const char *)abin, alen, 0, NULL) : NULL;
	char buf[160];
	const char *note = answer && wname ? published_note(wname, answer, buf, sizeof(buf)) : NULL;

	json_decref(answer);
	for (size_t i = 0; i < rep->n_exports; i++) {
		if (strcmp(rep->exports[i], "result") != 0)
			continue;
		/* Bulk results go to stdout, the summary to stderr. */
		fprintf(stderr, "%s", text ? text : "");
		for (size_t k = 0; k < rep->n_files; k++)
			fprintf(stderr, "files: %s\n", rep->files[k]);
		return do_export(to, job, "result", json_object());
	}
	printf("job %" JSON_INTEGER_FORMAT " (%s): %s\n", job, wname ? wname : "?", state);
	if (strcmp(state, "done") != 0)
		printf("note: the job is not finished; this is the answer merged so far\n");
	printf("%s", text ? text : "no verified results yet\n");
	if (note && strcmp(state, "done") == 0)
		printf("%s", note); /* information only */
	for (size_t k = 0; k < rep->n_files; k++)
		printf("files: %s\n", rep->files[k]);
	return 0;
}

int cmd_result(const struct ctl_target *to, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "values", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	json_int_t job;
	int as_json = 0, c, ex;
	const char *values = NULL;

	ctl_opt_reset();
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j')
			as_json = 1;
		else if (c == 'v')
			values = optarg;
		else if (c == 'h')
			return ctl_help_cmd(stdout, "result"), 0;
		else
			return ctl_usage_error("result");
	}
	if (optind + 1 != argc || ctl_parse_job(argv[optind], &job) || (values && as_json))
		return ctl_usage_error("result");
	/* 16-bit values would scramble a terminal: ask for a file first,
	 * before gpud reads them. */
	if (values && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "gpuctl: --values writes binary (16-bit little-endian "
			"values); redirect it: gpuctl result %" JSON_INTEGER_FORMAT
			" --values %s > FILE\n", job, values);
		return EXIT_USAGE;
	}
	if (values)
		return do_export(to, job, "values", json_pack("{s:s}", "range", values));
	uint8_t *abin = NULL;
	size_t alen = 0;
	struct ctlcmd_reply rep;
	json_t *reply = ctl_request_full(to, &(struct ctlcmd_req){ .cmd = CTLCMD_RESULT, .job = job },
					 NULL, 0, &abin, &alen, &ex);
	if (!reply)
		return ex;
	if (!as_json)
		ctl_shown(reply);
	if (ctl_reply_fields(CTLCMD_RESULT, reply, &rep)) {
		ex = EXIT_FAIL;
	} else if (as_json) {
		/* The answer travels as the reply's binary part (control.h). */
		json_error_t jerr;
		json_t *answer = alen ? json_loadb((const char *)abin, alen, 0, &jerr) : json_null();
		if (!answer) {
			fprintf(stderr, "gpuctl: gpud sent an answer that is not JSON: %s\n", jerr.text);
			ex = EXIT_FAIL;
		} else {
			ctl_print_json(ctlcmd_result_answer(reply, answer));
		}
	} else {
		ex = print_result(to, job, &rep, abin, alen);
	}
	ctlcmd_reply_clear(&rep);
	free(abin);
	json_decref(reply);
	return ex;
}

/* cancel, pause, resume JOB. */
int cmd_simple(const struct ctl_target *to, int argc, char **argv)
{
	const char *cmd = ctl_cmd_name(argv);
	/* cancel, pause and resume are gpud's names too. */
	enum ctlcmd_id id = (enum ctlcmd_id)(ctlcmd_find(cmd) - ctlcmd_table);
	struct ctlcmd_reply rep;
	json_int_t job;
	int ex;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return ctl_help_cmd(stdout, cmd), 0;
	if (argc != 2 || ctl_parse_job(argv[1], &job)) {
		fprintf(stderr, "gpuctl: %s needs exactly one job id\n", cmd);
		return ctl_usage_error(cmd);
	}
	json_t *reply = ctl_shown(ctl_request(to, &(struct ctlcmd_req){ .cmd = id, .job = job },
					      &ex));
	if (!reply)
		return ex;
	ex = ctl_reply_fields(id, reply, &rep) ? EXIT_FAIL : 0;
	if (!ex)
		printf("job %" JSON_INTEGER_FORMAT ": %s\n", job, rep.state);
	json_decref(reply);
	return ex;
}

int cmd_priority(const struct ctl_target *to, int argc, char **argv)
{
	json_int_t job;
	long prio;
	int ex;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return ctl_help_cmd(stdout, "priority"), 0;
	/* "--" lets a negative priority through: gpuctl priority 3 -- -5. */
	if (argc == 4 && strcmp(argv[2], "--") == 0)
		argv[2] = argv[3], argc = 3;
	if (argc != 3 || ctl_parse_job(argv[1], &job) ||
	    ctl_parse_int("priority", argv[2], -1000, 1000, &prio))
		return ctl_usage_error("priority");
	json_t *reply = ctl_request(to, &(struct ctlcmd_req){ .cmd = CTLCMD_PRIORITY, .job = job,
		.priority = prio }, &ex);
	if (!reply)
		return ex;
	/* A gpud that does not say the priority set it all the same. */
	char err[128];
	struct ctlcmd_reply rep;
	printf("job %" JSON_INTEGER_FORMAT ": priority %" PRId64 "\n", job,
	       ctlcmd_reply_decode(&ctlcmd_table[CTLCMD_PRIORITY], reply, &rep, err,
				   sizeof(err)) ? (int64_t)prio : rep.priority);
	json_decref(reply);
	return 0;
}
