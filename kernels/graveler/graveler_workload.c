/* graveler_workload.c - the Graveler workload behind struct workload:
 * parameters, lease planning, run (CPU or CUDA), checkpoint checks,
 * verification, merging, the final statistical check and the text (the
 * plot: graveler_plot.c).
 *
 * params  {"battles": N (1..1e15), "seed": "S" (decimal uint64 string)}
 * cursor  {"next": n}: battles [0, n) are leased
 * spec    {"begin": b, "end": e}: one lease, b on a chunk boundary; the
 *         head of a cut (gw_split) ends on one too and keeps its lease's
 *         segments: {"begin": b, "end": e, "frame": f} (graveler.h)
 * answer  {"battles": n, "max": m, "first": f, "leases": k,
 *          "histogram": [232 integers]}
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gerr.h"
#include "par.h"
#include "graveler.h"
#include "graveler_cuda.h"
#include "graveler_wl.h"
#include "workload.h"

#define LEASE_MIN (1ull << 20)
#define LEASE_MAX GRAVELER_MAX_LEASE
#define LEASE_DEFAULT (1ull << 32)
/* Segments recomputed per verification besides the first maximum's: a
 * result fabricated on a fraction f of its S segments passes with
 * probability C(S - fS, K) / C(S, K) <= (1 - f)^K (measured in
 * tests/unit); with S = 2^20 and K = 32: 0.725 at f = 1%, 0.034 at 10%,
 * 0 at 100%. */
#define VERIFY_SEGMENTS 32
#define FINISH_Z_LIMIT 7.0      /* chi-square normal score: p ~ 1e-12 */
#define FINISH_LOG10_P (-12.0)  /* max plausibility */

static int get_params(const json_t *params, uint64_t *n, uint64_t *seed,
		      char *err, size_t errlen)
{
	int rc;

	if (!json_is_object(params)) {
		gerr_printf(err, errlen, "graveler: params must be an object");
		return GERR_INVAL;
	}
	rc = wl_json_u64(params, "battles", 1, 0, n, err, errlen);
	if (rc == 0)
		rc = wl_json_u64(params, "seed", 0, 0, seed, err, errlen);
	if (rc == 0 && (*n < 1 || *n > GRAVELER_MAX_BATTLES)) {
		gerr_printf(err, errlen, "graveler: 'battles' must be 1..1e15");
		rc = GERR_INVAL;
	}
	return rc;
}

/* A lease's seed, range and frame (graveler.h, "Frames": the end of the
 * lease it was cut from, end when none; ret_frame may be NULL). */
static int get_lease(const json_t *params, const json_t *spec, uint64_t *seed,
		     uint64_t *begin, uint64_t *end, uint64_t *ret_frame,
		     char *err, size_t errlen)
{
	uint64_t n, frame;
	int rc = get_params(params, &n, seed, err, errlen);

	if (rc)
		return rc;
	rc = wl_spec_u64s(spec, "graveler", "begin", begin, "end", end, err,
			  errlen);
	if (rc)
		return rc;
	if (*begin >= *end || *end > n) {
		gerr_printf(err, errlen, "graveler: bad lease [%" PRIu64 ", %" PRIu64
		       ") for %" PRIu64 " battles", *begin, *end, n);
		return GERR_INVAL;
	}
	rc = wl_json_u64(spec, "frame", 0, *end, &frame, err, errlen);
	if (rc)
		return rc;
	if (frame < *end || frame > n || frame - *begin > GRAVELER_MAX_LEASE ||
	    (frame != *end && *end % GRAVELER_CHUNK != 0)) {
		gerr_printf(err, errlen, "graveler: bad frame %" PRIu64 " for "
			    "lease [%" PRIu64 ", %" PRIu64 ")", frame, *begin,
			    *end);
		return GERR_INVAL;
	}
	if (ret_frame)
		*ret_frame = frame;
	return 0;
}

static int get_spec(const json_t *params, const json_t *spec, uint64_t *seed,
		    uint64_t *begin, uint64_t *end, char *err, size_t errlen)
{
	return get_lease(params, spec, seed, begin, end, NULL, err, errlen);
}

static int graveler_wl_parse_params(void *ctx, const json_t *args, json_t **ret_params,
			   uint64_t *ret_total_units, char *err, size_t errlen)
{
	static const char *const keys[] = {"battles", "seed", NULL};
	uint64_t n, seed;
	char sbuf[32];
	json_t *p;
	int rc;

	rc = wl_args_check(args, keys, "graveler", "battles, seed", err,
			   errlen);
	if (rc == 0)
		rc = wl_json_u64(args, "battles", 1, 0, &n, err, errlen);
	if (rc)
		return rc;
	if (n < 1 || n > GRAVELER_MAX_BATTLES) {
		gerr_printf(err, errlen, "graveler: 'battles' must be between 1 "
		       "and 1e15, got %" PRIu64, n);
		return GERR_INVAL;
	}
	rc = wl_json_u64(args, "seed", 0, 0, &seed, err, errlen);
	if (rc)
		return rc;
	snprintf(sbuf, sizeof(sbuf), "%" PRIu64, seed);
	p = json_pack("{s:I, s:s}", "battles", (json_int_t)n, "seed", sbuf);
	if (!p)
		return GERR_NOMEM;
	*ret_params = p;
	*ret_total_units = n;
	return 0;
}

static int graveler_wl_carve(void *ctx, const json_t *params, const json_t *cursor,
		    const json_t *answer, const struct wl_parts *parts,
		    uint64_t want_units, json_t **ret_spec, uint64_t *ret_units,
		    json_t **ret_cursor, int *ret_last)
{
	uint64_t n, seed, next = 0, size, end;
	char err[WL_ERRLEN];
	json_t *spec, *cur;

	if (get_params(params, &n, &seed, err, sizeof(err)))
		return GERR_INVAL;
	if (cursor && wl_json_u64(cursor, "next", 1, 0, &next, err,
				  sizeof(err)))
		return GERR_INVAL;
	if (next >= n)
		return GERR_DONE;
	size = want_units ? want_units : LEASE_DEFAULT;
	if (size < LEASE_MIN)
		size = LEASE_MIN;
	if (size > LEASE_MAX)
		size = LEASE_MAX;
	size += (GRAVELER_CHUNK - size % GRAVELER_CHUNK) % GRAVELER_CHUNK;
	end = next + size;
	end -= end % GRAVELER_CHUNK; /* leases end on chunk boundaries */
	if (end <= next)
		end = next + GRAVELER_CHUNK;
	if (end > n)
		end = n;
	spec = json_pack("{s:I, s:I}", "begin", (json_int_t)next, "end",
			 (json_int_t)end);
	cur = json_pack("{s:I}", "next", (json_int_t)end);
	if (!spec || !cur) {
		json_decref(spec);
		json_decref(cur);
		return GERR_NOMEM;
	}
	*ret_spec = spec;
	*ret_units = end - next;
	*ret_cursor = cur;
	*ret_last = end == n;
	return 0;
}

static int match_lease(const struct graveler_acc *a, uint64_t seed,
		       uint64_t begin, uint64_t end, const char *what,
		       char *err, size_t errlen)
{
	if (a->seed != seed || a->begin != begin || a->end != end) {
		gerr_printf(err, errlen, "graveler: %s is for seed %" PRIu64
		       " [%" PRIu64 ", %" PRIu64 "), lease is seed %" PRIu64
		       " [%" PRIu64 ", %" PRIu64 ")", what, a->seed, a->begin,
		       a->end, seed, begin, end);
		return GERR_VERIFY;
	}
	return 0;
}

/* A checkpoint of a lease that gw_split cut at end (decoded under the
 * head's frame, which is that lease's), made the head's: the same seed
 * and begin, a longer end, nothing done past end. Its records for the
 * segments meeting [begin, end) are the head's own and those past them
 * are empty (the decoder checked). Any other checkpoint is left as it
 * is, for match_lease to judge. */
static void ckpt_adopt(struct graveler_acc *a, uint64_t seed, uint64_t begin,
		       uint64_t end)
{
	if (a->seed != seed || a->begin != begin || a->end <= end ||
	    a->next > end)
		return;
	a->end = end;
	a->nseg = graveler_nsegments_framed(begin, end, a->frame);
}

/* A lease's result or checkpoint (ckpt), decoded into a new accumulator
 * and checked to be of the lease in params and spec (a checkpoint of the
 * lease it was cut from is adopted first): *ret_acc, the caller's to
 * free, also on failure once it is set. A blob that does not decode is
 * refused with bad_rc (0: the decoder's own code). */
static int lease_blob(const json_t *params, const json_t *spec,
		      const void *bytes, size_t len, int ckpt, int bad_rc,
		      struct graveler_acc **ret_acc, char *err, size_t errlen)
{
	uint64_t seed, begin, end, frame;
	int rc = get_lease(params, spec, &seed, &begin, &end, &frame, err,
			   errlen);

	if (rc)
		return rc;
	*ret_acc = malloc(sizeof(**ret_acc));
	if (!*ret_acc)
		return GERR_NOMEM;
	rc = ckpt ? graveler_ckpt_decode_framed(bytes, len, frame, *ret_acc,
						err, errlen)
		  : graveler_result_decode_framed(bytes, len, frame, *ret_acc,
						  err, errlen);
	if (rc)
		return bad_rc ? bad_rc : rc;
	if (ckpt)
		ckpt_adopt(*ret_acc, seed, begin, end);
	return match_lease(*ret_acc, seed, begin, end,
			   ckpt ? "checkpoint" : "result", err, errlen);
}

/* Cut [begin, end) at the first chunk boundary at or after begin + at:
 * the head [begin, cut) keeps the lease's frame, so that its segments
 * are the lease's and a checkpoint of the lease is its own (ckpt_adopt);
 * the tail [cut, end) is a lease of its own. */
static int gw_split(void *ctx, const json_t *params, const json_t *spec,
		    uint64_t at, json_t **ret_head, uint64_t *ret_head_units,
		    json_t **ret_tail, uint64_t *ret_tail_units)
{
	uint64_t seed, begin, end, frame, cut;
	char err[WL_ERRLEN];
	json_t *head, *tail;

	(void)ctx;
	if (get_lease(params, spec, &seed, &begin, &end, &frame, err,
		      sizeof(err)))
		return GERR_INVAL;
	if (at == 0 || at >= end - begin)
		return GERR_AGAIN;
	cut = begin + at;
	cut += (GRAVELER_CHUNK - cut % GRAVELER_CHUNK) % GRAVELER_CHUNK;
	if (cut >= end)
		return GERR_AGAIN;
	head = json_pack("{s:I, s:I, s:I}", "begin", (json_int_t)begin, "end",
			 (json_int_t)cut, "frame", (json_int_t)frame);
	tail = json_pack("{s:I, s:I}", "begin", (json_int_t)cut, "end",
			 (json_int_t)end);
	if (!head || !tail) {
		json_decref(head);
		json_decref(tail);
		return GERR_NOMEM;
	}
	*ret_head = head;
	*ret_head_units = cut - begin;
	*ret_tail = tail;
	*ret_tail_units = end - cut;
	return 0;
}

static int gw_run(void *ctx, const json_t *params, const json_t *spec,
		  const void *checkpoint, size_t checkpoint_len,
		  const struct wl_device *dev, const struct wl_run_io *io,
		  void **ret_result, size_t *ret_result_len, char *err,
		  size_t errlen)
{
	uint64_t seed, begin, end, frame;
	struct graveler_acc *acc;
	void *cuda;
	int threads, rc;

	rc = get_lease(params, spec, &seed, &begin, &end, &frame, err, errlen);
	if (rc == 0)
		rc = wl_device_get(dev, "graveler", &threads, &cuda, err, errlen);
	if (rc)
		return rc;
	acc = malloc(sizeof(*acc));
	if (!acc)
		return GERR_NOMEM;
	if (checkpoint && graveler_ckpt_outdated(checkpoint, checkpoint_len))
		checkpoint = NULL; /* stored before an upgrade: start afresh */
	if (checkpoint) {
		rc = graveler_ckpt_decode_framed(checkpoint, checkpoint_len,
						 frame, acc, err, errlen);
		if (rc == 0) {
			ckpt_adopt(acc, seed, begin, end);
			rc = match_lease(acc, seed, begin, end, "checkpoint",
					 err, errlen);
		}
		if (rc)
			goto out;
	} else {
		graveler_acc_init_framed(acc, seed, begin, end, frame);
	}
	rc = graveler_run(acc, threads, cuda, io, err, errlen);
	if (rc == 0) {
		rc = graveler_result_encode(acc, ret_result, ret_result_len);
		if (rc)
			gerr_printf(err, errlen, "graveler: encode: %s",
			       gerr_str(rc));
	}
out:
	free(acc);
	return rc;
}

static int gw_check_checkpoint(void *ctx, const json_t *params, const json_t *spec,
			       const void *bytes, size_t len, char *err,
			       size_t errlen)
{
	struct graveler_acc *acc = NULL;
	int rc = lease_blob(params, spec, bytes, len, 1, 0, &acc, err,
			    errlen);

	free(acc);
	return rc;
}

/* Recompute segment k and compare its record exactly. */
static int check_segment(const struct graveler_acc *a, uint32_t k,
			 uint64_t *ret_first, char *err, size_t errlen)
{
	struct graveler_rec r;

	graveler_segment_eval_framed(a->seed, a->begin, a->end, a->frame, k,
				     &r);
	if (ret_first)
		*ret_first = r.first;
	if (r.max != a->seg_max[k] || r.sum != a->seg_sum[k] ||
	    r.sketch != a->seg_sk[k]) {
		gerr_printf(err, errlen, "graveler verify: segment %u of %u "
		       "claims max %u sum %u sketch %08x, recomputed max %u "
		       "sum %u sketch %08x", k, a->nseg, a->seg_max[k],
		       a->seg_sum[k], a->seg_sk[k], r.max, r.sum, r.sketch);
		return GERR_VERIFY;
	}
	return 0;
}

/* The segments verify recomputes, one per par_run chunk: the first
 * maximum's (which also gives the first battle reaching it) first. */
struct seg_check {
	const struct graveler_acc *a;
	uint32_t k[VERIFY_SEGMENTS + 1];
	int rc[VERIFY_SEGMENTS + 1];
	uint64_t first;           /* of k[0] */
	char err[VERIFY_SEGMENTS + 1][WL_ERRLEN];
};

static void seg_check_one(void *arg, size_t i)
{
	struct seg_check *c = arg;

	c->rc[i] = check_segment(c->a, c->k[i], i == 0 ? &c->first : NULL,
				 c->err[i], sizeof(c->err[i]));
}

/* Threads for the recomputation: up to 16 of this machine's CPUs. */
static size_t verify_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 16 ? 16 : (size_t)n;
}

/* The decoder has tied the records to the histogram, max and first; here
 * the first maximum's segment and VERIFY_SEGMENTS others, drawn with the
 * coordinator's secret per-verification seed after the upload, are
 * recomputed, side by side on up to 16 threads. */
static int verify_acc(const struct graveler_acc *a, uint64_t vseed, char *err,
		      size_t errlen)
{
	struct seg_check *c;
	uint32_t count, n_k = 1;
	uint64_t r = vseed;
	unsigned n;
	int rc = 0;

	/* The claimed maximum battle, from the definition. */
	n = graveler_battle_count_ref(a->seed, a->first);
	if (n != a->max) {
		gerr_printf(err, errlen, "graveler verify: battle %" PRIu64
		       " has %u paralysed turns, result claims max %u",
		       a->first, n, a->max);
		return GERR_VERIFY;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return GERR_NOMEM;
	c->a = a;
	/* Its segment: the record, and no earlier battle reaching it. */
	c->k[0] = graveler_chunk_segment(a->begin, a->frame,
					 a->first / GRAVELER_CHUNK);
	/* K distinct segments, uniform over all of them. */
	count = a->nseg < VERIFY_SEGMENTS ? a->nseg : VERIFY_SEGMENTS;
	for (uint32_t s = 0, kf_drawn = 0; s < count; s++) {
		uint32_t k;
		int dup;
		do {
			r += MIX_GOLDEN;
			k = count == a->nseg ? s
					     : (uint32_t)(mix64(r) % a->nseg);
			dup = k == c->k[0] && kf_drawn;
			for (uint32_t t = 1; t < n_k; t++)
				dup |= c->k[t] == k;
		} while (dup);
		if (k == c->k[0])
			kf_drawn = 1; /* drawn, and recomputed already */
		else
			c->k[n_k++] = k;
	}
	par_run(seg_check_one, c, n_k, verify_threads());
	for (uint32_t i = 0; i < n_k && rc == 0; i++) {
		rc = c->rc[i];
		if (rc)
			gerr_printf(err, errlen, "%s", c->err[i]);
	}
	if (rc == 0 && c->first != a->first) {
		gerr_printf(err, errlen, "graveler verify: segment %u's first "
		       "maximum is battle %" PRIu64 ", result claims %" PRIu64,
		       c->k[0], c->first, a->first);
		rc = GERR_VERIFY;
	}
	free(c);
	return rc;
}

static int graveler_wl_verify(void *ctx, const json_t *params, const json_t *spec,
		     const void *result, size_t len, uint64_t seed, char *err,
		     size_t errlen)
{
	struct graveler_acc *acc = NULL;
	int rc;

	/* Made before an upgrade (a result in flight then): computed again,
	 * charged to no one (workload.h, verify). */
	if (graveler_result_outdated(result, len)) {
		gerr_printf(err, errlen, "graveler: result of an earlier format "
			    "(before format %u): computed again",
			    GRAVELER_FMT_VERSION);
		return GERR_UNSUPPORTED;
	}
	/* Structure, histogram total, max == top bin, first in the lease,
	 * the records' sums and sketches adding up to the histogram's. */
	rc = lease_blob(params, spec, result, len, 0, GERR_VERIFY, &acc, err,
			errlen);

	if (rc == 0)
		rc = verify_acc(acc, seed, err, errlen);
	free(acc);
	return rc;
}

/* Read an answer into plain numbers. */
struct answer {
	uint64_t battles, first, leases;
	unsigned max;
	uint64_t hist[GRAVELER_BINS];
};

static int answer_read(const json_t *j, struct answer *a)
{
	const json_t *h = json_object_get(j, "histogram");
	json_int_t v;

	memset(a, 0, sizeof(*a));
	if (!json_is_object(j) || !json_is_array(h) ||
	    json_array_size(h) != GRAVELER_BINS)
		return GERR_INVAL;
	if (!json_is_integer(json_object_get(j, "battles")) ||
	    !json_is_integer(json_object_get(j, "max")) ||
	    !json_is_integer(json_object_get(j, "first")))
		return GERR_INVAL;
	a->battles = (uint64_t)json_integer_value(json_object_get(j, "battles"));
	a->max = (unsigned)json_integer_value(json_object_get(j, "max"));
	a->first = (uint64_t)json_integer_value(json_object_get(j, "first"));
	a->leases = (uint64_t)json_integer_value(json_object_get(j, "leases"));
	for (unsigned b = 0; b < GRAVELER_BINS; b++) {
		const json_t *e = json_array_get(h, b);
		if (!json_is_integer(e) || (v = json_integer_value(e)) < 0)
			return GERR_INVAL;
		a->hist[b] = (uint64_t)v;
	}
	return 0;
}

static json_t *answer_json(const struct answer *a)
{
	json_t *h = json_array();
	json_t *j;

	if (!h)
		return NULL;
	for (unsigned b = 0; b < GRAVELER_BINS; b++)
		if (json_array_append_new(h, json_integer((json_int_t)a->hist[b]))) {
			json_decref(h);
			return NULL;
		}
	j = json_pack("{s:I, s:i, s:I, s:I, s:o}", "battles",
		      (json_int_t)a->battles, "max", (int)a->max, "first",
		      (json_int_t)a->first, "leases", (json_int_t)a->leases,
		      "histogram", h);
	return j;
}

/* How far one lease's result is from its own expectation: the larger of
 * its histogram's chi-square normal score and the implausibility of its
 * max for its size, in the units of FINISH_Z_LIMIT (a max as unlikely as
 * FINISH_LOG10_P scores the limit). */
static double lease_score(const struct graveler_acc *a)
{
	double z = 0, lge, lle, s;
	int df;

	graveler_chi2(a->hist, &df, &z);
	if (df < 1)
		z = 0;
	graveler_max_tails(a->end - a->begin, a->max, &lge, &lle);
	s = (lge < lle ? lge : lle) / FINISH_LOG10_P * FINISH_Z_LIMIT;
	s = s > z ? s : z;
	return isnan(s) || s > 1e9 ? 1e9 : s; /* a JSON number */
}

static int graveler_wl_merge(void *ctx, const json_t *params, const json_t *answer,
		    const json_t *spec, const void *result, size_t len,
		    const char *result_hash, json_t **ret_answer, json_t **ret_note)
{
	char err[WL_ERRLEN];
	struct graveler_acc *acc;
	struct answer a;
	uint64_t seed, begin, end, frame;
	json_t *out;
	int rc;

	if (get_lease(params, spec, &seed, &begin, &end, &frame, err,
		      sizeof(err)))
		return GERR_INVAL;
	if (answer) {
		if (answer_read(answer, &a))
			return GERR_INVAL;
	} else {
		memset(&a, 0, sizeof(a));
		a.first = GRAVELER_NONE;
	}
	acc = malloc(sizeof(*acc));
	if (!acc)
		return GERR_NOMEM;
	rc = graveler_result_decode_framed(result, len, frame, acc, err,
					   sizeof(err));
	if (rc) {
		free(acc);
		return rc;
	}
	/* Commutative: sums, and the lexicographic max of (max, -first). */
	for (unsigned b = 0; b < GRAVELER_BINS; b++)
		a.hist[b] += acc->hist[b];
	a.battles += acc->end - acc->begin;
	a.leases++;
	if (a.first == GRAVELER_NONE || acc->max > a.max ||
	    (acc->max == a.max && acc->first < a.first)) {
		a.max = acc->max;
		a.first = acc->first;
	}
	/* What blame reads of this lease without its result. */
	json_t *note = ret_note ? json_pack("{s:f, s:i, s:I}", "score",
					    lease_score(acc), "max",
					    (int)acc->max, "first",
					    (json_int_t)acc->first)
				: NULL;
	free(acc);
	out = answer_json(&a);
	if (!out || (ret_note && !note)) {
		json_decref(out);
		json_decref(note);
		return GERR_NOMEM;
	}
	*ret_answer = out;
	if (ret_note)
		*ret_note = note;
	return 0;
}

static int graveler_wl_finish(void *ctx, const json_t *params, const json_t *answer, const struct wl_parts *parts, char *err,
		     size_t errlen)
{
	uint64_t n, seed, total = 0;
	struct answer a;
	int top = -1, df;
	double z, lge, lle;
	int rc = get_params(params, &n, &seed, err, errlen);

	if (rc)
		return rc;
	if (!answer || answer_read(answer, &a)) {
		gerr_printf(err, errlen, "graveler finish: malformed answer");
		return GERR_INVAL;
	}
	for (unsigned b = 0; b < GRAVELER_BINS; b++) {
		total += a.hist[b];
		if (a.hist[b])
			top = (int)b;
	}
	if (total != n || a.battles != n) {
		gerr_printf(err, errlen, "graveler finish: histogram holds %" PRIu64
		       " battles (answer says %" PRIu64 "), job has %" PRIu64,
		       total, a.battles, n);
		return GERR_VERIFY;
	}
	if (top != (int)a.max || a.first >= n) {
		gerr_printf(err, errlen, "graveler finish: max %u first %" PRIu64
		       " inconsistent with the histogram (top bin %d)", a.max,
		       a.first, top);
		return GERR_VERIFY;
	}
	graveler_chi2(a.hist, &df, &z);
	if (df >= 1 && z > FINISH_Z_LIMIT) {
		double chi2 = graveler_chi2(a.hist, NULL, NULL);
		gerr_printf(err, errlen, "graveler finish: histogram does not fit "
		       "Binomial(231, 1/4): chi2 %.1f with %d df (z %.1f)",
		       chi2, df, z);
		return GERR_VERIFY;
	}
	graveler_max_tails(n, a.max, &lge, &lle);
	if (lge < FINISH_LOG10_P || lle < FINISH_LOG10_P) {
		gerr_printf(err, errlen, "graveler finish: max %u is implausible for "
		       "%" PRIu64 " battles (log10 P(max >= m) %.1f, "
		       "P(max <= m) %.1f)", a.max, n, lge, lle);
		return GERR_VERIFY;
	}
	return 0;
}

/* What blame reads of one lease: its score (lease_score), max and first,
 * from merge's note, else from its stored result. */
struct part_view {
	double score;
	uint32_t max;
	uint64_t first, battles;
};

static int note_view(const json_t *note, uint64_t battles,
		     struct part_view *v)
{
	const json_t *s = json_object_get(note, "score");
	const json_t *m = json_object_get(note, "max");
	const json_t *f = json_object_get(note, "first");

	if (!json_is_number(s) || !json_is_integer(m) || !json_is_integer(f) ||
	    json_integer_value(m) < 0 || json_integer_value(m) > GRAVELER_TURNS ||
	    json_integer_value(f) < 0)
		return GERR_NOTFOUND;
	v->score = json_number_value(s);
	v->max = (uint32_t)json_integer_value(m);
	v->first = (uint64_t)json_integer_value(f);
	v->battles = battles;
	return 0;
}

/* Part p's result, decoded into acc (fetched through rd). */
static int part_acc(const json_t *params, const struct wl_part *p,
		    const struct wl_blob_reader *rd, struct graveler_acc *acc,
		    char *err, size_t errlen)
{
	uint64_t seed, begin, end, frame;
	void *buf = NULL;
	size_t len = 0;
	int rc = get_lease(params, p->spec, &seed, &begin, &end, &frame, err,
			   errlen);

	if (rc == 0)
		rc = rd->fetch(rd->opaque, p->result_hash, &buf, &len);
	if (rc == 0)
		rc = graveler_result_decode_framed(buf, len, frame, acc, err,
						   errlen);
	free(buf);
	return rc;
}

/* Each part judged alone (its battles are a Binomial(231, 1/4) sample of
 * their own) by the score merge noted: the one furthest past the finish
 * limits is blamed, and the answer rebuilt without it: its histogram (its
 * result, the only one read) taken off, max and first those of the
 * others. Parts merged without a note are read from their results. */
static int gw_blame(void *ctx, const json_t *params, const json_t *answer,
		    const struct wl_parts *parts,
		    const struct wl_blob_reader *rd, uint64_t *ret_index,
		    json_t **ret_answer, char *err, size_t errlen)
{
	struct graveler_acc *acc = malloc(sizeof(*acc));
	struct part_view *v = calloc(parts->n ? parts->n : 1, sizeof(*v));
	struct answer *a = calloc(1, sizeof(*a));
	uint64_t bad = UINT64_MAX;
	double worst = FINISH_Z_LIMIT;
	struct wl_part p;
	int rc = 0;

	(void)ctx;
	if (!acc || !v || !a || !rd || !rd->fetch) {
		rc = GERR_NOMEM;
		goto out;
	}
	if (!answer || answer_read(answer, a)) {
		gerr_printf(err, errlen, "graveler blame: malformed answer");
		rc = GERR_NOTFOUND;
		goto out;
	}
	for (uint64_t k = 0; k < parts->n; k++) {
		rc = parts->get(parts->opaque, k, &p);
		if (rc == 0 && note_view(p.note, p.units, &v[k]) != 0) {
			rc = part_acc(params, &p, rd, acc, err, errlen);
			if (rc == 0)
				v[k] = (struct part_view){lease_score(acc),
					acc->max, acc->first,
					acc->end - acc->begin};
		}
		if (rc) {
			gerr_printf(err, errlen, "graveler blame: part %" PRIu64
				    " unreadable: %s", k, gerr_str(rc));
			rc = GERR_NOTFOUND;
			goto out;
		}
		if (v[k].score > worst) {
			worst = v[k].score;
			bad = k;
		}
	}
	if (bad == UINT64_MAX) {
		gerr_printf(err, errlen, "graveler blame: every one of %" PRIu64
			    " leases fits on its own", parts->n);
		rc = GERR_NOTFOUND;
		goto out;
	}
	rc = parts->get(parts->opaque, bad, &p);
	if (rc == 0)
		rc = part_acc(params, &p, rd, acc, err, errlen);
	for (unsigned b = 0; rc == 0 && b < GRAVELER_BINS; b++)
		if (a->hist[b] < acc->hist[b])
			rc = GERR_CORRUPT; /* not a part of this answer */
	if (rc || a->battles < v[bad].battles || a->leases < 1) {
		gerr_printf(err, errlen, "graveler blame: part %" PRIu64
			    " cannot be taken off the answer", bad);
		rc = GERR_NOTFOUND;
		goto out;
	}
	for (unsigned b = 0; b < GRAVELER_BINS; b++)
		a->hist[b] -= acc->hist[b];
	a->battles -= v[bad].battles;
	a->leases--;
	a->max = 0;
	a->first = GRAVELER_NONE;
	for (uint64_t k = 0; k < parts->n; k++)
		if (k != bad && (a->first == GRAVELER_NONE || v[k].max > a->max ||
				 (v[k].max == a->max && v[k].first < a->first))) {
			a->max = v[k].max;
			a->first = v[k].first;
		}
	if (a->first == GRAVELER_NONE)
		a->first = 0; /* no lease left: answer_json needs a number */
	*ret_answer = answer_json(a);
	if (!*ret_answer) {
		rc = GERR_NOMEM;
		goto out;
	}
	*ret_index = bad;
	gerr_printf(err, errlen, "lease of %" PRIu64 " battles does not fit "
		    "Binomial(231, 1/4) on its own (score %.1f, limit %.1f)",
		    v[bad].battles, worst, FINISH_Z_LIMIT);
out:
	free(acc);
	free(v);
	free(a);
	return rc;
}

static char *graveler_wl_render_text(void *ctx, const json_t *params, const json_t *answer, const struct wl_parts *parts)
{
	uint64_t n = 0, seed = 0;
	char err[WL_ERRLEN];
	struct answer a;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	double sum = 0, peak = 0;
	int lo = -1, hi = -1;

	if (get_params(params, &n, &seed, err, sizeof(err)) ||
	    !answer || answer_read(answer, &a))
		return strdup("graveler: no answer yet\n");
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	for (unsigned b = 0; b < GRAVELER_BINS; b++) {
		sum += (double)b * (double)a.hist[b];
		if (a.hist[b]) {
			if (lo < 0)
				lo = (int)b;
			hi = (int)b;
			if ((double)a.hist[b] > peak)
				peak = (double)a.hist[b];
		}
	}
	fprintf(f, "graveler: %" PRIu64 " of %" PRIu64 " battles, seed %" PRIu64
		"\n", a.battles, n, seed);
	if (a.battles == 0) {
		fprintf(f, "no battles merged yet\n");
	} else {
		fprintf(f, "max paralysed turns: %u (first in battle %" PRIu64
			")\n", a.max, a.first);
		fprintf(f, "mean: %.4f (expected 57.75)\n",
			sum / (double)a.battles);
		fprintf(f, "histogram (paralysed turns: battles, log scale):\n");
		for (int b = lo; b >= 0 && b <= hi; b++) {
			int w = a.hist[b] ? 1 + (int)(39.0 * log10((double)a.hist[b]) /
						      log10(peak > 1 ? peak : 10))
					  : 0;
			fprintf(f, "%4d %14" PRIu64 " %.*s\n", b, a.hist[b], w,
				"########################################");
		}
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

WL_CUDA_HOOKS(graveler)

/* A lease's result and checkpoint: the header and a record for each of its
 * segments (graveler.h's formats), at most GRAVELER_RESULT_MAXLEN. */
static int gw_blob_max(void *ctx, const json_t *params, const json_t *spec,
		       int is_result, uint64_t *ret_max, char *err,
		       size_t errlen)
{
	uint64_t seed, begin, end;
	int rc = get_spec(params, spec, &seed, &begin, &end, err, errlen);

	(void)ctx, (void)is_result;
	if (rc)
		return rc;
	if (end - begin > GRAVELER_MAX_LEASE) {
		gerr_printf(err, errlen, "graveler: lease of %" PRIu64 " battles "
			    "is over %llu", end - begin,
			    (unsigned long long)GRAVELER_MAX_LEASE);
		return GERR_INVAL;
	}
	*ret_max = GRAVELER_HDR_LEN +
		   (uint64_t)GRAVELER_RECORD_LEN * graveler_nsegments(begin, end);
	return 0;
}

static const struct wl_param_doc gw_params_doc[] = {
	{ "battles", "integer", NULL, "battles to simulate, 1..1e15 (1e9 is "
	  "accepted)" },
	{ "seed", "integer", "0", "the random stream's seed (0..2^64-1): the "
	  "same seed gives the same answer on any device" },
	{ 0 }, /* the end */
};

const struct workload graveler_workload = {
	.name = "graveler",
	WL_NAMED_HOOKS(graveler),
	.unit_name = "battles",
	.split = gw_split,
	.run = gw_run,
	.blob_max = gw_blob_max,
	/* A result or checkpoint of the largest lease: every segment. */
	.blob_raw_max = GRAVELER_HDR_LEN +
			(uint64_t)GRAVELER_RECORD_LEN * GRAVELER_SEGMENTS,
	.check_checkpoint = gw_check_checkpoint,
	.blame = gw_blame,
	.plot_name = "graveler-histogram.svg",
	/* Segment records are near-random bytes: deflate barely shrinks a
	 * 5.2 MB result and costs both ends tens of ms. */
	.result_store_raw = 1,
	.description = "Graveler's soft-lock: per battle, 231 rolls of a "
		       "four-sided die; the histogram of ones and the most "
		       "seen (expected Binomial(231, 1/4))",
	.params_doc = gw_params_doc,
};
