/* sudoku_format.c - result and checkpoint bytes (layout in
 * sudoku_format.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "le.h"
#include "sudoku_format.h"

int sudoku_res_encode(const struct sudoku_res *r, int ckpt, void **ret,
		      size_t *ret_len)
{
	size_t len;
	uint8_t *b;

	size_t nv;

	if (r->from >= r->to || r->to > SUDOKU_MAX_GANG ||
	    r->done > r->to - r->from || (!ckpt && r->done != r->to - r->from) ||
	    (r->pieces && (r->C != 3 || !r->piece)))
		return GERR_INVAL;
	nv = (size_t)r->done * (1 + (size_t)r->pieces);
	len = SUDOKU_HDR_LEN + 16 * nv;
	b = calloc(1, len);
	if (!b)
		return GERR_NOMEM;
	le_put_head(b, ckpt ? "SDKC" : "SDKR", SUDOKU_FMT_VERSION);
	b[8] = r->R;
	b[9] = r->C;
	le_put16(b + 10, r->pieces);
	le_put32(b + 12, r->from);
	le_put32(b + 16, r->to);
	le_put32(b + 20, r->done);
	for (size_t i = 0; i < nv; i++) {
		const uint64_t *x = i < r->done ? r->v[i] : r->piece[i - r->done];
		le_put64(b + SUDOKU_HDR_LEN + 16 * i, x[0]);
		le_put64(b + SUDOKU_HDR_LEN + 16 * i + 8, x[1]);
	}
	*ret = b;
	*ret_len = len;
	return 0;
}

int sudoku_res_decode(const void *buf, size_t len, int ckpt,
		      struct sudoku_res *r, char *err, size_t errlen)
{
	const uint8_t *b = buf;
	struct sudoku_res t;
	uint32_t version;
	size_t nv;

	memset(&t, 0, sizeof(t));
	if (!buf || len < SUDOKU_HDR_LEN) {
		snprintf(err, errlen, "sudoku: %s too short (%zu bytes)",
			 ckpt ? "checkpoint" : "result", len);
		return GERR_CORRUPT;
	}
	version = le_get32(b + 4);
	if (memcmp(b, ckpt ? "SDKC" : "SDKR", 4) != 0 ||
	    (version != SUDOKU_FMT_VERSION && version != 1)) {
		snprintf(err, errlen, "sudoku: bad magic or version");
		return GERR_CORRUPT;
	}
	t.R = b[8];
	t.C = b[9];
	t.from = le_get32(b + 12);
	t.to = le_get32(b + 16);
	t.done = le_get32(b + 20);
	t.pieces = le_get16(b + 10);
	if (t.pieces && (version == 1 || t.C != 3 || t.pieces != SUDOKU_PIECES)) {
		snprintf(err, errlen, "sudoku: %u pieces per gangster in a "
			 "version %u %ux%u %s", t.pieces, version, t.R, t.C,
			 ckpt ? "checkpoint" : "result");
		return GERR_CORRUPT;
	}
	if (t.R < 2 || t.R > 5 || t.C < 2 || t.C > 3 ||
	    le_get64(b + 24) != 0 || t.from >= t.to || t.to > SUDOKU_MAX_GANG ||
	    t.done > t.to - t.from || (!ckpt && t.done != t.to - t.from)) {
		snprintf(err, errlen, "sudoku: bad header (shape %ux%u, "
			 "[%u, %u), done %u)", t.R, t.C, t.from, t.to, t.done);
		return GERR_CORRUPT;
	}
	nv = (size_t)t.done * (1 + (size_t)t.pieces);
	if (len != SUDOKU_HDR_LEN + 16 * nv) {
		snprintf(err, errlen, "sudoku: length %zu, expected %zu", len,
			 SUDOKU_HDR_LEN + 16 * nv);
		return GERR_CORRUPT;
	}
	if (nv) {
		t.v = malloc(nv * sizeof(*t.v));
		if (!t.v)
			return GERR_NOMEM;
		for (size_t i = 0; i < nv; i++) {
			t.v[i][0] = le_get64(b + SUDOKU_HDR_LEN + 16 * i);
			t.v[i][1] = le_get64(b + SUDOKU_HDR_LEN + 16 * i + 8);
		}
		if (t.pieces)
			t.piece = t.v + t.done;
	}
	*r = t;
	return 0;
}
