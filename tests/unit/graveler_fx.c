/* graveler_fx.c - the Graveler unit tests' shared runs (graveler_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graveler_fx.h"
#include "workload.h"

extern const struct workload graveler_workload;
static const struct workload *W = &graveler_workload;

static void io_progress(void *o, uint64_t done)
{
	struct io_state *s = o;
	assert_true(done >= s->last_progress);
	s->last_progress = done;
	s->steps++;
}

static int io_due(void *o)
{
	(void)o;
	return 1;
}

static int io_ckpt(void *o, const void *bytes, size_t len, uint64_t done)
{
	struct io_state *s = o;
	(void)done;
	free(s->ckpt);
	s->ckpt = malloc(len);
	memcpy(s->ckpt, bytes, len);
	s->ckpt_len = len;
	s->nckpt++;
	return 0;
}

static int io_stop(void *o)
{
	struct io_state *s = o;
	return s->stop_after >= 0 && s->steps >= s->stop_after;
}

json_t *graveler_fx_params(uint64_t n, uint64_t seed)
{
	char sb[32];
	json_t *args, *p = NULL;
	uint64_t total;
	char err[WL_ERRLEN];
	snprintf(sb, sizeof(sb), "%llu", (unsigned long long)seed);
	args = json_pack("{s:I, s:s}", "battles", (json_int_t)n, "seed", sb);
	assert_int_equal(W->parse_params(workload_ctx(W), args, &p, &total, err, sizeof(err)), 0);
	assert_int_equal(total, n);
	json_decref(args);
	return p;
}

void graveler_fx_run(json_t *params, json_t *spec, const void *ckpt,
		      size_t ckpt_len, struct io_state *ios, int threads,
		      int expect, void **res, size_t *len)
{
	struct wl_run_io io = {ios, io_progress, io_due, io_ckpt, io_stop, NULL};
	struct wl_device dev = {WL_DEVICE_CPU, 0, threads, NULL};
	char err[WL_ERRLEN] = "";
	int rc = W->run(workload_ctx(W), params, spec, ckpt, ckpt_len, &dev, ios ? &io : NULL,
			res, len, err, sizeof(err));
	if (rc != expect)
		fprintf(stderr, "run: %d %s\n", rc, err);
	assert_int_equal(rc, expect);
}

