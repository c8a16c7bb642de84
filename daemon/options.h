/* options.h - gpud's settings: the one table behind its long options and
 * the keys of gpud.conf (conf.h), their defaults, the checks between keys,
 * and a reload (SIGHUP) that applies what may change at run time.
 *
 * Ownership: a struct gpud_settings belongs to its caller; the
 * gpud_config that gpud_options_to_config fills points into it (the data,
 * listen and socket strings), so the settings outlive the config.
 * Threads: main's thread (the loop thread once gpud runs).
 */
#ifndef GPUD_OPTIONS_H
#define GPUD_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "gpud.h"
#include "log.h"

#define GPUD_CONF_PATH "/etc/gpud/gpud.conf"

struct gpud_listen {
	char host[256]; /* a numeric IPv4 or IPv6 address, never a name */
	int port; /* 0 picks one */
	int asked; /* set by an option or a key, not by the defaults */
};

struct gpud_settings {
	char data[3001];
	char results[3001]; /* "" is DATA/results */
	struct gpud_listen listen;
	struct gpud_listen http; /* port -1: off */
	int http_open; /* the page without a page link (http.c) */
	char socket[100]; /* sun_path's bound; "" is DATA/gpud.sock */
	double heartbeat;
	double lease_timeout; /* 0: 3 x heartbeat */
	double lease_seconds;
	double lease_min_seconds;
	uint64_t lease_units; /* 0: adapt to each worker's rate */
	double checkpoint_interval;
	double drain_seconds;
	uint64_t max_failures;
	uint64_t quarantine_after;
	uint64_t max_leases_per_worker;
	uint64_t max_leases_per_credential;
	double progress_timeout;
	uint64_t trust_after;
	double login_timeout;
	double idle_timeout; /* 0: 12 x heartbeat, at least 60 */
	uint64_t max_connections;
	uint64_t max_connections_per_address;
	uint64_t max_connections_per_credential;
	uint64_t max_prelogin;
	uint64_t max_prelogin_per_address;
	uint64_t frame_memory; /* MiB */
	enum glog_level log_level;
	int init;
	char end_hook[1024]; /* "": none; else an absolute executable file */
	double end_hook_timeout;
	uint64_t end_hook_max;
};

extern const struct conf_table gpud_options;

void gpud_options_defaults(struct gpud_settings *ret);

/* Fill in the derived defaults (lease-timeout, idle-timeout, socket) and
 * check the keys against each other. Returns 0 or GERR_INVAL with the
 * reason in err. */
int gpud_options_finish(struct gpud_settings *s, char *err, size_t errlen);

/* The settings as the daemon's config (its strings point into s). */
void gpud_options_to_config(const struct gpud_settings *s,
			    struct gpud_config *cfg);

/* SIGHUP: read the file again (plus the command line's keys, which still
 * win) and copy into live each changed key that can change at run time;
 * log each change. Whole or not at all: a bad file, settings that do not
 * hold together, or a changed key that needs a restart (whose derived
 * values, lease-timeout and idle-timeout from heartbeat, would otherwise
 * be applied without it) leave live as it is and return GERR_INVAL with
 * the reason ("FILE:LINE: ...", or each such key with both values) in
 * err.
 * Returns the number of keys applied otherwise; log's level is then
 * live's. */
int gpud_options_reload(const struct conf_args *args,
			const struct gpud_settings *cli,
			struct gpud_settings *live, struct glog *log,
			char *err, size_t errlen);

#endif
