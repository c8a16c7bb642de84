/* othello_verify.c - what gpud checks before it keeps a worker's bytes: a
 * checkpoint must be for the lease; a result must be for the lease
 * (begin, count, positions included exactly in file jobs), in file jobs
 * every block's digest of positions and expected scores must match params'
 * (so a worker cannot solve other positions or alter the expected scores),
 * and a sample of positions, drawn from the injected seed, is re-solved on
 * the CPU and must match score and best move exactly. The sample shrinks
 * with the empties (a 22-empty position costs the coordinator seconds).
 */
#include <inttypes.h>
#include <stdio.h>
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
	if (c.begin != begin || c.count != count || c.with_pos != j.file) {
		gerr_printf(err, errlen, "othello: checkpoint is for another lease");
		rc = GERR_INVAL;
	}
	othello_res_clear(&c);
	return rc;
}

/* Positions re-solved per lease: fewer as each costs more. */
static unsigned otw_sample_size(int empties)
{
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
	for (uint64_t lo = 0; lo < r->count; lo += OTHELLO_BLOCK) {
		uint64_t k = r->count - lo < OTHELLO_BLOCK ? r->count - lo
							   : OTHELLO_BLOCK;
		uint64_t b = (r->begin + lo) / OTHELLO_BLOCK;
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
	int rc = othello_spec_get(params, spec, &j, &begin, &count, err, errlen);

	(void)ctx;
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
	/* The sample is solved on several threads: verification is on the
	 * job's critical path (a 10-empty sample of 64 is ~13 ms on one). */
	unsigned want = otw_sample_size(j.empties); /* at most 64 */
	unsigned k = count < want ? (unsigned)count : want;
	uint64_t idx[64], P[64], O[64], nodes;
	int8_t sc[64];
	uint8_t mv[64];
	uint64_t h = mix64(seed ^ begin);
	for (unsigned t = 0; t < k; t++) {
		uint64_t i;
		if (count <= want) {
			i = t;
		} else {
			h += OTHELLO_GOLDEN;
			i = mix64(h) % count;
		}
		idx[t] = i;
		if (j.file) {
			othello_pos_pov(&r.pos[i], &P[t], &O[t]);
		} else {
			int black;
			oth_generate(j.seed, begin + i, j.empties, &P[t], &O[t],
				     &black);
		}
	}
	rc = othello_solve_batch(P, O, k, otw_verify_threads(k), sc, mv, &nodes,
				 NULL, NULL);
	if (rc)
		goto out;
	for (unsigned t = 0; t < k; t++) {
		uint64_t i = idx[t];
		int score, move;
		othello_res_at(result, i, &score, &move);
		if (sc[t] != score || mv[t] != move) {
			gerr_printf(err, errlen, "othello verify: position %" PRIu64
				    " re-solves to %+d (move %d), result claims %+d "
				    "(move %d)", begin + i, sc[t], mv[t], score, move);
			rc = GERR_VERIFY;
			goto out;
		}
	}
out:
	othello_res_clear(&r);
	return rc;
}
