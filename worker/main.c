/* main.c - gpuworker: options, device setup, signals.
 *
 * Owns the loop, the signal handles, the token and the device contexts;
 * the client (client.h) owns everything about gpud and leases. Exit codes:
 * 0 done or stopped cleanly, 1 runtime failure (device, token file, ...),
 * 2 usage error, WORKER_EXIT_REFUSED gpud refused the credential (unknown,
 * revoked, of the old kind or the wrong role: retrying cannot help, and
 * systemd/gpuworker@.service does not restart on it). Anything else gpud
 * or the network does (gpud down, refused connections) is retried.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include <sodium.h>

#include "auth.h"
#include "client.h"
#include "gerr.h"
#include "gpud_config.h"
#include "log.h"
#include "woptions.h"
#include "place.h"
#include "workload.h"

/* gpuworker(8) documents it. */
#define WORKER_EXIT_REFUSED 6

/* What the signal callbacks need (lives in main's frame). */
struct main_ctx {
	const struct glog *log;
	struct client *cl;
	uv_signal_t sigterm, sigint;
};

/* Options and file; -1 to go on, else the exit code. */
static int settings(int argc, char **argv, struct worker_settings *ret)
{
	struct worker_settings defaults, cli;
	struct conf_args args;
	char err[1200];
	int rc;

	woptions_defaults(&defaults);
	cli = defaults;
	if (conf_parse_args(&worker_options, argc, argv, &cli, &args, err,
			    sizeof(err))) {
		fprintf(stderr, "gpuworker: %s\nTry 'gpuworker --help'.\n", err);
		return 2;
	}
	if (args.help) {
		conf_usage(&worker_options, stdout);
		return 0;
	}
	if (args.version) {
		printf("gpuworker %s\n", GPUD_VERSION);
		return 0;
	}
	rc = conf_load(&worker_options, &args, &defaults, &cli, ret, sizeof(*ret),
		      err, sizeof(err));
	if (rc < 0 || woptions_finish(ret, err, sizeof(err))) {
		fprintf(stderr, "gpuworker: %s\n", err);
		return 2;
	}
	if (args.check) {
		conf_print_source(&worker_options, &args, rc, stdout);
		conf_print(&worker_options, ret, stdout);
		return 0;
	}
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
static int open_workloads(const struct worker_device *o,
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

		if (o->kind == WL_DEVICE_CPU) {
			v[n++].wl = wl;
			continue;
		}
		if (!wl->cuda_open)
			continue;
		rc = wl->cuda_open(workload_ctx(wl), o->index, &v[n].cuda_ctx, err,
				   sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "gpuworker: cannot use %s for workload "
				"%s: %s\n", o->name, wl->name,
				err[0] ? err : gerr_str(rc));
			close_workloads(v, n);
			return -1;
		}
		v[n++].wl = wl;
	}
	if (n == 0) {
		fprintf(stderr, "gpuworker: no workload can run on %s%s\n",
			o->name,
			o->kind == WL_DEVICE_CUDA
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
	struct worker_settings o;
	struct glog lg = { .prog = "gpuworker" };
	struct glog_limit limit; /* repeated lines, summed up */
	struct auth_token token;
	struct chan_identity identity;
	struct client_workload *wls = NULL;
	struct client_config cfg;
	struct main_ctx m = { .log = &lg };
	struct place where;
	uv_loop_t loop;
	char err[600] = "", hostname[PLACE_HOST_MAX + 2] = "", where_text[PLACE_TEXT_MAX];
	int n, rc, code;

	code = settings(argc, argv, &o);
	if (code >= 0)
		return code;
	lg.level = o.log_level;
	lg.journal = glog_journal_detect();
	if (glog_limit_init(&limit) == 0)
		lg.limit = &limit;

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
	if (!token.has_gpud_key) {
		fprintf(stderr, "gpuworker: %s has no 'gpud-key = ' line: the "
			"worker cannot tell gpud from an impostor; use the "
			"credential that 'gpuctl token add' prints (or the "
			"data directory's local-worker.token)\n", o.token_file);
		return 1;
	}
	/* The key this worker proves in TLS, in a self-signed certificate. */
	chan_identity_from_seed(&identity, token.seed);
	if (chan_identity_cert(&identity, token.name, err, sizeof(err))) {
		fprintf(stderr, "gpuworker: %s\n", err);
		return 1;
	}
	/* A dropped connection must show up as a write error, not kill us. */
	signal(SIGPIPE, SIG_IGN);

	n = open_workloads(&o.device, &wls);
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
	/* Who this process is among its token's workers: given, or one name
	 * that stays for the life of the process (a reconnect after a gpud
	 * restart is the same worker, and keeps its leases). */
	if (!o.instance[0])
		place_default_instance(o.instance, &where, o.device.name,
				       (long)getpid(), process_env, NULL);

	rc = uv_loop_init(&loop);
	if (rc < 0) {
		fprintf(stderr, "gpuworker: uv_loop_init: %s\n", uv_strerror(rc));
		close_workloads(wls, (size_t)n);
		return 1;
	}
	cfg = (struct client_config){
		.log = &lg,
		.host = o.connect.host,
		.port = o.connect.port,
		.token = &token,
		.token_file = o.token_file,
		.refused_exit = WORKER_EXIT_REFUSED,
		.identity = &identity,
		.device_name = o.device.name,
		.device_kind = o.device.kind,
		.device_index = o.device.index,
		.threads = o.device.threads,
		.checkpoint_interval_s = o.checkpoint_interval,
		.max_leases = o.max_leases,
		.exit_when_idle = o.exit_when_idle,
		.run_ahead = !o.no_run_ahead,
		.workloads = wls,
		.n_workloads = (size_t)n,
		.place = &where,
		.instance = o.instance,
		.on_exit = on_client_exit,
		.on_exit_opaque = &m,
	};
	uv_signal_init(&loop, &m.sigterm);
	uv_signal_init(&loop, &m.sigint);
	m.sigterm.data = m.sigint.data = &m;

	LOG_INFO(&lg, "gpuworker %s worker=%s@%s device=%s threads=%d "
		 "workloads=%d gpud=%s:%s checkpoint_interval_s=%.3g%s %s",
		 GPUD_VERSION, token.name, o.instance, o.device.name, o.device.threads, n,
		 o.connect.host, o.connect.port, o.checkpoint_interval,
		 o.checkpoint_interval > 0 ? "" : " (gpud's)", where_text);
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
	chan_identity_free(&identity);
	sodium_memzero(&token, sizeof(token));
	glog_flush(&lg, 1);
	lg.limit = NULL;
	glog_limit_free(&limit);
	return code;
}
