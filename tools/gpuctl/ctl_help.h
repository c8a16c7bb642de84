/* ctl_help.h - gpuctl's command table's row, and its help: the list of
 * commands (gpuctl help), each command's own page (gpuctl help CMD,
 * gpuctl CMD --help) and the exit codes. The same text is in
 * doc/gpuctl.1; the bash completion reads the list and each command's
 * options from gpuctl help, so this table is the only list.
 *
 * gpuctl's main hands the table over (ctl_help_use) before anything else;
 * it is borrowed for the process's life. Single-threaded (gpuctl).
 */
#ifndef GPUD_CTL_HELP_H
#define GPUD_CTL_HELP_H

#include <stdio.h>

#define CTL_DEFAULT_SOCKET "/var/lib/gpud/gpud.sock"

struct ctl_target;

/* One gpuctl command: its name, its handler (argv[0] "gpuctl CMD"; the
 * exit status; NULL for help, which main answers), and its help page. */
struct ctl_command {
	const char *name;
	int (*run)(const struct ctl_target *to, int argc, char **argv);
	const char *synopsis;  /* after "gpuctl " */
	const char *summary;   /* one line, for gpuctl help */
	const char *text;      /* the options and what it prints */
};

/* The table every function below reads (kept, not copied). */
void ctl_help_use(const struct ctl_command *table, size_t n);

/* Every command, then the global options and exit codes. */
void ctl_help_all(FILE *f);
/* One command's page; -1 when there is no such command (nothing
 * printed). */
int ctl_help_cmd(FILE *f, const char *cmd);
/* 1 when cmd names a command. */
int ctl_help_known(const char *cmd);
/* "gpuctl: see gpuctl help CMD" on stderr, and EXIT_USAGE. */
int ctl_usage_error(const char *cmd);

#endif
