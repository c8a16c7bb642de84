/* woptions.h - gpuworker's settings: the one table behind its long
 * options and the keys of gpuworker.conf (conf.h), their defaults and the
 * keys that must be set.
 *
 * Ownership: a struct worker_settings belongs to its caller and holds its
 * strings. Threads: main's thread.
 */
#ifndef GPUD_WOPTIONS_H
#define GPUD_WOPTIONS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "log.h"
#include "place.h"
#include "workload.h"

#define WORKER_CONF_PATH "/etc/gpud/gpuworker.conf"
#define WORKER_HOST_MAX 253
#define WORKER_THREADS_MAX 4096
#define WORKER_CUDA_INDEX_MAX 255

struct worker_connect {
	char host[WORKER_HOST_MAX + 1]; /* "" until set */
	char port[6];
};

struct worker_device {
	char name[32];   /* "cpu", "cuda:0"; "" until set */
	enum wl_device_kind kind;
	int index;
	int threads;
	int threads_given; /* "cpu:THREADS" rather than every online CPU */
};

struct worker_settings {
	struct worker_connect connect;
	char token_file[PATH_MAX];
	struct worker_device device;
	char instance[PLACE_INSTANCE_MAX + 1]; /* "": place_default_instance */
	double checkpoint_interval;
	enum glog_level log_level;
	uint64_t max_leases; /* 0: no limit */
	int exit_when_idle;
	int no_run_ahead;
};

extern const struct conf_table worker_options;

void woptions_defaults(struct worker_settings *ret);

/* The keys every worker needs (connect, token-file, device). Returns 0
 * or GERR_INVAL with the reason in err. */
int woptions_finish(const struct worker_settings *s, char *err, size_t errlen);

#endif
