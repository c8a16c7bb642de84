/* libFuzzer target: every workload's job parameters and input files. The
 * first byte picks the workload and whether the rest is gpuctl's JSON
 * arguments (parse_params, then extend with the same arguments) or an input
 * file (parse_input). Bad input must be refused with a message, never
 * crash, and accepted parameters must carve a first lease. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "workload.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The workloads' contexts, opened once as gpud's main does. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[WL_ERRLEN] = "";

	(void)argc;
	(void)argv;
	if (workload_open_all(err, sizeof(err)) != 0)
		abort();
	return 0;
}

static json_t *default_params(const struct workload *wl)
{
	/* Parameters a user could submit, for parse_input to extend. */
	static const char *const tries[] = {
		"{\"battles\":\"1000\"}", "{\"to\":\"1000\"}", "{\"box\":\"2x2\"}",
		"{\"random\":\"10\",\"empties\":\"8\",\"seed\":\"1\"}",
		"{\"file\":\"input.txt\"}", "{}",
	};
	char err[WL_ERRLEN];
	uint64_t total;

	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		json_t *args = json_loads(tries[i], 0, NULL), *p = NULL;
		int rc = wl->parse_params(workload_ctx(wl), args, &p, &total, err, sizeof(err));
		json_decref(args);
		if (rc == 0)
			return p;
	}
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct workload *const *all = workload_all();
	size_t n = 0;
	char err[WL_ERRLEN];
	uint64_t total = 0;

	while (all[n])
		n++;
	if (size < 1 || n == 0)
		return 0;
	const struct workload *wl = all[data[0] % n];
	int as_file = (data[0] / n) & 1;
	data++;
	size--;
	if (!as_file) {
		json_t *args = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
		json_t *params = NULL, *spec = NULL, *cursor = NULL;
		uint64_t units = 0;
		int last = 0;
		if (!json_is_object(args)) {
			json_decref(args);
			return 0;
		}
		err[0] = '\0';
		if (wl->parse_params(workload_ctx(wl), args, &params, &total, err, sizeof(err)) == 0) {
			/* A job that names a file is plannable only once
			 * parse_input has seen the file (gpud never carves
			 * before that). */
			int rc = json_object_get(args, "file") && wl->parse_input
				? 0 : wl->carve(workload_ctx(wl), params, NULL, NULL, NULL, 0, &spec, &units, &cursor, &last);
			if (rc != 0 && rc != GERR_DONE && rc != GERR_AGAIN)
				abort();
			json_decref(spec);
			json_decref(cursor);
			if (wl->extend) {
				json_t *np = NULL;
				if (wl->extend(workload_ctx(wl), params, NULL, args, &np, &total, err, sizeof(err)) == 0)
					json_decref(np);
			}
			json_decref(params);
		} else if (err[0] == '\0') {
			abort(); /* refusals must say why */
		}
		json_decref(args);
		return 0;
	}
	if (!wl->parse_input)
		return 0;
	json_t *params = default_params(wl), *np = NULL;
	void *canon = NULL;
	size_t canon_len = 0;
	if (!params)
		return 0;
	err[0] = '\0';
	if (wl->parse_input(workload_ctx(wl), params, data, size, &np, &canon, &canon_len, &total, err,
			    sizeof(err)) == 0) {
		json_decref(np);
		free(canon);
	} else if (err[0] == '\0') {
		abort();
	}
	json_decref(params);
	return 0;
}
