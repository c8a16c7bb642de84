/* ctl_help.c - gpuctl's help, printed from its command table (gpuctl.c,
 * handed over by ctl_help_use): the same rows dispatch the commands. */
#include <string.h>

#include "ctl_client.h"
#include "ctl_help.h"

/* The command table, from gpuctl's main (gpuctl.c). */
static const struct ctl_command *pages;
static size_t npages;

void ctl_help_use(const struct ctl_command *table, size_t n)
{
	pages = table;
	npages = n;
}

static const char global_text[] =
"options (before COMMAND):\n"
"  --socket PATH     gpud's control socket (default $GPUD_SOCKET, else\n"
"                    " CTL_DEFAULT_SOCKET ")\n"
"  --connect HOST:PORT --credential FILE\n"
"                    a remote gpud (or $GPUD_CONNECT, $GPUD_CREDENTIAL), over\n"
"                    the encrypted channel; a viewer credential may read, an\n"
"                    admin's do everything\n"
"  --version         gpuctl's version\n"
"  -h, --help        this help\n"
"exit status: 0 ok (also when a reader stops early: | head), 1 request\n"
"  refused or failed (check: damaged), 2 usage (binary to a terminal too),\n"
"  3 cannot connect or gpud hung up, 4 no such job, 5 job failed or\n"
"  cancelled (wait), 6 timed out (wait)\n";

void ctl_help_all(FILE *f)
{
	fprintf(f, "usage: gpuctl [OPTIONS] COMMAND [ARGS]\ncommands:\n");
	for (size_t i = 0; i < npages; i++)
		fprintf(f, "  %-10s %s\n", pages[i].name, pages[i].summary);
	fprintf(f, "%s", global_text);
	fprintf(f, "gpuctl help COMMAND (or gpuctl COMMAND --help) shows its options;\n"
		"man gpuctl has it all.\n");
}

int ctl_help_cmd(FILE *f, const char *cmd)
{
	for (size_t i = 0; i < npages; i++) {
		if (strcmp(pages[i].name, cmd) != 0)
			continue;
		fprintf(f, "usage: gpuctl %s\n%s\n%s", pages[i].synopsis,
			pages[i].summary, pages[i].text);
		return 0;
	}
	return -1;
}

int ctl_help_known(const char *cmd)
{
	for (size_t i = 0; i < npages; i++)
		if (strcmp(pages[i].name, cmd) == 0)
			return 1;
	return 0;
}

int ctl_usage_error(const char *cmd)
{
	if (cmd && ctl_help_known(cmd))
		fprintf(stderr, "gpuctl: see gpuctl help %s\n", cmd);
	else
		fprintf(stderr, "gpuctl: see gpuctl help\n");
	return EXIT_USAGE;
}
