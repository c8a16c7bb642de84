/* ctl_workers.c - gpuctl worker drain|resume|forgive NAME: the operator's
 * hold on workers (ctl_cmd.h). NAME is a row of gpuctl workers
 * (CREDENTIAL@INSTANCE) or a credential, for every process of it. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ctl_cmd.h"
#include "ctl_help.h"
#include "ctl_text.h"

static const struct {
	const char *verb;
	enum ctlcmd_id id;
	const char *done;   /* what is printed after NAME */
} actions[] = {
	{ "drain", CTLCMD_WORKER_DRAIN,
	  "drained: it finishes its lease and is granted no more" },
	{ "resume", CTLCMD_WORKER_RESUME, "resumed: it is granted leases again" },
	{ "forgive", CTLCMD_WORKER_FORGIVE,
	  "forgiven: out of quarantine, its failure counts reset" },
};

int cmd_worker(const struct ctl_target *to, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	ctl_opt_reset();
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h')
			return ctl_help_cmd(stdout, "worker"), 0;
		return ctl_usage_error("worker");
	}
	int n = argc - optind;
	char **a = argv + optind;
	for (size_t i = 0; n == 2 && i < sizeof(actions) / sizeof(actions[0]); i++) {
		struct ctl_reply reply;
		int ex;

		if (strcmp(a[0], actions[i].verb) != 0)
			continue;
		ex = ctl_ask(to, &(struct ctlcmd_req){ .cmd = actions[i].id, .name = a[1] },
			     1, &reply);
		if (ex)
			return ex;
		printf("%s: %s (%" PRId64 " worker%s)\n", reply.f.worker, actions[i].done,
		       reply.f.changed, reply.f.changed == 1 ? "" : "s");
		ctl_reply_free(&reply);
		return 0;
	}
	fprintf(stderr, "gpuctl: usage: gpuctl worker drain|resume|forgive NAME\n");
	return ctl_usage_error("worker");
}
