/* blob_fx.c - the blob tests' shared helpers (blob_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include <zlib.h>

#include "blob.h"
#include "blob_fx.h"
#include "le.h"

uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* Recompute both CRCs so that deeper checks are reached. */
void fix_crcs(uint8_t *b, size_t len)
{
	le_put32(b + 56, (uint32_t)crc32(0, b + 64, (uInt)(len - 64)));
	le_put32(b + 60, (uint32_t)crc32(0, b, 60));
}

/* Compressible but not trivial raw data. */
uint8_t *make_raw(size_t n)
{
	uint8_t *r = malloc(n ? n : 1);

	for (size_t i = 0; i < n; i++)
		r[i] = (uint8_t)((i * 7) ^ (i >> 5));
	return r;
}

uint8_t *make_blob(size_t raw_len, size_t *ret_len)
{
	uint8_t *raw = make_raw(raw_len), *b;

	assert_int_equal(blob_encode(BLOB_CHECKPOINT, "graveler", 42, 7, raw,
				     raw_len, &b, ret_len),
			 0);
	free(raw);
	return b;
}

/* Where the zlib stream starts: after the chunk index in version 2. */
size_t stream_off(const uint8_t *b)
{
	return b[4] == 2 ? 64 + 8 + 4 * (size_t)le_get32(b + 68) : 64;
}

int decode(const uint8_t *b, size_t len, char *err)
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
