/* othello_evalw.c - the evaluation's pattern set and weights file
 * (othello_evalw.h): board turns, the folding of symmetric
 * configurations, and the checked load of a file into expanded tables. */
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "othello_evalw.h"

int othello_evalw_turn(int rot, int s)
{
	int r = s >> 3, c = s & 7;

	switch (rot & 3) {
	case 1: return 8 * (7 - c) + r;
	case 2: return 8 * (7 - r) + (7 - c);
	case 3: return 8 * c + (7 - r);
	default: return s;
	}
}

/* The 8 board symmetries: the 4 turns, then each after a transpose. */
static int evalw_sym(int g, int s)
{
	if (g >= 4)
		s = 8 * (s & 7) + (s >> 3);
	return othello_evalw_turn(g & 3, s);
}

uint32_t othello_evalw_fnv(const void *buf, size_t len, uint32_t h)
{
	const uint8_t *b = buf;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

uint32_t othello_evalw_fingerprint(void)
{
	uint32_t h = othello_evalw_fnv(OTH_EVALW_SQ_MASK, sizeof(OTH_EVALW_SQ_MASK),
				       2166136261u);

	for (int t = 0; t < OTH_EVALW_NPAT; t++) {
		const struct oth_evalw_pat *p = &OTH_EVALW_PATS[t];
		uint8_t b[2] = { p->n, p->rots };
		h = othello_evalw_fnv(b, 2, h);
		h = othello_evalw_fnv(p->sq, p->n, h);
	}
	return h;
}

static int evalw_pow3(int n)
{
	int v = 1;

	while (n--)
		v *= 3;
	return v;
}

/* fold[i]: the folded id of raw configuration i of type t (ids in
 * increasing order of each orbit's lowest raw index); returns the count. */
static int evalw_fold(int t, int32_t *fold)
{
	const struct oth_evalw_pat *p = &OTH_EVALW_PATS[t];
	int perm[8][OTH_EVALW_MAX_SQ], nperm = 0, size = evalw_pow3(p->n);
	int next = 0;

	for (int g = 0; g < 8; g++) {
		int ok = 1;
		for (int k = 0; k < p->n && ok; k++) {
			int to = evalw_sym(g, p->sq[k]), at = -1;
			for (int j = 0; j < p->n; j++)
				if (p->sq[j] == to)
					at = j;
			ok = at >= 0;
			perm[nperm][k] = at;
		}
		nperm += ok;
	}
	for (int i = 0; i < size; i++) {
		int d[OTH_EVALW_MAX_SQ], canon = i;
		for (int k = 0, x = i; k < p->n; k++, x /= 3)
			d[k] = x % 3;
		for (int q = 0; q < nperm; q++) {
			int v = 0;
			for (int k = p->n - 1; k >= 0; k--)
				v = 3 * v + d[perm[q][k]];
			if (v < canon)
				canon = v;
		}
		fold[i] = canon == i ? next++ : fold[canon];
	}
	return next;
}

size_t othello_evalw_folded(void)
{
	int32_t *fold = malloc(sizeof(*fold) * 59049);
	size_t n = 0;

	if (!fold)
		return 0;
	for (int t = 0; t < OTH_EVALW_NPAT; t++)
		n += (size_t)evalw_fold(t, fold);
	free(fold);
	return n;
}

static uint32_t evalw_u32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

/* Expands one phase's folded weights f into w (OTH_EVALW_TOTAL). */
static void evalw_expand(const uint8_t *f, int16_t *w, int32_t *fold)
{
	size_t base = 0, off = 0;

	for (int t = 0; t < OTH_EVALW_NPAT; t++) {
		int size = evalw_pow3(OTH_EVALW_PATS[t].n);
		int nf = evalw_fold(t, fold);
		for (int i = 0; i < size; i++) {
			const uint8_t *x = f + 2 * (base + (size_t)fold[i]);
			w[off + (size_t)i] = (int16_t)(uint16_t)(x[0] | x[1] << 8);
		}
		base += (size_t)nf;
		off += (size_t)size;
	}
	for (int i = 0; i < OTH_EVALW_TAIL; i++) {
		const uint8_t *x = f + 2 * (base + (size_t)i);
		w[off + (size_t)i] = (int16_t)(uint16_t)(x[0] | x[1] << 8);
	}
}

int othello_evalw_load(const void *buf, size_t len, int *ret_phases,
		       uint8_t ret_phase_of[61], int16_t **ret_w, char *err,
		       size_t errlen)
{
	const uint8_t *b = buf;
	size_t folded = othello_evalw_folded(), per = folded + OTH_EVALW_TAIL;
	uint32_t phases;
	int32_t *fold;
	int16_t *w;

	if (folded == 0)
		return GERR_NOMEM;
	if (len < OTH_EVALW_HDR || memcmp(b, "OTHE", 4) != 0) {
		gerr_printf(err, errlen, "not an evaluation weights file (no "
			    "OTHE header)");
		return GERR_CORRUPT;
	}
	if (evalw_u32(b + 4) != OTH_EVALW_VERSION) {
		gerr_printf(err, errlen, "weights file version %u, expected %u",
			    evalw_u32(b + 4), OTH_EVALW_VERSION);
		return GERR_CORRUPT;
	}
	if (evalw_u32(b + 8) != othello_evalw_fingerprint() ||
	    evalw_u32(b + 12) != per) {
		gerr_printf(err, errlen, "weights file made for another pattern "
			    "set (fingerprint %08x, %u weights a phase; expected "
			    "%08x, %zu)", evalw_u32(b + 8), evalw_u32(b + 12),
			    othello_evalw_fingerprint(), per);
		return GERR_CORRUPT;
	}
	phases = evalw_u32(b + 16);
	if (phases < 1 || phases > OTH_EVALW_MAX_PHASES) {
		gerr_printf(err, errlen, "weights file has %u phases (1..%d)",
			    phases, OTH_EVALW_MAX_PHASES);
		return GERR_CORRUPT;
	}
	if (len != OTH_EVALW_HDR + (size_t)phases * per * 2) {
		gerr_printf(err, errlen, "weights file is %zu bytes, expected "
			    "%zu", len, OTH_EVALW_HDR + (size_t)phases * per * 2);
		return GERR_CORRUPT;
	}
	if (othello_evalw_fnv(b + OTH_EVALW_HDR, len - OTH_EVALW_HDR,
			      2166136261u) != evalw_u32(b + 20)) {
		gerr_printf(err, errlen, "weights file checksum mismatch");
		return GERR_CORRUPT;
	}
	for (int e = 0; e <= 60; e++) {
		if (b[24 + e] >= phases) {
			gerr_printf(err, errlen, "weights file maps %d empties to "
				    "phase %u of %u", e, b[24 + e], phases);
			return GERR_CORRUPT;
		}
		ret_phase_of[e] = b[24 + e];
	}
	fold = malloc(sizeof(*fold) * 59049);
	w = malloc(sizeof(*w) * OTH_EVALW_TOTAL * phases);
	if (!fold || !w) {
		free(fold);
		free(w);
		return GERR_NOMEM;
	}
	for (uint32_t ph = 0; ph < phases; ph++)
		evalw_expand(b + OTH_EVALW_HDR + (size_t)ph * per * 2,
			     w + (size_t)ph * OTH_EVALW_TOTAL, fold);
	free(fold);
	*ret_phases = (int)phases;
	*ret_w = w;
	return 0;
}
