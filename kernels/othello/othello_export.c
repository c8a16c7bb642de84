/* othello_export.c - an Othello job's scored positions as OBF lines (the
 * "result" export, what `gpuctl result JOB` writes): the job's parts, put
 * in position order, name the result blobs that hold the scores; the
 * positions come from the input blob or the generator.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "othello.h"
#include "othello_wl.h"

/* One part: the lease's positions and its result blob. */
struct otw_slice {
	uint64_t begin, count;
	char hash[65];
};

static int otw_cmp_slice(const void *a, const void *b)
{
	const struct otw_slice *x = a, *y = b;
	return (x->begin > y->begin) - (x->begin < y->begin);
}

/* The parts in position order, refused unless they cover [0, n) exactly
 * once: GERR_STATE while positions are missing (the job is not finished),
 * GERR_CORRUPT for parts that overlap or are not the job's leases. */
static int otw_slices(const json_t *params, const struct wl_parts *parts,
		      uint64_t n, struct otw_slice **ret, size_t *ret_n,
		      char *err, size_t errlen)
{
	struct otw_slice *s;
	uint64_t at = 0, covered = 0, gap = UINT64_MAX;
	size_t k = (size_t)parts->n;
	int rc = 0;

	if (parts->n > n) {
		gerr_printf(err, errlen, "othello: %" PRIu64 " parts for %"
			    PRIu64 " positions", parts->n, n);
		return GERR_CORRUPT;
	}
	s = calloc(k ? k : 1, sizeof(*s));
	if (!s)
		return GERR_NOMEM;
	for (size_t t = 0; t < k; t++) {
		struct othello_job j;
		struct wl_part p;
		char why[WL_ERRLEN];
		rc = parts->get(parts->opaque, t, &p);
		if (rc) {
			gerr_printf(err, errlen, "othello: cannot read part "
				    "%zu: %s", t, gerr_str(rc));
			goto fail;
		}
		rc = othello_spec_get(params, p.spec, &j, &s[t].begin,
				      &s[t].count, why, sizeof(why));
		if (rc == 0 && (!p.result_hash || strlen(p.result_hash) != 64))
			snprintf(why, sizeof(why), "no result hash");
		if (rc || !p.result_hash || strlen(p.result_hash) != 64) {
			gerr_printf(err, errlen, "othello: part %zu: %s", t,
				    why);
			rc = GERR_CORRUPT;
			goto fail;
		}
		memcpy(s[t].hash, p.result_hash, 65);
	}
	qsort(s, k, sizeof(*s), otw_cmp_slice);
	for (size_t t = 0; t < k; t++) {
		if (s[t].begin < at) {
			gerr_printf(err, errlen, "othello: parts overlap at "
				    "position %" PRIu64, s[t].begin);
			rc = GERR_CORRUPT;
			goto fail;
		}
		if (s[t].begin > at && gap == UINT64_MAX)
			gap = at;
		at = s[t].begin + s[t].count;
		covered += s[t].count;
	}
	if (at < n && gap == UINT64_MAX)
		gap = at;
	if (gap != UINT64_MAX) {
		gerr_printf(err, errlen, "othello: the job is not finished: %"
			    PRIu64 " of %" PRIu64 " positions scored, none "
			    "from position %" PRIu64, covered, n, gap);
		rc = GERR_STATE;
		goto fail;
	}
	*ret = s;
	*ret_n = k;
	return 0;
fail:
	free(s);
	return rc;
}

/* Appends the OBF lines of one slice's result. */
static int otw_write_slice(FILE *f, const struct othello_job *j,
			   const struct othello_pos *in,
			   const struct otw_slice *s,
			   const struct wl_blob_reader *rd, char *err,
			   size_t errlen)
{
	void *blob = NULL;
	size_t blen = 0;
	struct othello_res r;
	int rc = rd->fetch(rd->opaque, s->hash, &blob, &blen);

	if (rc) {
		gerr_printf(err, errlen, "othello: cannot read result "
			    "%.16s: %s", s->hash, gerr_str(rc));
		return rc;
	}
	rc = othello_res_decode(blob, blen, 0, &r, err, errlen);
	free(blob);
	if (rc)
		return rc;
	if (r.begin != s->begin || r.count != s->count) {
		othello_res_clear(&r);
		gerr_printf(err, errlen, "othello: result %.16s is for another "
			    "slice", s->hash);
		return GERR_CORRUPT;
	}
	for (uint64_t i = 0; i < r.count; i++) {
		struct othello_pos p;
		char board[68], mv[3];
		if (j->file) {
			p = in[r.begin + i];
		} else {
			uint64_t P, O;
			int black;
			oth_generate(j->seed, r.begin + i, j->empties, &P, &O,
				     &black);
			p.black = black ? P : O;
			p.white = black ? O : P;
			p.black_to_move = (uint8_t)black;
		}
		othello_format_board(&p, board);
		othello_format_move(r.move[i], mv);
		fprintf(f, "%s %s:%+03d;\n", board, mv, r.score[i]);
	}
	othello_res_clear(&r);
	return 0;
}

/* A split job's roots with their combined scores, in the file's order:
 * what an unsplit job of the same file writes. */
static int otw_split_export(const struct othello_job *j, const json_t *answer,
			    void **ret, size_t *ret_len, char *err,
			    size_t errlen)
{
	struct othello_split *sp = NULL;
	struct othello_pos *roots = NULL;
	size_t n = 0, olen = 0;
	int8_t *sc = NULL;
	uint8_t *mv = NULL;
	char *obuf = NULL;
	FILE *f;
	int rc = othello_split_of(j, &sp, &roots, &n, err, errlen);

	if (rc)
		return rc;
	othello_split_free(sp); /* the roots are enough */
	sc = malloc(n);
	mv = malloc(n);
	rc = sc && mv ? othello_split_answer_roots(answer, n, sc, mv)
		      : GERR_NOMEM;
	if (rc == GERR_STATE)
		gerr_printf(err, errlen, "othello: the job is not finished: "
			    "its roots are combined from every frontier "
			    "position's score");
	else if (rc == GERR_CORRUPT)
		gerr_printf(err, errlen, "othello: the answer's roots do not "
			    "match the job's");
	f = rc ? NULL : open_memstream(&obuf, &olen);
	if (rc == 0 && !f)
		rc = GERR_NOMEM;
	for (size_t r = 0; f && r < n; r++) {
		char board[68], m[3];
		othello_format_board(&roots[r], board);
		othello_format_move(mv[r], m);
		fprintf(f, "%s %s:%+03d;\n", board, m, sc[r]);
	}
	if (f && fclose(f) != 0)
		rc = GERR_NOMEM;
	if (rc == 0) {
		*ret = obuf;
		*ret_len = olen;
		obuf = NULL;
	}
	free(obuf);
	free(roots);
	free(sc);
	free(mv);
	return rc;
}

int othello_wl_export(void *ctx, const json_t *params, const json_t *answer,
		      const struct wl_parts *parts, const char *what,
		      const json_t *args, const struct wl_blob_reader *rd,
		      void **ret, size_t *ret_len, char *err, size_t errlen)
{
	struct othello_job j;
	struct otw_slice *s = NULL;
	size_t k = 0, olen = 0;
	struct othello_pos *in = NULL;
	char *obuf = NULL;
	FILE *f = NULL;
	int rc = othello_job_get(params, &j, err, errlen);

	(void)ctx;
	(void)args;
	if (rc)
		return rc;
	if (strcmp(what, "result") != 0) {
		gerr_printf(err, errlen, "othello: no export '%s'", what);
		return GERR_INVAL;
	}
	if (!parts) {
		gerr_printf(err, errlen, "othello: export needs the job's "
			    "parts");
		return GERR_INVAL;
	}
	if (!answer || parts->n == 0) {
		gerr_printf(err, errlen, "othello: no results yet");
		return GERR_NOTFOUND;
	}
	if (j.split)
		return otw_split_export(&j, answer, ret, ret_len, err, errlen);
	rc = otw_slices(params, parts, j.n, &s, &k, err, errlen);
	if (rc)
		return rc;
	if (j.file) {
		void *blob = NULL;
		size_t blen = 0;
		rc = rd->fetch(rd->opaque, j.input, &blob, &blen);
		if (rc) {
			gerr_printf(err, errlen, "othello: cannot read the "
				    "input: %s", gerr_str(rc));
			goto out;
		}
		rc = othello_input_read(blob, blen, 0, 0, &in, err, errlen);
		free(blob);
		if (rc)
			goto out;
	}
	f = open_memstream(&obuf, &olen);
	if (!f) {
		rc = GERR_NOMEM;
		goto out;
	}
	for (size_t t = 0; t < k && rc == 0; t++)
		rc = otw_write_slice(f, &j, in, &s[t], rd, err, errlen);
	if (fclose(f) != 0 && rc == 0)
		rc = GERR_NOMEM;
	f = NULL;
	if (rc)
		goto out;
	*ret = obuf;
	*ret_len = olen;
	obuf = NULL;
out:
	free(obuf);
	free(in);
	free(s);
	return rc;
}
