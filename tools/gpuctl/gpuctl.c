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
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_client.h"
#include "ctl_cmd.h"
#include "ctl_help.h"
#include "gpud_config.h"

/* gpuctl's commands: name, handler (NULL: help, which main runs), and
 * help page (synopsis after "gpuctl ", a one-line summary, then the
 * options and what it prints). The order is gpuctl help's. */
static const struct ctl_command commands[] = {
{ "submit", cmd_submit, "submit WORKLOAD [--name N] [--priority P] [--check full|sample]\n"
  "                     [--file F] [--after JOB] [--time-limit D] --KEY VALUE...",
  "queue a job, print its id",
  "  --name N          a name for the job: 1..64 of A-Z a-z 0-9 . _ -\n"
  "  --priority P      -1000..1000 (default 0); higher runs first, ties by age\n"
  "  --check full      every lease computed again by another worker, merged\n"
  "                    when both agree (default sample: gpud verifies a sample)\n"
  "  --file F          send F as the job's input (e.g. othello positions)\n"
  "  --after JOB       granted nothing until job JOB is done (status: \"after\n"
  "                    job JOB (running)\"); fails if JOB fails or is cancelled\n"
  "  --time-limit D    stop the job once it has run D (90s, 30m, 2h, 1d, 1h30m;\n"
  "                    1s..366d; queued and paused time not counted): it fails\n"
  "                    with \"time limit D reached\", gpuctl requeue continues it\n"
  "  --KEY VALUE       the workload's parameters (also --KEY=VALUE), e.g.\n"
  "                    gpuctl submit graveler --battles 1e9 --seed 7\n"
  "gpuctl submit WORKLOAD --help lists WORKLOAD's parameters (gpuctl workloads\n"
  "lists them all).\n" },
{ "status", cmd_status, "status [JOB] [--long] [--all] [--state S[,S]] [--workload W]\n"
  "                     [--user U] [--format COLS] [--no-header] [--json]",
  "jobs, one line each (like squeue); JOB: its whole record",
  "  one aligned line per job: ID NAME USER WORKLOAD STATE PROGRESS RATE\n"
  "  ELAPSED ETA REASON; USER: who submitted it. States: queued (REASON says\n"
  "  why: no eligible worker, behind job N, every lease is held), running,\n"
  "  paused, done, failed, cancelled.\n"
  "  Finished jobs show their elapsed time and average rate.\n"
  "  -l, --long        every job's whole record (leases, workers, check, times);\n"
  "                    the default for gpuctl status JOB without --format\n"
  "  -a, --all         also jobs that finished more than a day ago\n"
  "  --state S[,S]     only jobs in these states\n"
  "  --workload W      only jobs of workload W\n"
  "  --user U          only jobs U submitted\n"
  "  --format COLS     columns, comma-separated, of: id name user workload state\n"
  "                    priority progress units rate avg_rate elapsed eta\n"
  "                    submitted started finished attempts vfail reason\n"
  "  --no-header       no header line\n"
  "  --json            gpud's records as JSON (exact numbers), filtered alike\n" },
{ "history", cmd_history, "history [--all] [--since T] [--until T] [--state S]\n"
  "                     [--workload W] [--user U] [--limit N] [--format COLS]\n"
  "                     [--no-header] [--json]",
  "finished jobs, newest first (like sacct)",
  "  ID NAME USER WORKLOAD STATE SUBMITTED STARTED FINISHED ELAPSED UNITS\n"
  "  AVG_RATE ATTEMPTS VFAIL (results refuted by verification). USER: who\n"
  "  submitted it (a credential's name, or the local Unix user).\n"
  "  -a, --all         every finished job (default: the last 30 days)\n"
  "  --since T         finished at or after T: a date (2026-11-29,\n"
  "                    2026-11-29T13:00 local, 2026-11-29T13:00Z UTC) or a\n"
  "                    time ago (90s, 30m, 2h, 3d, 1w)\n"
  "  --until T         finished before T (as --since)\n"
  "  --state S         done, failed or cancelled\n"
  "  --workload W      only jobs of workload W\n"
  "  --user U          only jobs U submitted\n"
  "                    (the filters hold together)\n"
  "  --limit N         at most N jobs (1..100000; default 1000)\n"
  "  --format COLS     columns, as gpuctl status --format\n"
  "  --no-header       no header line\n"
  "  --json            gpud's records as JSON\n" },
{ "wait", cmd_wait, "wait JOB [--timeout SECONDS]",
  "block until the job ends; exit 0 when done and verified",
  "  Shows a progress line (redrawn in place on a terminal, one line every 5 s\n"
  "  otherwise) on stderr. Exit 0: done; 5: failed or cancelled; 6: timed out;\n"
  "  4: no such job. Once gpud has answered, a gpud restart is ridden over\n"
  "  (tried again until --timeout).\n"
  "  --timeout SECONDS give up after this long\n" },
{ "watch", cmd_watch, "watch [JOB] [--interval S] [--count N] [--all]",
  "a live view of the jobs and workers, fitted to the terminal",
  "  Redraws every --interval seconds (default 2) until Ctrl-C, or --count\n"
  "  times. Running and queued jobs first, then paused, then finished ones;\n"
  "  on a terminal, lists that do not fit end in \"+N more\". A gpud restart\n"
  "  is ridden over: \"gpud is not answering; retrying\" until it is back.\n"
  "  -a, --all         also jobs that finished more than a day ago\n" },
{ "result", cmd_result, "result JOB [--json] | result JOB --values FROM:TO",
  "the job's answer (bulk results to stdout)",
  "  The answer as text, with the path of its results directory (plots);\n"
  "  merged so far when the job is not finished.\n"
  "  --json            the answer as JSON\n"
  "  --values FROM:TO  Officers values G(FROM..TO-1), 16-bit little-endian,\n"
  "                    as export JOB values --range FROM:TO; never to a\n"
  "                    terminal: redirect it (> FILE)\n" },
{ "export", cmd_export, "export JOB [WHAT [--KEY VALUE...]] > FILE",
  "a job's bulk output to stdout; without WHAT, what it can export",
  "  e.g. gpuctl export 3 values --range 0:1000000 > values.bin\n"
  "       gpuctl export 5 counts > counts.csv   (CSV: index,count)\n"
  "  Binary output is not written to a terminal (exit 2).\n" },
{ "extend", cmd_extend, "extend JOB --KEY VALUE...",
  "take a job further (e.g. officers --to N)", "" },
{ "cancel", cmd_simple, "cancel JOB", "cancel a job (its leases are revoked)", "" },
{ "requeue", cmd_requeue, "requeue JOB",
  "a failed or cancelled job back to the queue, its verified work kept (admin)",
  "  Verified leases stay verified and merged; the others run again from their\n"
  "  checkpoints, their failure counts reset; the time limit counts afresh. A\n"
  "  done job is refused (gpuctl extend takes a job further), and so is a job\n"
  "  whose --after job failed (requeue that one first).\n" },
{ "pause", cmd_simple, "pause JOB",
  "hold a job: workers checkpoint and release its leases", "" },
{ "resume", cmd_simple, "resume JOB", "let a paused job run again, from its checkpoints", "" },
{ "priority", cmd_priority, "priority JOB P",
  "set a job's priority, -1000..1000; higher runs first", "" },
{ "workers", cmd_workers, "workers [--json]",
  "connected and known workers",
  "  ID NAME STATE DEVICE THREADS LEASE RATE (in its job's unit) LEASES\n"
  "  FAILURES FOREIGN (messages about leases it was not granted) STALLS\n"
  "  (leases revoked for no progress) TRUST SEEN WHERE (host, Slurm job, pod).\n"
  "  STATE: online, offline, drained (gpuctl worker drain) or quarantined.\n"
  "  --json            gpud's records as JSON\n" },
{ "worker", cmd_worker, "worker drain|resume|forgive NAME",
  "hold a worker: drain it, resume it, let it out of quarantine (admin)",
  "  NAME is a row of gpuctl workers (CREDENTIAL@INSTANCE), or a credential for\n"
  "  every process of it.\n"
  "  drain             it finishes the lease it holds and is granted no more\n"
  "                    (its claims answered \"drained by the operator\")\n"
  "  resume            undo drain: it is granted leases again\n"
  "  forgive           out of quarantine; its failures, foreign messages and\n"
  "                    stalls counted from zero again\n"
  "  What they change lasts across gpud restarts; each is logged in gpud's events.\n" },
{ "workloads", cmd_workloads, "workloads [--json]",
  "the workloads gpud runs: units, parameters, exports", "" },
{ "token", cmd_token, "token add NAME [--role worker|viewer|admin] [--public-key HEX] |\n"
  "                     token keygen NAME | token list | token revoke NAME",
  "credentials: add (printed once), keygen, list, revoke",
  "  add               a credential for a worker (default), a viewer (status,\n"
  "                    history, result, export, workers, workloads) or an admin:\n"
  "                    its key pair is made here, gpud keeps the public key\n"
  "  --public-key HEX  register a key made elsewhere (token keygen); prints\n"
  "                    the gpud-key line to add to that credential\n"
  "  keygen            print a new credential (no gpud-key line yet) without gpud\n"
  "  revoke            its workers are cut off at once\n" },
{ "check", cmd_check, "check [--json]",
  "the database's integrity, the answers' digests and every stored blob; exit 1 when damaged", "" },
{ "backup", cmd_backup, "backup DIR [--copy] [--json]",
  "a consistent backup while jobs run; exit 1 when unsound",
  "  DIR is new or empty, on gpud's host; blobs are copied, reflinked where the\n"
  "  filesystem can (never hard-linked); --copy never reflinks.\n" },
{ "page-link", cmd_page_link, "page-link [--valid DURATION] [--json] | page-link --revoke",
  "an address of the status page for a browser, with a new key",
  "  gpud keeps only the key's hash; the address is printed once. Open it in a\n"
  "  browser: it keeps a cookie. Scrapers of /metrics send\n"
  "  \"Authorization: Bearer KEY\" (the key is printed on stderr and in --json).\n"
  "  A viewer's or an admin's credential.\n"
  "  --valid DURATION  how long the key works: 1m to 90d, e.g. 12h (default 7d)\n"
  "  --revoke          end the links: a viewer's the viewers' links, an admin's\n"
  "                    every link\n"
  "  --json            gpud's reply as JSON (url, key, expires_at)\n" },
{ "events", cmd_events, "events JOB [--since T] [--limit N] [--follow] [--json]\n"
  "                     [--no-header]",
  "what happened to a job: submit, grants, results, verification, done",
  "  TIME (local) KIND LEASE (lease/epoch) WORKER DETAIL, oldest first: the\n"
  "  job's events and its leases' (an expiry). A viewer's credential may ask.\n"
  "  --since T         events from T on: a date (2026-11-29, 2026-11-29T13:00,\n"
  "                    2026-11-29T13:00Z for UTC) or a time ago (30m, 2h, 3d)\n"
  "  --limit N         the newest N events (default 1000, at most 100000)\n"
  "  -f, --follow      then print new events as they come (every 2 s) until\n"
  "                    the job ends\n"
  "  --no-header       no header line\n"
  "  --json            gpud's records as JSON (ts in Unix seconds)\n" },
{ "help", NULL, "help [COMMAND]", "this list, or one command's page", "" },
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
	ctl_help_use(commands, sizeof(commands) / sizeof(commands[0]));
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
		if (strcmp(commands[i].name, cmd) != 0 || !commands[i].run)
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
		/* What stdio still holds: a reader that stopped (| head)
		 * wanted no more; a full disk is an error. */
		if (fflush(stdout) == EOF && errno != EPIPE) {
			fprintf(stderr, "gpuctl: cannot write the output: %s\n", strerror(errno));
			return rc ? rc : EXIT_FAIL;
		}
		return rc;
	}
	fprintf(stderr, "gpuctl: unknown command '%s'\n", cmd);
	return ctl_usage_error(NULL);
}
