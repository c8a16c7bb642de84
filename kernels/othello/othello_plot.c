/* othello_plot.c - the Othello plot: how many positions end with each
 * exact score (final disc difference for the side to move), wins, draws
 * and losses apart. */
#include <inttypes.h>
#include <stdio.h>

#include "gerr.h"
#include "othello_wl.h"
#include "plot.h"

#define COLOR_WIN "#27ae60"
#define COLOR_DRAW "#7f8c8d"
#define COLOR_LOSS "#c0392b"

int othello_wl_render_plot(void *ctx, const json_t *params,
			   const json_t *answer, const struct wl_parts *parts,
			   const struct wl_blob_reader *rd, char **ret_svg,
			   size_t *ret_len, char *err, size_t errlen)
{
	uint64_t hist[65], n = 0, win = 0, draw = 0, loss = 0, peak = 1;
	char title[200], a[40], b[40], c[40], d[40], tip[120];
	struct othello_job j;
	struct plot *p;

	(void)ctx, (void)parts, (void)rd;
	if (!answer || othello_wl_answer_hist(answer, hist, &n) || n == 0) {
		gerr_printf(err, errlen, "othello: no scores to plot yet");
		return GERR_NOTFOUND;
	}
	for (int k = 0; k < 65; k++) {
		int sc = 2 * k - 64;
		*(sc > 0 ? &win : sc < 0 ? &loss : &draw) += hist[k];
		peak = hist[k] > peak ? hist[k] : peak;
	}
	if (othello_job_get(params, &j, err, errlen) == 0 && !j.file)
		snprintf(title, sizeof(title), "Othello: %s positions with %d "
			 "empties: %s wins, %s draws, %s losses",
			 plot_int(n, a, sizeof(a)), j.empties,
			 plot_int(win, b, sizeof(b)),
			 plot_int(draw, c, sizeof(c)),
			 plot_int(loss, d, sizeof(d)));
	else
		snprintf(title, sizeof(title), "Othello: %s positions: %s wins, "
			 "%s draws, %s losses", plot_int(n, a, sizeof(a)),
			 plot_int(win, b, sizeof(b)),
			 plot_int(draw, c, sizeof(c)),
			 plot_int(loss, d, sizeof(d)));
	p = plot_new(title, 900, 440);
	if (!p)
		return GERR_NOMEM;
	plot_axes(p, &(struct plot_axis){-65, 65, 0,
					  "exact score for the side to move "
					  "(final disc difference)", 1},
		  &(struct plot_axis){0, (double)peak * 1.1, 0, "positions", 1});
	for (int k = 0; k < 65; k++) {
		int sc = 2 * k - 64;
		if (!hist[k])
			continue;
		snprintf(tip, sizeof(tip), "score %+d: %s positions", sc,
			 plot_num((double)hist[k], a, sizeof(a)));
		plot_bar(p, sc - 0.9, sc + 0.9, (double)hist[k],
			 sc > 0 ? COLOR_WIN : sc < 0 ? COLOR_LOSS : COLOR_DRAW,
			 sc > 0 ? "win" : sc < 0 ? "loss" : "draw", tip);
	}
	plot_legend(p, COLOR_WIN, "side to move wins");
	plot_legend(p, COLOR_DRAW, "draw");
	plot_legend(p, COLOR_LOSS, "side to move loses");
	return plot_finish(p, ret_svg, ret_len);
}
