/* sudoku_verify.c - what gpud checks in a Sudoku result before it merges
 * it (on its thread pool, with the context's full setup).
 *
 * Every gangster: the result is for the lease (shape, range); for C == 2
 * V is the band count below the gangster, recounted for every gangster
 * up to 4x2 and for a sample of 5x2's (verify_cnt). For C == 3 a result commits to each
 * gangster's SUDOKU_PIECES pieces (sudoku_format.h): every V must be the
 * sum of its pieces, every piece and V even, V under the bound; then
 * pieces are recounted on the CPU: for 3x3 one (gangster, piece) unit in
 * SUDOKU_VERIFY_CNT_EVERY of the lease's, drawn with gpud's seed, and
 * for 4x3 (7.2e9 multiply-adds a gangster) SUDOKU_VERIFY_UNITS units
 * (gangster, piece), drawn from the whole lease with gpud's seed, which
 * the worker learns only after its upload: the cost of one gangster.
 *
 * Detection. Call a unit (gangster, piece) fabricated when its value is
 * not the true one (V follows as the sum, or the sum check fails). With a
 * fraction f of a lease's n * P units fabricated and k units drawn
 * independently,
 *   P(pass) = (1 - f)^k,  k = SUDOKU_VERIFY_UNITS = 128 (4x3)
 *   f = 1%: 0.28, f = 10%: 1.4e-6, f = 100%: never;
 * 3x3: k = ceil(n * P / 32) for n gangsters (a 5-gangster lease: k = 20,
 * f = 10% passes with 0.12). A whole gangster made up is P units, so f is also the fraction of gangsters a
 * worker skipped (before pieces, one gangster was recounted: 1 - f).
 * tests/unit/test_sudoku_detect.c measures the formula.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "gerr.h"
#include "mix.h"
#include "sudoku.h"
#include "sudoku_format.h"
#include "sudoku_internal.h"


static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Recount pieces [p0, p1) of gangsters [g, e) (one set, outer pairs of
 * that set given) and compare them with the result's. */
static int recount(const struct sudoku_setup *S, const struct sudoku_res *r,
		   const struct sudoku_outer *outer, uint32_t nouter,
		   uint32_t g, uint32_t e, uint32_t p0, uint32_t p1,
		   char *err, size_t errlen)
{
	const uint32_t P = r->pieces, np = p1 - p0;
	uint64_t (*w)[2] = malloc((size_t)(e - g) * np * sizeof(*w));
	int rc;

	if (!w)
		return GERR_NOMEM;
	rc = sudoku_w_pieces_cpu(S, outer, nouter, g, e, P, p0, p1,
				 sudoku_wl_threads(), w);
	for (uint32_t i = 0; rc == 0 && i < e - g; i++)
		for (uint32_t j = 0; rc == 0 && j < np; j++) {
			const uint64_t *x = w[(size_t)i * np + j];
			const uint64_t *y = r->piece[(size_t)(g - r->from + i) * P +
						     p0 + j];
			if (x[0] != y[0] || x[1] != y[1]) {
				gerr_printf(err, errlen, "sudoku verify: gangster %u "
					    "piece %u recounts to (%" PRIu64 ", %"
					    PRIu64 "), result says (%" PRIu64 ", %"
					    PRIu64 ")", g + i, p0 + j, x[1], x[0],
					    y[1], y[0]);
				rc = GERR_VERIFY;
			}
		}
	free(w);
	return rc;
}

int sudoku_verify_units(const struct sudoku_setup *S,
			const struct sudoku_res *r, uint64_t seed, uint32_t k,
			char *err, size_t errlen)
{
	const uint32_t n = r->to - r->from, P = r->pieces;
	struct sudoku_outer *outer = NULL;
	uint32_t nouter = 0, set = UINT32_MAX;
	uint64_t *unit = NULL, nunits = (uint64_t)n * P;
	int rc = 0;

	if (S->C != 3 || !P || r->done != n)
		return GERR_INVAL;
	if (k == 0) {
		/* every unit, a set's gangsters at a time */
		for (uint32_t g = r->from; rc == 0 && g < r->to;) {
			uint32_t e = S->set_start[sudoku_set_of(S, g) + 1];
			if (e > r->to)
				e = r->to;
			rc = recount(S, r, NULL, 0, g, e, 0, P, err, errlen);
			g = e;
		}
		return rc;
	}
	unit = malloc((size_t)k * sizeof(*unit));
	if (!unit)
		return GERR_NOMEM;
	for (uint32_t t = 0; t < k; t++)
		unit[t] = mix64(seed + (t + 1) * MIX_GOLDEN) % nunits;
	/* in order, so each set's outer pairs are built once */
	qsort(unit, k, sizeof(*unit), cmp_u64);
	for (uint32_t t = 0; rc == 0 && t < k; t++) {
		uint32_t g = r->from + (uint32_t)(unit[t] / P);
		uint32_t p = (uint32_t)(unit[t] % P);
		if (sudoku_set_of(S, g) != set) {
			free(outer);
			outer = NULL;
			set = sudoku_set_of(S, g);
			rc = sudoku_outer_build(S, set, &outer, &nouter);
			if (rc)
				break;
		}
		rc = recount(S, r, outer, nouter, g, g + 1, p, p + 1, err, errlen);
	}
	free(outer);
	free(unit);
	return rc;
}

/* V and pieces of every gangster: V the sum of its pieces, all even, V
 * within the bound. */
static int check_values(const struct sudoku_setup *S,
			const struct sudoku_res *r, char *err, size_t errlen)
{
	uint64_t bound[2] = {UINT64_MAX, UINT64_MAX};

	if (sudoku_w_bound(S, bound) != 0)
		bound[0] = bound[1] = UINT64_MAX;
	for (uint32_t i = 0; i < r->done; i++) {
		const uint64_t *v = r->v[i];
		uint64_t lo = 0, hi = 0, odd = 0;
		uint32_t g = r->from + i;
		for (uint32_t j = 0; j < r->pieces; j++) {
			const uint64_t *x = r->piece[(size_t)i * r->pieces + j];
			lo += x[0];
			hi += x[1] + (lo < x[0]);
			odd |= x[0] & 1;
		}
		if ((v[0] & 1) || odd || v[1] > bound[1] ||
		    (v[1] == bound[1] && v[0] > bound[0])) {
			gerr_printf(err, errlen, "sudoku verify: gangster %u: W = "
				    "(%" PRIu64 ", %" PRIu64 ") or a piece is odd, "
				    "or W is above the bound", g, v[1], v[0]);
			return GERR_VERIFY;
		}
		if (lo != v[0] || hi != v[1]) {
			gerr_printf(err, errlen, "sudoku verify: gangster %u: W is "
				    "not the sum of its pieces", g);
			return GERR_VERIFY;
		}
	}
	return 0;
}

/* C == 2: V is the band count below the gangster. Every V is at most
 * 32 bits and positive (every band fills); the counts are recounted for
 * every gangster of the shapes up to 4x2 (microseconds each), and for 5x2
 * (1.7 s each) for one gangster in SUDOKU_VERIFY_CNT_EVERY drawn with
 * seed: with a fraction f of the lease's n values made up and k =
 * ceil(n / 32) drawn, P(pass) = (1 - f)^k (k = 2, f = 50%: 0.25). */
static int verify_cnt(const struct sudoku_setup *S, const struct sudoku_res *r,
		      uint64_t seed, char *err, size_t errlen)
{
	const uint32_t n = r->to - r->from;
	uint32_t k = S->R <= 4 ? n : (n + SUDOKU_VERIFY_CNT_EVERY - 1) /
					     SUDOKU_VERIFY_CNT_EVERY;
	uint64_t v[1][2];

	for (uint32_t i = 0; i < n; i++)
		if (r->v[i][1] || r->v[i][0] == 0 || r->v[i][0] > UINT32_MAX) {
			gerr_printf(err, errlen, "sudoku verify: gangster %u: "
				    "band count %" PRIu64 " out of range",
				    r->from + i, r->v[i][0]);
			return GERR_VERIFY;
		}
	for (uint32_t t = 0; t < k; t++) {
		uint32_t i = k == n ? t : (uint32_t)(mix64(seed + (t + 1) *
							    MIX_GOLDEN) % n);
		int rc = sudoku_cnt_range(S, r->from + i, r->from + i + 1, 1, v);
		if (rc)
			return rc;
		if (v[0][0] != r->v[i][0]) {
			gerr_printf(err, errlen, "sudoku verify: gangster %u: "
				    "band count %" PRIu64 ", recounted %" PRIu64,
				    r->from + i, r->v[i][0], v[0][0]);
			return GERR_VERIFY;
		}
	}
	return 0;
}

/* 3x3: one (gangster, piece) unit in SUDOKU_VERIFY_CNT_EVERY of the
 * lease's n * P, at least one, so gpud's recount stays a few percent of
 * the lease (it was every unit: as long as the run). */
static uint32_t small_units(uint32_t n)
{
	uint64_t k = ((uint64_t)n * SUDOKU_PIECES + SUDOKU_VERIFY_CNT_EVERY - 1) /
		     SUDOKU_VERIFY_CNT_EVERY;
	return k > 0 ? (uint32_t)k : 1;
}

int sudoku_wl_verify(void *ctx, const json_t *params, const json_t *spec,
		     const void *result, size_t len, uint64_t seed, char *err,
		     size_t errlen)
{
	const struct sudoku_setup *S;
	struct sudoku_res r;
	uint32_t from, to;
	int R, C, rc;

	rc = sudoku_wl_spec(ctx, params, spec, &R, &C, &S, SUDOKU_BUILD_T, &from,
			    &to, err, errlen);
	if (rc)
		return rc;
	rc = sudoku_res_decode(result, len, 0, &r, err, errlen);
	if (rc)
		return GERR_VERIFY;
	rc = sudoku_wl_match(&r, R, C, from, to, "result", err, errlen);
	if (rc)
		goto out;
	if (C == 2) {
		rc = verify_cnt(S, &r, seed, err, errlen);
		goto out;
	}
	if (r.pieces != SUDOKU_PIECES) {
		gerr_printf(err, errlen, "sudoku verify: the result has %u pieces "
			    "per gangster, not %u", r.pieces, SUDOKU_PIECES);
		rc = GERR_VERIFY;
		goto out;
	}
	rc = check_values(S, &r, err, errlen);
	if (rc == 0)
		rc = sudoku_verify_units(S, &r, seed,
					 sudoku_big_shape(R, C) ? SUDOKU_VERIFY_UNITS
					 : small_units(to - from), err, errlen);
out:
	free(r.v);
	return rc;
}
