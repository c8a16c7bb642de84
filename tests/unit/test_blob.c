/* test_blob.c - blob format: the documented header layout and round trips
 * (deflate and stored packs), workload names and kinds, the hash, restamp.
 * Corruption: test_blob_corrupt.c; the chunked version 2 and threaded
 * codec: test_blob_parallel.c; the on-disk store: test_blob_store.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sodium.h>
#include <zlib.h>

#include "blob.h"
#include "blob_fx.h"
#include "gerr.h"
#include "le.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_pack_store),
		cmocka_unit_test(test_workload_names),
		cmocka_unit_test(test_kinds_are_distinct),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_restamp),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
