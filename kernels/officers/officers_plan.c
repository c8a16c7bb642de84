/* officers_plan.c - Officers params and specs, and the planner: carve (the
 * next extension), next_lease (the extension a worker runs ahead) and
 * extend (--to further). Computing every range twice is gpud's --check
 * full (replication), as for every workload.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "officers.h"
#include "officers_wl.h"

int officers_wl_to(const json_t *params, uint64_t *to, char *err,
		   size_t errlen)
{
	int rc;

	if (!json_is_object(params)) {
		gerr_printf(err, errlen, "officers: params must be an object");
		return GERR_INVAL;
	}
	rc = wl_json_u64(params, "to", 1, 0, to, err, errlen);
	if (rc == 0 && (*to < 1 || *to > OFFICERS_MAX_N)) {
		gerr_printf(err, errlen, "officers: 'to' must be 1..2^48");
		rc = GERR_INVAL;
	}
	return rc;
}

int officers_wl_hex(const json_t *j, uint64_t *v)
{
	const char *s = json_string_value(j);
	char *end;

	if (!s || strlen(s) != 16)
		return GERR_INVAL;
	*v = strtoull(s, &end, 16);
	return *end ? GERR_INVAL : 0;
}

json_t *officers_wl_json_hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%016" PRIx64, v);
	return json_string(buf);
}

uint64_t officers_wl_answer_u64(const json_t *answer, const char *key)
{
	const json_t *n = json_object_get(answer, key);

	return json_is_integer(n) && json_integer_value(n) > 0
		       ? (uint64_t)json_integer_value(n)
		       : 0;
}

int officers_wl_note_digest(const struct wl_part *p, uint64_t k,
			    uint64_t *digest, char *err, size_t errlen)
{
	if (!p->note) {
		gerr_printf(err, errlen, "officers: lease %" PRIu64 " of the "
			    "job has no note (merged before notes were kept)",
			    k);
		return GERR_CORRUPT;
	}
	if (officers_wl_hex(json_object_get(p->note, "digest"), digest)) {
		gerr_printf(err, errlen, "officers: lease %" PRIu64 " of the "
			    "job has a note without its digest", k);
		return GERR_CORRUPT;
	}
	return 0;
}

int officers_wl_spec(const json_t *params, const json_t *spec,
		     struct officers_spec *sp, char *err, size_t errlen)
{
	uint64_t n;
	const char *kind;
	int rc = officers_wl_to(params, &n, err, errlen);

	if (rc)
		return rc;
	kind = json_string_value(json_object_get(spec, "kind"));
	if (!json_is_object(spec) || !kind ||
	    (strcmp(kind, "extend") != 0 && strcmp(kind, "check") != 0)) {
		gerr_printf(err, errlen, "officers: spec must be an extend "
			    "lease");
		return GERR_INVAL;
	}
	/* Older gpuds carved check leases (a range again, for --check full,
	 * now gpud's replication); their parts are only stepped over. */
	sp->check = strcmp(kind, "check") == 0;
	rc = wl_json_u64(spec, "from", 1, 0, &sp->from, err, errlen);
	if (rc == 0)
		rc = wl_json_u64(spec, "to", 1, 0, &sp->to, err, errlen);
	if (rc)
		return rc;
	if (sp->from >= sp->to || sp->to > n ||
	    sp->to - sp->from > OFFICERS_LEASE_MAX) {
		gerr_printf(err, errlen, "officers: bad lease [%" PRIu64 ", %"
			    PRIu64 ") for %" PRIu64 " values", sp->from, sp->to,
			    n);
		return GERR_INVAL;
	}
	sp->state = json_string_value(json_object_get(spec, "state"));
	if ((sp->from > 0) != (sp->state != NULL) ||
	    (sp->state && strlen(sp->state) != 64) ||
	    officers_wl_hex(json_object_get(spec, "digest"), &sp->digest)) {
		gerr_printf(err, errlen, "officers: lease from %" PRIu64
			    " needs a state hash and digest (none for 0)",
			    sp->from);
		return GERR_INVAL;
	}
	return 0;
}

int officers_wl_parse_params(void *ctx, const json_t *args,
			     json_t **ret_params, uint64_t *ret_total_units,
			     char *err, size_t errlen)
{
	static const char *const keys[] = {"to", NULL};
	json_t *p;
	uint64_t to;
	int rc;

	(void)ctx;
	rc = wl_args_check(args, keys, "officers", "to", err, errlen);
	if (rc == 0)
		rc = wl_json_u64(args, "to", 1, 0, &to, err, errlen);
	if (rc)
		return rc;
	if (to < 1 || to > OFFICERS_MAX_N) {
		gerr_printf(err, errlen, "officers: 'to' must be between 1 and "
			    "2^48, got %" PRIu64, to);
		return GERR_INVAL;
	}
	p = json_pack("{s:I}", "to", (json_int_t)to);
	if (!p)
		return GERR_NOMEM;
	*ret_params = p;
	*ret_total_units = to;
	return 0;
}

/* The next extension [next, next + size), from the answer's last state. */
static int ofw_carve_extend(const json_t *answer, uint64_t next, uint64_t to,
			    uint64_t want_units, json_t **ret_spec,
			    uint64_t *ret_units)
{
	uint64_t size, end, digest = officers_empty_digest();
	const char *state = NULL;
	json_t *spec;

	if (next > 0) {
		state = json_string_value(json_object_get(answer, "state"));
		if (!state ||
		    officers_wl_hex(json_object_get(answer, "digest"), &digest))
			return GERR_INVAL;
	}
	size = want_units ? want_units : OFFICERS_LEASE_DEFAULT;
	if (size > OFFICERS_LEASE_MAX)
		size = OFFICERS_LEASE_MAX;
	end = to - next < size ? to : next + size;
	spec = json_pack("{s:s, s:I, s:I, s:s?, s:o}", "kind", "extend",
			 "from", (json_int_t)next, "to", (json_int_t)end,
			 "state", state, "digest",
			 officers_wl_json_hex(digest));
	if (spec && !state && json_object_set_new(spec, "state", json_null())) {
		json_decref(spec);
		spec = NULL;
	}
	if (!spec)
		return GERR_NOMEM;
	*ret_spec = spec;
	*ret_units = end - next;
	return 0;
}

int officers_wl_carve(void *ctx, const json_t *params, const json_t *cursor,
		      const json_t *answer, const struct wl_parts *parts,
		      uint64_t want_units, json_t **ret_spec,
		      uint64_t *ret_units, json_t **ret_cursor, int *ret_last)
{
	uint64_t to, next = 0, units = 0,
		     merged = officers_wl_answer_u64(answer, "n");
	char err[WL_ERRLEN];
	json_t *spec = NULL, *cur;
	int rc;

	(void)ctx;
	(void)parts;
	if (officers_wl_to(params, &to, err, sizeof(err)))
		return GERR_INVAL;
	if (cursor && wl_json_u64(cursor, "next", 1, 0, &next, err,
				  sizeof(err)))
		return GERR_INVAL;
	if (next < merged)
		return GERR_INVAL;
	if (next >= to)
		return GERR_DONE;
	if (next != merged)
		return GERR_AGAIN; /* the last extension is not merged yet */
	rc = ofw_carve_extend(answer, next, to, want_units, &spec, &units);
	if (rc)
		return rc;
	next += units;
	cur = json_pack("{s:I}", "next", (json_int_t)next);
	if (!cur) {
		json_decref(spec);
		return GERR_NOMEM;
	}
	*ret_spec = spec;
	*ret_units = units;
	*ret_cursor = cur;
	*ret_last = next >= to;
	return 0;
}

/* The extension after spec, as carve will cut it once this result is
 * merged: from its end, the same size (carve's size is the scheduler's,
 * steady for a steady worker), starting from this result's blob and end
 * digest. */
int officers_wl_next_lease(void *ctx, const json_t *params,
			   const json_t *spec, const void *result, size_t len,
			   const char *result_hash, json_t **ret_spec)
{
	char err[WL_ERRLEN];
	struct officers_result r;
	struct officers_spec sp;
	uint64_t n, end;
	json_t *next;

	(void)ctx;
	if (officers_wl_spec(params, spec, &sp, err, sizeof(err)) ||
	    sp.check || officers_wl_to(params, &n, err, sizeof(err)) ||
	    officers_result_parse(result, len, &r, err, sizeof(err)) ||
	    r.to != sp.to || r.to >= n || !result_hash)
		return GERR_DONE;
	end = n - r.to < sp.to - sp.from ? n : r.to + (sp.to - sp.from);
	next = json_pack("{s:s, s:I, s:I, s:s, s:o}", "kind", "extend",
			 "from", (json_int_t)r.to, "to", (json_int_t)end,
			 "state", result_hash, "digest",
			 officers_wl_json_hex(officers_result_digest(&r, 1)));
	if (!next)
		return GERR_NOMEM;
	*ret_spec = next;
	return 0;
}

int officers_wl_extend(void *ctx, const json_t *params, const json_t *answer,
		       const json_t *args, json_t **ret_params,
		       uint64_t *ret_total_units, char *err, size_t errlen)
{
	uint64_t old, to, total;
	json_t *p = NULL;
	int rc = officers_wl_to(params, &old, err, errlen);

	(void)answer;
	if (rc)
		return rc;
	rc = officers_wl_parse_params(ctx, args, &p, &total, err, errlen);
	if (rc == 0)
		rc = officers_wl_to(p, &to, err, errlen);
	if (rc) {
		json_decref(p);
		return rc;
	}
	if (to <= old) {
		json_decref(p);
		gerr_printf(err, errlen, "officers: extend wants --to beyond %"
			    PRIu64 ", got %" PRIu64, old, to);
		return GERR_INVAL;
	}
	*ret_params = p;
	*ret_total_units = total;
	return 0;
}
