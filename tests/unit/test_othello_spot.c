/* test_othello_spot.c - Othello's spot replica (issue 34, item 8):
 * positions above OTHELLO_VERIFY_MAX_EMPTIES are never re-solved on gpud;
 * verify answers WL_VERIFY_SPOT (another worker's result wanted) for a
 * lease of d of them with probability min(1, d / 32), after every other
 * check passed. Measured like test_othello_deep_detect.c:
 *
 *  - the draw alone (othello_verify_spot): its rate against d / 32;
 *  - a random job's lease of 24-empty positions, every answer made up:
 *    verify solves nothing, so it passes unreplicated with 1 - n / 32
 *    (n = 8) and never for n >= 32;
 *  - a file job of 8 deep and 24 shallow positions (one colour only on
 *    the board: the game is over, so they cost nothing to solve here):
 *    an honest result asks for a replica with 8 / 32; a result whose
 *    shallow answers are all made up fails (the one position re-solved is
 *    shallow) with 24 / 32 and otherwise asks for a replica with 8 / 32:
 *    the spot draw comes only after everything else passed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "detect_fx.h"
#include "gerr.h"
#include "mix.h"
#include "othello/othello.h"
#include "othello/othello_wl.h"

extern const struct workload othello_workload;
static const struct workload *W = &othello_workload;

/* How often verify answers 0, WL_VERIFY_SPOT and GERR_VERIFY over nseeds
 * seeds; any other answer fails the test. */
struct tally {
	unsigned pass, spot, fail;
};

static struct tally verify_tally(const json_t *params, const json_t *spec,
				 const void *res, size_t len, unsigned nseeds,
				 uint64_t seed0)
{
	struct tally t = {0};
	uint64_t s = seed0;

	for (unsigned i = 0; i < nseeds; i++) {
		char err[WL_ERRLEN] = "";
		int rc;
		s += MIX_GOLDEN;
		rc = W->verify(workload_ctx(W), params, spec, res, len, mix64(s),
			       err, sizeof(err));
		if (rc == 0)
			t.pass++;
		else if (rc == WL_VERIFY_SPOT)
			t.spot++;
		else if (rc == GERR_VERIFY)
			t.fail++;
		else
			fail_msg("verify: %s (%s)", gerr_str(rc), err);
	}
	return t;
}

/* The draw alone: min(1, d / 32) over 4,000 seeds. */
static void test_draw_rate(void **state)
{
	static const uint64_t ds[] = {0, 1, 8, 20, 31, 32, 40, 100000};

	(void)state;
	for (size_t k = 0; k < sizeof(ds) / sizeof(ds[0]); k++) {
		unsigned spots = 0, n = 4000;
		double p = ds[k] >= 32 ? 1.0 : (double)ds[k] / 32.0;
		char what[64];
		for (unsigned i = 0; i < n; i++)
			spots += othello_verify_spot(ds[k],
						     mix64(i * MIX_GOLDEN + 34));
		snprintf(what, sizeof(what), "othello spot draw d=%llu",
			 (unsigned long long)ds[k]);
		/* detect_expect counts passes: 1 - p of them. */
		detect_expect(what, 1.0, n - spots, n, 1.0 - p);
		if (p == 1.0)
			assert_int_equal(spots, n);
		if (p == 0.0)
			assert_int_equal(spots, 0);
	}
}

/* A random job's first lease of n positions of e empties, every answer
 * made up (in the window, a move with each), without running it. */
static void made_up_lease(uint64_t n, int e, json_t **ret_params,
			  json_t **ret_spec, void **ret_res, size_t *ret_len)
{
	char args_text[128], err[WL_ERRLEN] = "";
	json_t *args, *cursor = NULL;
	struct othello_res r;
	uint64_t total, units;
	int last;

	snprintf(args_text, sizeof(args_text), "{\"random\": \"%llu\", "
		 "\"empties\": \"%d\", \"seed\": \"37\"}",
		 (unsigned long long)n, e);
	args = json_loads(args_text, 0, NULL);
	assert_non_null(args);
	assert_int_equal(W->parse_params(workload_ctx(W), args, ret_params,
					 &total, err, sizeof(err)), 0);
	assert_int_equal(W->carve(workload_ctx(W), *ret_params, NULL, NULL,
				  NULL, n, ret_spec, &units, &cursor, &last),
			 0);
	assert_int_equal(units, n);
	assert_int_equal(othello_res_init(&r, 0, n, 0), 0);
	for (uint64_t i = 0; i < n; i++) {
		r.score[i] = (int8_t)(2 * (int)(i % 7) - 6);
		r.move[i] = (uint8_t)(19 + i % 5);
	}
	r.done = n;
	assert_int_equal(othello_res_encode(&r, 0, ret_res, ret_len), 0);
	othello_res_clear(&r);
	json_decref(cursor);
	json_decref(args);
}

static void test_made_up_deep(void **state)
{
	static const uint64_t ns[] = {8, 32, 40};

	(void)state;
	for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		json_t *params, *spec;
		void *res;
		size_t len;
		unsigned nseeds = 400;
		double p = ns[k] >= 32 ? 0.0 : 1.0 - (double)ns[k] / 32.0;
		char what[64];

		made_up_lease(ns[k], OTHELLO_VERIFY_MAX_EMPTIES + 2, &params,
			      &spec, &res, &len);
		struct tally t = verify_tally(params, spec, res, len, nseeds,
					      ns[k] * 7);
		/* Nothing of it is re-solved: never a failure. */
		assert_int_equal(t.fail, 0);
		snprintf(what, sizeof(what), "othello E=24 n=%llu all made up",
			 (unsigned long long)ns[k]);
		detect_expect(what, 1.0, t.pass, nseeds, p);
		free(res);
		json_decref(spec);
		json_decref(params);
	}
}

/* One-colour positions: X covers every square but `empties` of them
 * (their places drawn from i), the side to move alternating. */
static size_t board_line(char *out, unsigned i, int empties)
{
	char b[65];
	uint64_t h = mix64(i + 1000);

	memset(b, 'X', 64);
	b[64] = 0;
	for (int e = 0; e < empties;) {
		h = mix64(h + MIX_GOLDEN);
		if (b[h % 64] == 'X') {
			b[h % 64] = '-';
			e++;
		}
	}
	return (size_t)sprintf(out, "%s %c\n", b, i % 2 ? 'O' : 'X');
}

static void test_file_mixed(void **state)
{
	json_t *args = json_pack("{s:s}", "file", "spot.obf"), *params, *np;
	json_t *spec = json_pack("{s:I, s:I}", "begin", (json_int_t)0,
				 "count", (json_int_t)32);
	char *text = malloc(32 * 80), err[WL_ERRLEN] = "";
	size_t tl = 0, clen, len;
	struct othello_pos *pos = NULL;
	struct othello_res r;
	uint64_t total, P[32], O[32], nodes;
	void *canon, *res;
	unsigned nseeds = 600;

	(void)state;
	/* Positions 0, 4, 8, ...: 23 empties; the rest 12. */
	for (unsigned i = 0; i < 32; i++)
		tl += board_line(text + tl, i, i % 4 == 0 ?
				 OTHELLO_VERIFY_MAX_EMPTIES + 1 : 12);
	assert_int_equal(W->parse_params(workload_ctx(W), args, &params, &total,
					 err, sizeof(err)), 0);
	assert_int_equal(W->parse_input(workload_ctx(W), params, text, tl, &np,
					&canon, &clen, &total, err,
					sizeof(err)), 0);
	assert_int_equal(total, 32);
	/* gpud adds the input blob's name; verify reads only params. */
	json_object_set_new(np, "input", json_string("0123456789abcdef"));
	assert_int_equal(othello_input_read(canon, clen, 0, 0, &pos, err,
					    sizeof(err)), 0);
	/* The honest result (the games are over: no search). */
	assert_int_equal(othello_res_init(&r, 0, 32, 1), 0);
	for (unsigned i = 0; i < 32; i++) {
		r.pos[i] = pos[i];
		othello_pos_pov(&pos[i], &P[i], &O[i]);
	}
	assert_int_equal(othello_solve_batch_window(P, O, 32, -65, 65, 1,
						    r.score, r.move, &nodes,
						    NULL, NULL), 0);
	r.done = 32;
	assert_int_equal(othello_res_encode(&r, 0, &res, &len), 0);
	struct tally t = verify_tally(np, spec, res, len, nseeds, 71);
	assert_int_equal(t.fail, 0);
	detect_expect("othello file 8 deep of 32, honest", 1.0, t.pass,
		      nseeds, 1.0 - 8.0 / 32.0);
	free(res);

	/* Every shallow answer made up; the deep ones right. */
	for (unsigned i = 0; i < 32; i++)
		if (i % 4)
			r.score[i] = (int8_t)(r.score[i] > 0 ? r.score[i] - 2 :
					      r.score[i] + 2);
	assert_int_equal(othello_res_encode(&r, 0, &res, &len), 0);
	t = verify_tally(np, spec, res, len, nseeds, 72);
	detect_expect("othello file, 24 shallow made up: fails", 1.0,
		      nseeds - t.fail, nseeds, 8.0 / 32.0);
	detect_expect("othello file, 24 shallow made up: unreplicated", 1.0,
		      t.pass, nseeds, 8.0 / 32.0 * 24.0 / 32.0);
	free(res);
	othello_res_clear(&r);
	free(pos);
	free(canon);
	free(text);
	json_decref(spec);
	json_decref(np);
	json_decref(params);
	json_decref(args);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_draw_rate),
		cmocka_unit_test(test_made_up_deep),
		cmocka_unit_test(test_file_mixed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
