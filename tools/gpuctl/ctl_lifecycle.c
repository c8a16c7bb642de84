/* ctl_lifecycle.c - gpuctl's steering of a job's lifecycle: requeue, and
 * submit's --after and --time-limit (ctl_cmd.h). gpud's side is
 * daemon/control/control_lifecycle.c and daemon/lifecycle.c. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ctl_cmd.h"
#include "ctl_help.h"
#include "duration.h"

int ctl_submit_lifecycle_opt(const char *opt, const char *val,
			     json_int_t *after, double *time_limit)
{
	if (strcmp(opt, "after") == 0) {
		if (*after) {
			fprintf(stderr, "gpuctl: one --after per job (a job that "
				"waits for several: chain them, A then B then C)\n");
			return -1;
		}
		return ctl_parse_job(val, after);
	}
	if (duration_parse(val, CTLCMD_TIME_LIMIT_MIN, CTLCMD_TIME_LIMIT_MAX,
			   time_limit)) {
		fprintf(stderr, "gpuctl: --time-limit is a duration of 1s to 366d "
			"with its unit: 90s, 30m, 2h, 1d, 1h30m\n");
		return -1;
	}
	return 0;
}

void ctl_lifecycle_line(FILE *f, const struct ctlcmd_job *job)
{
	char lim[DURATION_TEXT_MAX], ran[DURATION_TEXT_MAX];

	if (!job->after_job && !(job->time_limit_s > 0))
		return;
	fprintf(f, "   ");
	if (job->after_job)
		fprintf(f, " after job %" PRId64, job->after_job);
	if (job->time_limit_s > 0)
		fprintf(f, " %stime limit %s (ran %s)", job->after_job ? " " : "",
			duration_format(job->time_limit_s, lim, sizeof(lim)),
			duration_format(job->ran_s, ran, sizeof(ran)));
	fprintf(f, "\n");
}

int cmd_requeue(const struct ctl_target *to, int argc, char **argv)
{
	struct ctlcmd_reply rep;
	json_int_t job;
	int ex;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return ctl_help_cmd(stdout, "requeue"), 0;
	if (argc != 2 || ctl_parse_job(argv[1], &job)) {
		fprintf(stderr, "gpuctl: requeue needs exactly one job id\n");
		return ctl_usage_error("requeue");
	}
	json_t *reply = ctl_shown(ctl_request(to, &(struct ctlcmd_req){
		.cmd = CTLCMD_REQUEUE, .job = job }, &ex));
	if (!reply)
		return ex;
	ex = ctl_reply_fields(CTLCMD_REQUEUE, reply, &rep) ? EXIT_FAIL : 0;
	if (!ex)
		printf("job %" JSON_INTEGER_FORMAT ": %s (%" PRId64 " lease(s) to "
		       "run again; verified results kept)\n", job, rep.state,
		       rep.requeued);
	json_decref(reply);
	return ex;
}
