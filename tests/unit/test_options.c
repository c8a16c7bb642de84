/* test_options.c - daemon/options.c: gpud's settings table and its
 * defaults, the listen and http addresses, each key's bounds, the derived
 * defaults and the checks between keys, the settings as the daemon's
 * config, and a reload (SIGHUP): what it applies, what needs a restart,
 * what it refuses while leaving the running settings alone. stderr is
 * redirected to a temporary file to read the reload's log lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <unistd.h>

#include "conf.h"
#include "conf_fx.h"
#include "gerr.h"
#include "log.h"
#include "log_fx.h"
#include "options.h"
#include "unit_main.h"

static const struct conf_key *key(const char *name)
{
	return fx_key(&gpud_options, name);
}

/* Key name's value in s, as a file would hold it. */
static const char *show(const struct gpud_settings *s, const char *name)
{
	return fx_show(&gpud_options, s, name);
}

/* Defaults with a data directory, finished. */
static void finished(struct gpud_settings *s)
{
	char err[256];

	gpud_options_defaults(s);
	snprintf(s->data, sizeof(s->data), "/srv/gpud");
	assert_int_equal(gpud_options_finish(s, err, sizeof(err)), 0);
}

static void test_defaults(void **state)
{
	struct gpud_settings s;

	(void)state;
	gpud_options_defaults(&s);
	assert_string_equal(s.data, "");
	assert_string_equal(s.results, "");
	assert_string_equal(s.socket, "");
	assert_string_equal(show(&s, "listen"), "127.0.0.1:7700");
	assert_string_equal(show(&s, "http"), "127.0.0.1:7780");
	assert_true(s.heartbeat == 5 && s.lease_seconds == 300);
	assert_true(s.lease_timeout == 0 && s.idle_timeout == 0); /* derived */
	assert_true(s.checkpoint_interval == 60 && s.drain_seconds == 15);
	assert_true(s.progress_timeout == 600 && s.login_timeout == 10);
	assert_true(s.lease_units == 0 && s.trust_after == 0);
	assert_true(s.max_failures == 3 && s.quarantine_after == 3);
	assert_true(s.max_leases_per_worker == 16);
	assert_true(s.max_leases_per_credential == 0);
	assert_true(s.max_connections == 4096);
	assert_true(s.max_connections_per_address == 256);
	assert_int_equal(s.log_level, GLOG_INFO);
	assert_int_equal(s.init, 0);
	/* Each default lies inside its key's own bounds: what conf_print
	 * writes from the defaults reads back the same. */
	for (size_t i = 0; i < gpud_options.n; i++) {
		const struct conf_key *k = &gpud_options.keys[i];
		struct gpud_settings t = s;
		char v[CONF_SHOW_MAX], err[256];

		if (k->type == CONF_STR || k->type == CONF_BOOL)
			continue;
		if (strcmp(k->name, "lease-timeout") == 0 ||
		    strcmp(k->name, "idle-timeout") == 0)
			continue; /* 0: derived by gpud_options_finish */
		conf_show(k, &s, v, sizeof(v));
		if (conf_set(k, &t, v, err, sizeof(err)))
			fail_msg("default %s = %s refused: %s", k->name, v, err);
		assert_true(conf_same(k, &s, &t));
	}
}

static void test_table(void **state)
{
	static const char *const runtime[] = {
		"lease-timeout", "lease-seconds", "lease-min-seconds", "lease-units",
		"checkpoint-interval", "drain-seconds", "max-failures",
		"quarantine-after", "max-leases-per-worker",
		"max-leases-per-credential", "progress-timeout",
		"trust-after", "login-timeout", "idle-timeout", "max-connections",
		"max-connections-per-address", "max-connections-per-credential",
		"max-prelogin", "max-prelogin-per-address", "frame-memory",
		"log-level", "end-hook", "end-hook-timeout", "end-hook-max",
	};
	static const char *const restart[] = { "data", "results", "listen",
					       "http", "http-open", "socket", "heartbeat" };
	size_t nrt = sizeof(runtime) / sizeof(runtime[0]);
	size_t nrs = sizeof(restart) / sizeof(restart[0]);

	(void)state;
	assert_string_equal(gpud_options.prog, "gpud");
	assert_string_equal(gpud_options.default_path, "/etc/gpud/gpud.conf");
	assert_true(gpud_options.n <= CONF_KEYS_MAX);
	/* Every key is one of these, and init is an action only. */
	assert_int_equal(gpud_options.n, nrt + nrs + 1);
	for (size_t i = 0; i < nrt; i++)
		if (!(key(runtime[i])->flags & CONF_RUNTIME))
			fail_msg("%s should change at run time", runtime[i]);
	for (size_t i = 0; i < nrs; i++)
		if (key(restart[i])->flags & (CONF_RUNTIME | CONF_CLI_ONLY))
			fail_msg("%s should need a restart", restart[i]);
	assert_true(key("init")->flags & CONF_CLI_ONLY);
	assert_int_equal(key("init")->type, CONF_BOOL);
	/* Names are unique and every key has its help. */
	for (size_t i = 0; i < gpud_options.n; i++) {
		assert_int_equal(conf_find(&gpud_options, gpud_options.keys[i].name),
				 (int)i);
		assert_non_null(gpud_options.keys[i].help);
	}
}

static void test_listen(void **state)
{
	struct gpud_settings s;
	char err[512], longhost[300];
	static const struct {
		const char *in, *host, *out;
		int port;
	} good[] = {
		{ "0.0.0.0:0", "0.0.0.0", "0.0.0.0:0", 0 },
		{ "127.0.0.1:65535", "127.0.0.1", "127.0.0.1:65535", 65535 },
		{ "[::1]:7700", "::1", "[::1]:7700", 7700 },
		{ "[fe80::1%eth0]:1", "fe80::1%eth0", "[fe80::1%eth0]:1", 1 },
		{ "10.0.0.7:007", "10.0.0.7", "10.0.0.7:7", 7 },
	};
	/* Names: gpud binds addresses, so --check-config refuses what gpud
	 * could not bind (localhost among them). */
	static const char *const names[] = {
		"localhost:7700", "gpud.example.org:7700", "[localhost]:1",
		"127.1:7700", "[fe80::1%]:1", "1.2.3.4.5:1", "[::g]:1",
	};
	static const char named[] = "listen wants a numeric address, not a "
				    "name (127.0.0.1:PORT for localhost, "
				    "[::1]:PORT, 0.0.0.0:PORT for every address), "
				    "got '";
	static const char refusal[] = "listen wants HOST:PORT ([ADDR]:PORT for "
				      "IPv6, port 0..65535), got '";

	(void)state;
	gpud_options_defaults(&s);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		fx_shows(&gpud_options, &s, "listen", good[i].in, good[i].out);
		assert_string_equal(s.listen.host, good[i].host);
		assert_int_equal(s.listen.port, good[i].port);
	}
	gpud_options_defaults(&s);
	fx_refused_each(&gpud_options, &s, sizeof(s), "listen",
			fx_bad_addresses, FX_BAD_ADDRESSES, refusal);
	fx_refused_each(&gpud_options, &s, sizeof(s), "listen", names,
			sizeof(names) / sizeof(names[0]), named);
	assert_int_equal(conf_set(key("http"), &s, "localhost:7780", err,
				  sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, "http wants a numeric address"));
	/* Refused: the field is as it was. */
	assert_string_equal(show(&s, "listen"), "127.0.0.1:7700");
	assert_false(s.listen.asked);
	/* The host's bound: 255 bytes fit, 256 do not (an IPv6 address
	 * with a long scope). */
	memcpy(longhost, "[fe80::1%", 9);
	memset(longhost + 9, 'e', 247);
	snprintf(longhost + 256, sizeof(longhost) - 256, "]:1");
	assert_int_equal(conf_set(key("listen"), &s, longhost, err, sizeof(err)), 0);
	assert_int_equal(strlen(s.listen.host), 255);
	assert_true(s.listen.asked);
	memcpy(longhost, "[fe80::1%", 9);
	memset(longhost + 9, 'e', 248);
	snprintf(longhost + 257, sizeof(longhost) - 257, "]:2");
	assert_int_equal(conf_set(key("listen"), &s, longhost, err, sizeof(err)),
			 GERR_INVAL);
	assert_int_equal(s.listen.port, 1);
}

static void test_http(void **state)
{
	struct gpud_settings s;
	char err[512];

	(void)state;
	gpud_options_defaults(&s);
	/* The default is not asked for: gpud starts without it when its
	 * port is taken (server.c), but not without one given. */
	assert_false(s.http.asked);
	assert_int_equal(conf_set(key("http"), &s, "127.0.0.1:7780", err, sizeof(err)), 0);
	assert_true(s.http.asked);
	gpud_options_defaults(&s);
	assert_int_equal(conf_set(key("http"), &s, "off", err, sizeof(err)), 0);
	assert_int_equal(s.http.port, -1);
	assert_string_equal(s.http.host, "");
	assert_string_equal(show(&s, "http"), "off");
	assert_int_equal(conf_set(key("http"), &s, "[::]:0", err, sizeof(err)), 0);
	assert_string_equal(s.http.host, "::");
	assert_int_equal(s.http.port, 0);
	assert_string_equal(show(&s, "http"), "[::]:0");
	assert_int_equal(conf_set(key("http"), &s, "Off", err, sizeof(err)),
			 GERR_INVAL);
	assert_string_equal(err, "http wants HOST:PORT ([ADDR]:PORT for IPv6, port "
			    "0..65535) or off, got 'Off'");
	assert_int_equal(conf_set(key("http"), &s, "host:70000", err, sizeof(err)),
			 GERR_INVAL);
	assert_non_null(strstr(err, "or off, got 'host:70000'"));
	assert_string_equal(show(&s, "http"), "[::]:0");
}

static void test_bounds(void **state)
{
	struct gpud_settings s;
	char err[512];
	static const struct {
		const char *key, *val, *msg;
	} bad[] = {
		{ "heartbeat", "0.04", "heartbeat wants SECONDS in 0.05..3600, got '0.04'" },
		{ "heartbeat", "3601", "in 0.05..3600" },
		{ "lease-timeout", "0", "lease-timeout wants SECONDS in 0.1..86400" },
		{ "lease-seconds", "86401", "lease-seconds wants SECONDS in 0.1..86400" },
		{ "lease-units", "-1", "lease-units wants an integer in 0..1000000000000000000" },
		{ "lease-units", "1.5", "an integer" },
		{ "checkpoint-interval", "0.05", "in 0.1..86400" },
		{ "drain-seconds", "3601", "drain-seconds wants SECONDS in 0..3600" },
		{ "max-failures", "0", "max-failures wants an integer in 1..1000" },
		{ "max-failures", "1001", "in 1..1000" },
		{ "quarantine-after", "0", "quarantine-after wants an integer in 1..1000" },
		{ "max-leases-per-worker", "100001", "in 0..100000" },
		{ "max-leases-per-credential", "1000001", "in 0..1000000" },
		{ "progress-timeout", "2592001", "progress-timeout wants SECONDS in 0.." },
		{ "trust-after", "1000001", "trust-after wants an integer in 0..1000000" },
		{ "login-timeout", "0", "login-timeout wants SECONDS in 0.1..3600" },
		{ "idle-timeout", "86401", "idle-timeout wants SECONDS in 0.1..86400" },
		{ "max-connections", "0", "max-connections wants an integer in 1..1000000" },
		{ "max-connections-per-address", "1000001", "in 1..1000000" },
		{ "log-level", "trace", "log-level wants error, warn, info or debug" },
		{ "heartbeat", "", "heartbeat wants a value" },
	};
	static const struct {
		const char *key, *val;
	} edge[] = {
		{ "heartbeat", "0.05" }, { "heartbeat", "3600" },
		{ "drain-seconds", "0" }, { "progress-timeout", "0" },
		{ "progress-timeout", "2592000" }, { "max-leases-per-worker", "0" },
		{ "max-leases-per-credential", "1000000" },
		{ "lease-units", "1000000000000000000" }, { "trust-after", "1000000" },
		{ "max-failures", "1" }, { "max-connections", "1000000" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		gpud_options_defaults(&s);
		fx_refused(&gpud_options, &s, sizeof(s), bad[i].key, bad[i].val,
			   bad[i].msg);
	}
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		gpud_options_defaults(&s);
		fx_taken(&gpud_options, &s, edge[i].key, edge[i].val);
		/* As numbers: a double may show as 2.592e+06. */
		assert_true(strtod(show(&s, edge[i].key), NULL) ==
			    strtod(edge[i].val, NULL));
	}
	/* A data path of 3000 bytes fits, one more does not. */
	char *path = malloc(3002);
	assert_non_null(path);
	memset(path, 'd', 3001);
	path[0] = '/';
	path[3001] = '\0';
	gpud_options_defaults(&s);
	assert_int_equal(conf_set(key("data"), &s, path, err, sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, "data wants DIR of at most 3000 bytes"));
	path[3000] = '\0';
	assert_int_equal(conf_set(key("data"), &s, path, err, sizeof(err)), 0);
	free(path);
	/* The socket path's bound is sun_path's. */
	assert_int_equal(conf_set(key("socket"), &s, "/run/gpud/a\nb", err,
				  sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, "socket wants PATH of at most 99 bytes"));
}

static void test_finish(void **state)
{
	struct gpud_settings s;
	char err[4096]; /* the long paths below are in the messages */
	char *longdir;

	(void)state;
	/* data is required. */
	gpud_options_defaults(&s);
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), GERR_INVAL);
	assert_string_equal(err, "--data DIR (or data = DIR in the file) is required");
	/* The derived defaults. */
	finished(&s);
	assert_true(s.lease_timeout == 15);   /* 3 x heartbeat */
	assert_true(s.idle_timeout == 60);    /* 12 x 5, at least 60 */
	assert_string_equal(s.socket, "/srv/gpud/gpud.sock");
	assert_string_equal(s.results, "/srv/gpud/results");
	gpud_options_defaults(&s);
	snprintf(s.data, sizeof(s.data), "/d");
	s.heartbeat = 10;
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), 0);
	assert_true(s.lease_timeout == 30 && s.idle_timeout == 120);
	/* Set values stay. */
	gpud_options_defaults(&s);
	snprintf(s.data, sizeof(s.data), "/d");
	snprintf(s.socket, sizeof(s.socket), "/run/gpud.sock");
	snprintf(s.results, sizeof(s.results), "/var/lib/gpud-results");
	s.lease_timeout = 7;
	s.idle_timeout = 11;
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), 0);
	assert_true(s.lease_timeout == 7 && s.idle_timeout == 11);
	assert_string_equal(s.socket, "/run/gpud.sock");
	assert_string_equal(s.results, "/var/lib/gpud-results");
	/* A data directory too long for DATA/gpud.sock: set socket. */
	longdir = malloc(3001);
	assert_non_null(longdir);
	memset(longdir, 'x', 3000);
	longdir[0] = '/';
	longdir[89] = '\0';
	gpud_options_defaults(&s);
	snprintf(s.data, sizeof(s.data), "%s", longdir);
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), 0);
	assert_int_equal(strlen(s.socket), 99);
	longdir[89] = 'x';
	longdir[90] = '\0';
	gpud_options_defaults(&s);
	snprintf(s.data, sizeof(s.data), "%s", longdir);
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, "/gpud.sock is too long for a socket path; "
			       "set socket"));
	/* One too long for DATA/results: set results. */
	longdir[90] = 'x';
	longdir[2993] = '\0';
	gpud_options_defaults(&s);
	snprintf(s.data, sizeof(s.data), "%s", longdir);
	snprintf(s.socket, sizeof(s.socket), "/run/gpud.sock");
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, "/results is too long; set results"));
	longdir[2992] = '\0';
	gpud_options_defaults(&s);
	snprintf(s.data, sizeof(s.data), "%s", longdir);
	snprintf(s.socket, sizeof(s.socket), "/run/gpud.sock");
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), 0);
	assert_int_equal(strlen(s.results), 3000);
	free(longdir);
}

static void test_checks(void **state)
{
	struct gpud_settings s;
	char err[512];

	(void)state;
	gpud_options_defaults(&s);
	snprintf(s.data, sizeof(s.data), "/d");
	s.lease_timeout = 5; /* not longer than heartbeat */
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), GERR_INVAL);
	assert_string_equal(err, "lease-timeout (5) must be longer than heartbeat (5)");
	s.lease_timeout = 5.5;
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), 0);

	gpud_options_defaults(&s);
	snprintf(s.data, sizeof(s.data), "/d");
	s.progress_timeout = 4;
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), GERR_INVAL);
	assert_string_equal(err, "progress-timeout (4) must be longer than "
			    "heartbeat (5)");
	s.progress_timeout = 0; /* never: no check */
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), 0);

	gpud_options_defaults(&s);
	snprintf(s.data, sizeof(s.data), "/d");
	s.idle_timeout = 9.5;
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), GERR_INVAL);
	assert_string_equal(err, "idle-timeout (9.5) must be at least twice "
			    "heartbeat (5)");
	s.idle_timeout = 10;
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), 0);
	/* A long heartbeat against the derived lease-timeout: fine. */
	gpud_options_defaults(&s);
	snprintf(s.data, sizeof(s.data), "/d");
	s.heartbeat = 3600;
	s.progress_timeout = 0;
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), 0);
	assert_true(s.lease_timeout == 10800 && s.idle_timeout == 43200);
}

static void test_to_config(void **state)
{
	struct gpud_settings s;
	struct gpud_config c;
	char err[256];

	(void)state;
	gpud_options_defaults(&s);
	snprintf(s.data, sizeof(s.data), "/srv/gpud");
	assert_int_equal(conf_set(key("http"), &s, "off", err, sizeof(err)), 0);
	assert_int_equal(conf_set(key("listen"), &s, "[::]:7000", err, sizeof(err)), 0);
	s.lease_units = 1ull << 40;
	s.trust_after = 4;
	s.max_leases_per_worker = 0;
	s.max_leases_per_credential = 40;
	s.drain_seconds = 0;
	s.init = 1;
	assert_int_equal(gpud_options_finish(&s, err, sizeof(err)), 0);
	memset(&c, 0xa5, sizeof(c));
	gpud_options_to_config(&s, &c);
	/* The strings point into the settings. */
	assert_ptr_equal(c.data_dir, s.data);
	assert_ptr_equal(c.results_dir, s.results);
	assert_ptr_equal(c.socket_path, s.socket);
	assert_ptr_equal(c.listen_host, s.listen.host);
	assert_ptr_equal(c.http_host, s.http.host);
	assert_string_equal(c.listen_host, "::");
	assert_int_equal(c.listen_port, 7000);
	assert_int_equal(c.http_port, -1);
	assert_true(c.heartbeat_s == 5 && c.lease_timeout_s == 15);
	assert_true(c.lease_target_s == 300 && c.checkpoint_s == 60);
	assert_true(c.lease_units == 1ull << 40);
	assert_int_equal(c.max_failures, 3);
	assert_int_equal(c.quarantine_after, 3);
	assert_int_equal(c.max_leases_per_worker, 0);
	assert_int_equal(c.max_leases_per_credential, 40);
	assert_true(c.progress_timeout_s == 600 && c.drain_s == 0);
	assert_int_equal(c.trust_after, 4);
	assert_int_equal(c.init, 1);
	assert_true(c.login_timeout_s == 10 && c.idle_timeout_s == 60);
	assert_int_equal(c.max_conns, 4096);
	assert_int_equal(c.max_conns_per_addr, 256);
}

/* ---- reload ---- */

struct rl {
	char conf[64];      /* the configuration file */
	struct conf_args args;
	struct gpud_settings cli, live;
	struct glog log;
	char err[512];
};

static void write_conf(struct rl *r, const char *text)
{
	FILE *f = fopen(r->conf, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static int rl_setup(void **state)
{
	struct rl *r = calloc(1, sizeof(*r));
	int fd;

	if (!r)
		return -1;
	snprintf(r->conf, sizeof(r->conf), "/tmp/test_options_conf.XXXXXX");
	fd = mkstemp(r->conf);
	if (fd < 0)
		return -1;
	close(fd);
	r->args.config = r->conf;
	gpud_options_defaults(&r->cli);
	r->log = (struct glog){ .prog = "gpud", .level = GLOG_INFO, .journal = 1 };
	/* gpud's start: the same sequence a reload uses. */
	write_conf(r, "data = /srv/gpud\n");
	assert_int_equal(conf_load(&gpud_options, &r->args, &r->cli, &r->cli,
				   &r->live, sizeof(r->live), r->err,
				   sizeof(r->err)), 1);
	assert_int_equal(gpud_options_finish(&r->live, r->err, sizeof(r->err)), 0);
	*state = r;
	return 0;
}

static int rl_teardown(void **state)
{
	struct rl *r = *state;

	unlink(r->conf);
	free(r);
	return 0;
}

/* Reload with stderr going to a file; returns its rc and, in *ret_log,
 * what it logged (malloc'ed). */
static int reload(struct rl *r, char **ret_log)
{
	struct cap c;
	int rc;

	cap_start(&c);
	rc = gpud_options_reload(&r->args, &r->cli, &r->live, &r->log, r->err,
				 sizeof(r->err));
	*ret_log = cap_end(&c);
	return rc;
}

static void test_reload_applies(void **state)
{
	struct rl *r = *state;
	struct gpud_settings before = r->live;
	char *log;

	/* Nothing changed: nothing applied, nothing logged. */
	assert_int_equal(reload(r, &log), 0);
	assert_string_equal(log, "");
	free(log);
	assert_memory_equal(&r->live, &before, sizeof(before));

	write_conf(r, "data = /srv/gpud\nlease-seconds = 120\nmax-failures = 5\n"
		   "log-level = debug\n");
	assert_int_equal(reload(r, &log), 3);
	assert_true(r->live.lease_seconds == 120);
	assert_true(r->live.max_failures == 5);
	assert_int_equal(r->live.log_level, GLOG_DEBUG);
	assert_int_equal(r->log.level, GLOG_DEBUG);
	assert_non_null(strstr(log, "<6>reload: lease-seconds = 120 (was 300)\n"));
	assert_non_null(strstr(log, "<6>reload: max-failures = 5 (was 3)\n"));
	assert_non_null(strstr(log, "<6>reload: log-level = debug (was info)\n"));
	assert_null(strstr(log, "data"));
	free(log);

	/* Whole or not at all: keys that need a restart refuse the reload,
	 * and nothing else of it is applied; above all not lease-timeout
	 * and idle-timeout derived from the refused heartbeat (18 and 72). */
	before = r->live;
	write_conf(r, "data = /srv/gpud\nlease-seconds = 60\n"
		   "listen = 0.0.0.0:7701\nheartbeat = 6\nlog-level = debug\n");
	assert_int_equal(reload(r, &log), GERR_INVAL);
	assert_string_equal(r->err, "listen = 0.0.0.0:7701 (running "
			    "127.0.0.1:7700), heartbeat = 6 (running 5): needs "
			    "a restart, and a reload is applied whole or not at "
			    "all (restart gpud, or set it back)");
	assert_memory_equal(&r->live, &before, sizeof(before));
	assert_true(r->live.lease_timeout == 15 && r->live.idle_timeout == 60);
	assert_string_equal(log, "");
	free(log);

	/* The file's values go back to the defaults: applied again, and the
	 * quieter level already silences the info lines. */
	write_conf(r, "data = /srv/gpud\nlog-level = warn\n");
	assert_int_equal(reload(r, &log), 3);
	assert_true(r->live.lease_seconds == 300 && r->live.max_failures == 3);
	assert_true(r->live.lease_timeout == 15 && r->live.idle_timeout == 60);
	assert_int_equal(r->log.level, GLOG_WARN);
	assert_null(strstr(log, "<6>"));
	free(log);

	/* A different data directory needs a restart; socket and results,
	 * derived from it, too. */
	before = r->live;
	write_conf(r, "data = /srv/other\nlog-level = warn\n");
	assert_int_equal(reload(r, &log), GERR_INVAL);
	assert_memory_equal(&r->live, &before, sizeof(before));
	assert_string_equal(r->live.data, "/srv/gpud");
	assert_string_equal(r->live.socket, "/srv/gpud/gpud.sock");
	assert_non_null(strstr(r->err, "data = /srv/other (running /srv/gpud)"));
	assert_non_null(strstr(r->err, "socket = /srv/other/gpud.sock"));
	assert_non_null(strstr(r->err, "results = /srv/other/results"));
	free(log);
}

static void test_reload_cli_wins(void **state)
{
	struct rl *r = *state;
	char *log;
	int i = conf_find(&gpud_options, "lease-seconds");

	/* --lease-seconds 200 on the command line, and --init. */
	r->cli.lease_seconds = 200;
	r->args.given[i] = 1;
	r->cli.init = 1;
	r->args.given[conf_find(&gpud_options, "init")] = 1;
	write_conf(r, "data = /srv/gpud\nlease-seconds = 120\n");
	assert_int_equal(reload(r, &log), 1);
	assert_true(r->live.lease_seconds == 200);
	assert_non_null(strstr(log, "reload: lease-seconds = 200 (was 300)"));
	/* init is an action, never reloaded nor reported. */
	assert_int_equal(r->live.init, 0);
	assert_null(strstr(log, "init"));
	free(log);
	assert_int_equal(reload(r, &log), 0);
	free(log);
}

static void test_reload_refused(void **state)
{
	struct rl *r = *state;
	struct gpud_settings before = r->live;
	char *log, want[128];

	/* A key the table lacks: the file's place in err. */
	write_conf(r, "data = /srv/gpud\nlease-seconds = 120\nbogus = 1\n");
	assert_int_equal(reload(r, &log), GERR_INVAL);
	snprintf(want, sizeof(want), "%s:3: unknown key 'bogus'", r->conf);
	assert_string_equal(r->err, want);
	assert_memory_equal(&r->live, &before, sizeof(before));
	free(log);
	/* A bad value. */
	write_conf(r, "data = /srv/gpud\nmax-failures = 0\n");
	assert_int_equal(reload(r, &log), GERR_INVAL);
	snprintf(want, sizeof(want), "%s:2: max-failures wants an integer in "
		 "1..1000, got '0'", r->conf);
	assert_string_equal(r->err, want);
	assert_memory_equal(&r->live, &before, sizeof(before));
	free(log);
	/* Settings that do not hold together. */
	write_conf(r, "data = /srv/gpud\nlease-timeout = 4\n");
	assert_int_equal(reload(r, &log), GERR_INVAL);
	assert_string_equal(r->err, "lease-timeout (4) must be longer than "
			    "heartbeat (5)");
	assert_memory_equal(&r->live, &before, sizeof(before));
	free(log);
	/* No data directory any more. */
	write_conf(r, "lease-seconds = 100\n");
	assert_int_equal(reload(r, &log), GERR_INVAL);
	assert_non_null(strstr(r->err, "--data DIR"));
	assert_memory_equal(&r->live, &before, sizeof(before));
	free(log);
	/* A file that fits a new heartbeat but not the running one: the
	 * heartbeat needs a restart, so none of it is applied. */
	write_conf(r, "data = /srv/gpud\nheartbeat = 1\nlease-timeout = 3\n");
	assert_int_equal(reload(r, &log), GERR_INVAL);
	assert_non_null(strstr(r->err, "heartbeat = 1 (running 5): needs a "
			       "restart"));
	assert_memory_equal(&r->live, &before, sizeof(before));
	assert_string_equal(log, ""); /* refused before anything is logged */
	free(log);
	/* The file gone: --config named it, so that is an error too. */
	unlink(r->conf);
	assert_int_equal(reload(r, &log), GERR_NOTFOUND);
	assert_non_null(strstr(r->err, r->conf));
	assert_memory_equal(&r->live, &before, sizeof(before));
	free(log);
	/* Once fixed, it applies. */
	write_conf(r, "data = /srv/gpud\nlease-timeout = 20\n");
	assert_int_equal(reload(r, &log), 1);
	assert_true(r->live.lease_timeout == 20);
	free(log);
}

UNIT_MAIN(cmocka_unit_test(test_defaults),
	cmocka_unit_test(test_table),
	cmocka_unit_test(test_listen),
	cmocka_unit_test(test_http),
	cmocka_unit_test(test_bounds),
	cmocka_unit_test(test_finish),
	cmocka_unit_test(test_checks),
	cmocka_unit_test(test_to_config),
	cmocka_unit_test_setup_teardown(test_reload_applies, rl_setup, rl_teardown),
	cmocka_unit_test_setup_teardown(test_reload_cli_wins, rl_setup, rl_teardown),
	cmocka_unit_test_setup_teardown(test_reload_refused, rl_setup, rl_teardown))
