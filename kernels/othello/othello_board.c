/* othello_board.c - text and binary formats of the Othello workload, the
 * minimax reference and perft. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "le.h"
#include "othello.h"

#define MAX_BAD_LISTED 10
#define WLEN_BAD 200 /* the listed bad lines, within WL_ERRLEN */

/* ---- text ---------------------------------------------------------------- */

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Expected score: the largest "MV:SC" score after ';'. */
static int parse_scores(const char *s, const char *end, int8_t *ret,
			char *err, size_t errlen)
{
	int best = OTHELLO_NO_SCORE;

	while (s < end) {
		while (s < end && (is_blank(*s) || *s == ';'))
			s++;
		if (s >= end)
			break;
		const char *colon = memchr(s, ':', (size_t)(end - s));
		const char *semi = memchr(s, ';', (size_t)(end - s));
		if (!semi)
			semi = end;
		if (!colon || colon > semi) {
			/* Free text (a comment): ignored. */
			s = semi;
			continue;
		}
		const char *q = colon + 1;
		int sign = 1, v = 0, digits = 0;
		while (q < semi && is_blank(*q))
			q++;
		if (q < semi && (*q == '+' || *q == '-'))
			sign = *q++ == '-' ? -1 : 1;
		while (q < semi && *q >= '0' && *q <= '9' && digits < 4) {
			v = v * 10 + (*q++ - '0');
			digits++;
		}
		while (q < semi && is_blank(*q))
			q++;
		if (digits == 0 || q != semi || v > 64 || v % 2) {
			gerr_printf(err, errlen, "bad score '%.*s' (want MV:+SC, an "
			       "even score in -64..64)",
			       (int)(semi - s > 20 ? 20 : semi - s), s);
			return GERR_INVAL;
		}
		v *= sign;
		if (best == OTHELLO_NO_SCORE || v > best)
			best = v;
		s = semi;
	}
	*ret = (int8_t)best;
	return 0;
}

static int parse_obf(const char *s, size_t len, struct othello_pos *ret,
		     char *err, size_t errlen)
{
	struct othello_pos p = {0, 0, 0, OTHELLO_NO_SCORE};
	size_t i = 0;
	int sq = 0;

	while (sq < 64 && i < len) {
		char c = s[i++];
		if (is_blank(c))
			continue;
		if (c == 'X' || c == 'x' || c == '*')
			p.black |= 1ull << sq;
		else if (c == 'O' || c == 'o')
			p.white |= 1ull << sq;
		else if (c != '-' && c != '.') {
			gerr_printf(err, errlen, "bad character '%c' at square %d",
			       c >= 32 && c < 127 ? c : '?', sq + 1);
			return GERR_INVAL;
		}
		sq++;
	}
	if (sq < 64) {
		gerr_printf(err, errlen, "board has %d squares, not 64", sq);
		return GERR_INVAL;
	}
	while (i < len && is_blank(s[i]))
		i++;
	if (i >= len || (s[i] != 'X' && s[i] != 'x' && s[i] != '*' &&
			 s[i] != 'O' && s[i] != 'o')) {
		gerr_printf(err, errlen, "missing the side to move (X or O) after "
		       "the 64 squares");
		return GERR_INVAL;
	}
	p.black_to_move = s[i] != 'O' && s[i] != 'o';
	i++;
	while (i < len && is_blank(s[i]))
		i++;
	if (i < len && s[i] != ';') {
		gerr_printf(err, errlen, "unexpected text after the side to move");
		return GERR_INVAL;
	}
	if (i < len && parse_scores(s + i, s + len, &p.expected, err, errlen))
		return GERR_INVAL;
	*ret = p;
	return 0;
}

static int parse_base81(const char *s, struct othello_pos *ret, char *err,
			size_t errlen)
{
	struct othello_pos p = {0, 0, 1, OTHELLO_NO_SCORE};

	for (int i = 0; i < 16; i++) {
		int v = s[i] - '!';
		if (v < 0 || v >= 81) {
			gerr_printf(err, errlen, "bad base81 character '%c' at %d",
			       s[i] >= 32 && s[i] < 127 ? s[i] : '?', i + 1);
			return GERR_INVAL;
		}
		for (int j = 0; j < 4; j++, v /= 3) {
			int sq = 4 * i + j;
			if (v % 3 == 1)
				p.black |= 1ull << sq;
			else if (v % 3 == 2)
				p.white |= 1ull << sq;
		}
	}
	*ret = p;
	return 0;
}

int othello_parse_line(const char *line, size_t len, struct othello_pos *ret,
		       char *err, size_t errlen)
{
	size_t a = 0, b = len;
	struct othello_pos p;
	int rc;

	while (a < b && is_blank(line[a]))
		a++;
	while (b > a && (is_blank(line[b - 1]) || line[b - 1] == '\n'))
		b--;
	if (a == b || line[a] == '%' || line[a] == '#')
		return 1;
	if (b - a == 16)
		rc = parse_base81(line + a, &p, err, errlen);
	else
		rc = parse_obf(line + a, b - a, &p, err, errlen);
	if (rc)
		return rc;
	if (oth_popcount(p.black | p.white) < 4) {
		gerr_printf(err, errlen, "fewer than 4 discs");
		return GERR_INVAL;
	}
	*ret = p;
	return 0;
}

void othello_format_board(const struct othello_pos *p, char *buf)
{
	for (int sq = 0; sq < 64; sq++)
		buf[sq] = p->black >> sq & 1 ? 'X' : p->white >> sq & 1 ? 'O'
									  : '-';
	buf[64] = ' ';
	buf[65] = p->black_to_move ? 'X' : 'O';
	buf[66] = ';';
	buf[67] = '\0';
}

void othello_format_move(int move, char *buf)
{
	if (move >= 0 && move < 64) {
		buf[0] = (char)('A' + move % 8);
		buf[1] = (char)('1' + move / 8);
	} else {
		buf[0] = move == OTHELLO_MOVE_PASS ? 'P' : '-';
		buf[1] = move == OTHELLO_MOVE_PASS ? 'S' : '-';
	}
	buf[2] = '\0';
}

/* ---- reference search ------------------------------------------------- */

static int minimax(uint64_t P, uint64_t O, int passed, int *ret_move)
{
	uint64_t m = oth_moves(P, O);
	int best = -1000, bm = OTHELLO_MOVE_NONE;

	if (!m) {
		if (passed) {
			*ret_move = OTHELLO_MOVE_NONE;
			return oth_final_score(P, O);
		}
		int dummy;
		*ret_move = OTHELLO_MOVE_PASS;
		return -minimax(O, P, 1, &dummy);
	}
	for (; m; m &= m - 1) {
		int sq = oth_ctz(m), dummy;
		uint64_t f = oth_flips(P, O, sq);
		int v = -minimax(O & ~f, P | f | (1ull << sq), 0, &dummy);
		if (v > best) { /* squares ascend: the first best is lowest */
			best = v;
			bm = sq;
		}
	}
	*ret_move = bm;
	return best;
}

int othello_minimax(uint64_t P, uint64_t O, int *ret_move)
{
	uint64_t m = oth_moves(P, O);
	int mv;

	if (!m && !oth_moves(O, P)) {
		*ret_move = OTHELLO_MOVE_NONE;
		return oth_final_score(P, O);
	}
	int v = minimax(P, O, 0, &mv);
	*ret_move = mv;
	return v;
}

uint64_t othello_perft(uint64_t P, uint64_t O, int depth)
{
	uint64_t m, n = 0;

	if (depth == 0)
		return 1;
	m = oth_moves(P, O);
	if (!m) {
		if (!oth_moves(O, P))
			return 1;
		return othello_perft(O, P, depth - 1);
	}
	if (depth == 1)
		return (uint64_t)oth_popcount(m);
	for (; m; m &= m - 1) {
		int sq = oth_ctz(m);
		uint64_t f = oth_flips(P, O, sq);
		n += othello_perft(O & ~f, P | f | (1ull << sq), depth - 1);
	}
	return n;
}

/* ---- input blob -------------------------------------------------------- */

int othello_input_parse(const void *text, size_t len, void **ret,
			size_t *ret_len, uint64_t *ret_count,
			int *ret_max_empties, char *err, size_t errlen)
{
	const char *s = text, *end = s + len;
	size_t cap = 1024, n = 0, nbad = 0, used = 0;
	uint64_t lineno = 0;
	uint8_t *out = malloc(OTHELLO_IN_HDR + cap * OTHELLO_IN_REC);
	char listed[WLEN_BAD] = "";
	int max_e = 0;

	if (!out)
		return GERR_NOMEM;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;
		struct othello_pos p;
		char why[96];
		int rc;

		lineno++;
		if (memchr(s, '\0', (size_t)(le - s))) {
			rc = GERR_INVAL;
			snprintf(why, sizeof(why), "NUL byte (not a text file)");
		} else {
			rc = othello_parse_line(s, (size_t)(le - s), &p, why,
						sizeof(why));
		}
		s = nl ? nl + 1 : end;
		if (rc == 1)
			continue;
		if (rc == 0 && p.black & p.white)
			rc = GERR_INVAL; /* cannot happen from text */
		if (rc) {
			if (nbad < MAX_BAD_LISTED && used < sizeof(listed)) {
				int k = snprintf(listed + used,
						 sizeof(listed) - used,
						 "%sline %" PRIu64 ": %s",
						 nbad ? "; " : "", lineno, why);
				if (k > 0)
					used += (size_t)k;
				if (used >= sizeof(listed))
					used = sizeof(listed) - 1;
			}
			nbad++;
			continue;
		}
		if (n >= OTHELLO_MAX_POSITIONS) {
			free(out);
			gerr_printf(err, errlen, "more than %llu positions",
			       (unsigned long long)OTHELLO_MAX_POSITIONS);
			return GERR_TOOBIG;
		}
		if (n == cap) {
			uint8_t *no = realloc(out, OTHELLO_IN_HDR +
						   2 * cap * OTHELLO_IN_REC);
			if (!no) {
				free(out);
				return GERR_NOMEM;
			}
			out = no;
			cap *= 2;
		}
		uint8_t *r = out + OTHELLO_IN_HDR + n * OTHELLO_IN_REC;
		le_put64(r, p.black);
		le_put64(r + 8, p.white);
		r[16] = p.black_to_move;
		r[17] = (uint8_t)p.expected;
		int e = 64 - oth_popcount(p.black | p.white);
		if (e > max_e)
			max_e = e;
		n++;
	}
	if (nbad) {
		free(out);
		if (nbad > MAX_BAD_LISTED)
			gerr_printf(err, errlen, "%zu bad lines: %s; and %zu more",
			       nbad, listed, nbad - MAX_BAD_LISTED);
		else
			gerr_printf(err, errlen, "%zu bad line%s: %s", nbad,
			       nbad > 1 ? "s" : "", listed);
		return GERR_INVAL;
	}
	if (n == 0) {
		free(out);
		gerr_printf(err, errlen, "no positions in the file");
		return GERR_INVAL;
	}
	le_put_head(out, "OTHI", OTHELLO_FMT_VERSION);
	le_put64(out + 8, n);
	*ret = out;
	*ret_len = OTHELLO_IN_HDR + n * OTHELLO_IN_REC;
	*ret_count = n;
	*ret_max_empties = max_e;
	return 0;
}

int othello_input_count(const void *buf, size_t len, uint64_t *ret_count,
			char *err, size_t errlen)
{
	const uint8_t *b = buf;
	uint64_t n;

	if (len < OTHELLO_IN_HDR || memcmp(b, "OTHI", 4) != 0 ||
	    le_get32(b + 4) != OTHELLO_FMT_VERSION) {
		gerr_printf(err, errlen, "othello: not an input blob");
		return GERR_CORRUPT;
	}
	n = le_get64(b + 8);
	if (n < 1 || n > OTHELLO_MAX_POSITIONS ||
	    len != OTHELLO_IN_HDR + n * OTHELLO_IN_REC) {
		gerr_printf(err, errlen, "othello: input blob length %zu does not "
		       "match its count %" PRIu64, len, n);
		return GERR_CORRUPT;
	}
	*ret_count = n;
	return 0;
}

int othello_input_read(const void *buf, size_t len, uint64_t begin,
		       uint64_t count, struct othello_pos **ret, char *err,
		       size_t errlen)
{
	const uint8_t *b = buf;
	uint64_t n;
	int rc = othello_input_count(buf, len, &n, err, errlen);

	if (rc)
		return rc;
	if (count == 0 && begin == 0)
		count = n;
	if (begin >= n || count > n - begin || count == 0) {
		gerr_printf(err, errlen, "othello: positions [%" PRIu64 ", +%" PRIu64
		       ") outside the input's %" PRIu64, begin, count, n);
		return GERR_INVAL;
	}
	struct othello_pos *p = malloc(count * sizeof(*p));
	if (!p)
		return GERR_NOMEM;
	for (uint64_t i = 0; i < count; i++) {
		const uint8_t *r = b + OTHELLO_IN_HDR + (begin + i) * OTHELLO_IN_REC;
		int8_t ex = (int8_t)r[17];
		p[i].black = le_get64(r);
		p[i].white = le_get64(r + 8);
		p[i].black_to_move = r[16];
		p[i].expected = ex;
		if ((p[i].black & p[i].white) || r[16] > 1 ||
		    (ex != OTHELLO_NO_SCORE &&
		     (ex < -64 || ex > 64 || ex % 2))) {
			free(p);
			gerr_printf(err, errlen, "othello: input record %" PRIu64
			       " is malformed", begin + i);
			return GERR_CORRUPT;
		}
	}
	*ret = p;
	return 0;
}

uint64_t othello_digest(const struct othello_pos *p, size_t n)
{
	uint64_t h = 0x6f7468656c6c6f00ull ^ n;

	for (size_t i = 0; i < n; i++) {
		h = mix64(h ^ p[i].black) + MIX_GOLDEN;
		h = mix64(h ^ p[i].white) + MIX_GOLDEN;
		h = mix64(h ^ p[i].black_to_move ^
			      (uint64_t)(uint8_t)p[i].expected << 8) +
		    MIX_GOLDEN;
	}
	return h;
}

/* ---- result / checkpoint -------------------------------------------------- */

int othello_res_init(struct othello_res *r, uint64_t begin, uint64_t count,
		     int with_pos)
{
	memset(r, 0, sizeof(*r));
	r->begin = begin;
	r->count = count;
	r->with_pos = with_pos;
	r->score = calloc(count ? count : 1, 1);
	r->move = calloc(count ? count : 1, 1);
	if (with_pos)
		r->pos = calloc(count ? count : 1, sizeof(*r->pos));
	if (!r->score || !r->move || (with_pos && !r->pos)) {
		othello_res_clear(r);
		return GERR_NOMEM;
	}
	return 0;
}

void othello_res_clear(struct othello_res *r)
{
	if (!r)
		return;
	free(r->score);
	free(r->move);
	free(r->pos);
	r->score = NULL;
	r->move = NULL;
	r->pos = NULL;
}

int othello_res_encode(const struct othello_res *r, int ckpt, void **ret,
		       size_t *ret_len)
{
	size_t len;
	uint8_t *b, *q;

	if (r->done > r->count || (!ckpt && r->done != r->count))
		return GERR_INVAL;
	len = OTHELLO_RES_HDR + r->done * 2 +
	      (r->with_pos ? r->done * OTHELLO_RES_POS : 0);
	b = calloc(1, len);
	if (!b)
		return GERR_NOMEM;
	le_put_head(b, ckpt ? "OTHC" : "OTHR", OTHELLO_FMT_VERSION);
	le_put64(b + 8, r->begin);
	le_put64(b + 16, r->count);
	le_put64(b + 24, r->done);
	le_put64(b + 32, r->nodes);
	le_put64(b + 40, r->usec);
	le_put32(b + 48, r->with_pos ? 1u : 0u);
	q = b + OTHELLO_RES_HDR;
	for (uint64_t i = 0; i < r->done; i++) {
		*q++ = (uint8_t)(r->score[i] / 2 + 32);
		*q++ = r->move[i];
	}
	for (uint64_t i = 0; r->with_pos && i < r->done; i++) {
		le_put64(q, r->pos[i].black);
		le_put64(q + 8, r->pos[i].white);
		q[16] = r->pos[i].black_to_move;
		q[17] = (uint8_t)r->pos[i].expected;
		q += OTHELLO_RES_POS;
	}
	*ret = b;
	*ret_len = len;
	return 0;
}

/* The header of a result or checkpoint, checked against len: *ret has
 * its fields and no arrays. */
static int res_header(const uint8_t *b, size_t len, int ckpt,
		      struct othello_res *ret, char *err, size_t errlen)
{
	uint64_t begin, count, done;
	uint32_t flags;

	if (len < OTHELLO_RES_HDR ||
	    memcmp(b, ckpt ? "OTHC" : "OTHR", 4) != 0 ||
	    le_get32(b + 4) != OTHELLO_FMT_VERSION) {
		gerr_printf(err, errlen, "othello: not an Othello %s (magic or "
		       "version)", ckpt ? "checkpoint" : "result");
		return GERR_CORRUPT;
	}
	begin = le_get64(b + 8);
	count = le_get64(b + 16);
	done = le_get64(b + 24);
	flags = le_get32(b + 48);
	if (count < 1 || count > OTHELLO_MAX_POSITIONS ||
	    begin > OTHELLO_MAX_POSITIONS * 1000 || done > count ||
	    (!ckpt && done != count) || flags > 1 || le_get32(b + 52) != 0) {
		gerr_printf(err, errlen, "othello: bad header (begin %" PRIu64
		       " count %" PRIu64 " done %" PRIu64 " flags %u)", begin,
		       count, done, flags);
		return GERR_CORRUPT;
	}
	if (len != OTHELLO_RES_HDR + done * 2 +
			   (flags ? done * OTHELLO_RES_POS : 0)) {
		gerr_printf(err, errlen, "othello: length %zu does not match %" PRIu64
		       " positions", len, done);
		return GERR_CORRUPT;
	}
	memset(ret, 0, sizeof(*ret));
	ret->begin = begin;
	ret->count = count;
	ret->done = done;
	ret->with_pos = (int)flags;
	ret->nodes = le_get64(b + 32);
	ret->usec = le_get64(b + 40);
	return 0;
}

int othello_res_hist(const void *buf, size_t len, struct othello_res *ret,
		     uint64_t ret_hist[65], char *err, size_t errlen)
{
	const uint8_t *q = (const uint8_t *)buf + OTHELLO_RES_HDR;
	struct othello_res r;
	uint64_t hist[65] = {0};
	int rc = res_header(buf, len, 0, &r, err, errlen);

	if (rc)
		return rc;
	for (uint64_t i = 0; i < r.done; i++, q += 2) {
		if (q[0] > 64 || q[1] > OTHELLO_MOVE_NONE) {
			gerr_printf(err, errlen, "othello: position %" PRIu64
			       " has score byte %u move %u", r.begin + i, q[0],
			       q[1]);
			return GERR_CORRUPT;
		}
		hist[q[0]]++;
	}
	*ret = r;
	memcpy(ret_hist, hist, sizeof(hist));
	return 0;
}

void othello_res_at(const void *buf, uint64_t i, int *ret_score,
		    int *ret_move)
{
	const uint8_t *q = (const uint8_t *)buf + OTHELLO_RES_HDR + 2 * i;

	*ret_score = (int)q[0] * 2 - 64;
	*ret_move = q[1];
}

int othello_res_decode(const void *buf, size_t len, int ckpt,
		       struct othello_res *ret, char *err, size_t errlen)
{
	const uint8_t *b = buf, *q;
	uint64_t begin, count, done;
	uint32_t flags;
	struct othello_res r, h;
	int rc = res_header(b, len, ckpt, &h, err, errlen);

	if (rc)
		return rc;
	begin = h.begin;
	count = h.count;
	done = h.done;
	flags = (uint32_t)h.with_pos;
	if (othello_res_init(&r, begin, count, (int)flags))
		return GERR_NOMEM;
	r.done = done;
	r.nodes = h.nodes;
	r.usec = h.usec;
	q = b + OTHELLO_RES_HDR;
	for (uint64_t i = 0; i < done; i++, q += 2) {
		if (q[0] > 64 || q[1] > OTHELLO_MOVE_NONE) {
			othello_res_clear(&r);
			gerr_printf(err, errlen, "othello: position %" PRIu64
			       " has score byte %u move %u", begin + i, q[0],
			       q[1]);
			return GERR_CORRUPT;
		}
		r.score[i] = (int8_t)((int)q[0] * 2 - 64);
		r.move[i] = q[1];
	}
	for (uint64_t i = 0; flags && i < done; i++, q += OTHELLO_RES_POS) {
		r.pos[i].black = le_get64(q);
		r.pos[i].white = le_get64(q + 8);
		r.pos[i].black_to_move = q[16];
		r.pos[i].expected = (int8_t)q[17];
		if ((r.pos[i].black & r.pos[i].white) || q[16] > 1 ||
		    (r.pos[i].expected != OTHELLO_NO_SCORE &&
		     (r.pos[i].expected < -64 || r.pos[i].expected > 64 ||
		      r.pos[i].expected % 2))) {
			othello_res_clear(&r);
			gerr_printf(err, errlen, "othello: position %" PRIu64
			       " is malformed", begin + i);
			return GERR_CORRUPT;
		}
	}
	*ret = r;
	return 0;
}
