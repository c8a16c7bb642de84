/* sudoku_answer.c - the Sudoku job's answer: merge, the final checks,
 * the text and the per-gangster counts export.
 *
 * answer  {"box", "rows", "cols", "gangsters": G, "done": n, "leases": k,
 *          "sum": "decimal sum of members*cnt*V so far",
 *          "sets": [{"done": n, "sum": "..."}, ...] (one per GangSet),
 *          "total": "decimal" (once done == G)}
 *         Its size does not depend on the number of leases: each lease's
 *         V(g) stay in its result blob, and merge notes the lease's own
 *         sum ({"sum": "decimal"}) for finish to add up again.
 * export  "counts": CSV, the header "index,count", then "INDEX,V" for
 *         each merged gangster in gangster order (README.md, "Sudoku
 *         counts"); sudoku_wl_counts reads them for the plot too.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "sudoku.h"
#include "sudoku_count.h"
#include "sudoku_format.h"
#include "sudoku_internal.h"
#include "sudoku_wide.h"
#include "workload.h"

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

/* A non-negative integer field of the answer, or -1. */
static json_int_t int_get(const json_t *j, const char *key)
{
	const json_t *v = json_object_get(j, key);
	return json_is_integer(v) && json_integer_value(v) >= 0
		       ? json_integer_value(v) : -1;
}

/* Zeroed per-set sums and counts for S's sets, the caller's to free (also
 * on failure). */
static int sets_alloc(const struct sudoku_setup *S, struct u256 **ret_sum,
		      uint64_t **ret_done)
{
	*ret_sum = calloc(S->nnodes, sizeof(**ret_sum));
	*ret_done = calloc(S->nnodes, sizeof(**ret_done));
	return *ret_sum && *ret_done ? 0 : GERR_NOMEM;
}

/* The per-set sums and counts of an answer with nsets sets. */
static int sets_get(const json_t *answer, uint32_t nsets, struct u256 *sum,
		    uint64_t *done)
{
	const json_t *sets = json_object_get(answer, "sets");

	if (!json_is_array(sets) || json_array_size(sets) != nsets)
		return GERR_INVAL;
	for (uint32_t s = 0; s < nsets; s++) {
		const json_t *so = json_array_get(sets, s);
		json_int_t d = int_get(so, "done");
		if (d < 0 || dec_get(so, "sum", &sum[s]))
			return GERR_INVAL;
		done[s] = (uint64_t)d;
	}
	return 0;
}

int sudoku_wl_merge(void *ctx, const json_t *params, const json_t *answer,
		    const json_t *spec, const void *result, size_t len,
		    const char *result_hash, json_t **ret_answer,
		    json_t **ret_note)
{
	char err[WL_ERRLEN];
	const struct sudoku_setup *S;
	struct sudoku_res r;
	uint32_t from, to;
	struct u256 sum = u256_of(0, 0), lsum = u256_of(0, 0), *ssum = NULL;
	uint64_t *sdone = NULL, done = 0, leases = 0;
	json_t *out = NULL, *sets, *note = NULL;
	int R, C, rc;

	(void)result_hash; /* the blob stays with the lease (wl_parts) */
	rc = sudoku_wl_spec(ctx, params, spec, &R, &C, &S, SUDOKU_BUILD_T,
			    &from, &to, err, sizeof(err));
	if (rc)
		return rc;
	rc = sudoku_res_decode(result, len, 0, &r, err, sizeof(err));
	if (rc)
		return rc;
	if (sudoku_wl_match(&r, R, C, from, to, "result", err, sizeof(err))) {
		free(r.v);
		return GERR_INVAL;
	}
	rc = sets_alloc(S, &ssum, &sdone);
	if (rc)
		goto out;
	if (answer) {
		json_int_t d = int_get(answer, "done"), k = int_get(answer, "leases");
		if (d < 0 || k < 0 || dec_get(answer, "sum", &sum) ||
		    sets_get(answer, S->nnodes, ssum, sdone)) {
			rc = GERR_INVAL;
			goto out;
		}
		done = (uint64_t)d;
		leases = (uint64_t)k;
	}
	if (done + (to - from) > S->ngang) {
		rc = GERR_INVAL; /* more gangsters than there are */
		goto out;
	}
	for (uint32_t i = 0; i < to - from; i++) {
		uint32_t g = from + i, s = sudoku_set_of(S, g);
		struct u256 t;
		/* C == 2: V is cnt, verified (sudoku_verify.c); the setup
		 * holds no band counts */
		uint64_t cnt = C == 2 ? r.v[i][0] : S->cnt[g];
		if (cnt > UINT32_MAX || (C == 2 && r.v[i][1]) ||
		    sudoku_term(S->members[g], (uint32_t)cnt, r.v[i], C, &t) ||
		    u256_add(&lsum, &t) || u256_add(&ssum[s], &t)) {
			rc = GERR_INVAL;
			goto out;
		}
		sdone[s]++;
	}
	done += to - from;
	if (u256_add(&sum, &lsum)) {
		rc = GERR_INVAL;
		goto out;
	}
	/* A new object from the parts read above, so keys of older answers
	 * (the per-lease "counts" of before) are left behind. */
	out = json_pack("{s:O, s:O, s:O, s:I, s:I, s:I, s:o, s:[]}", "box",
			json_object_get(params, "box"), "rows",
			json_object_get(params, "rows"), "cols",
			json_object_get(params, "cols"), "gangsters",
			(json_int_t)S->ngang, "done", (json_int_t)done, "leases",
			(json_int_t)(leases + 1), "sum", dec_json(&sum), "sets");
	note = json_pack("{s:o}", "sum", dec_json(&lsum));
	if (!out || !note) {
		rc = GERR_NOMEM;
		goto out;
	}
	sets = json_object_get(out, "sets");
	for (uint32_t s = 0; s < S->nnodes; s++)
		if (json_array_append_new(sets, json_pack("{s:I, s:o}", "done",
					  (json_int_t)sdone[s], "sum",
					  dec_json(&ssum[s])))) {
			rc = GERR_NOMEM;
			goto out;
		}
	if (done == S->ngang) {
		struct u256 f, tot;
		if (sudoku_factor(R, C, S->K, &f) || u256_mul(&f, &sum, &tot)) {
			rc = GERR_INVAL;
			goto out;
		}
		json_object_set_new(out, "total", dec_json(&tot));
	}
	*ret_answer = out;
	out = NULL;
	if (ret_note) {
		*ret_note = note;
		note = NULL;
	}
out:
	free(r.v);
	free(ssum);
	free(sdone);
	json_decref(out);
	json_decref(note);
	return rc;
}

/* ---- finish ------------------------------------------------------------- */

static uint64_t binom(unsigned n, unsigned k)
{
	uint64_t r = 1;
	for (unsigned i = 1; i <= k; i++)
		r = r * (n - k + i) / i;
	return r;
}

/* Invariants of the setup computed anew: the number of box codes
 * N! / ((R!)^C C!), the compatible boxes sum_x C(R,x)^3, members summing
 * to K^(R-1), the sets covering every gangster. (Known band-count sums
 * are the tests' to check, not a lookup here.) */
static int check_setup(const struct sudoku_setup *S, char *err, size_t errlen)
{
	struct u256 msum = u256_of(0, 0), kpow = u256_of(1, 0);
	uint64_t K = 1, nc = 0;
	char buf[U256_DECLEN];

	for (int c = 0, left = S->N; c < S->C; c++, left -= S->R)
		K *= binom((unsigned)left, (unsigned)S->R);
	for (int c = 2; c <= S->C; c++)
		K /= (uint64_t)c;
	for (int x = 0; S->C == 3 && x <= S->R; x++)
		nc += binom((unsigned)S->R, (unsigned)x) *
		      binom((unsigned)S->R, (unsigned)x) *
		      binom((unsigned)S->R, (unsigned)x);
	if (S->K != K || (S->C == 3 && S->ncompat != nc) ||
	    S->set_start[S->nnodes] != S->ngang) {
		gerr_printf(err, errlen, "sudoku finish: the setup has %u box "
			    "codes, %u compatible boxes, sets up to %u of %u "
			    "gangsters; expected %" PRIu64 " and %" PRIu64,
			    S->K, S->ncompat, S->set_start[S->nnodes], S->ngang,
			    K, nc);
		return GERR_VERIFY;
	}
	for (uint32_t g = 0; g < S->ngang; g++) {
		struct u256 m = u256_of(S->members[g], 0);
		u256_add(&msum, &m);
	}
	for (int i = 1; i < S->R; i++)
		u256_mul_u64(&kpow, S->K);
	if (u256_cmp(&msum, &kpow) != 0) {
		gerr_printf(err, errlen, "sudoku finish: members sum to %s, not "
			    "K^(R-1)", (u256_to_dec(&msum, buf), buf));
		return GERR_VERIFY;
	}
	return 0;
}

/* The leases (parts) cover every gangster once, each inside its set, and
 * their noted sums add up to the answer's sum and set sums. */
static int check_parts(const struct sudoku_setup *S,
		       const struct wl_parts *parts, const struct u256 *sum,
		       const struct u256 *ssum, char *err, size_t errlen)
{
	uint8_t *seen = calloc(S->ngang, 1);
	struct u256 nsum = u256_of(0, 0), *nset = calloc(S->nnodes, sizeof(*nset));
	int notes = 1, rc = 0, bad = 0;
	uint64_t k;

	if (!seen || !nset) {
		rc = GERR_NOMEM;
		goto out;
	}
	for (k = 0; k < parts->n && !bad; k++) {
		struct wl_part p;
		uint64_t a, b;
		json_int_t set;
		struct u256 ls;
		rc = parts->get(parts->opaque, k, &p);
		if (rc) {
			gerr_printf(err, errlen, "sudoku finish: lease %" PRIu64
				    " of the job: %s", k, gerr_str(rc));
			goto out;
		}
		set = json_integer_value(json_object_get(p.spec, "set"));
		bad = wl_json_u64(p.spec, "from", 1, 0, &a, NULL, 0) ||
		      wl_json_u64(p.spec, "to", 1, 0, &b, NULL, 0) || a >= b ||
		      b > S->ngang;
		for (uint64_t g = a; !bad && g < b; g++) {
			bad = seen[g] || (set >= 0 && sudoku_set_of(S, (uint32_t)g) !=
						      (uint64_t)set);
			seen[g] = 1;
		}
		/* leases merged before notes were kept have none */
		if (!bad && !p.note)
			notes = 0;
		else if (!bad && (dec_get(p.note, "sum", &ls) ||
				  u256_add(&nsum, &ls) ||
				  (set >= 0 && u256_add(&nset[set], &ls))))
			bad = 1;
	}
	if (bad) {
		gerr_printf(err, errlen, "sudoku finish: lease %" PRIu64 " of the "
			    "job overlaps another, leaves its set or has a "
			    "malformed spec or note", k - 1);
		rc = GERR_VERIFY;
		goto out;
	}
	for (uint32_t g = 0; g < S->ngang; g++)
		if (!seen[g]) {
			gerr_printf(err, errlen, "sudoku finish: gangster %u is in "
				    "no lease", g);
			rc = GERR_VERIFY;
			goto out;
		}
	if (notes) {
		bad = u256_cmp(&nsum, sum) != 0;
		/* one set per lease for 4x3; the small shapes lease all sets
		 * at once (set -1) */
		for (uint32_t s = 0; sudoku_big_shape(S->R, S->C) &&
				     s < S->nnodes; s++)
			bad |= u256_cmp(&nset[s], &ssum[s]) != 0;
		if (bad) {
			gerr_printf(err, errlen, "sudoku finish: the leases' sums "
				    "do not add up to the answer's");
			rc = GERR_VERIFY;
		}
	}
out:
	free(seen);
	free(nset);
	return rc;
}

int sudoku_wl_finish(void *ctx, const json_t *params, const json_t *answer,
		     const struct wl_parts *parts, char *err, size_t errlen)
{
	const struct sudoku_setup *S;
	struct u256 sum, atot, tot, f, *ssum = NULL, all = u256_of(0, 0);
	uint64_t *sdone = NULL;
	int R, C, rc = sudoku_wl_params(params, &R, &C, err, errlen);

	if (rc)
		return rc;
	rc = sudoku_ctx_setup(ctx, R, C, sudoku_wl_what(C), sudoku_wl_threads(),
			      &S, err, errlen);
	if (rc)
		return rc;
	if (!parts) {
		gerr_printf(err, errlen, "sudoku finish: needs the job's leases");
		return GERR_INVAL;
	}
	rc = sets_alloc(S, &ssum, &sdone);
	if (rc)
		goto out;
	if (!json_is_object(answer) || dec_get(answer, "sum", &sum) ||
	    dec_get(answer, "total", &atot) ||
	    sets_get(answer, S->nnodes, ssum, sdone)) {
		gerr_printf(err, errlen, "sudoku finish: malformed or unfinished "
			    "answer");
		rc = GERR_INVAL;
		goto out;
	}
	rc = check_setup(S, err, errlen);
	if (rc)
		goto out;
	/* the counts: every gangster done once, in its set; the sums agree */
	if (int_get(answer, "gangsters") != (json_int_t)S->ngang ||
	    int_get(answer, "done") != (json_int_t)S->ngang ||
	    int_get(answer, "leases") != (json_int_t)parts->n) {
		gerr_printf(err, errlen, "sudoku finish: %" JSON_INTEGER_FORMAT
			    " of %" JSON_INTEGER_FORMAT " gangsters in %"
			    JSON_INTEGER_FORMAT " leases; the setup has %u "
			    "gangsters, the job %" PRIu64 " leases",
			    int_get(answer, "done"), int_get(answer, "gangsters"),
			    int_get(answer, "leases"), S->ngang, parts->n);
		rc = GERR_VERIFY;
		goto out;
	}
	for (uint32_t s = 0; s < S->nnodes; s++) {
		if (sdone[s] != S->set_start[s + 1] - S->set_start[s] ||
		    u256_add(&all, &ssum[s])) {
			gerr_printf(err, errlen, "sudoku finish: set %u has %"
				    PRIu64 " of %u gangsters", s, sdone[s],
				    S->set_start[s + 1] - S->set_start[s]);
			rc = GERR_VERIFY;
			goto out;
		}
	}
	if (u256_cmp(&all, &sum) != 0 || sudoku_factor(R, C, S->K, &f) ||
	    u256_mul(&f, &sum, &tot) || u256_cmp(&tot, &atot) != 0) {
		gerr_printf(err, errlen, "sudoku finish: the set sums, the sum "
			    "and the total do not agree");
		rc = GERR_VERIFY;
		goto out;
	}
	rc = check_parts(S, parts, &sum, ssum, err, errlen);
out:
	free(ssum);
	free(sdone);
	return rc;
}

/* ---- text ----------------------------------------------------------------- */

char *sudoku_wl_render_text(void *ctx, const json_t *params,
			    const json_t *answer, const struct wl_parts *parts)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	const json_t *box = json_object_get(params, "box");
	const json_t *tot = json_object_get(answer, "total");

	(void)ctx;
	(void)parts;
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
		if (json_is_string(tot)) {
			fprintf(f, "grids: %s\n", json_string_value(tot));
		} else {
			fprintf(f, "partial sum: %s\n",
				json_string_value(json_object_get(answer, "sum")));
		}
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- the counts export ----------------------------------------------------- */

const char *const sudoku_wl_exports[] = { "counts", NULL };

/* Copy the V of one lease (part k) into v, marking seen. */
static int export_part(const struct wl_parts *parts, uint64_t k,
		       const struct wl_blob_reader *rd, int R, int C,
		       uint32_t ngang, uint64_t (*v)[2], uint8_t *seen,
		       char *err, size_t errlen)
{
	struct wl_part p;
	struct sudoku_res r;
	uint64_t a, b;
	void *bytes = NULL;
	size_t blen = 0;
	int rc = parts->get(parts->opaque, k, &p);

	if (rc == 0 && (wl_json_u64(p.spec, "from", 1, 0, &a, err, errlen) ||
			wl_json_u64(p.spec, "to", 1, 0, &b, err, errlen) ||
			a >= b || b > ngang))
		rc = GERR_CORRUPT;
	if (rc == 0)
		rc = rd->fetch(rd->opaque, p.result_hash, &bytes, &blen);
	if (rc) {
		if (err && errlen && !err[0])
			gerr_printf(err, errlen, "sudoku: lease %" PRIu64 " of the "
				    "job: %s", k, gerr_str(rc));
		return rc;
	}
	rc = sudoku_res_decode(bytes, blen, 0, &r, err, errlen);
	free(bytes);
	if (rc)
		return rc;
	rc = sudoku_wl_match(&r, R, C, (uint32_t)a, (uint32_t)b, "a stored result",
			     err, errlen);
	for (uint32_t i = 0; rc == 0 && i < r.done; i++) {
		if (seen[a + i]) {
			gerr_printf(err, errlen, "sudoku: gangster %" PRIu64 " is "
				    "in two leases", a + i);
			rc = GERR_CORRUPT;
			break;
		}
		seen[a + i] = 1;
		v[a + i][0] = r.v[i][0];
		v[a + i][1] = r.v[i][1];
	}
	free(r.v);
	return rc == GERR_VERIFY ? GERR_CORRUPT : rc;
}

int sudoku_wl_counts(const json_t *params, const json_t *answer,
		     const struct wl_parts *parts,
		     const struct wl_blob_reader *rd, struct sudoku_counts *ret,
		     char *err, size_t errlen)
{
	json_int_t g = int_get(answer, "gangsters");
	struct sudoku_counts c = {0};
	int rc;

	rc = sudoku_wl_params(params, &c.rows, &c.cols, err, errlen);
	if (rc)
		return rc;
	if (!answer || !parts) {
		gerr_printf(err, errlen, "sudoku: no lease merged yet");
		return GERR_NOTFOUND;
	}
	if (g < 1 || g > SUDOKU_MAX_GANG) {
		gerr_printf(err, errlen, "sudoku: malformed answer");
		return GERR_CORRUPT;
	}
	if (!rd || !rd->fetch) {
		gerr_printf(err, errlen, "sudoku: no blob access");
		return GERR_UNSUPPORTED;
	}
	c.ngang = (uint32_t)g;
	c.v = malloc((size_t)c.ngang * sizeof(*c.v));
	c.seen = calloc(c.ngang, 1);
	if (!c.v || !c.seen) {
		sudoku_counts_clear(&c);
		return GERR_NOMEM;
	}
	if (err && errlen)
		err[0] = '\0';
	for (uint64_t k = 0; k < parts->n && rc == 0; k++)
		rc = export_part(parts, k, rd, c.rows, c.cols, c.ngang, c.v,
				 c.seen, err, errlen);
	for (uint32_t i = 0; i < c.ngang; i++)
		c.done += c.seen[i];
	if (rc) {
		sudoku_counts_clear(&c);
		return rc;
	}
	*ret = c;
	return 0;
}

void sudoku_counts_clear(struct sudoku_counts *c)
{
	free(c->v);
	free(c->seen);
	c->v = NULL;
	c->seen = NULL;
}

int sudoku_wl_export(void *ctx, const json_t *params, const json_t *answer,
		     const struct wl_parts *parts, const char *what,
		     const json_t *args, const struct wl_blob_reader *rd,
		     void **ret, size_t *ret_len, char *err, size_t errlen)
{
	struct sudoku_counts c;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	(void)ctx;
	if (!what || strcmp(what, "counts") != 0) {
		gerr_printf(err, errlen, "sudoku: exports 'counts' only");
		return GERR_INVAL;
	}
	if (args && (!json_is_object(args) || json_object_size(args) != 0)) {
		gerr_printf(err, errlen, "sudoku: 'counts' takes no options");
		return GERR_INVAL;
	}
	rc = sudoku_wl_counts(params, answer, parts, rd, &c, err, errlen);
	if (rc)
		return rc;
	f = open_memstream(&buf, &len);
	if (!f) {
		sudoku_counts_clear(&c);
		return GERR_NOMEM;
	}
	fprintf(f, "index,count\n");
	for (uint32_t i = 0; i < c.ngang; i++) {
		char dec[U256_DECLEN];
		if (!c.seen[i])
			continue;
		u256_to_dec(&(struct u256){ { c.v[i][0], c.v[i][1], 0, 0 } }, dec);
		fprintf(f, "%u,%s\n", i, dec);
	}
	sudoku_counts_clear(&c);
	if (fclose(f) != 0) {
		free(buf);
		return GERR_NOMEM;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}
