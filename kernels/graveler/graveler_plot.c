/* graveler_plot.c - the Graveler plot: battles by paralysed turns (log
 * scale) with the Binomial(231, 1/4) expectation that finish tests them
 * against, scaled to the battles merged, and the maximum marked. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "gerr.h"
#include "graveler.h"
#include "graveler_wl.h"
#include "plot.h"

#define COLOR_BAR "#2c6fbb"
#define COLOR_MAX "#c0392b"
#define COLOR_EXPECTED "#e67e22"

/* Expected counts below this are left out of the x range. */
#define EXPECTED_FLOOR 0.5

int graveler_wl_render_plot(void *ctx, const json_t *params,
			    const json_t *answer, const struct wl_parts *parts,
			    const struct wl_blob_reader *rd, char **ret_svg,
			    size_t *ret_len, char *err, size_t errlen)
{
	const json_t *h = json_object_get(answer, "histogram");
	uint64_t hist[GRAVELER_BINS], n = 0;
	double ex[GRAVELER_BINS], ey[GRAVELER_BINS], peak = 1;
	char title[160], a[40], b[40], tip[160];
	int lo = -1, hi = -1, max = -1;
	size_t ne = 0;
	struct plot *p;

	(void)ctx, (void)params, (void)parts, (void)rd;
	if (!json_is_array(h) || json_array_size(h) != GRAVELER_BINS) {
		gerr_printf(err, errlen, "graveler: no answer to plot");
		return GERR_NOTFOUND;
	}
	for (unsigned k = 0; k < GRAVELER_BINS; k++) {
		json_int_t v = json_integer_value(json_array_get(h, k));
		hist[k] = v > 0 ? (uint64_t)v : 0;
		n += hist[k];
		if (hist[k]) {
			lo = lo < 0 ? (int)k : lo;
			hi = max = (int)k;
			peak = (double)hist[k] > peak ? (double)hist[k] : peak;
		}
	}
	if (n == 0) {
		gerr_printf(err, errlen, "graveler: no battles merged yet");
		return GERR_NOTFOUND;
	}
	for (unsigned k = 0; k < GRAVELER_BINS; k++) {
		double e = (double)n * graveler_binom_pmf(k);
		if (e < EXPECTED_FLOOR)
			continue;
		lo = (int)k < lo ? (int)k : lo;
		hi = (int)k > hi ? (int)k : hi;
		peak = e > peak ? e : peak;
	}
	lo = lo > 0 ? lo - 1 : 0;
	hi = hi < GRAVELER_BINS - 1 ? hi + 1 : hi;
	for (int k = lo; k <= hi; k++) {
		ex[ne] = k;
		ey[ne++] = (double)n * graveler_binom_pmf((unsigned)k);
	}
	snprintf(title, sizeof(title), "Graveler: %s battles, most paralysed "
		 "turns %d (first in battle %s)", plot_int(n, a, sizeof(a)), max,
		 plot_int((uint64_t)json_integer_value(json_object_get(answer,
			  "first")), b, sizeof(b)));
	p = plot_new(title, 900, 480);
	if (!p)
		return GERR_NOMEM;
	plot_axes(p, &(struct plot_axis){lo - 0.5, hi + 0.5, 0,
					  "paralysed turns (of 231)", 1},
		  &(struct plot_axis){0.5, pow(10, ceil(log10(peak * 2))), 1,
				      "battles", 0});
	for (int k = lo; k <= hi; k++) {
		if (!hist[k])
			continue;
		snprintf(tip, sizeof(tip), "%d turns: %s battles (expected %s)",
			 k, plot_num((double)hist[k], a, sizeof(a)),
			 plot_num(round(ey[k - lo] * 10) / 10, b, sizeof(b)));
		plot_bar(p, k - 0.45, k + 0.45, (double)hist[k],
			 k == max ? COLOR_MAX : COLOR_BAR,
			 k == max ? "observed max" : "observed", tip);
	}
	plot_line(p, ex, ey, ne, COLOR_EXPECTED, "expected");
	plot_legend(p, COLOR_BAR, "battles (observed)");
	plot_legend(p, COLOR_EXPECTED, "expected: battles \u00d7 Binomial(231, 1/4)");
	plot_legend(p, COLOR_MAX, "the most paralysed turns");
	return plot_finish(p, ret_svg, ret_len);
}
