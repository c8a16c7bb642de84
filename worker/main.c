/* main.c - gpuworker: options, device setup, signals.
 *
 * Owns the loop, the signal handles, the token and the device contexts;
 * the client (client.h) owns everything about gpud and leases. Exit codes:
 * 0 done or stopped cleanly, 1 runtime failure (device, token, ...), 2
 * usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "auth.h"
#include "client.h"
#include "gerr.h"
#include "gpud_config.h"
#include "log.h"
#include "place.h"
#include "workload.h"

#define HOST_MAX 253
#define THREADS_MAX 4096
#define CUDA_INDEX_MAX 255
#define CKPT_INTERVAL_MIN 0.1
#define CKPT_INTERVAL_MAX 86400.0
#define MAX_LEASES_MAX 1000000000ull

struct options {
	char host[HOST_MAX + 1];
	char port[6];
	const char *token_file;
	char device_name[32];
	enum wl_device_kind device_kind;
	int device_index;
	int threads;
	double checkpoint_interval_s;
	enum glog_level log_level;
	uint64_t max_leases;
	int exit_when_idle;
	int no_run_ahead;
};

/* What the signal callbacks need (lives in main's frame). */
struct main_ctx {
	const struct glog *log;
	struct client *cl;
	uv_signal_t sigterm, sigint;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: gpuworker --connect HOST:PORT --token-file FILE "
		"--device cpu|cpu:THREADS|cuda:N\n"
		"                 [--checkpoint-interval SECONDS] "
		"[--log-level error|warn|info|debug]\n"
		"                 [--max-leases N] [--exit-when-idle] "
		"[--no-run-ahead]\n"
		"\n"
		"Runs leases from gpud on one device.\n"
		"  --connect HOST:PORT          gpud's worker address "
		"([ADDR]:PORT for IPv6)\n"
		"  --token-file FILE            this worker's token "
		"(NAME:SECRET, mode 0600)\n"
		"  --device cpu                 all online CPUs\n"
		"  --device cpu:THREADS         THREADS CPU threads (1..%d)\n"
		"  --device cuda:N              CUDA device N\n"
		"  --checkpoint-interval SECONDS  time between checkpoints "
		"(%.1f..%.0f, default 60)\n"
		"  --log-level LEVEL            default info\n"
		"  --max-leases N               exit 0 after N finished leases\n"
		"  --exit-when-idle             exit 0 when gpud has no jobs\n"
		"  --no-run-ahead               do not start a chained job's "
		"next lease\n"
		"                               before gpud grants it\n"
		"  --help, --version\n",
		THREADS_MAX, CKPT_INTERVAL_MIN, CKPT_INTERVAL_MAX);
}

static int usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gpuworker: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'gpuworker --help'.\n");
	return 2;
}

/* Strict decimal in [min, max]; no sign, no trailing text. */
static int parse_u64(const char *s, uint64_t min, uint64_t max,
		     uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return GERR_INVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return GERR_INVAL;
	*ret = v;
	return 0;
}

/* "HOST:PORT" or "[IPV6]:PORT". */
static int parse_connect(const char *s, struct options *o)
{
	const char *host = s, *colon;
	size_t host_len;
	uint64_t port;

	if (*s == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			return GERR_INVAL;
		host = s + 1;
		host_len = (size_t)(close - host);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			return GERR_INVAL; /* IPv6 needs brackets */
		host_len = (size_t)(colon - s);
	}
	if (host_len == 0 || host_len > HOST_MAX)
		return GERR_INVAL;
	for (size_t i = 0; i < host_len; i++)
		if (host[i] <= ' ' || host[i] > '~' || host[i] == '/')
			return GERR_INVAL;
	if (parse_u64(colon + 1, 1, 65535, &port) < 0)
		return GERR_INVAL;
	memcpy(o->host, host, host_len);
	o->host[host_len] = '\0';
	snprintf(o->port, sizeof(o->port), "%" PRIu64, port);
	return 0;
}

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > THREADS_MAX ? THREADS_MAX : (int)n;
}

/* "cpu", "cpu:THREADS" or "cuda:N". */
static int parse_device(const char *s, struct options *o)
{
	uint64_t v;

	if (strcmp(s, "cpu") == 0) {
		o->device_kind = WL_DEVICE_CPU;
		o->device_index = 0;
		o->threads = online_cpus();
		snprintf(o->device_name, sizeof(o->device_name), "cpu");
		return 0;
	}
	if (strncmp(s, "cpu:", 4) == 0) {
		if (parse_u64(s + 4, 1, THREADS_MAX, &v) < 0)
			return GERR_INVAL;
		o->device_kind = WL_DEVICE_CPU;
		o->device_index = 0;
		o->threads = (int)v;
		snprintf(o->device_name, sizeof(o->device_name), "cpu");
		return 0;
	}
	if (strncmp(s, "cuda:", 5) == 0) {
		if (parse_u64(s + 5, 0, CUDA_INDEX_MAX, &v) < 0)
			return GERR_INVAL;
		o->device_kind = WL_DEVICE_CUDA;
		o->device_index = (int)v;
		/* The kernels do the work; one host thread drives them. */
		o->threads = 1;
		snprintf(o->device_name, sizeof(o->device_name), "cuda:%d",
			 o->device_index);
		return 0;
	}
	return GERR_INVAL;
}

static int parse_seconds(const char *s, double *ret)
{
	char *end;
	double v;

	if (!s || *s < '0' || *s > '9')
		return GERR_INVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < CKPT_INTERVAL_MIN ||
	    v > CKPT_INTERVAL_MAX)
		return GERR_INVAL;
	*ret = v;
	return 0;
}

enum { OPT_CONNECT = 256, OPT_TOKEN, OPT_DEVICE, OPT_CKPT, OPT_LOG,
       OPT_MAX_LEASES, OPT_IDLE, OPT_NO_AHEAD, OPT_HELP, OPT_VERSION };

/* Returns -1 to go on, or the exit code (0 for --help/--version). */
static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "connect", required_argument, NULL, OPT_CONNECT },
		{ "token-file", required_argument, NULL, OPT_TOKEN },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "checkpoint-interval", required_argument, NULL, OPT_CKPT },
		{ "log-level", required_argument, NULL, OPT_LOG },
		{ "max-leases", required_argument, NULL, OPT_MAX_LEASES },
		{ "exit-when-idle", no_argument, NULL, OPT_IDLE },
		{ "no-run-ahead", no_argument, NULL, OPT_NO_AHEAD },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int have_connect = 0, have_device = 0, opt;

	memset(o, 0, sizeof(*o));
	o->checkpoint_interval_s = 60;
	o->log_level = GLOG_INFO;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_CONNECT:
			if (parse_connect(optarg, o) < 0)
				return usage_error("--connect wants HOST:PORT "
						   "(port 1..65535), got '%s'",
						   optarg);
			have_connect = 1;
			break;
		case OPT_TOKEN:
			if (!*optarg || strlen(optarg) > PATH_MAX)
				return usage_error("--token-file wants a path");
			o->token_file = optarg;
			break;
		case OPT_DEVICE:
			if (parse_device(optarg, o) < 0)
				return usage_error("--device wants cpu, "
						   "cpu:THREADS (1..4096) or "
						   "cuda:N (0..255), got '%s'",
						   optarg);
			have_device = 1;
			break;
		case OPT_CKPT:
			if (parse_seconds(optarg, &o->checkpoint_interval_s) < 0)
				return usage_error("--checkpoint-interval wants "
						   "seconds in 0.1..86400, got "
						   "'%s'", optarg);
			break;
		case OPT_LOG:
			if (glog_level_parse(optarg, &o->log_level) < 0)
				return usage_error("--log-level wants error, "
						   "warn, info or debug, got "
						   "'%s'", optarg);
			break;
		case OPT_MAX_LEASES:
			if (parse_u64(optarg, 1, MAX_LEASES_MAX,
				      &o->max_leases) < 0)
				return usage_error("--max-leases wants a "
						   "number in 1..1000000000, "
						   "got '%s'", optarg);
			break;
		case OPT_IDLE:
			o->exit_when_idle = 1;
			break;
		case OPT_NO_AHEAD:
			o->no_run_ahead = 1;
			break;
		case OPT_HELP:
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("gpuworker %s\n", GPUD_VERSION);
			return 0;
		case ':':
			return usage_error("option %s needs a value",
					   argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!have_connect)
		return usage_error("--connect HOST:PORT is required");
	if (!o->token_file)
		return usage_error("--token-file FILE is required");
	if (!have_device)
		return usage_error("--device is required");
	return -1;
}

/* Close what open_workloads opened (n of v, then every context). */
static void close_workloads(struct client_workload *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].cuda_ctx && v[i].wl->cuda_close)
			v[i].wl->cuda_close(v[i].cuda_ctx);
	free(v);
	workload_close_all();
}

/* The workloads to advertise: all of them on CPU; on CUDA those with
 * cuda_open, each with a context opened now so a broken device fails
 * before connecting. Returns the count, or -1 after printing why. */
static int open_workloads(const struct options *o,
			  struct client_workload **ret)
{
	const struct workload *const *all = workload_all();
	struct client_workload *v;
	size_t n = 0, total = 0;
	char why[WL_ERRLEN + 64] = "";

	while (all[total])
		total++;
	if (workload_open_all(why, sizeof(why))) {
		fprintf(stderr, "gpuworker: cannot open workload %s\n", why);
		return -1;
	}
	v = calloc(total ? total : 1, sizeof(*v));
	if (!v) {
		fprintf(stderr, "gpuworker: out of memory\n");
		workload_close_all();
		return -1;
	}
	for (size_t i = 0; i < total; i++) {
		const struct workload *wl = all[i];
		char err[WL_ERRLEN] = "";
		int rc;

		if (o->device_kind == WL_DEVICE_CPU) {
			v[n++].wl = wl;
			continue;
		}
		if (!wl->cuda_open)
			continue;
		rc = wl->cuda_open(workload_ctx(wl), o->device_index, &v[n].cuda_ctx, err,
				   sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "gpuworker: cannot use %s for workload "
				"%s: %s\n", o->device_name, wl->name,
				err[0] ? err : gerr_str(rc));
			close_workloads(v, n);
			return -1;
		}
		v[n++].wl = wl;
	}
	if (n == 0) {
		fprintf(stderr, "gpuworker: no workload can run on %s%s\n",
			o->device_name,
			o->device_kind == WL_DEVICE_CUDA
				? " (built without CUDA?)" : "");
		close_workloads(v, n);
		return -1;
	}
	*ret = v;
	return (int)n;
}

static void on_signal(uv_signal_t *h, int signum)
{
	struct main_ctx *m = h->data;

	LOG_INFO(m->log, "%s: checkpointing and releasing before exit "
		 "(send again to exit at once)", strsignal(signum));
	/* Without watchers the signals get their default action back, so a
	 * second one ends the process even while this loop waits for a
	 * workload that does not look at its stop flag (a long setup). */
	uv_signal_stop(&m->sigterm);
	uv_signal_stop(&m->sigint);
	client_shutdown(m->cl);
}

static void on_client_exit(void *opaque, int exit_code)
{
	struct main_ctx *m = opaque;

	(void)exit_code;
	uv_close((uv_handle_t *)&m->sigterm, NULL);
	uv_close((uv_handle_t *)&m->sigint, NULL);
}

/* place.h's environment reader: the process environment. */
static const char *process_env(void *opaque, const char *name)
{
	(void)opaque;
	return getenv(name);
}

int main(int argc, char **argv)
{
	struct options o;
	struct glog lg = { .prog = "gpuworker" };
	struct auth_token token;
	struct client_workload *wls = NULL;
	struct client_config cfg;
	struct main_ctx m = { .log = &lg };
	struct place where;
	uv_loop_t loop;
	char err[256] = "", hostname[PLACE_HOST_MAX + 2] = "", where_text[PLACE_TEXT_MAX];
	int n, rc, code;

	code = parse_args(argc, argv, &o);
	if (code >= 0)
		return code;
	lg.level = o.log_level;

	if (auth_init() < 0) {
		fprintf(stderr, "gpuworker: cannot initialise libsodium\n");
		return 1;
	}
	rc = auth_token_read_file(o.token_file, &token, err, sizeof(err));
	if (rc < 0) {
		if (err[0])
			fprintf(stderr, "gpuworker: %s\n", err);
		else
			fprintf(stderr, "gpuworker: token file %s: %s\n",
				o.token_file, gerr_str(rc));
		return 1;
	}
	/* A dropped connection must show up as a write error, not kill us. */
	signal(SIGPIPE, SIG_IGN);

	n = open_workloads(&o, &wls);
	if (n < 0)
		return 1;
	/* Where we run, for `gpuctl workers` (place.h); a value that does not
	 * pass its rule is left out with a warning, never fatal. */
	if (gethostname(hostname, sizeof(hostname) - 1) < 0)
		hostname[0] = '\0';
	place_from_env(&where, hostname[0] ? hostname : NULL, process_env, NULL,
		       err, sizeof(err));
	if (err[0])
		LOG_WARN(&lg, "%s", err);
	place_format(&where, where_text, sizeof(where_text));

	rc = uv_loop_init(&loop);
	if (rc < 0) {
		fprintf(stderr, "gpuworker: uv_loop_init: %s\n", uv_strerror(rc));
		close_workloads(wls, (size_t)n);
		return 1;
	}
	cfg = (struct client_config){
		.log = &lg,
		.host = o.host,
		.port = o.port,
		.token = &token,
		.device_name = o.device_name,
		.device_kind = o.device_kind,
		.device_index = o.device_index,
		.threads = o.threads,
		.checkpoint_interval_s = o.checkpoint_interval_s,
		.max_leases = o.max_leases,
		.exit_when_idle = o.exit_when_idle,
		.run_ahead = !o.no_run_ahead,
		.workloads = wls,
		.n_workloads = (size_t)n,
		.place = &where,
		.on_exit = on_client_exit,
		.on_exit_opaque = &m,
	};
	uv_signal_init(&loop, &m.sigterm);
	uv_signal_init(&loop, &m.sigint);
	m.sigterm.data = m.sigint.data = &m;

	LOG_INFO(&lg, "gpuworker %s worker=%s device=%s threads=%d "
		 "workloads=%d gpud=%s:%s checkpoint_interval_s=%.3g %s",
		 GPUD_VERSION, token.name, o.device_name, o.threads, n, o.host,
		 o.port, o.checkpoint_interval_s, where_text);
	rc = client_start(&loop, &cfg, &m.cl);
	if (rc < 0) {
		fprintf(stderr, "gpuworker: cannot start: %s\n", gerr_str(rc));
		on_client_exit(&m, 1);
		uv_run(&loop, UV_RUN_DEFAULT);
		uv_loop_close(&loop);
		close_workloads(wls, (size_t)n);
		return 1;
	}
	uv_signal_start(&m.sigterm, on_signal, SIGTERM);
	uv_signal_start(&m.sigint, on_signal, SIGINT);

	uv_run(&loop, UV_RUN_DEFAULT);
	code = client_exit_code(m.cl);
	client_free(m.cl);
	rc = uv_loop_close(&loop);
	if (rc < 0)
		LOG_WARN(&lg, "loop did not close cleanly: %s", uv_strerror(rc));
	close_workloads(wls, (size_t)n);
	return code;
}
