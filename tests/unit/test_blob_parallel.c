/* test_blob_parallel.c - blob format version 2: payloads of 16 MiB and more
 * deflated in chunks on threads, the chunk index, version-1 chunked blobs,
 * foreign chunk layouts, and every corruption of the index and chunks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <unistd.h>
#include <zlib.h>

#include "blob.h"
#include "blob_fx.h"
#include "gerr.h"
#include "le.h"
#include "unit_main.h"

/* Low-entropy values with long repeats (like Officers values). */
static uint8_t *make_values(size_t n, uint32_t seed)
{
	uint8_t *r = malloc(n ? n : 1);
	uint32_t x = seed;

	assert_non_null(r);
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		r[i] = (i / 4096) % 3 ? (uint8_t)(x >> 28) : (uint8_t)(i >> 3);
	}
	return r;
}

/* Payloads of 16 MiB or more are deflated in 4 MiB chunks on threads into
 * a version-2 blob: a chunk index, then one zlib stream that plain
 * uncompress() reads, the same bytes on every run; it decodes (on threads)
 * to the same bytes. */
static void test_parallel_deflate(void **state)
{
	const size_t n = (37u << 20) + 12345; /* 10 chunks, a short last */
	uint8_t *raw = make_values(n, 1), *b, *b2, *got, *plain;
	size_t blen, blen2, got_len, off, sum = 0;
	uLongf plain_len = n;
	struct blob_info info, pinfo;
	char err[160];

	(void)state;
	assert_int_equal(blob_encode(BLOB_RESULT, "officers", 7, 2, raw, n, &b,
				     &blen), 0);
	assert_true(blen < n / 2);
	/* Version 2; index: 4 MiB chunks, 10 of them, lengths that add up. */
	assert_memory_equal(b, "GPBL\x02\x00\x02\x00", 8);
	assert_int_equal(le_get32(b + 64), 4u << 20);
	assert_int_equal(le_get32(b + 68), 10);
	off = stream_off(b);
	assert_int_equal(off, 64 + 8 + 40);
	for (size_t i = 0; i < 10; i++) {
		assert_true(le_get32(b + 72 + 4 * i) > 0);
		sum += le_get32(b + 72 + 4 * i);
	}
	assert_int_equal(off + 2 + sum + 4, blen);
	assert_int_equal(le_get32(b + 56), (uint32_t)crc32(0, b + 64,
						       (uInt)(blen - 64)));

	assert_int_equal(blob_peek(b, blen, &pinfo, err, sizeof(err)), 0);
	assert_int_equal(blob_decode(b, blen, &info, &got, &got_len, err,
				     sizeof(err)), 0);
	assert_memory_equal(&info, &pinfo, sizeof(info));
	assert_int_equal(info.raw_len, n);
	assert_int_equal(info.comp_len, blen - 64);
	assert_int_equal(got_len, n);
	assert_memory_equal(got, raw, n);
	/* The stream alone is an ordinary zlib stream. */
	plain = malloc(n);
	assert_int_equal(uncompress(plain, &plain_len, b + off, blen - off),
			 Z_OK);
	assert_int_equal(plain_len, n);
	assert_memory_equal(plain, raw, n);
	assert_int_equal(blob_encode(BLOB_RESULT, "officers", 7, 2, raw, n, &b2,
				     &blen2), 0);
	assert_int_equal(blen2, blen);
	assert_memory_equal(b2, b, blen);
	free(raw);
	free(got);
	free(plain);
	free(b);
	free(b2);
}

/* Threads: one per CPU up to 16, one per 4 MiB chunk, none below 16 MiB. */
static void test_threads(void **state)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned most = cpus < 1 ? 1 : cpus > 16 ? 16 : (unsigned)cpus;

	(void)state;
	assert_int_equal(blob_threads(0), 1);
	assert_int_equal(blob_threads((16u << 20) - 1), 1);
	assert_int_equal(blob_threads(16u << 20), most < 4 ? most : 4);
	assert_int_equal(blob_threads(BLOB_MAX_RAW), most);
	assert_int_equal(blob_threads(BLOB_MAX_RAW + 1), 1);
}

/* A version-2 blob without its index, labelled version 1 (how blobs of
 * 16 MiB and more were written before version 2), still decodes. 16 MiB
 * exactly: the last chunk is a full one. */
static void test_v1_chunked(void **state)
{
	const size_t n = 16u << 20; /* exactly 4 chunks */
	uint8_t *raw = make_values(n, 2), *b, *c, *got;
	size_t blen, clen, off, got_len;
	struct blob_info info;
	char err[160];

	(void)state;
	assert_int_equal(blob_encode(BLOB_CHECKPOINT, "officers", 3, 1, raw, n,
				     &b, &blen), 0);
	assert_int_equal(b[4], 2);
	assert_int_equal(le_get32(b + 68), 4);
	assert_int_equal(blob_decode(b, blen, &info, &got, &got_len, err,
				     sizeof(err)), 0);
	assert_int_equal(got_len, n);
	assert_memory_equal(got, raw, n);
	free(got);

	off = stream_off(b);
	clen = 64 + blen - off;
	c = malloc(clen);
	memcpy(c, b, 64);
	memcpy(c + 64, b + off, blen - off);
	c[4] = 1;
	le_put64(c + 48, clen - 64);
	fix_crcs(c, clen);
	assert_int_equal(blob_decode(c, clen, &info, &got, &got_len, err,
				     sizeof(err)), 0);
	assert_int_equal(info.comp_len, clen - 64);
	assert_int_equal(got_len, n);
	assert_memory_equal(got, raw, n);
	free(got);
	/* The reverse: a v2 payload read as v1 is not a zlib stream. */
	b[4] = 1;
	fix_crcs(b, blen);
	assert_int_equal(decode(b, blen, err), GERR_CORRUPT);
	assert_non_null(strstr(err, "zlib"));
	free(c);
	free(b);
	free(raw);
}

/* Recompute both CRCs and decode: GERR_CORRUPT, with want in the reason. */
static void assert_corrupt(uint8_t *c, size_t len, const char *want)
{
	char err[160];

	fix_crcs(c, len);
	assert_int_equal(decode(c, len, err), GERR_CORRUPT);
	if (!strstr(err, want))
		fail_msg("reason \"%s\" does not mention \"%s\"", err, want);
}

/* A chunk index that is wrong while both CRCs are right: refused, most of
 * it before anything is inflated, the rest by the chunk that breaks. */
static void test_v2_corrupt_index(void **state)
{
	const size_t n = (16u << 20) + 100000; /* 5 chunks, a short last */
	uint8_t *raw = make_values(n, 3), *b, *c;
	size_t blen;
	uint32_t l1, l2;
	char err[160];

	(void)state;
	assert_int_equal(blob_encode(BLOB_RESULT, "officers", 9, 4, raw, n, &b,
				     &blen), 0);
	free(raw);
	assert_int_equal(le_get32(b + 68), 5);
	assert_int_equal(decode(b, blen, err), 0);
	c = malloc(blen);
	l1 = le_get32(b + 72 + 4);
	l2 = le_get32(b + 72 + 8);
#define CASE(stmt, want)                                                     \
	do {                                                                 \
		memcpy(c, b, blen);                                          \
		stmt;                                                        \
		assert_corrupt(c, blen, want);                               \
	} while (0)
	/* Count, chunk size. */
	CASE(le_put32(c + 68, 6), "chunks of");
	CASE(le_put32(c + 68, 4), "chunks of");
	CASE(le_put32(c + 68, 0), "chunks of");
	CASE(le_put32(c + 68, UINT32_MAX), "chunks of");
	CASE(le_put32(c + 64, 0), "chunk size 0");
	CASE(le_put32(c + 64, UINT32_MAX), "chunk size");
	CASE(le_put32(c + 64, (64u << 10) - 1), "chunk size");
	CASE(le_put32(c + 64, (64u << 20) + 1), "chunk size");
	CASE(le_put32(c + 64, 8u << 20), "chunks of"); /* would need 3 */
	/* Lengths: the sum off, a zero, bytes moved between neighbours (the
	 * sum and the CRCs right: only inflating the chunk tells). */
	CASE(le_put32(c + 76, l1 + 1), "add up to");
	CASE(le_put32(c + 76, l1 - 1), "add up to");
	CASE((le_put32(c + 76, 0), le_put32(c + 80, l1 + l2)), "length 0");
	CASE((le_put32(c + 76, l1 + 1000), le_put32(c + 80, l2 - 1000)),
	     "chunk 2 of 5");
	CASE((le_put32(c + 76, l1 - 1000), le_put32(c + 80, l2 + 1000)),
	     "chunk 2 of 5");
	CASE((le_put32(c + 76, l1 + 1), le_put32(c + 80, l2 - 1)),
	     "chunk 2 of 5");
	CASE((le_put32(c + 76, l1 - 1), le_put32(c + 80, l2 + 1)),
	     "chunk 2 of 5");
	CASE((le_put32(c + 84, le_get32(b + 84) + 3),
	      le_put32(c + 88, le_get32(b + 88) - 3)), "chunk 4 of 5");
	CASE((le_put32(c + 84, le_get32(b + 84) - 3),
	      le_put32(c + 88, le_get32(b + 88) + 3)), "chunk 4 of 5");
	/* The zlib header: not deflate, its check, a preset dictionary. */
	CASE(c[92] = 0x79, "zlib header");
	CASE(c[93] ^= 1, "zlib header");
	CASE(c[93] = 0x20 | (31 - (0x7820 % 31)), "dictionary");
	/* A flipped byte in chunk 3's data: zlib or the Adler-32 notices. */
	memcpy(c, b, blen);
	c[92 + 2 + le_get32(b + 72) + l1 + l2 / 2] ^= 0x24;
	fix_crcs(c, blen);
	assert_int_equal(decode(c, blen, err), GERR_CORRUPT);
	assert_true(strstr(err, "chunk 3 of 5") || strstr(err, "Adler-32"));
	/* A wrong trailer. */
	CASE(c[blen - 1] ^= 1, "Adler-32");
	CASE(c[blen - 4] ^= 0x80, "Adler-32");
#undef CASE
	free(c);
	free(b);
}

/* Index lengths that the bytes present cannot hold, on a small blob (the
 * size check of the header stops large ones before the index). */
static void test_v2_truncated_index(void **state)
{
	size_t len;
	uint8_t *b = make_blob(5000, &len);

	(void)state;
	b[4] = 2;
	le_put32(b + 64, 64u << 10);
	le_put32(b + 68, 1);
	le_put64(b + 48, 10); /* 8 + 2 of the 4 bytes of len[0] */
	assert_corrupt(b, 64 + 10, "truncated");
	le_put64(b + 48, 15); /* the index and 3 bytes: no zlib stream */
	le_put32(b + 72, 1);
	assert_corrupt(b, 64 + 15, "no room");
	le_put64(b + 48, 7);
	assert_corrupt(b, 64 + 7, "too short");
	le_put64(b + 48, 0);
	assert_corrupt(b, 64, "cannot come from");
	le_put64(b + 48, 5);
	le_put64(b + 40, 0); /* an empty v2 blob has no chunk */
	assert_corrupt(b, 64 + 5, "too short");
	le_put64(b + 48, 12);
	assert_corrupt(b, 64 + 12, "raw length 0");
	free(b);
}

enum v2_flaw {
	V2_GOOD,
	V2_FINAL_EARLY,   /* chunk 1 holds a final block */
	V2_SHARED_WINDOW, /* one deflate stream: matches cross chunks */
	V2_UNALIGNED,     /* chunk 1 ends inside a block, not on a byte */
	V2_NO_FINAL,      /* the last chunk ends with a sync flush */
};

/* A version-2 blob built here, apart from blob.c's encoder: chunks of
 * chunk_raw bytes deflated alone at level 1, a sync flush after each but
 * the last, or with the flaw asked for. Sequential inflate reads all but
 * V2_FINAL_EARLY and V2_NO_FINAL; the format allows only V2_GOOD. */
static uint8_t *build_v2(const uint8_t *raw, size_t n, uint32_t chunk_raw,
			 enum v2_flaw flaw, size_t *ret_len)
{
	size_t nch = (n + chunk_raw - 1) / chunk_raw;
	size_t cap = 64 + 8 + 4 * nch + 2 + compressBound(n) + 32 * nch + 4;
	uint8_t *b = calloc(1, cap), *s, *q;
	uLong adler = adler32(0L, Z_NULL, 0);
	z_stream z;

	assert_non_null(b);
	memcpy(b, "GPBL\x02\x00\x02\x00officers", 16);
	le_put64(b + 24, 7);
	le_put64(b + 32, 2);
	le_put64(b + 40, n);
	le_put32(b + 64, chunk_raw);
	le_put32(b + 68, (uint32_t)nch);
	s = b + 64 + 8 + 4 * nch;
	s[0] = 0x78;
	s[1] = 0x01;
	q = s + 2;
	memset(&z, 0, sizeof(z));
	for (size_t i = 0; i < nch; i++) {
		size_t off = i * chunk_raw;
		size_t len = n - off < chunk_raw ? n - off : chunk_raw;
		int last = i + 1 == nch, flush = last ? Z_FINISH : Z_SYNC_FLUSH;
		uInt room;

		if (flaw != V2_SHARED_WINDOW || i == 0)
			assert_int_equal(deflateInit2(&z, 1, Z_DEFLATED, -15, 8,
						      Z_DEFAULT_STRATEGY),
					 Z_OK);
		if (i == 0 && flaw == V2_FINAL_EARLY)
			flush = Z_FINISH;
		if (i == 0 && flaw == V2_UNALIGNED)
			flush = Z_PARTIAL_FLUSH;
		if (last && flaw == V2_NO_FINAL)
			flush = Z_SYNC_FLUSH;
		room = (uInt)(cap - 4 - (size_t)(q - b));
		z.next_in = (Bytef *)raw + off;
		z.avail_in = (uInt)len;
		z.next_out = q;
		z.avail_out = room;
		assert_true(deflate(&z, flush) >= Z_OK);
		assert_int_equal(z.avail_in, 0);
		le_put32(b + 72 + 4 * i, room - z.avail_out);
		q += room - z.avail_out;
		if (flaw != V2_SHARED_WINDOW || last)
			deflateEnd(&z);
		adler = adler32(adler, raw + off, (uInt)len);
	}
	for (int k = 3; k >= 0; k--)
		*q++ = (uint8_t)(adler >> (8 * k));
	*ret_len = (size_t)(q - b);
	le_put64(b + 48, *ret_len - 64);
	fix_crcs(b, *ret_len);
	return b;
}

/* What blob.c's encoder does not write but the format allows decodes:
 * small chunks, a chunk size that is no power of two, a single chunk. */
static void test_v2_foreign(void **state)
{
	static const struct {
		size_t n;
		uint32_t chunk;
	} cases[] = {
		{ 1, 64u << 10 },
		{ 64u << 10, 64u << 10 },
		{ 4u << 16, 64u << 10 },
		{ 200000, 64u << 10 },
		{ 1000003, 100000 },
		{ 3u << 20, 64u << 20 },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		uint8_t *raw = make_values(cases[k].n, 5), *b, *got;
		size_t blen, got_len;
		struct blob_info info;
		char err[160];

		b = build_v2(raw, cases[k].n, cases[k].chunk, V2_GOOD, &blen);
		assert_int_equal(blob_decode(b, blen, &info, &got, &got_len,
					     err, sizeof(err)), 0);
		assert_int_equal(got_len, cases[k].n);
		assert_memory_equal(got, raw, got_len);
		free(got);
		free(b);
		free(raw);
	}
}

/* Chunks that a sequential inflate would read differently, or not at
 * all, each refused by the chunk at fault. */
static void test_v2_bad_chunks(void **state)
{
	const size_t n = 300000; /* 5 chunks of 64 KiB, a short last */
	uint8_t *raw = make_values(n, 6), *b, *plain = malloc(n);
	size_t blen, off;
	uLongf plain_len;
	char err[160];

	(void)state;
	b = build_v2(raw, n, 64u << 10, V2_SHARED_WINDOW, &blen);
	off = stream_off(b);
	plain_len = n;
	assert_int_equal(uncompress(plain, &plain_len, b + off, blen - off),
			 Z_OK);
	assert_memory_equal(plain, raw, n);
	free(b);

	/* Each broken layout is refused, naming the chunk and the reason. */
	static const struct {
		int mode;
		const char *chunk, *why;
	} bad[] = {
		{ V2_SHARED_WINDOW, "chunk 2 of 5", "too far back" },
		{ V2_FINAL_EARLY, "chunk 1 of 5", "final block" },
		{ V2_UNALIGNED, "chunk 1 of 5", "boundary" },
		{ V2_NO_FINAL, "chunk 5 of 5", "does not end the stream" },
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		b = build_v2(raw, n, 64u << 10, bad[k].mode, &blen);
		assert_int_equal(decode(b, blen, err), GERR_CORRUPT);
		assert_non_null(strstr(err, bad[k].chunk));
		assert_non_null(strstr(err, bad[k].why));
		free(b);
	}

	/* Raw lengths that disagree with the chunks: one byte more is one
	 * chunk more (index); one less, the last chunk overflows; a whole
	 * chunk less with the count to match, the sum is off. */
	b = build_v2(raw, n, 64u << 10, V2_GOOD, &blen);
	assert_int_equal(decode(b, blen, err), 0);
	le_put64(b + 40, n - 1);
	assert_corrupt(b, blen, "chunk 5 of 5");
	le_put64(b + 40, n + 1);
	assert_corrupt(b, blen, "chunk 5 of 5");
	le_put64(b + 40, 5u << 16);
	assert_corrupt(b, blen, "chunk 5 of 5");
	le_put64(b + 40, (5u << 16) + 1);
	assert_corrupt(b, blen, "chunks of");
	free(b);
	free(plain);
	free(raw);
}

/* Whether flipping byte i of a version-2 blob is worth a decode: every
 * byte of the index, the zlib header and trailer, and near each chunk's
 * ends; every 9th elsewhere (a decode per byte would be slow). */
static int worth_flipping(const uint8_t *b, size_t blen, size_t i)
{
	size_t n = le_get32(b + 68), at = stream_off(b) + 2;

	if (i < at || i + 4 >= blen || i % 9 == 0)
		return 1;
	for (size_t k = 0; k < n; k++) {
		if (i >= at && i < at + 16)
			return 1;
		at += le_get32(b + 72 + 4 * k);
		if (i + 16 >= at && i < at)
			return 1;
	}
	return 0;
}

/* Payload bytes of a small version-2 blob flipped, CRCs fixed: the index
 * checks, a chunk, or the Adler-32 notice, unless the flip decodes to the
 * very same bytes; and whatever decodes is what a sequential inflate of
 * the stream gives. */
static void test_v2_payload_flips(void **state)
{
	const size_t n = 3 * (64u << 10) + 5000;
	uint8_t *raw = make_raw(n), *b, *c, *plain = malloc(n);
	size_t blen;
	uint64_t seed = 99;
	int caught = 0, total = 0;
	char err[160];

	(void)state;
	b = build_v2(raw, n, 64u << 10, V2_GOOD, &blen);
	c = malloc(blen);
	for (size_t i = 64; i < blen; i++) {
		struct blob_info info;
		uint8_t *got = NULL;
		size_t got_len = 0, off;
		uLongf plain_len = n;
		int r;

		if (!worth_flipping(b, blen, i))
			continue;
		memcpy(c, b, blen);
		c[i] ^= (uint8_t)(1u << (rng_next(&seed) % 8));
		fix_crcs(c, blen);
		r = blob_decode(c, blen, &info, &got, &got_len, err,
				sizeof(err));
		total++;
		if (r == 0) {
			assert_int_equal(got_len, n);
			assert_memory_equal(got, raw, n);
			off = stream_off(c);
			assert_int_equal(uncompress(plain, &plain_len, c + off,
						    blen - off), Z_OK);
			assert_memory_equal(plain, got, n);
			free(got);
			continue;
		}
		assert_int_equal(r, GERR_CORRUPT);
		assert_true(strlen(err) > 0);
		caught++;
	}
	assert_true(total > 1000);
	assert_true(caught > total * 9 / 10);
	free(c);
	free(b);
	free(plain);
	free(raw);
}

UNIT_MAIN(cmocka_unit_test(test_parallel_deflate),
	cmocka_unit_test(test_threads),
	cmocka_unit_test(test_v1_chunked),
	cmocka_unit_test(test_v2_corrupt_index),
	cmocka_unit_test(test_v2_truncated_index),
	cmocka_unit_test(test_v2_foreign),
	cmocka_unit_test(test_v2_bad_chunks),
	cmocka_unit_test(test_v2_payload_flips))
