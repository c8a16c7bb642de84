/* detect_fx.h - shared by the detection tests (test_*_detect.c): run a
 * workload's verify hook over many seeds on one (fabricated) result, and
 * compare the pass rate with the probability the workload's verifier
 * states for it.
 *
 * Threads: one test thread. Ownership: every argument is borrowed.
 */
#ifndef GPUD_DETECT_FX_H
#define GPUD_DETECT_FX_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "workload.h"

/* A cmocka group's state: the first lease of a new job and its honest
 * result, to fabricate from. */
struct detect_fx {
	json_t *params, *spec;
	void *res;
	size_t len;
};

/* Parse args (a JSON object of --KEY VALUE strings), carve the new job's
 * first lease (of units units, checked, when units is not 0; else of the
 * workload's own size), run it on the CPU (2 threads) with no one watching,
 * and keep it all in a new struct detect_fx in *state. */
int detect_setup(void **state, const struct workload *wl, const char *args,
		 uint64_t units);
/* Free what detect_setup made (cmocka's group teardown). */
int detect_teardown(void **state);

/* How many of nseeds verifications of res pass. The seeds are a
 * splitmix64 stream from seed0, as unpredictable to the result as gpud's
 * random ones. Any failure other than GERR_VERIFY fails the test. */
unsigned detect_passes(const struct workload *wl, const json_t *params,
		       const json_t *spec, const void *res, size_t len,
		       unsigned nseeds, uint64_t seed0);

/* Print the measured rate beside the formula's (the figures the README
 * quotes) and assert that they agree: no pass at all where n * p is below
 * 1e-3, else within four binomial standard deviations (plus one). */
void detect_expect(const char *what, double f, unsigned passes, unsigned n,
		   double p);

/* The fraction f of the lease items to fabricate, for label and arrays. */
extern const double detect_fractions[3]; /* 1%, 10%, 100% */

#endif
