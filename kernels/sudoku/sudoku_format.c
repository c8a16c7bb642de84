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

	if (r->from >= r->to || r->to > SUDOKU_MAX_GANG ||
	    r->done > r->to - r->from || (!ckpt && r->done != r->to - r->from))
		return GERR_INVAL;
	len = SUDOKU_HDR_LEN + (size_t)16 * r->done;
	b = calloc(1, len);
	if (!b)
		return GERR_NOMEM;
	memcpy(b, ckpt ? "SDKC" : "SDKR", 4);
	le_put32(b + 4, SUDOKU_FMT_VERSION);
	b[8] = r->R;
	b[9] = r->C;
	le_put32(b + 12, r->from);
	le_put32(b + 16, r->to);
	le_put32(b + 20, r->done);
	for (uint32_t i = 0; i < r->done; i++) {
		le_put64(b + SUDOKU_HDR_LEN + 16 * (size_t)i, r->v[i][0]);
		le_put64(b + SUDOKU_HDR_LEN + 16 * (size_t)i + 8, r->v[i][1]);
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

	memset(&t, 0, sizeof(t));
	if (!buf || len < SUDOKU_HDR_LEN) {
		snprintf(err, errlen, "sudoku: %s too short (%zu bytes)",
			 ckpt ? "checkpoint" : "result", len);
		return GERR_CORRUPT;
	}
	if (memcmp(b, ckpt ? "SDKC" : "SDKR", 4) != 0 ||
	    le_get32(b + 4) != SUDOKU_FMT_VERSION) {
		snprintf(err, errlen, "sudoku: bad magic or version");
		return GERR_CORRUPT;
	}
	t.R = b[8];
	t.C = b[9];
	t.from = le_get32(b + 12);
	t.to = le_get32(b + 16);
	t.done = le_get32(b + 20);
	if (t.R < 2 || t.R > 5 || t.C < 2 || t.C > 3 || b[10] || b[11] ||
	    le_get64(b + 24) != 0 || t.from >= t.to || t.to > SUDOKU_MAX_GANG ||
	    t.done > t.to - t.from || (!ckpt && t.done != t.to - t.from)) {
		snprintf(err, errlen, "sudoku: bad header (shape %ux%u, "
			 "[%u, %u), done %u)", t.R, t.C, t.from, t.to, t.done);
		return GERR_CORRUPT;
	}
	if (len != SUDOKU_HDR_LEN + (size_t)16 * t.done) {
		snprintf(err, errlen, "sudoku: length %zu, expected %zu", len,
			 SUDOKU_HDR_LEN + (size_t)16 * t.done);
		return GERR_CORRUPT;
	}
	if (t.done) {
		t.v = malloc((size_t)t.done * sizeof(*t.v));
		if (!t.v)
			return GERR_NOMEM;
		for (uint32_t i = 0; i < t.done; i++) {
			t.v[i][0] = le_get64(b + SUDOKU_HDR_LEN + 16 * (size_t)i);
			t.v[i][1] = le_get64(b + SUDOKU_HDR_LEN + 16 * (size_t)i + 8);
		}
	}
	*r = t;
	return 0;
}
