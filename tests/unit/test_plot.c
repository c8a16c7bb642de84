/* test_plot.c - the SVG chart writer (kernels/plot.h): numbers people read,
 * a chart's frame (viewBox, axis labels, ticks), escaping, clipping of
 * what a log axis cannot show, and refusal of unusable axes; and the
 * Othello plot (its score distribution) through the workload hook. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gerr.h"
#include "log_fx.h"
#include "plot.h"
#include "unit_main.h"
#include "workload.h"

static void test_numbers(void **state)
{
	(void)state;
	formats_as(plot_num, 0, "0");
	formats_as(plot_num, 7, "7");
	formats_as(plot_num, 999, "999");
	formats_as(plot_num, 1234, "1,234");
	formats_as(plot_num, 9999, "9,999");
	formats_as(plot_num, -64, "-64");
	formats_as(plot_num, 2.5, "2.5");
	formats_as(plot_num, 0.5, "0.5");
	formats_as(plot_num, 0.05, "0.05");
	formats_as(plot_num, 57.75, "57.8");
	formats_as(plot_num, 10000, "10 k");
	formats_as(plot_num, 54.9e6, "54.9 M");
	formats_as(plot_num, 1e9, "1 G");
	formats_as(plot_num, 1.5e9, "1.5 G");
	formats_as(plot_num, 999999, "1 M");     /* not "1000 k" */
	formats_as(plot_num, 123456789, "123 M");
	formats_as(plot_num, 7.1e19, "71 E");
	formats_as(plot_num, 1e21, "1\u00d710\u00b2\u00b9");
	formats_as(plot_num, 8.1171e46, "8.12\u00d710\u2074\u2076");
	char ib[32];
	assert_string_equal(plot_int(1213456, ib, sizeof(ib)), "1,213,456");
	assert_string_equal(plot_int(0, ib, sizeof(ib)), "0");
	assert_string_equal(plot_int(UINT64_MAX, ib, sizeof(ib)),
			    "18,446,744,073,709,551,615");
	/* No exponent form anywhere from 1e-6 to 1e30. */
	for (double v = 1e-6; v < 1e30; v *= 3.7) {
		char buf[64];
		plot_num(v, buf, sizeof(buf));
		assert_null(strchr(buf, 'e'));
	}
}

static void test_chart(void **state)
{
	struct plot *p = plot_new("a <title> & more", 800, 400);
	double x[] = {1, 2, 3, 4}, y[] = {10, 0, 1e6, 1e8};
	char *svg = NULL;
	size_t len = 0;

	(void)state;
	assert_non_null(p);
	plot_axes(p, &(struct plot_axis){0.5, 4.5, 0, "turns", 1},
		  &(struct plot_axis){0.5, 1e9, 1, "battles", 0});
	plot_bar(p, 0.6, 1.4, 100, "#123456", "observed", "1: 100 \"battles\"");
	plot_bar(p, 1.6, 2.4, 0.1, NULL, NULL, NULL); /* below the axis: none */
	plot_line(p, x, y, 4, NULL, "expected");
	plot_legend(p, "#123456", "observed <n>");
	assert_int_equal(plot_finish(p, &svg, &len), 0);
	assert_int_equal(strlen(svg), len);

	assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	assert_non_null(strstr(svg, "viewBox=\"0 0 800 400\""));
	assert_non_null(strstr(svg, "a &lt;title&gt; &amp; more</text>"));
	assert_non_null(strstr(svg, "class=\"xlabel\""));
	assert_non_null(strstr(svg, ">turns</text>"));
	assert_non_null(strstr(svg, "class=\"ylabel\""));
	assert_non_null(strstr(svg, ">battles (log scale)</text>"));
	assert_non_null(strstr(svg, "<title>1: 100 &quot;battles&quot;</title>"));
	assert_non_null(strstr(svg, "observed &lt;n&gt;</text>"));
	/* One bar: the one under the axis is left out. */
	assert_int_equal(count(svg, "<rect class=\"bar"), 1);
	/* The line skips y = 0 on the log axis: three points. */
	const char *pl = strstr(svg, "class=\"line expected\"");
	assert_non_null(pl);
	pl = strstr(pl, "points=\"");
	assert_non_null(pl);
	int commas = 0;
	for (pl += 8; *pl != '"'; pl++)
		commas += *pl == ',';
	assert_int_equal(commas, 3);
	/* Log ticks at powers of ten, read as people read them. */
	assert_non_null(strstr(svg, ">1</text>"));
	assert_non_null(strstr(svg, ">1,000</text>"));
	assert_non_null(strstr(svg, ">1 M</text>"));
	assert_non_null(strstr(svg, ">1 G</text>"));
	assert_null(strstr(svg, "e+"));
	assert_true(count(svg, "class=\"ytick\"") >= 3);
	assert_true(count(svg, "class=\"ytick\"") <= 12);
	/* x ticks: 1 to 4 on a linear axis. */
	assert_int_equal(count(svg, "class=\"xtick\""), 4);
	/* Marks are clipped to the plot area. */
	assert_non_null(strstr(svg, "<g clip-path=\"url(#plot-area)\">"));
	assert_non_null(strstr(svg, "</svg>\n"));
	free(svg);
}

static void test_narrow_log(void **state)
{
	/* Less than a decade: 1-2-5 ticks, or plain ones. */
	struct plot *p = plot_new("narrow", 600, 300);
	char *svg = NULL;
	size_t len = 0;

	(void)state;
	plot_axes(p, &(struct plot_axis){3e18, 8e19, 1, "W", 0},
		  &(struct plot_axis){0, 37, 0, "gangsters", 1});
	plot_bar(p, 4e18, 5e18, 12, NULL, NULL, NULL);
	assert_int_equal(plot_finish(p, &svg, &len), 0);
	assert_true(count(svg, "class=\"xtick\"") >= 2);
	assert_non_null(strstr(svg, ">10 E</text>"));
	assert_non_null(strstr(svg, ">W (log scale)</text>"));
	/* A count axis has whole-number ticks only. */
	assert_null(strstr(svg, ".5</text>"));
	assert_null(strstr(svg, "e+"));
	free(svg);
}

static void test_refused(void **state)
{
	char *svg = NULL;
	size_t len = 0;
	struct plot *p;

	(void)state;
	/* No axes. */
	p = plot_new("t", 600, 300);
	plot_bar(p, 0, 1, 1, NULL, NULL, NULL);
	assert_int_equal(plot_finish(p, &svg, &len), GERR_INVAL);
	/* A log axis from 0. */
	p = plot_new("t", 600, 300);
	plot_axes(p, &(struct plot_axis){0, 1, 0, "x", 0},
		  &(struct plot_axis){0, 10, 1, "y", 0});
	assert_int_equal(plot_finish(p, &svg, &len), GERR_INVAL);
	/* An empty range. */
	p = plot_new("t", 600, 300);
	plot_axes(p, &(struct plot_axis){1, 1, 0, "x", 0},
		  &(struct plot_axis){0, 10, 0, "y", 0});
	assert_int_equal(plot_finish(p, &svg, &len), GERR_INVAL);
	assert_null(svg);
	plot_free(NULL);
	assert_int_equal(plot_finish(NULL, &svg, &len), GERR_NOMEM);
}

static void test_othello_plot(void **state)
{
	const struct workload *W = workload_find("othello");
	json_t *params = json_pack("{s:s, s:i, s:i, s:s}", "mode", "random",
				   "positions", 10, "empties", 12, "seed", "1");
	json_t *answer = json_pack("{s:i, s:i, s:i, s:i, s:i, s:[], s:[]}",
				   "positions", 10, "leases", 1, "nodes", 100,
				   "usec", 5, "mismatches", 0, "mismatch_list",
				   "hist");
	json_t *hist = json_object_get(answer, "hist");
	char err[WL_ERRLEN], *svg = NULL;
	size_t len = 0;

	(void)state;
	assert_non_null(W);
	for (int b = 0; b < 65; b++)
		json_array_append_new(hist, json_integer(b == 30 ? 4 : b == 32 ? 1
							 : b == 40 ? 5 : 0));
	assert_int_equal(W->render_plot(workload_ctx(W), params, answer, NULL,
					NULL, &svg, &len, err, sizeof(err)), 0);
	assert_string_equal(W->plot_name, "othello-scores.svg");
	assert_non_null(strstr(svg, "viewBox="));
	assert_non_null(strstr(svg, "5 wins, 1 draws, 4 losses"));
	assert_int_equal(count(svg, "class=\"bar win\""), 1);
	assert_int_equal(count(svg, "class=\"bar loss\""), 1);
	assert_non_null(strstr(svg, "<title>score +16: 5 positions</title>"));
	assert_non_null(strstr(svg, ">positions</text>"));
	free(svg);
	json_decref(answer);
	assert_int_equal(W->render_plot(workload_ctx(W), params, NULL, NULL,
					NULL, &svg, &len, err, sizeof(err)),
			 GERR_NOTFOUND);
	json_decref(params);
}

UNIT_MAIN(cmocka_unit_test(test_numbers),
	cmocka_unit_test(test_chart),
	cmocka_unit_test(test_narrow_log),
	cmocka_unit_test(test_refused),
	cmocka_unit_test(test_othello_plot))
