/* test_blob_corrupt.c - blob format: every corruption of a version-1 blob
 * is caught (header bits, fields behind a valid CRC, payload flips,
 * truncation, random damage). */
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

static void fix_header_crc(uint8_t *b)
{
	le_put32(b + 60, (uint32_t)crc32(0, b, 60));
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

UNIT_MAIN(cmocka_unit_test(test_flip_every_header_byte),
	cmocka_unit_test(test_fields_with_valid_crc),
	cmocka_unit_test(test_payload_corruption),
	cmocka_unit_test(test_truncation),
	cmocka_unit_test(test_decode_fuzz))
