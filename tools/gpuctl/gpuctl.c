/* gpuctl - control gpud over its Unix socket or, with a credential, over
 * the network: submit and follow jobs, see the workers, manage tokens,
 * check and back up gpud's data. gpuctl help lists the commands,
 * gpuctl help CMD (or gpuctl CMD --help) each one's options; gpuctl(1)
 * has it all, exit codes included (ctl_client.h).
 *
 * Text from gpud (names, devices, errors, reasons, answers) is printed
 * with its control characters escaped (ctl_text.h); --json output is JSON
 * with everything outside ASCII escaped.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_client.h"
#include "ctl_cmd.h"
#include "ctl_help.h"
#include "gpud_config.h"

static const struct {
	const char *name;
	ctl_cmd_fn run;
} commands[] = {
	{ "submit", cmd_submit }, { "status", cmd_status }, { "history", cmd_history },
	{ "wait", cmd_wait }, { "watch", cmd_watch }, { "result", cmd_result },
	{ "export", cmd_export }, { "extend", cmd_extend }, { "cancel", cmd_simple },
	{ "pause", cmd_simple }, { "resume", cmd_simple }, { "priority", cmd_priority },
	{ "workers", cmd_workers }, { "workloads", cmd_workloads }, { "token", cmd_token },
	{ "check", cmd_check }, { "backup", cmd_backup },
};

static int cmd_help(int argc, char **argv)
{
	if (argc == 0) {
		ctl_help_all(stdout);
		return 0;
	}
	if (argc == 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0))
		return ctl_help_cmd(stdout, "help"), 0;
	if (argc == 1 && ctl_help_cmd(stdout, argv[0]) == 0)
		return 0;
	fprintf(stderr, "gpuctl: no command '%s'\n", argv[0]);
	return ctl_usage_error(NULL);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "connect", required_argument, NULL, 'c' },
		{ "credential", required_argument, NULL, 'C' },
		{ "version", no_argument, NULL, 'V' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct ctl_target target;
	const char *connect_to = getenv("GPUD_CONNECT");
	const char *cred = getenv("GPUD_CREDENTIAL");
	int c;

	/* A connection gpud closes is an error to report, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	target.socket = getenv("GPUD_SOCKET");
	if (!target.socket || !*target.socket)
		target.socket = CTL_DEFAULT_SOCKET;
	/* "+": stop at the command; its options are its own. */
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			target.socket = optarg;
			connect_to = NULL;
			break;
		case 'c': connect_to = optarg; break;
		case 'C': cred = optarg; break;
		case 'V':
			printf("gpuctl %s\n", GPUD_VERSION);
			return 0;
		case 'h':
			ctl_help_all(stdout);
			return 0;
		default:
			return ctl_usage_error(NULL);
		}
	}
	if (optind >= argc) {
		ctl_help_all(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[optind];
	int n = argc - optind;
	if (strcmp(cmd, "help") == 0)
		return cmd_help(n - 1, argv + optind + 1);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, cmd) != 0)
			continue;
		/* argv[0] names the command in getopt_long's messages. */
		char prog[64];
		char **av = calloc((size_t)n + 1, sizeof(*av));
		if (!av)
			return EXIT_FAIL;
		snprintf(prog, sizeof(prog), "gpuctl %s", cmd);
		av[0] = prog;
		for (int k = 1; k < n; k++)
			av[k] = argv[optind + k];
		if (connect_to && *connect_to) {
			int rc = ctl_target_remote(&target, connect_to, cred);
			if (rc) {
				free(av);
				return rc;
			}
		}
		int rc = commands[i].run(&target, n, av);
		free(av);
		return rc;
	}
	fprintf(stderr, "gpuctl: unknown command '%s'\n", cmd);
	return ctl_usage_error(NULL);
}
