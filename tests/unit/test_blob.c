/* test_blob.c - blob format (every corruption is caught) and blob store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "blob.h"
#include "gerr.h"
#include "le.h"

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* Recompute both CRCs so that deeper checks are reached. */
static void fix_crcs(uint8_t *b, size_t len)
{
	le_put32(b + 56, (uint32_t)crc32(0, b + 64, (uInt)(len - 64)));
	le_put32(b + 60, (uint32_t)crc32(0, b, 60));
}

static void fix_header_crc(uint8_t *b)
{
	le_put32(b + 60, (uint32_t)crc32(0, b, 60));
}

/* Compressible but not trivial raw data. */
static uint8_t *make_raw(size_t n)
{
	uint8_t *r = malloc(n ? n : 1);

	for (size_t i = 0; i < n; i++)
		r[i] = (uint8_t)((i * 7) ^ (i >> 5));
	return r;
}

static uint8_t *make_blob(size_t raw_len, size_t *ret_len)
{
	uint8_t *raw = make_raw(raw_len), *b;

	assert_int_equal(blob_encode(BLOB_CHECKPOINT, "graveler", 42, 7, raw,
				     raw_len, &b, ret_len),
			 0);
	free(raw);
	return b;
}

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

/* Where the zlib stream starts: after the chunk index in version 2. */
static size_t stream_off(const uint8_t *b)
{
	return b[4] == 2 ? 64 + 8 + 4 * (size_t)le_get32(b + 68) : 64;
}

static int decode(const uint8_t *b, size_t len, char *err)
{
	struct blob_info info;
	uint8_t *raw = NULL;
	size_t raw_len = 0;
	int r;

	err[0] = 0;
	r = blob_decode(b, len, &info, &raw, &raw_len, err, 160);
	if (r == 0)
		free(raw);
	else
		assert_null(raw);
	return r;
}

/* A restamped blob is the blob encoded with the new lease and epoch, byte
 * for byte; a damaged header is refused and left alone. */
static void test_restamp(void **state)
{
	size_t n = 100000, la, lb;
	uint8_t *raw = make_raw(n), *a, *b;

	(void)state;
	assert_int_equal(blob_encode(BLOB_RESULT, "officers", 0, 0, raw, n, &a,
				     &la),
			 0);
	assert_int_equal(blob_encode(BLOB_RESULT, "officers", 12345, 6, raw, n,
				     &b, &lb),
			 0);
	assert_int_equal(blob_restamp(a, la, 12345, 6), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	assert_int_equal(blob_restamp(a, BLOB_HEADER_LEN - 1, 1, 1),
			 GERR_INVAL);
	a[61] ^= 1;
	assert_int_equal(blob_restamp(a, la, 1, 1), GERR_INVAL);
	a[61] ^= 1;
	assert_memory_equal(a, b, la);
	assert_int_equal(blob_restamp(NULL, la, 1, 1), GERR_INVAL);
	free(a);
	free(b);
	free(raw);
}

/* The blob's zlib stream is exactly what one compress2 at level makes. */
static void assert_stream_is(const uint8_t *b, size_t blen, const uint8_t *raw,
			     size_t n, int level)
{
	uLongf cl = compressBound(n);
	uint8_t *c = malloc(cl);

	assert_int_equal(compress2(c, &cl, raw, n, level), Z_OK);
	assert_int_equal(cl, blen - 64);
	assert_memory_equal(c, b + 64, cl);
	free(c);
}

static void test_round_trip(void **state)
{
	static const size_t sizes[] = { 0, 1, 63, 64, 65, 4096, 1000003 };

	(void)state;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s], blen, got_len;
		uint8_t *raw = make_raw(n), *b, *got;
		struct blob_info info, pinfo;
		char err[160];

		assert_int_equal(blob_encode(BLOB_RESULT, "collatz", 1ull << 40,
					     3, raw, n, &b, &blen),
				 0);
		/* Documented layout, little-endian. */
		assert_memory_equal(b, "GPBL\x01\x00\x02\x00", 8);
		assert_memory_equal(b + 8, "collatz\0\0\0\0\0\0\0\0\0", 16);
		assert_memory_equal(b + 24, "\0\0\0\0\0\x01\0\0", 8);
		assert_memory_equal(b + 32, "\x03\0\0\0\0\0\0\0", 8);
		assert_int_equal(le_get32(b + 60), (uint32_t)crc32(0, b, 60));
		assert_int_equal(le_get32(b + 56),
				 (uint32_t)crc32(0, b + 64, (uInt)(blen - 64)));

		assert_int_equal(blob_peek(b, blen, &pinfo, err, sizeof(err)),
				 0);
		assert_int_equal(blob_decode(b, blen, &info, &got, &got_len,
					     err, sizeof(err)),
				 0);
		assert_int_equal(info.kind, BLOB_RESULT);
		assert_string_equal(info.workload, "collatz");
		assert_int_equal(info.lease, 1ull << 40);
		assert_int_equal(info.epoch, 3);
		assert_int_equal(info.raw_len, n);
		assert_int_equal(info.comp_len, blen - 64);
		assert_memory_equal(&info, &pinfo, sizeof(info));
		assert_int_equal(got_len, n);
		if (n)
			assert_memory_equal(got, raw, n);
		/* The stream is what compress2 at level 1 (Z_BEST_SPEED) makes. */
		assert_stream_is(b, blen, raw, n, Z_BEST_SPEED);
		free(raw);
		free(got);
		free(b);
	}
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

/* BLOB_PACK_STORE: stored deflate blocks (what compress2 at level 0
 * makes), in the same format, read by the same decoder; the threaded path
 * (16 MiB and more) stores too. Unknown packs are refused. */
static void test_pack_store(void **state)
{
	static const size_t sizes[] = { 0, 1, 4096, 2200056, (17u << 20) + 3 };
	uint8_t *b = NULL;
	size_t blen;

	(void)state;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s], got_len, off;
		uint8_t *raw = make_raw(n), *got, *plain;
		uLongf plain_len = n;
		struct blob_info info;
		char err[160];

		assert_int_equal(blob_encode_pack(BLOB_RESULT, "othello", 4, 2,
						  raw, n, BLOB_PACK_STORE, &b,
						  &blen), 0);
		/* Stored blocks: a few bytes per 64 KiB over the raw size. */
		assert_true(blen >= 64 + n && blen <= 64 + n + 32 + n / 8192);
		assert_int_equal(blob_decode(b, blen, &info, &got, &got_len, err,
					     sizeof(err)), 0);
		assert_int_equal(info.raw_len, n);
		assert_int_equal(got_len, n);
		if (n)
			assert_memory_equal(got, raw, n);
		plain = malloc(n + 1);
		assert_int_equal(b[4], n < (16u << 20) ? 1 : 2);
		off = stream_off(b);
		assert_int_equal(uncompress(plain, &plain_len, b + off,
					    blen - off), Z_OK);
		assert_int_equal(plain_len, n);
		if (n)
			assert_memory_equal(plain, raw, n);
		if (n < (16u << 20))
			assert_stream_is(b, blen, raw, n, Z_NO_COMPRESSION);
		free(plain);
		free(got);
		free(raw);
		free(b);
	}
	assert_int_equal(blob_encode_pack(BLOB_RESULT, "othello", 4, 2, "x", 1,
					  (enum blob_pack)7, &b, &blen),
			 GERR_INVAL);
}

static void test_workload_names(void **state)
{
	uint8_t *b;
	size_t len;
	struct blob_info info;
	char err[160];

	(void)state;
	/* 16 characters fill the field exactly (no NUL). */
	assert_int_equal(blob_encode(BLOB_CHECKPOINT, "abcdefghijklmnop", 1, 1,
				     "x", 1, &b, &len),
			 0);
	assert_int_equal(blob_peek(b, len, &info, err, sizeof(err)), 0);
	assert_string_equal(info.workload, "abcdefghijklmnop");
	free(b);
	assert_int_equal(blob_encode(BLOB_CHECKPOINT, "abcdefghijklmnopq", 1,
				     1, "x", 1, &b, &len),
			 GERR_INVAL);
	assert_int_equal(blob_encode(BLOB_CHECKPOINT, "", 1, 1, "x", 1, &b,
				     &len),
			 GERR_INVAL);
	assert_int_equal(blob_encode(BLOB_CHECKPOINT, NULL, 1, 1, "x", 1, &b,
				     &len),
			 GERR_INVAL);
	assert_int_equal(blob_encode(BLOB_CHECKPOINT, "a b", 1, 1, "x", 1, &b,
				     &len),
			 GERR_INVAL);
	assert_int_equal(blob_encode(BLOB_CHECKPOINT, "a\nb", 1, 1, "x", 1,
				     &b, &len),
			 GERR_INVAL);
	assert_int_equal(blob_encode((enum blob_kind)4, "w", 1, 1, "x", 1, &b,
				     &len),
			 GERR_INVAL);
	assert_int_equal(blob_encode(BLOB_RESULT, "w", 1, 1, NULL, 5, &b, &len),
			 GERR_INVAL);
	assert_int_equal(blob_encode(BLOB_RESULT, "w", 1, 1, "x",
				     (size_t)BLOB_MAX_RAW + 1, &b, &len),
			 GERR_TOOBIG);
}

static void test_flip_every_header_byte(void **state)
{
	size_t len;
	uint8_t *b = make_blob(5000, &len);
	char err[160];

	(void)state;
	for (size_t i = 0; i < BLOB_HEADER_LEN; i++) {
		for (int bit = 0; bit < 8; bit++) {
			uint8_t *c = malloc(len);
			struct blob_info info;

			memcpy(c, b, len);
			c[i] ^= (uint8_t)(1u << bit);
			assert_int_equal(decode(c, len, err), GERR_CORRUPT);
			assert_true(strlen(err) > 0);
			assert_int_equal(
				blob_peek(c, len, &info, err, sizeof(err)),
				GERR_CORRUPT);
			free(c);
		}
	}
	assert_int_equal(decode(b, len, err), 0);
	free(b);
}

/* Field checks behind the header CRC: change a field, fix the CRC. */
static void test_fields_with_valid_crc(void **state)
{
	size_t len;
	uint8_t *b = make_blob(5000, &len), *c = malloc(len);
	char err[160];

	(void)state;
#define MUTATE(stmt, want_substr)                                            \
	do {                                                                 \
		memcpy(c, b, len);                                           \
		stmt;                                                        \
		fix_header_crc(c);                                           \
		assert_int_equal(decode(c, len, err), GERR_CORRUPT);         \
		assert_non_null(strstr(err, want_substr));                   \
	} while (0)
	MUTATE(c[0] = 'X', "magic");
	MUTATE(c[4] = 3, "version");
	MUTATE(c[5] = 1, "version");
	MUTATE(c[4] = 2, "chunk"); /* a zlib stream is not a chunk index */
	MUTATE(c[6] = 0, "kind");
	MUTATE(c[6] = 4, "kind");
	MUTATE(c[7] = 1, "kind");
	MUTATE(c[8] = 0, "workload");             /* empty name */
	MUTATE(c[10] = ' ', "workload");          /* bad character */
	MUTATE(c[20] = 'x', "NUL-padded");        /* junk after NUL */
	MUTATE(le_put64(c + 40, BLOB_MAX_RAW + 1), "exceeds");
	MUTATE(le_put64(c + 40, UINT64_MAX), "exceeds");
	MUTATE(le_put64(c + 40, BLOB_MAX_RAW), "cannot come from");
	MUTATE(le_put64(c + 48, len - 64 + 1), "compressed length");
	MUTATE(le_put64(c + 48, len - 64 - 1), "compressed length");
	MUTATE(le_put64(c + 48, UINT64_MAX), "compressed length");
	MUTATE(c[56] ^= 1, "payload checksum");
	/* raw_len disagreeing with the stream, CRCs all valid. */
	MUTATE(le_put64(c + 40, 4999), "more than");
	MUTATE(le_put64(c + 40, 5001), "header says");
	MUTATE(le_put64(c + 40, 0), "more than");
#undef MUTATE
	free(c);
	free(b);
}

static void test_payload_corruption(void **state)
{
	size_t len;
	uint8_t *b = make_blob(20000, &len), *c = malloc(len + 16);
	char err[160];
	uint64_t seed = 12345;
	int caught_by_zlib = 0, caught = 0;
	uint8_t *raw0;

	(void)state;
	/* A flipped payload byte without a CRC fix: the payload CRC. */
	for (size_t i = 64; i < len; i += 7) {
		memcpy(c, b, len);
		c[i] ^= 0x10;
		assert_int_equal(decode(c, len, err), GERR_CORRUPT);
		assert_non_null(strstr(err, "payload checksum"));
	}
	/* With the CRC fixed up, zlib (adler32, structure) or the length
	 * checks must still notice. The only acceptable success is a flip
	 * that decodes to the very same bytes (e.g. an equivalent match
	 * distance), which is then not a corruption of the data. */
	raw0 = make_raw(20000);
	for (size_t i = 64; i < len; i++) {
		struct blob_info info;
		uint8_t *raw = NULL;
		size_t raw_len = 0;
		int r;

		memcpy(c, b, len);
		c[i] ^= (uint8_t)(1u << (rng_next(&seed) % 8));
		fix_crcs(c, len);
		r = blob_decode(c, len, &info, &raw, &raw_len, err,
				sizeof(err));
		if (r == 0) {
			assert_int_equal(raw_len, 20000);
			assert_memory_equal(raw, raw0, raw_len);
			free(raw);
			continue;
		}
		assert_int_equal(r, GERR_CORRUPT);
		caught++;
		if (strstr(err, "zlib"))
			caught_by_zlib++;
	}
	free(raw0);
	assert_true(caught > (int)(len - 64) * 9 / 10);
	assert_true(caught_by_zlib > 0);

	/* Trailing bytes after a complete stream (lengths and CRCs fixed). */
	memcpy(c, b, len);
	memcpy(c + len, "TRAILING", 8);
	le_put64(c + 48, len - 64 + 8);
	fix_crcs(c, len + 8);
	assert_int_equal(decode(c, len + 8, err), GERR_CORRUPT);
	assert_non_null(strstr(err, "trailing"));

	/* Stream cut short, lengths and CRCs consistent with the cut. */
	memcpy(c, b, len);
	le_put64(c + 48, len - 64 - 10);
	fix_crcs(c, len - 10);
	assert_int_equal(decode(c, len - 10, err), GERR_CORRUPT);
	assert_non_null(strstr(err, "truncated"));

	/* Empty payload. */
	memcpy(c, b, 64);
	le_put64(c + 48, 0);
	fix_crcs(c, 64);
	assert_int_equal(decode(c, 64, err), GERR_CORRUPT);
	free(c);
	free(b);
}

static void test_truncation(void **state)
{
	size_t len;
	uint8_t *b = make_blob(3000, &len);
	char err[160];

	(void)state;
	for (size_t n = 0; n < len; n++) {
		uint8_t *c = malloc(n ? n : 1);

		memcpy(c, b, n);
		assert_int_equal(decode(c, n, err), GERR_CORRUPT);
		free(c);
	}
	{
		struct blob_info info;
		uint8_t *raw;
		size_t rl;

		assert_int_equal(blob_decode(NULL, 0, &info, &raw, &rl, err,
					     sizeof(err)),
				 GERR_INVAL);
		assert_int_equal(blob_peek(b, len, NULL, err, sizeof(err)),
				 GERR_INVAL);
	}
	free(b);
}

static void test_kinds_are_distinct(void **state)
{
	uint8_t *cp, *res;
	size_t cl, rl;
	struct blob_info info;
	char err[160];

	(void)state;
	assert_int_equal(blob_encode(BLOB_CHECKPOINT, "w", 9, 2, "data", 4,
				     &cp, &cl),
			 0);
	assert_int_equal(blob_encode(BLOB_RESULT, "w", 9, 2, "data", 4, &res,
				     &rl),
			 0);
	assert_int_equal(blob_peek(cp, cl, &info, err, sizeof(err)), 0);
	assert_int_equal(info.kind, BLOB_CHECKPOINT);
	assert_int_equal(blob_peek(res, rl, &info, err, sizeof(err)), 0);
	assert_int_equal(info.kind, BLOB_RESULT);
	/* Changing the kind without the CRC is corruption. */
	cp[6] = BLOB_RESULT;
	assert_int_equal(blob_peek(cp, cl, &info, err, sizeof(err)),
			 GERR_CORRUPT);
	free(cp);
	free(res);
}

static void test_decode_fuzz(void **state)
{
	size_t len;
	uint8_t *b = make_blob(2000, &len);
	uint64_t seed = 0xC0FFEE;
	char err[160];

	(void)state;
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)(rng_next(&seed) % (len + 8));
		uint8_t *c = malloc(n ? n : 1);
		int r;

		for (size_t k = 0; k < n; k++)
			c[k] = k < len ? b[k] : (uint8_t)rng_next(&seed);
		for (int m = 0; m < 1 + (int)(rng_next(&seed) % 3); m++)
			if (n)
				c[rng_next(&seed) % n] = (uint8_t)rng_next(&seed);
		if (n >= 64 && (rng_next(&seed) & 1)) {
			le_put64(c + 48, n - 64);
			fix_crcs(c, n);
		}
		r = decode(c, n, err);
		assert_true(r == 0 || r == GERR_CORRUPT);
		free(c);
	}
	free(b);
}

static void test_hash(void **state)
{
	char h[BLOB_HASH_HEX];
	uint8_t want[32];
	char want_hex[65];

	(void)state;
	blob_hash_hex("abc", 3, h);
	crypto_generichash(want, 32, (const uint8_t *)"abc", 3, NULL, 0);
	sodium_bin2hex(want_hex, sizeof(want_hex), want, 32);
	assert_string_equal(h, want_hex);
	assert_int_equal(strlen(h), 64);
	for (int i = 0; i < 64; i++)
		assert_true((h[i] >= '0' && h[i] <= '9') ||
			    (h[i] >= 'a' && h[i] <= 'f'));
	/* BLAKE2b-256 of the empty string (RFC 7693 parameters). */
	blob_hash_hex(NULL, 0, h);
	assert_string_equal(h, "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f"
			       "7787faab45cdf12fe3a8");
}

/* ---- store ---- */

struct tmpdir {
	char path[256];
};

static int setup_dir(void **state)
{
	struct tmpdir *t = malloc(sizeof(*t));

	snprintf(t->path, sizeof(t->path), "/tmp/gpud-test-blob-XXXXXX");
	if (!mkdtemp(t->path))
		return -1;
	*state = t;
	return 0;
}

static void rm_rf(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char sub[1024];

	if (!d) {
		unlink(path);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		rm_rf(sub);
	}
	closedir(d);
	chmod(path, 0700);
	rmdir(path);
}

static int teardown_dir(void **state)
{
	struct tmpdir *t = *state;

	rm_rf(t->path);
	free(t);
	return 0;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_store_put_get(void **state)
{
	struct tmpdir *t = *state;
	size_t len, got_len;
	uint8_t *b = make_blob(10000, &len), *got;
	char hash[BLOB_HASH_HEX], hash2[BLOB_HASH_HEX], want[BLOB_HASH_HEX];
	char path[512];
	struct stat st;

	assert_int_equal(blob_store_put(t->path, b, len, hash), 0);
	blob_hash_hex(b, len, want);
	assert_string_equal(hash, want);

	snprintf(path, sizeof(path), "%s/blobs", t->path);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/blobs/%.2s", t->path, hash);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(count_entries(path), 1); /* no temp left over */
	snprintf(path, sizeof(path), "%s/blobs/%.2s/%s", t->path, hash, hash);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, len);

	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len), 0);
	assert_int_equal(got_len, len);
	assert_memory_equal(got, b, len);
	free(got);

	/* Idempotent. */
	assert_int_equal(blob_store_put(t->path, b, len, hash2), 0);
	assert_string_equal(hash2, hash);
	snprintf(path, sizeof(path), "%s/blobs/%.2s", t->path, hash);
	assert_int_equal(count_entries(path), 1);

	/* Remove, then get reports not found; removing twice is fine. */
	assert_int_equal(blob_store_remove(t->path, hash), 0);
	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len),
			 GERR_NOTFOUND);
	assert_int_equal(blob_store_remove(t->path, hash), 0);
	free(b);
}

static void test_store_corrupt_file(void **state)
{
	struct tmpdir *t = *state;
	size_t len, got_len = 99;
	uint8_t *b = make_blob(4000, &len), *got = NULL;
	char hash[BLOB_HASH_HEX], path[512];
	FILE *f;

	assert_int_equal(blob_store_put(t->path, b, len, hash), 0);
	snprintf(path, sizeof(path), "%s/blobs/%.2s/%s", t->path, hash, hash);

	/* Flip one byte on disk. */
	f = fopen(path, "r+b");
	assert_non_null(f);
	fseek(f, 100, SEEK_SET);
	fputc(b[100] ^ 1, f);
	fclose(f);
	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len),
			 GERR_CORRUPT);
	assert_null(got);
	assert_int_equal(got_len, 99);

	/* Putting the blob again repairs the damaged copy. */
	assert_int_equal(blob_store_put(t->path, b, len, hash), 0);
	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len), 0);
	assert_memory_equal(got, b, len);
	free(got);
	got = NULL;

	/* Truncated on disk. */
	assert_int_equal(truncate(path, (off_t)len / 2), 0);
	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len),
			 GERR_CORRUPT);
	/* Empty file. */
	assert_int_equal(truncate(path, 0), 0);
	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len),
			 GERR_CORRUPT);
	/* Larger than any blob may be: refused before reading. */
	assert_int_equal(truncate(path, (off_t)(BLOB_MAX_RAW + 65)), 0);
	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len),
			 GERR_TOOBIG);
	/* A directory where the file should be. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len),
			 GERR_CORRUPT);
	assert_int_equal(rmdir(path), 0);
	/* A symlink is not followed. */
	assert_int_equal(symlink("/etc/hostname", path), 0);
	assert_true(blob_store_get(t->path, hash, &got, &got_len) < 0);
	assert_null(got);
	unlink(path);
	free(b);
}

static void test_store_bad_names(void **state)
{
	struct tmpdir *t = *state;
	uint8_t *got = NULL;
	size_t len;
	char h[80];

	static const char *const bad[] = {
		"",
		"abc",
		"../../../../etc/passwd",
		"0E5751C026E543B2E8AB2EB06099DAA1D1E5DF47778F7787FAAB45CDF12FE3A8",
		"0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a",
		"0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a80",
		"0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3g8",
		"0e/751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(blob_store_get(t->path, bad[i], &got, &len),
				 GERR_INVAL);
		assert_int_equal(blob_store_remove(t->path, bad[i]),
				 GERR_INVAL);
	}
	assert_int_equal(blob_store_get(t->path, NULL, &got, &len), GERR_INVAL);
	assert_null(got);
	/* Well-formed but absent. */
	memset(h, 'a', 64);
	h[64] = 0;
	assert_int_equal(blob_store_get(t->path, h, &got, &len), GERR_NOTFOUND);
	assert_int_equal(blob_store_put(NULL, "x", 1, h), GERR_INVAL);
	assert_int_equal(blob_store_put(t->path, NULL, 1, h), GERR_INVAL);
}

static void test_store_errors(void **state)
{
	struct tmpdir *t = *state;
	char hash[BLOB_HASH_HEX] = "untouched", sub[512];

	/* Parent is a file: an I/O error, not a crash. */
	snprintf(sub, sizeof(sub), "%s/file", t->path);
	close(open(sub, O_CREAT | O_WRONLY, 0600));
	assert_int_equal(blob_store_put(sub, "x", 1, hash), GERR_IO);
	assert_string_equal(hash, "untouched");

	/* Read-only store directory: permission error (root bypasses). */
	if (geteuid() != 0) {
		snprintf(sub, sizeof(sub), "%s/ro", t->path);
		assert_int_equal(mkdir(sub, 0500), 0);
		assert_int_equal(blob_store_put(sub, "x", 1, hash), GERR_PERM);
		assert_string_equal(hash, "untouched");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_parallel_deflate),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_v1_chunked),
		cmocka_unit_test(test_v2_corrupt_index),
		cmocka_unit_test(test_v2_truncated_index),
		cmocka_unit_test(test_v2_foreign),
		cmocka_unit_test(test_v2_bad_chunks),
		cmocka_unit_test(test_v2_payload_flips),
		cmocka_unit_test(test_pack_store),
		cmocka_unit_test(test_workload_names),
		cmocka_unit_test(test_flip_every_header_byte),
		cmocka_unit_test(test_fields_with_valid_crc),
		cmocka_unit_test(test_payload_corruption),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_kinds_are_distinct),
		cmocka_unit_test(test_decode_fuzz),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_restamp),
		cmocka_unit_test_setup_teardown(test_store_put_get, setup_dir,
						teardown_dir),
		cmocka_unit_test_setup_teardown(test_store_corrupt_file,
						setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_store_bad_names, setup_dir,
						teardown_dir),
		cmocka_unit_test_setup_teardown(test_store_errors, setup_dir,
						teardown_dir),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
