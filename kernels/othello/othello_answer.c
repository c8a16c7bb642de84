/* othello_answer.c - an Othello job's answer: merge adds a verified
 * result's scores into counts of a constant size (othello_wl.h), finish
 * checks them against the job, render_text writes them as text. Which
 * result holds which positions is not kept here: gpud keeps each lease's
 * spec and result hash as its part (othello_export.c reads them).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "othello.h"
#include "othello_wl.h"

/* The answer's fields that merge sums; lists are apart. */
static const char *const otw_sums[] = {"positions", "leases", "nodes",
				       "usec", "mismatches"};
enum { OTW_POSITIONS, OTW_LEASES, OTW_NODES, OTW_USEC, OTW_MISMATCHES,
       OTW_NSUMS };

/* The sums, histogram and mismatch list of answer (NULL: all empty). The
 * list is borrowed. GERR_CORRUPT when a field is missing or mistyped. */
static int otw_answer_read(const json_t *answer, uint64_t sums[OTW_NSUMS],
			   uint64_t hist[65], const json_t **list)
{
	const json_t *h;

	memset(sums, 0, OTW_NSUMS * sizeof(*sums));
	memset(hist, 0, 65 * sizeof(*hist));
	*list = NULL;
	if (!answer)
		return 0;
	for (int k = 0; k < OTW_NSUMS; k++) {
		const json_t *v = json_object_get(answer, otw_sums[k]);
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return GERR_CORRUPT;
		sums[k] = (uint64_t)json_integer_value(v);
	}
	h = json_object_get(answer, "hist");
	*list = json_object_get(answer, "mismatch_list");
	if (!json_is_array(h) || json_array_size(h) != 65 ||
	    !json_is_array(*list) ||
	    json_array_size(*list) > OTHELLO_MISMATCH_LIST)
		return GERR_CORRUPT;
	for (size_t b = 0; b < 65; b++) {
		const json_t *v = json_array_get(h, b);
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return GERR_CORRUPT;
		hist[b] = (uint64_t)json_integer_value(v);
	}
	return 0;
}

int othello_wl_answer_hist(const json_t *answer, uint64_t hist[65],
			   uint64_t *ret_positions)
{
	uint64_t sums[OTW_NSUMS];
	const json_t *list;
	int rc = otw_answer_read(answer, sums, hist, &list);

	if (rc == 0)
		*ret_positions = sums[OTW_POSITIONS];
	return rc;
}

static int otw_cmp_mismatch(const void *a, const void *b)
{
	const json_t *ea = *(json_t *const *)a, *eb = *(json_t *const *)b;
	json_int_t x = json_integer_value(json_array_get(ea, 0));
	json_int_t y = json_integer_value(json_array_get(eb, 0));

	return (x > y) - (x < y);
}

/* The lowest OTHELLO_MISMATCH_LIST indices of the old list and this
 * result's disagreements: the same list whatever the merge order. A
 * result's lowest ones are enough, so at most twice the list is sorted. */
static json_t *otw_mismatches(const json_t *old, const struct othello_res *r,
			      uint64_t *ret_count)
{
	json_t *v[2 * OTHELLO_MISMATCH_LIST], *list = json_array();
	size_t n = 0, keep;
	uint64_t count = 0;
	int ok = list != NULL;

	for (size_t i = 0; i < json_array_size(old); i++)
		v[n++] = json_incref(json_array_get(old, i));
	for (uint64_t i = 0; r->with_pos && i < r->count; i++) {
		if (r->pos[i].expected == OTHELLO_NO_SCORE ||
		    r->pos[i].expected == r->score[i])
			continue;
		if (count++ < OTHELLO_MISMATCH_LIST)
			v[n++] = json_pack("[I, i, i]",
					   (json_int_t)(r->begin + i),
					   (int)r->pos[i].expected,
					   (int)r->score[i]);
	}
	for (size_t i = 0; i < n; i++)
		ok = ok && v[i];
	if (ok) {
		qsort(v, n, sizeof(*v), otw_cmp_mismatch);
		keep = n < OTHELLO_MISMATCH_LIST ? n : OTHELLO_MISMATCH_LIST;
		for (size_t i = 0; ok && i < keep; i++)
			ok = json_array_append(list, v[i]) == 0;
	}
	for (size_t i = 0; i < n; i++)
		json_decref(v[i]);
	*ret_count = count;
	if (!ok) {
		json_decref(list);
		return NULL;
	}
	return list;
}

int othello_split_answer_roots(const json_t *answer, size_t n,
			       int8_t *ret_score, uint8_t *ret_move)
{
	const json_t *roots = json_object_get(answer, "roots"), *e;
	size_t i;

	if (!roots)
		return GERR_STATE;
	if (!json_is_array(roots) || json_array_size(roots) != n)
		return GERR_CORRUPT;
	json_array_foreach(roots, i, e) {
		json_int_t sc = json_integer_value(json_array_get(e, 0));
		json_int_t mv = json_integer_value(json_array_get(e, 1));
		if (!json_is_integer(json_array_get(e, 0)) ||
		    !json_is_integer(json_array_get(e, 1)) || sc < -64 ||
		    sc > 64 || sc & 1 || mv < 0 || mv > OTHELLO_MOVE_NONE)
			return GERR_CORRUPT;
		ret_score[i] = (int8_t)sc;
		ret_move[i] = (uint8_t)mv;
	}
	return 0;
}

/* The roots of a split job once the frontier's bounds [lo, hi] settle
 * them: their scores and moves, histogram and mismatches into the answer
 * a; GERR_AGAIN before. */
static int otw_split_roots(const struct othello_job *j, const int8_t *lo,
			   const int8_t *hi, json_t *a)
{
	char err[WL_ERRLEN];
	struct othello_split *sp = NULL;
	struct othello_pos *roots = NULL;
	size_t n = 0;
	uint64_t mm = 0;
	int8_t *sc = NULL;
	uint8_t *mv = NULL;
	json_t *h = json_array(), *list = json_array(), *rl = json_array();
	int rc = othello_split_of(j, &sp, &roots, &n, err, sizeof(err));

	if (rc)
		goto out;
	sc = malloc(n);
	mv = malloc(n);
	if (!sc || !mv || !h || !list || !rl) {
		rc = GERR_NOMEM;
		goto out;
	}
	rc = othello_split_combine(sp, lo, hi, sc, mv);
	if (rc)
		goto out;
	uint64_t hist[65] = {0};
	for (size_t r = 0; r < n; r++) {
		hist[sc[r] / 2 + 32]++;
		rc = json_array_append_new(rl, json_pack("[i, i]", sc[r],
							  mv[r]));
		if (rc == 0 && roots[r].expected != OTHELLO_NO_SCORE &&
		    roots[r].expected != sc[r] && mm++ < OTHELLO_MISMATCH_LIST)
			rc = json_array_append_new(list, json_pack("[I, i, i]",
				(json_int_t)r, roots[r].expected, sc[r]));
		if (rc) {
			rc = GERR_NOMEM;
			goto out;
		}
	}
	for (size_t b = 0; b < 65; b++)
		if (json_array_append_new(h, json_integer((json_int_t)hist[b]))) {
			rc = GERR_NOMEM;
			goto out;
		}
	if (json_object_set(a, "roots", rl) || json_object_set(a, "hist", h) ||
	    json_object_set(a, "mismatch_list", list) ||
	    json_object_set_new(a, "mismatches", json_integer((json_int_t)mm)))
		rc = GERR_NOMEM;
out:
	othello_split_free(sp);
	free(roots);
	free(sc);
	free(mv);
	json_decref(h);
	json_decref(list);
	json_decref(rl);
	return rc;
}

/* A split job's frontier bounds so far (old answer's, or none) narrowed
 * by r's results in the window (alpha, beta), into a, and the roots once
 * they no longer depend on an unknown. Bounds only narrow, so merges
 * commute; results that contradict are refused. */
static int otw_split_merge(const struct othello_job *j, const json_t *old,
			   int alpha, int beta, const struct othello_res *r,
			   json_t *a)
{
	char *nf = malloc(4 * j->n + 1);
	int8_t *lo = malloc(j->n), *hi = malloc(j->n);
	int rc = nf && lo && hi ? othello_split_scores(old, j->n, lo, hi)
				: GERR_NOMEM;

	for (uint64_t i = 0; rc == 0 && i < r->count; i++)
		rc = othello_split_window(alpha, beta, r->score[i],
					  &lo[r->begin + i], &hi[r->begin + i]);
	if (rc)
		goto out;
	for (uint64_t k = 0; k < j->n; k++) /* each NUL overwritten next */
		snprintf(nf + 4 * k, 5, "%02x%02x", lo[k] / 2 + 32,
			 hi[k] / 2 + 32);
	if (json_object_set_new(a, "frontier", json_string(nf))) {
		rc = GERR_NOMEM;
		goto out;
	}
	rc = otw_split_roots(j, lo, hi, a);
	if (rc == GERR_AGAIN)
		rc = 0;
out:
	free(nf);
	free(lo);
	free(hi);
	return rc;
}

/* A new answer from the old one's fields and this result: a constant
 * amount of work whatever the number of leases merged before. Fields
 * other than those listed in othello_wl.h are not carried over. */
int othello_wl_merge(void *ctx, const json_t *params, const json_t *answer,
		     const json_t *spec, const void *result, size_t len,
		     const char *result_hash, json_t **ret_answer,
		     json_t **ret_note)
{
	char err[WL_ERRLEN];
	struct othello_job j;
	struct othello_res r;
	uint64_t begin, count, sums[OTW_NSUMS], hist[65], cnt[65], mm = 0;
	const json_t *old_list;
	json_t *a = NULL, *h = NULL, *list = NULL;
	int rc, alpha, beta;

	(void)ctx;
	(void)result_hash;
	(void)ret_note; /* the part's spec says which positions it holds */
	rc = othello_spec_get(params, spec, &j, &begin, &count, err,
			      sizeof(err));
	if (rc == 0)
		rc = othello_spec_window(&j, spec, &alpha, &beta, err,
					 sizeof(err));
	if (rc)
		return rc;
	rc = otw_answer_read(answer, sums, hist, &old_list);
	if (rc)
		return rc;
	/* Counted in an array, then 65 JSON integers made once: per-position
	 * JSON updates cost a lease of a million positions tens of ms. Only
	 * file jobs need the positions decoded (expected scores). */
	rc = othello_res_hist(result, len, &r, cnt, err, sizeof(err));
	if (rc == 0 && r.with_pos)
		rc = othello_res_decode(result, len, 0, &r, err, sizeof(err));
	if (rc)
		return rc;
	if (r.begin != begin || r.count != count || r.with_pos != j.file) {
		rc = GERR_INVAL;
		goto out;
	}
	if (j.split) /* hist and mismatches are the roots' */
		memset(cnt, 0, sizeof(cnt));
	list = otw_mismatches(old_list, &r, &mm);
	h = json_array();
	if (!list || !h) {
		rc = GERR_NOMEM;
		goto out;
	}
	for (size_t b = 0; b < 65; b++)
		if (json_array_append_new(h, json_integer(
				(json_int_t)(hist[b] + cnt[b])))) {
			rc = GERR_NOMEM;
			goto out;
		}
	sums[OTW_POSITIONS] += r.count;
	sums[OTW_LEASES] += 1;
	sums[OTW_NODES] += r.nodes;
	sums[OTW_USEC] += r.usec;
	sums[OTW_MISMATCHES] += mm;
	a = json_pack("{s:O, s:O}", "hist", h, "mismatch_list", list);
	for (int k = 0; a && k < OTW_NSUMS; k++)
		if (json_object_set_new(a, otw_sums[k],
					json_integer((json_int_t)sums[k]))) {
			json_decref(a);
			a = NULL;
		}
	if (!a) {
		rc = GERR_NOMEM;
		goto out;
	}
	if (j.split && (rc = otw_split_merge(&j, answer, alpha, beta, &r,
					      a)) != 0) {
		json_decref(a);
		goto out;
	}
	*ret_answer = a;
out:
	json_decref(h);
	json_decref(list);
	othello_res_clear(&r);
	return rc;
}

/* The answer against the job: every position scored once. The leases
 * tile [0, n) by construction (carve cuts them in order from the cursor,
 * gpud merges each lease once as one part), so n positions merged means
 * none is missing or twice; export, which reads every part anyway, checks
 * the tiling itself. Walking the parts here would cost gpud's database
 * thread one lookup per lease. */
int othello_wl_finish(void *ctx, const json_t *params, const json_t *answer,
		      const struct wl_parts *parts, char *err, size_t errlen)
{
	struct othello_job j;
	uint64_t sums[OTW_NSUMS], hist[65], total = 0;
	const json_t *list;
	int rc = othello_job_get(params, &j, err, errlen);

	(void)ctx;
	if (rc)
		return rc;
	if (!answer || !parts) {
		gerr_printf(err, errlen, "othello finish: no %s",
			    answer ? "parts" : "answer");
		return GERR_INVAL;
	}
	if (otw_answer_read(answer, sums, hist, &list)) {
		gerr_printf(err, errlen, "othello finish: the answer is not "
			    "an Othello answer");
		return GERR_CORRUPT;
	}
	for (size_t b = 0; b < 65; b++)
		total += hist[b];
	/* A split job's histogram holds its roots, the frontier merged. */
	uint64_t scored = j.split ? json_array_size(json_object_get(j.split,
				"roots")) : j.n;
	/* A split job solves the frontier positions its roots need, some
	 * with several windows: one a lease. */
	if (total != scored || (j.split ? sums[OTW_POSITIONS] !=
						sums[OTW_LEASES]
					: sums[OTW_POSITIONS] != j.n) ||
	    (j.split && json_array_size(json_object_get(answer, "roots")) !=
			scored)) {
		gerr_printf(err, errlen, "othello finish: %" PRIu64 " scores "
			    "for %" PRIu64 " positions", total, scored);
		return GERR_VERIFY;
	}
	if (sums[OTW_LEASES] != parts->n) {
		gerr_printf(err, errlen, "othello finish: %" PRIu64 " leases "
			    "merged, %" PRIu64 " parts kept", sums[OTW_LEASES],
			    parts->n);
		return GERR_VERIFY;
	}
	return 0;
}

/* A split job's roots with their scores once combined. */
static void otw_split_text(FILE *f, const json_t *roots, const json_t *answer)
{
	size_t n = json_array_size(roots);
	int8_t *sc = malloc(n ? n : 1);
	uint8_t *mv = malloc(n ? n : 1);

	if (sc && mv && othello_split_answer_roots(answer, n, sc, mv) == 0) {
		for (size_t r = 0; r < n; r++) {
			char m[3];
			othello_format_move(mv[r], m);
			fprintf(f, "  root %zu: score %+d, best move %s\n", r,
				sc[r], m);
		}
	}
	free(sc);
	free(mv);
}

/* The answer alone says everything shown; parts are not read. */
char *othello_wl_render_text(void *ctx, const json_t *params,
			     const json_t *answer,
			     const struct wl_parts *parts)
{
	char err[WL_ERRLEN], *buf = NULL;
	size_t len = 0;
	struct othello_job j;
	uint64_t sums[OTW_NSUMS], hist[65], n, win = 0, draw = 0, loss = 0;
	uint64_t peak = 1;
	const json_t *list, *e;
	double usec, nodes, sum = 0;
	FILE *f;

	(void)ctx;
	(void)parts;
	if (othello_job_get(params, &j, err, sizeof(err)) || !answer)
		return strdup("othello: no answer yet\n");
	if (otw_answer_read(answer, sums, hist, &list))
		return strdup("othello: the answer is not an Othello answer\n");
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	n = sums[OTW_POSITIONS];
	usec = (double)sums[OTW_USEC];
	nodes = (double)sums[OTW_NODES];
	for (int b = 0; b < 65; b++) {
		int sc = 2 * b - 64;
		sum += (double)sc * (double)hist[b];
		if (sc > 0)
			win += hist[b];
		else if (sc < 0)
			loss += hist[b];
		else
			draw += hist[b];
		if (hist[b] > peak)
			peak = hist[b];
	}
	if (j.split) {
		const json_t *roots = json_object_get(j.split, "roots");
		const char *fr = json_string_value(json_object_get(answer,
								   "frontier"));
		uint64_t seen = 0;
		for (uint64_t k = 0; fr && k + 1 < j.n && 4 * k < strlen(fr); k++)
			seen += strncmp(fr + 4 * k, "0040", 4) != 0;
		fprintf(f, "othello: %zu positions from a file (up to %lld "
			"empties), split %lld plies deep into %" PRIu64
			" frontier positions (up to %d empties, one a lease, "
			"in the window alpha-beta needs): %" PRIu64 " leases "
			"on %" PRIu64 " of them%s\n", json_array_size(roots),
			(long long)json_integer_value(json_object_get(j.split,
				"root_empties")),
			(long long)json_integer_value(json_object_get(j.split,
				"depth")), j.n - 1, j.empties, n, seen,
			json_object_get(answer, "roots") ? ", the rest ruled "
			"out by alpha-beta" : "");
		otw_split_text(f, roots, answer);
		n = json_array_size(json_object_get(answer, "roots"));
	} else if (j.file)
		fprintf(f, "othello: %" PRIu64 " of %" PRIu64 " positions from "
			"a file (up to %d empties)\n", n, j.n, j.empties);
	else
		fprintf(f, "othello: %" PRIu64 " of %" PRIu64 " random positions"
			" with %d empties, seed %" PRIu64 "\n", n, j.n,
			j.empties, j.seed);
	if (n) {
		fprintf(f, "side to move: %" PRIu64 " wins, %" PRIu64 " draws, "
			"%" PRIu64 " losses; mean score %+.3f\n", win, draw,
			loss, sum / (double)n);
		if (usec > 0)
			fprintf(f, "solve rate: %.4g positions/s, %.4g nodes/s "
				"(device time %.3f s, %.4g nodes)\n",
				(double)n / (usec * 1e-6),
				nodes / (usec * 1e-6), usec * 1e-6, nodes);
		fprintf(f, "score distribution (score: positions):\n");
		for (int b = 0; b < 65; b++) {
			if (!hist[b])
				continue;
			int w = (int)(40.0 * (double)hist[b] / (double)peak +
				      0.999);
			fprintf(f, "%+4d %12" PRIu64 " %.*s\n", 2 * b - 64,
				hist[b], w,
				"########################################");
		}
	}
	if (j.file) {
		json_int_t we = json_integer_value(
			json_object_get(params, "with_expected"));
		size_t i;
		fprintf(f, "expected scores in the input: %lld; disagreements: "
			"%" PRIu64 "\n", (long long)we, sums[OTW_MISMATCHES]);
		json_array_foreach(list, i, e) {
			if (i >= 20) {
				fprintf(f, "  ... (answer lists %zu)\n",
					json_array_size(list));
				break;
			}
			fprintf(f, "  position %lld (line order): expected "
				"%+lld, solved %+lld\n",
				(long long)json_integer_value(json_array_get(e, 0)),
				(long long)json_integer_value(json_array_get(e, 1)),
				(long long)json_integer_value(json_array_get(e, 2)));
		}
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int othello_wl_results_agree(void *ctx, const json_t *params,
			     const json_t *spec, const void *a, size_t alen,
			     const void *b, size_t blen)
{
	struct othello_res ra, rb;
	uint64_t ha[65], hb[65];
	char err[WL_ERRLEN];
	const uint8_t *pa = a, *pb = b;

	(void)ctx;
	(void)params;
	(void)spec;
	if (alen != blen ||
	    othello_res_hist(a, alen, &ra, ha, err, sizeof(err)) ||
	    othello_res_hist(b, blen, &rb, hb, err, sizeof(err)) ||
	    ra.begin != rb.begin || ra.count != rb.count ||
	    ra.done != rb.done || ra.with_pos != rb.with_pos)
		return 0;
	for (uint64_t i = 0; i < ra.done; i++)
		if (pa[OTHELLO_RES_HDR + 2 * i] != pb[OTHELLO_RES_HDR + 2 * i])
			return 0;
	/* The positions, when included, follow the score/move pairs. */
	return memcmp(pa + OTHELLO_RES_HDR + 2 * ra.done,
		      pb + OTHELLO_RES_HDR + 2 * ra.done,
		      alen - OTHELLO_RES_HDR - 2 * ra.done) == 0;
}
