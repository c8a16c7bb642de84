/* test_blob_bound.c - blob_decode_max: a blob from a peer declaring more
 * decoded bytes than the caller allows is refused from its header, before
 * any allocation or inflate (a zlib bomb costs nothing), and a header that
 * declares little but whose stream inflates to more is corrupt. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <zlib.h>

#include "blob.h"
#include "blob_fx.h"
#include "gerr.h"
#include "le.h"
#include "unit_main.h"

#define BOMB_RAW (64u << 20)

/* A version-1 result blob of BOMB_RAW zero bytes, deflated a MiB at a time
 * so the raw bytes never exist here: about 64 KiB that inflate 1000-fold. */
static uint8_t *make_bomb(size_t *ret_len)
{
	static const uint8_t zeros[1u << 20];
	size_t cap = 1u << 20, out = 0;
	uint8_t *b = calloc(1, BLOB_HEADER_LEN + cap);
	z_stream z;

	assert_non_null(b);
	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit(&z, 9), Z_OK);
	for (unsigned i = 0; i < BOMB_RAW / sizeof(zeros); i++) {
		z.next_in = (Bytef *)zeros;
		z.avail_in = sizeof(zeros);
		do {
			z.next_out = b + BLOB_HEADER_LEN + out;
			z.avail_out = (uInt)(cap - out);
			int zr = deflate(&z, i + 1 == BOMB_RAW / sizeof(zeros)
					     ? Z_FINISH : Z_NO_FLUSH);
			assert_true(zr == Z_OK || zr == Z_STREAM_END);
			out = cap - z.avail_out;
		} while (z.avail_in > 0 || z.avail_out == 0);
	}
	deflateEnd(&z);
	memcpy(b, "GPBL", 4);
	le_put16(b + 4, 1);
	le_put16(b + 6, BLOB_RESULT);
	memcpy(b + 8, "graveler", 8);
	le_put64(b + 24, 3);
	le_put64(b + 32, 1);
	le_put64(b + 40, BOMB_RAW);
	le_put64(b + 48, out);
	*ret_len = BLOB_HEADER_LEN + out;
	fix_crcs(b, *ret_len);
	return b;
}

/* This process's peak resident size (VmHWM; getrusage's ru_maxrss would
 * include the process that exec'ed the test). */
static long max_rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	fclose(f);
	assert_true(kib > 0);
	return kib;
}

static void test_bomb_refused_from_header(void **state)
{
	size_t len, raw_len = 123;
	uint8_t sentinel, *bomb = make_bomb(&len), *raw = &sentinel;
	struct blob_info info;
	char err[200] = "";
	long before;

	(void)state;
	assert_true(len < BOMB_RAW / 500);
	before = max_rss_kib();
	for (int i = 0; i < 20; i++)
		assert_int_equal(blob_decode_max(bomb, len, 1u << 20, &info, &raw,
						 &raw_len, err, sizeof(err)),
				 GERR_TOOBIG);
	/* Outputs untouched, and not one inflated page: the high-water mark
	 * stays where it was (twenty inflates would have added 64 MiB). */
	assert_ptr_equal(raw, &sentinel);
	assert_int_equal(raw_len, 123);
	assert_true(max_rss_kib() - before < 8 * 1024);
	assert_non_null(strstr(err, "67108864 decoded bytes"));
	assert_non_null(strstr(err, "over the 1048576 allowed"));
	assert_non_null(strstr(err, "before inflating"));

	/* The same bytes under the format's own bound do inflate: the bound
	 * above is what refused them, and the measure sees an inflate. */
	assert_int_equal(blob_decode(bomb, len, &info, &raw, &raw_len, err,
				     sizeof(err)), 0);
	assert_int_equal(raw_len, BOMB_RAW);
	assert_true(max_rss_kib() - before >= 48 * 1024);
	free(raw);
	free(bomb);
}

/* The bound is inclusive; a damaged header is still reported as damage. */
static void test_bound_edges(void **state)
{
	size_t len, raw_len;
	uint8_t *b = make_blob(5000, &len), *raw = NULL;
	struct blob_info info;
	char err[200];

	(void)state;
	assert_int_equal(blob_decode_max(b, len, 5000, &info, &raw, &raw_len,
					 err, sizeof(err)), 0);
	assert_int_equal(raw_len, 5000);
	assert_int_equal(info.raw_len, 5000);
	free(raw);
	raw = NULL;
	assert_int_equal(blob_decode_max(b, len, 4999, &info, &raw, &raw_len,
					 err, sizeof(err)), GERR_TOOBIG);
	assert_null(raw);
	assert_int_equal(blob_decode_max(b, len, 0, &info, &raw, &raw_len, err,
					 sizeof(err)), GERR_TOOBIG);
	b[44] ^= 1; /* raw_len, header CRC now stale */
	assert_int_equal(blob_decode_max(b, len, 1u << 30, &info, &raw,
					 &raw_len, err, sizeof(err)),
			 GERR_CORRUPT);
	assert_int_equal(blob_decode_max(b, len, 1, &info, &raw, &raw_len, err,
					 sizeof(err)), GERR_CORRUPT);
	free(b);
}

/* A header that declares less than its stream holds, under the bound:
 * inflate stops at the declared length and the blob is corrupt, in both
 * versions (one stream, and chunks inflated apart). */
static void test_understated_length_is_corrupt(void **state)
{
	static const size_t sizes[] = { 1u << 20, 40u << 20 };
	char err[200];

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		uint8_t *raw = calloc(1, sizes[k]), *b, *got = NULL;
		size_t len, got_len = 0;
		struct blob_info info;

		assert_int_equal(blob_encode(BLOB_RESULT, "officers", 1, 1, raw,
					     sizes[k], &b, &len), 0);
		free(raw);
		le_put64(b + 40, sizes[k] - 4096);
		fix_crcs(b, len);
		int r = blob_decode_max(b, len, sizes[k], &info, &got,
					&got_len, err, sizeof(err));
		assert_int_equal(r, GERR_CORRUPT);
		assert_null(got);
		assert_true(strstr(err, "more than") || strstr(err, "chunk index") ||
			    strstr(err, "raw length"));
		free(b);
	}
}

UNIT_MAIN(cmocka_unit_test(test_bomb_refused_from_header),
	cmocka_unit_test(test_bound_edges),
	cmocka_unit_test(test_understated_length_is_corrupt))
