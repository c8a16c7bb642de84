/* libFuzzer target: the blob reader. Any input must be refused with
 * GERR_CORRUPT (or accepted) without a crash or an oversized allocation; an
 * accepted blob must re-encode to a blob that decodes to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "gerr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct blob_info info, info2;
	uint8_t *raw = NULL, *again = NULL, *raw2 = NULL;
	size_t raw_len = 0, again_len = 0, raw2_len = 0;
	char err[200];

	(void)blob_peek(data, size, &info, err, sizeof(err));
	if (blob_decode(data, size, &info, &raw, &raw_len, err, sizeof(err)) != 0)
		return 0;
	if (raw_len != info.raw_len)
		abort();
	if (blob_encode(info.kind, info.workload, info.lease, info.epoch, raw,
			raw_len, &again, &again_len) != 0 ||
	    blob_decode(again, again_len, &info2, &raw2, &raw2_len, err,
			sizeof(err)) != 0 ||
	    raw2_len != raw_len || (raw_len && memcmp(raw, raw2, raw_len)))
		abort();
	free(raw);
	free(raw2);
	free(again);
	return 0;
}
