/* officers_workload.c - the Officers workload behind struct workload:
 * parameters, the sequential lease planner, runs (CPU or CUDA), checkpoint
 * checks, sampled verification, merging, the final check, rendering,
 * `gpuctl extend JOB --to M` and `gpuctl result JOB --values FROM:TO`.
 *
 * params  {"to": N, "check": "sample" | "full"}: compute G(0..N-1);
 *          "full" adds a check lease per stored range (below)
 * cursor  {"next": n, "checks": k}: values [0, n) are leased, and check
 *          leases for the first k stored ranges
 * spec    {"kind": "extend", "from": F, "to": T, "state": HASH | null,
 *          "digest": "16 hex"}: continue from the state at F, which is the
 *          result blob HASH of the lease that ended at F (null for F = 0);
 *          digest is that state's digest (officers_seq_digest), recorded
 *          by merge, so run and verify can check they start from it.
 *          {"kind": "check", ..., "expect": "16 hex"}: the same run again,
 *          on any worker and in parallel with the extension, for a range
 *          already merged; its result must end in the stored range's state
 *          digest ("expect"), which covers every value through the
 *          checksum chain, the counts, first occurrences and rare table.
 * result  officers.h's result format: values G(vbase..T-1) as uint16 LE,
 *          the prefix, the rare table and the running statistics at T. It
 *          is also the next lease's state.
 * answer  {"n": values merged (exact), "leases": k, "fnv": "16 hex",
 *          "digest": "16 hex", "state": HASH, "blobs": [{"from", "to",
 *          "hash", "digest", "checked" (after its check lease)}...],
 *          "rares": [[pos, value]...], "zeros": [pos...],
 *          "max": {"value": v, "first": pos}, "counts": [...],
 *          "first": [...] (per value, -1 when not seen; up to the max)}
 *
 * Extension leases run one after another: carve answers GERR_AGAIN while
 * the last one is not merged. A new rare value found at p inside a lease is
 * recorded by the run, which recomputes everything after p with the larger
 * rare table before it returns, so nothing past p is ever merged from the
 * smaller table.
 *
 * verify (coordinator, no blob access) checks the result against itself and
 * the spec: the input state's digest (rebuilt from the result's tail, prefix,
 * rare table and statistics minus the lease's values) equals the spec's, the
 * checksum chain, statistics and rare table match the values, and the exact
 * value (candidate + exact step) is recomputed at the lease's first and last
 * positions, at every new rare position and at a random sample.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "officers.h"
#include "officers_cuda.h"
#include "workload.h"

#define LEASE_DEFAULT (1ull << 24)
#define LEASE_MAX (1ull << 26)
#define VERIFY_SAMPLES 256
#define STEP_CPU (1ull << 20)
#define STEP_CUDA LEASE_MAX  /* one call per lease: no pipeline restarts */
#define EXPORT_MAX (PROTO_MAX_BIN_VALUES)
#define PROTO_MAX_BIN_VALUES (128ull << 20) /* 256 MiB of uint16 */

static int get_to(const json_t *params, uint64_t *to, char *err,
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

static int hex_u64(const json_t *j, uint64_t *v)
{
	const char *s = json_string_value(j);
	char *end;

	if (!s || strlen(s) != 16)
		return GERR_INVAL;
	*v = strtoull(s, &end, 16);
	return *end ? GERR_INVAL : 0;
}

static json_t *json_hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%016" PRIx64, v);
	return json_string(buf);
}

struct spec {
	uint64_t from, to, digest;
	const char *state; /* NULL for from == 0 */
	int check;         /* a check lease: recompute a merged range */
	uint64_t expect;   /* check: the range's stored end digest */
};

/* params' "check": 1 for "full", 0 for "sample" (the default). */
static int full_check(const json_t *params)
{
	const char *c = json_string_value(json_object_get(params, "check"));

	return c && strcmp(c, "full") == 0;
}

static int get_spec(const json_t *params, const json_t *spec, struct spec *sp,
		    char *err, size_t errlen)
{
	uint64_t n;
	const char *kind;
	int rc = get_to(params, &n, err, errlen);

	if (rc)
		return rc;
	kind = json_string_value(json_object_get(spec, "kind"));
	if (!json_is_object(spec) || !kind ||
	    (strcmp(kind, "extend") != 0 && strcmp(kind, "check") != 0)) {
		gerr_printf(err, errlen, "officers: spec must be an extend or "
			    "check lease");
		return GERR_INVAL;
	}
	sp->check = strcmp(kind, "check") == 0;
	if (sp->check && hex_u64(json_object_get(spec, "expect"), &sp->expect)) {
		gerr_printf(err, errlen, "officers: a check lease needs the "
			    "digest it must reach");
		return GERR_INVAL;
	}
	rc = wl_json_u64(spec, "from", 1, 0, &sp->from, err, errlen);
	if (rc == 0)
		rc = wl_json_u64(spec, "to", 1, 0, &sp->to, err, errlen);
	if (rc)
		return rc;
	if (sp->from >= sp->to || sp->to > n || sp->to - sp->from > LEASE_MAX) {
		gerr_printf(err, errlen, "officers: bad lease [%" PRIu64 ", %" PRIu64
		       ") for %" PRIu64 " values", sp->from, sp->to, n);
		return GERR_INVAL;
	}
	sp->state = json_string_value(json_object_get(spec, "state"));
	if ((sp->from > 0) != (sp->state != NULL) ||
	    (sp->state && strlen(sp->state) != 64) ||
	    hex_u64(json_object_get(spec, "digest"), &sp->digest)) {
		gerr_printf(err, errlen, "officers: lease from %" PRIu64 " needs a "
		       "state hash and digest (none for 0)", sp->from);
		return GERR_INVAL;
	}
	return 0;
}

static int ofw_parse_params(void *ctx, const json_t *args, json_t **ret_params,
			   uint64_t *ret_total_units, char *err, size_t errlen)
{
	const char *key, *check;
	json_t *val, *p;
	uint64_t to;
	int rc;

	if (!json_is_object(args)) {
		gerr_printf(err, errlen, "officers: arguments must be an object");
		return GERR_INVAL;
	}
	json_object_foreach((json_t *)args, key, val) {
		if (strcmp(key, "to") != 0 && strcmp(key, "check") != 0) {
			gerr_printf(err, errlen, "officers: unknown parameter '%s' "
			       "(takes to, check)", key);
			return GERR_INVAL;
		}
	}
	check = json_string_value(json_object_get(args, "check"));
	if (json_object_get(args, "check") &&
	    (!check || (strcmp(check, "sample") != 0 &&
			strcmp(check, "full") != 0))) {
		gerr_printf(err, errlen, "officers: --check is sample (gpud "
			    "recomputes a sample of every lease) or full (every "
			    "range is computed twice, by separate leases)");
		return GERR_INVAL;
	}
	rc = wl_json_u64(args, "to", 1, 0, &to, err, errlen);
	if (rc)
		return rc;
	if (to < 1 || to > OFFICERS_MAX_N) {
		gerr_printf(err, errlen, "officers: 'to' must be between 1 and "
		       "2^48, got %" PRIu64, to);
		return GERR_INVAL;
	}
	p = json_pack("{s:I, s:s}", "to", (json_int_t)to, "check",
		      check ? check : "sample");
	if (!p)
		return GERR_NOMEM;
	*ret_params = p;
	/* Check leases count as units too: every value is computed twice. */
	*ret_total_units = full_check(p) ? 2 * to : to;
	return 0;
}

static uint64_t answer_n(const json_t *answer)
{
	const json_t *n = json_object_get(answer, "n");

	return json_is_integer(n) ? (uint64_t)json_integer_value(n) : 0;
}

/* The check lease of stored range k: the same run as its extension, from
 * the state the range started at. GERR_AGAIN when the range predates
 * per-range digests (nothing to compare with). */
static int carve_check(const json_t *answer, size_t k, json_t **ret_spec,
		       uint64_t *ret_units)
{
	const json_t *blobs = json_object_get(answer, "blobs");
	const json_t *b = json_array_get(blobs, k);
	const json_t *prev = k ? json_array_get(blobs, k - 1) : NULL;
	uint64_t from, to, expect, digest = officers_empty_digest();
	char err[WL_ERRLEN];
	json_t *spec;

	if (wl_json_u64(b, "from", 1, 0, &from, err, sizeof(err)) ||
	    wl_json_u64(b, "to", 1, 0, &to, err, sizeof(err)) ||
	    hex_u64(json_object_get(b, "digest"), &expect) ||
	    (prev && hex_u64(json_object_get(prev, "digest"), &digest)))
		return GERR_AGAIN;
	spec = json_pack("{s:s, s:I, s:I, s:O, s:o, s:o}", "kind", "check",
			 "from", (json_int_t)from, "to", (json_int_t)to,
			 "state", prev ? json_object_get(prev, "hash")
				       : json_null(),
			 "digest", json_hex(digest), "expect", json_hex(expect));
	if (!spec)
		return GERR_NOMEM;
	*ret_spec = spec;
	*ret_units = to - from;
	return 0;
}

static int ofw_carve(void *ctx, const json_t *params, const json_t *cursor,
		    const json_t *answer, const struct wl_parts *parts, uint64_t want_units,
		    json_t **ret_spec, uint64_t *ret_units,
		    json_t **ret_cursor, int *ret_last)
{
	uint64_t to, next = 0, checks = 0, nblobs,
		     merged = answer ? answer_n(answer) : 0, size, end, digest;
	char err[WL_ERRLEN];
	const char *state = NULL;
	json_t *spec = NULL, *cur;
	int rc;

	if (get_to(params, &to, err, sizeof(err)))
		return GERR_INVAL;
	if (cursor && (wl_json_u64(cursor, "next", 1, 0, &next, err,
				   sizeof(err)) ||
		       wl_json_u64(cursor, "checks", 0, 0, &checks, err,
				   sizeof(err))))
		return GERR_INVAL;
	if (next < merged)
		return GERR_INVAL;
	nblobs = json_array_size(json_object_get(answer, "blobs"));
	if (next < to && next == merged) {
		/* The next extension: it starts from the last merged state. */
		if (next > 0) {
			state = json_string_value(json_object_get(answer,
								  "state"));
			if (!state || hex_u64(json_object_get(answer, "digest"),
					      &digest))
				return GERR_INVAL;
		} else {
			digest = officers_empty_digest();
		}
		size = want_units ? want_units : LEASE_DEFAULT;
		if (size > LEASE_MAX)
			size = LEASE_MAX;
		end = to - next < size ? to : next + size;
		spec = json_pack("{s:s, s:I, s:I, s:s?, s:o}", "kind", "extend",
				 "from", (json_int_t)next, "to", (json_int_t)end,
				 "state", state, "digest", json_hex(digest));
		if (spec && !state)
			json_object_set_new(spec, "state", json_null());
		if (!spec)
			return GERR_NOMEM;
		*ret_units = end - next;
		next = end;
	} else if (full_check(params) && checks < nblobs) {
		/* While the extension runs (or waits for its merge), check
		 * the ranges already stored, in parallel. */
		do
			rc = carve_check(answer, (size_t)checks++, &spec,
					 ret_units);
		while (rc == GERR_AGAIN && checks < nblobs);
		if (rc == GERR_NOMEM)
			return rc;
		if (rc)
			spec = NULL;
	}
	if (!spec) {
		/* DONE means nothing more will ever be leased: with checks,
		 * only once the last range is merged and its check carved. */
		if (next >= to && (!full_check(params) ||
				   (merged >= to && checks >= nblobs)))
			return GERR_DONE;
		return GERR_AGAIN; /* an extension or its merge is pending */
	}
	cur = json_pack("{s:I, s:I}", "next", (json_int_t)next, "checks",
			(json_int_t)checks);
	if (!cur) {
		json_decref(spec);
		return GERR_NOMEM;
	}
	*ret_spec = spec;
	*ret_cursor = cur;
	/* As above: the last lease leaves nothing to extend and, with checks,
	 * every stored range merged and its check carved. */
	*ret_last = next >= to && (!full_check(params) ||
				   (merged >= to && checks >= nblobs));
	return 0;
}

/* ---- run ------------------------------------------------------------------ */

/* The state of lease [from, cap_to) from a result (its checkpoint, or the
 * previous lease's result): the values from the lease's own vbase on. */
static int seq_from_blob(const void *bytes, size_t len, uint64_t from,
			 uint64_t cap_to, struct officers_seq *s,
			 struct officers_result *r, char *err, size_t errlen)
{
	int rc = officers_result_parse(bytes, len, r, err, errlen);

	if (rc)
		return rc;
	rc = officers_seq_from_result(
		s, r, from - (from < OFFICERS_TAIL ? from : OFFICERS_TAIL),
		cap_to);
	if (rc)
		gerr_printf(err, errlen, "officers: out of memory for the state");
	return rc;
}

static int run_steps(struct officers_seq *s, const struct spec *sp,
		     uint64_t fnv_in, uint32_t nrare_in, int threads,
		     void *cuda, const struct wl_run_io *io, char *err,
		     size_t errlen)
{
	uint64_t step = cuda ? STEP_CUDA : STEP_CPU * (uint64_t)threads;

	while (s->n < sp->to) {
		uint64_t to = sp->to - s->n < step ? sp->to : s->n + step;
		int rc;

		if (io && io->should_stop && io->should_stop(io->opaque))
			return GERR_CANCELLED;
		if (cuda)
			rc = officers_cuda_extend(cuda, s, to, threads, io,
						  sp->from, NULL, err, errlen);
		else
			rc = officers_cpu_extend(s, to, threads, io, sp->from,
						 err, errlen);
		if (rc)
			return rc;
		if (io && io->progress)
			io->progress(io->opaque, s->n - sp->from);
		if (s->n < sp->to && s->n > sp->from && io && io->checkpoint &&
		    io->checkpoint_due && io->checkpoint_due(io->opaque)) {
			void *buf;
			size_t len;
			rc = officers_result_encode(s, sp->from, fnv_in,
						    nrare_in, &buf, &len);
			if (rc == 0) {
				rc = io->checkpoint(io->opaque, buf, len,
						    s->n - sp->from);
				free(buf);
			}
			if (rc) {
				gerr_printf(err, errlen, "officers: checkpoint: %s",
				       gerr_str(rc));
				return rc;
			}
		}
	}
	if (io && io->should_stop && io->should_stop(io->opaque))
		return GERR_CANCELLED;
	return 0;
}

static int ofw_run(void *ctx, const json_t *params, const json_t *spec,
		  const void *checkpoint, size_t checkpoint_len,
		  const struct wl_device *dev, const struct wl_run_io *io,
		  void **ret_result, size_t *ret_result_len, char *err,
		  size_t errlen)
{
	struct officers_seq *s;
	struct officers_result r;
	struct spec sp;
	uint64_t fnv_in = OFFICERS_FNV_BASIS;
	uint32_t nrare_in = 0;
	void *cuda = NULL;
	int threads = 1, rc;

	rc = get_spec(params, spec, &sp, err, errlen);
	if (rc)
		return rc;
	if (dev) {
		threads = dev->threads > 0 ? dev->threads : 1;
		if (dev->kind == WL_DEVICE_CUDA) {
			cuda = dev->cuda_ctx;
			if (!cuda) {
				gerr_printf(err, errlen, "officers: CUDA device "
				       "without a context (cuda_open)");
				return GERR_INVAL;
			}
		}
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return GERR_NOMEM;
	if (checkpoint) {
		rc = seq_from_blob(checkpoint, checkpoint_len, sp.from, sp.to,
				   s, &r, err, errlen);
		if (rc == 0 && (r.from != sp.from || r.to >= sp.to)) {
			gerr_printf(err, errlen, "officers: checkpoint is for "
			       "another lease");
			rc = GERR_VERIFY;
		}
		if (rc)
			goto out;
		fnv_in = r.fnv_in;
		nrare_in = r.nrare_in;
	} else if (sp.from == 0) {
		rc = officers_seq_init(s, sp.to);
		if (rc)
			goto out;
	} else {
		void *st = NULL;
		size_t st_len = 0;
		if (!io || !io->fetch) {
			gerr_printf(err, errlen, "officers: this run cannot fetch "
			       "its state blob");
			rc = GERR_UNSUPPORTED;
			goto out;
		}
		rc = io->fetch(io->opaque, sp.state, &st, &st_len);
		if (rc) {
			gerr_printf(err, errlen, "officers: fetch state %.16s: %s",
			       sp.state, gerr_str(rc));
			goto out;
		}
		rc = seq_from_blob(st, st_len, sp.from, sp.to, s, &r, err,
				   errlen);
		if (rc == 0 && (r.to != sp.from ||
				officers_seq_digest(s) != sp.digest)) {
			gerr_printf(err, errlen, "officers: state blob %.16s does "
			       "not match the lease (ends at %" PRIu64 ")",
			       sp.state, r.to);
			rc = GERR_VERIFY;
		}
		free(st);
		if (rc)
			goto out;
		/* The result's tail starts at vbase of this lease. */
		fnv_in = s->st.fnv;
		nrare_in = s->nrare;
	}
	rc = run_steps(s, &sp, fnv_in, nrare_in, threads, cuda, io, err,
		       errlen);
	if (rc == 0) {
		rc = officers_result_encode(s, sp.from, fnv_in, nrare_in,
					    ret_result, ret_result_len);
		if (rc)
			gerr_printf(err, errlen, "officers: encode: %s",
			       gerr_str(rc));
	}
out:
	officers_seq_free(s);
	free(s);
	return rc;
}

/* The extension after spec, as ofw_carve will cut it once this result is
 * merged: from its end, the same size (ofw_carve's size is the scheduler's,
 * steady for a steady worker), starting from this result's blob and end
 * digest. */
static int ofw_next_lease(void *ctx, const json_t *params, const json_t *spec,
			 const void *result, size_t len,
			 const char *result_hash, json_t **ret_spec)
{
	char err[WL_ERRLEN];
	struct officers_result r;
	struct spec sp;
	uint64_t n, end;
	json_t *next;

	if (get_spec(params, spec, &sp, err, sizeof(err)) || sp.check ||
	    get_to(params, &n, err, sizeof(err)) ||
	    officers_result_parse(result, len, &r, err, sizeof(err)) ||
	    r.to != sp.to || r.to >= n || !result_hash)
		return GERR_DONE;
	end = n - r.to < sp.to - sp.from ? n : r.to + (sp.to - sp.from);
	next = json_pack("{s:s, s:I, s:I, s:s, s:o}", "kind", "extend",
			 "from", (json_int_t)r.to, "to", (json_int_t)end,
			 "state", result_hash, "digest",
			 json_hex(officers_result_digest(&r, 1)));
	if (!next)
		return GERR_NOMEM;
	*ret_spec = next;
	return 0;
}

static int ofw_check_checkpoint(void *ctx, const json_t *params, const json_t *spec,
			       const void *bytes, size_t len, char *err,
			       size_t errlen)
{
	struct officers_result r;
	struct spec sp;
	int rc = get_spec(params, spec, &sp, err, errlen);

	if (rc)
		return rc;
	rc = officers_result_parse(bytes, len, &r, err, errlen);
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

/* ---- verify --------------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int check_position(const struct officers_seq *s, uint64_t x,
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

static int verify_result(const struct officers_result *r,
			 const struct spec *sp, uint64_t seed, char *err,
			 size_t errlen)
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
			rc = check_position(s, r->from + k, err, errlen);
		if (rc == 0 && r->to - 1 - k >= r->from && r->to - 1 - k >= 2)
			rc = check_position(s, r->to - 1 - k, err, errlen);
	}
	for (uint32_t i = r->nrare_in; i < r->nrare && rc == 0; i++)
		if (s->rare[i].pos >= 2)
			rc = check_position(s, s->rare[i].pos, err, errlen);
	for (k = 0; k < VERIFY_SAMPLES && rc == 0; k++) {
		uint64_t x = r->from + mix64(seed + k * 0x9e3779b97f4a7c15ull) %
					       (r->to - r->from);
		if (x >= 2)
			rc = check_position(s, x, err, errlen);
	}
out:
	if (s)
		officers_seq_free(s);
	free(s);
	free(first);
	return rc;
}

static int ofw_verify(void *ctx, const json_t *params, const json_t *spec,
		     const void *result, size_t len, uint64_t seed, char *err,
		     size_t errlen)
{
	struct officers_result r;
	struct spec sp;
	int rc = get_spec(params, spec, &sp, err, errlen);

	if (rc)
		return rc;
	rc = officers_result_parse(result, len, &r, err, errlen);
	if (rc)
		return GERR_VERIFY;
	if (!sp.check)
		return verify_result(&r, &sp, seed, err, errlen);
	/* A check lease recomputed a stored range on its own: it must start
	 * from that range's start state and end in its stored end state. */
	if (r.from != sp.from || r.to != sp.to ||
	    officers_result_digest(&r, 0) != sp.digest) {
		gerr_printf(err, errlen, "officers check: the result is not for "
			    "the range [%" PRIu64 ", %" PRIu64 ") from its state",
			    sp.from, sp.to);
		return GERR_VERIFY;
	}
	if (officers_result_digest(&r, 1) != sp.expect) {
		gerr_printf(err, errlen, "officers check: recomputing [%" PRIu64
			    ", %" PRIu64 ") gives another state than the stored "
			    "result (digest %016" PRIx64 ", stored %016" PRIx64
			    ")", sp.from, sp.to, officers_result_digest(&r, 1),
			    sp.expect);
		return GERR_VERIFY;
	}
	return 0;
}

/* Merge of a check lease: mark its stored range checked. */
static int merge_check(const json_t *answer, const struct spec *sp,
		       json_t **ret_answer)
{
	json_t *out = json_deep_copy(answer), *b;
	uint64_t from, to;
	size_t i;
	char err[WL_ERRLEN];

	if (!out)
		return GERR_NOMEM;
	json_array_foreach(json_object_get(out, "blobs"), i, b) {
		if (wl_json_u64(b, "from", 1, 0, &from, err, sizeof(err)) ||
		    wl_json_u64(b, "to", 1, 0, &to, err, sizeof(err)) ||
		    from != sp->from || to != sp->to)
			continue;
		if (json_object_set_new(b, "checked", json_true())) {
			json_decref(out);
			return GERR_NOMEM;
		}
		*ret_answer = out;
		return 0;
	}
	json_decref(out);
	return GERR_STATE; /* no such stored range */
}

/* ---- merge ---------------------------------------------------------------- */

static json_t *u64_array(const uint64_t *v, unsigned n, int none_as_minus1)
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

static int ofw_merge(void *ctx, const json_t *params, const json_t *answer,
		    const json_t *spec, const void *result, size_t len,
		    const char *result_hash, json_t **ret_answer, json_t **ret_note)
{
	char err[WL_ERRLEN];
	struct officers_result r;
	struct spec sp;
	uint64_t count[OFFICERS_VMAX], first[OFFICERS_VMAX];
	unsigned top = 0;
	json_t *out, *blobs, *zeros, *rares;
	int rc;

	rc = get_spec(params, spec, &sp, err, sizeof(err));
	if (rc)
		return rc;
	rc = officers_result_parse(result, len, &r, err, sizeof(err));
	if (rc)
		return rc;
	if (sp.check)
		return answer ? merge_check(answer, &sp, ret_answer) : GERR_STATE;
	if (!result_hash || r.from != sp.from || r.to != sp.to ||
	    answer_n(answer) != r.from)
		return GERR_STATE; /* extensions merge in order */
	for (unsigned v = 0; v < OFFICERS_VMAX; v++) {
		const uint8_t *pc = (const uint8_t *)(r.count_le + v);
		const uint8_t *pf = (const uint8_t *)(r.first_le + v);
		count[v] = first[v] = 0;
		for (int b = 0; b < 8; b++) {
			count[v] |= (uint64_t)pc[b] << (8 * b);
			first[v] |= (uint64_t)pf[b] << (8 * b);
		}
		if (count[v])
			top = v;
	}
	blobs = answer ? json_deep_copy(json_object_get(answer, "blobs"))
		       : NULL;
	zeros = answer ? json_deep_copy(json_object_get(answer, "zeros"))
		       : NULL;
	if (!json_is_array(blobs)) {
		json_decref(blobs);
		blobs = json_array();
	}
	if (!json_is_array(zeros)) {
		json_decref(zeros);
		zeros = json_array();
	}
	rares = json_array();
	if (!blobs || !zeros || !rares)
		goto nomem;
	json_array_append_new(blobs, json_pack("{s:I, s:I, s:s, s:o}", "from",
					       (json_int_t)r.from, "to",
					       (json_int_t)r.to, "hash",
					       result_hash, "digest",
					       json_hex(officers_result_digest(&r, 1))));
	if (count[0] > json_array_size(zeros))
		for (uint64_t x = r.from; x < r.to &&
		     json_array_size(zeros) < OFFICERS_MAX_ZEROS; x++)
			if (officers_result_get(&r, x) == 0)
				json_array_append_new(zeros,
						      json_integer((json_int_t)x));
	for (uint32_t i = 0; i < r.nrare; i++) {
		const uint8_t *e = r.rare_le + 12 * (size_t)i;
		uint64_t pos = 0;
		for (int b = 0; b < 8; b++)
			pos |= (uint64_t)e[b] << (8 * b);
		json_array_append_new(rares, json_pack("[I, i]",
						       (json_int_t)pos,
						       (int)(e[8] | e[9] << 8)));
	}
	out = json_pack("{s:I, s:I, s:o, s:o, s:s, s:o, s:o, s:o, s:{s:i, s:I},"
			" s:o, s:o}",
			"n", (json_int_t)r.to,
			"leases", (json_int_t)(answer ? json_integer_value(
				json_object_get(answer, "leases")) + 1 : 1),
			"fnv", json_hex(r.fnv_out),
			"digest", json_hex(officers_result_digest(&r, 1)),
			"state", result_hash, "blobs", blobs, "rares", rares,
			"zeros", zeros, "max", "value", (int)top, "first",
			(json_int_t)first[top],
			"counts", u64_array(count, top + 1, 0),
			"first", u64_array(first, top + 1, 1));
	if (!out)
		return GERR_NOMEM;
	*ret_answer = out;
	return 0;
nomem:
	json_decref(blobs);
	json_decref(zeros);
	json_decref(rares);
	return GERR_NOMEM;
}

/* ---- finish, render ------------------------------------------------------ */

static int ofw_finish(void *ctx, const json_t *params, const json_t *answer, const struct wl_parts *parts, char *err,
		     size_t errlen)
{
	uint64_t to, n, sum = 0, at = 0;
	const json_t *counts, *blobs, *e;
	size_t i;
	int rc = get_to(params, &to, err, errlen);

	if (rc)
		return rc;
	n = answer_n(answer);
	counts = json_object_get(answer, "counts");
	blobs = json_object_get(answer, "blobs");
	if (!answer || n != to || !json_is_array(counts) ||
	    !json_is_array(blobs)) {
		gerr_printf(err, errlen, "officers finish: %" PRIu64 " of %" PRIu64
		       " values merged", n, to);
		return GERR_VERIFY;
	}
	json_array_foreach(counts, i, e)
		sum += (uint64_t)json_integer_value(e);
	json_array_foreach(blobs, i, e) {
		uint64_t f = (uint64_t)json_integer_value(
			json_object_get(e, "from"));
		if (f != at) {
			gerr_printf(err, errlen, "officers finish: stored ranges "
			       "leave a gap at %" PRIu64, at);
			return GERR_VERIFY;
		}
		at = (uint64_t)json_integer_value(json_object_get(e, "to"));
		if (full_check(params) &&
		    !json_is_true(json_object_get(e, "checked"))) {
			gerr_printf(err, errlen, "officers finish: range [%" PRIu64
				    ", %" PRIu64 ") has no check", f, at);
			return GERR_VERIFY;
		}
	}
	if (sum != n || at != n) {
		gerr_printf(err, errlen, "officers finish: counts sum to %" PRIu64
		       ", ranges end at %" PRIu64 ", %" PRIu64 " values", sum,
		       at, n);
		return GERR_VERIFY;
	}
	return 0;
}

static char *ofw_render_text(void *ctx, const json_t *params, const json_t *answer, const struct wl_parts *parts)
{
	uint64_t to = 0;
	char err[WL_ERRLEN];
	const json_t *rares, *zeros, *counts, *e, *mx;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f;

	if (get_to(params, &to, err, sizeof(err)) || !answer)
		return strdup("officers: no answer yet\n");
	rares = json_object_get(answer, "rares");
	zeros = json_object_get(answer, "zeros");
	counts = json_object_get(answer, "counts");
	mx = json_object_get(answer, "max");
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "officers: G(0..%" PRIu64 "-1) exact (%" PRIu64
		" asked), %" PRId64 " leases\n", answer_n(answer), to,
		(int64_t)json_integer_value(json_object_get(answer, "leases")));
	if (full_check(params)) {
		const json_t *blobs = json_object_get(answer, "blobs"), *b;
		uint64_t upto = 0;
		size_t nchecked = 0, k;
		int gap = 0;
		json_array_foreach(blobs, k, b) {
			if (!json_is_true(json_object_get(b, "checked"))) {
				gap = 1;
				continue;
			}
			nchecked++;
			if (!gap)
				upto = (uint64_t)json_integer_value(
					json_object_get(b, "to"));
		}
		fprintf(f, "computed twice (check leases): G(0..%" PRIu64
			"-1); %zu of %zu stored ranges checked\n", upto,
			nchecked, json_array_size(blobs));
	}
	fprintf(f, "checksum (FNV-1a 64 of the values as uint16 LE): %s\n",
		json_string_value(json_object_get(answer, "fnv")));
	fprintf(f, "largest value: %" PRId64 " (first at %" PRId64 ")\n",
		(int64_t)json_integer_value(json_object_get(mx, "value")),
		(int64_t)json_integer_value(json_object_get(mx, "first")));
	fprintf(f, "rare positions: %zu", json_array_size(rares));
	if (json_array_size(rares)) {
		e = json_array_get(rares, json_array_size(rares) - 1);
		fprintf(f, ", the last G(%" PRId64 ") = %" PRId64,
			(int64_t)json_integer_value(json_array_get(e, 0)),
			(int64_t)json_integer_value(json_array_get(e, 1)));
	}
	fprintf(f, "\nzero positions:");
	json_array_foreach(zeros, i, e)
		fprintf(f, " %" PRId64, (int64_t)json_integer_value(e));
	fprintf(f, "\nvalue counts (value: count):\n");
	json_array_foreach(counts, i, e)
		if (json_integer_value(e))
			fprintf(f, "%4zu: %" PRId64 "%s", i,
				(int64_t)json_integer_value(e),
				i % 6 == 5 ? "\n" : "   ");
	fprintf(f, "\n");
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int ofw_render_files(void *ctx, const json_t *params, const json_t *answer, const struct wl_parts *parts,
			   const char *dir, char *err, size_t errlen)
{
	const json_t *counts = json_object_get(answer, "counts");
	char path[4096], tmp[4200];
	double peak = 1;
	size_t nv, i;
	const json_t *e;
	FILE *f;

	(void)params;
	if (!json_is_array(counts) || json_array_size(counts) == 0) {
		gerr_printf(err, errlen, "officers: no answer to plot");
		return GERR_INVAL;
	}
	nv = json_array_size(counts);
	json_array_foreach(counts, i, e)
		if ((double)json_integer_value(e) > peak)
			peak = (double)json_integer_value(e);
	snprintf(path, sizeof(path), "%s/officers-values.svg", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		gerr_printf(err, errlen, "officers: cannot write %s", tmp);
		return GERR_IO;
	}
	const int W = 900, H = 400, L = 60, B = 40, T = 30;
	double bw = (double)(W - L - 10) / (double)nv;
	double top = ceil(log10(peak));
	if (top < 1)
		top = 1;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n",
		W, H);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	fprintf(f, "<text x=\"%d\" y=\"18\" font-size=\"14\">Officers: value "
		"frequencies in G(0..%" PRIu64 "-1) (red: rare values)</text>\n",
		L, answer_n(answer));
	for (int d = 0; d <= (int)top; d++) {
		double y = H - B - (H - B - T) * d / top;
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
			"text-anchor=\"end\">1e%d</text>\n", L, W - 10, y, y,
			L - 4, y + 4, d);
	}
	json_array_foreach(counts, i, e) {
		double c = (double)json_integer_value(e);
		if (c <= 0)
			continue;
		double h = (H - B - T) * (log10(c) + 0.05) / top;
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
			"height=\"%.2f\" fill=\"%s\"><title>%zu: %.0f</title>"
			"</rect>\n", L + (double)i * bw, H - B - h,
			bw * 0.9 > 0.5 ? bw * 0.9 : 0.5, h,
			officers_is_rare((unsigned)i) ? "#c0392b" : "#2c6fbb",
			i, c);
	}
	for (i = 0; i < nv; i += 32)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
			"%zu</text>\n", L + ((double)i + 0.45) * bw,
			H - B + 14, i);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">value "
		"(count on a log scale)</text>\n", (L + W) / 2, H - 8);
	fprintf(f, "</svg>\n");
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		remove(tmp);
		gerr_printf(err, errlen, "officers: cannot write %s", path);
		return GERR_IO;
	}
	return 0;
}

/* ---- extend and export ---------------------------------------------------- */

static int ofw_extend(void *ctx, const json_t *params, const json_t *answer,
		     const json_t *args, json_t **ret_params,
		     uint64_t *ret_total_units, char *err, size_t errlen)
{
	uint64_t old, to, total;
	json_t *p = NULL;
	int rc = get_to(params, &old, err, errlen);

	(void)answer;
	if (rc)
		return rc;
	json_t *a = json_deep_copy(args);
	if (!a)
		return GERR_NOMEM;
	/* The check mode is the job's, set at submission. */
	if (json_object_get(a, "check") &&
	    !json_equal(json_object_get(a, "check"),
			json_object_get(params, "check"))) {
		json_decref(a);
		gerr_printf(err, errlen, "officers: the check mode is set when "
			    "the job is submitted");
		return GERR_INVAL;
	}
	if (json_object_get(params, "check"))
		json_object_set(a, "check", json_object_get(params, "check"));
	rc = ofw_parse_params(ctx, a, &p, &total, err, errlen);
	json_decref(a);
	if (rc == 0)
		rc = get_to(p, &to, err, errlen);
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

static int parse_range(const json_t *args, uint64_t *a, uint64_t *b)
{
	const char *s = json_string_value(json_object_get(args, "range"));
	char *end;

	if (!s || *s < '0' || *s > '9')
		return GERR_INVAL;
	*a = strtoull(s, &end, 10);
	if (*end != ':' || end[1] < '0' || end[1] > '9')
		return GERR_INVAL;
	*b = strtoull(end + 1, &end, 10);
	return *end ? GERR_INVAL : 0;
}

static int ofw_export(void *ctx, const json_t *params, const json_t *answer, const struct wl_parts *parts,
		     const char *what, const json_t *args,
		     const struct wl_blob_reader *rd, void **ret,
		     size_t *ret_len, char *err, size_t errlen)
{
	uint64_t a, b, n = answer ? answer_n(answer) : 0;
	const json_t *blobs = json_object_get(answer, "blobs"), *e;
	uint8_t *out;
	size_t i;
	int rc = 0;

	(void)params;
	if (!what || strcmp(what, "values") != 0) {
		gerr_printf(err, errlen, "officers: exports 'values' only");
		return GERR_INVAL;
	}
	if (parse_range(args, &a, &b) || a >= b) {
		gerr_printf(err, errlen, "officers: --values wants FROM:TO with "
		       "FROM < TO");
		return GERR_INVAL;
	}
	if (b > n) {
		gerr_printf(err, errlen, "officers: only G(0..%" PRIu64 "-1) are "
		       "known", n);
		return GERR_INVAL;
	}
	if (b - a > EXPORT_MAX) {
		gerr_printf(err, errlen, "officers: at most %llu values per export",
		       (unsigned long long)EXPORT_MAX);
		return GERR_TOOBIG;
	}
	if (!rd || !rd->fetch) {
		gerr_printf(err, errlen, "officers: no blob access");
		return GERR_UNSUPPORTED;
	}
	out = malloc(2 * (size_t)(b - a));
	if (!out)
		return GERR_NOMEM;
	json_array_foreach(blobs, i, e) {
		uint64_t f = (uint64_t)json_integer_value(json_object_get(e, "from"));
		uint64_t t = (uint64_t)json_integer_value(json_object_get(e, "to"));
		const char *h = json_string_value(json_object_get(e, "hash"));
		struct officers_result r;
		void *bytes = NULL;
		size_t blen = 0;
		if (t <= a || f >= b)
			continue;
		if (!h || (rc = rd->fetch(rd->opaque, h, &bytes, &blen))) {
			gerr_printf(err, errlen, "officers: cannot read the values "
			       "[%" PRIu64 ", %" PRIu64 "): %s", f, t,
			       gerr_str(rc ? rc : GERR_CORRUPT));
			rc = rc ? rc : GERR_CORRUPT;
			break;
		}
		rc = officers_result_parse(bytes, blen, &r, err, errlen);
		if (rc == 0 && (r.from != f || r.to != t))
			rc = GERR_CORRUPT;
		if (rc == 0)
			for (uint64_t x = f > a ? f : a; x < t && x < b; x++) {
				unsigned v = officers_result_get(&r, x);
				out[2 * (x - a)] = (uint8_t)v;
				out[2 * (x - a) + 1] = (uint8_t)(v >> 8);
			}
		free(bytes);
		if (rc)
			break;
	}
	if (rc) {
		free(out);
		return rc;
	}
	*ret = out;
	*ret_len = 2 * (size_t)(b - a);
	return 0;
}

WL_CUDA_HOOKS(officers)

static const char *const ofw_exports[] = {"values", NULL};

const struct workload officers_workload = {
	.name = "officers",
	.unit_name = "values",
	.parse_params = ofw_parse_params,
	.carve = ofw_carve,
	.run = ofw_run,
	.next_lease = ofw_next_lease,
	.check_checkpoint = ofw_check_checkpoint,
	.verify = ofw_verify,
	.merge = ofw_merge,
	.finish = ofw_finish,
	.render_text = ofw_render_text,
	.render_files = ofw_render_files,
	.export_data = ofw_export,
	.exports = ofw_exports,
	.extend = ofw_extend,
	.cuda_open = officers_wl_cuda_open,
	.cuda_close = officers_wl_cuda_close,
};
