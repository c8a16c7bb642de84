/* othello_verify.c - what gpud checks before it keeps a worker's bytes: a
 * checkpoint must be for the lease; a result must be for the lease
 * (begin, count, positions included exactly in file jobs), in file jobs
 * every block's digest of positions and expected scores must match params'
 * (so a worker cannot solve other positions or alter the expected scores),
 * and k(E) positions, drawn from the whole lease with gpud's seed (which
 * the worker learns only after its upload), are re-solved on the CPU and
 * must match score and best move exactly (in a split job's windowed
 * lease, the window's clamped answer, which is as canonical; every
 * answer must be one the window can give). The answer's histogram is built
 * from the per-position scores, so no aggregate can disagree with them.
 *
 * Detection. With a fraction f of a lease's positions given a wrong score
 * or best move (made up instead of solved), and the k positions drawn
 * independently,
 *   P(pass) = (1 - f)^k,  k = min(othello_verify_samples(E), ceil(n /
 *   OTHELLO_VERIFY_SHARE)) for a lease of n positions (othello_verify_k),
 *   E the empties (the largest of a file); a lease of one position is
 *   re-solved whole (unless above OTHELLO_VERIFY_ALL_EMPTIES, see below).
 *   The share keeps gpud's recount at most 1/32 of the lease's positions
 *   (bench/verify.md): 4,000 positions of 6 empties are checked with 125,
 *   not 1,024.
 *   E <= 10: k = 1024: f = 1% passes with 3.4e-5, 10% with 5e-47
 *   E <= 12: k = 256:  1% 0.076, 10% 1.9e-12
 *   E <= 14: k = 64:   1% 0.53,  10% 1.2e-3
 *   E <= 18: k = 16:   1% 0.85,  10% 0.19
 *   E <= 22: k = 4;    above: k = 1
 * and f = 100% never passes (unless every made-up answer is right). The
 * sample shrinks as a position's cost grows (about 4x per two empties: a
 * 22-empty position costs the coordinator seconds).
 *
 * Deep leases (positions of more than OTHELLO_VERIFY_ALL_EMPTIES) are
 * checked by default too, at one position in OTHELLO_VERIFY_SHARE on
 * average whatever the lease's size: k = floor(n / 32), plus one with
 * probability (n mod 32) / 32 drawn with gpud's seed (othello_verify_k_
 * drawn), at most the samples above. So a lease of n >= 32 positions made
 * up at f passes with (1 - f)^k as above (k >= 1), and a lease of n < 32
 * (a split job's, one position) is re-solved with probability n / 32 and
 * made up whole passes with 1 - n / 32, which the worker cannot predict:
 * a worker that makes up F such leases passes all with (1 - n/32)^F, and
 * the first it is caught on charges it (quarantine after 3). The time
 * budget: a drawn position of more than OTHELLO_VERIFY_MAX_EMPTIES (22)
 * is not re-solved, so one verification costs gpud at most 4 positions
 * of 22 empties (bench/verify.md: seconds of one core, against the 32
 * positions of the worker's run it stands for).
 *
 * Positions above 22 empties (minutes of a core each) are spot-checked by
 * another worker instead: once everything else passed, a lease holding d
 * of them answers WL_VERIFY_SPOT with probability min(1, d / 32), drawn
 * with the seed apart from the sample (othello_verify_spot), and gpud
 * merges it only once another worker's result of the lease agrees
 * (replica.c). So a lease whose deep answers are made up (any of them
 * wrong) passes unreplicated with 1 - min(1, d / 32): never for d >= 32,
 * (1 - d/32)^F for F such leases of d < 32; a replica that disagrees is
 * decided by a third result and the liar charged. Where no worker of
 * another credential is in the fleet, gpud merges it unreplicated (event
 * spot_skipped). The digests still bind every result to the input's
 * positions. tests/unit/test_othello_detect.c, test_othello_deep_detect.c
 * and test_othello_spot.c measure the formulas.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gerr.h"
#include "othello.h"
#include "othello_wl.h"

/* A checkpoint that decodes and is for this lease. */
int othello_wl_check_checkpoint(void *ctx, const json_t *params,
				const json_t *spec, const void *bytes,
				size_t len, char *err, size_t errlen)
{
	struct othello_job j;
	uint64_t begin, count;
	struct othello_res c;
	int rc = othello_spec_get(params, spec, &j, &begin, &count, err, errlen);

	(void)ctx;
	if (rc)
		return rc;
	rc = othello_res_decode(bytes, len, 1, &c, err, errlen);
	if (rc)
		return rc;
	/* the checkpoint of a lease cut later at or after its done (split)
	 * is the head's */
	if (c.begin != begin || c.count < count || c.done > count ||
	    c.with_pos != j.file) {
		gerr_printf(err, errlen, "othello: checkpoint is for another lease");
		rc = GERR_INVAL;
	}
	othello_res_clear(&c);
	return rc;
}

/* A position of 18 empties is ~10 ms of one core; 20 is ~10x that, 24
 * some seconds (bench/verify.md): OTHELLO_VERIFY_MAX_EMPTIES is in
 * othello_wl.h. */
#define OTHELLO_VERIFY_ALL_EMPTIES 14

unsigned othello_verify_k(int empties, uint64_t count)
{
	uint64_t share = (count + OTHELLO_VERIFY_SHARE - 1) /
			 OTHELLO_VERIFY_SHARE;
	unsigned want = othello_verify_samples(empties);

	return share < want ? (unsigned)share : want;
}

unsigned othello_verify_k_drawn(int empties, uint64_t count, uint64_t seed)
{
	uint64_t k = count / OTHELLO_VERIFY_SHARE;
	unsigned want = othello_verify_samples(empties);

	if (empties <= OTHELLO_VERIFY_ALL_EMPTIES)
		return othello_verify_k(empties, count);
	/* The rest of n / 32 as a chance, drawn apart from the sample. */
	if (mix64(seed ^ 0x6465657000000000ull) % OTHELLO_VERIFY_SHARE <
	    count % OTHELLO_VERIFY_SHARE)
		k++;
	return k < want ? (unsigned)k : want;
}

int othello_verify_spot(uint64_t deep, uint64_t seed)
{
	/* Its own stream of the seed: apart from the sample and its rest. */
	return deep >= OTHELLO_VERIFY_SHARE ||
	       mix64(seed ^ 0x73706f7400000000ull) % OTHELLO_VERIFY_SHARE < deep;
}

/* Positions of the lease above OTHELLO_VERIFY_MAX_EMPTIES. */
static uint64_t otw_deep_count(const struct othello_job *j,
			       const struct othello_res *r)
{
	uint64_t deep = 0;

	if (!j->file)
		return j->empties > OTHELLO_VERIFY_MAX_EMPTIES ? r->count : 0;
	for (uint64_t i = 0; i < r->count; i++) {
		uint64_t P, O;
		othello_pos_pov(&r->pos[i], &P, &O);
		deep += oth_popcount(~(P | O)) > OTHELLO_VERIFY_MAX_EMPTIES;
	}
	return deep;
}

unsigned othello_verify_samples(int empties)
{
	if (empties <= 10)
		return 1024;
	if (empties <= 12)
		return 256;
	if (empties <= 14)
		return 64;
	if (empties <= 18)
		return 16;
	if (empties <= 22)
		return 4;
	return 1;
}

/* Threads for a sample of k: the cores, at most 8 (gpud runs other
 * verifications and its loop beside it). */
static int otw_verify_threads(unsigned k)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = cpus > 1 ? (int)(cpus < 8 ? cpus : 8) : 1;

	return (unsigned)n < k ? n : (int)k;
}

/* Every block of r's positions has params' digest. */
static int otw_check_digests(const struct othello_job *j,
			     const struct othello_res *r, char *err,
			     size_t errlen)
{
	for (uint64_t lo = 0; lo < r->count; lo += j->block) {
		uint64_t k = r->count - lo < j->block ? r->count - lo : j->block;
		uint64_t b = (r->begin + lo) / j->block;
		char hex[17];
		snprintf(hex, sizeof(hex), "%016" PRIx64,
			 othello_digest(r->pos + lo, k));
		if (memcmp(hex, j->digests + 16 * b, 16) != 0) {
			gerr_printf(err, errlen, "othello verify: positions of block "
				    "%" PRIu64 " are not the input's", b);
			return GERR_VERIFY;
		}
	}
	return 0;
}

int othello_wl_verify(void *ctx, const json_t *params, const json_t *spec,
		      const void *result, size_t len, uint64_t seed,
		      char *err, size_t errlen)
{
	struct othello_job j;
	uint64_t begin, count;
	struct othello_res r;
	uint64_t hist[65];
	int alpha, beta;
	int rc = othello_spec_get(params, spec, &j, &begin, &count, err, errlen);

	(void)ctx;
	if (rc == 0)
		rc = othello_spec_window(&j, spec, &alpha, &beta, err, errlen);
	if (rc)
		return rc;
	/* Checked whole; only file jobs need the positions copied out. */
	rc = othello_res_hist(result, len, &r, hist, err, errlen);
	if (rc == 0 && r.with_pos)
		rc = othello_res_decode(result, len, 0, &r, err, errlen);
	if (rc)
		return GERR_VERIFY;
	if (r.begin != begin || r.count != count || r.with_pos != j.file) {
		gerr_printf(err, errlen, "othello verify: result is for [%" PRIu64
			    ", +%" PRIu64 ")%s, lease is [%" PRIu64 ", +%" PRIu64 ")",
			    r.begin, r.count, r.with_pos ? " with positions" : "",
			    begin, count);
		rc = GERR_VERIFY;
		goto out;
	}
	if (j.file && (rc = otw_check_digests(&j, &r, err, errlen)) != 0)
		goto out;
	/* Every answer as the window gives it: a bound without a move. */
	for (uint64_t i = 0; i < count; i++) {
		int score, move;
		othello_res_at(result, i, &score, &move);
		if (score < alpha || score > beta ||
		    ((score == alpha || score == beta) &&
		     move != OTHELLO_MOVE_NONE)) {
			gerr_printf(err, errlen, "othello verify: position %"
				    PRIu64 " scores %+d (move %d) outside the "
				    "window (%d, %d)", begin + i, score, move,
				    alpha, beta);
			rc = GERR_VERIFY;
			goto out;
		}
	}
	/* The sample is solved on several threads: verification is on the
	 * job's critical path (a 10-empty sample of 1024 is ~0.3 s on one). */
	unsigned k = othello_verify_k_drawn(j.empties, count, seed);
	int every = k >= count;
	size_t ka = k ? k : 1; /* malloc(0) may be NULL */
	uint64_t *idx = malloc(3 * sizeof(uint64_t) * ka), *P = idx + ka,
		 *O = P + ka, nodes;
	int8_t *sc = malloc(ka);
	uint8_t *mv = malloc(ka);
	uint64_t h = mix64(seed ^ begin);
	if (!idx || !sc || !mv) {
		rc = GERR_NOMEM;
		goto out_sample;
	}
	unsigned kept = 0;
	for (unsigned t = 0; t < k; t++) {
		uint64_t i;
		if (every) {
			i = t;
		} else {
			h += MIX_GOLDEN;
			i = mix64(h) % count;
		}
		idx[kept] = i;
		if (j.file) {
			othello_pos_pov(&r.pos[i], &P[kept], &O[kept]);
		} else {
			int black;
			oth_generate(j.seed, begin + i, j.empties, &P[kept],
				     &O[kept], &black);
		}
		/* Too deep for gpud: left to --check full. */
		if (oth_popcount(~(P[kept] | O[kept])) <=
		    OTHELLO_VERIFY_MAX_EMPTIES)
			kept++;
	}
	k = kept;
	rc = k ? othello_solve_batch_window(P, O, k, alpha, beta,
					    otw_verify_threads(k), sc, mv,
					    &nodes, NULL, NULL) : 0;
	for (unsigned t = 0; rc == 0 && t < k; t++) {
		uint64_t i = idx[t];
		int score, move;
		othello_res_at(result, i, &score, &move);
		if (sc[t] != score || mv[t] != move) {
			gerr_printf(err, errlen, "othello verify: position %" PRIu64
				    " re-solves to %+d (move %d), result claims %+d "
				    "(move %d)", begin + i, sc[t], mv[t], score, move);
			rc = GERR_VERIFY;
		}
	}
	/* Everything checked passed: the positions too deep for gpud are
	 * spot-checked by another worker's result, drawn with the seed. */
	if (rc == 0) {
		uint64_t deep = otw_deep_count(&j, &r);
		if (deep && othello_verify_spot(deep, seed)) {
			gerr_printf(err, errlen, "othello verify: %" PRIu64
				    " positions above %d empties: spot replica "
				    "drawn", deep, OTHELLO_VERIFY_MAX_EMPTIES);
			rc = WL_VERIFY_SPOT;
		}
	}
out_sample:
	free(idx);
	free(sc);
	free(mv);
out:
	othello_res_clear(&r);
	return rc;
}
