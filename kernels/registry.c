/* registry.c - the table of workloads, their contexts, and the call gpud
 * makes on every upload to bound it. Adding a workload is one line here
 * and one folder under kernels/. */
#include <stdio.h>
#include <string.h>

#include "blob.h"
#include "gerr.h"
#include "workload.h"

extern const struct workload graveler_workload;
extern const struct workload officers_workload;
extern const struct workload othello_workload;
extern const struct workload sudoku_workload;

static const struct workload *const registry[] = {
	&graveler_workload,
	&officers_workload,
	&othello_workload,
	&sudoku_workload,
	NULL,
};

const struct workload *const *workload_all(void)
{
	return registry;
}

const struct workload *workload_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; registry[i]; i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}

/* The contexts of registry[], in the same order: the one piece of mutable
 * state the workloads share, written only by workload_open_all and
 * workload_close_all (main's thread, while no hook runs). */
static void *contexts[sizeof(registry) / sizeof(registry[0])];

int workload_open_all(char *err, size_t errlen)
{
	for (size_t i = 0; registry[i]; i++) {
		int rc;

		if (!registry[i]->open)
			continue;
		char why[WL_ERRLEN] = "";
		rc = registry[i]->open(&contexts[i], why, sizeof(why));
		if (rc) {
			snprintf(err, errlen, "%s: %s", registry[i]->name, why);
			workload_close_all();
			return rc;
		}
	}
	return 0;
}

void workload_close_all(void)
{
	for (size_t i = 0; registry[i]; i++) {
		if (registry[i]->close && contexts[i])
			registry[i]->close(contexts[i]);
		contexts[i] = NULL;
	}
}

void *workload_ctx(const struct workload *wl)
{
	for (size_t i = 0; wl && registry[i]; i++)
		if (registry[i] == wl)
			return contexts[i];
	return NULL;
}

int workload_blob_max(const struct workload *wl, const char *params,
		      const char *spec, int is_result, uint64_t *ret_max,
		      char *err, size_t errlen)
{
	json_t *p = params ? json_loads(params, 0, NULL) : NULL;
	json_t *s = spec ? json_loads(spec, 0, NULL) : NULL;
	int rc;

	if (p && s)
		rc = wl->blob_max(workload_ctx(wl), p, s, is_result, ret_max,
				  err, errlen);
	else
		rc = gerr_fail(GERR_CORRUPT, err, errlen, "%s: the job's params "
			       "or the lease's spec do not parse", wl->name);
	json_decref(p);
	json_decref(s);
	return rc;
}

/* zlib's compressBound, in 64 bits, plus blob.h's version-2 overheads:
 * per chunk (at least 64 KiB raw each) a 4-byte length, a sync flush's
 * empty stored block (5 bytes) and a deflate block header's share (13),
 * and the index's 8 bytes, the zlib header and trailer. */
uint64_t workload_comp_bound(uint64_t raw_len)
{
	uint64_t chunks = raw_len / (64u << 10) + 1;

	return BLOB_HEADER_LEN + raw_len + (raw_len >> 12) + (raw_len >> 14) +
	       (raw_len >> 25) + 13 + 22 * chunks + 14;
}

uint64_t workload_upload_bound(const struct workload *wl, const char *params,
			       const char *spec)
{
	uint64_t ck = 0, res = 0;
	char err[WL_ERRLEN];

	if (!wl)
		return 0;
	if (!params || !spec)
		return workload_comp_bound(wl->blob_raw_max < BLOB_MAX_RAW
					   ? wl->blob_raw_max : BLOB_MAX_RAW);
	if (workload_blob_max(wl, params, spec, 0, &ck, err, sizeof(err)) ||
	    workload_blob_max(wl, params, spec, 1, &res, err, sizeof(err)))
		return 0;
	if (res > ck)
		ck = res;
	return workload_comp_bound(ck < BLOB_MAX_RAW ? ck : BLOB_MAX_RAW);
}
