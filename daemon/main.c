/* gpud - the coordinator daemon. Options are parsed and validated here;
 * everything below main() returns errors as values. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "datadir.h"
#include "gerr.h"
#include "gpud.h"
#include "gpud_config.h"
#include "server.h"
#include "workload.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: gpud --data DIR [options]\n"
"  --data DIR              data directory (database, blobs, tokens); created 0700\n"
"  --init                  start a fresh database even though DIR holds the blobs\n"
"                          of an earlier one (they are moved aside, not deleted)\n"
"  --listen HOST:PORT      worker listener (default 127.0.0.1:7700; port 0 picks one,\n"
"                          written to DIR/gpud.addr)\n"
"  --socket PATH           control socket for gpuctl (default DIR/gpud.sock, mode 0600)\n"
"  --heartbeat SECONDS     worker heartbeat interval (default 5)\n"
"  --lease-timeout SECONDS lease deadline after the last heartbeat (default 3x heartbeat)\n"
"  --lease-seconds SECONDS wanted duration of one lease (default 300)\n"
"  --lease-units N         fixed lease size in the workload's units (default: adapt\n"
"                          to each worker's measured rate)\n"
"  --checkpoint-interval SECONDS  cadence suggested to workers (default 60)\n"
"  --drain-seconds S       on SIGTERM, wait this long for workers to checkpoint and\n"
"                          release their leases (default 15; 0 stops at once)\n"
"  --max-failures N        failures of a lease (failed verifications and failed runs)\n"
"                          before it fails, and its job with it (default 3)\n"
"  --quarantine-after N    a worker is quarantined after N failed verifications, N\n"
"                          messages about leases it was not granted, or N leases\n"
"                          revoked for no progress (default 3)\n"
"  --max-leases-per-worker N  leases one worker token may hold at once (default 16;\n"
"                          0 no cap); a token shared by many devices needs more\n"
"  --progress-timeout SECONDS  revoke a lease whose reported progress has not grown\n"
"                          for this long (default 600; 0 never)\n"
"  --trust-after N         replicate a worker's results on another worker until N of\n"
"                          them in a row agree, and again after any failure (default\n"
"                          0: off, since a lone worker could never finish a job)\n"
"  --login-timeout S       close a worker connection not logged in after S seconds\n"
"                          (default 10)\n"
"  --idle-timeout S        close a logged-in worker connection silent for S seconds\n"
"                          while it holds nothing (default 12x heartbeat, at least 60)\n"
"  --max-connections N     worker connections in all (default 4096); more are closed\n"
"  --max-connections-per-address N  worker connections from one address (default 256)\n"
"  --log-level LEVEL       error|warn|info|debug (default info)\n"
"  --version, --help\n");
}

static int parse_double(const char *s, double lo, double hi, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		return GERR_INVAL;
	*ret = v;
	return 0;
}

static int parse_host_port(const char *s, char *host, size_t hostlen, int *port)
{
	const char *colon = strrchr(s, ':');
	char *end;
	long p;

	if (!colon || colon == s || (size_t)(colon - s) >= hostlen)
		return GERR_INVAL;
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p < 0 || p > 65535)
		return GERR_INVAL;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	*port = (int)p;
	return 0;
}

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

static void stop_now(struct gpud *d)
{
	server_stop(d);
	uv_close((uv_handle_t *)&d->sigterm, NULL);
	uv_close((uv_handle_t *)&d->sigint, NULL);
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

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"data", required_argument, NULL, 'd'},
		{"listen", required_argument, NULL, 'l'},
		{"socket", required_argument, NULL, 's'},
		{"heartbeat", required_argument, NULL, 'H'},
		{"lease-timeout", required_argument, NULL, 'T'},
		{"lease-seconds", required_argument, NULL, 'L'},
		{"checkpoint-interval", required_argument, NULL, 'c'},
		{"lease-units", required_argument, NULL, 'u'},
		{"drain-seconds", required_argument, NULL, 'D'},
		{"max-failures", required_argument, NULL, 'm'},
		{"quarantine-after", required_argument, NULL, 'q'},
		{"max-leases-per-worker", required_argument, NULL, 'M'},
		{"progress-timeout", required_argument, NULL, 'P'},
		{"trust-after", required_argument, NULL, 't'},
		{"log-level", required_argument, NULL, 'v'},
		{"init", no_argument, NULL, 'I'},
		{"login-timeout", required_argument, NULL, 'g'},
		{"idle-timeout", required_argument, NULL, 'i'},
		{"max-connections", required_argument, NULL, 'C'},
		{"max-connections-per-address", required_argument, NULL, 'A'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct gpud d;
	char host[256] = "127.0.0.1", sockpath[4096] = "";
	double lease_timeout = 0, v;
	char err[1024];
	int opt, rc, lock_fd = -1;

	memset(&d, 0, sizeof(d));
	d.log.prog = "gpud";
	d.log.level = GLOG_INFO;
	d.cfg.listen_port = 7700;
	d.cfg.heartbeat_s = 5;
	d.cfg.lease_target_s = 300;
	d.cfg.checkpoint_s = 60;
	d.cfg.max_failures = 3;
	d.cfg.quarantine_after = 3;
	/* One gpuworker holds one lease; a token shared by the devices of
	 * one machine, each restarted while its old lease still waits for
	 * its deadline, holds two per device. */
	d.cfg.max_leases_per_worker = 16;
	d.cfg.progress_timeout_s = 600;
	d.cfg.drain_s = 15;
	d.cfg.login_timeout_s = 10;
	d.cfg.max_conns = 4096;
	d.cfg.max_conns_per_addr = 256;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			if (strlen(optarg) > 3000) {
				fprintf(stderr, "gpud: --data path too long\n");
				return 2;
			}
			d.cfg.data_dir = optarg;
			break;
		case 'l':
			if (parse_host_port(optarg, host, sizeof(host), &d.cfg.listen_port)) {
				fprintf(stderr, "gpud: --listen wants HOST:PORT, got '%s'\n", optarg);
				return 2;
			}
			break;
		case 's':
			if (strlen(optarg) >= 100) { /* sun_path limit */
				fprintf(stderr, "gpud: --socket path must be under 100 characters\n");
				return 2;
			}
			snprintf(sockpath, sizeof(sockpath), "%s", optarg);
			break;
		case 'H':
			if (parse_double(optarg, 0.05, 3600, &d.cfg.heartbeat_s)) {
				fprintf(stderr, "gpud: --heartbeat wants 0.05..3600 seconds\n");
				return 2;
			}
			break;
		case 'T':
			if (parse_double(optarg, 0.1, 86400, &lease_timeout)) {
				fprintf(stderr, "gpud: --lease-timeout wants 0.1..86400 seconds\n");
				return 2;
			}
			break;
		case 'L':
			if (parse_double(optarg, 0.1, 86400, &d.cfg.lease_target_s)) {
				fprintf(stderr, "gpud: --lease-seconds wants 0.1..86400 seconds\n");
				return 2;
			}
			break;
		case 'u': {
			char *end;
			errno = 0;
			unsigned long long u = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || u == 0 || optarg[0] == '-') {
				fprintf(stderr, "gpud: --lease-units wants a positive integer\n");
				return 2;
			}
			d.cfg.lease_units = u;
			break;
		}
		case 'D':
			if (parse_double(optarg, 0, 3600, &d.cfg.drain_s)) {
				fprintf(stderr, "gpud: --drain-seconds wants 0..3600\n");
				return 2;
			}
			break;
		case 'c':
			if (parse_double(optarg, 0.1, 86400, &d.cfg.checkpoint_s)) {
				fprintf(stderr, "gpud: --checkpoint-interval wants 0.1..86400 seconds\n");
				return 2;
			}
			break;
		case 'm':
		case 'q':
			if (parse_double(optarg, 1, 1000, &v) || v != (double)(int)v) {
				fprintf(stderr, "gpud: --%s wants an integer 1..1000\n",
					opt == 'm' ? "max-failures" : "quarantine-after");
				return 2;
			}
			if (opt == 'm')
				d.cfg.max_failures = (uint32_t)v;
			else
				d.cfg.quarantine_after = (uint32_t)v;
			break;
		case 'M':
			if (parse_double(optarg, 0, 100000, &v) || v != (double)(int)v) {
				fprintf(stderr, "gpud: --max-leases-per-worker wants an "
					"integer 0..100000 (0: no cap)\n");
				return 2;
			}
			d.cfg.max_leases_per_worker = (uint32_t)v;
			break;
		case 'P':
			if (parse_double(optarg, 0, 30 * 86400, &d.cfg.progress_timeout_s)) {
				fprintf(stderr, "gpud: --progress-timeout wants 0..2592000 "
					"seconds (0: never)\n");
				return 2;
			}
			break;
		case 't':
			if (parse_double(optarg, 0, 1000000, &v) || v != (double)(int)v) {
				fprintf(stderr, "gpud: --trust-after wants an integer 0..1000000\n");
				return 2;
			}
			d.cfg.trust_after = (uint32_t)v;
			break;
		case 'g':
			if (parse_double(optarg, 0.1, 3600, &d.cfg.login_timeout_s)) {
				fprintf(stderr, "gpud: --login-timeout wants 0.1..3600 seconds\n");
				return 2;
			}
			break;
		case 'i':
			if (parse_double(optarg, 0.1, 86400, &d.cfg.idle_timeout_s)) {
				fprintf(stderr, "gpud: --idle-timeout wants 0.1..86400 seconds\n");
				return 2;
			}
			break;
		case 'C':
		case 'A':
			if (parse_double(optarg, 1, 1000000, &v) || v != (double)(int)v) {
				fprintf(stderr, "gpud: --%s wants an integer 1..1000000\n",
					opt == 'C' ? "max-connections"
						   : "max-connections-per-address");
				return 2;
			}
			if (opt == 'C')
				d.cfg.max_conns = (int)v;
			else
				d.cfg.max_conns_per_addr = (int)v;
			break;
		case 'v':
			if (glog_level_parse(optarg, &d.log.level)) {
				fprintf(stderr, "gpud: --log-level wants error|warn|info|debug\n");
				return 2;
			}
			break;
		case 'I':
			d.cfg.init = 1;
			break;
		case 'V':
			printf("gpud %s\n", GPUD_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !d.cfg.data_dir) {
		if (!d.cfg.data_dir)
			fprintf(stderr, "gpud: --data DIR is required\n");
		else
			fprintf(stderr, "gpud: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	d.cfg.listen_host = host;
	d.cfg.lease_timeout_s = lease_timeout > 0 ? lease_timeout : 3 * d.cfg.heartbeat_s;
	if (d.cfg.lease_timeout_s <= d.cfg.heartbeat_s) {
		fprintf(stderr, "gpud: --lease-timeout must be longer than --heartbeat\n");
		return 2;
	}
	if (d.cfg.progress_timeout_s > 0 && d.cfg.progress_timeout_s <= d.cfg.heartbeat_s) {
		fprintf(stderr, "gpud: --progress-timeout must be longer than --heartbeat\n");
		return 2;
	}
	if (d.cfg.idle_timeout_s == 0)
		d.cfg.idle_timeout_s = 12 * d.cfg.heartbeat_s > 60 ? 12 * d.cfg.heartbeat_s : 60;
	/* A worker holding a lease says something every heartbeat. */
	if (d.cfg.idle_timeout_s < 2 * d.cfg.heartbeat_s) {
		fprintf(stderr, "gpud: --idle-timeout must be at least twice --heartbeat\n");
		return 2;
	}
	if (mkdir(d.cfg.data_dir, 0700) && errno != EEXIST) {
		fprintf(stderr, "gpud: cannot create %s: %s\n", d.cfg.data_dir, strerror(errno));
		return 1;
	}
	if (access(d.cfg.data_dir, R_OK | W_OK | X_OK)) {
		fprintf(stderr, "gpud: data directory %s is not writable: %s\n",
			d.cfg.data_dir, strerror(errno));
		return 1;
	}
	/* Before anything else touches the directory: a directory others can
	 * write is refused, and a second gpud leaves the first alone. */
	if (datadir_check_mode(d.cfg.data_dir, err, sizeof(err)) ||
	    datadir_lock(d.cfg.data_dir, &lock_fd, err, sizeof(err))) {
		fprintf(stderr, "gpud: %s\n", err);
		return 1;
	}
	if (!sockpath[0]) {
		if (strlen(d.cfg.data_dir) + sizeof("/gpud.sock") > 100) {
			fprintf(stderr, "gpud: %s/gpud.sock is too long for a socket path; use --socket\n",
				d.cfg.data_dir);
			return 2;
		}
		snprintf(sockpath, sizeof(sockpath), "%s/gpud.sock", d.cfg.data_dir);
	}
	d.cfg.socket_path = sockpath;
	if (auth_init()) {
		fprintf(stderr, "gpud: libsodium failed to initialise\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	raise_nofile(&d);
	char why[WL_ERRLEN + 64] = "";
	if (workload_open_all(why, sizeof(why))) {
		fprintf(stderr, "gpud: cannot open workload %s\n", why);
		return 1;
	}

	d.loop = uv_default_loop();
	rc = server_start(&d);
	if (rc) {
		server_stop(&d);
		uv_run(d.loop, UV_RUN_DEFAULT);
		workload_close_all();
		fprintf(stderr, "gpud: start failed: %s\n", gerr_str(rc));
		close(lock_fd);
		return 1;
	}
	uv_signal_init(d.loop, &d.sigterm);
	uv_signal_init(d.loop, &d.sigint);
	d.sigterm.data = d.sigint.data = &d;
	uv_signal_start(&d.sigterm, on_signal, SIGTERM);
	uv_signal_start(&d.sigint, on_signal, SIGINT);
	LOG_INFO(&d.log, "gpud %s ready, data %s", GPUD_VERSION, d.cfg.data_dir);
	uv_run(d.loop, UV_RUN_DEFAULT);
	uv_loop_close(d.loop);
	workload_close_all();
	LOG_INFO(&d.log, "stopped");
	close(lock_fd); /* after everything else: the directory is free now */
	return d.exit_code;
}
