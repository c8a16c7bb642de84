/* gpud - the coordinator daemon: its settings (options.c: flags over
 * gpud.conf), SIGHUP's reload, signals, start and stop. Everything below
 * main() returns errors as values. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "chan.h"
#include "datadir.h"
#include "gerr.h"
#include "gpud.h"
#include "gpud_config.h"
#include "options.h"
#include "results.h"
#include "server.h"
#include "workload.h"

/* Every connection, blob file and database handle takes a descriptor:
 * take all the hard limit allows (the soft one is often 1024), and say
 * when that is less than the connection cap needs. */
static void raise_nofile(struct gpud *d)
{
	struct rlimit rl;
	rlim_t want;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	want = rl.rlim_max == RLIM_INFINITY ? (rlim_t)1 << 20 : rl.rlim_max;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rlim_t old = rl.rlim_cur;
		rl.rlim_cur = want;
		if (setrlimit(RLIMIT_NOFILE, &rl)) {
			rl.rlim_cur = old;
			LOG_WARN(&d->log, "cannot raise the descriptor limit from %llu "
				 "to %llu: %s", (unsigned long long)old,
				 (unsigned long long)want, strerror(errno));
		}
	}
	LOG_INFO(&d->log, "descriptor limit %llu", (unsigned long long)rl.rlim_cur);
	if (rl.rlim_cur != RLIM_INFINITY &&
	    (unsigned long long)d->cfg.max_conns + 64 > (unsigned long long)rl.rlim_cur)
		LOG_WARN(&d->log, "--max-connections %d needs about %d descriptors, "
			 "the limit is %llu: connections past it will be shed; raise "
			 "LimitNOFILE= or ulimit -n, or lower --max-connections",
			 d->cfg.max_conns, d->cfg.max_conns + 64,
			 (unsigned long long)rl.rlim_cur);
}

/* Once: a second signal during a drain stops gpud, and the drain's end
 * then calls this again. */
static void stop_now(struct gpud *d)
{
	if (d->stopping)
		return;
	server_stop(d);
	uv_close((uv_handle_t *)&d->sigterm, NULL);
	uv_close((uv_handle_t *)&d->sigint, NULL);
	uv_close((uv_handle_t *)&d->sighup, NULL);
}

static void on_signal(uv_signal_t *s, int signum)
{
	struct gpud *d = s->data;

	if (d->stopping)
		return;
	if (d->draining || d->cfg.drain_s <= 0) {
		LOG_INFO(&d->log, "signal %d: shutting down", signum);
		stop_now(d);
		return;
	}
	/* First signal: let workers checkpoint and release their leases
	 * (their next heartbeat is answered "release"), then stop. */
	LOG_INFO(&d->log, "signal %d: draining for up to %.0f s (again to stop now)",
		 signum, d->cfg.drain_s);
	server_drain(d, stop_now);
}

/* What SIGHUP needs (lives in main's frame). */
struct reload_ctx {
	struct gpud *d;
	const struct conf_args *args;
	const struct gpud_settings *cli;
	struct gpud_settings *live;
};

static void on_sighup(uv_signal_t *s, int signum)
{
	struct reload_ctx *r = s->data;
	struct gpud *d = r->d;
	char err[1200];
	int rc;

	(void)signum;
	LOG_INFO(&d->log, "SIGHUP: reading %s again", r->args->config
		 ? r->args->config : gpud_options.default_path);
	rc = gpud_options_reload(r->args, r->cli, r->live, &d->log, err, sizeof(err));
	if (rc < 0) {
		LOG_ERROR(&d->log, "reload: %s; the running settings stay", err);
		return;
	}
	/* Each request copies the policy from here (loop thread). */
	gpud_options_to_config(r->live, &d->cfg);
	LOG_INFO(&d->log, "reload: %d setting%s applied", rc, rc == 1 ? "" : "s");
	if (d->wake_parked)
		d->wake_parked(d);
}

/* Options and file; -1 to go on, else the exit code. */
static int settings(int argc, char **argv, struct conf_args *args,
		    struct gpud_settings *cli, struct gpud_settings *ret)
{
	struct gpud_settings defaults;
	char err[1200];
	int rc;

	gpud_options_defaults(&defaults);
	*cli = defaults;
	if (conf_parse_args(&gpud_options, argc, argv, cli, args, err, sizeof(err))) {
		fprintf(stderr, "gpud: %s\nTry 'gpud --help'.\n", err);
		return 2;
	}
	if (args->help) {
		conf_usage(&gpud_options, stdout);
		return 0;
	}
	if (args->version) {
		printf("gpud %s\n", GPUD_VERSION);
		return 0;
	}
	rc = conf_load(&gpud_options, args, &defaults, cli, ret, sizeof(*ret), err,
		      sizeof(err));
	if (rc < 0 || gpud_options_finish(ret, err, sizeof(err))) {
		fprintf(stderr, "gpud: %s\n", err);
		return 2;
	}
	if (args->check) {
		conf_print_source(&gpud_options, args, rc, stdout);
		conf_print(&gpud_options, ret, stdout);
		return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct gpud_settings cli, set; /* the process's life long */
	struct conf_args args;
	struct reload_ctx reload = { .args = &args, .cli = &cli, .live = &set };
	struct gpud d;
	struct glog_limit limit; /* repeated lines, summed up */
	char err[1024];
	int rc, lock_fd = -1;

	rc = settings(argc, argv, &args, &cli, &set);
	if (rc >= 0)
		return rc;
	memset(&d, 0, sizeof(d));
	d.log.prog = "gpud";
	d.log.level = set.log_level;
	/* From here on, errors go through the log: under journald they
	 * need their priority. */
	d.log.journal = glog_journal_detect();
	if (glog_limit_init(&limit) == 0)
		d.log.limit = &limit;
	gpud_options_to_config(&set, &d.cfg);
	reload.d = &d;
	if (mkdir(d.cfg.data_dir, 0700) && errno != EEXIST) {
		LOG_ERROR(&d.log, "cannot create %s: %s", d.cfg.data_dir, strerror(errno));
		return 1;
	}
	if (access(d.cfg.data_dir, R_OK | W_OK | X_OK)) {
		LOG_ERROR(&d.log, "data directory %s is not writable: %s",
			  d.cfg.data_dir, strerror(errno));
		return 1;
	}
	/* Before anything else touches the directory: a directory others can
	 * write is refused, and a second gpud leaves the first alone. */
	if (datadir_check_mode(d.cfg.data_dir, err, sizeof(err)) ||
	    datadir_lock(d.cfg.data_dir, &lock_fd, err, sizeof(err))) {
		LOG_ERROR(&d.log, "%s", err);
		return 1;
	}
	if (results_prepare(d.cfg.results_dir, err, sizeof(err))) {
		fprintf(stderr, "gpud: %s\n", err);
		close(lock_fd);
		return 1;
	}
	if (auth_init()) {
		LOG_ERROR(&d.log, "libsodium failed to initialise");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	raise_nofile(&d);
	char why[WL_ERRLEN + 64] = "";
	if (workload_open_all(why, sizeof(why))) {
		LOG_ERROR(&d.log, "cannot open workload %s", why);
		return 1;
	}

	d.loop = uv_default_loop();
	rc = server_start(&d);
	if (rc) {
		server_stop(&d);
		uv_run(d.loop, UV_RUN_DEFAULT);
		chan_identity_free(&d.identity);
		workload_close_all();
		LOG_ERROR(&d.log, "start failed: %s", gerr_str(rc));
		close(lock_fd);
		return 1;
	}
	uv_signal_init(d.loop, &d.sigterm);
	uv_signal_init(d.loop, &d.sigint);
	uv_signal_init(d.loop, &d.sighup);
	d.sigterm.data = d.sigint.data = &d;
	d.sighup.data = &reload;
	uv_signal_start(&d.sigterm, on_signal, SIGTERM);
	uv_signal_start(&d.sigint, on_signal, SIGINT);
	uv_signal_start(&d.sighup, on_sighup, SIGHUP);
	LOG_INFO(&d.log, "gpud %s ready, data %s", GPUD_VERSION, d.cfg.data_dir);
	uv_run(d.loop, UV_RUN_DEFAULT);
	uv_loop_close(d.loop);
	chan_identity_free(&d.identity);
	workload_close_all();
	LOG_INFO(&d.log, "stopped");
	glog_flush(&d.log, 1);
	d.log.limit = NULL;
	glog_limit_free(&limit);
	close(lock_fd); /* after everything else: the directory is free now */
	return d.exit_code;
}
