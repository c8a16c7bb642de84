/* officers_fmt.c - the extension result (= the next lease's state): encode,
 * parse with every bound checked, rebuild a sequence from it, and the state
 * digest that chains leases together (officers.h has the layout). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "gerr.h"
#include "le.h"
#include "officers.h"

#define MASK_WORDS (OFFICERS_VMAX / 64)

static unsigned value_at(const uint16_t *p, uint64_t i)
{
	const uint8_t *b = (const uint8_t *)p + 2 * i;

	return (unsigned)b[0] | (unsigned)b[1] << 8;
}

/* n values as uint16 LE, and back (whole arrays: one copy on an LE host,
 * on threads for a result's tens of millions) */
static void put_u16s(uint8_t *p, const uint16_t *v, uint64_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	big_copy(p, v, 2 * (size_t)n);
#else
	for (uint64_t i = 0; i < n; i++)
		le_put16(p + 2 * i, v[i]);
#endif
}

static void get_u16s(uint16_t *v, const uint16_t *le, uint64_t from,
		     uint64_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	big_copy(v, (const uint8_t *)le + 2 * from, 2 * (size_t)n);
#else
	for (uint64_t i = 0; i < n; i++)
		v[i] = (uint16_t)value_at(le, from + i);
#endif
}

static uint64_t vbase_of(uint64_t from)
{
	return from - (from < OFFICERS_TAIL ? from : OFFICERS_TAIL);
}

int officers_result_encode(const struct officers_seq *s, uint64_t from,
			   uint64_t fnv_in, uint32_t nrare_in, void **ret,
			   size_t *ret_len)
{
	uint64_t to = s->n, vbase = vbase_of(from);
	uint32_t np = s->nprefix;
	size_t len;
	uint8_t *b, *p;

	if (from >= to || vbase < s->base || nrare_in > s->nrare)
		return GERR_INVAL;
	len = OFFICERS_HDR_LEN + 12 * (size_t)s->nrare + 2 * (size_t)np +
	      2 * (size_t)(to - vbase);
	b = big_alloc(len);
	if (!b)
		return GERR_NOMEM;
	le_put_head(b, "OFFR", OFFICERS_FMT_VERSION);
	le_put64(b + 8, from);
	le_put64(b + 16, to);
	le_put64(b + 24, vbase);
	le_put64(b + 32, fnv_in);
	le_put64(b + 40, s->st.fnv);
	le_put32(b + 48, np);
	le_put32(b + 52, s->nrare);
	le_put32(b + 56, nrare_in);
	le_put32(b + 60, 0);
	for (unsigned v = 0; v < OFFICERS_VMAX; v++) {
		le_put64(b + 64 + 8 * v, s->st.count[v]);
		le_put64(b + 4160 + 8 * v, s->st.first[v]);
	}
	p = b + OFFICERS_HDR_LEN;
	for (uint32_t i = 0; i < s->nrare; i++, p += 12) {
		le_put64(p, s->rare[i].pos);
		le_put32(p + 8, s->rare[i].val);
	}
	put_u16s(p, s->prefix, np);
	p += 2 * (size_t)np;
	put_u16s(p, s->vals + (vbase - s->base), to - vbase);
	*ret = b;
	*ret_len = len;
	return 0;
}

/* Are all n LE values at p below OFFICERS_VMAX (512)? Four at a time: a
 * value >= 512 has a bit of 0xfe in its high byte. Every parse of a
 * result (worker and gpud, per lease) runs this over tens of millions of
 * values. */
static int values_in_range(const uint16_t *p, uint64_t n)
{
	const uint8_t *b = (const uint8_t *)p;
	uint64_t acc = 0, i = 0;

	for (; i + 4 <= n; i += 4)
		acc |= le_get64(b + 2 * i); /* high bytes: 1, 3, 5, 7 */
	for (; i < n; i++)
		acc |= (uint64_t)b[2 * i + 1] << 8;
	return (acc & 0xfe00fe00fe00fe00ull) == 0;
}

int officers_result_parse(const void *buf, size_t len,
			  struct officers_result *r, char *err, size_t errlen)
{
	const uint8_t *b = buf;
	uint64_t need, prev = 0;

	memset(r, 0, sizeof(*r));
	if (!buf || len < OFFICERS_HDR_LEN || memcmp(b, "OFFR", 4) != 0) {
		gerr_printf(err, errlen, "officers: result too short or bad magic");
		return GERR_CORRUPT;
	}
	if (le_get32(b + 4) != OFFICERS_FMT_VERSION) {
		gerr_printf(err, errlen, "officers: result version %u, want %u",
		       le_get32(b + 4), OFFICERS_FMT_VERSION);
		return GERR_CORRUPT;
	}
	r->buf = b;
	r->from = le_get64(b + 8);
	r->to = le_get64(b + 16);
	r->vbase = le_get64(b + 24);
	r->fnv_in = le_get64(b + 32);
	r->fnv_out = le_get64(b + 40);
	r->nprefix = le_get32(b + 48);
	r->nrare = le_get32(b + 52);
	r->nrare_in = le_get32(b + 56);
	if (r->from >= r->to || r->to > OFFICERS_MAX_N ||
	    r->vbase != vbase_of(r->from) ||
	    r->nprefix != (r->to < OFFICERS_PREFIX ? r->to : OFFICERS_PREFIX) ||
	    r->nrare > OFFICERS_MAX_RARE || r->nrare_in > r->nrare ||
	    le_get32(b + 60) != 0) {
		gerr_printf(err, errlen, "officers: result header out of bounds");
		return GERR_CORRUPT;
	}
	need = OFFICERS_HDR_LEN + 12ull * r->nrare + 2ull * r->nprefix +
	       2ull * (r->to - r->vbase);
	if (need != len) {
		gerr_printf(err, errlen, "officers: result is %zu bytes, its header "
		       "says %llu", len, (unsigned long long)need);
		return GERR_CORRUPT;
	}
	r->count_le = (const uint64_t *)(b + 64);
	r->first_le = (const uint64_t *)(b + 4160);
	r->rare_le = b + OFFICERS_HDR_LEN;
	r->prefix = (const uint16_t *)(r->rare_le + 12 * (size_t)r->nrare);
	r->vals = r->prefix + r->nprefix;
	for (uint32_t i = 0; i < r->nrare; i++) {
		uint64_t pos = le_get64(r->rare_le + 12 * (size_t)i);
		uint32_t val = le_get32(r->rare_le + 12 * (size_t)i + 8);
		if ((i > 0 && pos <= prev) || pos >= r->to ||
		    val >= OFFICERS_VMAX || !officers_is_rare(val) ||
		    (i < r->nrare_in) != (pos < r->from)) {
			gerr_printf(err, errlen, "officers: bad rare entry %u", i);
			return GERR_CORRUPT;
		}
		prev = pos;
	}
	for (uint32_t i = 0; i < r->nprefix; i++)
		if (value_at(r->prefix, i) >= OFFICERS_VMAX) {
			gerr_printf(err, errlen, "officers: prefix value out of "
			       "range");
			return GERR_CORRUPT;
		}
	if (!values_in_range(r->vals, r->to - r->vbase)) {
		for (uint64_t i = 0;; i++)
			if (value_at(r->vals, i) >= OFFICERS_VMAX) {
				gerr_printf(err, errlen, "officers: value out "
					    "of range at %llu",
					    (unsigned long long)(r->vbase + i));
				return GERR_CORRUPT;
			}
	}
	for (unsigned v = 0; v < OFFICERS_VMAX; v++) {
		uint64_t c = le_get64(b + 64 + 8 * v), f = le_get64(b + 4160 + 8 * v);
		if ((c == 0) != (f == OFFICERS_NONE) || (c && f >= r->to) ||
		    c > r->to) {
			gerr_printf(err, errlen, "officers: bad statistics for "
			       "value %u", v);
			return GERR_CORRUPT;
		}
	}
	return 0;
}

unsigned officers_result_get(const struct officers_result *r, uint64_t i)
{
	if (i >= r->vbase)
		return value_at(r->vals, i - r->vbase);
	return value_at(r->prefix, i);
}

int officers_seq_from_result(struct officers_seq *s,
			     const struct officers_result *r, uint64_t keep_from,
			     uint64_t cap_to)
{
	/* never less than the history a run needs before its frontier */
	uint64_t base = keep_from < r->vbase ? r->vbase : keep_from;
	uint64_t cap, off;
	int rc;

	if (base > vbase_of(r->to))
		base = vbase_of(r->to);
	cap = (cap_to > r->to ? cap_to : r->to) - base;
	off = base - r->vbase;
	rc = officers_seq_init(s, cap);
	if (rc)
		return rc;
	s->base = base;
	s->n = r->to;
	s->nprefix = r->nprefix;
	get_u16s(s->prefix, r->prefix, 0, r->nprefix);
	get_u16s(s->vals, r->vals, off, r->to - base);
	s->nrare = r->nrare;
	for (uint32_t i = 0; i < r->nrare; i++) {
		s->rare[i].pos = le_get64(r->rare_le + 12 * (size_t)i);
		s->rare[i].val = le_get32(r->rare_le + 12 * (size_t)i + 8);
	}
	s->st.fnv = r->fnv_out;
	for (unsigned v = 0; v < OFFICERS_VMAX; v++) {
		s->st.count[v] = le_get64(r->buf + 64 + 8 * v);
		s->st.first[v] = le_get64(r->buf + 4160 + 8 * v);
	}
	return 0;
}

/* ---- the digest ---------------------------------------------------------- */

static uint64_t fnv64(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		h = (h ^ ((v >> (8 * i)) & 0xff)) * OFFICERS_FNV_PRIME;
	return h;
}

static uint64_t fnv16(uint64_t h, unsigned v)
{
	h = (h ^ (v & 0xff)) * OFFICERS_FNV_PRIME;
	return (h ^ (v >> 8)) * OFFICERS_FNV_PRIME;
}

/* The digest's definition, over accessors. */
struct dview {
	uint64_t n, fnv;
	const uint64_t *count, *first;
	uint32_t nrare;
	const struct officers_seq *s;     /* one of s / r */
	const struct officers_result *r;
};

static unsigned dv_get(const struct dview *d, uint64_t i)
{
	return d->s ? officers_seq_get(d->s, i) : officers_result_get(d->r, i);
}

static uint64_t digest(const struct dview *d)
{
	uint64_t h = OFFICERS_FNV_BASIS, np, t0;

	h = fnv64(h, d->n);
	h = fnv64(h, d->fnv);
	for (unsigned v = 0; v < OFFICERS_VMAX; v++) {
		h = fnv64(h, d->count[v]);
		h = fnv64(h, d->first[v]);
	}
	h = fnv64(h, d->nrare);
	for (uint32_t i = 0; i < d->nrare; i++) {
		uint64_t pos = d->s ? d->s->rare[i].pos
				    : le_get64(d->r->rare_le + 12 * (size_t)i);
		uint32_t val = d->s ? d->s->rare[i].val
				    : le_get32(d->r->rare_le + 12 * (size_t)i + 8);
		h = fnv64(h, pos);
		h = fnv64(h, val);
	}
	np = d->n < OFFICERS_PREFIX ? d->n : OFFICERS_PREFIX;
	for (uint64_t i = 0; i < np; i++)
		h = fnv16(h, dv_get(d, i));
	t0 = d->n - (d->n < OFFICERS_TAIL ? d->n : OFFICERS_TAIL);
	for (uint64_t i = t0; i < d->n; i++)
		h = fnv16(h, dv_get(d, i));
	return h;
}

uint64_t officers_seq_digest(const struct officers_seq *s)
{
	struct dview d = {s->n, s->st.fnv, s->st.count, s->st.first, s->nrare,
			  s, NULL};

	return digest(&d);
}

uint64_t officers_result_digest(const struct officers_result *r, int side)
{
	uint64_t *count = malloc(2 * OFFICERS_VMAX * sizeof(uint64_t));
	uint64_t *first, h;
	struct dview d;

	if (!count)
		return 0;
	first = count + OFFICERS_VMAX;
	for (unsigned v = 0; v < OFFICERS_VMAX; v++) {
		count[v] = le_get64(r->buf + 64 + 8 * v);
		first[v] = le_get64(r->buf + 4160 + 8 * v);
	}
	if (side == 0) {
		for (uint64_t i = r->from; i < r->to; i++)
			count[value_at(r->vals, i - r->vbase)]--;
		for (unsigned v = 0; v < OFFICERS_VMAX; v++)
			if (first[v] != OFFICERS_NONE && first[v] >= r->from)
				first[v] = OFFICERS_NONE;
	}
	d.n = side ? r->to : r->from;
	d.fnv = side ? r->fnv_out : r->fnv_in;
	d.count = count;
	d.first = first;
	d.nrare = side ? r->nrare : r->nrare_in;
	d.s = NULL;
	d.r = r;
	h = digest(&d);
	free(count);
	return h;
}

uint64_t officers_empty_digest(void)
{
	uint64_t *count = calloc(2 * OFFICERS_VMAX, sizeof(uint64_t));
	struct dview d;
	uint64_t h;

	if (!count)
		return 0;
	for (unsigned v = 0; v < OFFICERS_VMAX; v++)
		count[OFFICERS_VMAX + v] = OFFICERS_NONE;
	memset(&d, 0, sizeof(d));
	d.fnv = OFFICERS_FNV_BASIS;
	d.count = count;
	d.first = count + OFFICERS_VMAX;
	h = digest(&d);
	free(count);
	return h;
}
