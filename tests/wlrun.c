/* wlrun - test-only (built by tests/meson.build, never installed): run one
 * lease of any workload through its run hook on the CPU and write the
 * result bytes (the workload's own format, no blob header), so a system
 * test's protocol client can tamper with an honest result before it
 * uploads it (tests/system/test_lazy.py).
 *
 *   wlrun WORKLOAD PARAMS_JSON SPEC_JSON OUT [--threads N]
 *         [--blob HASH FILE]...
 *
 * PARAMS_JSON and SPEC_JSON are the lease's params and spec as gpud sent
 * them (JSON objects). --blob serves FILE's bytes (decoded, as a workload
 * reads them) to the run's fetch under HASH: the job's input, an earlier
 * result. Exit 0 when OUT is written, 1 when the run fails, 2 on bad
 * arguments; every failure says why on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fileio.h"
#include "gerr.h"
#include "proto.h"
#include "workload.h"

#define WLRUN_MAX_BLOBS 16

struct wlrun_blob {
	const char *hash, *path;
};

struct wlrun_io {
	struct wlrun_blob blobs[WLRUN_MAX_BLOBS];
	int nblobs;
};

static int io_fetch(void *o, const char *hash, void **ret, size_t *ret_len)
{
	struct wlrun_io *q = o;

	for (int i = 0; i < q->nblobs; i++)
		if (strcmp(q->blobs[i].hash, hash) == 0)
			return fileio_read_all(q->blobs[i].path, PROTO_MAX_BIN,
					       ret, ret_len);
	return GERR_NOTFOUND;
}

static json_t *load_object(const char *text, const char *what)
{
	json_error_t je;
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &je);

	if (!j || !json_is_object(j)) {
		fprintf(stderr, "wlrun: %s is not a JSON object: %s\n", what,
			j ? "not an object" : je.text);
		json_decref(j);
		return NULL;
	}
	return j;
}

static int usage(void)
{
	fprintf(stderr, "usage: wlrun WORKLOAD PARAMS_JSON SPEC_JSON OUT "
		"[--threads N] [--blob HASH FILE]...\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct wlrun_io q = {0};
	struct wl_run_io io = WL_RUN_IO_QUIET(&q, io_fetch);
	struct wl_device dev = {.kind = WL_DEVICE_CPU, .threads = 1};
	const struct workload *wl;
	json_t *params = NULL, *spec = NULL;
	char err[WL_ERRLEN] = "";
	void *res = NULL;
	size_t res_len = 0;
	FILE *out;
	int rc = 1;

	if (argc < 5)
		return usage();
	wl = workload_find(argv[1]);
	if (!wl) {
		fprintf(stderr, "wlrun: unknown workload '%s'\n", argv[1]);
		return 2;
	}
	for (int i = 5; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
			char *end;
			long n = strtol(argv[++i], &end, 10);
			if (*end || n < 1 || n > 256) {
				fprintf(stderr, "wlrun: --threads wants 1..256\n");
				return 2;
			}
			dev.threads = (int)n;
		} else if (strcmp(argv[i], "--blob") == 0 && i + 2 < argc &&
			   q.nblobs < WLRUN_MAX_BLOBS) {
			q.blobs[q.nblobs].hash = argv[i + 1];
			q.blobs[q.nblobs].path = argv[i + 2];
			q.nblobs++;
			i += 2;
		} else {
			return usage();
		}
	}
	params = load_object(argv[2], "PARAMS_JSON");
	spec = params ? load_object(argv[3], "SPEC_JSON") : NULL;
	if (!spec) {
		json_decref(params);
		return 2;
	}
	if (workload_open_all(err, sizeof(err))) {
		fprintf(stderr, "wlrun: cannot open workloads: %s\n", err);
		goto out;
	}
	if (wl->run(workload_ctx(wl), params, spec, NULL, 0, &dev, &io, &res,
		    &res_len, err, sizeof(err))) {
		fprintf(stderr, "wlrun: %s run failed: %s\n", wl->name, err);
		goto out_close;
	}
	out = fopen(argv[4], "wb");
	if (!out || fwrite(res, 1, res_len, out) != res_len) {
		fprintf(stderr, "wlrun: cannot write %s: %s\n", argv[4],
			strerror(errno));
		if (out)
			fclose(out);
		goto out_close;
	}
	if (fclose(out)) {
		fprintf(stderr, "wlrun: cannot write %s: %s\n", argv[4],
			strerror(errno));
		goto out_close;
	}
	rc = 0;
out_close:
	workload_close_all();
out:
	free(res);
	json_decref(spec);
	json_decref(params);
	return rc;
}
