/* libFuzzer target: the blob reader. Any input must be refused with
 * GERR_CORRUPT (or accepted) without a crash or an oversized allocation; an
 * accepted blob must re-encode to a blob that decodes to the same bytes,
 * and an accepted version-2 blob must hold a zlib stream that a plain
 * sequential inflate reads to those bytes too (the chunked decoder may
 * refuse more than zlib does, never accept something else). Each input is
 * tried as it is and again with its lengths and CRCs made right, so that
 * mutations reach the chunk index and the inflate behind the checksums. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "blob.h"
#include "gerr.h"
#include "le.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The zlib stream of an accepted version-2 blob, inflated by zlib alone. */
static void check_sequential(const uint8_t *data, size_t size,
			     const uint8_t *raw, size_t raw_len)
{
	size_t n = le_get32(data + BLOB_HEADER_LEN + 4);
	size_t off = BLOB_HEADER_LEN + 8 + 4 * n;
	uLongf got_len = raw_len;
	uint8_t *got = malloc(raw_len + 1);

	if (!got)
		abort();
	if (off > size ||
	    uncompress(got, &got_len, data + off, (uLong)(size - off)) !=
		    Z_OK ||
	    got_len != raw_len || (raw_len && memcmp(got, raw, raw_len)))
		abort();
	free(got);
}

static void check_one(const uint8_t *data, size_t size)
{
	struct blob_info info, info2;
	uint8_t *raw = NULL, *again = NULL, *raw2 = NULL;
	size_t raw_len = 0, again_len = 0, raw2_len = 0;
	char err[200];

	(void)blob_peek(data, size, &info, err, sizeof(err));
	if (blob_decode(data, size, &info, &raw, &raw_len, err, sizeof(err)) != 0)
		return;
	if (raw_len != info.raw_len)
		abort();
	if (data[4] == 2)
		check_sequential(data, size, raw, raw_len);
	if (blob_encode(info.kind, info.workload, info.lease, info.epoch, raw,
			raw_len, &again, &again_len) != 0 ||
	    blob_decode(again, again_len, &info2, &raw2, &raw2_len, err,
			sizeof(err)) != 0 ||
	    raw2_len != raw_len || (raw_len && memcmp(raw, raw2, raw_len)))
		abort();
	free(raw);
	free(raw2);
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *c;
	uint64_t comp_len;

	check_one(data, size);
	/* Large raw lengths only make the second try slow (allocations,
	 * threads); 1 MiB leaves room for 16 chunks of 64 KiB. */
	if (size < BLOB_HEADER_LEN || data[42] >= 0x10 ||
	    (data[43] | data[44] | data[45] | data[46] | data[47]))
		return 0;
	c = malloc(size);
	if (!c)
		abort();
	memcpy(c, data, size);
	comp_len = size - BLOB_HEADER_LEN;
	le_put64(c + 48, comp_len);
	le_put32(c + 56, (uint32_t)crc32(0L, c + BLOB_HEADER_LEN, (uInt)comp_len));
	le_put32(c + 60, (uint32_t)crc32(0L, c, 60));
	check_one(c, size);
	free(c);
	return 0;
}
