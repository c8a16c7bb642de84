/* options.c - gpud's settings table, defaults, checks and reload (see
 * options.h). */
#include "options.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gerr.h"

/* Whether host (hl bytes) is a numeric IPv4 or IPv6 address, an IPv6
 * one perhaps with its %SCOPE: gpud binds addresses and resolves no
 * names, so that what --check-config accepts is what gpud can bind. */
static int numeric_host(const char *host, size_t hl)
{
	char a[sizeof(((struct gpud_listen *)0)->host)];
	unsigned char bin[sizeof(struct in6_addr)];
	char *pct;

	memcpy(a, host, hl);
	a[hl] = '\0';
	if (inet_pton(AF_INET, a, bin) == 1)
		return 1;
	pct = strchr(a, '%');
	if (pct) {
		if (pct[1] == '\0')
			return 0;
		*pct = '\0';
	}
	return inet_pton(AF_INET6, a, bin) == 1;
}

/* "ADDR:PORT", "[IPV6]:PORT"; port 0..65535; ADDR numeric. what: what
 * the key takes, for the message. */
static int parse_addr(const char *s, struct gpud_listen *l, const char *what,
		      char *err, size_t errlen)
{
	const char *colon = strrchr(s, ':');
	size_t hl;
	char *end;
	long p;

	gerr_printf(err, errlen, "%s", what);
	if (!colon || colon == s)
		return GERR_INVAL;
	hl = (size_t)(colon - s);
	if (s[0] == '[') {
		if (hl < 3 || s[hl - 1] != ']')
			return GERR_INVAL;
		s++;
		hl -= 2;
	}
	if (hl >= sizeof(l->host))
		return GERR_INVAL;
	for (size_t i = 0; i < hl; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == '/' || s[i] == '[' || s[i] == ']')
			return GERR_INVAL;
	if (colon[1] < '0' || colon[1] > '9')
		return GERR_INVAL;
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno || *end || p < 0 || p > 65535)
		return GERR_INVAL;
	if (!numeric_host(s, hl))
		return gerr_fail(GERR_INVAL, err, errlen, "a numeric address, "
				 "not a name (127.0.0.1:PORT for localhost, "
				 "[::1]:PORT, 0.0.0.0:PORT for every address)");
	memcpy(l->host, s, hl);
	l->host[hl] = '\0';
	l->port = (int)p;
	l->asked = 1;
	return 0;
}

static int parse_listen(const char *s, void *field, char *err, size_t errlen)
{
	return parse_addr(s, field, "HOST:PORT ([ADDR]:PORT for IPv6, port "
			  "0..65535)", err, errlen);
}

static void show_listen(const void *field, char *buf, size_t len)
{
	const struct gpud_listen *l = field;

	snprintf(buf, len, strchr(l->host, ':') ? "[%s]:%d" : "%s:%d", l->host,
		 l->port);
}

/* HOST:PORT as for listen, or "off" (port -1). */
static int parse_http(const char *s, void *field, char *err, size_t errlen)
{
	struct gpud_listen *l = field;

	if (strcmp(s, "off") == 0) {
		l->host[0] = '\0';
		l->port = -1;
		l->asked = 1;
		return 0;
	}
	return parse_addr(s, l, "HOST:PORT ([ADDR]:PORT for IPv6, port "
			  "0..65535) or off", err, errlen);
}

static void show_http(const void *field, char *buf, size_t len)
{
	const struct gpud_listen *l = field;

	if (l->port < 0)
		snprintf(buf, len, "off");
	else
		show_listen(field, buf, len);
}

/* The end hook's path, or "none" (""): checked as a file by check(). */
static int parse_hook(const char *s, void *field, char *err, size_t errlen)
{
	char *f = field;
	size_t n = strlen(s);

	if (strcmp(s, "none") == 0) {
		f[0] = '\0';
		return 0;
	}
	if (n == 0 || n >= sizeof(((struct gpud_settings *)0)->end_hook))
		return gerr_fail(GERR_INVAL, err, errlen, "an absolute path of at "
				 "most %zu bytes, or none",
				 sizeof(((struct gpud_settings *)0)->end_hook) - 1);
	memcpy(f, s, n + 1);
	return 0;
}

static void show_hook(const void *field, char *buf, size_t len)
{
	const char *f = field;

	snprintf(buf, len, "%s", f[0] ? f : "none");
}

#define F(m) offsetof(struct gpud_settings, m)
#define RT CONF_RUNTIME

static const struct conf_key keys[] = {
	{ "data", CONF_STR, 0, F(data), sizeof(((struct gpud_settings *)0)->data),
	  0, 0, "DIR", "data directory (database, blobs, tokens); created 0700",
	  NULL, NULL },
	{ "results", CONF_STR, 0, F(results), sizeof(((struct gpud_settings *)0)->results),
	  0, 0, "DIR", "where finished jobs' plots go, job-N/ in it (default\n"
	  "DATA/results); made 0755, files 0644, for every user to read", NULL, NULL },
	{ "init", CONF_BOOL, CONF_CLI_ONLY, F(init), 0, 0, 0, NULL,
	  "start a fresh database even though DIR holds the blobs or\n"
	  "the key of an earlier one (blobs moved aside, the key kept)", NULL, NULL },
	{ "listen", CONF_CUSTOM, 0, F(listen), sizeof(struct gpud_listen), 0, 0,
	  "HOST:PORT", "worker listener on a numeric address, not a name\n"
	  "(default 127.0.0.1:7700; port 0 picks one, written to\n"
	  "DIR/gpud.addr)", parse_listen, show_listen },
	{ "http", CONF_CUSTOM, 0, F(http), sizeof(struct gpud_listen), 0, 0,
	  "HOST:PORT", "the status page, /metrics and /api/status, read-only\n"
	  "(default 127.0.0.1:7780, skipped with a warning when taken;\n"
	  "off: none; port 0 picks one, written to DIR/gpud.http)",
	  parse_http, show_http },
	{ "http-open", CONF_BOOL, 0, F(http_open), 0, 0, 0, NULL,
	  "serve the page, /api/status and /metrics to anyone who reaches\n"
	  "them, without a page link (gpuctl page-link): for a page behind\n"
	  "a proxy of the operator's that authenticates", NULL, NULL },
	{ "socket", CONF_STR, 0, F(socket), sizeof(((struct gpud_settings *)0)->socket),
	  0, 0, "PATH", "control socket for gpuctl (default DIR/gpud.sock, mode 0600)",
	  NULL, NULL },
	{ "heartbeat", CONF_DOUBLE, 0, F(heartbeat), 0, 0.05, 3600, "SECONDS",
	  "worker heartbeat interval (default 5)", NULL, NULL },
	{ "lease-timeout", CONF_DOUBLE, RT, F(lease_timeout), 0, 0.1, 86400, "SECONDS",
	  "lease deadline after the last heartbeat (default 3x heartbeat)",
	  NULL, NULL },
	{ "lease-seconds", CONF_DOUBLE, RT, F(lease_seconds), 0, 0.1, 86400, "SECONDS",
	  "wanted duration of one lease (default 300)", NULL, NULL },
	{ "lease-min-seconds", CONF_DOUBLE, RT, F(lease_min_seconds), 0, 0,
	  86400, "SECONDS", "the least work a lease is cut to, at the worker's measured\n"
	  "rate, however many workers share what is left (default 5)",
	  NULL, NULL },
	{ "lease-units", CONF_INT, RT, F(lease_units), 0, 0, 1e18, "N",
	  "fixed lease size in the workload's units (default 0: adapt\n"
	  "to each worker's measured rate)", NULL, NULL },
	{ "checkpoint-interval", CONF_DOUBLE, RT, F(checkpoint_interval), 0, 0.1,
	  86400, "SECONDS", "checkpoint cadence of the workers that log in from\n"
	  "then on and set none of their own (default 60)",
	  NULL, NULL },
	{ "drain-seconds", CONF_DOUBLE, RT, F(drain_seconds), 0, 0, 3600, "SECONDS",
	  "on SIGTERM, wait this long for workers to checkpoint and\n"
	  "release their leases (default 15; 0 stops at once)", NULL, NULL },
	{ "max-failures", CONF_INT, RT, F(max_failures), 0, 1, 1000, "N",
	  "failures of a lease (failed verifications and failed runs)\n"
	  "before it fails, and its job with it (default 3)", NULL, NULL },
	{ "quarantine-after", CONF_INT, RT, F(quarantine_after), 0, 1, 1000, "N",
	  "a worker is quarantined after N failed verifications, N\n"
	  "messages about leases it was not granted, or N leases\n"
	  "revoked for no progress (default 3)", NULL, NULL },
	{ "max-leases-per-worker", CONF_INT, RT, F(max_leases_per_worker), 0, 0,
	  100000, "N", "leases one worker (one gpuworker process) may hold at\n"
	  "once (default 16; 0 no cap)", NULL, NULL },
	{ "max-leases-per-credential", CONF_INT, RT,
	  F(max_leases_per_credential), 0, 0, 1000000, "N",
	  "leases all the workers of one token may hold at once\n"
	  "(default 0: no cap)", NULL, NULL },
	{ "progress-timeout", CONF_DOUBLE, RT, F(progress_timeout), 0, 0,
	  30 * 86400, "SECONDS", "revoke a lease whose reported progress has not grown\n"
	  "for this long, or grew by less than a tenth of what its\n"
	  "holder's verified rate predicts (default 600; 0 never)", NULL, NULL },
	{ "trust-after", CONF_INT, RT, F(trust_after), 0, 0, 1000000, "N",
	  "replicate a worker's results on another worker until N of\n"
	  "them in a row agree, and again after any failure (default\n"
	  "0: off, since a lone worker could never finish a job)", NULL, NULL },
	{ "login-timeout", CONF_DOUBLE, RT, F(login_timeout), 0, 0.1, 3600, "SECONDS",
	  "close a worker connection not logged in after this long\n"
	  "(default 10)", NULL, NULL },
	{ "idle-timeout", CONF_DOUBLE, RT, F(idle_timeout), 0, 0.1, 86400, "SECONDS",
	  "close a logged-in worker connection silent this long\n"
	  "while it holds nothing (default 12x heartbeat, at least 60)",
	  NULL, NULL },
	{ "max-connections", CONF_INT, RT, F(max_connections), 0, 1, 1000000, "N",
	  "worker connections in all (default 4096); more are closed", NULL, NULL },
	{ "max-connections-per-address", CONF_INT, RT, F(max_connections_per_address),
	  0, 1, 1000000, "N", "worker connections from one address (default 256)",
	  NULL, NULL },
	{ "max-connections-per-credential", CONF_INT, RT,
	  F(max_connections_per_credential), 0, 1, 1000000, "N",
	  "logged-in connections of one token, workers and gpuctl\n"
	  "(default 1024); a login past it is refused", NULL, NULL },
	{ "max-prelogin", CONF_INT, RT, F(max_prelogin), 0, 1, 1000000, "N",
	  "connections not logged in yet, in all (default 1024): past it\n"
	  "a new one sheds the oldest of the address with the most", NULL, NULL },
	{ "max-prelogin-per-address", CONF_INT, RT, F(max_prelogin_per_address),
	  0, 1, 1000000, "N", "connections not logged in yet from one address\n"
	  "(default 64); more are closed", NULL, NULL },
	{ "frame-memory", CONF_INT, RT, F(frame_memory), 0, 1, 1 << 20, "MIB",
	  "memory for the frames and uploads workers send, in MiB\n"
	  "(default 256): reads wait while it is spent", NULL, NULL },
	{ "end-hook", CONF_CUSTOM, RT, F(end_hook), sizeof(((struct gpud_settings *)0)->end_hook),
	  0, 0, "PATH", "a command run when a job ends (done, failed, cancelled):\n"
	  "PATH JOB STATE RESULT WORKLOAD NAME, without a shell, also in\n"
	  "GPUD_JOB_* variables; an absolute path of an executable file\n"
	  "(default none)", parse_hook, show_hook },
	{ "end-hook-timeout", CONF_DOUBLE, RT, F(end_hook_timeout), 0, 0.1, 3600,
	  "SECONDS", "an end hook still running after this long is killed\n"
	  "(default 30)", NULL, NULL },
	{ "end-hook-max", CONF_INT, RT, F(end_hook_max), 0, 1, 64, "N",
	  "end hooks running at once; the others wait their turn\n(default 4)",
	  NULL, NULL },
	{ "log-level", CONF_LEVEL, RT, F(log_level), 0, 0, 0, "LEVEL",
	  "error|warn|info|debug (default info)", NULL, NULL },
};

const struct conf_table gpud_options = {
	.prog = "gpud",
	.usage = "usage: gpud --data DIR [options]   (each option is also a key of gpud.conf)",
	.default_path = GPUD_CONF_PATH,
	.keys = keys,
	.n = sizeof(keys) / sizeof(keys[0]),
};

void gpud_options_defaults(struct gpud_settings *ret)
{
	memset(ret, 0, sizeof(*ret));
	snprintf(ret->listen.host, sizeof(ret->listen.host), "127.0.0.1");
	ret->listen.port = 7700;
	snprintf(ret->http.host, sizeof(ret->http.host), "127.0.0.1");
	ret->http.port = 7780;
	ret->heartbeat = 5;
	ret->lease_seconds = 300;
	ret->lease_min_seconds = 5;
	ret->checkpoint_interval = 60;
	ret->drain_seconds = 15;
	ret->max_failures = 3;
	ret->quarantine_after = 3;
	/* One gpuworker holds one lease; a token shared by the devices of
	 * one machine, each restarted while its old lease still waits for
	 * its deadline, holds two per device. */
	ret->max_leases_per_worker = 16;
	ret->progress_timeout = 600;
	ret->login_timeout = 10;
	ret->max_connections = 4096;
	ret->max_connections_per_address = 256;
	ret->max_connections_per_credential = 1024;
	ret->max_prelogin = 1024;
	ret->max_prelogin_per_address = 64;
	ret->frame_memory = 256;
	ret->log_level = GLOG_INFO;
	ret->end_hook_timeout = 30;
	ret->end_hook_max = 4;
}

/* The checks between keys, on settings whose defaults are filled in. */
static int check(const struct gpud_settings *s, char *err, size_t errlen)
{
	if (s->lease_timeout <= s->heartbeat)
		return gerr_fail(GERR_INVAL, err, errlen,
				 "lease-timeout (%g) must be longer than heartbeat (%g)",
				 s->lease_timeout, s->heartbeat);
	if (s->progress_timeout > 0 && s->progress_timeout <= s->heartbeat)
		return gerr_fail(GERR_INVAL, err, errlen,
				 "progress-timeout (%g) must be longer than heartbeat (%g)",
				 s->progress_timeout, s->heartbeat);
	/* The end hook runs without a shell: an absolute path, checked now
	 * so that --check-config refuses what would fail at every job's end. */
	if (s->end_hook[0]) {
		struct stat sb;

		if (s->end_hook[0] != '/')
			return gerr_fail(GERR_INVAL, err, errlen, "end-hook %s: "
					 "an absolute path is needed", s->end_hook);
		if (stat(s->end_hook, &sb) || !S_ISREG(sb.st_mode))
			return gerr_fail(GERR_INVAL, err, errlen, "end-hook %s: "
					 "not a regular file", s->end_hook);
		if (access(s->end_hook, X_OK))
			return gerr_fail(GERR_INVAL, err, errlen, "end-hook %s: "
					 "not executable", s->end_hook);
	}
	/* A worker holding a lease says something every heartbeat. */
	if (s->idle_timeout < 2 * s->heartbeat)
		return gerr_fail(GERR_INVAL, err, errlen,
				 "idle-timeout (%g) must be at least twice heartbeat (%g)",
				 s->idle_timeout, s->heartbeat);
	return 0;
}

int gpud_options_finish(struct gpud_settings *s, char *err, size_t errlen)
{
	if (!s->data[0])
		return gerr_fail(GERR_INVAL, err, errlen,
				 "--data DIR (or data = DIR in the file) is required");
	if (s->lease_timeout == 0)
		s->lease_timeout = 3 * s->heartbeat;
	if (s->idle_timeout == 0)
		s->idle_timeout = 12 * s->heartbeat > 60 ? 12 * s->heartbeat : 60;
	if (!s->socket[0]) {
		if (strlen(s->data) + sizeof("/gpud.sock") > sizeof(s->socket))
			return gerr_fail(GERR_INVAL, err, errlen,
					 "%s/gpud.sock is too long for a socket path; "
					 "set socket", s->data);
		snprintf(s->socket, sizeof(s->socket), "%s/gpud.sock", s->data);
	}
	if (!s->results[0]) {
		if (strlen(s->data) + sizeof("/results") > sizeof(s->results))
			return gerr_fail(GERR_INVAL, err, errlen,
					 "%s/results is too long; set results", s->data);
		snprintf(s->results, sizeof(s->results), "%s/results", s->data);
	}
	return check(s, err, errlen);
}

void gpud_options_to_config(const struct gpud_settings *s,
			    struct gpud_config *cfg)
{
	cfg->data_dir = s->data;
	cfg->results_dir = s->results;
	cfg->listen_host = s->listen.host;
	cfg->listen_port = s->listen.port;
	cfg->socket_path = s->socket;
	cfg->http_host = s->http.host;
	cfg->http_port = s->http.port;
	cfg->http_asked = s->http.asked;
	cfg->http_open = s->http_open;
	cfg->heartbeat_s = s->heartbeat;
	cfg->lease_timeout_s = s->lease_timeout;
	cfg->lease_target_s = s->lease_seconds;
	cfg->lease_min_s = s->lease_min_seconds;
	cfg->lease_units = s->lease_units;
	cfg->checkpoint_s = s->checkpoint_interval;
	cfg->max_failures = (uint32_t)s->max_failures;
	cfg->quarantine_after = (uint32_t)s->quarantine_after;
	cfg->max_leases_per_worker = (uint32_t)s->max_leases_per_worker;
	cfg->max_leases_per_credential = (uint32_t)s->max_leases_per_credential;
	cfg->progress_timeout_s = s->progress_timeout;
	cfg->trust_after = (uint32_t)s->trust_after;
	cfg->drain_s = s->drain_seconds;
	cfg->init = s->init;
	cfg->login_timeout_s = s->login_timeout;
	cfg->idle_timeout_s = s->idle_timeout;
	cfg->max_conns = (int)s->max_connections;
	cfg->max_conns_per_addr = (int)s->max_connections_per_address;
	cfg->max_conns_per_cred = (int)s->max_connections_per_credential;
	cfg->max_prelogin = (int)s->max_prelogin;
	cfg->max_prelogin_per_addr = (int)s->max_prelogin_per_address;
	cfg->frame_mem_max = s->frame_memory << 20;
	cfg->end_hook = s->end_hook[0] ? s->end_hook : NULL;
	cfg->end_hook_timeout_s = s->end_hook_timeout;
	cfg->end_hook_max = (uint32_t)s->end_hook_max;
}

/* The keys a reload cannot change (not CONF_RUNTIME) that next changes
 * from live: 0 when none, else GERR_INVAL naming each with both values. */
static int restart_keys(const struct gpud_settings *live,
			const struct gpud_settings *next, char *err,
			size_t errlen)
{
	size_t n = 0;

	for (size_t i = 0; i < gpud_options.n && n + 1 < errlen; i++) {
		const struct conf_key *k = &keys[i];
		char was[CONF_SHOW_MAX], now[CONF_SHOW_MAX];

		if ((k->flags & (CONF_CLI_ONLY | CONF_RUNTIME)) ||
		    conf_same(k, live, next))
			continue;
		conf_show(k, live, was, sizeof(was));
		conf_show(k, next, now, sizeof(now));
		n += (size_t)snprintf(err + n, errlen - n, "%s%s = %s (running "
				      "%s)", n ? ", " : "", k->name, now, was);
	}
	if (n == 0)
		return 0;
	if (n + 1 < errlen)
		snprintf(err + n, errlen - n, ": needs a restart, and a reload "
			 "is applied whole or not at all (restart gpud, or set "
			 "it back)");
	return GERR_INVAL;
}

int gpud_options_reload(const struct conf_args *args,
			const struct gpud_settings *cli,
			struct gpud_settings *live, struct glog *log,
			char *err, size_t errlen)
{
	struct gpud_settings *next, *merged;
	int rc, applied = 0;

	next = malloc(sizeof(*next));
	merged = malloc(sizeof(*merged));
	if (!next || !merged) {
		rc = gerr_fail(GERR_NOMEM, err, errlen, "out of memory");
		goto out;
	}
	gpud_options_defaults(merged); /* the defaults, for a moment */
	rc = conf_load(&gpud_options, args, merged, cli, next, sizeof(*next),
		       err, errlen);
	if (rc >= 0)
		rc = gpud_options_finish(next, err, errlen);
	if (rc)
		goto out;
	/* Whole or not at all: a key the running gpud cannot take refuses
	 * the reload, since the values derived from it (lease-timeout and
	 * idle-timeout from heartbeat) would be applied without it. With
	 * every such key as it runs, merged is next, whose checks held. */
	rc = restart_keys(live, next, err, errlen);
	if (rc)
		goto out;
	*merged = *live;
	for (size_t i = 0; i < gpud_options.n; i++) {
		const struct conf_key *k = &keys[i];
		if (!(k->flags & CONF_CLI_ONLY) && (k->flags & CONF_RUNTIME))
			conf_copy(k, merged, next);
	}
	/* The lines below follow the new level. */
	GLOG_SET_LEVEL(log, merged->log_level);
	for (size_t i = 0; i < gpud_options.n; i++) {
		const struct conf_key *k = &keys[i];
		char was[CONF_SHOW_MAX], now[CONF_SHOW_MAX];

		if ((k->flags & CONF_CLI_ONLY) || !(k->flags & CONF_RUNTIME) ||
		    conf_same(k, live, next))
			continue;
		conf_show(k, live, was, sizeof(was));
		conf_show(k, merged, now, sizeof(now));
		LOG_INFO(log, "reload: %s = %s (was %s)", k->name, now, was);
		applied++;
	}
	*live = *merged;
	rc = applied;
out:
	free(next);
	free(merged);
	return rc;
}
