/* store_fx.h - the fixture and helpers shared by the store's unit tests
 * (test_store*.c): a fresh temporary directory and database per test.
 * The helpers fail the running cmocka test on any error. */
#ifndef GPUD_STORE_FX_H
#define GPUD_STORE_FX_H

#include <stdint.h>

#include "store.h"
#include "unit_main.h"

struct fx {
	char dir[64];
	char path[128];
	struct store *st;
};

int fx_setup(void **state);
int fx_teardown(void **state);
/* Close and reopen f->path. */
void reopen(struct fx *f);
/* Replace the fixture's store with a new database old.db in its directory,
 * as a gpud that knew only migrations 1..version made it; reopen(f) then
 * migrates it to the newest schema. */
void open_old(struct fx *f, int version);
/* A job of workload with 100 units; a worker "cpu". */
int64_t add_job(struct store *st, const char *workload);
int64_t add_worker(struct store *st, const char *name);
/* A leased lease (epoch 1) of job. */
struct store_lease add_lease(struct store *st, int64_t job, int64_t worker,
			     uint64_t units);
/* A leased lease of job with units and result "r<id>", verified; its id. */
int64_t add_verified_lease(struct store *st, int64_t job, int64_t worker,
			   uint64_t units);
/* A pending lease (released once: epoch 1, attempts 1). */
int64_t add_pending(struct store *st, int64_t job, int64_t worker);
/* The id of the lease of workloads (a JSON array) that worker claims at
 * now, into *ret (NULL: cleared); 0 when none. */
int64_t claim_at(struct store *st, int64_t worker, const char *workloads,
		 double deadline, double now, struct store_lease *ret);
/* claim_at of graveler with deadline 99 at 40. */
int64_t claim_id(struct store *st, int64_t worker, struct store_lease *ret);
void assert_str_or_null(const char *a, const char *b);
void assert_lease_equal(const struct store_lease *a,
			const struct store_lease *b);
void get_lease(struct store *st, int64_t id, struct store_lease *l);

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

/* A store test program's main: the tests named (T(fn), ...), in order. */
#define FX_MAIN(...) UNIT_MAIN(__VA_ARGS__)

#endif
