/* graveler_fx.h - what the Graveler workload's unit tests (test_graveler.c,
 * test_graveler_split.c) share: a wl_run_io that records progress and the
 * last checkpoint and can stop a run after some steps, parsed job params,
 * and a lease run on the CPU. The helpers fail the running cmocka test on
 * any unexpected outcome. */
#ifndef GPUD_GRAVELER_FX_H
#define GPUD_GRAVELER_FX_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct io_state {
	int stop_after;  /* steps before should_stop says yes; -1 never */
	int steps;
	void *ckpt;      /* the last checkpoint handed over (malloc'ed) */
	size_t ckpt_len;
	int nckpt;
	uint64_t last_progress;
};

/* Canonical params of a job of n battles from seed (a new reference). */
json_t *graveler_fx_params(uint64_t n, uint64_t seed);
/* Run spec on threads CPU threads from ckpt (or NULL) with ios (NULL: no
 * io), expecting rc expect; the result in *res (malloc'ed), *len. */
void graveler_fx_run(json_t *params, json_t *spec, const void *ckpt,
		     size_t ckpt_len, struct io_state *ios, int threads,
		     int expect, void **res, size_t *len);

#endif
