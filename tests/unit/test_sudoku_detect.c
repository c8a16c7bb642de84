/* test_sudoku_detect.c - how often a partly fabricated Sudoku result
 * passes verification, measured against the formula sudoku_verify.c
 * states. A real 3x3 result (44 gangsters, SUDOKU_PIECES pieces each) with
 * a fraction f of its (gangster, piece) units made up (a piece + 2, its
 * gangster's W + 2: even, within bounds, still the sum): the 4x3 sampler
 * (sudoku_verify_units with k = SUDOKU_VERIFY_UNITS, on this shape whose
 * tables fit a test) passes with (1 - m / units)^k; the verify hook, which
 * recounts every unit of a small shape, never. Also: W must be the sum of
 * its pieces, and a run resumed from a checkpoint keeps the pieces. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "detect_fx.h"
#include "gerr.h"
#include "mix.h"
#include "sudoku/sudoku.h"
#include "sudoku/sudoku_format.h"
#include "sudoku/sudoku_internal.h"

extern const struct workload sudoku_workload;
static const struct workload *W = &sudoku_workload;

/* Keeps the first checkpoint a run emits. */
struct ck_io {
	void *ck;
	size_t len;
};

static int ck_due(void *o) { return ((struct ck_io *)o)->ck == NULL; }
static int ck_keep(void *o, const void *b, size_t n, uint64_t u)
{
	struct ck_io *c = o;

	(void)u;
	c->ck = malloc(n);
	memcpy(c->ck, b, n);
	c->len = n;
	return 0;
}

/* The 3x3 setup of the workload's context, from setup. */
static const struct sudoku_setup *S;

static int setup(void **state)
{
	char err[WL_ERRLEN] = "";

	assert_int_equal(workload_open_all(err, sizeof(err)), 0);
	assert_int_equal(sudoku_ctx_setup(workload_ctx(W), 3, 3, SUDOKU_BUILD_T,
					  2, &S, err, sizeof(err)), 0);
	if (detect_setup(state, W, "{\"box\": \"3x3\"}", 0))
		return -1;
	{
		/* all 44 gangsters in one lease, across the GangSets: the
		 * one-lease spec of jobs carved before, which runs still take
		 * (carve now leases one set at most) */
		struct detect_fx *fx = *state;
		struct wl_device dev = {WL_DEVICE_CPU, 0, 2, NULL};
		struct wl_run_io io = WL_RUN_IO_QUIET(NULL, NULL);
		json_decref(fx->spec);
		free(fx->res);
		fx->res = NULL;
		fx->spec = json_pack("{s:i, s:i, s:i}", "set", -1, "from", 0,
				     "to", 44);
		assert_int_equal(W->run(workload_ctx(W), fx->params, fx->spec,
					NULL, 0, &dev, &io, &fx->res, &fx->len,
					err, sizeof(err)), 0);
	}
	return 0;
}

static int teardown(void **state)
{
	detect_teardown(state);
	workload_close_all();
	return 0;
}

static void add2(uint64_t *x)
{
	x[0] += 2;
	x[1] += x[0] < 2;
}

/* The result with m distinct units made up, decoded (r) and encoded. */
static void fabricate(const struct detect_fx *fx, uint64_t m, struct sudoku_res *r,
		      void **ret, size_t *ret_len)
{
	char err[WL_ERRLEN];
	uint64_t units, done = 0;
	uint8_t *seen;

	assert_int_equal(sudoku_res_decode(fx->res, fx->len, 0, r, err,
					   sizeof(err)), 0);
	assert_int_equal(r->pieces, SUDOKU_PIECES);
	units = (uint64_t)r->done * r->pieces;
	seen = calloc(units, 1);
	for (uint64_t t = 0; done < m; t++) {
		uint64_t u = m == units ? t : mix64(t ^ (m << 20)) % units;
		if (seen[u])
			continue;
		seen[u] = 1;
		add2(r->piece[u]);
		add2(r->v[u / r->pieces]);
		done++;
	}
	free(seen);
	assert_int_equal(sudoku_res_encode(r, 0, ret, ret_len), 0);
}

static void measure(struct detect_fx *fx, double f, unsigned nseeds)
{
	struct sudoku_res r, d;
	char err[WL_ERRLEN], what[80];
	const uint32_t k = SUDOKU_VERIFY_UNITS;
	uint64_t units, m, s = 0x5d0c0;
	unsigned passes = 0;
	void *bad;
	size_t len;

	units = (uint64_t)44 * SUDOKU_PIECES;
	m = (uint64_t)llround(f * (double)units);
	fabricate(fx, m, &r, &bad, &len);
	free(r.v);
	/* what gpud verifies: the bytes, decoded again */
	assert_int_equal(sudoku_res_decode(bad, len, 0, &d, err, sizeof(err)), 0);
	for (unsigned i = 0; i < nseeds; i++) {
		int rc;
		s += MIX_GOLDEN;
		rc = sudoku_verify_units(S, &d, mix64(s), k, err, sizeof(err));
		assert_true(rc == 0 || rc == GERR_VERIFY);
		passes += rc == 0;
	}
	snprintf(what, sizeof(what), "sudoku 4x3 sampler k=%u (%llu of %llu "
		 "units made up)", k, (unsigned long long)m,
		 (unsigned long long)units);
	detect_expect(what, f, passes, nseeds,
		      pow(1 - (double)m / (double)units, k));
	/* the 3x3 verify hook draws one unit in SUDOKU_VERIFY_CNT_EVERY */
	{
		uint32_t k3 = (uint32_t)(units / SUDOKU_VERIFY_CNT_EVERY);
		unsigned p3 = detect_passes(W, fx->params, fx->spec, bad, len,
					    nseeds, 1);
		snprintf(what, sizeof(what), "sudoku 3x3 verify k=%u", k3);
		detect_expect(what, f, p3, nseeds,
			      pow(1 - (double)m / (double)units, k3));
	}
	free(d.v);
	free(bad);
}

static void test_honest_passes(void **state)
{
	struct detect_fx *fx = *state;
	struct sudoku_res r;
	char err[WL_ERRLEN];

	assert_int_equal(detect_passes(W, fx->params, fx->spec, fx->res,
				       fx->len, 3, 1), 3);
	assert_int_equal(sudoku_res_decode(fx->res, fx->len, 0, &r, err,
					   sizeof(err)), 0);
	for (uint64_t seed = 1; seed < 6; seed++)
		assert_int_equal(sudoku_verify_units(S, &r, seed,
						     SUDOKU_VERIFY_UNITS, err,
						     sizeof(err)), 0);
	free(r.v);
}

/* One unit made up: caught by the sum check if W is left alone. */
static void test_sum_binds_pieces(void **state)
{
	struct detect_fx *fx = *state;
	struct sudoku_res r;
	char err[WL_ERRLEN];
	void *bad;
	size_t len;

	assert_int_equal(sudoku_res_decode(fx->res, fx->len, 0, &r, err,
					   sizeof(err)), 0);
	add2(r.piece[7]);
	assert_int_equal(sudoku_res_encode(&r, 0, &bad, &len), 0);
	assert_int_equal(W->verify(workload_ctx(W), fx->params, fx->spec, bad,
				   len, 1, err, sizeof(err)), GERR_VERIFY);
	assert_non_null(strstr(err, "not the sum of its pieces"));
	free(bad);
	free(r.v);
}

/* A run resumed from a checkpoint (taken between GangSets) gives the
 * same bytes, pieces included. */
static void test_resume_keeps_pieces(void **state)
{
	struct detect_fx *fx = *state;
	struct ck_io c = {NULL, 0};
	struct wl_run_io io = {&c, wl_io_quiet_progress, ck_due, ck_keep,
			       wl_io_quiet_never, NULL};
	struct wl_device dev = {WL_DEVICE_CPU, 0, 2, NULL};
	struct sudoku_res r;
	char err[WL_ERRLEN] = "";
	void *res;
	size_t len;

	assert_int_equal(W->run(workload_ctx(W), fx->params, fx->spec, NULL, 0,
				&dev, &io, &res, &len, err, sizeof(err)), 0);
	free(res);
	assert_non_null(c.ck);
	assert_int_equal(sudoku_res_decode(c.ck, c.len, 1, &r, err, sizeof(err)),
			 0);
	assert_true(r.done > 0 && r.done < 44 && r.pieces == SUDOKU_PIECES);
	free(r.v);
	io.opaque = NULL;
	io.checkpoint_due = wl_io_quiet_never;
	assert_int_equal(W->run(workload_ctx(W), fx->params, fx->spec, c.ck,
				c.len, &dev, &io, &res, &len, err, sizeof(err)), 0);
	assert_int_equal(len, fx->len);
	assert_memory_equal(res, fx->res, len);
	free(res);
	free(c.ck);
}

static void test_fractions(void **state)
{
	measure(*state, 0.01, 300);
	measure(*state, 0.10, 50);
	measure(*state, 1.0, 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_honest_passes),
		cmocka_unit_test(test_sum_binds_pieces),
		cmocka_unit_test(test_resume_keeps_pieces),
		cmocka_unit_test(test_fractions),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
