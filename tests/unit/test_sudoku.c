/* test_sudoku.c - the Sudoku workload: wide integers, box parsing, every
 * small shape against its published total, the 4x3 gangster enumeration
 * invariants, formats, parameters, carving (4x3 coverage and alignment),
 * run/verify/merge/finish/render/export on the small shapes, an answer
 * that does not grow with the leases, finish deciding by invariants, and
 * refusal of corrupted results. The 4x3 band counts and T (a minute of 16
 * cores) are exercised by tests/gpu/test_sudoku_gpu.c and
 * tools/bench/bench_sudoku. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gerr.h"
#include "parts_list.h"
#include "sudoku/sudoku.h"
#include "sudoku/sudoku_count.h"
#include "sudoku/sudoku_format.h"
#include "sudoku/sudoku_internal.h"
#include "sudoku/sudoku_wide.h"
#include "workload.h"

/* carve's last-lease flag, where a test does not look at it. */
static int carve_last;

extern const struct workload sudoku_workload;
static const struct workload *W = &sudoku_workload;

/* ---- wide integers ------------------------------------------------------- */

static void test_wide(void **state)
{
	struct u256 a = u256_of(UINT64_MAX, 0), b = u256_of(1, 0), c, d;
	char buf[U256_DECLEN];

	(void)state;
	assert_int_equal(u256_add(&a, &b), 0);
	assert_true(a.w[0] == 0 && a.w[1] == 1);
	u256_to_dec(&a, buf);
	assert_string_equal(buf, "18446744073709551616");
	assert_int_equal(u256_from_dec("340282366920938463463374607431768211456", &c), 0);
	assert_true(c.w[0] == 0 && c.w[1] == 0 && c.w[2] == 1 && c.w[3] == 0);
	assert_int_equal(u256_bits(&c), 129);
	/* 2^255 * 2 overflows, 2^255 + 2^255 too */
	d = u256_of(0, 0);
	d.w[3] = 1ull << 63;
	c = d;
	assert_int_equal(u256_mul_u64(&c, 2), 1);
	c = d;
	assert_int_equal(u256_add(&c, &d), 1);
	assert_int_equal(u256_mul(&d, &d, &c), 1);
	/* (2^64 + 3)(2^64 + 5) = 2^128 + 8 * 2^64 + 15 */
	a = u256_of(3, 1);
	b = u256_of(5, 1);
	assert_int_equal(u256_mul(&a, &b, &c), 0);
	assert_true(c.w[0] == 15 && c.w[1] == 8 && c.w[2] == 1 && c.w[3] == 0);
	/* the 4x3 total round-trips and has 156 bits */
	assert_int_equal(u256_from_dec("81171437193104932746936103027318645818654720000", &a), 0);
	assert_int_equal(u256_bits(&a), 156);
	u256_to_dec(&a, buf);
	assert_string_equal(buf, "81171437193104932746936103027318645818654720000");
	b = a;
	assert_int_equal(u256_div_u64(&b, 479001600), 0); /* 12! divides it */
	assert_int_equal(u256_mul_u64(&b, 479001600), 0);
	assert_int_equal(u256_cmp(&a, &b), 0);
	assert_int_equal(u256_from_dec("", &a), -1);
	assert_int_equal(u256_from_dec("12a", &a), -1);
	assert_int_equal(u256_from_dec("2315841784746323908471419700173758157065399693312811280789151680158262592339840", &a), -1);
	u256_to_dec(&(struct u256){ { 0, 0, 0, 0 } }, buf);
	assert_string_equal(buf, "0");
	/* factor of 4x3: 6^4 * 5775 * 24^3 */
	assert_int_equal(sudoku_factor(4, 3, 5775, &a), 0);
	u256_to_dec(&a, buf);
	assert_string_equal(buf, "103464345600");
}

static void test_parse_box(void **state)
{
	char err[WL_ERRLEN];
	int R, C;

	(void)state;
	assert_int_equal(sudoku_parse_box("4x3", &R, &C, err, sizeof(err)), 0);
	assert_true(R == 4 && C == 3);
	assert_int_equal(sudoku_parse_box("3x4", &R, &C, err, sizeof(err)), 0);
	assert_true(R == 4 && C == 3);
	assert_int_equal(sudoku_parse_box("2x5", &R, &C, err, sizeof(err)), 0);
	assert_true(R == 5 && C == 2);
	assert_int_equal(sudoku_parse_box("2x3", &R, &C, err, sizeof(err)), 0);
	assert_true(R == 2 && C == 3);
	assert_int_equal(sudoku_parse_box("3x2", &R, &C, err, sizeof(err)), 0);
	assert_true(R == 3 && C == 2);
	assert_int_equal(sudoku_parse_box(" 3 X 3 ", &R, &C, err, sizeof(err)), 0);
	assert_int_equal(sudoku_parse_box("6x2", &R, &C, err, sizeof(err)),
			 GERR_UNSUPPORTED);
	assert_int_equal(sudoku_parse_box("4x4", &R, &C, err, sizeof(err)), GERR_INVAL);
	assert_int_equal(sudoku_parse_box("1x9", &R, &C, err, sizeof(err)), GERR_INVAL);
	assert_int_equal(sudoku_parse_box("4x3x", &R, &C, err, sizeof(err)), GERR_INVAL);
	assert_int_equal(sudoku_parse_box("four", &R, &C, err, sizeof(err)), GERR_INVAL);
	assert_int_equal(sudoku_parse_box(NULL, &R, &C, err, sizeof(err)), GERR_INVAL);
}

/* ---- small shapes against the published totals --------------------------- */

static void total_of(const struct sudoku_setup *S, char *buf)
{
	struct u256 sum = u256_of(0, 0), f, tot;

	for (uint32_t s = 0; s < S->nnodes; s++) {
		uint32_t a = S->set_start[s], b = S->set_start[s + 1];
		uint64_t(*w)[2];
		if (a == b)
			continue;
		w = calloc(b - a, sizeof(*w));
		assert_non_null(w);
		if (S->C == 3)
			assert_int_equal(sudoku_w_cpu(S, NULL, 0, a, b, 2, w), 0);
		for (uint32_t g = a; g < b; g++) {
			struct u256 t;
			assert_int_equal(sudoku_term(S->members[g], S->cnt[g],
						     w[g - a], S->C, &t), 0);
			assert_int_equal(u256_add(&sum, &t), 0);
		}
		free(w);
	}
	assert_int_equal(sudoku_factor(S->R, S->C, S->K, &f), 0);
	assert_int_equal(u256_mul(&f, &sum, &tot), 0);
	u256_to_dec(&tot, buf);
}

static void check_members(const struct sudoku_setup *S)
{
	struct u256 m = u256_of(0, 0), k = u256_of(1, 0);
	for (uint32_t g = 0; g < S->ngang; g++) {
		struct u256 t = u256_of(S->members[g], 0);
		u256_add(&m, &t);
	}
	for (int i = 1; i < S->R; i++)
		u256_mul_u64(&k, S->K);
	assert_int_equal(u256_cmp(&m, &k), 0);
}

static void test_small_totals(void **state)
{
	static const struct {
		int R, C;
		uint32_t K, gang;
		const char *total;
	} cases[] = {
		{ 2, 2, 3, 0, "288" },
		{ 3, 2, 10, 0, "28200960" },
		{ 2, 3, 15, 0, "28200960" },
		{ 4, 2, 35, 0, "29136487207403520" },
		{ 3, 3, 280, 44, "6670903752021072936960" },
	};
	char err[WL_ERRLEN] = "", buf[U256_DECLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sudoku_setup *S = NULL;
		assert_int_equal(sudoku_setup_build(cases[i].R, cases[i].C,
						    SUDOKU_BUILD_T, 2, &S, err,
						    sizeof(err)), 0);
		assert_int_equal(S->K, cases[i].K);
		if (cases[i].gang)
			assert_int_equal(S->ngang, cases[i].gang);
		check_members(S);
		total_of(S, buf);
		assert_string_equal(buf, cases[i].total);
		sudoku_setup_free(S);
	}
}

/* The band count of a whole band equals all fillings / R!: check by brute
 * force on 2x3 bands (2 rows of 6). */
static void test_band_count_brute(void **state)
{
	struct sudoku_setup *S = NULL;
	char err[WL_ERRLEN];

	(void)state;
	assert_int_equal(sudoku_setup_build(2, 3, 0, 1, &S, err, sizeof(err)), 0);
	for (uint32_t c1 = 0; c1 < S->K; c1++) {
		uint16_t codes[2] = { 0, (uint16_t)c1 };
		/* rows: row 0 has one symbol per column of each box; fillings
		 * = choose for each of the 6 columns which of its 2 symbols is
		 * on top, row 0 a permutation of the 6 symbols */
		uint64_t fill = 0;
		for (uint32_t m = 0; m < 64; m++) {
			uint32_t row0 = 0;
			int ok = 1;
			for (int j = 0; j < 2 && ok; j++)
				for (int k = 0; k < 3; k++) {
					uint32_t col = S->masks[codes[j]][k];
					uint32_t lo = col & -col, hi = col & ~lo;
					uint32_t top = (m >> (j * 3 + k) & 1) ? hi : lo;
					if (row0 & top)
						ok = 0;
					row0 |= top;
				}
			if (ok && row0 == 63)
				fill++;
		}
		assert_int_equal(sudoku_band_count(S, codes) * 2, fill);
	}
	sudoku_setup_free(S);
}

/* 4x3: enumeration only (about 2 s). */
static void test_4x3_enumeration(void **state)
{
	const struct sudoku_setup *S = NULL;
	char err[WL_ERRLEN] = "";
	static const uint32_t sizes[9] = { 865, 11989, 10518, 63042, 54060,
					   1259, 1273, 1519, 53 };

	(void)state;
	assert_int_equal(sudoku_ctx_setup(workload_ctx(W), 4, 3, 0, 2, &S, err,
					  sizeof(err)), 0);
	assert_int_equal(S->K, 5775);
	assert_int_equal(S->nnodes, 9);
	assert_int_equal(S->ncompat, 346);
	assert_int_equal(S->ngang, 144578);
	check_members(S);
	for (uint32_t s = 0; s < 9; s++)
		assert_int_equal(S->set_start[s + 1] - S->set_start[s], sizes[s]);
	/* the gangster of a random band reduces to a member of it */
	{
		uint16_t codes[4] = { 0, 1, 2, 3 };
		uint32_t e = sudoku_reduce(S, codes);
		assert_true(e < S->nred);
		assert_true(S->red_gang[e] < S->ngang);
		uint16_t sw[4] = { 0, 1, 3, 2 };
		assert_int_equal(S->red_gang[sudoku_reduce(S, sw)], S->red_gang[e]);
	}
}

/* ---- formats --------------------------------------------------------------- */

static void test_format(void **state)
{
	uint64_t v[3][2] = { { 2, 0 }, { 4, 1 }, { UINT64_MAX, 7 } };
	struct sudoku_res r = {.R = 4, .C = 3, .from = 10, .to = 13, .done = 3,
			       .v = v}, d;
	char err[WL_ERRLEN];
	void *b;
	size_t len;

	(void)state;
	assert_int_equal(sudoku_res_encode(&r, 0, &b, &len), 0);
	assert_int_equal(len, SUDOKU_HDR_LEN + 48);
	assert_int_equal(sudoku_res_decode(b, len, 0, &d, err, sizeof(err)), 0);
	assert_true(d.R == 4 && d.C == 3 && d.from == 10 && d.to == 13 && d.done == 3);
	assert_memory_equal(d.v, v, sizeof(v));
	free(d.v);
	assert_int_equal(sudoku_res_decode(b, len - 1, 0, &d, err, sizeof(err)), GERR_CORRUPT);
	assert_int_equal(sudoku_res_decode(b, len, 1, &d, err, sizeof(err)), GERR_CORRUPT);
	((uint8_t *)b)[20] = 2; /* done != to - from */
	assert_int_equal(sudoku_res_decode(b, len, 0, &d, err, sizeof(err)), GERR_CORRUPT);
	((uint8_t *)b)[20] = 3;
	((uint8_t *)b)[16] = 0xff; /* to out of range */
	assert_int_equal(sudoku_res_decode(b, len, 0, &d, err, sizeof(err)), GERR_CORRUPT);
	free(b);
	r.done = 1;
	assert_int_equal(sudoku_res_encode(&r, 0, &b, &len), GERR_INVAL);
	assert_int_equal(sudoku_res_encode(&r, 1, &b, &len), 0);
	assert_int_equal(sudoku_res_decode(b, len, 1, &d, err, sizeof(err)), 0);
	assert_int_equal(d.done, 1);
	free(d.v);
	free(b);
}

/* Version 2 carries W's pieces; version 1 (no pieces) still decodes. */
static void test_format_pieces(void **state)
{
	const uint32_t P = SUDOKU_PIECES;
	uint64_t(*v)[2] = calloc(2 * (1 + P), 16);
	struct sudoku_res r = {.R = 4, .C = 3, .from = 7, .to = 9, .done = 2,
			       .pieces = (uint16_t)P, .v = v, .piece = v + 2}, d;
	char err[WL_ERRLEN];
	uint8_t *b;
	size_t len;

	(void)state;
	for (uint32_t i = 0; i < 2 * (1 + P); i++)
		v[i][0] = 2 * i + 2;
	assert_int_equal(sudoku_res_encode(&r, 0, (void **)&b, &len), 0);
	assert_int_equal(len, SUDOKU_HDR_LEN + 16 * 2 * (1 + P));
	assert_int_equal(sudoku_res_decode(b, len, 0, &d, err, sizeof(err)), 0);
	assert_int_equal(d.pieces, P);
	assert_ptr_equal(d.piece, d.v + 2);
	assert_memory_equal(d.v, v, 16 * 2 * (1 + P));
	free(d.v);
	b[10] = 7; /* another number of pieces */
	assert_int_equal(sudoku_res_decode(b, len, 0, &d, err, sizeof(err)), GERR_CORRUPT);
	b[10] = (uint8_t)P;
	b[4] = 1; /* version 1 had none */
	assert_int_equal(sudoku_res_decode(b, len, 0, &d, err, sizeof(err)), GERR_CORRUPT);
	b[10] = b[11] = 0;
	assert_int_equal(sudoku_res_decode(b, SUDOKU_HDR_LEN + 32, 0, &d, err,
					   sizeof(err)), 0);
	assert_int_equal(d.pieces, 0);
	assert_null(d.piece);
	free(d.v);
	free(b);
	r.C = 2; /* pieces only for three bands */
	assert_int_equal(sudoku_res_encode(&r, 0, (void **)&b, &len), GERR_INVAL);
	free(v);
}

/* ---- the workload ------------------------------------------------------------ */

static json_t *params_of(const char *box, uint64_t *units)
{
	char err[WL_ERRLEN] = "";
	json_t *args = json_pack("{s:s}", "box", box), *p = NULL;
	assert_int_equal(W->parse_params(workload_ctx(W), args, &p, units, err, sizeof(err)), 0);
	json_decref(args);
	return p;
}

static void test_parse_params(void **state)
{
	char err[WL_ERRLEN];
	json_t *p = NULL, *a;
	uint64_t u;

	(void)state;
	p = params_of("3x4", &u);
	assert_string_equal(json_string_value(json_object_get(p, "box")), "4x3");
	assert_int_equal(u, 144578);
	json_decref(p);
	p = params_of("2x2", &u);
	assert_int_equal(u, 2); /* gangsters: 2x2 has 2 */
	json_decref(p);
	a = json_pack("{s:s, s:s}", "box", "3x3", "seed", "1");
	assert_int_equal(W->parse_params(workload_ctx(W), a, &p, &u, err, sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, "unknown parameter"));
	json_decref(a);
	a = json_object();
	assert_int_equal(W->parse_params(workload_ctx(W), a, &p, &u, err, sizeof(err)), GERR_INVAL);
	json_decref(a);
	a = json_pack("{s:s}", "box", "5x5");
	assert_int_equal(W->parse_params(workload_ctx(W), a, &p, &u, err, sizeof(err)), GERR_INVAL);
	json_decref(a);
	a = json_pack("{s:s}", "box", "2x6");
	assert_int_equal(W->parse_params(workload_ctx(W), a, &p, &u, err, sizeof(err)), GERR_UNSUPPORTED);
	json_decref(a);
	a = json_pack("{s:i}", "box", 4);
	assert_int_equal(W->parse_params(workload_ctx(W), a, &p, &u, err, sizeof(err)), GERR_INVAL);
	json_decref(a);
	assert_int_equal(W->parse_params(workload_ctx(W), NULL, &p, &u, err, sizeof(err)), GERR_INVAL);
}

static void test_carve_4x3(void **state)
{
	const struct sudoku_setup *S = NULL;
	char err[WL_ERRLEN];
	uint64_t u, units, covered = 0, n = 0;
	json_t *p = params_of("4x3", &u), *cur = NULL;

	(void)state;
	assert_int_equal(sudoku_ctx_setup(workload_ctx(W), 4, 3, 0, 2, &S, err,
					  sizeof(err)), 0);
	for (;;) {
		json_t *spec = NULL, *nc = NULL;
		int rc = W->carve(workload_ctx(W), p, cur, NULL, NULL, n % 3 ? 0 : 1 + n % 200, &spec,
				  &units, &nc, &carve_last);
		if (rc == GERR_DONE)
			break;
		assert_int_equal(rc, 0);
		uint64_t from = (uint64_t)json_integer_value(json_object_get(spec, "from"));
		uint64_t to = (uint64_t)json_integer_value(json_object_get(spec, "to"));
		json_int_t set = json_integer_value(json_object_get(spec, "set"));
		assert_int_equal(from, covered);
		assert_true(to > from && units == to - from);
		assert_int_equal(carve_last, to == 144578); /* the last lease says so */
		assert_true(from >= S->set_start[set] && to <= S->set_start[set + 1]);
		/* ends on a c2 group boundary or on a multiple of 16 in it */
		if (to < S->set_start[set + 1] &&
		    S->gang_tuple[to * 3 + 1] == S->gang_tuple[(to - 1) * 3 + 1])
			assert_int_equal((to - from) % 16, 0);
		covered = to;
		n++;
		json_decref(cur);
		json_decref(spec);
		cur = nc;
	}
	assert_int_equal(covered, 144578);
	json_decref(cur);
	json_decref(p);
}

struct fake_io {
	uint64_t last;
	int ckpts;
};

static void io_progress(void *o, uint64_t d)
{
	((struct fake_io *)o)->last = d;
}
static int io_due(void *o)
{
	(void)o;
	return 1;
}
static int io_ckpt(void *o, const void *b, size_t l, uint64_t u)
{
	(void)b;
	(void)l;
	(void)u;
	((struct fake_io *)o)->ckpts++;
	return 0;
}
static int io_stop(void *o)
{
	(void)o;
	return 0;
}

/* The total recomputed from a counts export: factor * sum of members *
 * cnt * V over its lines, with the workload's own setup. */
static void total_of_export(const json_t *p, const char *text, uint32_t ngang,
			    char *buf)
{
	const struct sudoku_setup *S = NULL;
	char err[WL_ERRLEN] = "", head[128];
	struct u256 sum = u256_of(0, 0), f, tot;
	const char *at = strchr(text, '\n');
	int R = (int)json_integer_value(json_object_get(p, "rows"));
	int C = (int)json_integer_value(json_object_get(p, "cols"));
	uint32_t n = 0;

	assert_int_equal(sudoku_ctx_setup(workload_ctx(W), R, C, SUDOKU_BUILD_T,
					  2, &S, err, sizeof(err)), 0);
	snprintf(head, sizeof(head), "index,count\n");
	assert_non_null(at);
	assert_memory_equal(text, head, strlen(head));
	for (at++; *at; n++) {
		char idx[16], dec[U256_DECLEN];
		struct u256 v, t;
		uint64_t w[2];
		assert_int_equal(sscanf(at, "%15[0-9],%79[0-9]", idx, dec), 2);
		assert_int_equal(strtoul(idx, NULL, 10), n);
		assert_int_equal(u256_from_dec(dec, &v), 0);
		w[0] = v.w[0];
		w[1] = v.w[1];
		assert_int_equal(sudoku_term(S->members[n], S->cnt[n], w, C, &t), 0);
		assert_int_equal(u256_add(&sum, &t), 0);
		at = strchr(at, '\n');
		assert_non_null(at);
		at++;
	}
	assert_int_equal(n, ngang);
	assert_int_equal(sudoku_factor(R, C, S->K, &f), 0);
	assert_int_equal(u256_mul(&f, &sum, &tot), 0);
	u256_to_dec(&tot, buf);
}

/* Results of several leases by hash, for export and plots. */
#define MEM_MAX 16
struct mem_set {
	int n;
	char hash[MEM_MAX][8];
	void *bytes[MEM_MAX];
	size_t len[MEM_MAX];
};

static int mem_set_fetch(void *o, const char *hash, void **ret,
			 size_t *ret_len)
{
	const struct mem_set *m = o;
	for (int i = 0; i < m->n; i++)
		if (strcmp(hash, m->hash[i]) == 0) {
			*ret = malloc(m->len[i]);
			assert_non_null(*ret);
			memcpy(*ret, m->bytes[i], m->len[i]);
			*ret_len = m->len[i];
			return 0;
		}
	return GERR_NOTFOUND;
}

/* Every small shape through carve (leases of gangster ranges, one set
 * each), run, verify, merge, finish, render and export, against the
 * published totals (asserted here, not by the workload). */
static void test_workload_small(void **state)
{
	static const char *boxes[] = { "2x2", "2x3", "3x2", "2x4", "3x3" };
	static const char *totals[] = { "288", "28200960", "28200960",
					"29136487207403520",
					"6670903752021072936960" };

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		char err[WL_ERRLEN] = "", buf[U256_DECLEN];
		uint64_t u, units, sum_units = 0;
		json_t *p = params_of(boxes[i], &u), *spec = NULL, *cur = NULL,
		       *ans = NULL, *note = NULL, *ans2 = NULL,
		       *args = json_object(), *first = NULL;
		struct fake_io fio = { 0, 0 };
		struct wl_run_io io = { &fio, io_progress, io_due, io_ckpt,
					io_stop, NULL };
		struct wl_device dev = { WL_DEVICE_CPU, 0, 2, NULL };
		struct parts_list parts, none;
		struct mem_set ms = { 0 };
		struct wl_blob_reader rd = { &ms, mem_set_fetch };
		void *out = NULL;
		size_t olen;
		char *text;
		int last = 0, rc;

		parts_list_init(&parts);
		parts_list_init(&none);
		json_t *nc = NULL;
		while ((rc = W->carve(workload_ctx(W), p, cur, ans, NULL, 1u << 20,
				      &spec, &units, &nc, &last)) == 0) {
			/* the cursor after this lease replaces the one before */
			json_decref(cur);
			cur = nc;
			nc = NULL;
			void *res = NULL;
			size_t len;
			assert_true(ms.n < MEM_MAX);
			assert_false(last && sum_units + units != u);
			sum_units += units;
			assert_int_equal(W->run(workload_ctx(W), p, spec, NULL, 0, &dev, &io,
						&res, &len, err, sizeof(err)), 0);
			assert_int_equal(fio.last, units); /* progress in gangsters */
			assert_int_equal(W->verify(workload_ctx(W), p, spec, res, len, 7, err,
						   sizeof(err)), 0);
			/* a flipped V is caught (odd, or a recount/band count
			 * mismatch) */
			((uint8_t *)res)[SUDOKU_HDR_LEN] ^= 2;
			assert_int_equal(W->verify(workload_ctx(W), p, spec, res, len, 7, err,
						   sizeof(err)), GERR_VERIFY);
			((uint8_t *)res)[SUDOKU_HDR_LEN] ^= 2;
			assert_int_equal(W->verify(workload_ctx(W), p, spec, res, len - 16, 7,
						   err, sizeof(err)), GERR_VERIFY);
			snprintf(ms.hash[ms.n], sizeof(ms.hash[0]), "r%d", ms.n);
			assert_int_equal(W->merge(workload_ctx(W), p, ans, spec, res, len,
						  ms.hash[ms.n], &ans2, &note), 0);
			json_decref(ans);
			ans = ans2;
			ans2 = NULL;
			assert_non_null(note);
			assert_int_equal(parts_list_add(&parts, spec, units, ms.hash[ms.n],
							note), 0);
			json_decref(note);
			note = NULL;
			ms.bytes[ms.n] = res;
			ms.len[ms.n++] = len;
			if (!first)
				first = spec;
			else
				json_decref(spec);
			spec = NULL;
		}
		assert_int_equal(rc, GERR_DONE);
		assert_int_equal(last, 1);
		assert_int_equal(sum_units, u);
		/* the first lease again would count more gangsters than there
		 * are */
		assert_int_equal(W->merge(workload_ctx(W), p, ans, first, ms.bytes[0],
					  ms.len[0], "r0", &ans2, NULL), GERR_INVAL);
		assert_int_equal(W->finish(workload_ctx(W), p, ans, &parts.pub, err, sizeof(err)), 0);
		assert_string_equal(json_string_value(json_object_get(ans, "total")),
				    totals[i]);
		text = W->render_text(workload_ctx(W), p, ans, &parts.pub);
		assert_non_null(strstr(text, totals[i]));
		assert_null(strstr(text, "published"));
		free(text);
		/* the counts export gives the total back */
		assert_int_equal(W->export_data(workload_ctx(W), p, ans, &parts.pub, "counts",
						args, &rd, &out, &olen, err, sizeof(err)), 0);
		out = realloc(out, olen + 1);
		((char *)out)[olen] = '\0';
		total_of_export(p, out, (uint32_t)json_integer_value(
					json_object_get(ans, "gangsters")), buf);
		assert_string_equal(buf, totals[i]);
		free(out);
		/* the plot reads the same counts from the blobs */
		{
			char *svg = NULL;
			size_t slen = 0;
			assert_int_equal(W->render_plot(workload_ctx(W), p, ans, &parts.pub,
							&rd, &svg, &slen, err, sizeof(err)), 0);
			assert_non_null(strstr(svg, "viewBox="));
			/* few gangsters: one bar each, by index */
			assert_non_null(strstr(svg, "class=\"bar gangster\""));
			assert_non_null(strstr(svg, ">gangster (index)</text>"));
			assert_null(strstr(svg, "e+"));
			free(svg);
		}
		assert_int_equal(W->export_data(workload_ctx(W), p, ans, &parts.pub, "values",
						args, &rd, &out, &olen, err, sizeof(err)), GERR_INVAL);
		snprintf(ms.hash[0], sizeof(ms.hash[0]), "other");
		assert_int_equal(W->export_data(workload_ctx(W), p, ans, &parts.pub, "counts",
						args, &rd, &out, &olen, err, sizeof(err)), GERR_NOTFOUND);
		/* finish needs every lease in the parts */
		assert_int_equal(W->finish(workload_ctx(W), p, ans, &none.pub, err, sizeof(err)),
				 GERR_VERIFY);
		/* a tampered total fails finish */
		json_object_set_new(ans, "total", json_string("1"));
		assert_int_equal(W->finish(workload_ctx(W), p, ans, &parts.pub, err, sizeof(err)), GERR_VERIFY);
		/* a checkpoint for another lease is refused */
		{
			uint64_t v[1][2] = { { 0, 0 } };
			struct sudoku_res r = {.R = 4, .C = 3, .from = 0, .to = 5,
					       .done = 1, .v = v};
			void *ck;
			size_t cl;
			assert_int_equal(sudoku_res_encode(&r, 1, &ck, &cl), 0);
			assert_int_equal(W->check_checkpoint(workload_ctx(W), p, first, ck, cl, err,
							     sizeof(err)), GERR_VERIFY);
			free(ck);
		}
		parts_list_clear(&parts);
		for (int k = 0; k < ms.n; k++)
			free(ms.bytes[k]);
		json_decref(args);
		json_decref(ans);
		json_decref(first);
		json_decref(cur);
		json_decref(p);
	}
}

/* A whole small job: every lease carved, run and merged into *ret_ans
 * (parts in *parts), the results kept in *ms; the first lease's first V
 * raised by bump (even: still a plausible W) before it is merged. Returns
 * the first lease's spec. */
static json_t *job_all(const json_t *p, struct mem_set *ms,
		       struct parts_list *parts, json_t **ret_ans, uint8_t bump)
{
	char err[WL_ERRLEN] = "";
	json_t *spec = NULL, *cur = NULL, *ans = NULL, *a2 = NULL, *note = NULL,
	       *first = NULL;
	uint64_t units;
	int last = 0;

	ms->n = 0;
	json_t *nc = NULL;
	while (W->carve(workload_ctx(W), p, cur, ans, NULL, 1u << 20, &spec,
			&units, &nc, &last) == 0) {
		/* the cursor after this lease replaces the one before */
		json_decref(cur);
		cur = nc;
		nc = NULL;
		void *res = NULL;
		size_t len;
		assert_true(ms->n < MEM_MAX);
		assert_int_equal(W->run(workload_ctx(W), p, spec, NULL, 0, NULL, NULL,
					&res, &len, err, sizeof(err)), 0);
		if (ms->n == 0)
			((uint8_t *)res)[SUDOKU_HDR_LEN] += bump;
		snprintf(ms->hash[ms->n], sizeof(ms->hash[0]), "r%d", ms->n);
		assert_int_equal(W->merge(workload_ctx(W), p, ans, spec, res, len,
					  ms->hash[ms->n], &a2, &note), 0);
		json_decref(ans);
		ans = a2;
		assert_int_equal(parts_list_add(parts, spec, units, ms->hash[ms->n],
						note), 0);
		json_decref(note);
		note = NULL;
		ms->bytes[ms->n] = res;
		ms->len[ms->n++] = len;
		if (!first)
			first = spec;
		else
			json_decref(spec);
		spec = NULL;
	}
	json_decref(cur);
	*ret_ans = ans;
	return first;
}

static void mem_set_clear(struct mem_set *ms)
{
	for (int k = 0; k < ms->n; k++)
		free(ms->bytes[k]);
	ms->n = 0;
}

/* The answer: what does not grow with the leases (an older answer's
 * per-lease "counts" are dropped), a corrupted sum failing finish by
 * invariant, and finish passing a total that is not the published one
 * when the job's own checks hold (verify is what would catch the lease). */
static void test_answer_3x3(void **state)
{
	static const char *const keys[] = { "box", "rows", "cols", "gangsters",
		"done", "leases", "sum", "sets", "total", NULL };
	char err[WL_ERRLEN] = "";
	uint64_t u;
	json_t *p = params_of("3x3", &u), *spec = NULL, *ans = NULL, *old,
	       *a2 = NULL, *bad;
	struct parts_list parts;
	struct mem_set ms = { 0 };
	char *text, *d1, *d2;
	struct u256 s, f, t;
	char buf[U256_DECLEN];

	(void)state;
	parts_list_init(&parts);
	spec = job_all(p, &ms, &parts, &ans, 0);
	assert_true(ms.n > 1); /* 3x3 is cut in leases */
	assert_int_equal(json_object_size(ans), 9);
	for (size_t k = 0; keys[k]; k++)
		assert_non_null(json_object_get(ans, keys[k]));
	assert_int_equal(json_array_size(json_object_get(ans, "sets")), 5);
	/* an answer of before, with 1000 leases and their counts merged: the
	 * merge keeps only the constant-size fields (the last lease merged
	 * into the answer of all the others) */
	{
		json_t *lspec;
		struct wl_part lp;
		old = NULL;
		assert_int_equal(parts.pub.get(parts.pub.opaque, (uint64_t)ms.n - 1, &lp), 0);
		lspec = json_deep_copy(lp.spec);
		for (int k = 0; k < ms.n - 1; k++) {
			assert_int_equal(parts.pub.get(parts.pub.opaque, (uint64_t)k, &lp), 0);
			assert_int_equal(W->merge(workload_ctx(W), p, old, lp.spec, ms.bytes[k],
						  ms.len[k], ms.hash[k], &a2, NULL), 0);
			json_decref(old);
			old = a2;
		}
		json_decref(spec);
		spec = lspec; /* the lease merged below */
	}
	{
		json_t *counts = json_object();
		for (int l = 0; l < 1000; l++) {
			char key[16];
			snprintf(key, sizeof(key), "%d", l);
			json_object_set_new(counts, key, json_pack("[s,s]", "12", "34"));
		}
		json_object_set_new(old, "counts", counts);
	}
	json_object_set_new(old, "leases", json_integer(ms.n - 1));
	assert_int_equal(W->merge(workload_ctx(W), p, old, spec, ms.bytes[ms.n - 1],
				  ms.len[ms.n - 1], ms.hash[ms.n - 1], &a2, NULL), 0);
	assert_null(json_object_get(a2, "counts"));
	d1 = json_dumps(ans, JSON_SORT_KEYS);
	d2 = json_dumps(a2, JSON_SORT_KEYS);
	assert_string_equal(d1, d2);
	free(d1);
	free(d2);
	json_decref(old);
	json_decref(a2);
	/* a corrupted sum, its total made to agree: the set sums disagree */
	bad = json_deep_copy(ans);
	assert_int_equal(u256_from_dec(json_string_value(json_object_get(bad, "sum")), &s), 0);
	u256_add(&s, &(struct u256){ { 2, 0, 0, 0 } });
	u256_to_dec(&s, buf);
	json_object_set_new(bad, "sum", json_string(buf));
	assert_int_equal(sudoku_factor(3, 3, 280, &f), 0);
	assert_int_equal(u256_mul(&f, &s, &t), 0);
	u256_to_dec(&t, buf);
	json_object_set_new(bad, "total", json_string(buf));
	err[0] = '\0';
	assert_int_equal(W->finish(workload_ctx(W), p, bad, &parts.pub, err, sizeof(err)), GERR_VERIFY);
	assert_non_null(strstr(err, "set sums"));
	/* ... and with a set's sum moved along: the leases' noted sums do not */
	{
		json_t *s0 = json_array_get(json_object_get(bad, "sets"), 0);
		struct u256 x;
		assert_int_equal(u256_from_dec(json_string_value(json_object_get(s0, "sum")), &x), 0);
		u256_add(&x, &(struct u256){ { 2, 0, 0, 0 } });
		u256_to_dec(&x, buf);
		json_object_set_new(s0, "sum", json_string(buf));
	}
	err[0] = '\0';
	assert_int_equal(W->finish(workload_ctx(W), p, bad, &parts.pub, err, sizeof(err)), GERR_VERIFY);
	assert_non_null(strstr(err, "leases' sums"));
	json_decref(bad);
	/* a lease whose W was changed (and still even) merges to another
	 * total; finish's checks hold, so it passes: no published number
	 * decides. */
	parts_list_clear(&parts);
	parts_list_init(&parts);
	json_decref(ans);
	ans = NULL;
	mem_set_clear(&ms);
	json_decref(spec);
	spec = job_all(p, &ms, &parts, &ans, 2);
	assert_string_not_equal(json_string_value(json_object_get(ans, "total")),
				"6670903752021072936960");
	assert_int_equal(W->finish(workload_ctx(W), p, ans, &parts.pub, err, sizeof(err)), 0);
	text = W->render_text(workload_ctx(W), p, ans, &parts.pub);
	assert_non_null(strstr(text, json_string_value(json_object_get(ans, "total"))));
	free(text);
	parts_list_clear(&parts);
	mem_set_clear(&ms);
	json_decref(ans);
	json_decref(spec);
	json_decref(p);
}

static void test_bad_spec(void **state)
{
	char err[WL_ERRLEN];
	uint64_t u;
	json_t *p = params_of("3x3", &u);
	/* a lease across sets */
	json_t *spec = json_pack("{s:i, s:i, s:i}", "set", 0, "from", 0, "to", 44);
	void *res = NULL;
	size_t len;

	(void)state;
	assert_int_equal(W->run(workload_ctx(W), p, spec, NULL, 0, NULL, NULL, &res, &len, err,
				sizeof(err)), GERR_INVAL);
	json_decref(spec);
	spec = json_pack("{s:i, s:i, s:i}", "set", -1, "from", 0, "to", 43);
	assert_int_equal(W->run(workload_ctx(W), p, spec, NULL, 0, NULL, NULL, &res, &len, err,
				sizeof(err)), GERR_INVAL);
	json_decref(spec);
	json_decref(p);
}

/* The workload's context, as gpud's main opens it. */
static int group_open(void **state)
{
	char err[WL_ERRLEN] = "";

	(void)state;
	if (workload_open_all(err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

static int group_close(void **state)
{
	(void)state;
	workload_close_all();
	return 0;
}

/* The 4x3 job's plot: a histogram of W over log-spaced bins (too many
 * gangsters for a bar each). */
static void test_counts_histogram(void **state)
{
	struct sudoku_counts c = {.rows = 4, .cols = 3, .ngang = 144578};
	char err[WL_ERRLEN], *svg = NULL;
	size_t len = 0;
	int bars = 0;

	(void)state;
	c.v = calloc(c.ngang, sizeof(*c.v));
	c.seen = calloc(c.ngang, 1);
	assert_non_null(c.v);
	assert_non_null(c.seen);
	for (uint32_t g = 0; g < c.ngang; g++) {
		/* 2^60 to 2^66, spread by g */
		c.v[g][0] = (uint64_t)1 << (60 + g % 4);
		c.v[g][1] = g % 7 == 0 ? 3 : 0;
		c.seen[g] = g % 100 != 99;
		c.done += c.seen[g];
	}
	assert_int_equal(sudoku_counts_plot(&c, &svg, &len, err, sizeof(err)), 0);
	assert_non_null(strstr(svg, "viewBox="));
	assert_non_null(strstr(svg, "Sudoku 4x3: per-gangster W, 143,133 of 144,578 gangsters"));
	assert_non_null(strstr(svg, "(log scale)</text>"));
	assert_non_null(strstr(svg, ">gangsters</text>"));
	assert_null(strstr(svg, "e+"));
	for (const char *p = strstr(svg, "class=\"bar gangsters\""); p;
	     p = strstr(p + 1, "class=\"bar gangsters\""))
		bars++;
	assert_true(bars >= 5 && bars <= 48);
	free(svg);
	memset(c.seen, 0, c.ngang);
	c.done = 0;
	assert_int_equal(sudoku_counts_plot(&c, &svg, &len, err, sizeof(err)),
			 GERR_NOTFOUND);
	sudoku_counts_clear(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wide),
		cmocka_unit_test(test_parse_box),
		cmocka_unit_test(test_small_totals),
		cmocka_unit_test(test_band_count_brute),
		cmocka_unit_test(test_4x3_enumeration),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_format_pieces),
		cmocka_unit_test(test_parse_params),
		cmocka_unit_test(test_carve_4x3),
		cmocka_unit_test(test_workload_small),
		cmocka_unit_test(test_answer_3x3),
		cmocka_unit_test(test_bad_spec),
		cmocka_unit_test(test_counts_histogram),
	};
	return cmocka_run_group_tests(tests, group_open, group_close);
}
