/* ctl_help.c - gpuctl's help pages (ctl_help.h). */
#include <string.h>

#include "ctl_client.h"
#include "ctl_help.h"

struct help_page {
	const char *name;
	const char *synopsis;  /* after "gpuctl " */
	const char *summary;   /* one line, for gpuctl help */
	const char *text;      /* the options and what it prints */
};

static const struct help_page pages[] = {
{ "submit", "submit WORKLOAD [--name N] [--priority P] [--check full|sample]\n"
  "                     [--file F] --KEY VALUE...",
  "queue a job, print its id",
  "  --name N          a name for the job: 1..64 of A-Z a-z 0-9 . _ -\n"
  "  --priority P      -1000..1000 (default 0); higher runs first, ties by age\n"
  "  --check full      every lease computed again by another worker, merged\n"
  "                    when both agree (default sample: gpud verifies a sample)\n"
  "  --file F          send F as the job's input (e.g. othello positions)\n"
  "  --KEY VALUE       the workload's parameters (also --KEY=VALUE), e.g.\n"
  "                    gpuctl submit graveler --battles 1e9 --seed 7\n"
  "gpuctl submit WORKLOAD --help lists WORKLOAD's parameters (gpuctl workloads\n"
  "lists them all).\n" },
{ "status", "status [JOB] [--long] [--all] [--state S[,S]] [--workload W]\n"
  "                     [--format COLS] [--no-header] [--json]",
  "jobs, one line each (like squeue); JOB: its whole record",
  "  one aligned line per job: ID NAME WORKLOAD STATE PROGRESS RATE ELAPSED\n"
  "  ETA REASON. States: queued (REASON says why: no eligible worker, behind\n"
  "  job N, every lease is held), running, paused, done, failed, cancelled.\n"
  "  Finished jobs show their elapsed time and average rate.\n"
  "  -l, --long        every job's whole record (leases, workers, check, times);\n"
  "                    the default for gpuctl status JOB without --format\n"
  "  -a, --all         also jobs that finished more than a day ago\n"
  "  --state S[,S]     only jobs in these states\n"
  "  --workload W      only jobs of workload W\n"
  "  --format COLS     columns, comma-separated, of: id name workload state\n"
  "                    priority progress units rate avg_rate elapsed eta\n"
  "                    submitted started finished attempts vfail reason\n"
  "  --no-header       no header line\n"
  "  --json            gpud's records as JSON (exact numbers), filtered alike\n" },
{ "history", "history [--all] [--limit N] [--format COLS] [--no-header]\n"
  "                     [--json]",
  "finished jobs, newest first (like sacct)",
  "  ID NAME WORKLOAD STATE SUBMITTED STARTED FINISHED ELAPSED UNITS AVG_RATE\n"
  "  ATTEMPTS VFAIL (results refuted by verification).\n"
  "  -a, --all         every finished job (default: the last 30 days)\n"
  "  --limit N         at most N jobs\n"
  "  --format COLS     columns, as gpuctl status --format\n"
  "  --no-header       no header line\n"
  "  --json            gpud's records as JSON\n" },
{ "wait", "wait JOB [--timeout SECONDS]",
  "block until the job ends; exit 0 when done and verified",
  "  Shows a progress line (redrawn in place on a terminal, one line every 5 s\n"
  "  otherwise) on stderr. Exit 0: done; 5: failed or cancelled; 6: timed out;\n"
  "  4: no such job.\n"
  "  --timeout SECONDS give up after this long\n" },
{ "watch", "watch [JOB] [--interval S] [--count N] [--all]",
  "a live view of the jobs and workers, fitted to the terminal",
  "  Redraws every --interval seconds (default 2) until Ctrl-C, or --count\n"
  "  times. On a terminal, lists that do not fit end in \"+N more\".\n"
  "  -a, --all         also jobs that finished more than a day ago\n" },
{ "result", "result JOB [--json] | result JOB --values FROM:TO",
  "the job's answer (bulk results to stdout)",
  "  The answer as text, with the path of its results directory (plots);\n"
  "  merged so far when the job is not finished.\n"
  "  --json            the answer as JSON\n"
  "  --values FROM:TO  a range of Officers values (as export JOB values)\n" },
{ "export", "export JOB [WHAT [--KEY VALUE...]] > FILE",
  "a job's bulk output to stdout; without WHAT, what it can export",
  "  e.g. gpuctl export 3 values --range 0:1000000 > values.bin\n"
  "       gpuctl export 5 counts > counts.txt\n" },
{ "extend", "extend JOB --KEY VALUE...",
  "take a job further (e.g. officers --to N)", "" },
{ "cancel", "cancel JOB", "cancel a job (its leases are revoked)", "" },
{ "pause", "pause JOB",
  "hold a job: workers checkpoint and release its leases", "" },
{ "resume", "resume JOB", "let a paused job run again, from its checkpoints", "" },
{ "priority", "priority JOB P",
  "set a job's priority, -1000..1000; higher runs first", "" },
{ "workers", "workers [--json]",
  "connected and known workers",
  "  ID NAME STATE DEVICE THREADS LEASE RATE (in its job's unit) LEASES\n"
  "  FAILURES FOREIGN (messages about leases it was not granted) STALLS\n"
  "  (leases revoked for no progress) TRUST SEEN WHERE (host, Slurm job, pod)\n"
  "  --json            gpud's records as JSON\n" },
{ "workloads", "workloads [--json]",
  "the workloads gpud runs: units, parameters, exports", "" },
{ "token", "token add NAME [--role worker|viewer|admin] | token list |\n"
  "                     token revoke NAME",
  "credentials: add (printed once), list, revoke",
  "  add               a credential for a worker (default), a viewer (status,\n"
  "                    history, result, export, workers, workloads) or an admin\n"
  "  revoke            its workers are cut off at once\n" },
{ "check", "check [--json]",
  "the database's integrity and every stored blob; exit 1 when damaged", "" },
{ "backup", "backup DIR [--copy] [--json]",
  "a consistent backup while jobs run; exit 1 when unsound",
  "  DIR is new or empty, on gpud's host; blobs are hard-linked unless --copy\n"
  "  or DIR is on another filesystem.\n" },
{ "help", "help [COMMAND]", "this list, or one command's page", "" },
};

#define NPAGES (sizeof(pages) / sizeof(pages[0]))

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
"exit status: 0 ok, 1 request refused or failed (check: damaged), 2 usage,\n"
"  3 cannot connect or gpud hung up, 4 no such job, 5 job failed or\n"
"  cancelled (wait), 6 timed out (wait)\n";

void ctl_help_all(FILE *f)
{
	fprintf(f, "usage: gpuctl [OPTIONS] COMMAND [ARGS]\ncommands:\n");
	for (size_t i = 0; i < NPAGES; i++)
		fprintf(f, "  %-10s %s\n", pages[i].name, pages[i].summary);
	fprintf(f, "%s", global_text);
	fprintf(f, "gpuctl help COMMAND (or gpuctl COMMAND --help) shows its options;\n"
		"man gpuctl has it all.\n");
}

int ctl_help_cmd(FILE *f, const char *cmd)
{
	for (size_t i = 0; i < NPAGES; i++) {
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
	for (size_t i = 0; i < NPAGES; i++)
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
