/* ctl_args.c - what gpuctl's commands share: parsing of job ids, numbers
 * and workload parameters, input files, JSON output (ctl_cmd.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_cmd.h"
#include "ctl_help.h"
#include "ctl_text.h"
#include "ctl_time.h"
#include "fileio.h"
#include "gerr.h"
#include "proto.h"

const char *ctl_cmd_name(char **argv)
{
	const char *sp = strrchr(argv[0], ' ');

	return sp ? sp + 1 : argv[0];
}

void ctl_opt_reset(void)
{
	/* 0, not 1: glibc then also resets its state inside clustered short
	 * options and rereads the optstring's mode. */
	optind = 0;
	opterr = 1;
}

static int json_only_args(const char *cmd, int argc, char **argv, int *as_json)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*as_json = 0;
	ctl_opt_reset();
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j')
			*as_json = 1;
		else if (c == 'h')
			return ctl_help_cmd(stdout, cmd), 0;
		else
			return ctl_usage_error(cmd);
	}
	return optind < argc ? ctl_usage_error(cmd) : -1;
}

int ctl_json_only_request(const struct ctl_target *to, enum ctlcmd_id id,
			  int list_only, int argc, char **argv, int *as_json,
			  struct ctl_reply *ret, int *ret_exit)
{
	memset(ret, 0, sizeof(*ret));
	*ret_exit = json_only_args(ctlcmd_table[id].name, argc, argv, as_json);
	if (*ret_exit >= 0)
		return -1;
	*ret_exit = ctl_ask(to, &(struct ctlcmd_req){ .cmd = id }, !*as_json, ret);
	if (*ret_exit)
		return -1;
	if (*as_json && list_only) {
		ctl_print_json(ctlcmd_reply_list(id, ret->json));
		ctl_reply_free(ret);
		return -1;
	}
	return 0;
}

int ctl_parse_job(const char *s, json_int_t *ret)
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

int ctl_parse_int(const char *opt, const char *s, long lo, long hi, long *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "gpuctl: %s wants an integer %ld..%ld, got '%s'\n",
			opt, lo, hi, s);
		return -1;
	}
	*ret = v;
	return 0;
}

int ctl_parse_seconds(const char *opt, const char *s, double lo, double hi,
		      double *ret)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= lo && v <= hi)) {
		fprintf(stderr, "gpuctl: %s wants %g..%g seconds, got '%s'\n",
			opt, lo, hi, s);
		return -1;
	}
	*ret = v;
	return 0;
}

json_t *ctl_parse_kv(int argc, char **argv)
{
	json_t *args = json_object();

	for (int i = 0; i < argc; i++) {
		char key[64];
		const char *k = argv[i], *eq, *val;
		size_t klen;

		if (strncmp(k, "--", 2) != 0 || strlen(k) < 3) {
			fprintf(stderr, "gpuctl: expected --KEY VALUE, got '%s'\n", k);
			goto bad;
		}
		k += 2;
		eq = strchr(k, '=');
		klen = eq ? (size_t)(eq - k) : strlen(k);
		if (klen == 0 || klen >= sizeof(key)) {
			fprintf(stderr, "gpuctl: expected --KEY VALUE, got '%s'\n", argv[i]);
			goto bad;
		}
		if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			fprintf(stderr, "gpuctl: %s needs a value\n", argv[i]);
			goto bad;
		}
		if (strlen(val) > CTL_ARG_MAX) {
			fprintf(stderr, "gpuctl: value of --%.*s is too long\n", (int)klen, k);
			goto bad;
		}
		memcpy(key, k, klen);
		key[klen] = '\0';
		for (char *p = key; *p; p++)
			if (*p == '-')
				*p = '_';
		if (json_object_get(args, key)) {
			fprintf(stderr, "gpuctl: --%s given twice\n", key);
			goto bad;
		}
		json_object_set_new(args, key, json_string(val));
	}
	return args;
bad:
	json_decref(args);
	return NULL;
}

int ctl_read_input(const char *path, uint8_t **ret, size_t *ret_len)
{
	void *buf;
	int rc = fileio_read_all(path, PROTO_MAX_BIN, &buf, ret_len);

	if (rc == GERR_TOOBIG)
		fprintf(stderr, "gpuctl: %s is larger than %u bytes\n", path,
			PROTO_MAX_BIN);
	else if (rc == GERR_NOMEM)
		fprintf(stderr, "gpuctl: out of memory reading %s\n", path);
	else if (rc)
		fprintf(stderr, "gpuctl: cannot read %s: %s\n", path,
			strerror(errno));
	if (rc)
		return -1;
	*ret = buf;
	return 0;
}

json_t *ctl_shown(json_t *reply)
{
	if (reply)
		ctl_text_escape_json(reply);
	return reply;
}

void ctl_print_json(const json_t *v)
{
	/* Non-ASCII (C1 controls included) as \u escapes: as safe on a
	 * terminal as the text output. */
	json_dumpf(v, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	printf("\n");
}

void ctl_print_warnings(const struct ctlcmd_reply *rep, FILE *f)
{
	for (size_t i = 0; i < rep->n_warnings; i++) {
		char *e = ctl_text_escape(rep->warnings[i], 0);
		fprintf(f, "warning: %s\n", e ? e : "?");
		free(e);
	}
}

int ctl_parse_time(const char *opt, const char *s, int64_t *ret)
{
	char err[256];

	if (ctl_time_parse(s, (int64_t)time(NULL), ret, err, sizeof(err))) {
		fprintf(stderr, "gpuctl: %s: %s\n", opt, err);
		return -1;
	}
	return 0;
}

int ctl_check_user(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > CTLCMD_OWNER_MAX) {
		fprintf(stderr, "gpuctl: --user: a user is 1 to %d bytes: a "
			"credential's name or a Unix user\n", CTLCMD_OWNER_MAX);
		return -1;
	}
	return 0;
}
