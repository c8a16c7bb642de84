/* ctl_help.h - gpuctl's help: the list of commands (gpuctl help), each
 * command's own page (gpuctl help CMD, gpuctl CMD --help) and the exit
 * codes. The same text is in doc/gpuctl.1. Any thread; keeps nothing.
 */
#ifndef GPUD_CTL_HELP_H
#define GPUD_CTL_HELP_H

#include <stdio.h>

#define CTL_DEFAULT_SOCKET "/var/lib/gpud/gpud.sock"

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
