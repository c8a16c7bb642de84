/* sudoku_workload.c - the Sudoku workload behind struct workload:
 * parameters, lease planning, run (CPU or CUDA), checkpoint checks,
 * verification, merging, the final checks and rendering.
 *
 * params  {"box": "4x3", "rows": R, "cols": C} (box oriented, sudoku.h)
 * units   gangsters for 4x3 (144,578); 1 for the smaller shapes, which run
 *         in one lease
 * cursor  {"next": g}: gangsters [0, g) are leased
 * spec    {"set": s, "from": a, "to": b}: gangsters [a, b) of GangSet s
 *         (4x3; a lease never crosses a set and, when it can, ends on a
 *         boundary of a c2 group so a lease reuses its band lines); the
 *         smaller shapes: {"set": -1, "from": 0, "to": G}
 * answer  {"box", "rows", "cols", "gangsters": G, "done": n, "leases": k,
 *          "sum": "decimal sum of members*cnt*V so far",
 *          "sets": [{"done": n, "sum": "..."}, ...],
 *          "counts": {"<from>": ["V(from)", "V(from+1)", ...], ...},
 *          "total": "decimal" (once done == G)}
 *
 * Setups come from the per-process cache (sudoku_setup_cached); the CUDA
 * context keeps the device copies for the worker's lifetime.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gerr.h"
#include "sudoku.h"
#include "sudoku_count.h"
#include "sudoku_cuda.h"
#include "sudoku_format.h"
#include "sudoku_wide.h"
#include "workload.h"

#define LEASE_DEFAULT 64u   /* gangsters: ~2 s on an H100 at 25 ms each */
#define LEASE_MAX 4096u
#define STEP_CUDA 256u
#define STEP_CPU 2u
#define GROUP_CHUNK 16u     /* the kernel's gangsters per block */

/* Pinned known answers (oriented shape) and 4x3 invariants. */
static const struct known {
	int R, C;
	uint32_t gangsters; /* 0: not pinned */
	const char *total;
} KNOWN[] = {
	{ 2, 2, 0, "288" },
	{ 3, 2, 0, "28200960" },
	{ 2, 3, 0, "28200960" },
	{ 4, 2, 0, "29136487207403520" },
	{ 3, 3, 44, "6670903752021072936960" },
	{ 5, 2, 0, "1903816047972624930994913280000" },
	{ 4, 3, 144578,
	  "81171437193104932746936103027318645818654720000" },
};
#define K43_CNT_SUM 9977652472ull
#define K43_MC_SUM "12657519098855424"

static int nthreads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

static const struct known *known_of(int R, int C)
{
	for (size_t i = 0; i < sizeof(KNOWN) / sizeof(KNOWN[0]); i++)
		if (KNOWN[i].R == R && KNOWN[i].C == C)
			return &KNOWN[i];
	return NULL;
}

static int big_shape(int R, int C)
{
	return R == 4 && C == 3;
}

static int get_params(const json_t *params, int *R, int *C, char *err,
		      size_t errlen)
{
	const char *box;

	if (!json_is_object(params) ||
	    !json_is_string(json_object_get(params, "box"))) {
		gerr_printf(err, errlen, "sudoku: params need a 'box'");
		return GERR_INVAL;
	}
	box = json_string_value(json_object_get(params, "box"));
	return sudoku_parse_box(box, R, C, err, errlen);
}

static int get_spec(const json_t *params, const json_t *spec, int *R, int *C,
		    const struct sudoku_setup **S, unsigned what,
		    uint32_t *from, uint32_t *to, char *err, size_t errlen)
{
	uint64_t a, b;
	json_int_t set;
	int rc = get_params(params, R, C, err, errlen);

	if (rc)
		return rc;
	if (!json_is_object(spec) ||
	    !json_is_integer(json_object_get(spec, "set"))) {
		gerr_printf(err, errlen, "sudoku: spec must be an object with 'set'");
		return GERR_INVAL;
	}
	set = json_integer_value(json_object_get(spec, "set"));
	rc = wl_json_u64(spec, "from", 1, 0, &a, err, errlen);
	if (rc == 0)
		rc = wl_json_u64(spec, "to", 1, 0, &b, err, errlen);
	if (rc)
		return rc;
	rc = sudoku_setup_cached(*R, *C, what, nthreads(), S, err, errlen);
	if (rc)
		return rc;
	if (a >= b || b > (*S)->ngang) {
		gerr_printf(err, errlen, "sudoku: bad lease [%" PRIu64 ", %" PRIu64
		       ") of %u gangsters", a, b, (*S)->ngang);
		return GERR_INVAL;
	}
	if (big_shape(*R, *C)) {
		if (set < 0 || (uint64_t)set >= (*S)->nnodes ||
		    a < (*S)->set_start[set] || b > (*S)->set_start[set + 1]) {
			gerr_printf(err, errlen, "sudoku: lease [%" PRIu64 ", %" PRIu64
			       ") is not inside set %" JSON_INTEGER_FORMAT, a,
			       b, set);
			return GERR_INVAL;
		}
	} else if (set != -1 || a != 0 || b != (*S)->ngang) {
		gerr_printf(err, errlen, "sudoku: %dx%d runs in one lease", *R, *C);
		return GERR_INVAL;
	}
	*from = (uint32_t)a;
	*to = (uint32_t)b;
	return 0;
}

static int sw_parse_params(void *ctx, const json_t *args, json_t **ret_params,
			   uint64_t *ret_total_units, char *err, size_t errlen)
{
	const char *key;
	json_t *val, *p;
	int R, C, rc;
	char box[16];

	if (!json_is_object(args)) {
		gerr_printf(err, errlen, "sudoku: arguments must be an object");
		return GERR_INVAL;
	}
	json_object_foreach((json_t *)args, key, val) {
		if (strcmp(key, "box") != 0) {
			gerr_printf(err, errlen, "sudoku: unknown parameter '%s' "
			       "(takes box, e.g. --box 4x3)", key);
			return GERR_INVAL;
		}
	}
	val = json_object_get(args, "box");
	if (!json_is_string(val)) {
		gerr_printf(err, errlen, "sudoku: missing parameter 'box' (e.g. 4x3)");
		return GERR_INVAL;
	}
	rc = sudoku_parse_box(json_string_value(val), &R, &C, err, errlen);
	if (rc)
		return rc;
	if (big_shape(R, C)) {
		/* Enumerate the gangsters now (gpud calls this on its thread
		 * pool), so carve, which runs on gpud's database thread, finds
		 * them cached and stays cheap. */
		const struct sudoku_setup *S;
		if (sudoku_setup_cached(R, C, 0, nthreads(), &S, err, errlen))
			return GERR_NOMEM;
	}
	snprintf(box, sizeof(box), "%dx%d", R, C);
	p = json_pack("{s:s, s:i, s:i}", "box", box, "rows", R, "cols", C);
	if (!p)
		return GERR_NOMEM;
	*ret_params = p;
	*ret_total_units = big_shape(R, C) ? SUDOKU_MAX_GANG : 1;
	return 0;
}

static uint32_t c2_of(const struct sudoku_setup *S, uint32_t g)
{
	return S->gang_tuple[(size_t)g * (S->R - 1) + 1];
}

static int sw_carve(void *ctx, const json_t *params, const json_t *cursor,
		    const json_t *answer, const struct wl_parts *parts, uint64_t want_units, json_t **ret_spec, uint64_t *ret_units,
		    json_t **ret_cursor, int *ret_last)
{
	char err[WL_ERRLEN];
	const struct sudoku_setup *S;
	uint64_t next = 0;
	uint32_t a, b, set, send, want;
	json_t *spec, *cur;
	int R, C;

	(void)answer;
	if (get_params(params, &R, &C, err, sizeof(err)))
		return GERR_INVAL;
	if (cursor && wl_json_u64(cursor, "next", 1, 0, &next, err, sizeof(err)))
		return GERR_INVAL;
	if (sudoku_setup_cached(R, C, 0, nthreads(), &S, err, sizeof(err)))
		return GERR_NOMEM;
	if (next >= S->ngang)
		return GERR_DONE;
	a = (uint32_t)next;
	if (!big_shape(R, C)) {
		spec = json_pack("{s:i, s:i, s:I}", "set", -1, "from", 0, "to",
				 (json_int_t)S->ngang);
		cur = json_pack("{s:I}", "next", (json_int_t)S->ngang);
		if (!spec || !cur)
			goto nomem;
		*ret_spec = spec;
		*ret_units = 1;
		*ret_cursor = cur;
		*ret_last = 1;
		return 0;
	}
	want = want_units ? (uint32_t)(want_units > LEASE_MAX ? LEASE_MAX
							       : want_units)
			  : LEASE_DEFAULT;
	set = sudoku_set_of(S, a);
	send = S->set_start[set + 1];
	b = send - a <= want ? send : a + want;
	if (b < send && c2_of(S, b) == c2_of(S, b - 1)) {
		/* inside a c2 group: end at its start, its end (if at most
		 * 2x the wish), or a multiple of the kernel's chunk in it */
		uint32_t gs = b, ge = b;
		while (gs > a && c2_of(S, gs - 1) == c2_of(S, b))
			gs--;
		while (ge < send && c2_of(S, ge) == c2_of(S, b))
			ge++;
		if (gs > a)
			b = gs;
		else if (ge - a <= 2 * want)
			b = ge;
		else
			b = a + ((b - a + GROUP_CHUNK - 1) / GROUP_CHUNK) * GROUP_CHUNK;
		if (b > send)
			b = send;
	}
	spec = json_pack("{s:I, s:I, s:I}", "set", (json_int_t)set, "from",
			 (json_int_t)a, "to", (json_int_t)b);
	cur = json_pack("{s:I}", "next", (json_int_t)b);
	if (!spec || !cur)
		goto nomem;
	*ret_spec = spec;
	*ret_units = b - a;
	*ret_cursor = cur;
	*ret_last = b == S->ngang;
	return 0;
nomem:
	json_decref(spec);
	json_decref(cur);
	return GERR_NOMEM;
}

static int match(const struct sudoku_res *r, int R, int C, uint32_t from,
		 uint32_t to, const char *what, char *err, size_t errlen)
{
	if (r->R != R || r->C != C || r->from != from || r->to != to) {
		gerr_printf(err, errlen, "sudoku: %s is for %ux%u [%u, %u), lease "
		       "is %dx%d [%u, %u)", what, r->R, r->C, r->from, r->to,
		       R, C, from, to);
		return GERR_VERIFY;
	}
	return 0;
}

/* V of gangsters [a, b) on CPU or CUDA (4x3 only). */
static int compute(const struct sudoku_setup *S, uint32_t a, uint32_t b,
		   int threads, void *cuda, uint64_t (*v)[2], char *err,
		   size_t errlen)
{
	int rc;

	if (S->C == 2) {
		for (uint32_t g = a; g < b; g++) {
			v[g - a][0] = S->cnt[g];
			v[g - a][1] = 0;
		}
		return 0;
	}
	if (cuda && big_shape(S->R, S->C))
		return sudoku_cuda_w(cuda, S, a, b, v, NULL, err, errlen);
	rc = sudoku_w_cpu(S, NULL, 0, a, b, threads, v);
	if (rc)
		gerr_printf(err, errlen, "sudoku: cpu count: %s", gerr_str(rc));
	return rc;
}

static int sw_run(void *ctx, const json_t *params, const json_t *spec,
		  const void *checkpoint, size_t checkpoint_len,
		  const struct wl_device *dev, const struct wl_run_io *io,
		  void **ret_result, size_t *ret_result_len, char *err,
		  size_t errlen)
{
	const struct sudoku_setup *S;
	struct sudoku_res r;
	uint32_t from, to, n;
	void *cuda = NULL;
	int R, C, threads = 1, rc, big;

	if (dev) {
		threads = dev->threads > 0 ? dev->threads : 1;
		if (dev->kind == WL_DEVICE_CUDA) {
			cuda = dev->cuda_ctx;
			if (!cuda) {
				gerr_printf(err, errlen, "sudoku: CUDA device "
				       "without a context (cuda_open)");
				return GERR_INVAL;
			}
		}
	}
	rc = get_spec(params, spec, &R, &C, &S, SUDOKU_BUILD_T, &from, &to,
		      err, errlen);
	if (rc)
		return rc;
	big = big_shape(R, C);
	n = to - from;
	memset(&r, 0, sizeof(r));
	if (checkpoint) {
		rc = sudoku_res_decode(checkpoint, checkpoint_len, 1, &r, err,
				       errlen);
		if (rc == 0)
			rc = match(&r, R, C, from, to, "checkpoint", err, errlen);
		if (rc) {
			free(r.v);
			return rc;
		}
	}
	{
		uint64_t (*v)[2] = realloc(r.v, (size_t)n * sizeof(*v));
		if (!v) {
			free(r.v);
			return GERR_NOMEM;
		}
		r.v = v;
	}
	r.R = (uint8_t)R;
	r.C = (uint8_t)C;
	r.from = from;
	r.to = to;
	while (r.done < n) {
		uint32_t a = from + r.done, b;
		if (io && io->should_stop(io->opaque)) {
			rc = GERR_CANCELLED;
			goto out;
		}
		b = to;
		if (big)
			b = a + (cuda ? STEP_CUDA : STEP_CPU);
		if (b > to)
			b = to;
		if (C == 3 && b > S->set_start[sudoku_set_of(S, a) + 1])
			b = S->set_start[sudoku_set_of(S, a) + 1];
		rc = compute(S, a, b, threads, cuda, r.v + r.done, err, errlen);
		if (rc)
			goto out;
		r.done += b - a;
		if (io) {
			io->progress(io->opaque, big ? r.done : r.done == n);
			if (r.done < n && io->checkpoint_due(io->opaque)) {
				void *ck;
				size_t cl;
				rc = sudoku_res_encode(&r, 1, &ck, &cl);
				if (rc == 0) {
					rc = io->checkpoint(io->opaque, ck, cl,
							    big ? r.done : 0);
					free(ck);
				}
				if (rc)
					goto out;
			}
		}
	}
	rc = sudoku_res_encode(&r, 0, ret_result, ret_result_len);
	if (rc)
		gerr_printf(err, errlen, "sudoku: encode: %s", gerr_str(rc));
out:
	free(r.v);
	return rc;
}

static int sw_check_checkpoint(void *ctx, const json_t *params, const json_t *spec,
			       const void *bytes, size_t len, char *err,
			       size_t errlen)
{
	const struct sudoku_setup *S;
	struct sudoku_res r;
	uint32_t from, to;
	int R, C;
	int rc = get_spec(params, spec, &R, &C, &S, 0, &from, &to, err, errlen);

	if (rc)
		return rc;
	rc = sudoku_res_decode(bytes, len, 1, &r, err, errlen);
	if (rc == 0) {
		rc = match(&r, R, C, from, to, "checkpoint", err, errlen);
		free(r.v);
	}
	return rc;
}

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int sw_verify(void *ctx, const json_t *params, const json_t *spec,
		     const void *result, size_t len, uint64_t seed, char *err,
		     size_t errlen)
{
	const struct sudoku_setup *S;
	struct sudoku_res r;
	uint32_t from, to, n;
	uint64_t bound[2] = { 0, 0 };
	int R, C, rc;

	rc = get_spec(params, spec, &R, &C, &S, SUDOKU_BUILD_T, &from, &to,
		      err, errlen);
	if (rc)
		return rc;
	rc = sudoku_res_decode(result, len, 0, &r, err, errlen);
	if (rc)
		return GERR_VERIFY;
	rc = match(&r, R, C, from, to, "result", err, errlen);
	if (rc)
		goto out;
	n = to - from;
	if (C == 3 && sudoku_w_bound(S, bound) != 0) {
		bound[0] = bound[1] = UINT64_MAX;
	}
	/* Range and divisibility of every gangster's V. */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t g = from + i;
		if (C == 2 && (r.v[i][0] != S->cnt[g] || r.v[i][1] != 0)) {
			gerr_printf(err, errlen, "sudoku verify: gangster %u: band "
			       "count below %" PRIu64 ", expected %u", g,
			       r.v[i][0], S->cnt[g]);
			rc = GERR_VERIFY;
			goto out;
		}
		if (C == 3 && ((r.v[i][0] & 1) || r.v[i][1] > bound[1] ||
			       (r.v[i][1] == bound[1] && r.v[i][0] > bound[0]))) {
			gerr_printf(err, errlen, "sudoku verify: gangster %u: W = "
			       "(%" PRIu64 ", %" PRIu64 ") is odd or above the "
			       "bound", g, r.v[i][1], r.v[i][0]);
			rc = GERR_VERIFY;
			goto out;
		}
	}
	/* Recount a sample on the CPU: every gangster of a small shape, one
	 * chosen by the seed for 4x3 (7.2e9 multiply-adds). */
	if (C == 3) {
		uint32_t a = 0, b = n;
		if (big_shape(R, C)) {
			a = (uint32_t)(mix64(seed) % n);
			b = a + 1;
		}
		for (uint32_t i = a; i < b;) {
			uint32_t g = from + i;
			uint32_t e = from + b;
			if (e > S->set_start[sudoku_set_of(S, g) + 1])
				e = S->set_start[sudoku_set_of(S, g) + 1];
			uint64_t (*w)[2] = malloc((size_t)(e - g) * sizeof(*w));
			if (!w) {
				rc = GERR_NOMEM;
				goto out;
			}
			rc = sudoku_w_cpu(S, NULL, 0, g, e, nthreads(), w);
			for (uint32_t k = 0; rc == 0 && k < e - g; k++)
				if (w[k][0] != r.v[i + k][0] ||
				    w[k][1] != r.v[i + k][1]) {
					gerr_printf(err, errlen, "sudoku verify: "
					       "gangster %u recounts to (%" PRIu64
					       ", %" PRIu64 "), result says (%"
					       PRIu64 ", %" PRIu64 ")", g + k,
					       w[k][1], w[k][0], r.v[i + k][1],
					       r.v[i + k][0]);
					rc = GERR_VERIFY;
				}
			free(w);
			if (rc)
				goto out;
			i += e - g;
		}
	}
out:
	free(r.v);
	return rc;
}

/* ---- answers ------------------------------------------------------------- */

static int dec_get(const json_t *j, const char *key, struct u256 *ret)
{
	const json_t *v = json_object_get(j, key);
	return json_is_string(v) && u256_from_dec(json_string_value(v), ret) == 0
		       ? 0 : GERR_INVAL;
}

static json_t *dec_json(const struct u256 *a)
{
	char buf[U256_DECLEN];
	u256_to_dec(a, buf);
	return json_string(buf);
}

static int v_of_json(const json_t *s, uint64_t v[2])
{
	struct u256 x;
	if (!json_is_string(s) || u256_from_dec(json_string_value(s), &x) ||
	    x.w[2] || x.w[3])
		return GERR_INVAL;
	v[0] = x.w[0];
	v[1] = x.w[1];
	return 0;
}

static int sw_merge(void *ctx, const json_t *params, const json_t *answer,
		    const json_t *spec, const void *result, size_t len,
		    const char *result_hash, json_t **ret_answer, json_t **ret_note)
{
	char err[WL_ERRLEN], key[16];
	const struct sudoku_setup *S;
	struct sudoku_res r;
	uint32_t from, to;
	struct u256 sum = u256_of(0, 0), lsum = u256_of(0, 0);
	json_t *out = NULL, *counts, *sets, *arr;
	int R, C, rc;

	(void)result_hash; /* the counts are kept in the answer itself */
	rc = get_spec(params, spec, &R, &C, &S, SUDOKU_BUILD_T, &from, &to,
		      err, sizeof(err));
	if (rc)
		return rc;
	rc = sudoku_res_decode(result, len, 0, &r, err, sizeof(err));
	if (rc)
		return rc;
	if (match(&r, R, C, from, to, "result", err, sizeof(err))) {
		free(r.v);
		return GERR_INVAL;
	}
	if (answer) {
		out = json_deep_copy(answer);
		if (!out || dec_get(out, "sum", &sum)) {
			rc = GERR_INVAL;
			goto fail;
		}
	} else {
		out = json_pack("{s:O, s:O, s:O, s:I, s:i, s:i, s:s, s:[], s:{}}",
				"box", json_object_get(params, "box"), "rows",
				json_object_get(params, "rows"), "cols",
				json_object_get(params, "cols"), "gangsters",
				(json_int_t)S->ngang, "done", 0, "leases", 0,
				"sum", "0", "sets", "counts");
		if (!out) {
			rc = GERR_NOMEM;
			goto fail;
		}
		sets = json_object_get(out, "sets");
		for (uint32_t s = 0; s < S->nnodes; s++)
			json_array_append_new(sets, json_pack("{s:i, s:s}",
					      "done", 0, "sum", "0"));
	}
	counts = json_object_get(out, "counts");
	sets = json_object_get(out, "sets");
	snprintf(key, sizeof(key), "%u", from);
	if (!json_is_object(counts) || !json_is_array(sets) ||
	    json_array_size(sets) != S->nnodes || json_object_get(counts, key)) {
		rc = GERR_INVAL; /* malformed, or this lease merged twice */
		goto fail;
	}
	arr = json_array();
	json_object_set_new(counts, key, arr);
	for (uint32_t i = 0; i < to - from; i++) {
		uint32_t g = from + i;
		struct u256 t, ts;
		json_t *so = json_array_get(sets, sudoku_set_of(S, g));
		if (sudoku_term(S->members[g], S->cnt[g], r.v[i], C, &t) ||
		    u256_add(&lsum, &t) || !so || dec_get(so, "sum", &ts) ||
		    u256_add(&ts, &t)) {
			rc = GERR_INVAL;
			goto fail;
		}
		json_object_set_new(so, "sum", dec_json(&ts));
		json_object_set_new(so, "done", json_integer(
			json_integer_value(json_object_get(so, "done")) + 1));
		json_array_append_new(arr, dec_json(&(struct u256){
			{ r.v[i][0], r.v[i][1], 0, 0 } }));
	}
	if (u256_add(&sum, &lsum)) {
		rc = GERR_INVAL;
		goto fail;
	}
	json_object_set_new(out, "sum", dec_json(&sum));
	json_object_set_new(out, "done", json_integer(
		json_integer_value(json_object_get(out, "done")) + (to - from)));
	json_object_set_new(out, "leases", json_integer(
		json_integer_value(json_object_get(out, "leases")) + 1));
	if ((uint64_t)json_integer_value(json_object_get(out, "done")) ==
	    S->ngang) {
		struct u256 f, tot;
		if (sudoku_factor(R, C, S->K, &f) || u256_mul(&f, &sum, &tot)) {
			rc = GERR_INVAL;
			goto fail;
		}
		json_object_set_new(out, "total", dec_json(&tot));
	}
	free(r.v);
	*ret_answer = out;
	return 0;
fail:
	free(r.v);
	json_decref(out);
	return rc;
}

static int sw_finish(void *ctx, const json_t *params, const json_t *answer, const struct wl_parts *parts, char *err,
		     size_t errlen)
{
	const struct sudoku_setup *S;
	const struct known *kn;
	struct u256 sum = u256_of(0, 0), asum, f, tot, msum = u256_of(0, 0),
		    kpow = u256_of(1, 0), csum = u256_of(0, 0),
		    mcsum = u256_of(0, 0), atot;
	const json_t *counts;
	const char *key;
	json_t *arr;
	uint8_t *seen = NULL;
	int R, C, rc = get_params(params, &R, &C, err, errlen);
	char buf[U256_DECLEN];

	if (rc)
		return rc;
	rc = sudoku_setup_cached(R, C, SUDOKU_BUILD_T, nthreads(), &S, err,
				 errlen);
	if (rc)
		return rc;
	counts = json_object_get(answer, "counts");
	if (!json_is_object(answer) || !json_is_object(counts) ||
	    dec_get(answer, "sum", &asum) || dec_get(answer, "total", &atot)) {
		gerr_printf(err, errlen, "sudoku finish: malformed or unfinished answer");
		return GERR_INVAL;
	}
	/* Invariants of the setup. */
	for (uint32_t g = 0; g < S->ngang; g++) {
		struct u256 m = u256_of(S->members[g], 0), c = u256_of(S->cnt[g], 0);
		u256_add(&msum, &m);
		u256_add(&csum, &c);
		u256_mul_u64(&m, S->cnt[g]);
		u256_add(&mcsum, &m);
	}
	for (int i = 1; i < R; i++)
		u256_mul_u64(&kpow, S->K);
	if (u256_cmp(&msum, &kpow) != 0) {
		gerr_printf(err, errlen, "sudoku finish: members sum to %s, not K^(R-1)",
		       (u256_to_dec(&msum, buf), buf));
		return GERR_VERIFY;
	}
	kn = known_of(R, C);
	if (kn && kn->gangsters && S->ngang != kn->gangsters) {
		gerr_printf(err, errlen, "sudoku finish: %u gangsters, expected %u",
		       S->ngang, kn->gangsters);
		return GERR_VERIFY;
	}
	if (big_shape(R, C)) {
		struct u256 k1 = u256_of(K43_CNT_SUM, 0), k2;
		u256_from_dec(K43_MC_SUM, &k2);
		if (S->K != 5775 || S->nnodes != 9 || S->ncompat != 346 ||
		    u256_cmp(&csum, &k1) || u256_cmp(&mcsum, &k2)) {
			gerr_printf(err, errlen, "sudoku finish: 4x3 band count "
			       "invariants do not hold");
			return GERR_VERIFY;
		}
	}
	/* Every gangster exactly once; the sum recomputed. */
	seen = calloc(S->ngang, 1);
	if (!seen)
		return GERR_NOMEM;
	json_object_foreach((json_t *)counts, key, arr) {
		char *end;
		unsigned long from = strtoul(key, &end, 10);
		if (*end || !json_is_array(arr) ||
		    from + json_array_size(arr) > S->ngang) {
			rc = GERR_VERIFY;
			goto out;
		}
		for (size_t i = 0; i < json_array_size(arr); i++) {
			uint64_t v[2];
			struct u256 t;
			uint32_t g = (uint32_t)(from + i);
			if (seen[g] || v_of_json(json_array_get(arr, i), v) ||
			    sudoku_term(S->members[g], S->cnt[g], v, C, &t) ||
			    u256_add(&sum, &t)) {
				rc = GERR_VERIFY;
				goto out;
			}
			seen[g] = 1;
		}
	}
	for (uint32_t g = 0; g < S->ngang; g++)
		if (!seen[g]) {
			gerr_printf(err, errlen, "sudoku finish: gangster %u missing", g);
			rc = GERR_VERIFY;
			goto out;
		}
	if (u256_cmp(&sum, &asum) != 0 || sudoku_factor(R, C, S->K, &f) ||
	    u256_mul(&f, &sum, &tot) || u256_cmp(&tot, &atot) != 0) {
		gerr_printf(err, errlen, "sudoku finish: the sum or total does not "
		       "recompute");
		rc = GERR_VERIFY;
		goto out;
	}
	u256_to_dec(&tot, buf);
	if (kn && strcmp(buf, kn->total) != 0) {
		gerr_printf(err, errlen, "sudoku finish: total %s differs from the "
		       "known %s", buf, kn->total);
		rc = GERR_VERIFY;
		goto out;
	}
out:
	if (rc && err && !err[0])
		gerr_printf(err, errlen, "sudoku finish: counts malformed or duplicated");
	free(seen);
	return rc;
}

static char *sw_render_text(void *ctx, const json_t *params, const json_t *answer, const struct wl_parts *parts)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	const json_t *box = json_object_get(params, "box");
	const json_t *tot = json_object_get(answer, "total");

	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "sudoku %s: ", json_is_string(box) ? json_string_value(box) : "?");
	if (!answer) {
		fprintf(f, "no answer yet\n");
	} else {
		fprintf(f, "%" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
			" gangsters counted in %" JSON_INTEGER_FORMAT " leases\n",
			json_integer_value(json_object_get(answer, "done")),
			json_integer_value(json_object_get(answer, "gangsters")),
			json_integer_value(json_object_get(answer, "leases")));
		if (json_is_string(tot))
			fprintf(f, "grids: %s\n", json_string_value(tot));
		else
			fprintf(f, "partial sum: %s\n",
				json_string_value(json_object_get(answer, "sum")));
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

WL_CUDA_HOOKS(sudoku)

const struct workload sudoku_workload = {
	.name = "sudoku",
	.unit_name = "gangsters",
	.parse_params = sw_parse_params,
	.carve = sw_carve,
	.run = sw_run,
	.check_checkpoint = sw_check_checkpoint,
	.verify = sw_verify,
	.merge = sw_merge,
	.finish = sw_finish,
	.render_text = sw_render_text,
	.render_files = NULL,
	.cuda_open = sudoku_wl_cuda_open,
	.cuda_close = sudoku_wl_cuda_close,
};
