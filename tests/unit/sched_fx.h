/* sched_fx.h - what the lease policy's unit tests (test_scheduler.c,
 * test_replica.c) share: a fresh temporary directory holding a store, and
 * a Graveler job in it. The helpers fail the running cmocka test on any
 * error. */
#ifndef GPUD_SCHED_FX_H
#define GPUD_SCHED_FX_H

#include <stdint.h>

#include <jansson.h>

#include "scheduler.h"
#include "store.h"
#include "workload.h"

/* mkdtemp a directory /tmp/gpud-TAG-XXXXXX into dir and open a store
 * (gpud.db) in it; *ret_st is the caller's until sched_fx_close. */
void sched_fx_open(char dir[64], const char *tag, struct store **ret_st);
/* A Graveler job of battles battles from seed, priority 1000: its id, and
 * its canonical params in *ret_params (a new reference). */
int64_t sched_fx_graveler(struct store *st, const char *battles,
			  const char *seed, json_t **ret_params);
/* Verify the stored result of (lease, epoch) with seed 42 and commit the
 * verdict (both steps must succeed): 1 when it passed, 0 when refused;
 * the job's end (sched_verify's job_finished) in *ret_finished unless
 * NULL. */
int sched_fx_verify(struct store *st, const struct sched_policy *pol,
		    int64_t lease, uint64_t epoch, int *ret_finished);
/* Close st (NULL-safe), drop params, remove dir and all in it. */
void sched_fx_close(const char *dir, struct store *st, json_t *params);

#endif
