/* sudoku_plot.c - the Sudoku plot: the per-gangster counts (W(g) for the
 * 3-band shapes, the band count cnt(g) for the others), read from the
 * leases' result blobs, as a histogram of how many gangsters have a count
 * of each size (log-spaced bins). */
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

int sudoku_wl_render_plot(void *ctx, const json_t *params,
			  const json_t *answer, const struct wl_parts *parts,
			  const struct wl_blob_reader *rd, char **ret_svg,
			  size_t *ret_len, char *err, size_t errlen)
{
	struct sudoku_counts c;
	uint64_t bins[PLOT_BINS] = {0}, zeros = 0, peak = 1;
	double lo = INFINITY, hi = 0, w;
	char title[200], a[40], b[40], tip[160];
	int nb, rc = sudoku_wl_counts(params, answer, parts, rd, &c, err,
				      errlen);
	struct plot *p;

	(void)ctx;
	if (rc)
		return rc;
	for (uint32_t g = 0; g < c.ngang; g++) {
		double x = count_of(c.v[g]);
		if (!c.seen[g])
			continue;
		if (x <= 0) {
			zeros++;
			continue;
		}
		lo = log10(x) < lo ? log10(x) : lo;
		hi = log10(x) > hi ? log10(x) : hi;
	}
	if (c.done == zeros) {
		sudoku_counts_clear(&c);
		gerr_printf(err, errlen, "sudoku: no counts to plot yet");
		return GERR_NOTFOUND;
	}
	/* A bin per gangster at most; a range of one value gets a decade. */
	nb = c.done - zeros < PLOT_BINS ? (int)(c.done - zeros) : PLOT_BINS;
	nb = nb < 4 ? 4 : nb;
	if (hi - lo < 1e-9) {
		lo -= 0.5;
		hi += 0.5;
	}
	w = (hi - lo) / nb;
	for (uint32_t g = 0; g < c.ngang; g++) {
		double x = count_of(c.v[g]);
		if (!c.seen[g] || x <= 0)
			continue;
		int k = (int)((log10(x) - lo) / w);
		k = k < 0 ? 0 : k >= nb ? nb - 1 : k;
		bins[k]++;
	}
	for (int k = 0; k < nb; k++)
		peak = bins[k] > peak ? bins[k] : peak;
	snprintf(title, sizeof(title), "Sudoku %dx%d: per-gangster %s of %s of "
		 "%s gangsters%s", c.rows, c.cols, c.cols == 3 ? "W" : "band counts",
		 plot_num((double)c.done, a, sizeof(a)),
		 plot_num((double)c.ngang, b, sizeof(b)),
		 zeros ? " (some zero, not shown)" : "");
	p = plot_new(title, 900, 440);
	if (!p) {
		sudoku_counts_clear(&c);
		return GERR_NOMEM;
	}
	plot_axes(p, &(struct plot_axis){pow(10, lo - w / 2), pow(10, hi + w / 2),
					  1, c.cols == 3
					  ? "W(g): the gangster's count of band completions"
					  : "cnt(g): the band count below the gangster"},
		  &(struct plot_axis){0, (double)peak * 1.1, 0, "gangsters"});
	for (int k = 0; k < nb; k++) {
		double x0 = pow(10, lo + k * w), x1 = pow(10, lo + (k + 1) * w);
		if (!bins[k])
			continue;
		char from[40], to[40];
		snprintf(tip, sizeof(tip), "%s to %s: %s gangsters",
			 plot_num(x0, from, sizeof(from)),
			 plot_num(x1, to, sizeof(to)),
			 plot_num((double)bins[k], a, sizeof(a)));
		plot_bar(p, x0, x1, (double)bins[k], COLOR_BAR, "gangsters", tip);
	}
	sudoku_counts_clear(&c);
	return plot_finish(p, ret_svg, ret_len);
}
