/* officers_render.c - what a finished or running Officers job shows: the
 * text (from the answer), the plot of value frequencies (plot.h), and
 * `gpuctl result JOB --values FROM:TO` read from the stored result blobs
 * that the parts name.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "officers.h"
#include "officers_wl.h"
#include "plot.h"

#define COLOR_COMMON "#2c6fbb"
#define COLOR_RARE "#c0392b"

#define PROTO_MAX_BIN_VALUES (128ull << 20) /* 256 MiB of uint16 */
#define EXPORT_MAX (PROTO_MAX_BIN_VALUES)

char *officers_wl_render_text(void *ctx, const json_t *params,
			      const json_t *answer,
			      const struct wl_parts *parts)
{
	uint64_t to = 0;
	char err[WL_ERRLEN];
	const json_t *rares, *zeros, *counts, *e, *mx;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f;

	(void)ctx;
	if (officers_wl_to(params, &to, err, sizeof(err)) || !answer)
		return strdup("officers: no answer yet\n");
	rares = json_object_get(answer, "rares");
	zeros = json_object_get(answer, "zeros");
	counts = json_object_get(answer, "counts");
	mx = json_object_get(answer, "max");
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "officers: G(0..%" PRIu64 "-1) exact (%" PRIu64
		" asked), %" PRIu64 " leases\n",
		officers_wl_answer_u64(answer, "n"), to,
		officers_wl_answer_u64(answer, "leases"));
	fprintf(f, "checksum (FNV-1a 64 of the values as uint16 LE): %s\n",
		json_string_value(json_object_get(answer, "fnv")));
	fprintf(f, "largest value: %" PRId64 " (first at %" PRId64 ")\n",
		(int64_t)json_integer_value(json_object_get(mx, "value")),
		(int64_t)json_integer_value(json_object_get(mx, "first")));
	fprintf(f, "rare positions: %zu", json_array_size(rares));
	if (json_array_size(rares)) {
		e = json_array_get(rares, json_array_size(rares) - 1);
		fprintf(f, ", the last G(%" PRId64 ") = %" PRId64,
			(int64_t)json_integer_value(json_array_get(e, 0)),
			(int64_t)json_integer_value(json_array_get(e, 1)));
	}
	fprintf(f, "\nzero positions:");
	json_array_foreach(zeros, i, e)
		fprintf(f, " %" PRId64, (int64_t)json_integer_value(e));
	fprintf(f, "\nvalue counts (value: count):\n");
	json_array_foreach(counts, i, e)
		if (json_integer_value(e))
			fprintf(f, "%4zu: %" PRId64 "%s", i,
				(int64_t)json_integer_value(e),
				i % 6 == 5 ? "\n" : "   ");
	fprintf(f, "\n");
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int officers_wl_render_plot(void *ctx, const json_t *params,
			    const json_t *answer, const struct wl_parts *parts,
			    const struct wl_blob_reader *rd, char **ret_svg,
			    size_t *ret_len, char *err, size_t errlen)
{
	const json_t *counts = json_object_get(answer, "counts");
	char title[160], a[40], tip[120];
	double peak = 1;
	size_t nv, i;
	const json_t *e;
	struct plot *p;

	(void)ctx, (void)params, (void)parts, (void)rd;
	if (!json_is_array(counts) || json_array_size(counts) == 0) {
		gerr_printf(err, errlen, "officers: no answer to plot");
		return GERR_NOTFOUND;
	}
	nv = json_array_size(counts);
	json_array_foreach(counts, i, e)
		if ((double)json_integer_value(e) > peak)
			peak = (double)json_integer_value(e);
	snprintf(title, sizeof(title), "Officers: value frequencies in "
		 "G(0..n-1), n = %s", plot_num((double)officers_wl_answer_u64(
			 answer, "n"), a, sizeof(a)));
	p = plot_new(title, 900, 440);
	if (!p)
		return GERR_NOMEM;
	plot_axes(p, &(struct plot_axis){-0.5, (double)nv - 0.5, 0,
					  "Grundy value", 1},
		  &(struct plot_axis){0.5, pow(10, ceil(log10(peak * 2))), 1,
				      "positions with the value", 0});
	json_array_foreach(counts, i, e) {
		double c = (double)json_integer_value(e);
		if (c <= 0)
			continue;
		snprintf(tip, sizeof(tip), "value %zu: %s positions", i,
			 plot_num(c, a, sizeof(a)));
		plot_bar(p, (double)i - 0.45, (double)i + 0.45, c,
			 officers_is_rare((unsigned)i) ? COLOR_RARE : COLOR_COMMON,
			 officers_is_rare((unsigned)i) ? "rare" : "common", tip);
	}
	plot_legend(p, COLOR_COMMON, "common values");
	plot_legend(p, COLOR_RARE, "rare values");
	return plot_finish(p, ret_svg, ret_len);
}

static int ofw_parse_range(const json_t *args, uint64_t *a, uint64_t *b)
{
	const char *s = json_string_value(json_object_get(args, "range"));
	char *end;

	if (!s || *s < '0' || *s > '9')
		return GERR_INVAL;
	*a = strtoull(s, &end, 10);
	if (*end != ':' || end[1] < '0' || end[1] > '9')
		return GERR_INVAL;
	*b = strtoull(end + 1, &end, 10);
	return *end ? GERR_INVAL : 0;
}

/* Copy the values of [a, b) that lease k holds into out (its stored
 * result, read through rd); *covered counts them. */
static int ofw_export_part(const json_t *params, const struct wl_parts *parts,
			   uint64_t k, uint64_t a, uint64_t b,
			   const struct wl_blob_reader *rd, uint8_t *out,
			   uint64_t *covered, char *err, size_t errlen)
{
	struct officers_result r;
	struct officers_spec sp;
	struct wl_part p;
	void *bytes = NULL;
	size_t blen = 0;
	int rc = parts->get(parts->opaque, k, &p);

	if (rc == 0 && officers_wl_spec(params, p.spec, &sp, err, errlen))
		rc = GERR_CORRUPT;
	if (rc) {
		gerr_printf(err, errlen, "officers: lease %" PRIu64 " of the "
			    "job is unreadable: %s", k, gerr_str(rc));
		return rc;
	}
	if (sp.check || sp.to <= a || sp.from >= b)
		return 0;
	rc = p.result_hash ? rd->fetch(rd->opaque, p.result_hash, &bytes, &blen)
			   : GERR_CORRUPT;
	if (rc == 0)
		rc = officers_result_parse(bytes, blen, &r, err, errlen);
	if (rc == 0 && (r.from != sp.from || r.to != sp.to))
		rc = GERR_CORRUPT;
	if (rc == 0) {
		uint64_t x = sp.from > a ? sp.from : a;
		for (; x < sp.to && x < b; x++, (*covered)++) {
			unsigned v = officers_result_get(&r, x);
			out[2 * (x - a)] = (uint8_t)v;
			out[2 * (x - a) + 1] = (uint8_t)(v >> 8);
		}
	} else {
		gerr_printf(err, errlen, "officers: cannot read the values [%"
			    PRIu64 ", %" PRIu64 "): %s", sp.from, sp.to,
			    gerr_str(rc));
	}
	free(bytes);
	return rc;
}

int officers_wl_export(void *ctx, const json_t *params, const json_t *answer,
		       const struct wl_parts *parts, const char *what,
		       const json_t *args, const struct wl_blob_reader *rd,
		       void **ret, size_t *ret_len, char *err, size_t errlen)
{
	uint64_t a, b, covered = 0, n = officers_wl_answer_u64(answer, "n");
	uint8_t *out;
	int rc = 0;

	(void)ctx;
	if (!what || strcmp(what, "values") != 0) {
		gerr_printf(err, errlen, "officers: exports 'values' only");
		return GERR_INVAL;
	}
	if (ofw_parse_range(args, &a, &b) || a >= b) {
		gerr_printf(err, errlen, "officers: export values wants --range "
			    "FROM:TO (result: --values FROM:TO) with FROM < TO");
		return GERR_INVAL;
	}
	if (b > n) {
		gerr_printf(err, errlen, "officers: only G(0..%" PRIu64 "-1) "
			    "are known", n);
		return GERR_INVAL;
	}
	if (b - a > EXPORT_MAX) {
		gerr_printf(err, errlen, "officers: at most %llu values per "
			    "export", (unsigned long long)EXPORT_MAX);
		return GERR_TOOBIG;
	}
	if (!rd || !rd->fetch) {
		gerr_printf(err, errlen, "officers: no blob access");
		return GERR_UNSUPPORTED;
	}
	out = malloc(2 * (size_t)(b - a));
	if (!out)
		return GERR_NOMEM;
	/* Every part is looked at: an older gpud's check parts sit between
	 * the ranges. */
	for (uint64_t k = 0; parts && k < parts->n && rc == 0; k++)
		rc = ofw_export_part(params, parts, k, a, b, rd, out, &covered,
				     err, errlen);
	if (rc == 0 && covered != b - a) {
		gerr_printf(err, errlen, "officers: the stored ranges hold %"
			    PRIu64 " of the values [%" PRIu64 ", %" PRIu64 ")",
			    covered, a, b);
		rc = GERR_CORRUPT;
	}
	if (rc) {
		free(out);
		return rc;
	}
	*ret = out;
	*ret_len = 2 * (size_t)(b - a);
	return 0;
}
