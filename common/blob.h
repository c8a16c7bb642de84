/* blob.h - the checkpoint/result blob format and gpud's blob store.
 *
 * A blob is a 64-byte header followed by a zlib stream. All integers are
 * little-endian.
 *   offset size field        why
 *   0      4    magic "GPBL" reject non-blobs early
 *   4      2    version (1)  format evolution
 *   6      2    kind         1 checkpoint, 2 result, 3 job input: a checkpoint
 *                            can never be accepted as a result or the reverse
 *   8      16   workload     NUL-padded name: no blob crosses workloads
 *   24     8    lease        the lease it belongs to
 *   32     8    epoch        the epoch it was produced under (fencing)
 *   40     8    raw_len      decompressed length, <= BLOB_MAX_RAW
 *   48     8    comp_len     length of the zlib stream that follows
 *   56     4    payload_crc  CRC-32 (zlib) of the zlib stream
 *   60     4    header_crc   CRC-32 of bytes 0..59
 *   64     ...  zlib stream (compress2; any level decodes, gpud's
 *                            encoder uses level 1 for speed, or 0 (stored
 *                            blocks) when the caller asks BLOB_PACK_STORE)
 * A blob is corrupt when any field disagrees: wrong magic/version/kind,
 * lengths over the bounds or not matching the buffer, either CRC, or a
 * zlib stream that does not inflate to exactly raw_len bytes.
 *
 * The store keeps blobs under DIR/blobs/xx/<hash> where <hash> is the
 * BLAKE2b-256 (libsodium) hex of the whole blob (content-addressed). A blob
 * is written to a temporary name, fsync'ed, renamed, and the directory
 * fsync'ed before blob_store_put returns: only then may gpud acknowledge.
 *
 * Ownership: blob_encode and blob_decode return malloc'ed buffers the caller
 * frees. Inputs are borrowed. Thread-safe (no shared state); blob_encode
 * deflates payloads of 16 MiB or more on up to 8 threads of its own.
 */
#ifndef GPUD_BLOB_H
#define GPUD_BLOB_H

#include <stddef.h>
#include <stdint.h>

#define BLOB_HEADER_LEN 64
#define BLOB_MAX_RAW (1024ull << 20) /* 1 GiB decompressed */
#define BLOB_HASH_HEX 65            /* 64 hex digits + NUL */

enum blob_kind { BLOB_CHECKPOINT = 1, BLOB_RESULT = 2, BLOB_INPUT = 3 };

struct blob_info {
	enum blob_kind kind;
	char workload[17];
	uint64_t lease;
	uint64_t epoch;
	uint64_t raw_len;
	uint64_t comp_len;
};

/* How hard blob_encode_pack deflates. STORE (level 0) is for dense,
 * near-random bytes (e.g. Othello's 2 bytes per position): deflate saves
 * them a quarter at most, and costs more time on both ends than the bytes
 * it saves. The format is the same; blob_decode reads both. */
enum blob_pack { BLOB_PACK_FAST = 0, BLOB_PACK_STORE = 1 };

/* Compress raw into a blob (BLOB_PACK_FAST). */
int blob_encode(enum blob_kind kind, const char *workload, uint64_t lease,
		uint64_t epoch, const void *raw, size_t raw_len,
		uint8_t **ret_blob, size_t *ret_len);
int blob_encode_pack(enum blob_kind kind, const char *workload,
		     uint64_t lease, uint64_t epoch, const void *raw,
		     size_t raw_len, enum blob_pack pack, uint8_t **ret_blob,
		     size_t *ret_len);

/* Give an encoded blob another lease and epoch (the header's fields and
 * its CRC; the payload is untouched), so a result can be compressed before
 * its lease is known. GERR_INVAL unless blob starts with a valid header. */
int blob_restamp(uint8_t *blob, size_t len, uint64_t lease, uint64_t epoch);

/* Validate the header only (cheap; no inflate). */
int blob_peek(const void *blob, size_t len, struct blob_info *ret_info,
	      char *err, size_t errlen);

/* Validate everything and inflate. Returns GERR_CORRUPT with a reason. */
int blob_decode(const void *blob, size_t len, struct blob_info *ret_info,
		uint8_t **ret_raw, size_t *ret_raw_len, char *err,
		size_t errlen);

/* Content hash (hex) of a blob's bytes. */
void blob_hash_hex(const void *blob, size_t len, char out[BLOB_HASH_HEX]);

/* Durably store a blob under dir/blobs; returns its hash. Idempotent. */
int blob_store_put(const char *dir, const void *blob, size_t len,
		   char ret_hash[BLOB_HASH_HEX]);

/* Read a stored blob (whole file, malloc'ed), checking that its content
 * still matches its hash (GERR_CORRUPT otherwise). */
int blob_store_get(const char *dir, const char *hash, uint8_t **ret_blob,
		   size_t *ret_len);

/* Remove a stored blob (no error if absent). */
int blob_store_remove(const char *dir, const char *hash);

#endif
