/* woptions.c - gpuworker's settings table (see woptions.h). */
#include "woptions.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gerr.h"

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
static int parse_connect(const char *s, void *field, char *err, size_t errlen)
{
	struct worker_connect *c = field;
	const char *host = s, *colon;
	size_t host_len;
	uint64_t port;

	gerr_printf(err, errlen, "HOST:PORT ([ADDR]:PORT for IPv6, port 1..65535)");
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
	if (host_len == 0 || host_len > WORKER_HOST_MAX)
		return GERR_INVAL;
	for (size_t i = 0; i < host_len; i++)
		if (host[i] <= ' ' || host[i] > '~' || host[i] == '/' ||
		    host[i] == '[' || host[i] == ']')
			return GERR_INVAL;
	if (parse_u64(colon + 1, 1, 65535, &port) < 0)
		return GERR_INVAL;
	memcpy(c->host, host, host_len);
	c->host[host_len] = '\0';
	snprintf(c->port, sizeof(c->port), "%" PRIu64, port);
	return 0;
}

static void show_connect(const void *field, char *buf, size_t len)
{
	const struct worker_connect *c = field;

	if (!c->host[0])
		snprintf(buf, len, "(unset)");
	else
		snprintf(buf, len, strchr(c->host, ':') ? "[%s]:%s" : "%s:%s",
			 c->host, c->port);
}

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > WORKER_THREADS_MAX ? WORKER_THREADS_MAX : (int)n;
}

/* "cpu", "cpu:THREADS", "cuda:N", or "cudaN" (a systemd instance name,
 * gpuworker@cuda0, which cannot hold a colon). */
static int parse_device(const char *s, void *field, char *err, size_t errlen)
{
	struct worker_device *d = field, v = { .kind = WL_DEVICE_CPU };
	uint64_t n;

	gerr_printf(err, errlen, "cpu, cpu:THREADS (1..%d) or cuda:N (0..%d)",
		    WORKER_THREADS_MAX, WORKER_CUDA_INDEX_MAX);
	if (strcmp(s, "cpu") == 0) {
		v.threads = online_cpus();
	} else if (strncmp(s, "cpu:", 4) == 0) {
		if (parse_u64(s + 4, 1, WORKER_THREADS_MAX, &n) < 0)
			return GERR_INVAL;
		v.threads = (int)n;
		v.threads_given = 1;
	} else if (strncmp(s, "cuda", 4) == 0) {
		if (parse_u64(s + 4 + (s[4] == ':'), 0, WORKER_CUDA_INDEX_MAX, &n) < 0)
			return GERR_INVAL;
		v.kind = WL_DEVICE_CUDA;
		v.index = (int)n;
		/* The kernels do the work; one host thread drives them. */
		v.threads = 1;
	} else {
		return GERR_INVAL;
	}
	if (v.kind == WL_DEVICE_CUDA)
		snprintf(v.name, sizeof(v.name), "cuda:%d", v.index);
	else
		snprintf(v.name, sizeof(v.name), "cpu");
	*d = v;
	return 0;
}

static void show_device(const void *field, char *buf, size_t len)
{
	const struct worker_device *d = field;

	if (!d->name[0])
		snprintf(buf, len, "(unset)");
	else if (d->kind == WL_DEVICE_CPU && d->threads_given)
		snprintf(buf, len, "cpu:%d", d->threads);
	else
		snprintf(buf, len, "%s", d->name);
}

/* A name for this process among its credential's (place.h's rule). */
static int parse_instance(const char *s, void *field, char *err,
			  size_t errlen)
{
	gerr_printf(err, errlen, "1..%d characters of A-Z a-z 0-9 . _ : @ / + -",
		    PLACE_INSTANCE_MAX);
	if (place_instance_check(s))
		return GERR_INVAL;
	snprintf(field, PLACE_INSTANCE_MAX + 1, "%s", s);
	return 0;
}

static void show_instance(const void *field, char *buf, size_t len)
{
	const char *v = field;

	snprintf(buf, len, "%s", v[0] ? v : "(default)");
}

/* 0 is no interval: gpud's, told at login. */
static void show_interval(const void *field, char *buf, size_t len)
{
	double v;

	memcpy(&v, field, sizeof(v));
	if (v > 0)
		conf_show_double(v, buf, len);
	else
		snprintf(buf, len, "(gpud's)");
}

#define F(m) offsetof(struct worker_settings, m)

static const struct conf_key keys[] = {
	{ "connect", CONF_CUSTOM, 0, F(connect), sizeof(struct worker_connect), 0, 0,
	  "HOST:PORT", "gpud's worker address ([ADDR]:PORT for IPv6)",
	  parse_connect, show_connect },
	{ "token-file", CONF_STR, 0, F(token_file),
	  sizeof(((struct worker_settings *)0)->token_file), 0, 0, "FILE",
	  "this worker's credential (name, key, gpud-key; mode 0600)", NULL, NULL },
	{ "device", CONF_CUSTOM, 0, F(device), sizeof(struct worker_device), 0, 0,
	  "DEVICE", "cpu (all online CPUs), cpu:THREADS (1..4096), or\n"
	  "cuda:N (also cudaN, as in gpuworker@cuda0)", parse_device, show_device },
	{ "instance", CONF_CUSTOM, 0, F(instance), PLACE_INSTANCE_MAX + 1, 0, 0,
	  "NAME", "this process's name among the workers of its token\n"
	  "(default: the pod, HOST/slurmJOB_TASK/DEVICE under Slurm,\n"
	  "else HOST:PID); gpud shows it as TOKEN@NAME", parse_instance,
	  show_instance },
	{ "checkpoint-interval", CONF_DOUBLE, 0, F(checkpoint_interval), 0, 0.1,
	  86400, "SECONDS", "time between checkpoints (default: what gpud's\n"
	  "--checkpoint-interval says at login, 60 unless set there)",
	  NULL, show_interval },
	{ "log-level", CONF_LEVEL, 0, F(log_level), 0, 0, 0, "LEVEL",
	  "error|warn|info|debug (default info)", NULL, NULL },
	{ "max-leases", CONF_INT, 0, F(max_leases), 0, 0, 1e9, "N",
	  "exit 0 after N finished leases (default 0: no limit)", NULL, NULL },
	{ "exit-when-idle", CONF_BOOL, 0, F(exit_when_idle), 0, 0, 0, NULL,
	  "exit 0 when gpud has no jobs", NULL, NULL },
	{ "no-run-ahead", CONF_BOOL, 0, F(no_run_ahead), 0, 0, 0, NULL,
	  "do not start a chained job's next lease before gpud\n"
	  "grants it", NULL, NULL },
};

const struct conf_table worker_options = {
	.prog = "gpuworker",
	.usage = "Usage: gpuworker --connect HOST:PORT --token-file FILE --device DEVICE [options]\n"
		 "Runs leases from gpud on one device. Each option is also a key of\n"
		 "gpuworker.conf.",
	.default_path = WORKER_CONF_PATH,
	.keys = keys,
	.n = sizeof(keys) / sizeof(keys[0]),
};

void woptions_defaults(struct worker_settings *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->checkpoint_interval = 0; /* gpud's */
	ret->log_level = GLOG_INFO;
}

int woptions_finish(const struct worker_settings *s, char *err, size_t errlen)
{
	const char *missing = !s->connect.host[0] ? "connect HOST:PORT"
			    : !s->token_file[0]   ? "token-file FILE"
			    : !s->device.name[0]  ? "device DEVICE" : NULL;

	if (missing)
		return gerr_fail(GERR_INVAL, err, errlen, "--%s is required "
				 "(an option or a key of the configuration file)",
				 missing);
	return 0;
}
