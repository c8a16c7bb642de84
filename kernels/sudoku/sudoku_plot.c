/* sudoku_plot.c - the Sudoku plot: the per-gangster counts (W(g) for the
 * 3-band shapes, the band count cnt(g) for the others), read from the
 * leases' result blobs: each gangster's count by its index where they are
 * few, else how many gangsters have a count of each size (log-spaced
 * bins). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "gerr.h"
#include "plot.h"
#include "sudoku_internal.h"

#define PLOT_BINS 48
#define COLOR_BAR "#2c6fbb"

static double count_of(const uint64_t v[2])
{
	return (double)v[0] + ldexp((double)v[1], 64);
}

/* Few gangsters: each one's count, by gangster index (log scale). */
static struct plot *by_index(const struct sudoku_counts *c, const char *what,
			     const char *title)
{
	double lo = INFINITY, hi = 0;
	char a[40], tip[160];
	struct plot *p;

	for (uint32_t g = 0; g < c->ngang; g++) {
		double x = count_of(c->v[g]);
		if (c->seen[g] && x > 0) {
			lo = x < lo ? x : lo;
			hi = x > hi ? x : hi;
		}
	}
	p = plot_new(title, 900, 440);
	if (!p)
		return NULL;
	plot_axes(p, &(struct plot_axis){-0.5, c->ngang - 0.5, 0,
					  "gangster (index)", 1},
		  &(struct plot_axis){pow(10, floor(log10(lo))),
				      pow(10, ceil(log10(hi * 1.5))), 1, what, 0});
	for (uint32_t g = 0; g < c->ngang; g++) {
		double x = count_of(c->v[g]);
		if (!c->seen[g] || x <= 0)
			continue;
		snprintf(tip, sizeof(tip), "gangster %u: %s", g,
			 plot_num(x, a, sizeof(a)));
		plot_bar(p, g - 0.4, g + 0.4, x, COLOR_BAR, "gangster", tip);
	}
	return p;
}

/* Many gangsters: how many have a count in each log-spaced bin. */
static struct plot *histogram(const struct sudoku_counts *c, const char *what,
			      const char *title)
{
	uint64_t bins[PLOT_BINS] = {0}, n = 0, peak = 1;
	double lo = INFINITY, hi = 0, w;
	char a[40], from[40], to[40], tip[160];
	struct plot *p;
	int nb;

	for (uint32_t g = 0; g < c->ngang; g++) {
		double x = count_of(c->v[g]);
		if (!c->seen[g] || x <= 0)
			continue;
		lo = log10(x) < lo ? log10(x) : lo;
		hi = log10(x) > hi ? log10(x) : hi;
		n++;
	}
	/* A bin per gangster at most; a range of one value gets a decade. */
	nb = n < PLOT_BINS ? (int)n : PLOT_BINS;
	if (hi - lo < 1e-9) {
		lo -= 0.5;
		hi += 0.5;
	}
	w = (hi - lo) / nb;
	for (uint32_t g = 0; g < c->ngang; g++) {
		double x = count_of(c->v[g]);
		if (!c->seen[g] || x <= 0)
			continue;
		int k = (int)((log10(x) - lo) / w);
		bins[k < 0 ? 0 : k >= nb ? nb - 1 : k]++;
	}
	for (int k = 0; k < nb; k++)
		peak = bins[k] > peak ? bins[k] : peak;
	p = plot_new(title, 900, 440);
	if (!p)
		return NULL;
	plot_axes(p, &(struct plot_axis){pow(10, lo - w / 2), pow(10, hi + w / 2),
					  1, what, 0},
		  &(struct plot_axis){0, (double)peak * 1.1, 0, "gangsters", 1});
	for (int k = 0; k < nb; k++) {
		double x0 = pow(10, lo + k * w), x1 = pow(10, lo + (k + 1) * w);
		if (!bins[k])
			continue;
		snprintf(tip, sizeof(tip), "%s to %s: %s gangsters",
			 plot_num(x0, from, sizeof(from)),
			 plot_num(x1, to, sizeof(to)),
			 plot_num((double)bins[k], a, sizeof(a)));
		plot_bar(p, x0, x1, (double)bins[k], COLOR_BAR, "gangsters", tip);
	}
	return p;
}

int sudoku_counts_plot(const struct sudoku_counts *c, char **ret_svg,
		       size_t *ret_len, char *err, size_t errlen)
{
	uint32_t zeros = 0;
	char title[200], a[40], b[40];
	const char *what;
	struct plot *p;

	for (uint32_t g = 0; g < c->ngang; g++)
		zeros += c->seen[g] && count_of(c->v[g]) <= 0;
	if (c->done == zeros) {
		gerr_printf(err, errlen, "sudoku: no counts to plot yet");
		return GERR_NOTFOUND;
	}
	what = c->cols == 3 ? "W(g): the gangster's count of band completions"
			    : "cnt(g): the band count below the gangster";
	snprintf(title, sizeof(title), "Sudoku %dx%d: per-gangster %s, %s of %s "
		 "gangsters%s", c->rows, c->cols, c->cols == 3 ? "W" : "band counts",
		 plot_int(c->done, a, sizeof(a)), plot_int(c->ngang, b, sizeof(b)),
		 zeros ? " (zeros not shown)" : "");
	p = c->ngang <= SUDOKU_PLOT_BY_INDEX ? by_index(c, what, title)
					     : histogram(c, what, title);
	return p ? plot_finish(p, ret_svg, ret_len) : GERR_NOMEM;
}

int sudoku_wl_render_plot(void *ctx, const json_t *params,
			  const json_t *answer, const struct wl_parts *parts,
			  const struct wl_blob_reader *rd, char **ret_svg,
			  size_t *ret_len, char *err, size_t errlen)
{
	struct sudoku_counts c;
	int rc = sudoku_wl_counts(params, answer, parts, rd, &c, err, errlen);

	(void)ctx;
	if (rc)
		return rc;
	rc = sudoku_counts_plot(&c, ret_svg, ret_len, err, errlen);
	sudoku_counts_clear(&c);
	return rc;
}
