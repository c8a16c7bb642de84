/* test_officers.c - the Officers workload: known values, reference vs the
 * fast CPU path, the result format, and the whole job through the workload
 * interface (carve, GERR_AGAIN, run with fetched state, verify, merge,
 * finish, extend, export, render), with blobs and the merged leases
 * (parts) held in memory; an answer that does not grow with the leases;
 * finish refusing a broken chain of parts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "blob.h"
#include "gerr.h"
#include "officers/officers.h"
#include "officers/officers_cuda.h"
#include "parts_list.h"
#include "unit_main.h"
#include "workload.h"

/* carve's last-lease flag, where a test does not look at it. */
static int carve_last;

#define MAX_BLOBS 256

extern const struct workload officers_workload;
static const struct workload *W = &officers_workload;

#define REF_N 30000u
static const uint64_t zeros_known[] = {0,   1,   4,   12,  20,  30,  46,
				       72,  98,  124, 150, 176, 314, 408};

static struct officers_seq *fast_to(uint64_t n, int threads)
{
	struct officers_seq *s = calloc(1, sizeof(*s));
	char err[WL_ERRLEN] = "";

	assert_non_null(s);
	assert_int_equal(officers_seq_init(s, n), 0);
	assert_int_equal(officers_cpu_extend(s, n, threads, NULL, 0, err,
					     sizeof(err)), 0);
	assert_int_equal(s->n, n);
	return s;
}

static void seq_free(struct officers_seq *s)
{
	officers_seq_free(s);
	free(s);
}

static void test_known_values(void **state)
{
	static const uint16_t first[20] = {0, 0, 1, 2, 0, 1, 2, 3, 1, 2,
					   3, 4, 0, 3, 4, 2, 1, 3, 2, 1};
	uint16_t *ref = malloc(REF_N * sizeof(uint16_t));
	(void)state;

	assert_int_equal(officers_ref_values(ref, REF_N), 0);
	assert_memory_equal(ref, first, sizeof(first));
	/* Rare values: 0, 1, 6, 7, 10, 11, 12, 13, 16, 17, ... */
	assert_true(officers_is_rare(0) && officers_is_rare(1) &&
		    officers_is_rare(6) && officers_is_rare(17));
	assert_false(officers_is_rare(2) || officers_is_rare(5) ||
		     officers_is_rare(8));
	unsigned nr = 0;
	for (unsigned i = 0; i < REF_N; i++)
		nr += officers_is_rare(ref[i]);
	assert_int_equal(nr, 1584);
	assert_int_equal(ref[20627], 277);
	free(ref);
}

static void test_fast_vs_ref_and_known(void **state)
{
	uint16_t *ref = malloc(REF_N * sizeof(uint16_t));
	(void)state;

	assert_int_equal(officers_ref_values(ref, REF_N), 0);
	for (int threads = 1; threads <= 3; threads += 2) {
		struct officers_seq *s = fast_to(100000, threads);
		unsigned nz = 0;
		assert_memory_equal(s->vals, ref, REF_N * sizeof(uint16_t));
		assert_int_equal(s->nrare, 1584);
		assert_int_equal(s->rare[1583].pos, 20627);
		assert_int_equal(s->rare[1583].val, 277);
		for (uint64_t x = 0; x < 100000; x++)
			if (s->vals[x] == 0) {
				assert_true(nz < 14);
				assert_int_equal(x, zeros_known[nz]);
				nz++;
			}
		assert_int_equal(nz, 14);
		assert_int_equal(s->st.fnv, 0x43d82427f1c3b631ull);
		assert_int_equal(officers_fnv(OFFICERS_FNV_BASIS, s->vals,
					      100000),
				 0x43d82427f1c3b631ull);
		/* The candidate + exact step agrees with the sequence. */
		for (uint64_t x = 2; x < 100000; x += 997)
			assert_int_equal(officers_value(s, x), s->vals[x]);
		seq_free(s);
	}
	free(ref);
}

static void test_candidates_only(void **state)
{
	struct officers_seq *s = fast_to(70000, 2);
	uint16_t *out = malloc(5000 * sizeof(uint16_t));
	uint16_t *want = malloc(5000 * sizeof(uint16_t));
	struct officers_seq *t = fast_to(75000, 2);
	(void)state;

	memcpy(want, t->vals + 70000, 5000 * sizeof(uint16_t));
	assert_int_equal(officers_seq_reserve(s, 75000), 0);
	officers_cpu_candidates(s, 5000, out);
	/* No new rare value after 20627: candidates are the values. */
	assert_memory_equal(out, want, 5000 * sizeof(uint16_t));
	seq_free(s);
	seq_free(t);
	free(out);
	free(want);
}

static void test_result_format(void **state)
{
	struct officers_seq *s = fast_to(50000, 2), *t = calloc(1, sizeof(*t));
	struct officers_result r;
	char err[WL_ERRLEN];
	void *buf;
	size_t len;
	(void)state;

	assert_int_equal(officers_result_encode(s, 30000, 0x1234, 1584, &buf,
						&len), 0);
	assert_int_equal(officers_result_parse(buf, len, &r, err, sizeof(err)),
			 0);
	assert_int_equal(r.from, 30000);
	assert_int_equal(r.to, 50000);
	assert_int_equal(r.vbase, 0);
	assert_int_equal(officers_result_get(&r, 40000), s->vals[40000]);
	assert_int_equal(officers_seq_from_result(t, &r, r.vbase, 60000), 0);
	assert_int_equal(t->base, 0);
	assert_int_equal(officers_seq_digest(t), officers_seq_digest(s));
	/* Asked to keep less than OFFICERS_TAIL before its end: all of it. */
	seq_free(t);
	t = calloc(1, sizeof(*t));
	assert_int_equal(officers_seq_from_result(t, &r, 45000, 60000), 0);
	assert_int_equal(t->base, 0);
	assert_int_equal(officers_seq_digest(t), officers_seq_digest(s));
	assert_int_equal(officers_result_digest(&r, 1), officers_seq_digest(s));
	/* Truncated and corrupted copies are refused. */
	assert_int_equal(officers_result_parse(buf, len - 1, &r, err,
					       sizeof(err)), GERR_CORRUPT);
	((uint8_t *)buf)[len - 1] = 0xff; /* value >= 512 */
	assert_int_equal(officers_result_parse(buf, len, &r, err, sizeof(err)),
			 GERR_CORRUPT);
	free(buf);
	seq_free(s);
	seq_free(t);
}

/* A run after a long result keeps only its own history: the format does
 * not care whether the values are Grundy values, so a synthetic sequence
 * of common values past OFFICERS_TAIL will do. */
static void test_state_keeps_tail(void **state)
{
	const uint64_t from = OFFICERS_TAIL + 5000, to = from + 20000;
	struct officers_seq *s = fast_to(70000, 2), *t = calloc(1, sizeof(*t));
	struct officers_result r;
	char err[WL_ERRLEN];
	unsigned x = 7;
	void *buf;
	size_t len;
	(void)state;

	assert_int_equal(officers_seq_reserve(s, to), 0);
	while (s->n < to) {
		unsigned v;
		do {
			x = x * 1103515245u + 12345u;
			v = (x >> 16) & 0xff;
		} while (officers_is_rare(v));
		assert_int_equal(officers_seq_push(s, v), 0);
	}
	assert_int_equal(officers_result_encode(s, from, 0x1234, s->nrare,
						&buf, &len), 0);
	assert_int_equal(officers_result_parse(buf, len, &r, err, sizeof(err)),
			 0);
	assert_int_equal(r.vbase, from - OFFICERS_TAIL);
	/* the next lease [to, to + 1000): history from to - TAIL */
	assert_int_equal(officers_seq_from_result(t, &r, to - OFFICERS_TAIL,
						  to + 1000), 0);
	assert_int_equal(t->base, to - OFFICERS_TAIL);
	assert_int_equal(t->n, to);
	assert_int_equal(officers_seq_get(t, to - 1), s->vals[to - 1 - s->base]);
	assert_int_equal(officers_seq_get(t, to - OFFICERS_TAIL),
			 s->vals[to - OFFICERS_TAIL - s->base]);
	assert_int_equal(officers_seq_digest(t), officers_seq_digest(s));
	assert_int_equal(officers_result_digest(&r, 1), officers_seq_digest(t));
	free(buf);
	seq_free(s);
	seq_free(t);
}

/* ---- the job through the interface ------------------------------------ */

struct mem_blob {
	char hash[BLOB_HASH_HEX];
	void *bytes;
	size_t len;
};

struct io_state {
	struct mem_blob blobs[MAX_BLOBS];
	int nblobs;
	int fetches;
};

static int io_fetch(void *o, const char *hash, void **ret, size_t *ret_len)
{
	struct io_state *io = o;

	io->fetches++;
	for (int i = 0; i < io->nblobs; i++)
		if (strcmp(io->blobs[i].hash, hash) == 0) {
			*ret = malloc(io->blobs[i].len);
			memcpy(*ret, io->blobs[i].bytes, io->blobs[i].len);
			*ret_len = io->blobs[i].len;
			return 0;
		}
	return GERR_NOTFOUND;
}

static const char *keep(struct io_state *io, void *bytes, size_t len)
{
	struct mem_blob *b = &io->blobs[io->nblobs++];

	assert_true(io->nblobs <= MAX_BLOBS);
	blob_hash_hex(bytes, len, b->hash);
	b->bytes = bytes;
	b->len = len;
	return b->hash;
}

static json_t *params_to(const char *to)
{
	json_t *args = json_pack("{s:s}", "to", to), *p = NULL;
	uint64_t total = 0;
	char err[WL_ERRLEN];

	assert_int_equal(W->parse_params(workload_ctx(W), args, &p, &total, err, sizeof(err)),
			 0);
	json_decref(args);
	return p;
}

/* Carve, run, verify, merge one lease (added to pl); returns the carve
 * code. */
static int step(json_t *params, json_t **cursor, json_t **answer,
		struct parts_list *pl, uint64_t want, struct io_state *io,
		int threads)
{
	struct wl_run_io rio = WL_RUN_IO_QUIET(io, io_fetch);
	struct wl_device dev = {WL_DEVICE_CPU, 0, threads, NULL};
	json_t *spec = NULL, *next = NULL, *merged = NULL, *note = NULL;
	uint64_t units = 0;
	void *res = NULL;
	size_t len = 0;
	char err[WL_ERRLEN] = "";
	int rc = W->carve(workload_ctx(W), params, *cursor, *answer, &pl->pub,
			  want, &spec, &units, &next, &carve_last);

	if (rc)
		return rc;
	assert_int_equal(W->run(workload_ctx(W), params, spec, NULL, 0, &dev, &rio, &res, &len,
				err, sizeof(err)), 0);
	/* Before it is merged the next lease must wait. */
	{
		json_t *s2 = NULL, *c2 = NULL;
		uint64_t u2;
		int r2 = W->carve(workload_ctx(W), params, next, *answer,
				  &pl->pub, want, &s2, &u2, &c2, &carve_last);
		assert_true(r2 == GERR_AGAIN || r2 == GERR_DONE);
	}
	assert_int_equal(W->verify(workload_ctx(W), params, spec, res, len, 7, err, sizeof(err)),
			 0);
	/* A flipped value deep inside fails verification (a sample or the
	 * checksum). */
	{
		uint8_t *bad = malloc(len);
		memcpy(bad, res, len);
		bad[len - 2] ^= 1;
		assert_int_not_equal(W->verify(workload_ctx(W), params, spec, bad, len, 7, err,
					       sizeof(err)), 0);
		free(bad);
	}
	const char *h = keep(io, res, len);
	assert_int_equal(W->merge(workload_ctx(W), params, *answer, spec, res,
				  len, h, &merged, &note), 0);
	/* The note is the lease's own and small. */
	assert_non_null(note);
	assert_int_equal(json_object_size(note), 1);
	assert_int_equal(parts_list_add(pl, spec, units, h, note), 0);
	json_decref(note);
	json_decref(spec);
	json_decref(*cursor);
	json_decref(*answer);
	*cursor = next;
	*answer = merged;
	return 0;
}

/* A copy of src without its part skip (UINT64_MAX: none left out). */
static void parts_copy(const struct parts_list *src, struct parts_list *dst,
		       uint64_t skip)
{
	parts_list_init(dst);
	for (uint64_t k = 0; k < src->pub.n; k++)
		if (k != skip)
			assert_int_equal(parts_list_add(dst, src->v[k].spec,
							src->v[k].units,
							src->v[k].result_hash,
							src->v[k].note), 0);
}

/* Replace part k's note with note (a new reference, or NULL). */
static void parts_set_note(struct parts_list *pl, uint64_t k, json_t *note)
{
	json_decref((json_t *)pl->v[k].note);
	pl->v[k].note = note;
}

static void test_job(void **state)
{
	struct io_state io;
	struct parts_list pl, bad;
	json_t *params = params_to("100000"), *cursor = NULL, *answer = NULL;
	char err[WL_ERRLEN] = "";
	int rc, leases = 0;
	(void)state;

	memset(&io, 0, sizeof(io));
	parts_list_init(&pl);
	while ((rc = step(params, &cursor, &answer, &pl, 30000, &io, 2)) == 0)
		leases++;
	assert_int_equal(rc, GERR_DONE);
	assert_int_equal(leases, 4);
	assert_int_equal(pl.pub.n, 4);
	assert_int_equal(io.fetches, 3); /* each later lease read its state */
	assert_int_equal(W->finish(workload_ctx(W), params, answer, &pl.pub,
				   err, sizeof(err)), 0);
	/* The answer names no lease but the last (its state). */
	assert_null(json_object_get(answer, "blobs"));
	assert_int_equal(json_integer_value(json_object_get(answer, "leases")),
			 4);
	assert_string_equal(json_string_value(json_object_get(answer, "state")),
			    pl.v[3].result_hash);
	/* A missing range, a wrong digest, no parts, a part without a note:
	 * finish refuses. */
	parts_copy(&pl, &bad, 1);
	assert_int_equal(W->finish(workload_ctx(W), params, answer, &bad.pub,
				   err, sizeof(err)), GERR_VERIFY);
	assert_non_null(strstr(err, "gap at 30000"));
	parts_list_clear(&bad);
	parts_copy(&pl, &bad, UINT64_MAX);
	parts_set_note(&bad, 1, json_pack("{s:s}", "digest",
					  "0123456789abcdef"));
	assert_int_equal(W->finish(workload_ctx(W), params, answer, &bad.pub,
				   err, sizeof(err)), GERR_VERIFY);
	assert_non_null(strstr(err, "[60000, 90000) does not start from"));
	parts_set_note(&bad, 1, json_incref((json_t *)pl.v[1].note));
	parts_set_note(&bad, 3, json_pack("{s:s}", "digest",
					  "0123456789abcdef"));
	assert_int_equal(W->finish(workload_ctx(W), params, answer, &bad.pub,
				   err, sizeof(err)), GERR_VERIFY);
	assert_non_null(strstr(err, "not the last range's"));
	assert_int_equal(W->finish(workload_ctx(W), params, answer, NULL, err,
				   sizeof(err)), GERR_VERIFY);
	parts_set_note(&bad, 2, NULL);
	assert_int_equal(W->finish(workload_ctx(W), params, answer, &bad.pub,
				   err, sizeof(err)), GERR_CORRUPT);
	assert_non_null(strstr(err, "lease 2 of the job has no note"));
	parts_list_clear(&bad);
	assert_string_equal(json_string_value(json_object_get(answer, "fnv")),
			    "43d82427f1c3b631");
	assert_int_equal(json_array_size(json_object_get(answer, "rares")),
			 1584);
	assert_int_equal(json_array_size(json_object_get(answer, "zeros")),
			 14);
	assert_int_equal(json_integer_value(json_array_get(
				 json_object_get(answer, "zeros"), 13)), 408);
	/* Export a range across two stored leases. */
	struct wl_blob_reader rd = {&io, io_fetch};
	json_t *args = json_pack("{s:s}", "range", "29990:30010");
	void *out = NULL;
	size_t olen = 0;
	struct officers_seq *s = fast_to(100000, 2);
	assert_int_equal(W->export_data(workload_ctx(W), params, answer,
					&pl.pub, "values", args, &rd, &out,
					&olen, err, sizeof(err)), 0);
	assert_int_equal(olen, 40);
	for (int i = 0; i < 20; i++)
		assert_int_equal(((uint8_t *)out)[2 * i] |
					 ((uint8_t *)out)[2 * i + 1] << 8,
				 s->vals[29990 + i]);
	free(out);
	json_decref(args);
	args = json_pack("{s:s}", "range", "0:100001");
	assert_int_not_equal(W->export_data(workload_ctx(W), params, answer,
					    &pl.pub, "values", args, &rd, &out,
					    &olen, err, sizeof(err)), 0);
	json_decref(args);
	/* A range with no stored lease is refused, not left blank. */
	args = json_pack("{s:s}", "range", "29990:30010");
	parts_copy(&pl, &bad, 1);
	assert_int_equal(W->export_data(workload_ctx(W), params, answer,
					&bad.pub, "values", args, &rd, &out,
					&olen, err, sizeof(err)), GERR_CORRUPT);
	parts_list_clear(&bad);
	json_decref(args);
	/* Extend to 130000: one more lease from the stored state. */
	json_t *eargs = json_pack("{s:s}", "to", "130000"), *np = NULL;
	uint64_t total = 0;
	assert_int_equal(W->extend(workload_ctx(W), params, answer, eargs, &np, &total, err,
				   sizeof(err)), 0);
	assert_int_equal(total, 130000);
	json_decref(eargs);
	eargs = json_pack("{s:s}", "to", "5");
	json_t *np2 = NULL;
	assert_int_not_equal(W->extend(workload_ctx(W), np, answer, eargs, &np2, &total, err,
				       sizeof(err)), 0);
	json_decref(eargs);
	assert_int_equal(step(np, &cursor, &answer, &pl, 0, &io, 3), 0);
	assert_int_equal(step(np, &cursor, &answer, &pl, 0, &io, 3), GERR_DONE);
	assert_int_equal(W->finish(workload_ctx(W), np, answer, &pl.pub, err,
				   sizeof(err)), 0);
	seq_free(s);
	s = fast_to(130000, 2);
	char want[24];
	snprintf(want, sizeof(want), "%016llx",
		 (unsigned long long)s->st.fnv);
	assert_string_equal(json_string_value(json_object_get(answer, "fnv")),
			    want);
	/* Render. */
	char *text = W->render_text(workload_ctx(W), np, answer, &pl.pub);
	assert_non_null(strstr(text, "rare positions: 1584"));
	free(text);
	char *svg = NULL;
	size_t svg_len = 0;
	assert_int_equal(W->render_plot(workload_ctx(W), np, answer, &pl.pub,
					NULL, &svg, &svg_len, err,
					sizeof(err)), 0);
	assert_non_null(strstr(svg, "viewBox="));
	assert_non_null(strstr(svg, "class=\"bar rare\""));
	assert_non_null(strstr(svg, ">Grundy value</text>"));
	assert_null(strstr(svg, "e+"));
	free(svg);
	seq_free(s);
	json_decref(np);
	json_decref(params);
	json_decref(cursor);
	json_decref(answer);
	parts_list_clear(&pl);
	for (int i = 0; i < io.nblobs; i++)
		free(io.blobs[i].bytes);
}

/* The answer after 10 leases and after 100 leases over the same values:
 * equal but for the count of leases and the last state's name. */
static void test_answer_size(void **state)
{
	json_t *params = params_to("100000"), *ans[2] = {NULL, NULL};
	static const uint64_t want[2] = {10000, 1000};
	size_t len[2];
	(void)state;

	for (int i = 0; i < 2; i++) {
		struct io_state *io = calloc(1, sizeof(*io));
		struct parts_list pl;
		json_t *cursor = NULL;
		char err[WL_ERRLEN] = "", *text;
		int rc;

		assert_non_null(io);
		parts_list_init(&pl);
		while ((rc = step(params, &cursor, &ans[i], &pl, want[i], io,
				  2)) == 0)
			;
		assert_int_equal(rc, GERR_DONE);
		assert_int_equal(pl.pub.n, i ? 100 : 10);
		assert_int_equal(W->finish(workload_ctx(W), params, ans[i],
					   &pl.pub, err, sizeof(err)), 0);
		text = json_dumps(ans[i], JSON_COMPACT);
		len[i] = strlen(text);
		free(text);
		json_decref(cursor);
		parts_list_clear(&pl);
		for (int b = 0; b < io->nblobs; b++)
			free(io->blobs[b].bytes);
		free(io);
	}
	assert_int_equal(len[1], len[0] + 1); /* "leases":100 vs 10 */
	assert_int_equal(json_integer_value(json_object_get(ans[1], "leases")),
			 100);
	for (int i = 0; i < 2; i++) {
		json_object_del(ans[i], "leases");
		json_object_del(ans[i], "state");
	}
	assert_true(json_equal(ans[0], ans[1]));
	json_decref(ans[0]);
	json_decref(ans[1]);
	json_decref(params);
}

/* Run a carved lease on the CPU (2 threads); the result is malloc'ed. */
static void run_lease(json_t *params, json_t *spec, struct io_state *io,
		      void **res, size_t *len)
{
	struct wl_run_io rio = WL_RUN_IO_QUIET(io, io_fetch);
	struct wl_device dev = {WL_DEVICE_CPU, 0, 2, NULL};
	char err[WL_ERRLEN] = "";

	assert_int_equal(W->run(workload_ctx(W), params, spec, NULL, 0, &dev,
				&rio, res, len, err, sizeof(err)), 0);
}

/* Replication compares two results of one lease with results_agree: two
 * runs agree; a result with one value changed does not. (--check full is
 * gpud's: officers takes no check parameter.) */
static void test_results_agree(void **state)
{
	struct io_state io;
	json_t *args = json_pack("{s:s}", "to", "50000");
	json_t *params = NULL, *spec = NULL, *next = NULL;
	uint64_t total = 0, units;
	char err[WL_ERRLEN] = "";
	void *a, *b;
	size_t alen, blen;
	(void)state;

	memset(&io, 0, sizeof(io));
	assert_int_equal(W->parse_params(workload_ctx(W), args, &params,
					 &total, err, sizeof(err)), 0);
	assert_int_equal(total, 50000);
	json_decref(args);
	assert_non_null(W->results_agree);
	assert_int_equal(W->carve(workload_ctx(W), params, NULL, NULL, NULL,
				  50000, &spec, &units, &next, &carve_last), 0);
	assert_int_equal(carve_last, 1);
	run_lease(params, spec, &io, &a, &alen);
	run_lease(params, spec, &io, &b, &blen);
	assert_int_equal(W->results_agree(workload_ctx(W), params, spec, a, alen,
					  b, blen), 1);
	/* The last value, G(49999), one higher: still a well-formed result. */
	((uint8_t *)b)[blen - 2] ^= 1;
	assert_int_equal(W->results_agree(workload_ctx(W), params, spec, a, alen,
					  b, blen), 0);
	assert_int_equal(W->results_agree(workload_ctx(W), params, spec, a, alen,
					  "garbage", 7), 0);
	free(a);
	free(b);
	json_decref(spec);
	json_decref(next);
	json_decref(params);
	args = json_pack("{s:s, s:s}", "to", "100", "check", "full");
	assert_int_equal(W->parse_params(workload_ctx(W), args, &params, &total,
					 err, sizeof(err)), GERR_INVAL);
	json_decref(args);
}

static void test_params_and_spec(void **state)
{
	json_t *args, *p = NULL;
	uint64_t total;
	char err[WL_ERRLEN];
	(void)state;

	args = json_pack("{s:s}", "to", "0");
	assert_int_equal(W->parse_params(workload_ctx(W), args, &p, &total, err, sizeof(err)),
			 GERR_INVAL);
	json_decref(args);
	args = json_pack("{s:s, s:s}", "to", "10", "bogus", "1");
	assert_int_equal(W->parse_params(workload_ctx(W), args, &p, &total, err, sizeof(err)),
			 GERR_INVAL);
	json_decref(args);
	args = json_pack("{s:s}", "to", "1e6");
	assert_int_equal(W->parse_params(workload_ctx(W), args, &p, &total, err, sizeof(err)),
			 0);
	assert_int_equal(total, 1000000);
	json_decref(args);
	/* A lease from a non-zero start needs its state. */
	json_t *spec = json_pack("{s:s, s:i, s:i, s:n, s:s}", "kind", "extend",
				 "from", 10, "to", 20, "state", "digest",
				 "0000000000000000");
	void *res = NULL;
	size_t len = 0;
	assert_int_equal(W->run(workload_ctx(W), p, spec, NULL, 0, NULL, NULL, &res, &len, err,
				sizeof(err)), GERR_INVAL);
	json_decref(spec);
	/* Garbage results are refused by verify. */
	spec = json_pack("{s:s, s:i, s:i, s:n, s:s}", "kind", "extend", "from",
			 0, "to", 20, "state", "digest", "0000000000000000");
	assert_int_equal(W->verify(workload_ctx(W), p, spec, "garbage", 7, 1, err, sizeof(err)),
			 GERR_VERIFY);
	json_decref(spec);
	json_decref(p);
	assert_int_equal(officers_cuda_device_count() >= 0, 1);
}

UNIT_MAIN(cmocka_unit_test(test_known_values),
	cmocka_unit_test(test_fast_vs_ref_and_known),
	cmocka_unit_test(test_candidates_only),
	cmocka_unit_test(test_result_format),
	cmocka_unit_test(test_state_keeps_tail),
	cmocka_unit_test(test_params_and_spec),
	cmocka_unit_test(test_job),
	cmocka_unit_test(test_results_agree),
	cmocka_unit_test(test_answer_size))
