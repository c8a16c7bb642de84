/* officers_render.c - what a finished or running Officers job shows: the
 * text (from the answer), the value
 * histogram as SVG, and `gpuctl result JOB --values FROM:TO` read from the
 * stored result blobs that the parts name.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "officers.h"
#include "officers_wl.h"

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

int officers_wl_render_files(void *ctx, const json_t *params,
			     const json_t *answer,
			     const struct wl_parts *parts, const char *dir,
			     char *err, size_t errlen)
{
	const json_t *counts = json_object_get(answer, "counts");
	char path[4096], tmp[4200];
	double peak = 1;
	size_t nv, i;
	const json_t *e;
	FILE *f;

	(void)ctx;
	(void)params;
	(void)parts;
	if (!json_is_array(counts) || json_array_size(counts) == 0) {
		gerr_printf(err, errlen, "officers: no answer to plot");
		return GERR_INVAL;
	}
	nv = json_array_size(counts);
	json_array_foreach(counts, i, e)
		if ((double)json_integer_value(e) > peak)
			peak = (double)json_integer_value(e);
	snprintf(path, sizeof(path), "%s/officers-values.svg", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		gerr_printf(err, errlen, "officers: cannot write %s", tmp);
		return GERR_IO;
	}
	const int W = 900, H = 400, L = 60, B = 40, T = 30;
	double bw = (double)(W - L - 10) / (double)nv;
	double top = ceil(log10(peak));
	if (top < 1)
		top = 1;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n",
		W, H);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	fprintf(f, "<text x=\"%d\" y=\"18\" font-size=\"14\">Officers: value "
		"frequencies in G(0..%" PRIu64 "-1) (red: rare values)</text>\n",
		L, officers_wl_answer_u64(answer, "n"));
	for (int d = 0; d <= (int)top; d++) {
		double y = H - B - (H - B - T) * d / top;
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
			"text-anchor=\"end\">1e%d</text>\n", L, W - 10, y, y,
			L - 4, y + 4, d);
	}
	json_array_foreach(counts, i, e) {
		double c = (double)json_integer_value(e);
		if (c <= 0)
			continue;
		double h = (H - B - T) * (log10(c) + 0.05) / top;
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
			"height=\"%.2f\" fill=\"%s\"><title>%zu: %.0f</title>"
			"</rect>\n", L + (double)i * bw, H - B - h,
			bw * 0.9 > 0.5 ? bw * 0.9 : 0.5, h,
			officers_is_rare((unsigned)i) ? "#c0392b" : "#2c6fbb",
			i, c);
	}
	for (i = 0; i < nv; i += 32)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
			"%zu</text>\n", L + ((double)i + 0.45) * bw,
			H - B + 14, i);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">value "
		"(count on a log scale)</text>\n", (L + W) / 2, H - 8);
	fprintf(f, "</svg>\n");
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		remove(tmp);
		gerr_printf(err, errlen, "officers: cannot write %s", path);
		return GERR_IO;
	}
	return 0;
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
		gerr_printf(err, errlen, "officers: --values wants FROM:TO with "
			    "FROM < TO");
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
