/* ctl_cmd.h - gpuctl's commands and what they share: each cmd_* takes
 * argv with argv[0] "gpuctl CMD" (for getopt_long's messages) and returns
 * gpuctl's exit status (ctl_client.h). Files: ctl_jobs.c (submit,
 * extend, export, result, cancel/pause/resume, priority, workloads),
 * ctl_status.c (status, history), ctl_watch.c (watch, wait, workers),
 * ctl_admin.c (token, check, backup), ctl_page.c (page-link),
 * ctl_workers.c (worker drain|resume|forgive), ctl_events.c (events);
 * ctl_args.c
 * the shared parsing.
 *
 * Single-threaded (gpuctl's main); keeps nothing between calls.
 */
#ifndef GPUD_CTL_CMD_H
#define GPUD_CTL_CMD_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ctl_client.h"

#define CTL_ARG_MAX 4096

typedef int (*ctl_cmd_fn)(const struct ctl_target *to, int argc, char **argv);

int cmd_submit(const struct ctl_target *to, int argc, char **argv);
int cmd_extend(const struct ctl_target *to, int argc, char **argv);
int cmd_export(const struct ctl_target *to, int argc, char **argv);
int cmd_result(const struct ctl_target *to, int argc, char **argv);
int cmd_simple(const struct ctl_target *to, int argc, char **argv);
int cmd_priority(const struct ctl_target *to, int argc, char **argv);
int cmd_workloads(const struct ctl_target *to, int argc, char **argv);
int cmd_status(const struct ctl_target *to, int argc, char **argv);
int cmd_history(const struct ctl_target *to, int argc, char **argv);
int cmd_watch(const struct ctl_target *to, int argc, char **argv);
int cmd_wait(const struct ctl_target *to, int argc, char **argv);
int cmd_workers(const struct ctl_target *to, int argc, char **argv);
int cmd_token(const struct ctl_target *to, int argc, char **argv);
int cmd_check(const struct ctl_target *to, int argc, char **argv);
int cmd_backup(const struct ctl_target *to, int argc, char **argv);
int cmd_page_link(const struct ctl_target *to, int argc, char **argv);
int cmd_worker(const struct ctl_target *to, int argc, char **argv);
int cmd_events(const struct ctl_target *to, int argc, char **argv);
int cmd_requeue(const struct ctl_target *to, int argc, char **argv);

/* ---- ctl_lifecycle.c ---- */

/* submit's --after JOB (opt "after") or --time-limit DURATION (opt
 * "time-limit") value into *after or *time_limit (seconds); a second
 * --after is refused. -1 after printing why. */
int ctl_submit_lifecycle_opt(const char *opt, const char *val,
			     json_int_t *after, double *time_limit);
/* status's long view: "    after job N  time limit 30m (ran 12m5s)\n"
 * when job has either, else nothing. */
void ctl_lifecycle_line(FILE *f, const struct ctlcmd_job *job);

/* ---- ctl_args.c ---- */

/* The command's name from argv[0] ("gpuctl status" -> "status"). */
const char *ctl_cmd_name(char **argv);
/* Start a getopt_long pass over a command's argv. */
void ctl_opt_reset(void);
/* A command whose only option is --json (and --help), its gpuctl name
 * that of its request id: the arguments, then the request (ctl_ask; its
 * reply escaped for the terminal unless --json); with --json and
 * list_only, the reply's list printed as JSON. 0 with *ret the reply to
 * print; or -1 with *ret_exit the status to return now (0 after printing
 * the help or the JSON, EXIT_USAGE after saying what is wrong, or the
 * request's failure). */
int ctl_json_only_request(const struct ctl_target *to, enum ctlcmd_id id,
			  int list_only, int argc, char **argv, int *as_json,
			  struct ctl_reply *ret, int *ret_exit);
/* A job id: a positive integer. -1 after printing why. */
int ctl_parse_job(const char *s, json_int_t *ret);
/* An integer in lo..hi for option opt. -1 after printing why. */
int ctl_parse_int(const char *opt, const char *s, long lo, long hi, long *ret);
/* A number of seconds in lo..hi for option opt. -1 after printing why. */
int ctl_parse_seconds(const char *opt, const char *s, double lo, double hi,
		      double *ret);
/* A time for option opt (ctl_time.h: a date, or 2h for two hours ago)
 * as Unix seconds. -1 after printing why. */
int ctl_parse_time(const char *opt, const char *s, int64_t *ret);
/* A job owner to filter by (--user): 1..CTLCMD_OWNER_MAX bytes. -1 after
 * printing why. */
int ctl_check_user(const char *s);
/* --KEY VALUE or --KEY=VALUE pairs into a JSON object of strings (dashes
 * in keys become underscores); NULL after printing why. */
json_t *ctl_parse_kv(int argc, char **argv);
/* A whole input file of at most PROTO_MAX_BIN bytes (malloc'ed). -1 after
 * printing why. */
int ctl_read_input(const char *path, uint8_t **ret, size_t *ret_len);
/* reply with every string escaped for the terminal (ctl_text.h). */
json_t *ctl_shown(json_t *reply);
/* v as indented JSON on stdout, non-ASCII as \u escapes. */
void ctl_print_json(const json_t *v);
/* gpud's warnings (its own trouble: status's) to f, escaped. */
void ctl_print_warnings(const struct ctlcmd_reply *rep, FILE *f);

#endif
