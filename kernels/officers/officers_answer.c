/* officers_answer.c - the Officers answer: merge (constant work per lease:
 * the answer is rebuilt from the result's running statistics, and the
 * lease's own data goes to its note), the stored ranges rebuilt from a
 * job's parts, and finish (the whole chain, once, when the job ends).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "officers.h"
#include "officers_wl.h"

static json_t *ofw_u64_array(const uint64_t *v, unsigned n,
			     int none_as_minus1)
{
	json_t *a = json_array();

	for (unsigned i = 0; a && i < n; i++) {
		json_int_t x = (none_as_minus1 && v[i] == OFFICERS_NONE)
				       ? -1
				       : (json_int_t)v[i];
		if (json_array_append_new(a, json_integer(x))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static uint64_t ofw_le64(const void *p)
{
	const uint8_t *b = p;
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

/* An extension: the answer after it, from the result's statistics (which
 * cover G(0..to-1)), its rare table and the answer's zeros. */
static int ofw_merge_extend(const json_t *answer,
			    const struct officers_spec *sp,
			    const struct officers_result *r, uint64_t digest,
			    const char *result_hash, json_t **ret_answer)
{
	uint64_t count[OFFICERS_VMAX], first[OFFICERS_VMAX], adigest;
	uint64_t leases = officers_wl_answer_u64(answer, "leases") + 1;
	const char *astate;
	unsigned top = 0;
	json_t *out, *zeros, *rares;

	if (!result_hash || r->from != sp->from || r->to != sp->to ||
	    officers_wl_answer_u64(answer, "n") != r->from)
		return GERR_STATE; /* extensions merge in order */
	astate = json_string_value(json_object_get(answer, "state"));
	if (sp->from > 0 &&
	    (!astate || strcmp(astate, sp->state) != 0 ||
	     officers_wl_hex(json_object_get(answer, "digest"), &adigest) ||
	     adigest != sp->digest))
		return GERR_STATE; /* not from the last merged state */
	for (unsigned v = 0; v < OFFICERS_VMAX; v++) {
		count[v] = ofw_le64(r->count_le + v);
		first[v] = ofw_le64(r->first_le + v);
		if (count[v])
			top = v;
	}
	zeros = answer ? json_deep_copy(json_object_get(answer, "zeros"))
		       : NULL;
	if (!json_is_array(zeros)) {
		json_decref(zeros);
		zeros = json_array();
	}
	rares = json_array();
	if (!zeros || !rares) {
		json_decref(zeros);
		json_decref(rares);
		return GERR_NOMEM;
	}
	if (count[0] > json_array_size(zeros))
		for (uint64_t x = r->from; x < r->to &&
		     json_array_size(zeros) < OFFICERS_MAX_ZEROS; x++)
			if (officers_result_get(r, x) == 0)
				json_array_append_new(
					zeros, json_integer((json_int_t)x));
	for (uint32_t i = 0; i < r->nrare; i++) {
		const uint8_t *e = r->rare_le + 12 * (size_t)i;
		json_array_append_new(rares, json_pack("[I, i]",
				      (json_int_t)ofw_le64(e),
				      (int)(e[8] | e[9] << 8)));
	}
	out = json_pack("{s:I, s:I, s:o, s:o, s:s, s:o, s:o, s:{s:i, s:I},"
			" s:o, s:o}",
			"n", (json_int_t)r->to,
			"leases", (json_int_t)leases,
			"fnv", officers_wl_json_hex(r->fnv_out),
			"digest", officers_wl_json_hex(digest),
			"state", result_hash, "rares", rares, "zeros", zeros,
			"max", "value", (int)top, "first",
			(json_int_t)first[top],
			"counts", ofw_u64_array(count, top + 1, 0),
			"first", ofw_u64_array(first, top + 1, 1));
	if (!out)
		return GERR_NOMEM;
	*ret_answer = out;
	return 0;
}

int officers_wl_merge(void *ctx, const json_t *params, const json_t *answer,
		      const json_t *spec, const void *result, size_t len,
		      const char *result_hash, json_t **ret_answer,
		      json_t **ret_note)
{
	char err[WL_ERRLEN];
	struct officers_result r;
	struct officers_spec sp;
	uint64_t digest;
	json_t *out = NULL, *note;
	int rc;

	(void)ctx;
	rc = officers_wl_spec(params, spec, &sp, err, sizeof(err));
	if (rc)
		return rc;
	rc = officers_result_parse(result, len, &r, err, sizeof(err));
	if (rc)
		return rc;
	digest = officers_result_digest(&r, 1);
	if (sp.check)
		return GERR_INVAL; /* replication recomputes leases now */
	rc = ofw_merge_extend(answer, &sp, &r, digest, result_hash, &out);
	if (rc)
		return rc;
	/* Every lease's note: the digest of the state its result ends in. */
	note = json_pack("{s:o}", "digest", officers_wl_json_hex(digest));
	if (!note) {
		json_decref(out);
		return GERR_NOMEM;
	}
	*ret_answer = out;
	if (ret_note)
		*ret_note = note;
	else
		json_decref(note);
	return 0;
}

/* ---- the stored ranges ------------------------------------------------- */

void officers_ranges_free(struct officers_ranges *rs)
{
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

static int ofw_range_add(struct officers_ranges *rs, size_t *cap,
			 const struct officers_spec *sp, uint64_t digest_out,
			 const char *hash)
{
	struct officers_range *g;

	if (rs->n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		g = realloc(rs->v, c * sizeof(*g));
		if (!g)
			return GERR_NOMEM;
		rs->v = g;
		*cap = c;
	}
	g = &rs->v[rs->n++];
	memset(g, 0, sizeof(*g));
	g->from = sp->from;
	g->to = sp->to;
	g->digest_in = sp->digest;
	g->digest_out = digest_out;
	snprintf(g->hash, sizeof(g->hash), "%s", hash);
	return 0;
}

int officers_ranges_load(const json_t *params, const struct wl_parts *parts,
			 struct officers_ranges *rs, char *err, size_t errlen)
{
	uint64_t at = 0, digest = officers_empty_digest(), d;
	size_t cap = 0;
	int rc = 0;

	memset(rs, 0, sizeof(*rs));
	for (uint64_t k = 0; parts && k < parts->n && rc == 0; k++) {
		struct officers_spec sp;
		struct wl_part p;
		const char *prev;

		rc = parts->get(parts->opaque, k, &p);
		if (rc) {
			gerr_printf(err, errlen, "officers: lease %" PRIu64
				    " of the job is unreadable: %s", k,
				    gerr_str(rc));
			break;
		}
		rc = officers_wl_spec(params, p.spec, &sp, err, errlen);
		if (rc) {
			rc = GERR_CORRUPT;
			break;
		}
		if (sp.check)
			continue; /* an older gpud's check of a range */
		rc = officers_wl_note_digest(&p, k, &d, err, errlen);
		if (rc)
			break;
		prev = rs->n ? rs->v[rs->n - 1].hash : NULL;
		if (sp.from != at) {
			gerr_printf(err, errlen, "officers: stored ranges "
				    "leave a gap at %" PRIu64, at);
			rc = GERR_VERIFY;
		} else if (sp.digest != digest ||
			   (prev == NULL) != (sp.state == NULL) ||
			   (prev && strcmp(prev, sp.state) != 0)) {
			gerr_printf(err, errlen, "officers: range [%" PRIu64
				    ", %" PRIu64 ") does not start from the "
				    "state the range before it ended in",
				    sp.from, sp.to);
			rc = GERR_VERIFY;
		} else if (!p.result_hash || strlen(p.result_hash) != 64) {
			gerr_printf(err, errlen, "officers: range [%" PRIu64
				    ", %" PRIu64 ") has no result", sp.from,
				    sp.to);
			rc = GERR_CORRUPT;
		} else {
			rc = ofw_range_add(rs, &cap, &sp, d, p.result_hash);
		}
		at = sp.to;
		digest = d;
	}
	if (rc)
		officers_ranges_free(rs);
	return rc;
}

/* ---- finish ------------------------------------------------------------ */

int officers_wl_finish(void *ctx, const json_t *params, const json_t *answer,
		       const struct wl_parts *parts, char *err, size_t errlen)
{
	uint64_t to, n, sum = 0, end, adigest = 0;
	const json_t *counts, *e;
	struct officers_ranges rs;
	const struct officers_range *last;
	const char *astate;
	size_t i;
	int rc = officers_wl_to(params, &to, err, errlen);

	(void)ctx;
	if (rc)
		return rc;
	n = officers_wl_answer_u64(answer, "n");
	counts = json_object_get(answer, "counts");
	if (!answer || n != to || !json_is_array(counts)) {
		gerr_printf(err, errlen, "officers finish: %" PRIu64 " of %"
			    PRIu64 " values merged", n, to);
		return GERR_VERIFY;
	}
	json_array_foreach(counts, i, e)
		sum += (uint64_t)json_integer_value(e);
	rc = officers_ranges_load(params, parts, &rs, err, errlen);
	if (rc)
		return rc;
	last = rs.n ? &rs.v[rs.n - 1] : NULL;
	end = last ? last->to : 0;
	astate = json_string_value(json_object_get(answer, "state"));
	rc = GERR_VERIFY;
	if (sum != n || end != n) {
		gerr_printf(err, errlen, "officers finish: counts sum to %"
			    PRIu64 ", ranges end at %" PRIu64 ", %" PRIu64
			    " values", sum, end, n);
	} else if (officers_wl_hex(json_object_get(answer, "digest"),
				   &adigest) ||
		   adigest != last->digest_out || !astate ||
		   strcmp(astate, last->hash) != 0) {
		gerr_printf(err, errlen, "officers finish: the answer's state "
			    "is not the last range's");
	} else if (officers_wl_answer_u64(answer, "leases") != rs.n) {
		gerr_printf(err, errlen, "officers finish: the answer counts %"
			    PRIu64 " ranges, its parts %zu",
			    officers_wl_answer_u64(answer, "leases"), rs.n);
	} else {
		rc = 0;
	}
	officers_ranges_free(&rs);
	return rc;
}

int officers_wl_results_agree(void *ctx, const json_t *params,
			      const json_t *spec, const void *a, size_t alen,
			      const void *b, size_t blen)
{
	struct officers_result ra, rb;
	char err[WL_ERRLEN];

	(void)ctx;
	(void)params;
	(void)spec;
	if (officers_result_parse(a, alen, &ra, err, sizeof(err)) ||
	    officers_result_parse(b, blen, &rb, err, sizeof(err)) ||
	    ra.from != rb.from || ra.to != rb.to || ra.fnv_in != rb.fnv_in ||
	    ra.fnv_out != rb.fnv_out ||
	    officers_result_digest(&ra, 1) != officers_result_digest(&rb, 1))
		return 0;
	for (uint64_t i = ra.from; i < ra.to; i++)
		if (officers_result_get(&ra, i) != officers_result_get(&rb, i))
			return 0;
	return 1;
}
