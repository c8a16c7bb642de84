/* plot.h - the one small SVG chart writer behind every workload's plot: a
 * chart of one plot area with x and y axes (linear or log10), ticks whose
 * numbers people read (1,500, 2.5 M, 10^21; never 1e+08), axis labels, a
 * title and a legend, holding bars and lines. What to draw is the
 * workload's (kernels/W/..._plot.c); how it looks is here.
 *
 * The document is standalone SVG 1.1 with a viewBox (it scales in a page)
 * and elements that tests can find by class: "title", "xlabel", "ylabel",
 * "xtick", "ytick", "bar", "line" plus the caller's own class on bars and
 * lines (e.g. "expected" on Graveler's Binomial curve). Every number and
 * text is XML-escaped; nothing of the caller is copied unescaped.
 *
 * Usage: plot_new, plot_axes (once, before any mark), plot_bar / plot_line
 * / plot_legend, then plot_finish, which hands back the document and frees
 * the plot. A mark outside the axes' range is clipped to the plot area.
 *
 * Ownership: a struct plot is the caller's until plot_finish or plot_free
 * (NULL-safe); strings passed in are copied at once. Errors: plot_finish
 * returns GERR_NOMEM when memory ran out at any step, GERR_INVAL when
 * plot_axes was never called or an axis was unusable (lo >= hi, a log
 * axis with lo <= 0). Threads: a plot is used by one thread at a time;
 * nothing is shared.
 */
#ifndef GPUD_PLOT_H
#define GPUD_PLOT_H

#include <stddef.h>
#include <stdint.h>

struct plot;

struct plot_axis {
	double lo, hi;     /* the range shown; log: lo > 0 */
	int log;           /* 1: log10 scale */
	const char *label; /* "paralysed turns (of 231)" */
	int integer;       /* 1: ticks only at whole numbers (counts) */
};

/* A new chart of width x height user units (the viewBox). NULL when out
 * of memory. */
struct plot *plot_new(const char *title, int width, int height);
/* The axes, their ticks and labels. */
void plot_axes(struct plot *p, const struct plot_axis *x,
	       const struct plot_axis *y);
/* A bar over [x0, x1] from the bottom of the y axis up to y; cls (may be
 * NULL) names it, tip (may be NULL) is its tooltip, e.g. "57: 1,234". */
void plot_bar(struct plot *p, double x0, double x1, double y,
	      const char *color, const char *cls, const char *tip);
/* A polyline through n points (points with a non-positive y on a log
 * axis are skipped). */
void plot_line(struct plot *p, const double *x, const double *y, size_t n,
	       const char *color, const char *cls);
/* A legend entry (a swatch and its text), stacked in the top right. */
void plot_legend(struct plot *p, const char *color, const char *text);
/* The document (malloc'ed, NUL-terminated; *ret_len without the NUL);
 * frees p in any case. */
int plot_finish(struct plot *p, char **ret_svg, size_t *ret_len);
void plot_free(struct plot *p);

/* v as people read it: integers below 10,000 with commas above 999
 * ("1,234"), k/M/G/T/P/E with up to three significant digits ("54.9 M",
 * "10 k") up to 10^21, then "1.5×10²¹" (superscript digits), fractions
 * with up to three significant digits ("0.05", "2.5"); never 1e+08.
 * Returns buf. */
char *plot_num(double v, char *buf, size_t len);
/* An exact count with a comma every three digits ("1,213,456"). */
char *plot_int(uint64_t v, char *buf, size_t len);

#endif
