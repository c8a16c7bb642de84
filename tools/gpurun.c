/* gpurun - run a whole job in this process through the workload interface,
 * with no daemon: parse, carve every lease, run, verify, merge, finish.
 *
 *   gpurun WORKLOAD --KEY VALUE... [--file F] [--device cpu|cpu:N|cuda:N]
 *          [--lease-units N] [--json]
 *
 * Blobs (the job's input, earlier results) live in memory here and are
 * served to runs through io->fetch, as gpud serves them to workers.
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

#include "blob.h"
#include "fileio.h"
#include "gerr.h"
#include "proto.h"
#include "parts_list.h"
#include "workload.h"

/* The in-memory blob table. */
struct mem_blob {
	char hash[BLOB_HASH_HEX];
	void *bytes;
	size_t len;
	struct mem_blob *next;
};

struct quiet_io {
	struct mem_blob *blobs;
};

static const char *blob_keep(struct quiet_io *q, void *bytes, size_t len)
{
	struct mem_blob *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	blob_hash_hex(bytes, len, b->hash);
	b->bytes = bytes;
	b->len = len;
	b->next = q->blobs;
	q->blobs = b;
	return b->hash;
}

static int io_fetch(void *o, const char *hash, void **ret, size_t *ret_len)
{
	struct quiet_io *q = o;

	for (struct mem_blob *b = q->blobs; b; b = b->next) {
		if (strcmp(b->hash, hash) == 0) {
			*ret = malloc(b->len ? b->len : 1);
			if (!*ret)
				return GERR_NOMEM;
			memcpy(*ret, b->bytes, b->len);
			*ret_len = b->len;
			return 0;
		}
	}
	return GERR_NOTFOUND;
}

static const void *io_bytes(struct quiet_io *q, const char *hash)
{
	for (struct mem_blob *b = q->blobs; b; b = b->next)
		if (strcmp(b->hash, hash) == 0)
			return b->bytes;
	return NULL;
}

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
	struct wl_run_io io = WL_RUN_IO_QUIET(&q, io_fetch);
	const char *file = NULL;
	struct parts_list parts;
	void *ctx;

	parts_list_init(&parts);
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
		if (strcmp(argv[i], "--file") == 0) {
			const char *base;
			file = argv[++i];
			base = strrchr(file, '/');
			/* As gpud does: the workload sees the file's name. */
			json_object_set_new(args, "file", json_string(base ? base + 1 : file));
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
	if (workload_open_all(err, sizeof(err))) {
		fprintf(stderr, "gpurun: cannot open workload %s\n", err);
		json_decref(args);
		return 1;
	}
	ctx = workload_ctx(wl);
	if (wl->parse_params(ctx, args, &params, &total, err, sizeof(err))) {
		fprintf(stderr, "gpurun: bad %s job: %s\n", wl->name, err);
		goto out;
	}
	if (file) {
		void *raw = NULL, *canon = NULL;
		size_t raw_len = 0, canon_len = 0;
		json_t *np = NULL;
		if (!wl->parse_input) {
			fprintf(stderr, "gpurun: %s takes no input file\n", wl->name);
			goto out;
		}
		if (fileio_read_all(file, PROTO_MAX_BIN, &raw, &raw_len)) {
			fprintf(stderr, "gpurun: cannot read %s (missing, unreadable or over %u bytes)\n",
				file, PROTO_MAX_BIN);
			goto out;
		}
		int prc = wl->parse_input(ctx, params, raw, raw_len, &np, &canon, &canon_len,
					  &total, err, sizeof(err));
		free(raw);
		if (prc) {
			fprintf(stderr, "gpurun: %s: %s\n", file, err);
			goto out;
		}
		const char *h = blob_keep(&q, canon, canon_len);
		if (!h) {
			free(canon);
			json_decref(np);
			goto out;
		}
		json_object_set_new(np, "input", json_string(h));
		json_decref(params);
		params = np;
	}
	if (dev.kind == WL_DEVICE_CUDA) {
		if (!wl->cuda_open || wl->cuda_open(ctx, dev.index, &dev.cuda_ctx, err, sizeof(err))) {
			fprintf(stderr, "gpurun: cannot use cuda:%d: %s\n", dev.index,
				wl->cuda_open ? err : "no CUDA path for this workload");
			goto out;
		}
	}
	for (;;) {
		json_t *spec = NULL, *next = NULL, *merged = NULL, *note = NULL;
		int last = 0;
		uint64_t units = 0;
		void *res = NULL;
		size_t res_len = 0;
		const char *hash = NULL;
		int crc = wl->carve(ctx, params, cursor, answer, &parts.pub,
				    lease_units, &spec, &units, &next, &last);
		if (crc == GERR_DONE)
			break;
		if (crc) {
			/* Every result is merged before the next carve here, so a
			 * planner that still waits (GERR_AGAIN) is stuck. */
			fprintf(stderr, "gpurun: carve failed: %s\n", gerr_str(crc));
			goto out;
		}
		crc = wl->run(ctx, params, spec, NULL, 0, &dev, &io, &res, &res_len, err, sizeof(err));
		if (!crc)
			crc = wl->verify(ctx, params, spec, res, res_len, leases + 1, err, sizeof(err));
		if (crc == WL_VERIFY_SPOT) /* no other worker here to ask */
			crc = 0;
		if (!crc) {
			hash = blob_keep(&q, res, res_len);
			if (hash)
				res = NULL; /* the table owns it now */
			else
				crc = GERR_NOMEM;
		}
		if (!crc)
			crc = wl->merge(ctx, params, answer, spec,
					hash ? io_bytes(&q, hash) : NULL, res_len,
					hash, &merged, &note);
		if (!crc)
			crc = parts_list_add(&parts, spec, units, hash, note);
		json_decref(note);
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
	if (wl->finish(ctx, params, answer, &parts.pub, err, sizeof(err))) {
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
		char *text = wl->render_text(ctx, params, answer, &parts.pub);
		printf("%s", text ? text : "");
		free(text);
	}
	rc = 0;
out:
	if (dev.cuda_ctx && wl->cuda_close)
		wl->cuda_close(dev.cuda_ctx);
	parts_list_clear(&parts);
	workload_close_all();
	json_decref(answer);
	json_decref(cursor);
	json_decref(params);
	json_decref(args);
	while (q.blobs) {
		struct mem_blob *n = q.blobs->next;
		free(q.blobs->bytes);
		free(q.blobs);
		q.blobs = n;
	}
	return rc;
}
