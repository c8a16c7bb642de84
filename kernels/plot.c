/* plot.c - the SVG chart writer (plot.h). Marks go into a memory stream as
 * they come; the frame (title, grid, ticks, axes, labels) and the legend
 * are written around them at plot_finish. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "plot.h"

/* Margins around the plot area, in user units: room for the tick numbers
 * and the rotated y label on the left, the x label below, the title above. */
#define PLOT_LEFT 86
#define PLOT_RIGHT 24
#define PLOT_TOP 44
#define PLOT_BOTTOM 56
#define PLOT_MAX_TICKS 12

struct plot_scale {
	double lo, hi; /* in axis units: log10 of the value on a log axis */
	int log, integer;
	char *label;
};

struct plot {
	int w, h;
	char *title;
	struct plot_scale x, y;
	int have_axes, failed;
	int legends;
	FILE *marks, *legend;
	char *marks_buf, *legend_buf;
	size_t marks_len, legend_len;
};

/* ---- numbers ---- */

static const char *const sup_digit[10] = {
	"\u2070", "\u00b9", "\u00b2", "\u00b3", "\u2074",
	"\u2075", "\u2076", "\u2077", "\u2078", "\u2079",
};

char *plot_int(uint64_t v, char *buf, size_t len)
{
	char tmp[32];
	int k = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	size_t o = 0;

	for (int i = 0; i < k && o + 2 < len; i++) {
		if (i > 0 && (k - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	if (len)
		buf[o] = '\0';
	return buf;
}

/* "2.50" -> "2.5", "10.0" -> "10": a tick reads 2.5 M, not 2.50 M. */
static void trim_zeros(char *s)
{
	char *dot = strchr(s, '.'), *end;

	if (!dot)
		return;
	end = dot + strlen(dot);
	while (end > dot + 1 && end[-1] == '0')
		end--;
	if (end == dot + 1)
		end = dot;
	memmove(end, dot + strlen(dot), 1);
}

char *plot_num(double v, char *buf, size_t len)
{
	static const char *const si[] = {"k", "M", "G", "T", "P", "E"};
	const char *sign = v < 0 ? "-" : "";
	double a = fabs(v);

	if (!len)
		return buf;
	if (!isfinite(v)) {
		snprintf(buf, len, "?");
	} else if (a < 10000 && a == floor(a)) {
		char d[32];
		plot_int((uint64_t)a, d, sizeof(d));
		snprintf(buf, len, "%s%s", sign, d);
	} else if (a < 10000) {
		/* Three significant digits, fixed notation. */
		int dec = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2
			  : 2 - (int)floor(log10(a));
		char d[48];
		snprintf(d, sizeof(d), "%.*f", dec > 12 ? 12 : dec, a);
		trim_zeros(d);
		snprintf(buf, len, "%s%s", strcmp(d, "0") ? sign : "", d);
	} else if (a < 1e21) {
		int k = (int)floor(log10(a) / 3); /* 1..6 */
		double m = a / pow(10, 3 * k);
		if (m >= 999.5 && k < 6) { /* 999,999 is "1.00 M", not "1000 k" */
			m /= 1000;
			k++;
		}
		char d[48];
		snprintf(d, sizeof(d), "%.*f", m >= 100 ? 0 : m >= 10 ? 1 : 2, m);
		trim_zeros(d);
		snprintf(buf, len, "%s%s %s", sign, d, si[k - 1]);
	} else {
		int e = (int)floor(log10(a));
		double m = a / pow(10, e);
		char ex[40] = "";
		size_t o = 0;
		char digits[8];
		if (m >= 9.995) {
			m /= 10;
			e++;
		}
		snprintf(digits, sizeof(digits), "%d", e);
		for (const char *c = digits; *c && o + 4 < sizeof(ex); c++) {
			strcpy(ex + o, sup_digit[*c - '0']);
			o += strlen(sup_digit[*c - '0']);
		}
		char d[48];
		snprintf(d, sizeof(d), "%.2f", m);
		trim_zeros(d);
		snprintf(buf, len, "%s%s\u00d710%s", sign, d, ex);
	}
	return buf;
}

/* ---- building ---- */

static void put_escaped(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			/* Control characters are not XML. */
			fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
		}
	}
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

struct plot *plot_new(const char *title, int width, int height)
{
	struct plot *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->w = width > 2 * (PLOT_LEFT + PLOT_RIGHT) ? width : 2 * (PLOT_LEFT + PLOT_RIGHT);
	p->h = height > 2 * (PLOT_TOP + PLOT_BOTTOM) ? height : 2 * (PLOT_TOP + PLOT_BOTTOM);
	p->title = dup_or_empty(title);
	p->marks = open_memstream(&p->marks_buf, &p->marks_len);
	p->legend = open_memstream(&p->legend_buf, &p->legend_len);
	if (!p->title || !p->marks || !p->legend) {
		plot_free(p);
		return NULL;
	}
	return p;
}

void plot_free(struct plot *p)
{
	if (!p)
		return;
	if (p->marks)
		fclose(p->marks);
	if (p->legend)
		fclose(p->legend);
	free(p->marks_buf);
	free(p->legend_buf);
	free(p->title);
	free(p->x.label);
	free(p->y.label);
	free(p);
}

static int scale_set(struct plot_scale *s, const struct plot_axis *a)
{
	if (!a || !isfinite(a->lo) || !isfinite(a->hi) || a->lo >= a->hi ||
	    (a->log && a->lo <= 0))
		return GERR_INVAL;
	s->log = a->log != 0;
	s->integer = a->integer != 0;
	s->lo = s->log ? log10(a->lo) : a->lo;
	s->hi = s->log ? log10(a->hi) : a->hi;
	s->label = dup_or_empty(a->label);
	return s->label ? 0 : GERR_NOMEM;
}

void plot_axes(struct plot *p, const struct plot_axis *x,
	       const struct plot_axis *y)
{
	int rc;

	if (!p || p->have_axes)
		return;
	rc = scale_set(&p->x, x);
	if (rc == 0)
		rc = scale_set(&p->y, y);
	if (rc)
		p->failed = rc;
	else
		p->have_axes = 1;
}

/* Value to user units; the axis value is clamped a little outside the
 * area so that far-off points stay finite (the clip path cuts them). */
static double to_px(const struct plot *p, double v, int is_x)
{
	const struct plot_scale *s = is_x ? &p->x : &p->y;
	double a = s->log ? (v > 0 ? log10(v) : s->lo - 1) : v;
	double t = (a - s->lo) / (s->hi - s->lo);

	if (t < -1)
		t = -1;
	if (t > 2)
		t = 2;
	if (is_x)
		return PLOT_LEFT + t * (p->w - PLOT_LEFT - PLOT_RIGHT);
	return p->h - PLOT_BOTTOM - t * (p->h - PLOT_BOTTOM - PLOT_TOP);
}

static int usable(struct plot *p)
{
	if (p && !p->have_axes && !p->failed)
		p->failed = GERR_INVAL;
	return p && p->have_axes && !p->failed;
}

void plot_bar(struct plot *p, double x0, double x1, double y,
	      const char *color, const char *cls, const char *tip)
{
	double px0, px1, py, base;

	if (!usable(p))
		return;
	px0 = to_px(p, x0, 1);
	px1 = to_px(p, x1, 1);
	py = to_px(p, y, 0);
	base = p->h - PLOT_BOTTOM;
	if (py >= base)
		return; /* nothing above the axis */
	fprintf(p->marks, "<rect class=\"bar");
	if (cls) {
		fputc(' ', p->marks);
		put_escaped(p->marks, cls);
	}
	fprintf(p->marks, "\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		"height=\"%.2f\" fill=\"", px0, py,
		px1 - px0 > 0.4 ? px1 - px0 : 0.4, base - py);
	put_escaped(p->marks, color ? color : "#2c6fbb");
	fputs("\">", p->marks);
	if (tip) {
		fputs("<title>", p->marks);
		put_escaped(p->marks, tip);
		fputs("</title>", p->marks);
	}
	fputs("</rect>\n", p->marks);
}

void plot_line(struct plot *p, const double *x, const double *y, size_t n,
	       const char *color, const char *cls)
{
	if (!usable(p))
		return;
	fprintf(p->marks, "<polyline class=\"line");
	if (cls) {
		fputc(' ', p->marks);
		put_escaped(p->marks, cls);
	}
	fputs("\" fill=\"none\" stroke-width=\"2\" stroke=\"", p->marks);
	put_escaped(p->marks, color ? color : "#e67e22");
	fputs("\" points=\"", p->marks);
	for (size_t i = 0; i < n; i++) {
		if ((p->y.log && y[i] <= 0) || !isfinite(x[i]) || !isfinite(y[i]))
			continue;
		fprintf(p->marks, "%.2f,%.2f ", to_px(p, x[i], 1),
			to_px(p, y[i], 0));
	}
	fputs("\"/>\n", p->marks);
}

void plot_legend(struct plot *p, const char *color, const char *text)
{
	double x = p ? p->w - PLOT_RIGHT - 300 : 0;
	double y = PLOT_TOP + 10 + 18.0 * (p ? p->legends : 0);

	if (!p || p->failed)
		return;
	fprintf(p->legend, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" "
		"height=\"12\" fill=\"", x, y);
	put_escaped(p->legend, color);
	fprintf(p->legend, "\"/><text class=\"legend\" x=\"%.0f\" y=\"%.0f\">",
		x + 18, y + 10);
	put_escaped(p->legend, text);
	fputs("</text>\n", p->legend);
	p->legends++;
}

/* ---- ticks ---- */

/* Tick positions in axis units (log10 on a log axis), at most max. */
static int ticks(const struct plot_scale *s, double *t, int max)
{
	int n = 0;

	if (s->log) {
		double a = ceil(s->lo - 1e-9), b = floor(s->hi + 1e-9);
		int count = (int)(b - a) + 1;
		if (count >= 3) {
			int step = (count + max - 3) / (max - 2);
			if (step < 1)
				step = 1;
			for (double d = a; d <= b + 1e-9 && n < max; d += step)
				t[n++] = d;
			return n;
		}
		/* A decade or two: 1, 2 and 5 times powers of ten. */
		for (double d = floor(s->lo); d <= s->hi && n < max; d++)
			for (int m = 0; m < 3 && n < max; m++) {
				double v = d + log10((double[]){1, 2, 5}[m]);
				if (v >= s->lo - 1e-9 && v <= s->hi + 1e-9)
					t[n++] = v;
			}
		if (n >= 2)
			return n;
		n = 0;
	}
	double lo = s->log ? pow(10, s->lo) : s->lo;
	double hi = s->log ? pow(10, s->hi) : s->hi;
	/* About five to ten ticks, one, two or five times a power of ten. */
	double raw = (hi - lo) / 5, mag = pow(10, floor(log10(raw)));
	double step = raw / mag < 1.5 ? mag : raw / mag < 3 ? 2 * mag
		      : raw / mag < 7 ? 5 * mag : 10 * mag;
	if (s->integer && step < 1)
		step = 1;
	for (double v = ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9 &&
						       n < max; v += step)
		t[n++] = s->log ? log10(v) : (fabs(v) < step * 1e-9 ? 0 : v);
	return n;
}

static void write_frame(struct plot *p, FILE *f)
{
	double t[PLOT_MAX_TICKS];
	double left = PLOT_LEFT, right = p->w - PLOT_RIGHT;
	double top = PLOT_TOP, bottom = p->h - PLOT_BOTTOM;
	char num[64];
	int n;

	/* Grid and tick numbers of y. */
	n = ticks(&p->y, t, PLOT_MAX_TICKS);
	for (int i = 0; i < n; i++) {
		double v = p->y.log ? pow(10, t[i]) : t[i];
		double y = to_px(p, v, 0);
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.2f\" y2=\"%.2f\" "
			"stroke=\"#ddd\"/><text class=\"ytick\" x=\"%.1f\" "
			"y=\"%.2f\" text-anchor=\"end\">%s</text>\n", left, right,
			y, y, left - 6, y + 4, plot_num(v, num, sizeof(num)));
	}
	n = ticks(&p->x, t, PLOT_MAX_TICKS);
	for (int i = 0; i < n; i++) {
		double v = p->x.log ? pow(10, t[i]) : t[i];
		double x = to_px(p, v, 1);
		fprintf(f, "<line x1=\"%.2f\" x2=\"%.2f\" y1=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#333\"/><text class=\"xtick\" x=\"%.2f\" "
			"y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x, x,
			bottom, bottom + 5, x, bottom + 18,
			plot_num(v, num, sizeof(num)));
	}
	fprintf(f, "<path d=\"M%.1f %.1fV%.1fH%.1f\" fill=\"none\" "
		"stroke=\"#333\"/>\n", left, top, bottom, right);
	fprintf(f, "<text class=\"xlabel\" x=\"%.1f\" y=\"%d\" "
		"text-anchor=\"middle\">", (left + right) / 2, p->h - 12);
	put_escaped(f, p->x.label);
	fprintf(f, "%s</text>\n", p->x.log ? " (log scale)" : "");
	fprintf(f, "<text class=\"ylabel\" x=\"0\" y=\"0\" text-anchor=\"middle\" "
		"transform=\"translate(18 %.1f) rotate(-90)\">", (top + bottom) / 2);
	put_escaped(f, p->y.label);
	fprintf(f, "%s</text>\n", p->y.log ? " (log scale)" : "");
}

int plot_finish(struct plot *p, char **ret_svg, size_t *ret_len)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (!p)
		return GERR_NOMEM;
	usable(p);
	rc = p->failed;
	if (fflush(p->marks) || fflush(p->legend))
		rc = rc ? rc : GERR_NOMEM;
	if (rc) {
		plot_free(p);
		return rc;
	}
	f = open_memstream(&buf, &len);
	if (!f) {
		plot_free(p);
		return GERR_NOMEM;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n", p->w, p->h,
		p->w, p->h);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", p->w,
		p->h);
	fprintf(f, "<text class=\"title\" x=\"%d\" y=\"24\" font-size=\"15\">",
		PLOT_LEFT);
	put_escaped(f, p->title);
	fputs("</text>\n", f);
	fprintf(f, "<clipPath id=\"plot-area\"><rect x=\"%d\" y=\"%d\" "
		"width=\"%d\" height=\"%d\"/></clipPath>\n", PLOT_LEFT, PLOT_TOP,
		p->w - PLOT_LEFT - PLOT_RIGHT, p->h - PLOT_TOP - PLOT_BOTTOM);
	write_frame(p, f);
	fputs("<g clip-path=\"url(#plot-area)\">\n", f);
	fwrite(p->marks_buf, 1, p->marks_len, f);
	fputs("</g>\n", f);
	if (p->legends)
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"296\" height=\"%d\" "
			"fill=\"white\" fill-opacity=\"0.85\" stroke=\"#ccc\"/>\n",
			p->w - PLOT_RIGHT - 306, PLOT_TOP + 4, 18 * p->legends + 8);
	fwrite(p->legend_buf, 1, p->legend_len, f);
	fputs("</svg>\n", f);
	plot_free(p);
	if (fclose(f) != 0) {
		free(buf);
		return GERR_NOMEM;
	}
	*ret_svg = buf;
	*ret_len = len;
	return 0;
}
