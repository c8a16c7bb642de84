/* blob.h - the checkpoint/result blob format and gpud's blob store.
 *
 * A blob is a 64-byte header followed by the payload. All integers are
 * little-endian.
 *   offset size field        why
 *   0      4    magic "GPBL" reject non-blobs early
 *   4      2    version      1 or 2 (the payload's layout, below)
 *   6      2    kind         1 checkpoint, 2 result, 3 job input: a checkpoint
 *                            can never be accepted as a result or the reverse
 *   8      16   workload     NUL-padded name: no blob crosses workloads
 *   24     8    lease        the lease it belongs to
 *   32     8    epoch        the epoch it was produced under (fencing)
 *   40     8    raw_len      decompressed length, <= BLOB_MAX_RAW
 *   48     8    comp_len     length of the payload that follows
 *   56     4    payload_crc  CRC-32 (zlib) of the payload
 *   60     4    header_crc   CRC-32 of bytes 0..59
 *   64     ...  payload
 * Version 1 (payloads under 16 MiB; also larger ones written before
 * version 2): the payload is a zlib stream (compress2; any level decodes,
 * gpud's encoder uses level 1 for speed, or 0 (stored blocks) when the
 * caller asks BLOB_PACK_STORE).
 * Version 2 (blob_encode from 16 MiB): the payload is a chunk index and a
 * zlib stream whose chunks inflate independently, hence in parallel:
 *   offset  size   field      why
 *   0       4      chunk_raw  raw bytes per chunk (the last may be short),
 *                             64 KiB..64 MiB; gpud writes 4 MiB
 *   4       4      nchunks    = ceil(raw_len / chunk_raw), >= 1
 *   8       4*n    len[i]     bytes of chunk i's raw deflate data, >= 1
 *   8+4n    2      zlib header (no preset dictionary)
 *   10+4n   sum    the chunks' deflate data, one after the other
 *   ...     4      Adler-32 of the raw bytes, big-endian (zlib trailer)
 * so comp_len = 8 + 4n + 2 + sum(len) + 4. From offset 8+4n on it is one
 * ordinary zlib stream. Chunk i inflates alone (no match reaches into an
 * earlier chunk) to exactly its chunk_raw bytes; every chunk but the last
 * ends on a byte-aligned block boundary (a sync flush) and holds no final
 * block; the last ends with the final block.
 * A blob is corrupt when any field disagrees: wrong magic/version/kind,
 * lengths over the bounds or not matching the buffer, either CRC, a chunk
 * index that breaks a rule above, or a zlib stream (or chunk) that does not
 * inflate to exactly raw_len (its chunk_raw) bytes.
 *
 * The store keeps blobs under DIR/blobs/xx/<hash> where <hash> is the
 * BLAKE2b-256 (libsodium) hex of the whole blob (content-addressed). A blob
 * is written to a temporary name, fsync'ed, renamed, and the directory
 * fsync'ed before blob_store_put returns: only then may gpud acknowledge.
 *
 * Ownership: blob_encode and blob_decode return malloc'ed buffers the caller
 * frees. Inputs are borrowed. Thread-safe (no shared state); from 16 MiB
 * blob_encode deflates, and blob_decode inflates a version-2 blob, on up to
 * 16 threads of their own (blob_threads), joined before they return.
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
/* blob_decode for bytes from a peer that may lie: a header declaring more
 * than max_raw decoded bytes is refused (GERR_TOOBIG, with both figures)
 * before anything is allocated or inflated, and inflate never writes past
 * the declared length (a stream that would is GERR_CORRUPT). */
int blob_decode_max(const void *blob, size_t len, uint64_t max_raw,
		    struct blob_info *ret_info, uint8_t **ret_raw,
		    size_t *ret_raw_len, char *err, size_t errlen);

/* The threads blob_encode takes for raw_len bytes, and blob_decode for the
 * blob it makes: min(online CPUs, 16, 4 MiB chunks), 1 under 16 MiB. The
 * blob's bytes do not depend on it. */
unsigned blob_threads(uint64_t raw_len);

/* Content hash (hex) of a blob's bytes. */
void blob_hash_hex(const void *blob, size_t len, char out[BLOB_HASH_HEX]);

/* Durably store a blob under dir/blobs; returns its hash. Idempotent. */
int blob_store_put(const char *dir, const void *blob, size_t len,
		   char ret_hash[BLOB_HASH_HEX]);

/* Read a stored blob (whole file, malloc'ed), checking that its content
 * still matches its hash (GERR_CORRUPT otherwise). */
int blob_store_get(const char *dir, const char *hash, uint8_t **ret_blob,
		   size_t *ret_len);

/* Whether a stored blob is there with the right content, reading it in
 * pieces (no whole copy in memory): 0, GERR_NOTFOUND when absent,
 * GERR_CORRUPT when its bytes no longer hash to its name, GERR_INVAL for a
 * name that is no hash. */
int blob_store_check(const char *dir, const char *hash);

/* Remove a stored blob (no error if absent). */
int blob_store_remove(const char *dir, const char *hash);

#endif
