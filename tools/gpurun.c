/* gpurun - run a whole job in this process through the workload interface,
 * with no daemon: parse, carve every lease, run, verify, merge, finish.
 *
 *   gpurun WORKLOAD --KEY VALUE... [--device cpu|cpu:N|cuda:N]
 *          [--lease-units N] [--json]
 *
 * It is the reference the system tests compare gpud's answers with, and a
 * quick way to try a workload on one machine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "gerr.h"
#include "workload.h"

struct quiet_io {
	int unused;
};

static void io_progress(void *o, uint64_t units) { (void)o; (void)units; }
static int io_due(void *o) { (void)o; return 0; }
static int io_checkpoint(void *o, const void *b, size_t n, uint64_t u)
{
	(void)o; (void)b; (void)n; (void)u;
	return 0;
}
static int io_stop(void *o) { (void)o; return 0; }

static int parse_device(const char *s, struct wl_device *dev)
{
	char *end;
	long n;

	memset(dev, 0, sizeof(*dev));
	if (strcmp(s, "cpu") == 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		dev->threads = c > 0 ? (int)c : 1;
		return 0;
	}
	if (strncmp(s, "cpu:", 4) == 0 || strncmp(s, "cuda:", 5) == 0) {
		const char *num = strchr(s, ':') + 1;
		errno = 0;
		n = strtol(num, &end, 10);
		if (errno || end == num || *end || n < 0 || n > 4096)
			return GERR_INVAL;
		if (s[1] == 'p') {
			if (n < 1)
				return GERR_INVAL;
			dev->threads = (int)n;
		} else {
			dev->kind = WL_DEVICE_CUDA;
			dev->index = (int)n;
			dev->threads = 1;
		}
		return 0;
	}
	return GERR_INVAL;
}

int main(int argc, char **argv)
{
	const struct workload *wl;
	json_t *args = json_object(), *params = NULL, *cursor = NULL,
	       *answer = NULL;
	struct wl_device dev;
	uint64_t total = 0, lease_units = 0, leases = 0;
	int as_json = 0, rc = 1;
	char err[WL_ERRLEN] = "";
	struct quiet_io q = {0};
	struct wl_run_io io = {&q, io_progress, io_due, io_checkpoint, io_stop};

	parse_device("cpu", &dev);
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: gpurun WORKLOAD --KEY VALUE... [--device D] "
			"[--lease-units N] [--json]\n");
		return 2;
	}
	wl = workload_find(argv[1]);
	if (!wl) {
		fprintf(stderr, "gpurun: unknown workload '%s'\n", argv[1]);
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			as_json = 1;
			continue;
		}
		if (strncmp(argv[i], "--", 2) != 0 || i + 1 >= argc || strlen(argv[i]) > 64) {
			fprintf(stderr, "gpurun: expected --KEY VALUE at '%s'\n", argv[i]);
			return 2;
		}
		if (strcmp(argv[i], "--device") == 0) {
			if (parse_device(argv[++i], &dev)) {
				fprintf(stderr, "gpurun: --device wants cpu, cpu:N or cuda:N\n");
				return 2;
			}
			continue;
		}
		if (strcmp(argv[i], "--lease-units") == 0) {
			lease_units = strtoull(argv[++i], NULL, 10);
			continue;
		}
		char key[64];
		snprintf(key, sizeof(key), "%s", argv[i] + 2);
		for (char *p = key; *p; p++)
			if (*p == '-')
				*p = '_';
		json_object_set_new(args, key, json_string(argv[++i]));
	}
	if (wl->parse_params(args, &params, &total, err, sizeof(err))) {
		fprintf(stderr, "gpurun: bad %s job: %s\n", wl->name, err);
		json_decref(args);
		return 1;
	}
	if (dev.kind == WL_DEVICE_CUDA) {
		if (!wl->cuda_open || wl->cuda_open(dev.index, &dev.cuda_ctx, err, sizeof(err))) {
			fprintf(stderr, "gpurun: cannot use cuda:%d: %s\n", dev.index,
				wl->cuda_open ? err : "no CUDA path for this workload");
			goto out;
		}
	}
	for (;;) {
		json_t *spec = NULL, *next = NULL, *merged = NULL;
		uint64_t units = 0;
		void *res = NULL;
		size_t res_len = 0;
		int crc = wl->carve(params, cursor, lease_units, &spec, &units, &next);
		if (crc == GERR_DONE)
			break;
		if (crc) {
			fprintf(stderr, "gpurun: carve failed: %s\n", gerr_str(crc));
			goto out;
		}
		crc = wl->run(params, spec, NULL, 0, &dev, &io, &res, &res_len, err, sizeof(err));
		if (!crc)
			crc = wl->verify(params, spec, res, res_len, leases + 1, err, sizeof(err));
		if (!crc)
			crc = wl->merge(params, answer, spec, res, res_len, &merged);
		free(res);
		json_decref(spec);
		json_decref(cursor);
		cursor = next;
		if (crc) {
			fprintf(stderr, "gpurun: lease %llu: %s: %s\n",
				(unsigned long long)leases + 1, gerr_str(crc), err);
			goto out;
		}
		json_decref(answer);
		answer = merged;
		leases++;
	}
	if (wl->finish(params, answer, err, sizeof(err))) {
		fprintf(stderr, "gpurun: final check failed: %s\n", err);
		goto out;
	}
	if (as_json) {
		json_t *out = json_pack("{s:s, s:O, s:O, s:I}", "workload", wl->name,
					"params", params, "answer", answer,
					"leases", (json_int_t)leases);
		json_dumpf(out, stdout, JSON_COMPACT | JSON_SORT_KEYS);
		printf("\n");
		json_decref(out);
	} else {
		char *text = wl->render_text(params, answer);
		printf("%s", text ? text : "");
		free(text);
	}
	rc = 0;
out:
	if (dev.cuda_ctx && wl->cuda_close)
		wl->cuda_close(dev.cuda_ctx);
	json_decref(answer);
	json_decref(cursor);
	json_decref(params);
	json_decref(args);
	return rc;
}
