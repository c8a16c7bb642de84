/* officers_verify.c - Officers checks on gpud's thread pool, without blob
 * access: a checkpoint before it replaces the last one, and a result
 * against itself and its spec. An extension's result must start from the
 * spec's state digest (rebuilt from the result's tail, prefix, rare table
 * and statistics minus the lease's values); its checksum chain, statistics
 * and rare table must match its values; and the exact value (candidate +
 * exact step, from the result's own earlier values) is recomputed at the
 * lease's first and last 8 positions, at every new rare position and at
 * OFFICERS_VERIFY_SAMPLES positions drawn from the whole lease with
 * gpud's seed, which the worker learns only after its upload.
 *
 * Detection. Call a position inconsistent when its value is not the exact
 * value recomputed from the result's values before it (every value a
 * worker made up instead of computing is, unless it guessed right; values
 * after a wrong one may become inconsistent too). With a fraction f of the
 * lease's L positions inconsistent and none among the fixed positions,
 *   P(pass) = (1 - f)^K,  K = OFFICERS_VERIFY_SAMPLES = 2048
 * (samples drawn independently): f = 1% passes with 1.1e-9, f = 10% with
 * 1.9e-94, f = 100% never (the first positions are always checked). The
 * statistics and checksum are recomputed from the values, so no aggregate
 * can disagree with them. tests/unit/test_officers_detect.c measures it.
 * Cost: about one FNV step per value plus K exact steps (a few
 * microseconds each), whatever the lease's size.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "mix.h"
#include "officers.h"
#include "officers_wl.h"

/* The lease's spec and its result or checkpoint, parsed; a blob that does
 * not parse is refused with bad_rc (0: the parser's own code). */
static int spec_and_blob(const json_t *params, const json_t *spec,
			 const void *bytes, size_t len, int bad_rc,
			 struct officers_spec *sp, struct officers_result *r,
			 char *err, size_t errlen)
{
	int rc = officers_wl_spec(params, spec, sp, err, errlen);

	if (rc)
		return rc;
	rc = officers_result_parse(bytes, len, r, err, errlen);
	return rc && bad_rc ? bad_rc : rc;
}

int officers_wl_check_checkpoint(void *ctx, const json_t *params,
				 const json_t *spec, const void *bytes,
				 size_t len, char *err, size_t errlen)
{
	struct officers_result r;
	struct officers_spec sp;
	int rc = spec_and_blob(params, spec, bytes, len, 0, &sp, &r, err,
			       errlen);

	if (rc)
		return rc;
	if (r.from != sp.from || r.to >= sp.to ||
	    officers_result_digest(&r, 0) != sp.digest) {
		gerr_printf(err, errlen, "officers: checkpoint is not for this "
			    "lease");
		return GERR_VERIFY;
	}
	return 0;
}

static int ofw_check_position(const struct officers_seq *s, uint64_t x,
			      char *err, size_t errlen)
{
	int v = officers_value(s, x);
	unsigned have = officers_seq_get(s, x);

	if (v < 0) {
		/* Beyond what a result holds (documented limit): the worker
		 * would have refused the same position. */
		gerr_printf(err, errlen, "officers verify: G(%" PRIu64 ") cannot "
		       "be recomputed from the result", x);
		return GERR_VERIFY;
	}
	if ((unsigned)v != have) {
		gerr_printf(err, errlen, "officers verify: G(%" PRIu64 ") is %d, "
		       "result says %u", x, v, have);
		return GERR_VERIFY;
	}
	return 0;
}

static int ofw_verify_result(const struct officers_result *r,
			     const struct officers_spec *sp, uint64_t seed,
			     char *err, size_t errlen)
{
	uint64_t *first = NULL, fnv = r->fnv_in, k;
	struct officers_seq *s = NULL;
	uint32_t ri = r->nrare_in;
	uint8_t rare[OFFICERS_VMAX];
	const uint8_t *vp;
	int rc = 0;

	if (r->from != sp->from || r->to != sp->to) {
		gerr_printf(err, errlen, "officers verify: result is for [%" PRIu64
		       ", %" PRIu64 ")", r->from, r->to);
		return GERR_VERIFY;
	}
	if (officers_result_digest(r, 0) !=
	    (sp->from ? sp->digest : officers_empty_digest()) ||
	    (sp->from == 0 && sp->digest != officers_empty_digest())) {
		gerr_printf(err, errlen, "officers verify: the result does not "
		       "start from the lease's state");
		return GERR_VERIFY;
	}
	first = malloc(OFFICERS_VMAX * sizeof(uint64_t));
	if (!first)
		return GERR_NOMEM;
	for (unsigned v = 0; v < OFFICERS_VMAX; v++)
		first[v] = OFFICERS_NONE;
	for (unsigned v = 0; v < OFFICERS_VMAX; v++)
		rare[v] = (uint8_t)officers_is_rare(v);
	/* Checksum chain, first occurrences and rare table over the lease,
	 * reading the LE bytes in place (parse checked every value < VMAX):
	 * on gpud's path of every lease, so kept to the FNV chain's pace. */
	vp = (const uint8_t *)r->vals + 2 * (r->from - r->vbase);
	for (uint64_t x = r->from; x < r->to; x++, vp += 2) {
		unsigned v = (unsigned)vp[0] | (unsigned)vp[1] << 8;
		uint16_t w = (uint16_t)v;
		fnv = officers_fnv(fnv, &w, 1);
		if (first[v] == OFFICERS_NONE)
			first[v] = x;
		if (rare[v]) {
			const uint8_t *e = r->rare_le + 12 * (size_t)ri;
			uint64_t pos = 0;
			for (int b = 0; b < 8 && ri < r->nrare; b++)
				pos |= (uint64_t)e[b] << (8 * b);
			if (ri >= r->nrare || pos != x) {
				gerr_printf(err, errlen, "officers verify: rare "
				       "value at %" PRIu64 " missing from the "
				       "rare table", x);
				rc = GERR_VERIFY;
				goto out;
			}
			ri++;
		}
	}
	if (ri != r->nrare || fnv != r->fnv_out) {
		gerr_printf(err, errlen, "officers verify: %s does not match the "
		       "values", ri != r->nrare ? "rare table" : "checksum");
		rc = GERR_VERIFY;
		goto out;
	}
	for (unsigned v = 0; v < OFFICERS_VMAX; v++) {
		const uint8_t *p = (const uint8_t *)(r->first_le + v);
		uint64_t f = 0;
		for (int b = 0; b < 8; b++)
			f |= (uint64_t)p[b] << (8 * b);
		if ((f >= r->from && f != OFFICERS_NONE && f != first[v]) ||
		    (f == OFFICERS_NONE && first[v] != OFFICERS_NONE) ||
		    (first[v] != OFFICERS_NONE && f > first[v])) {
			gerr_printf(err, errlen, "officers verify: first occurrence "
			       "of %u is wrong", v);
			rc = GERR_VERIFY;
			goto out;
		}
	}
	/* Exact recomputation of a sample from the result's own values. */
	s = calloc(1, sizeof(*s));
	if (!s || officers_seq_from_result(s, r, r->vbase, r->to)) {
		rc = GERR_NOMEM;
		goto out;
	}
	for (k = 0; k < 8 && rc == 0; k++) {
		if (r->from + k < r->to && r->from + k >= 2)
			rc = ofw_check_position(s, r->from + k, err, errlen);
		if (rc == 0 && r->to - 1 - k >= r->from && r->to - 1 - k >= 2)
			rc = ofw_check_position(s, r->to - 1 - k, err, errlen);
	}
	for (uint32_t i = r->nrare_in; i < r->nrare && rc == 0; i++)
		if (s->rare[i].pos >= 2)
			rc = ofw_check_position(s, s->rare[i].pos, err, errlen);
	for (k = 0; k < OFFICERS_VERIFY_SAMPLES && rc == 0; k++) {
		uint64_t x = r->from + mix64(seed + k * MIX_GOLDEN) %
					       (r->to - r->from);
		if (x >= 2)
			rc = ofw_check_position(s, x, err, errlen);
	}
out:
	if (s)
		officers_seq_free(s);
	free(s);
	free(first);
	return rc;
}

int officers_wl_verify(void *ctx, const json_t *params, const json_t *spec,
		       const void *result, size_t len, uint64_t seed,
		       char *err, size_t errlen)
{
	struct officers_result r;
	struct officers_spec sp;
	int rc = spec_and_blob(params, spec, result, len, GERR_VERIFY, &sp, &r,
			       err, errlen);

	if (rc)
		return rc;
	if (sp.check) {
		gerr_printf(err, errlen, "officers: check leases are no longer "
			    "run (gpud's --check full replicates every lease)");
		return GERR_VERIFY;
	}
	return ofw_verify_result(&r, &sp, seed, err, errlen);
}
