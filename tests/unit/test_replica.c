/* Unit tests of replication (daemon/sched/replica.c through sched_merge.c)
 * on a real store and the Graveler workload, without sockets: --check full
 * with two workers, a disagreement decided by a third result, an outvoted
 * primary taking the agreeing result, verification repeated after a
 * restart, adaptive replication (--trust-after), a spot replica drawn by
 * verification (WL_VERIFY_SPOT) and a group without a quorum; and
 * replica_judge alone, on rows made by hand (no store). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "blob.h"
#include "gerr.h"
#include "graveler/graveler.h"
#include "replica.h"
#include "sched_fx.h"
#include "scheduler.h"
#include "store.h"
#include "unit_main.h"
#include "workload.h"

#define LEASE_UNITS (1u << 20)
#define HIST_BINS 232 /* graveler.h: a Graveler result's histogram at byte 48 */

struct fx {
	char dir[64];
	struct store *st;
	struct sched_policy pol;
	const struct workload *wl;
	int64_t w[4], job;
	json_t *params;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char name[8];

	f->wl = workload_find("graveler");
	sched_fx_open(f->dir, "replica", &f->st);
	f->pol = (struct sched_policy){.lease_target_s = 60,
		.lease_units = LEASE_UNITS, .lease_timeout_s = 30,
		.max_failures = 3, .quarantine_after = 5, .data_dir = f->dir};
	f->job = sched_fx_graveler(f->st, "3145728", "7", &f->params);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		assert_int_equal(store_worker_upsert(f->st, name, "", "cpu", 1000,
						     &f->w[i]), 0);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	sched_fx_close(f->dir, f->st, f->params);
	free(f);
	return 0;
}

/* Worker w's claim: the lease granted, or 0 when none. */
static int64_t claim(struct fx *f, int w, struct store_lease *ret)
{
	struct sched_claim c = {0};
	int64_t id;

	c.pol = &f->pol;
	c.worker_id = f->w[w];
	c.workloads_json = strdup("[\"graveler\"]");
	sched_claim(f->st, &c);
	assert_true(c.rc == 0 || c.rc == GERR_NOTFOUND);
	id = c.rc == 0 ? c.lease.id : 0;
	if (ret && id) {
		*ret = c.lease;
		memset(&c.lease, 0, sizeof(c.lease));
	}
	sched_claim_clear(&c);
	return id;
}

/* A Graveler result with two battles of one bin moved, one a bin down and
 * one a bin up, below the top bin: the total, the top bin and the sum of
 * counts (which the segment records must add up to) are unchanged, and the
 * last segment's sketch is changed to match the histogram's (a lie in one
 * record of 4,096, which verification with this file's seed does not
 * draw), so the sampled verification passes it. */
static void lie(uint8_t *raw)
{
	uint64_t h[HIST_BINS];
	uint32_t nseg, sk;
	int top = 0;

	memcpy(h, raw + 48, sizeof(h));
	memcpy(&nseg, raw + 36, 4);
	for (int i = 0; i < HIST_BINS; i++)
		if (h[i])
			top = i;
	for (int i = top - 2; i > 0; i--)
		if (h[i] >= 2) {
			h[i] -= 2;
			h[i - 1]++;
			h[i + 1]++;
			uint8_t *p = raw + GRAVELER_HDR_LEN + 5 * (size_t)nseg +
				     4 * (size_t)(nseg - 1);
			memcpy(&sk, p, 4);
			sk += graveler_sketch_word((unsigned)i - 1) +
			      graveler_sketch_word((unsigned)i + 1) -
			      2 * graveler_sketch_word((unsigned)i);
			memcpy(p, &sk, 4);
			break;
		}
	memcpy(raw + 48, h, sizeof(h));
}

/* Run lease l (held by worker w), upload its result (a lie if asked),
 * verify it, its verification flagged for a spot replica when spot is
 * set (as WL_VERIFY_SPOT does; Graveler never answers it). Returns the
 * verification's outcome in *v (cleared by the caller with
 * sched_verify_clear). */
static void compute_spot(struct fx *f, int w, const struct store_lease *l,
			 int liar, int spot, struct sched_verify *v)
{
	struct wl_device dev = {.kind = WL_DEVICE_CPU, .threads = 1};
	struct sched_upload u = {0};
	json_t *spec = json_loads(l->spec, 0, NULL);
	void *res = NULL;
	size_t len = 0;
	char err[256];

	assert_int_equal(f->wl->run(workload_ctx(f->wl), f->params, spec, NULL,
				    0, &dev, NULL, &res, &len, err,
				    sizeof(err)), 0);
	json_decref(spec);
	if (liar)
		lie(res);
	u.pol = &f->pol;
	u.is_result = 1;
	u.lease_id = l->id;
	u.worker_id = f->w[w];
	u.epoch = l->epoch;
	u.units_done = l->units;
	assert_int_equal(blob_encode(BLOB_RESULT, "graveler", l->id, l->epoch,
				     res, len, &u.blob, &u.blob_len), 0);
	free(res);
	sched_upload_load(f->st, &u);
	assert_int_equal(u.rc, 0);
	sched_upload_check(&u);
	assert_int_equal(u.rc, 0);
	sched_upload_commit(f->st, &u);
	assert_int_equal(u.rc, 0);
	sched_upload_clear(&u);
	memset(v, 0, sizeof(*v));
	v->pol = &f->pol;
	v->lease_id = l->id;
	v->epoch = l->epoch;
	v->seed = 42;
	sched_verify_load(f->st, v);
	assert_int_equal(v->rc, 0);
	sched_verify_check(v);
	assert_true(v->passed);
	assert_false(v->spot);
	v->spot = spot;
	sched_verify_commit(f->st, v);
	assert_int_equal(v->rc, 0);
}

static void compute(struct fx *f, int w, const struct store_lease *l,
		    int liar, struct sched_verify *v)
{
	compute_spot(f, w, l, liar, 0, v);
}

/* Free up to three leases' rows (NULL: none). */
static void leases_clear(struct store_lease *a, struct store_lease *b,
			 struct store_lease *c)
{
	store_lease_clear(a);
	if (b)
		store_lease_clear(b);
	if (c)
		store_lease_clear(c);
}

/* What the verification of worker w's result of l comes to: it waits for
 * another result (WAITS), decides its group (QUORUM), or either (ANY). */
enum expect { ANY, WAITS, QUORUM };

static void settle(struct fx *f, int w, const struct store_lease *l,
		   int liar, enum expect e)
{
	struct sched_verify v;

	compute(f, w, l, liar, &v);
	if (e == WAITS)
		assert_true(v.waiting);
	if (e == QUORUM)
		assert_true(v.quorum);
	sched_verify_clear(&v);
}

/* The verification of a result that is already stored (a restart). */
static void reverify(struct fx *f, int64_t id, uint64_t epoch,
		     struct sched_verify *v)
{
	memset(v, 0, sizeof(*v));
	v->pol = &f->pol;
	v->lease_id = id;
	v->epoch = epoch;
	v->seed = 43;
	sched_verify_load(f->st, v);
	assert_int_equal(v->rc, 0);
	sched_verify_check(v);
	sched_verify_commit(f->st, v);
	assert_int_equal(v->rc, 0);
}

static struct store_instance *group(struct fx *f, int64_t primary,
				    size_t *n)
{
	struct store_instance *g = NULL;

	assert_int_equal(store_lease_group(f->st, primary, &g, n), 0);
	return g;
}

static uint32_t streak(struct fx *f, int w)
{
	uint32_t s = 0;
	uint64_t c = 0;

	assert_int_equal(store_worker_streak(f->st, f->w[w], &s, &c), 0);
	return s;
}

static uint32_t failures(struct fx *f, int w)
{
	struct store_worker x = {0};
	uint32_t n;

	assert_int_equal(store_worker_get(f->st, f->w[w], &x), 0);
	n = x.failures;
	store_worker_clear(&x);
	return n;
}

static uint64_t verified_units(struct fx *f)
{
	struct store_job j = {0};
	uint64_t u;

	assert_int_equal(store_job_get(f->st, f->job, &j), 0);
	u = j.units_verified;
	store_job_clear(&j);
	return u;
}

/* --check full: the replica is pending as soon as the lease is carved,
 * never for the same worker; the two results merge once. */
/* Nor may another process of the same credential confirm a result: the
 * twin of w0 gets a new lease, w1 (another credential) the replica. */
static void test_full_other_credential(void **state)
{
	struct fx *f = *state;
	struct store_lease p = {0};
	int64_t w2 = f->w[2];

	assert_int_equal(store_job_set_replicate(f->st, f->job, 1), 0);
	assert_true(claim(f, 0, &p) > 0);
	assert_int_equal(store_worker_upsert(f->st, "w0", "twin", "cpu", 1000,
					     &f->w[2]), 0);
	assert_int_equal(claim(f, 2, NULL), p.id + 2);
	f->w[2] = w2;
	assert_int_equal(claim(f, 1, NULL), p.id + 1);
	store_lease_clear(&p);
}

static void test_full_two_workers(void **state)
{
	struct fx *f = *state;
	struct store_lease p = {0}, r = {0}, p2 = {0};
	struct sched_verify v;
	struct store_instance *g;
	uint64_t c[LEASE_NSTATES], rc[LEASE_NSTATES], part_n = 9, progress = 0;
	size_t n;

	assert_int_equal(store_job_set_replicate(f->st, f->job, 1), 0);
	assert_true(claim(f, 0, &p) > 0);
	g = group(f, p.id, &n);
	assert_int_equal(n, 2);
	assert_int_equal(g[1].replica_of, p.id);
	assert_int_equal(g[1].l.state, LEASE_PENDING);
	store_instance_free_array(g, n);
	/* w0 may not take its own lease's replica: it gets a new lease. */
	assert_true(claim(f, 0, &p2) > 0);
	assert_int_equal(p2.id, p.id + 2);
	assert_int_equal(claim(f, 1, &r), p.id + 1);
	settle(f, 0, &p, 0, WAITS);
	assert_int_equal(verified_units(f), 0);
	compute(f, 1, &r, 0, &v);
	assert_true(v.quorum);
	assert_int_equal(v.lease_id, p.id); /* the primary merged */
	sched_verify_clear(&v);
	assert_int_equal(verified_units(f), LEASE_UNITS);
	assert_int_equal(store_part_count(f->st, f->job, &part_n), 0);
	assert_int_equal(part_n, 1);
	assert_int_equal(store_lease_counts(f->st, f->job, c), 0);
	assert_int_equal(store_replica_counts(f->st, f->job, rc), 0);
	assert_int_equal(c[LEASE_VERIFIED], 1);
	assert_int_equal(c[LEASE_LEASED], 1);
	assert_int_equal(rc[LEASE_VERIFIED], 1);
	assert_int_equal(rc[LEASE_PENDING], 1);
	/* Progress counts the primaries only. */
	assert_int_equal(store_job_units_progress(f->st, f->job, &progress), 0);
	assert_int_equal(progress, LEASE_UNITS);
	assert_int_equal(streak(f, 0), 1);
	assert_int_equal(streak(f, 1), 1);
	leases_clear(&p, &p2, &r);
}

/* --trust-after 1: w0's first result waits for a replica; w1 lies on it,
 * a third result (w2) decides, w1 is charged and its replica failed. */
static void test_disagreement_third_decides(void **state)
{
	struct fx *f = *state;
	struct store_lease p = {0}, r = {0}, r2 = {0};
	struct store_instance *g;
	struct store_job j = {0};
	size_t n;

	f->pol.trust_after = 1;
	assert_true(claim(f, 0, &p) > 0);
	settle(f, 0, &p, 0, WAITS);
	assert_int_equal(claim(f, 1, &r), p.id + 1);
	settle(f, 1, &r, 1, WAITS);
	assert_int_equal(store_job_get(f->st, f->job, &j), 0);
	assert_non_null(strstr(j.reason, "disagree"));
	store_job_clear(&j);
	/* Neither w0 nor w1 may take the deciding replica. */
	assert_true(claim(f, 0, NULL) != p.id + 2);
	assert_true(claim(f, 1, NULL) != p.id + 2);
	assert_int_equal(claim(f, 2, &r2), p.id + 2);
	settle(f, 2, &r2, 0, QUORUM);
	g = group(f, p.id, &n);
	assert_int_equal(n, 3);
	assert_int_equal(g[0].l.state, LEASE_VERIFIED);
	assert_int_equal(g[0].l.worker_id, f->w[0]);
	assert_int_equal(g[1].l.state, LEASE_FAILED);
	assert_non_null(strstr(g[1].l.last_error, "outvoted"));
	assert_int_equal(g[2].l.state, LEASE_VERIFIED);
	store_instance_free_array(g, n);
	assert_int_equal(failures(f, 1), 1);
	assert_int_equal(streak(f, 1), 0);
	assert_int_equal(failures(f, 0), 0);
	assert_int_equal(streak(f, 0), 1);
	assert_int_equal(streak(f, 2), 1);
	assert_int_equal(verified_units(f), LEASE_UNITS);
	leases_clear(&p, &r, &r2);
}

/* The primary's worker lied: the agreeing replicas' result takes its
 * place; the liar is charged and credited nothing. */
static void test_primary_outvoted(void **state)
{
	struct fx *f = *state;
	struct store_worker w = {0};
	struct store_lease p = {0}, r = {0}, r2 = {0};
	struct store_instance *g;
	size_t n;

	assert_int_equal(store_job_set_replicate(f->st, f->job, 1), 0);
	assert_true(claim(f, 0, &p) > 0);
	settle(f, 0, &p, 1, ANY);
	assert_int_equal(claim(f, 1, &r), p.id + 1);
	settle(f, 1, &r, 0, WAITS);
	assert_int_equal(claim(f, 2, &r2), p.id + 2);
	settle(f, 2, &r2, 0, QUORUM);
	g = group(f, p.id, &n);
	assert_int_equal(n, 3);
	assert_int_equal(g[0].l.state, LEASE_VERIFIED);
	assert_int_equal(g[0].l.worker_id, 0);
	assert_string_equal(g[0].l.result, g[2].l.result);
	assert_int_equal(g[1].l.state, LEASE_VERIFIED);
	store_instance_free_array(g, n);
	assert_int_equal(failures(f, 0), 1);
	assert_int_equal(store_worker_get(f->st, f->w[0], &w), 0);
	assert_int_equal(w.units_done, 0);
	store_worker_clear(&w);
	assert_int_equal(verified_units(f), LEASE_UNITS);
	leases_clear(&p, &r, &r2);
}

/* After a restart every done result is verified again: a waiting primary
 * keeps waiting (no second replica), and a replica whose result is
 * stored, verified again, decides as it would have. */
static void test_restart_verifies_again(void **state)
{
	struct fx *f = *state;
	struct sched_upload u = {0};
	struct store_lease p = {0}, r = {0};
	struct sched_verify v;
	struct store_instance *g;
	struct wl_device dev = {.kind = WL_DEVICE_CPU, .threads = 1};
	json_t *spec;
	void *res = NULL;
	size_t n, len = 0;
	char err[256];

	assert_int_equal(store_job_set_replicate(f->st, f->job, 1), 0);
	assert_true(claim(f, 0, &p) > 0);
	settle(f, 0, &p, 0, ANY);
	reverify(f, p.id, p.epoch, &v);
	assert_true(v.passed && v.waiting);
	sched_verify_clear(&v);
	g = group(f, p.id, &n);
	assert_int_equal(n, 2);
	store_instance_free_array(g, n);
	/* The replica's result is stored, then gpud dies before verifying. */
	assert_int_equal(claim(f, 1, &r), p.id + 1);
	spec = json_loads(r.spec, 0, NULL);
	assert_int_equal(f->wl->run(workload_ctx(f->wl), f->params, spec, NULL,
				    0, &dev, NULL, &res, &len, err,
				    sizeof(err)), 0);
	json_decref(spec);
	u.pol = &f->pol;
	u.is_result = 1;
	u.lease_id = r.id;
	u.worker_id = f->w[1];
	u.epoch = r.epoch;
	u.units_done = r.units;
	assert_int_equal(blob_encode(BLOB_RESULT, "graveler", r.id, r.epoch,
				     res, len, &u.blob, &u.blob_len), 0);
	free(res);
	sched_upload_load(f->st, &u);
	sched_upload_check(&u);
	sched_upload_commit(f->st, &u);
	assert_int_equal(u.rc, 0);
	sched_upload_clear(&u);
	/* Recovery verifies both done leases, primary first. */
	reverify(f, p.id, p.epoch, &v);
	assert_true(v.waiting); /* the replica is not checked yet */
	sched_verify_clear(&v);
	reverify(f, r.id, r.epoch, &v);
	assert_true(v.quorum);
	sched_verify_clear(&v);
	assert_int_equal(verified_units(f), LEASE_UNITS);
	leases_clear(&p, &r, NULL);
}

/* A result that cannot be read back to be compared is computed again,
 * verified in full again (not taken as checked), and charged to no one. */
static void test_unreadable_result(void **state)
{
	struct fx *f = *state;
	struct store_lease p = {0}, r = {0}, p2 = {0}, l = {0};
	struct sched_verify v;
	int64_t of;
	int checked = 1;

	assert_int_equal(store_job_set_replicate(f->st, f->job, 1), 0);
	assert_true(claim(f, 0, &p) > 0);
	settle(f, 0, &p, 0, ANY);
	assert_int_equal(store_lease_get(f->st, p.id, &l), 0);
	assert_int_equal(blob_store_remove(f->dir, l.result), 0);
	store_lease_clear(&l);
	assert_int_equal(claim(f, 1, &r), p.id + 1);
	settle(f, 1, &r, 0, WAITS);
	assert_int_equal(store_lease_get(f->st, p.id, &l), 0);
	assert_int_equal(l.state, LEASE_PENDING);
	assert_null(l.result);
	assert_int_equal(l.failures, 0);
	store_lease_clear(&l);
	assert_int_equal(store_lease_replica_of(f->st, p.id, &of, &checked), 0);
	assert_int_equal(checked, 0);
	assert_int_equal(failures(f, 0), 0);
	assert_int_equal(claim(f, 2, &p2), p.id);
	compute(f, 2, &p2, 0, &v);
	assert_true(v.quorum);
	assert_int_equal(v.seconds > 0, 1);
	sched_verify_clear(&v);
	assert_int_equal(verified_units(f), LEASE_UNITS);
	leases_clear(&p, &p2, &r);
}

/* --trust-after 2: a worker's results are replicated until two in a row
 * agree with another worker's; then they merge at once. */
static void test_trust_after(void **state)
{
	struct fx *f = *state;
	struct store_lease l = {0}, r = {0};
	struct sched_verify v;

	f->pol.trust_after = 2;
	for (int k = 0; k < 2; k++) {
		assert_true(claim(f, 0, &l) > 0);
		settle(f, 0, &l, 0, WAITS);
		assert_int_equal(claim(f, 1, &r), l.id + 1);
		settle(f, 1, &r, 0, QUORUM);
		store_lease_clear(&l);
		store_lease_clear(&r);
	}
	assert_int_equal(streak(f, 0), 2);
	assert_true(claim(f, 0, &l) > 0);
	compute(f, 0, &l, 0, &v);
	assert_false(v.waiting || v.quorum); /* merged as it is */
	assert_int_equal(v.job_finished, 1);
	sched_verify_clear(&v);
	assert_int_equal(verified_units(f), 3 * LEASE_UNITS);
	store_lease_clear(&l);
}

static uint64_t events(struct fx *f, const char *kind)
{
	uint64_t n = 0;

	assert_int_equal(store_event_count(f->st, kind, f->job, &n), 0);
	return n;
}

/* A spot replica drawn (WL_VERIFY_SPOT): merged as it is while no worker
 * of another credential has claimed the workload (another process of the
 * same credential does not count), with an event; asked for, as
 * --trust-after asks, once one has; a lie in it is then outvoted. */
static void test_spot_replica(void **state)
{
	struct fx *f = *state;
	struct store_lease l = {0}, r = {0}, r2 = {0};
	struct store_instance *g;
	struct sched_verify v;
	int64_t twin;
	size_t n;

	/* w0 alone, and a second process of w0's credential. */
	assert_int_equal(store_worker_upsert(f->st, "w0", "twin", "cpu", 1000,
					     &twin), 0);
	assert_int_equal(store_rate_register(f->st, twin, "[\"graveler\"]",
					     1000), 0);
	assert_true(claim(f, 0, &l) > 0);
	compute_spot(f, 0, &l, 0, 1, &v);
	assert_false(v.waiting || v.quorum);
	sched_verify_clear(&v);
	assert_int_equal(events(f, "spot_skipped"), 1);
	assert_int_equal(verified_units(f), LEASE_UNITS);
	g = group(f, l.id, &n);
	assert_int_equal(n, 1);
	store_instance_free_array(g, n);
	store_lease_clear(&l);

	/* w1 (another credential) claims the workload: w0's next spot-drawn
	 * lease waits for another result, and w0's lie in it is outvoted by
	 * w1's and w2's. */
	assert_int_equal(store_rate_register(f->st, f->w[1], "[\"graveler\"]",
					     1000), 0);
	assert_true(claim(f, 0, &l) > 0);
	compute_spot(f, 0, &l, 1, 1, &v);
	assert_true(v.waiting);
	sched_verify_clear(&v);
	assert_int_equal(events(f, "spot_skipped"), 1);
	assert_int_equal(verified_units(f), LEASE_UNITS);
	assert_int_equal(claim(f, 1, &r), l.id + 1);
	settle(f, 1, &r, 0, WAITS); /* disagrees: a third decides */
	assert_int_equal(claim(f, 2, &r2), l.id + 2);
	settle(f, 2, &r2, 0, QUORUM);
	g = group(f, l.id, &n);
	assert_int_equal(n, 3);
	assert_int_equal(g[0].l.state, LEASE_VERIFIED);
	assert_int_equal(g[0].l.worker_id, 0); /* took the agreed result */
	assert_string_equal(g[0].l.result, g[2].l.result);
	assert_int_equal(g[1].l.state, LEASE_VERIFIED);
	assert_int_equal(g[2].l.state, LEASE_VERIFIED);
	store_instance_free_array(g, n);
	assert_int_equal(failures(f, 0), 1);
	assert_int_equal(failures(f, 1), 0);
	assert_int_equal(verified_units(f), 2 * LEASE_UNITS);
	leases_clear(&l, &r, &r2);
}

/* max_failures + 2 results, no two alike: the job fails. */
static void test_no_quorum(void **state)
{
	struct fx *f = *state;
	struct store_lease p = {0}, r = {0};
	struct sched_verify v;
	struct store_job j = {0};

	f->pol.max_failures = 1; /* three results at most */
	assert_int_equal(store_job_set_replicate(f->st, f->job, 1), 0);
	assert_true(claim(f, 0, &p) > 0);
	settle(f, 0, &p, 0, ANY);
	assert_int_equal(claim(f, 1, &r), p.id + 1);
	settle(f, 1, &r, 1, ANY); /* a lie */
	store_lease_clear(&r);
	assert_true(claim(f, 2, &r) > p.id + 1);
	/* w2 lies another way: the histogram shifted twice. */
	{
		struct wl_device dev = {.kind = WL_DEVICE_CPU, .threads = 1};
		struct sched_upload u = {0};
		json_t *spec = json_loads(r.spec, 0, NULL);
		void *res = NULL;
		size_t len = 0;
		char err[256];

		assert_int_equal(f->wl->run(workload_ctx(f->wl), f->params,
			spec, NULL, 0, &dev, NULL, &res, &len, err,
			sizeof(err)), 0);
		json_decref(spec);
		lie(res);
		lie(res);
		u.pol = &f->pol;
		u.is_result = 1;
		u.lease_id = r.id;
		u.worker_id = f->w[2];
		u.epoch = r.epoch;
		u.units_done = r.units;
		assert_int_equal(blob_encode(BLOB_RESULT, "graveler", r.id,
			r.epoch, res, len, &u.blob, &u.blob_len), 0);
		free(res);
		sched_upload_load(f->st, &u);
		sched_upload_check(&u);
		sched_upload_commit(f->st, &u);
		assert_int_equal(u.rc, 0);
		sched_upload_clear(&u);
	}
	reverify(f, r.id, r.epoch, &v);
	assert_int_equal(v.job_finished, -1);
	sched_verify_clear(&v);
	assert_int_equal(store_job_get(f->st, f->job, &j), 0);
	assert_int_equal(j.state, JOB_FAILED);
	assert_non_null(strstr(j.reason, "no two of 3 results agree"));
	store_job_clear(&j);
	leases_clear(&p, &r, NULL);
}

/* ---- replica_judge on rows made by hand ---- */

#define JUDGE_JOB 7

/* Member i of a group: lease id, state, checked, worker. */
static void member(struct store_instance *g, int64_t id, int64_t primary,
		   enum lease_state s, int checked, int64_t worker)
{
	memset(g, 0, sizeof(*g));
	g->l.id = id;
	g->l.job_id = JUDGE_JOB;
	g->l.state = s;
	g->l.epoch = 1;
	g->l.units = 10;
	g->l.worker_id = worker;
	g->replica_of = id == primary ? 0 : primary;
	g->checked = checked;
}

/* The peers of rc: g's checked, done rows other than self, with agrees. */
static void peers(struct replica_check *rc, struct replica_peer *p,
		  const struct store_instance *g, size_t n, int64_t self,
		  const int *agrees)
{
	rc->npeer = 0;
	for (size_t i = 0; i < n; i++) {
		if (g[i].l.id == self || g[i].l.state != LEASE_DONE ||
		    !g[i].checked)
			continue;
		p[rc->npeer] = (struct replica_peer){.id = g[i].l.id,
			.epoch = g[i].l.epoch, .worker_id = g[i].l.worker_id,
			.agrees = agrees[i]};
		rc->npeer++;
	}
	rc->peer = p;
	rc->loaded = rc->compared = 1;
}

static const struct replica_policy judge_pol = {.trust_after = 0,
	.quarantine_after = 5, .max_results = 3};

static void judge(const struct store_instance *g, size_t n, size_t self,
		  const int *agrees, unsigned char *move,
		  struct store_replica_verdict *v, enum replica_verdict *vd,
		  int *from_peer)
{
	struct replica_peer p[8];
	struct replica_check rc = {.primary = g[0].l.id,
		.is_replica = self != 0, .checked = g[self].checked};

	peers(&rc, p, g, n, g[self].l.id, agrees);
	replica_judge(&judge_pol, &g[self].l, &rc, g, n, move, v, vd,
		      from_peer);
	assert_ptr_equal(v->self, &g[self].l);
	assert_ptr_equal(v->member, g);
	assert_ptr_equal(v->move, move);
	assert_int_equal(v->nmember, n);
	assert_int_equal(v->primary, g[0].l.id);
	assert_int_equal(v->quarantine_after, 5);
}

/* Three done results, the last one (self, checked or not) verified now
 * and agreeing with the primary (p_agrees) or the first replica. */
static void judge3(int self_checked, int p_agrees, unsigned char *move,
		   struct store_replica_verdict *v, enum replica_verdict *vd,
		   int *from_peer)
{
	struct store_instance g[3];
	const int agrees[3] = {p_agrees, !p_agrees, -1};

	member(&g[0], 1, 1, LEASE_DONE, 1, 10);
	member(&g[1], 2, 1, LEASE_DONE, 1, 11);
	member(&g[2], 3, 1, LEASE_DONE, self_checked, 12);
	judge(g, 3, 2, agrees, move, v, vd, from_peer);
	assert_int_equal(*vd, REPLICA_QUORUM);
	assert_int_equal(v->end, STORE_REPLICA_QUORUM);
	assert_int_equal(v->set_checked, !self_checked);
	assert_int_equal(v->nwin, 2);
	assert_int_equal(v->primary_epoch, 1);
	assert_int_equal(move[2], STORE_REPLICA_CONFIRM);
}

/* A replica agrees with the primary, which merges with its own result;
 * the other replica is outvoted. Then the primary is outvoted: it adopts
 * the agreed result, which is self's. */
static void test_judge_quorum(void **state)
{
	unsigned char move[3];
	struct store_replica_verdict v;
	enum replica_verdict vd;
	int from_peer = -1;

	(void)state;
	judge3(0, 1, move, &v, &vd, &from_peer);
	assert_int_equal(v.adopt, 0);
	assert_int_equal(from_peer, 1);
	assert_int_equal(move[0], STORE_REPLICA_CONFIRM);
	assert_int_equal(move[1], STORE_REPLICA_REFUTE);

	judge3(1, 0, move, &v, &vd, &from_peer);
	assert_int_equal(v.adopt, 1);
	assert_int_equal(from_peer, 0);
	assert_int_equal(move[0], STORE_REPLICA_REFUTE);
	assert_int_equal(move[1], STORE_REPLICA_CONFIRM);
}

/* A primary being recomputed (an earlier verdict found it unreadable)
 * holds a quorum back; an unreadable result is recomputed, and a peer
 * whose epoch moved since the load stops the verdict there (verify
 * again). */
static void test_judge_again_and_recompute(void **state)
{
	struct store_instance g[3];
	const int unreadable[3] = {-1, 1, -1};
	unsigned char move[3];
	struct store_replica_verdict v;
	enum replica_verdict vd;
	struct replica_peer p[3];
	struct replica_check rc = {.primary = 1, .is_replica = 1};
	int from_peer = -1;

	(void)state;
	member(&g[0], 1, 1, LEASE_PENDING, 0, 0);
	member(&g[1], 2, 1, LEASE_DONE, 1, 11);
	member(&g[2], 3, 1, LEASE_DONE, 0, 12);
	judge(g, 3, 2, unreadable, move, &v, &vd, &from_peer);
	assert_int_equal(vd, REPLICA_WAIT);
	assert_int_equal(v.end, STORE_REPLICA_OPEN);
	for (int i = 0; i < 3; i++)
		assert_int_equal(move[i], STORE_REPLICA_KEEP);

	member(&g[0], 1, 1, LEASE_DONE, 1, 10);
	peers(&rc, p, g, 3, 3, unreadable);
	p[1].epoch = 2;
	replica_judge(&judge_pol, &g[2].l, &rc, g, 3, move, &v, &vd,
		      &from_peer);
	assert_int_equal(vd, REPLICA_AGAIN);
	assert_int_equal(v.end, STORE_REPLICA_OPEN);
	assert_int_equal(v.set_checked, 1);
	assert_int_equal(move[0], STORE_REPLICA_RECOMPUTE);
	assert_int_equal(move[1], STORE_REPLICA_KEEP);
	assert_int_equal(move[2], STORE_REPLICA_KEEP);
}

/* No agreement yet: another replica, none while one is live, and the job
 * fails at max_results results. */
static void test_judge_wait(void **state)
{
	struct store_instance g[3];
	const int none[3] = {-1, -1, -1}, disagree[3] = {0, 0, -1};
	unsigned char move[3];
	struct store_replica_verdict v;
	enum replica_verdict vd;
	int from_peer = -1;

	(void)state;
	member(&g[0], 1, 1, LEASE_DONE, 0, 10);
	judge(g, 1, 0, none, move, &v, &vd, &from_peer);
	assert_int_equal(vd, REPLICA_WAIT);
	assert_int_equal(v.end, STORE_REPLICA_MORE);
	assert_int_equal(v.nchecked, 1);
	assert_int_equal(move[0], STORE_REPLICA_KEEP);

	member(&g[1], 2, 1, LEASE_LEASED, 0, 11);
	judge(g, 2, 0, none, move, &v, &vd, &from_peer);
	assert_int_equal(vd, REPLICA_WAIT);
	assert_int_equal(v.end, STORE_REPLICA_OPEN);

	member(&g[1], 2, 1, LEASE_DONE, 1, 11);
	judge(g, 2, 0, disagree, move, &v, &vd, &from_peer);
	assert_int_equal(v.end, STORE_REPLICA_MORE);
	assert_int_equal(v.nchecked, 2);

	member(&g[0], 1, 1, LEASE_DONE, 1, 10);
	member(&g[2], 3, 1, LEASE_DONE, 0, 12);
	judge(g, 3, 2, disagree, move, &v, &vd, &from_peer);
	assert_int_equal(vd, REPLICA_NOQUORUM);
	assert_int_equal(v.end, STORE_REPLICA_FAILED);
	assert_int_equal(v.nresults, 3);
	assert_int_equal(from_peer, 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(move[i], STORE_REPLICA_KEEP);
}

#define TR(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

UNIT_MAIN(TR(test_full_other_credential),
	TR(test_full_two_workers),
	TR(test_disagreement_third_decides),
	TR(test_primary_outvoted),
	TR(test_restart_verifies_again),
	TR(test_unreadable_result),
	TR(test_trust_after),
	TR(test_spot_replica),
	TR(test_no_quorum),
	cmocka_unit_test(test_judge_quorum),
	cmocka_unit_test(test_judge_again_and_recompute),
	cmocka_unit_test(test_judge_wait))
