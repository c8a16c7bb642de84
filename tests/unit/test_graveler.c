/* test_graveler.c - the Graveler workload: reference vs fast CPU path,
 * segments, formats and their invariants, checkpoint/resume, parameters,
 * carving, verification and its measured detection rate, merging,
 * finishing and rendering. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "graveler_fx.h"

#include "gerr.h"
#include "mix.h"
#include "graveler/graveler.h"
#include "graveler/graveler_cuda.h"
#include "unit_main.h"
#include "workload.h"

/* carve's last-lease flag, where a test does not look at it. */
static int carve_last;

extern const struct workload graveler_workload;
static const struct workload *W = &graveler_workload;

static uint64_t rng_state = 12345;
static uint64_t rnd(void)
{
	rng_state += MIX_GOLDEN;
	return mix64(rng_state);
}

/* Brute force over a range with the reference. */
static void brute(uint64_t seed, uint64_t begin, uint64_t end,
		  struct graveler_acc *acc)
{
	graveler_acc_init(acc, seed, begin, end);
	for (uint64_t i = begin; i < end; i++) {
		unsigned n = graveler_battle_count_ref(seed, i);
		acc->hist[n]++;
		graveler_acc_take_max(acc, n, i);
	}
	acc->next = end;
	for (uint64_t i = begin; i < end; i++) {
		unsigned n = graveler_battle_count_ref(seed, i);
		uint32_t k = graveler_chunk_segment(begin, end,
						    i / GRAVELER_CHUNK);
		if (n > acc->seg_max[k])
			acc->seg_max[k] = (uint8_t)n;
		acc->seg_sum[k] += n;
		acc->seg_sk[k] += graveler_sketch_word(n);
	}
}

static void assert_acc_equal(const struct graveler_acc *a,
			     const struct graveler_acc *b)
{
	assert_int_equal(a->next, b->next);
	assert_int_equal(a->max, b->max);
	assert_int_equal(a->first, b->first);
	assert_memory_equal(a->hist, b->hist, sizeof(a->hist));
	assert_int_equal(a->nseg, b->nseg);
	assert_memory_equal(a->seg_max, b->seg_max, a->nseg);
	assert_memory_equal(a->seg_sum, b->seg_sum,
			    a->nseg * sizeof(a->seg_sum[0]));
	assert_memory_equal(a->seg_sk, b->seg_sk,
			    a->nseg * sizeof(a->seg_sk[0]));
}

static void test_ref_vs_fast_battle(void **state)
{
	(void)state;
	const uint64_t seeds[] = {0, 1, 0xdeadbeefull, UINT64_MAX};
	for (size_t s = 0; s < 4; s++) {
		for (uint64_t i = 0; i < 600; i++)
			assert_int_equal(graveler_battle_count_ref(seeds[s], i),
					 graveler_battle_count(seeds[s], i));
		for (int r = 0; r < 200; r++) {
			uint64_t i = rnd() % GRAVELER_MAX_BATTLES;
			unsigned n = graveler_battle_count_ref(seeds[s], i);
			assert_int_equal(n, graveler_battle_count(seeds[s], i));
			assert_true(n <= GRAVELER_TURNS);
		}
	}
	/* Known answers pin the generator: changing it changes every job. */
	assert_int_equal(graveler_battle_count_ref(0, 0), 59);
	assert_int_equal(graveler_battle_count_ref(0, 1000003), 51);
	assert_int_equal(graveler_battle_count_ref(42, 999999999999999ull), 67);
}

static void test_ref_vs_cpu_ranges(void **state)
{
	(void)state;
	struct graveler_acc *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	for (int r = 0; r < 24; r++) {
		uint64_t seed = r < 4 ? (uint64_t)r : rnd();
		uint64_t begin = (r % 3 == 0) ? rnd() % 100000 * GRAVELER_CHUNK
					      : rnd() % 10000000;
		uint64_t len = 1 + rnd() % 3000;
		if (r == 5)
			begin = GRAVELER_MAX_BATTLES - len;
		brute(seed, begin, begin + len, a);
		for (int threads = 1; threads <= 3; threads++) {
			graveler_acc_init(b, seed, begin, begin + len);
			/* Several steps, as the runner takes them. */
			while (b->next < b->end) {
				uint64_t to = graveler_step_end(
					b, 1 + rnd() % 1500);
				assert_true(to == b->end ||
					    to % GRAVELER_CHUNK == 0);
				assert_int_equal(
					graveler_cpu_step(b, to, threads), 0);
			}
			assert_acc_equal(a, b);
		}
	}
	free(a);
	free(b);
}

/* Segments tile a lease's chunks evenly and the two mappings agree. */
static void test_segments(void **state)
{
	(void)state;
	for (int r = 0; r < 40; r++) {
		uint64_t len = r < 10 ? 1 + rnd() % 5000
				      : 1 + rnd() % GRAVELER_MAX_LEASE;
		uint64_t begin = rnd() % (GRAVELER_MAX_BATTLES - len);
		uint64_t end = begin + len;
		uint64_t c0 = begin / GRAVELER_CHUNK;
		uint64_t nc = (end - 1) / GRAVELER_CHUNK - c0 + 1;
		uint32_t S = graveler_nsegments(begin, end);
		assert_int_equal(S, nc < GRAVELER_SEGMENTS ? nc
							   : GRAVELER_SEGMENTS);
		assert_int_equal(graveler_segment_chunk(begin, end, 0), c0);
		assert_int_equal(graveler_segment_chunk(begin, end, S), c0 + nc);
		for (int t = 0; t < 50; t++) {
			uint32_t k = t < 2 ? (t ? S - 1 : 0)
					   : (uint32_t)(rnd() % S);
			uint64_t lo = graveler_segment_chunk(begin, end, k);
			uint64_t hi = graveler_segment_chunk(begin, end, k + 1);
			assert_true(lo < hi);
			assert_true(hi - lo <= nc / S + 1);
			assert_int_equal(graveler_chunk_segment(begin, end, lo),
					 k);
			assert_int_equal(
				graveler_chunk_segment(begin, end, hi - 1), k);
		}
	}
}

/* A lease of 3 or 4 chunks a segment, its first 2^21 battles run:
 * the CPU path's records of the done segments equal single-threaded
 * recomputation, and its checkpoint (5 bytes a segment) decodes to the
 * same. */
static void test_segment_records(void **state)
{
	(void)state;
	struct graveler_acc *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	uint64_t begin = 3 * GRAVELER_CHUNK + 17;
	uint64_t end = begin + 3ull * GRAVELER_SEGMENTS * GRAVELER_CHUNK +
		       (1u << 26) + 40000;
	uint32_t done = 0;
	void *buf;
	size_t len;
	char err[WL_ERRLEN];

	graveler_acc_init(a, 11, begin, end);
	assert_int_equal(a->nseg, GRAVELER_SEGMENTS);
	while (a->next < begin + (1u << 21))
		assert_int_equal(graveler_cpu_step(a, graveler_step_end(
							      a, 1u << 19),
						   2),
				 0);
	while (graveler_segment_chunk(begin, end, done + 1) * GRAVELER_CHUNK <=
	       a->next)
		done++;
	assert_true(done > 2000);
	assert_int_equal(graveler_segment_chunk(begin, end, 1) -
				 graveler_segment_chunk(begin, end, 0), 3);
	for (int t = 0; t < 300; t++) {
		uint32_t k = t < 2 ? (t ? done - 1 : 0)
				   : (uint32_t)(rnd() % done);
		struct graveler_rec r;
		graveler_segment_eval(11, begin, end, k, &r);
		assert_int_equal(r.max, a->seg_max[k]);
		assert_int_equal(r.sum, a->seg_sum[k]);
		assert_int_equal(r.sketch, a->seg_sk[k]);
	}
	assert_int_equal(a->seg_max[done + 1], 0);
	assert_int_equal(graveler_ckpt_encode(a, &buf, &len), 0);
	assert_int_equal(len, GRAVELER_CKPT_MAXLEN);
	assert_int_equal(graveler_ckpt_decode(buf, len, b, err, sizeof(err)),
			 0);
	assert_acc_equal(a, b);
	free(buf);
	/* A largest lease's result (every battle at 57, segments of 2^20
	 * battles) takes GRAVELER_RESULT_MAXLEN bytes and decodes; one
	 * chunk more is refused. */
	graveler_acc_init(b, 1, 0, GRAVELER_MAX_LEASE);
	b->next = b->end;
	b->first = 0;
	b->max = 57;
	b->hist[57] = b->end;
	for (uint32_t k = 0; k < b->nseg; k++) {
		b->seg_max[k] = 57;
		b->seg_sum[k] = 57u << 20;
		b->seg_sk[k] = graveler_sketch_word(57) << 20;
	}
	assert_int_equal(graveler_result_encode(b, &buf, &len), 0);
	assert_int_equal(len, GRAVELER_RESULT_MAXLEN);
	assert_int_equal(graveler_result_decode(buf, len, a, err, sizeof(err)),
			 0);
	assert_acc_equal(a, b);
	free(buf);
	graveler_acc_init(b, 1, 0, GRAVELER_MAX_LEASE + GRAVELER_CHUNK);
	b->next = b->end;
	b->first = 0;
	b->hist[0] = b->end;
	for (uint32_t k = 0; k < b->nseg; k++) /* one segment per 2^20 + 256 */
		b->seg_sk[k] = 0;
	b->seg_sk[0] = (uint32_t)b->end * graveler_sketch_word(0);
	assert_int_equal(graveler_result_encode(b, &buf, &len), 0);
	assert_int_equal(graveler_result_decode(buf, len, a, err, sizeof(err)),
			 GERR_CORRUPT);
	assert_non_null(strstr(err, "range"));
	free(buf);
	free(a);
	free(b);
}

static void test_binomial_shape(void **state)
{
	(void)state;
	struct graveler_acc *a = malloc(sizeof(*a));
	graveler_acc_init(a, 7, 0, 1u << 21);
	assert_int_equal(graveler_cpu_step(a, a->end, 2), 0);
	int df;
	double z;
	graveler_chi2(a->hist, &df, &z);
	assert_true(df > 20);
	assert_true(z < 5);
	double mean = 0;
	for (unsigned k = 0; k < GRAVELER_BINS; k++)
		mean += (double)k * (double)a->hist[k];
	mean /= (double)(1u << 21);
	assert_true(mean > 57.7 && mean < 57.8);
	free(a);
}


static void test_checkpoint_resume(void **state)
{
	(void)state;
	json_t *params = graveler_fx_params(5000000, 99);
	/* An unaligned lease, as a hand-made spec. */
	json_t *spec = json_pack("{s:I, s:I}", "begin", (json_int_t)1000003,
				 "end", (json_int_t)4500001);
	void *r1 = NULL, *r2 = NULL;
	size_t l1 = 0, l2 = 0;
	struct io_state s1 = {.stop_after = -1};
	graveler_fx_run(params, spec, NULL, 0, &s1, 1, 0, &r1, &l1);
	assert_true(s1.nckpt >= 2);

	struct io_state s2 = {.stop_after = 2};
	graveler_fx_run(params, spec, NULL, 0, &s2, 1, GERR_CANCELLED, &r2, &l2);
	assert_non_null(s2.ckpt);
	char err[WL_ERRLEN];
	assert_int_equal(W->check_checkpoint(workload_ctx(W), params, spec, s2.ckpt, s2.ckpt_len,
					     err, sizeof(err)), 0);
	/* Resume with a different thread count: identical bytes. */
	struct io_state s3 = {.stop_after = -1};
	graveler_fx_run(params, spec, s2.ckpt, s2.ckpt_len, &s3, 2, 0, &r2, &l2);
	assert_int_equal(l1, l2);
	assert_memory_equal(r1, r2, l1);
	/* And no io at all. */
	free(r2);
	graveler_fx_run(params, spec, NULL, 0, NULL, 2, 0, &r2, &l2);
	assert_memory_equal(r1, r2, l1);
	/* A checkpoint of an earlier format (stored before an upgrade) is
	 * dropped: the run starts afresh and gives the same bytes. */
	uint8_t *old = malloc(s2.ckpt_len);
	memcpy(old, s2.ckpt, s2.ckpt_len);
	old[4] = 1; /* version 1, little-endian */
	assert_true(graveler_ckpt_outdated(old, s2.ckpt_len));
	assert_false(graveler_ckpt_outdated(s2.ckpt, s2.ckpt_len));
	/* A result of an earlier format (in flight at an upgrade) is
	 * computed again, charged to no one: verify says GERR_UNSUPPORTED. */
	{
		uint8_t *oldr = malloc(l1);
		memcpy(oldr, r1, l1);
		oldr[4] = 2;
		assert_true(graveler_result_outdated(oldr, l1));
		assert_false(graveler_result_outdated(r1, l1));
		assert_int_equal(W->verify(workload_ctx(W), params, spec, oldr,
					   l1, 1, err, sizeof(err)),
				 GERR_UNSUPPORTED);
		assert_non_null(strstr(err, "earlier format"));
		free(oldr);
	}
	free(r2);
	graveler_fx_run(params, spec, old, s2.ckpt_len, NULL, 1, 0, &r2, &l2);
	assert_memory_equal(r1, r2, l1);
	free(old);

	/* A checkpoint for another lease, or damaged, is refused. */
	json_t *other = json_pack("{s:I, s:I}", "begin", (json_int_t)0, "end",
				  (json_int_t)4500001);
	assert_int_not_equal(W->check_checkpoint(workload_ctx(W), other, spec, s2.ckpt,
						 s2.ckpt_len, err, sizeof(err)), 0);
	assert_int_not_equal(W->check_checkpoint(workload_ctx(W), params, other, s2.ckpt,
						 s2.ckpt_len, err, sizeof(err)), 0);
	uint8_t *bad = malloc(s2.ckpt_len);
	memcpy(bad, s2.ckpt, s2.ckpt_len);
	bad[48 + 8 * 60] ^= 1; /* a histogram bin: total no longer matches */
	assert_int_not_equal(W->check_checkpoint(workload_ctx(W), params, spec, bad, s2.ckpt_len,
						 err, sizeof(err)), 0);
	assert_int_not_equal(W->check_checkpoint(workload_ctx(W), params, spec, s2.ckpt, 100,
						 err, sizeof(err)), 0);
	free(bad);
	json_decref(other);
	free(s1.ckpt);
	free(s2.ckpt);
	free(s3.ckpt);
	free(r1);
	free(r2);
	json_decref(spec);
	json_decref(params);
}

static void test_parse_params(void **state)
{
	(void)state;
	const char *bad[] = {
		"{}",
		"{\"battles\": 0}",
		"{\"battles\": 1000000000000001}",
		"{\"battles\": \"2e15\"}",
		"{\"battles\": \"abc\"}",
		"{\"battles\": -5}",
		"{\"battles\": 10, \"seed\": -1}",
		"{\"battles\": 10, \"colour\": 1}",
		"{\"battles\": 1.5}",
		"[]",
	};
	char err[WL_ERRLEN];
	json_t *p;
	uint64_t total;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *a = json_loads(bad[i], 0, NULL);
		err[0] = 0;
		assert_int_equal(W->parse_params(workload_ctx(W), a, &p, &total, err, sizeof(err)),
				 GERR_INVAL);
		assert_true(strlen(err) > 0);
		json_decref(a);
	}
	json_t *a = json_loads("{\"battles\": \"1e9\", \"seed\": "
			       "\"18446744073709551615\"}", 0, NULL);
	assert_int_equal(W->parse_params(workload_ctx(W), a, &p, &total, err, sizeof(err)), 0);
	assert_int_equal(total, 1000000000ull);
	assert_string_equal(json_string_value(json_object_get(p, "seed")),
			    "18446744073709551615");
	json_decref(p);
	json_decref(a);
	a = json_loads("{\"battles\": 1000}", 0, NULL);
	assert_int_equal(W->parse_params(workload_ctx(W), a, &p, &total, err, sizeof(err)), 0);
	assert_string_equal(json_string_value(json_object_get(p, "seed")), "0");
	json_decref(p);
	json_decref(a);
}

static void test_carve(void **state)
{
	(void)state;
	const uint64_t n = (1ull << 22) + 777;
	json_t *params = graveler_fx_params(n, 1);
	json_t *cursor = NULL;
	uint64_t covered = 0, wants[] = {5, (1ull << 20) + 3, 1ull << 21, 0};
	int leases = 0;
	for (;;) {
		json_t *spec = NULL, *nc = NULL;
		uint64_t units = 0;
		int rc = W->carve(workload_ctx(W), params, cursor, NULL, NULL, wants[leases % 4], &spec,
				  &units, &nc, &carve_last);
		if (rc == GERR_DONE)
			break;
		assert_int_equal(rc, 0);
		uint64_t b = (uint64_t)json_integer_value(json_object_get(spec, "begin"));
		uint64_t e = (uint64_t)json_integer_value(json_object_get(spec, "end"));
		assert_int_equal(b, covered);
		assert_int_equal(e - b, units);
		assert_true(e == n || e % GRAVELER_CHUNK == 0);
		assert_true(units >= (1ull << 20) || e == n);
		covered = e;
		leases++;
		json_decref(spec);
		json_decref(cursor);
		cursor = nc;
	}
	assert_int_equal(covered, n);
	assert_int_equal(leases, 4);
	json_decref(cursor);
	json_decref(params);
}

/* A lease's result bytes, decoded copy in *acc. */
static void lease_result(json_t *params, uint64_t begin, uint64_t end,
			 json_t **ret_spec, void **res, size_t *len)
{
	json_t *spec = json_pack("{s:I, s:I}", "begin", (json_int_t)begin,
				 "end", (json_int_t)end);
	graveler_fx_run(params, spec, NULL, 0, NULL, 2, 0, res, len);
	*ret_spec = spec;
}

static void reencode(const struct graveler_acc *a, void **res, size_t *len)
{
	free(*res);
	assert_int_equal(graveler_result_encode(a, res, len), 0);
}

/* Decode bytes re-encoded from a, expecting a refusal naming `what`. */
static void assert_refused(const struct graveler_acc *a, const char *what)
{
	struct graveler_acc *d = malloc(sizeof(*d));
	char err[WL_ERRLEN] = "";
	void *t = NULL;
	size_t tl;

	assert_int_equal(graveler_result_encode(a, &t, &tl), 0);
	assert_int_equal(graveler_result_decode(t, tl, d, err, sizeof(err)),
			 GERR_CORRUPT);
	if (!strstr(err, what))
		fprintf(stderr, "refused with '%s', expected '%s'\n", err, what);
	assert_non_null(strstr(err, what));
	free(t);
	free(d);
}

/* Move d battles one bin up (adds d to the count sum): 57 -> 58, with
 * the sketch of segment k (whose sum the caller raised by d) moved to
 * match, so that only recomputation can refuse it. */
static void hist_shift(struct graveler_acc *a, uint32_t k, uint32_t d)
{
	assert_true(a->hist[57] >= d && a->max > 58);
	a->hist[57] -= d;
	a->hist[58] += d;
	a->seg_sk[k] += d * (graveler_sketch_word(58) -
			     graveler_sketch_word(57));
}

static void test_decoder_invariants(void **state)
{
	(void)state;
	char err[WL_ERRLEN];
	json_t *params = graveler_fx_params(1u << 22, 31);
	json_t *spec;
	void *res = NULL;
	size_t len = 0;
	struct graveler_acc *good = malloc(sizeof(*good));
	struct graveler_acc *a = malloc(sizeof(*a));

	lease_result(params, 1000, 1000 + 300 * GRAVELER_CHUNK, &spec, &res,
		     &len);
	assert_int_equal(graveler_result_decode(res, len, good, err,
						sizeof(err)), 0);
	uint32_t kf = graveler_chunk_segment(good->begin, good->end,
					     good->first / GRAVELER_CHUNK);
	uint32_t kl = kf > 5 ? kf - 1 : kf + 1; /* another segment */
	/* A sum changed alone no longer adds up to the histogram's. */
	*a = *good;
	a->seg_sum[kl]++;
	assert_refused(a, "add up");
	/* The histogram changed to match, but not the sketches. */
	a->hist[57]--;
	a->hist[58]++;
	assert_refused(a, "sketches");
	/* Changed with the histogram and the sketch it decodes (verify must
	 * catch it). */
	a->hist[57]++;
	a->hist[58]--;
	hist_shift(a, kl, 1);
	void *t;
	size_t tl;
	assert_int_equal(graveler_result_encode(a, &t, &tl), 0);
	struct graveler_acc *d = malloc(sizeof(*d));
	assert_int_equal(graveler_result_decode(t, tl, d, err, sizeof(err)), 0);
	free(d);
	free(t);
	/* A segment's max above the claimed max, or none reaching it. */
	*a = *good;
	a->seg_max[kl] = (uint8_t)(a->max + 1);
	assert_refused(a, "max");
	*a = *good;
	a->seg_max[kf]--;
	assert_refused(a, "disagree");
	/* An earlier segment reaching max contradicts first. */
	if (kf > 0) {
		*a = *good;
		a->seg_max[0] = (uint8_t)a->max;
		assert_refused(a, "before first");
	}
	/* Impossible max / sum pairs for a segment's battles. */
	*a = *good;
	a->seg_sum[kl] = a->seg_max[kl] - 1u;
	assert_refused(a, "impossible");
	*a = *good;
	a->seg_sum[kl] = a->seg_max[kl] * 256u + 1u;
	assert_refused(a, "impossible");
	/* A checkpoint with a record for a segment not yet started. */
	*a = *good;
	memset(a->hist, 0, sizeof(a->hist));
	memset(a->seg_max, 0, sizeof(a->seg_max));
	memset(a->seg_sum, 0, sizeof(a->seg_sum));
	a->next = a->begin;
	a->max = 0;
	a->first = GRAVELER_NONE;
	a->seg_sum[3] = 0;
	a->seg_max[3] = 1;
	assert_int_equal(graveler_ckpt_encode(a, &t, &tl), 0);
	d = malloc(sizeof(*d));
	assert_int_equal(graveler_ckpt_decode(t, tl, d, err, sizeof(err)),
			 GERR_CORRUPT);
	assert_non_null(strstr(err, "no done battles"));
	free(t);
	/* The header's segment count and the length must match the lease. */
	*a = *good;
	a->nseg--;
	assert_refused(a, "segments");
	assert_int_equal(graveler_result_decode(res, len - 1, d, err,
						sizeof(err)), GERR_CORRUPT);
	free(d);
	free(a);
	free(good);
	free(res);
	json_decref(spec);
	json_decref(params);
}

static void test_verify(void **state)
{
	(void)state;
	char err[WL_ERRLEN];
	json_t *params = graveler_fx_params(1u << 22, 2024);
	json_t *spec;
	void *res = NULL;
	size_t len = 0;
	lease_result(params, 1u << 20, (1u << 21) + 3, &spec, &res, &len);
	assert_int_equal(W->verify(workload_ctx(W), params, spec, res, len, 1, err, sizeof(err)), 0);
	assert_int_equal(W->verify(workload_ctx(W), params, spec, res, len, 2, err, sizeof(err)), 0);

	struct graveler_acc *good = malloc(sizeof(*good));
	struct graveler_acc *a = malloc(sizeof(*a));
	assert_int_equal(graveler_result_decode(res, len, good, err, sizeof(err)), 0);
	uint32_t kf = graveler_chunk_segment(good->begin, good->end,
					     good->first / GRAVELER_CHUNK);
	void *t = NULL;
	size_t tl;

	/* Wrong max: one battle moved up a bin, consistent records. */
	*a = *good;
	a->hist[a->max]--;
	a->hist[a->max + 1]++;
	a->max++;
	a->seg_max[kf]++;
	a->seg_sum[kf]++;
	reencode(a, &t, &tl);
	assert_int_equal(W->verify(workload_ctx(W), params, spec, t, tl, 1, err, sizeof(err)),
			 GERR_VERIFY);
	/* Wrong first. */
	*a = *good;
	a->first = good->first + 1;
	reencode(a, &t, &tl);
	assert_int_equal(W->verify(workload_ctx(W), params, spec, t, tl, 1, err, sizeof(err)),
			 GERR_VERIFY);
	/* A later battle of the same max claimed first. */
	*a = *good;
	a->first = good->first - 1; /* may have a lower count: refused anyway */
	reencode(a, &t, &tl);
	assert_int_equal(W->verify(workload_ctx(W), params, spec, t, tl, 1, err, sizeof(err)),
			 GERR_VERIFY);
	/* Wrong histogram: total off, or top bin above max. */
	*a = *good;
	a->hist[50]++;
	reencode(a, &t, &tl);
	assert_int_equal(W->verify(workload_ctx(W), params, spec, t, tl, 1, err, sizeof(err)),
			 GERR_VERIFY);
	*a = *good;
	a->hist[50]--;
	a->hist[200]++;
	reencode(a, &t, &tl);
	assert_int_equal(W->verify(workload_ctx(W), params, spec, t, tl, 1, err, sizeof(err)),
			 GERR_VERIFY);
	/* The first maximum's segment is always recomputed. */
	*a = *good;
	a->seg_sum[kf]++;
	hist_shift(a, kf, 1);
	reencode(a, &t, &tl);
	for (uint64_t vs = 0; vs < 4; vs++)
		assert_int_equal(W->verify(workload_ctx(W), params, spec, t, tl,
					   vs, err, sizeof(err)), GERR_VERIFY);
	/* Every other segment's sum off: caught by any draw. */
	*a = *good;
	for (uint32_t k = 0; k < a->nseg; k++)
		if (k != kf) {
			a->seg_sum[k]++;
			hist_shift(a, k, 1);
		}
	reencode(a, &t, &tl);
	assert_int_equal(W->verify(workload_ctx(W), params, spec, t, tl, 7, err, sizeof(err)),
			 GERR_VERIFY);
	assert_non_null(strstr(err, "segment"));
	/* Wrong lease or truncated bytes. */
	json_t *spec2 = json_pack("{s:I, s:I}", "begin", (json_int_t)0, "end",
				  (json_int_t)(1u << 20));
	assert_int_equal(W->verify(workload_ctx(W), params, spec2, res, len, 1, err, sizeof(err)),
			 GERR_VERIFY);
	assert_int_equal(W->verify(workload_ctx(W), params, spec, res, len - 1, 1, err,
				   sizeof(err)), GERR_VERIFY);
	json_decref(spec2);
	free(t);
	free(res);
	json_decref(spec);

	/* A lease of at most K segments: all recomputed, one wrong one is
	 * caught whatever the seed. */
	lease_result(params, 512, 512 + 30 * GRAVELER_CHUNK - 100, &spec, &res,
		     &len);
	assert_int_equal(W->verify(workload_ctx(W), params, spec, res, len, 3, err, sizeof(err)), 0);
	assert_int_equal(graveler_result_decode(res, len, a, err, sizeof(err)), 0);
	kf = graveler_chunk_segment(a->begin, a->end, a->first / GRAVELER_CHUNK);
	a->seg_sum[kf == 17 ? 18 : 17] += 2;
	hist_shift(a, kf == 17 ? 18 : 17, 2);
	t = NULL;
	reencode(a, &t, &tl);
	for (uint64_t vs = 0; vs < 8; vs++)
		assert_int_equal(W->verify(workload_ctx(W), params, spec, t, tl,
					   mix64(vs), err, sizeof(err)),
				 GERR_VERIFY);
	assert_non_null(strstr(err, "segment 1"));
	free(t);
	free(res);
	free(a);
	free(good);
	json_decref(spec);
	json_decref(params);
}

/* C(S - F, K) / C(S, K): K distinct segments drawn, none fabricated. */
static double pass_formula(uint32_t S, uint32_t F, uint32_t K)
{
	double p = 1;
	for (uint32_t i = 0; i < K; i++)
		p *= (double)(S - F - i) / (double)(S - i);
	return p;
}

/* Fabricate F of a real lease's segment records consistently (every
 * decoder invariant holds: the histogram absorbs the sums' change), run
 * verify with many seeds, and compare the pass rate with the formula. The
 * lease has 1,024 one-chunk segments, so each verification is cheap. */
static void test_detection_rate(void **state)
{
	(void)state;
	const uint32_t K = 32;
	char err[WL_ERRLEN];
	json_t *params = graveler_fx_params(1u << 22, 77);
	json_t *spec;
	void *res = NULL, *t = NULL;
	size_t len = 0, tl;
	struct graveler_acc *good = malloc(sizeof(*good));
	struct graveler_acc *a = malloc(sizeof(*a));
	uint8_t *fab = malloc(GRAVELER_SEGMENTS);
	const double fr[] = {0.01, 0.10, 1.0};
	const int trials[] = {3000, 2000, 300};

	lease_result(params, 0, 1024 * GRAVELER_CHUNK, &spec, &res, &len);
	assert_int_equal(graveler_result_decode(res, len, good, err,
						sizeof(err)), 0);
	const uint32_t S = good->nseg;
	assert_int_equal(S, 1024);
	uint32_t kf = graveler_chunk_segment(good->begin, good->end,
					     good->first / GRAVELER_CHUNK);
	for (int c = 0; c < 3; c++) {
		uint32_t F = (uint32_t)lround(fr[c] * S), done = 0;
		int pass = 0;
		*a = *good;
		memset(fab, 0, GRAVELER_SEGMENTS);
		/* The lazy worker computes the first maximum's segment
		 * honestly unless it fabricates everything. */
		while (done < F) {
			uint32_t k = F == S ? done : (uint32_t)(rnd() % S);
			if (fab[k] || (F < S && k == kf))
				continue;
			fab[k] = 1;
			uint32_t delta = 1 + k % 3;
			a->seg_sum[k] += delta;
			hist_shift(a, k, delta);
			done++;
		}
		reencode(a, &t, &tl);
		for (int i = 0; i < trials[c]; i++) {
			int rc = W->verify(workload_ctx(W), params, spec, t, tl,
					   mix64((uint64_t)i * 7919 + (uint64_t)c),
					   err, sizeof(err));
			assert_true(rc == 0 || rc == GERR_VERIFY);
			pass += rc == 0;
		}
		double want = F == S ? 0 : pass_formula(S, F, K);
		double got = (double)pass / trials[c];
		double tol = 4 * sqrt(want * (1 - want) / trials[c]) + 0.005;
		print_message("f = %.0f%%: %u of %u segments fabricated, pass "
			      "rate %.4f measured over %d seeds, formula %.4f "
			      "((1-f)^K = %.4f; %.4f for a lease of %u "
			      "segments)\n",
			      fr[c] * 100, F, S, got, trials[c], want,
			      pow(1 - fr[c], K),
			      F == S ? 0
				     : pass_formula(GRAVELER_SEGMENTS,
						    (uint32_t)lround(
							    fr[c] *
							    GRAVELER_SEGMENTS),
						    K),
			      GRAVELER_SEGMENTS);
		assert_true(fabs(got - want) <= tol);
	}
	free(t);
	free(fab);
	free(a);
	free(good);
	free(res);
	json_decref(spec);
	json_decref(params);
}

static void test_merge_finish_render(void **state)
{
	(void)state;
	const uint64_t n = (1ull << 21) + 12345;
	json_t *params = graveler_fx_params(n, 5);
	json_t *specs[4], *cursor = NULL;
	void *res[4];
	size_t len[4];
	int nl = 0;
	char err[WL_ERRLEN];
	for (;;) {
		json_t *nc;
		uint64_t units;
		int rc = W->carve(workload_ctx(W), params, cursor, NULL, NULL, 1u << 20, &specs[nl], &units,
				  &nc, &carve_last);
		if (rc == GERR_DONE)
			break;
		json_decref(cursor);
		cursor = nc;
		graveler_fx_run(params, specs[nl], NULL, 0, NULL, 2, 0, &res[nl],
			  &len[nl]);
		assert_int_equal(W->verify(workload_ctx(W), params, specs[nl], res[nl], len[nl],
					   nl, err, sizeof(err)), 0);
		nl++;
	}
	json_decref(cursor);
	assert_int_equal(nl, 3);
	/* Two orders give the same answer. */
	json_t *a = NULL, *b = NULL, *t;
	for (int i = 0; i < nl; i++) {
		assert_int_equal(W->merge(workload_ctx(W), params, a, specs[i], res[i], len[i], NULL, &t, NULL), 0);
		json_decref(a);
		a = t;
	}
	for (int i = nl - 1; i >= 0; i--) {
		assert_int_equal(W->merge(workload_ctx(W), params, b, specs[i], res[i], len[i], NULL, &t, NULL), 0);
		json_decref(b);
		b = t;
	}
	assert_true(json_equal(a, b));
	assert_int_equal(json_integer_value(json_object_get(a, "battles")), n);
	/* The merged max is that of the whole range. */
	struct graveler_acc *all = malloc(sizeof(*all));
	graveler_acc_init(all, 5, 0, n);
	assert_int_equal(graveler_cpu_step(all, n, 2), 0);
	assert_int_equal(json_integer_value(json_object_get(a, "max")), all->max);
	assert_int_equal(json_integer_value(json_object_get(a, "first")), all->first);
	free(all);

	assert_int_equal(W->finish(workload_ctx(W), params, a, NULL, err, sizeof(err)), 0);
	/* Missing lease: total wrong. */
	json_t *part = NULL;
	assert_int_equal(W->merge(workload_ctx(W), params, NULL, specs[0], res[0], len[0], NULL, &part, NULL), 0);
	assert_int_equal(W->finish(workload_ctx(W), params, part, NULL, err, sizeof(err)), GERR_VERIFY);
	json_decref(part);
	/* A histogram that is not Binomial(231, 1/4). */
	json_t *bad = json_deep_copy(a);
	json_t *h = json_object_get(bad, "histogram");
	json_int_t moved = json_integer_value(json_array_get(h, 50)) / 2;
	json_array_set_new(h, 50, json_integer(json_integer_value(json_array_get(h, 50)) - moved));
	json_array_set_new(h, 65, json_integer(json_integer_value(json_array_get(h, 65)) + moved));
	assert_int_equal(W->finish(workload_ctx(W), params, bad, NULL, err, sizeof(err)), GERR_VERIFY);
	assert_true(strstr(err, "Binomial") != NULL);
	json_decref(bad);
	/* An implausibly low max. */
	bad = json_deep_copy(a);
	h = json_object_get(bad, "histogram");
	json_int_t top = json_integer_value(json_object_get(bad, "max"));
	json_int_t sum = 0;
	for (json_int_t k = 70; k <= top; k++) {
		sum += json_integer_value(json_array_get(h, (size_t)k));
		json_array_set_new(h, (size_t)k, json_integer(0));
	}
	json_array_set_new(h, 69, json_integer(json_integer_value(json_array_get(h, 69)) + sum));
	json_object_set_new(bad, "max", json_integer(69));
	assert_int_equal(W->finish(workload_ctx(W), params, bad, NULL, err, sizeof(err)), GERR_VERIFY);
	json_decref(bad);

	char *txt = W->render_text(workload_ctx(W), params, a, NULL);
	assert_non_null(txt);
	assert_non_null(strstr(txt, "max paralysed turns"));
	free(txt);
	/* The plot: the histogram beside the Binomial expectation. */
	char *svg = NULL;
	size_t svg_len = 0;
	assert_int_equal(W->render_plot(workload_ctx(W), params, a, NULL, NULL,
					&svg, &svg_len, err, sizeof(err)), 0);
	assert_int_equal(strlen(svg), svg_len);
	assert_non_null(strstr(svg, "viewBox=\"0 0 "));
	assert_non_null(strstr(svg, "class=\"line expected\""));
	assert_non_null(strstr(svg, "class=\"xlabel\""));
	assert_non_null(strstr(svg, "battles (log scale)</text>"));
	assert_null(strstr(svg, "e+"));
	assert_string_equal(W->plot_name, "graveler-histogram.svg");
	free(svg);
	assert_int_equal(W->render_plot(workload_ctx(W), params, NULL, NULL, NULL,
					&svg, &svg_len, err, sizeof(err)),
			 GERR_NOTFOUND);

	for (int i = 0; i < nl; i++) {
		free(res[i]);
		json_decref(specs[i]);
	}
	json_decref(a);
	json_decref(b);
	json_decref(params);
}

static void test_statistics(void **state)
{
	(void)state;
	double s = 0;
	for (unsigned k = 0; k < GRAVELER_BINS; k++)
		s += graveler_binom_pmf(k);
	assert_true(s > 0.999999 && s < 1.000001);
	double ge, le;
	/* 1e9 battles: a max near 100 is ordinary; 70 or 130 are not. */
	graveler_max_tails(1000000000ull, 100, &ge, &le);
	assert_true(ge > -3 && le > -3);
	graveler_max_tails(1000000000ull, 70, &ge, &le);
	assert_true(le < -12);
	graveler_max_tails(1000000000ull, 130, &ge, &le);
	assert_true(ge < -12);
	/* Without CUDA or a device, opening a context is refused cleanly. */
	if (graveler_cuda_device_count() == 0) {
		struct graveler_cuda *ctx = NULL;
		char err[WL_ERRLEN];
		assert_int_equal(graveler_cuda_open(0, &ctx, err, sizeof(err)),
				 GERR_UNSUPPORTED);
	}
}

UNIT_MAIN(cmocka_unit_test(test_ref_vs_fast_battle),
	cmocka_unit_test(test_ref_vs_cpu_ranges),
	cmocka_unit_test(test_segments),
	cmocka_unit_test(test_segment_records),
	cmocka_unit_test(test_binomial_shape),
	cmocka_unit_test(test_checkpoint_resume),
	cmocka_unit_test(test_parse_params),
	cmocka_unit_test(test_carve),
	cmocka_unit_test(test_decoder_invariants),
	cmocka_unit_test(test_verify),
	cmocka_unit_test(test_detection_rate),
	cmocka_unit_test(test_merge_finish_render),
	cmocka_unit_test(test_statistics))
