/* ctl_page.c - `gpuctl page-link`: the status page's address with a new
 * key (a viewer's or an admin's credential), or --revoke to end links
 * (ctl_cmd.h). gpud keeps only the key's hash: the address printed here
 * is the only copy. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_cmd.h"
#include "ctl_help.h"

/* DURATION: a number with an optional unit, s (default), m, h or d, in
 * CTLCMD_PAGE_VALID_MIN..MAX seconds. -1 after printing why. */
static int parse_valid(const char *s, int64_t *ret)
{
	char *end;
	double v = strtod(s, &end), unit = 1;

	if (end != s && end[0] && !end[1]) {
		switch (end[0]) {
		case 's': unit = 1; end++; break;
		case 'm': unit = 60; end++; break;
		case 'h': unit = 3600; end++; break;
		case 'd': unit = 86400; end++; break;
		default: break;
		}
	}
	v *= unit;
	if (end == s || *end || !(v >= CTLCMD_PAGE_VALID_MIN && v <= CTLCMD_PAGE_VALID_MAX)) {
		fprintf(stderr, "gpuctl: --valid wants a duration from 1m to 90d "
			"(e.g. 12h, 7d; seconds without a unit), got '%s'\n", s);
		return -1;
	}
	*ret = (int64_t)v;
	return 0;
}

int cmd_page_link(const struct ctl_target *to, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "valid", required_argument, NULL, 'v' },
		{ "revoke", no_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctlcmd_req req = { .cmd = CTLCMD_PAGE_LINK,
				  .valid = CTLCMD_PAGE_VALID_DEFAULT };
	struct ctl_reply reply;
	int c, ex, as_json = 0, valid_given = 0;

	ctl_opt_reset();
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'v') {
			if (parse_valid(optarg, &req.valid))
				return ctl_usage_error("page-link");
			valid_given = 1;
		} else if (c == 'r') {
			req.revoke = 1;
		} else if (c == 'j') {
			as_json = 1;
		} else if (c == 'h') {
			return ctl_help_cmd(stdout, "page-link"), 0;
		} else {
			return ctl_usage_error("page-link");
		}
	}
	if (optind != argc || (req.revoke && valid_given)) {
		fprintf(stderr, "gpuctl: usage: gpuctl page-link [--valid DURATION] "
			"[--json], gpuctl page-link --revoke\n");
		return ctl_usage_error("page-link");
	}
	ex = ctl_ask(to, &req, !as_json, &reply);
	if (ex)
		return ex;
	if (as_json) {
		ctl_print_json(ctlcmd_reply_body(reply.json));
	} else if (req.revoke) {
		printf("%lld page link%s ended\n", (long long)reply.f.revoked_links,
		       reply.f.revoked_links == 1 ? "" : "s");
	} else if (!reply.f.url || !reply.f.key) {
		fprintf(stderr, "gpuctl: gpud sent no link\n");
		ctl_reply_free(&reply);
		return EXIT_FAIL;
	} else {
		time_t when = (time_t)reply.f.expires_at;
		char date[40];
		struct tm tm;

		strftime(date, sizeof(date), "%Y-%m-%d %H:%M %Z", localtime_r(&when, &tm));
		printf("%s\n", reply.f.url);
		fprintf(stderr, "gpuctl: open it once in a browser (it keeps a cookie); "
			"valid until %s.\ngpuctl: scrapers send \"Authorization: Bearer %s\". "
			"gpud keeps no copy of the key; gpuctl page-link --revoke ends "
			"the links.\n", date, reply.f.key);
	}
	ctl_reply_free(&reply);
	return 0;
}
