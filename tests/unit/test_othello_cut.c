/* test_othello_cut.c - how the Othello workload cuts a job: the split
 * hook's contract (a checkpoint of a lease is one of its head; head and
 * tail merge to the whole; no cut at 0, at the end, inside a file job's
 * block or in a split job's lease) and leases priced by cost (a deep
 * position alone, shallow ones near want positions at the job's mean cost).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gerr.h"
#include "othello/othello.h"
#include "othello/othello_wl.h"
#include "first_ckpt.h"
#include "unit_main.h"
#include "workload.h"

extern const struct workload othello_workload;

/* split's contract on a random job: a lease run to a checkpoint (after
 * CPU_STEP positions), cut after it; the head resumed from it answers as a
 * fresh head (results agree: nodes and time differ), check_checkpoint
 * takes it for the head and not the tail, head and tail merge to the
 * whole lease's answer; no cut at 0, at the end or past it. */
static void test_split_random(void **state)
{
	const struct workload *W = &othello_workload;
	json_t *args = json_pack("{s:s, s:s, s:s}", "random", "9000",
				 "empties", "6", "seed", "4");
	json_t *params = NULL, *spec, *head = NULL, *tail = NULL;
	json_t *a1 = NULL, *a2 = NULL, *a3 = NULL;
	uint64_t total, hu, tu;
	char err[WL_ERRLEN] = "";
	struct first_ckpt c = {NULL, 0, 0};
	struct wl_run_io io = FIRST_CKPT_IO(&c);
	struct wl_run_io quiet = WL_RUN_IO_QUIET(NULL, NULL);
	struct wl_device dev = {WL_DEVICE_CPU, 0, 2, NULL};
	void *rw, *rh, *rh2, *rt;
	size_t lw, lh, lh2, lt;

	(void)state;
	assert_int_equal(W->parse_params(workload_ctx(W), args, &params, &total,
					 err, sizeof(err)), 0);
	spec = json_pack("{s:i, s:i}", "begin", 0, "count", 9000);
	assert_int_equal(W->run(workload_ctx(W), params, spec, NULL, 0, &dev, &io,
				&rw, &lw, err, sizeof(err)), 0);
	assert_non_null(c.ck);
	assert_true(c.units > 0 && c.units < 9000);
	assert_int_equal(W->split(workload_ctx(W), params, spec, 0, &head, &hu,
				  &tail, &tu), GERR_AGAIN);
	assert_int_equal(W->split(workload_ctx(W), params, spec, 9000, &head,
				  &hu, &tail, &tu), GERR_AGAIN);
	assert_int_equal(W->split(workload_ctx(W), params, spec, 9001, &head,
				  &hu, &tail, &tu), GERR_AGAIN);
	assert_int_equal(W->split(workload_ctx(W), params, spec, c.units + 7,
				  &head, &hu, &tail, &tu), 0);
	assert_int_equal(hu, c.units + 7);
	assert_int_equal(hu + tu, 9000);
	assert_int_equal(W->check_checkpoint(workload_ctx(W), params, head, c.ck,
					     c.len, err, sizeof(err)), 0);
	assert_int_not_equal(W->check_checkpoint(workload_ctx(W), params, tail,
						 c.ck, c.len, err, sizeof(err)), 0);
	assert_int_equal(W->run(workload_ctx(W), params, head, c.ck, c.len, &dev,
				&quiet, &rh, &lh, err, sizeof(err)), 0);
	assert_int_equal(W->run(workload_ctx(W), params, head, NULL, 0, &dev,
				&quiet, &rh2, &lh2, err, sizeof(err)), 0);
	assert_int_equal(W->results_agree(workload_ctx(W), params, head, rh, lh,
					  rh2, lh2), 1);
	assert_int_equal(W->verify(workload_ctx(W), params, head, rh, lh, 9, err,
				   sizeof(err)), 0);
	assert_int_equal(W->run(workload_ctx(W), params, tail, NULL, 0, &dev,
				&quiet, &rt, &lt, err, sizeof(err)), 0);
	assert_int_equal(W->verify(workload_ctx(W), params, tail, rt, lt, 9, err,
				   sizeof(err)), 0);
	assert_int_equal(W->merge(workload_ctx(W), params, NULL, spec, rw, lw, "s",
				  &a1, NULL), 0);
	assert_int_equal(W->merge(workload_ctx(W), params, NULL, tail, rt, lt, "t",
				  &a2, NULL), 0);
	assert_int_equal(W->merge(workload_ctx(W), params, a2, head, rh, lh, "h",
				  &a3, NULL), 0);
	assert_true(json_equal(json_object_get(a1, "hist"),
			       json_object_get(a3, "hist")));
	assert_int_equal(json_integer_value(json_object_get(a1, "positions")),
			 json_integer_value(json_object_get(a3, "positions")));
	free(rw);
	free(rh);
	free(rh2);
	free(rt);
	free(c.ck);
	json_decref(a1);
	json_decref(a2);
	json_decref(a3);
	json_decref(head);
	json_decref(tail);
	json_decref(spec);
	json_decref(params);
	json_decref(args);
}

/* A file of n positions, position i of empties(i) empties, as OBF text
 * (malloc'ed). */
static char *obf_of(int n, int (*empties)(int))
{
	char *text = malloc((size_t)n * 90 + 1);
	size_t tl = 0;

	assert_non_null(text);
	for (int i = 0; i < n; i++) {
		uint64_t P, O;
		int black;
		char b[68];
		oth_generate(11, (uint64_t)i, empties(i), &P, &O, &black);
		struct othello_pos p = {black ? P : O, black ? O : P,
					(uint8_t)black, 0};
		othello_format_board(&p, b);
		tl += (size_t)sprintf(text + tl, "%.66s\n", b);
	}
	text[tl] = '\0';
	return text;
}

static int empties_mixed(int i)
{
	return i == 150 || i == 151 || i == 190 ? 22 : 10;
}

static int empties_shallow(int i)
{
	(void)i;
	return 8;
}

/* Canonical params of a file job of text (input named "0123"). */
static json_t *file_job(const char *text, uint64_t *total)
{
	const struct workload *W = &othello_workload;
	json_t *args = json_pack("{s:s, s:s}", "file", "f.obf", "split", "0");
	json_t *params = NULL, *np = NULL;
	char err[WL_ERRLEN] = "";
	void *canon = NULL;
	size_t clen;

	assert_int_equal(W->parse_params(workload_ctx(W), args, &params, total,
					 err, sizeof(err)), 0);
	assert_int_equal(W->parse_input(workload_ctx(W), params, text,
					strlen(text), &np, &canon, &clen, total,
					err, sizeof(err)), 0);
	json_object_set_new(np, "input", json_string("0123"));
	free(canon);
	json_decref(params);
	json_decref(args);
	return np;
}

/* Positions priced by empties: in a file of 197 ten-empty positions and
 * three of 22, each deep one goes alone into its lease, a lease of
 * shallow ones stays near want positions at the job's mean cost; the
 * leases tile the file. A file of one depth is leased by positions. A
 * file job's lease is cut at a block boundary. */
static void test_priced_carve(void **state)
{
	const struct workload *W = &othello_workload;
	char *text = obf_of(200, empties_mixed);
	uint64_t total, units, next = 0, hu, tu;
	json_t *p = file_job(text, &total), *cur = NULL, *spec = NULL, *h, *t;
	json_t *nc = NULL;
	int last = 0, deep_alone = 0;
	double mean = 0;

	(void)state;
	assert_int_equal(total, 200);
	assert_int_equal(json_integer_value(json_object_get(p, "block")), 1);
	assert_int_equal(strlen(json_string_value(json_object_get(p, "costs"))),
			 400);
	for (int i = 0; i < 200; i++)
		mean += othello_cost_us(empties_mixed(i)) / 200;
	while (W->carve(workload_ctx(W), p, cur, NULL, NULL, 20, &spec, &units,
			&nc, &last) == 0) {
		uint64_t b = (uint64_t)json_integer_value(json_object_get(spec,
								"begin"));
		double cost = 0;
		int deep = 0;
		assert_int_equal(b, next);
		for (uint64_t i = b; i < b + units; i++) {
			cost += othello_cost_us(empties_mixed((int)i));
			deep += empties_mixed((int)i) == 22;
		}
		if (deep) {
			assert_int_equal(units, 1);
			deep_alone++;
		} else {
			/* at most want's cost, at most 4x want positions */
			assert_true(cost <= 20 * mean * 1.2 + 1);
			assert_true(units <= 80);
		}
		next += units;
		json_decref(spec);
		spec = NULL;
		json_decref(cur);
		cur = nc;
		nc = NULL;
	}
	assert_int_equal(next, 200);
	assert_int_equal(last, 1);
	assert_int_equal(deep_alone, 3);
	json_decref(cur);
	cur = NULL;
	/* one depth: want positions */
	free(text);
	text = obf_of(3000, empties_shallow);
	json_decref(p);
	p = file_job(text, &total);
	assert_int_equal(json_integer_value(json_object_get(p, "block")), 4);
	assert_int_equal(W->carve(workload_ctx(W), p, NULL, NULL, NULL, 100,
				  &spec, &units, &cur, &last), 0);
	assert_true(units >= 96 && units <= 104 && units % 4 == 0);
	/* cut at the next block boundary */
	assert_int_equal(W->split(workload_ctx(W), p, spec, 5, &h, &hu, &t, &tu),
			 0);
	assert_int_equal(hu, 8);
	assert_int_equal(hu + tu, units);
	assert_int_equal(json_integer_value(json_object_get(t, "begin")), 8);
	json_decref(h);
	json_decref(t);
	assert_int_equal(W->split(workload_ctx(W), p, spec, units - 1, &h, &hu,
				  &t, &tu), GERR_AGAIN);
	json_decref(spec);
	json_decref(cur);
	json_decref(p);
	free(text);
	/* the cost curve grows with every empty */
	for (int e = 1; e <= 60; e++)
		assert_true(othello_cost_us(e) > othello_cost_us(e - 1));
}

UNIT_MAIN(cmocka_unit_test(test_split_random),
	cmocka_unit_test(test_priced_carve))
