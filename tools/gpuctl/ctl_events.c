/* ctl_events.c - `gpuctl events JOB`: what happened to a job, oldest
 * first, one line an event with its absolute time (local), kind, lease
 * (LEASE/EPOCH), worker and detail; --follow asks again every 2 s for
 * the events after the last one shown until the job has ended
 * (ctl_cmd.h). A viewer's credential may ask, as for history. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl_cmd.h"
#include "ctl_help.h"

#define FOLLOW_S 2

static void print_head(void)
{
	printf("%-19s  %-16s %-10s %-20s %s\n", "TIME", "KIND", "LEASE", "WORKER",
	       "DETAIL");
}

/* One event; its strings escaped already (ctl_ask). */
static void print_event(const struct ctlcmd_event *e)
{
	time_t t = (time_t)e->ts;
	char when[32] = "-", lease[48] = "-";
	struct tm tm;

	if (e->ts > 0 && localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	if (e->lease)
		snprintf(lease, sizeof(lease), "%" PRId64 "/%" PRId64, e->lease, e->epoch);
	printf("%-19s  %-16s %-10s %-20s %s\n", when, e->kind, lease,
	       e->worker ? e->worker : "-", e->detail ? e->detail : "");
}

static int ended(const char *state)
{
	return strcmp(state, "done") == 0 || strcmp(state, "failed") == 0 ||
	       strcmp(state, "cancelled") == 0;
}

int cmd_events(const struct ctl_target *to, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "since", required_argument, NULL, 'S' },
		{ "limit", required_argument, NULL, 'n' },
		{ "follow", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctlcmd_req req = { .cmd = CTLCMD_EVENTS,
				  .limit = CTLCMD_EVENTS_LIMIT_DEFAULT };
	int c, as_json = 0, follow = 0, no_header = 0, ex;
	long limit;
	json_int_t job = 0;

	ctl_opt_reset();
	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			if (ctl_parse_time("--since", optarg, &req.since))
				return ctl_usage_error("events");
			break;
		case 'n':
			if (ctl_parse_int("--limit", optarg, 1, CTLCMD_EVENTS_LIMIT_MAX, &limit))
				return ctl_usage_error("events");
			req.limit = limit;
			break;
		case 'f': follow = 1; break;
		case 'j': as_json = 1; break;
		case 'H': no_header = 1; break;
		case 'h': return ctl_help_cmd(stdout, "events"), 0;
		default: return ctl_usage_error("events");
		}
	}
	if (optind + 1 != argc || ctl_parse_job(argv[optind], &job))
		return ctl_usage_error("events");
	if (as_json && follow) {
		fprintf(stderr, "gpuctl: events: --json prints one list; --follow "
			"lines as they come (not both)\n");
		return ctl_usage_error("events");
	}
	req.job = job;
	for (int first = 1;; first = 0) {
		struct ctl_reply reply;
		int over;

		ex = ctl_ask(to, &req, !as_json, &reply);
		if (ex)
			return ex;
		if (as_json) {
			ctl_print_json(ctlcmd_reply_list(CTLCMD_EVENTS, reply.json));
			ctl_reply_free(&reply);
			return 0;
		}
		if (first && !no_header && (reply.f.n_events || follow))
			print_head();
		if (first && !reply.f.n_events && !follow && !no_header)
			printf("no events\n");
		if (reply.f.left_out > 0)
			fprintf(stderr, "gpuctl: %" PRId64 " older event%s not shown (more "
				"than one reply holds): --since or --limit\n",
				reply.f.left_out, reply.f.left_out == 1 ? "" : "s");
		for (size_t i = 0; i < reply.f.n_events; i++)
			print_event(&reply.f.events[i]);
		fflush(stdout);
		over = ended(reply.f.state);
		req.after = reply.f.last_event;
		ctl_reply_free(&reply);
		if (!follow || over)
			return 0;
		sleep(FOLLOW_S);
	}
}
