/* blob.c - the checkpoint/result blob format (see blob.h for the byte
 * layout); the content-addressed store is blob_store.c.
 *
 * Invariants:
 *  1. Every header field is checked before the payload is touched, and the
 *     header CRC is checked before any other field is trusted, so a single
 *     flipped bit anywhere in the header is reported as corruption.
 *  2. Decoding allocates at most raw_len bytes (<= the caller's bound,
 *     itself <= BLOB_MAX_RAW), and only after raw_len has been checked
 *     against that bound and against what comp_len can possibly inflate
 *     to (and, in version 2, the whole chunk index against raw_len and
 *     comp_len); inflate writes into exactly that buffer and a stream that
 *     would produce more, or less, is corrupt.
 *  3. A version-2 blob decodes to what one sequential inflate of its zlib
 *     stream gives, or is corrupt: each chunk is inflated alone into its
 *     own slice of the output and accepted only if it fills exactly that
 *     slice from exactly its bytes and stops where the next chunk starts
 *     (par_inflate_one), and the Adler-32s combined in order must match the
 *     trailer. The first bad chunk is the one reported.
 *  4. The bytes blob_encode writes do not depend on the number of threads
 *     (fixed chunks, joined in order); threads share nothing but the
 *     input, the counter that hands out chunks, and disjoint output.
 */
#include "blob.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>
#include <zlib.h>

#include "bigmem.h"
#include "gerr.h"
#include "le.h"
#include "par.h"

#define BLOB_MAGIC "GPBL"
#define BLOB_VERSION 1 /* payload: a zlib stream */
#define BLOB_CHUNKED 2 /* payload: chunk index, zlib stream */
#define BLOB_WORKLOAD_LEN 16
/* Deflate cannot expand one input byte into more than 1032 output bytes
 * (a 258-byte match coded in 2 bits); the slack covers the zlib wrapper.
 * A header announcing more is lying, and is refused before allocating. */
#define BLOB_MAX_RATIO 1040u

/* crc32() takes a uInt length; feed large buffers in pieces. */
static uint32_t crc32_buf(const uint8_t *p, size_t n)
{
	uLong c = crc32(0L, Z_NULL, 0);

	while (n > 0) {
		uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;

		c = crc32(c, p, chunk);
		p += chunk;
		n -= chunk;
	}
	return (uint32_t)c;
}

/* Workload names: 1..16 printable, non-space ASCII bytes. */
static int workload_valid(const char *w, size_t *ret_len)
{
	size_t n;

	if (!w)
		return 0;
	n = strnlen(w, BLOB_WORKLOAD_LEN + 1);
	if (n == 0 || n > BLOB_WORKLOAD_LEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)w[i] <= 0x20 || (unsigned char)w[i] >= 0x7f)
			return 0;
	*ret_len = n;
	return 1;
}

/* Large payloads are deflated in fixed 4 MiB chunks on several threads and
 * joined into one zlib stream (as pigz does, but no chunk is primed with
 * the one before, so that each also inflates alone): every chunk but the
 * last ends with a sync flush on a byte boundary, the last with the final
 * block, and the Adler-32s are combined in order. Any inflate reads the
 * stream; version 2 puts the chunks' lengths in front of it so that
 * blob_decode can inflate them on threads too. The bytes do not depend on
 * the number of threads. Below PAR_MIN a single compress2, version 1. */
#define ENC_CHUNK (4u << 20) /* raw bytes per deflate chunk (the output's) */
#define PAR_MIN (16u << 20)
/* What a version-2 index may announce: a tiny chunk would make a huge
 * index of tiny inflates, a huge one leaves nothing to parallelise. */
#define CHUNK_RAW_MIN (64u << 10)
#define CHUNK_RAW_MAX (64u << 20)

_Static_assert(ENC_CHUNK >= CHUNK_RAW_MIN && ENC_CHUNK <= CHUNK_RAW_MAX,
	       "the encoder's chunks must pass the decoder's bounds");

unsigned blob_threads(uint64_t raw_len)
{
	if (raw_len < PAR_MIN || raw_len > BLOB_MAX_RAW)
		return 1;
	return (unsigned)par_threads((size_t)((raw_len + ENC_CHUNK - 1) /
					       ENC_CHUNK), raw_len);
}

/* ---- chunked deflate ---- */

struct par_chunk {
	const uint8_t *in;
	size_t in_len;
	uint8_t *out;
	size_t out_len;
	uLong adler;
	int level, last, rc;
};

static void par_deflate_one(void *arg, size_t i)
{
	struct par_chunk *c = (struct par_chunk *)arg + i;
	z_stream z;
	uLong bound;

	memset(&z, 0, sizeof(z));
	c->adler = adler32(adler32(0L, Z_NULL, 0), c->in, (uInt)c->in_len);
	if (deflateInit2(&z, c->level, Z_DEFLATED, -15, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		c->rc = GERR_NOMEM;
		return;
	}
	/* A sync flush adds an empty stored block: 5 bytes past the bound. */
	bound = deflateBound(&z, (uLong)c->in_len) + 16;
	c->out = malloc(bound);
	if (!c->out) {
		deflateEnd(&z);
		c->rc = GERR_NOMEM;
		return;
	}
	z.next_in = (Bytef *)c->in;
	z.avail_in = (uInt)c->in_len;
	z.next_out = c->out;
	z.avail_out = (uInt)bound;
	int zr = deflate(&z, c->last ? Z_FINISH : Z_SYNC_FLUSH);
	if ((c->last && zr != Z_STREAM_END) || (!c->last && zr != Z_OK) ||
	    z.avail_in != 0)
		c->rc = GERR_ZLIB;
	c->out_len = bound - z.avail_out;
	deflateEnd(&z);
}

/* The version-2 payload of raw (chunk index, then the zlib stream) into
 * *ret, malloc'ed after room for the blob header; its length in *ret_len. */
static int par_compress(const uint8_t *raw, size_t raw_len, size_t head,
			int level, uint8_t **ret, size_t *ret_len)
{
	size_t n = (raw_len + ENC_CHUNK - 1) / ENC_CHUNK;
	size_t index_len = 8 + 4 * n, total = index_len + 2 + 4;
	struct par_chunk *c = calloc(n, sizeof(*c));
	uLong adler = adler32(0L, Z_NULL, 0);
	uint8_t *out = NULL, *p;
	int rc = 0;

	if (!c)
		return GERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		c[i].in = raw + i * ENC_CHUNK;
		c[i].in_len = i + 1 < n ? ENC_CHUNK : raw_len - i * ENC_CHUNK;
		c[i].last = i + 1 == n;
		c[i].level = level;
	}
	par_run(par_deflate_one, c, n, par_threads(n, raw_len));
	for (size_t i = 0; i < n; i++) {
		if (c[i].rc && !rc)
			rc = c[i].rc;
		total += c[i].out_len;
	}
	if (!rc)
		out = big_alloc(head + total);
	if (!rc && !out)
		rc = GERR_NOMEM;
	if (!rc) {
		/* n <= 256 and each length is about 4 MiB: all fit a u32. */
		p = out + head;
		le_put32(p, ENC_CHUNK);
		le_put32(p + 4, (uint32_t)n);
		for (size_t i = 0; i < n; i++)
			le_put32(p + 8 + 4 * i, (uint32_t)c[i].out_len);
		p += index_len;
		*p++ = 0x78; /* deflate, 32 KiB window */
		*p++ = 0x01; /* level 0 or 1, no dictionary; header check */
		for (size_t i = 0; i < n; i++) {
			memcpy(p, c[i].out, c[i].out_len);
			p += c[i].out_len;
			adler = adler32_combine(adler, c[i].adler,
						(z_off_t)c[i].in_len);
		}
		*p++ = (uint8_t)(adler >> 24);
		*p++ = (uint8_t)(adler >> 16);
		*p++ = (uint8_t)(adler >> 8);
		*p++ = (uint8_t)adler;
		*ret = out;
		*ret_len = total;
	}
	for (size_t i = 0; i < n; i++)
		free(c[i].out);
	free(c);
	return rc;
}

/* ---- chunked inflate ---- */

/* A version-2 index, checked against the header's lengths. */
struct chunk_index {
	uint32_t chunk_raw, n;
	const uint8_t *lens;   /* n x u32 LE, each >= 1 */
	const uint8_t *stream; /* the zlib stream: 2 + sum(lens) + 4 bytes */
};

/* Everything about the index that can be checked without inflating:
 * bounds, the chunk count raw_len implies, lengths that add up to the
 * payload exactly (no byte unaccounted for), and the zlib header. All
 * sums are 64-bit: n <= 16384 lengths of at most 2^32 cannot overflow. */
static int index_parse(const uint8_t *p, uint64_t comp_len, uint64_t raw_len,
		       struct chunk_index *ret, char *err, size_t errlen)
{
	uint64_t index_len, sum = 0;
	uint32_t chunk_raw, n;
	const uint8_t *s;

	if (comp_len < 8)
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "payload of %llu bytes is too short for a chunk "
			    "index", (unsigned long long)comp_len);
	chunk_raw = le_get32(p);
	n = le_get32(p + 4);
	if (chunk_raw < CHUNK_RAW_MIN || chunk_raw > CHUNK_RAW_MAX)
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "chunk index: chunk size %u is outside %u..%u",
			    chunk_raw, CHUNK_RAW_MIN, CHUNK_RAW_MAX);
	if (n == 0 || n != (raw_len + chunk_raw - 1) / chunk_raw)
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "chunk index: %u chunks of %u bytes cannot hold "
			    "raw length %llu", n, chunk_raw,
			    (unsigned long long)raw_len);
	index_len = 8 + 4 * (uint64_t)n;
	if (index_len > comp_len)
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "chunk index of %u entries is truncated (payload "
			    "of %llu bytes)", n, (unsigned long long)comp_len);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t l = le_get32(p + 8 + 4 * (size_t)i);

		if (l == 0)
			return gerr_fail(GERR_CORRUPT, err, errlen,
				    "chunk index: chunk %u of %u has length 0",
				    i + 1, n);
		sum += l;
	}
	if (comp_len < index_len + 2 + 4)
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "chunk index leaves no room for a zlib stream");
	if (sum != comp_len - index_len - 2 - 4)
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "chunk index: lengths add up to %llu bytes, the "
			    "stream holds %llu", (unsigned long long)sum,
			    (unsigned long long)(comp_len - index_len - 6));
	s = p + index_len;
	/* Deflate, a window zlib accepts, the check bits; a preset
	 * dictionary would change what every chunk's matches mean. */
	if ((s[0] & 0x0f) != Z_DEFLATED || (s[0] >> 4) > 7 ||
	    ((unsigned)s[0] << 8 | s[1]) % 31 != 0)
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "chunk index: bad zlib header %02x %02x", s[0],
			    s[1]);
	if (s[1] & 0x20)
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "chunk index: zlib stream needs a preset "
			    "dictionary");
	if (ret)
		*ret = (struct chunk_index){ chunk_raw, n, p + 8, s };
	return 0;
}

struct inf_chunk {
	const uint8_t *in;
	uint8_t *out;
	uInt in_len, out_len;
	uLong adler;
	int last, rc;     /* rc: 0, GERR_CORRUPT or GERR_NOMEM */
	const char *why;  /* what is wrong with it (static) */
	const char *zmsg; /* zlib's message (static), or NULL */
};

/* Inflate one chunk alone into its slice. It is good only if a sequential
 * inflate of the whole stream would do the same there: fill exactly the
 * slice from exactly its bytes, without matches reaching before it (a raw
 * inflate has no window to reach into), and stop where the next chunk
 * starts: at the end of the final block for the last chunk, else at a
 * block boundary on a byte boundary (data_type exactly 128: after an
 * end-of-block, not in the last block, no bits left over). */
static void par_inflate_one(void *arg, size_t i)
{
	struct inf_chunk *c = (struct inf_chunk *)arg + i;
	z_stream z;
	int zr;

	memset(&z, 0, sizeof(z));
	zr = inflateInit2(&z, -15);
	if (zr != Z_OK) {
		c->rc = zr == Z_MEM_ERROR ? GERR_NOMEM : GERR_ZLIB;
		c->why = "cannot start inflate";
		return;
	}
	z.next_in = (Bytef *)c->in;
	z.avail_in = c->in_len;
	z.next_out = c->out;
	z.avail_out = c->out_len;
	/* One call: with all of its input and output, inflate stops only
	 * at an error, the final block, or when one side runs out. */
	zr = inflate(&z, Z_NO_FLUSH);
	c->rc = GERR_CORRUPT;
	if (zr == Z_MEM_ERROR) {
		c->rc = GERR_NOMEM;
		c->why = "out of memory while inflating";
	} else if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
		c->why = "is not valid deflate data: ";
		c->zmsg = z.msg ? z.msg : "unknown error";
	} else if (zr == Z_STREAM_END && !c->last) {
		c->why = "holds the final block but is not the last chunk";
	} else if (z.avail_out == 0 && z.avail_in > 0 && zr != Z_STREAM_END) {
		c->why = "inflates to more than its raw length";
	} else if (z.avail_out > 0) {
		c->why = "inflates to less than its raw length";
	} else if (z.avail_in > 0) {
		c->why = "has bytes after the final block";
	} else if (c->last && zr != Z_STREAM_END) {
		c->why = "is the last chunk but does not end the stream";
	} else if (!c->last && z.data_type != 128) {
		c->why = "does not end on a byte-aligned block boundary";
	} else {
		c->rc = 0;
		c->adler = adler32(adler32(0L, Z_NULL, 0), c->out, c->out_len);
	}
	inflateEnd(&z);
}

/* Inflate a version-2 payload (index checked by blob_peek) into raw. */
static int par_decompress(const uint8_t *payload, const struct blob_info *info,
			  uint8_t *raw, char *err, size_t errlen)
{
	struct chunk_index ix;
	struct inf_chunk *c;
	const uint8_t *in, *t;
	uLong adler = adler32(0L, Z_NULL, 0);
	uint32_t want;
	int r;

	r = index_parse(payload, info->comp_len, info->raw_len, &ix, err,
			errlen);
	if (r < 0)
		return r;
	c = calloc(ix.n, sizeof(*c));
	if (!c)
		return gerr_fail(GERR_NOMEM, err, errlen,
			    "cannot allocate %u chunk states", ix.n);
	in = ix.stream + 2;
	for (uint32_t i = 0; i < ix.n; i++) {
		size_t off = (size_t)i * ix.chunk_raw;

		c[i].in = in;
		c[i].in_len = le_get32(ix.lens + 4 * (size_t)i);
		in += c[i].in_len;
		c[i].out = raw + off;
		c[i].last = i + 1 == ix.n;
		c[i].out_len = c[i].last ? (uInt)(info->raw_len - off)
					 : ix.chunk_raw;
	}
	par_run(par_inflate_one, c, ix.n,
		par_threads(ix.n, info->raw_len));
	/* The first bad chunk is the one a sequential reader would report. */
	for (uint32_t i = 0; i < ix.n; i++) {
		if (c[i].rc) {
			r = gerr_fail(c[i].rc, err, errlen,
				 "chunk %u of %u (%u deflate bytes for %u raw) "
				 "%s%s",
				 i + 1, ix.n, c[i].in_len, c[i].out_len,
				 c[i].why, c[i].zmsg ? c[i].zmsg : "");
			goto out;
		}
		adler = adler32_combine(adler, c[i].adler,
					(z_off_t)c[i].out_len);
	}
	t = in; /* the trailer, right after the last chunk */
	want = (uint32_t)t[0] << 24 | (uint32_t)t[1] << 16 |
	       (uint32_t)t[2] << 8 | t[3];
	if ((uint32_t)adler != want)
		r = gerr_fail(GERR_CORRUPT, err, errlen,
			 "zlib stream check (Adler-32) mismatch: %08x, "
			 "trailer says %08x", (unsigned)adler, (unsigned)want);
out:
	free(c);
	return r;
}

int blob_encode(enum blob_kind kind, const char *workload, uint64_t lease,
		uint64_t epoch, const void *raw, size_t raw_len,
		uint8_t **ret_blob, size_t *ret_len)
{
	return blob_encode_pack(kind, workload, lease, epoch, raw, raw_len,
				BLOB_PACK_FAST, ret_blob, ret_len);
}

int blob_encode_pack(enum blob_kind kind, const char *workload,
		     uint64_t lease, uint64_t epoch, const void *raw,
		     size_t raw_len, enum blob_pack pack, uint8_t **ret_blob,
		     size_t *ret_len)
{
	size_t wlen;
	uLongf comp_len;
	uint8_t *out = NULL, *shrunk;
	uint16_t version = BLOB_VERSION;
	int zr, level;

	if (kind != BLOB_CHECKPOINT && kind != BLOB_RESULT && kind != BLOB_INPUT)
		return GERR_INVAL;
	if (pack != BLOB_PACK_FAST && pack != BLOB_PACK_STORE)
		return GERR_INVAL;
	level = pack == BLOB_PACK_STORE ? Z_NO_COMPRESSION : Z_BEST_SPEED;
	if (!workload_valid(workload, &wlen))
		return GERR_INVAL;
	if (!ret_blob || !ret_len || (raw_len > 0 && !raw))
		return GERR_INVAL;
	if (raw_len > BLOB_MAX_RAW)
		return GERR_TOOBIG;

	/* Level 1: a worker compressing tens of MB per lease would otherwise
	 * spend seconds here; the size difference to level 6 is small for
	 * counts and values. */
	if (raw_len >= PAR_MIN) {
		size_t plen = 0;
		int rc = par_compress(raw, raw_len, BLOB_HEADER_LEN, level,
				      &out, &plen);
		if (rc)
			return rc;
		comp_len = (uLongf)plen;
		version = BLOB_CHUNKED;
	} else {
		comp_len = compressBound((uLong)raw_len);
		out = malloc(BLOB_HEADER_LEN + comp_len);
		if (!out)
			return GERR_NOMEM;
		zr = compress2(out + BLOB_HEADER_LEN, &comp_len,
			       raw_len ? raw : (const void *)"", (uLong)raw_len,
			       level);
		if (zr != Z_OK) {
			free(out);
			return zr == Z_MEM_ERROR ? GERR_NOMEM : GERR_ZLIB;
		}
	}

	memset(out, 0, BLOB_HEADER_LEN);
	memcpy(out, BLOB_MAGIC, 4);
	le_put16(out + 4, version);
	le_put16(out + 6, (uint16_t)kind);
	memcpy(out + 8, workload, wlen);
	le_put64(out + 24, lease);
	le_put64(out + 32, epoch);
	le_put64(out + 40, raw_len);
	le_put64(out + 48, comp_len);
	le_put32(out + 56, crc32_buf(out + BLOB_HEADER_LEN, comp_len));
	le_put32(out + 60, crc32_buf(out, 60));

	shrunk = realloc(out, BLOB_HEADER_LEN + comp_len);
	if (shrunk)
		out = shrunk;
	*ret_blob = out;
	*ret_len = BLOB_HEADER_LEN + comp_len;
	return 0;
}

int blob_restamp(uint8_t *blob, size_t len, uint64_t lease, uint64_t epoch)
{
	if (!blob || len < BLOB_HEADER_LEN || memcmp(blob, BLOB_MAGIC, 4) != 0 ||
	    crc32_buf(blob, 60) != le_get32(blob + 60))
		return GERR_INVAL;
	le_put64(blob + 24, lease);
	le_put64(blob + 32, epoch);
	le_put32(blob + 60, crc32_buf(blob, 60));
	return 0;
}

int blob_peek(const void *blob, size_t len, struct blob_info *ret_info,
	      char *err, size_t errlen)
{
	const uint8_t *b = blob;
	struct blob_info info;
	uint16_t version, kind;
	uint64_t raw_len, comp_len;
	size_t wlen;

	if (!b || !ret_info)
		return gerr_fail(GERR_INVAL, err, errlen, "NULL argument");
	if (len < BLOB_HEADER_LEN)
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "blob of %zu bytes is shorter than its %d-byte header",
			    len, BLOB_HEADER_LEN);
	if (memcmp(b, BLOB_MAGIC, 4) != 0)
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "bad blob magic (not a gpud blob)");
	version = le_get16(b + 4);
	if (version != BLOB_VERSION && version != BLOB_CHUNKED)
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "unsupported blob version %u", (unsigned)version);
	if (crc32_buf(b, 60) != le_get32(b + 60))
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "blob header checksum mismatch");

	kind = le_get16(b + 6);
	if (kind != BLOB_CHECKPOINT && kind != BLOB_RESULT && kind != BLOB_INPUT)
		return gerr_fail(GERR_CORRUPT, err, errlen, "bad blob kind %u",
			    (unsigned)kind);

	/* The name ends at the first NUL or the end of the field; whatever
	 * follows the NUL must be padding, so a name has one encoding. */
	memset(&info, 0, sizeof(info));
	memcpy(info.workload, b + 8, BLOB_WORKLOAD_LEN);
	info.workload[BLOB_WORKLOAD_LEN] = '\0';
	if (!workload_valid(info.workload, &wlen))
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "bad workload name in blob header");
	for (size_t i = wlen; i < BLOB_WORKLOAD_LEN; i++)
		if (b[8 + i] != 0)
			return gerr_fail(GERR_CORRUPT, err, errlen,
				    "workload name is not NUL-padded");

	raw_len = le_get64(b + 40);
	comp_len = le_get64(b + 48);
	if (raw_len > BLOB_MAX_RAW)
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "raw length %llu exceeds %llu",
			    (unsigned long long)raw_len,
			    (unsigned long long)BLOB_MAX_RAW);
	if (comp_len != (uint64_t)(len - BLOB_HEADER_LEN))
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "compressed length %llu does not match the %zu "
			    "payload bytes present",
			    (unsigned long long)comp_len, len - BLOB_HEADER_LEN);
	if (raw_len / BLOB_MAX_RATIO > comp_len)
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "raw length %llu cannot come from %llu compressed "
			    "bytes",
			    (unsigned long long)raw_len,
			    (unsigned long long)comp_len);
	/* Linear and cheap next to inflate: done here so that a blob that
	 * passes peek can be stored without being inflated. */
	if (crc32_buf(b + BLOB_HEADER_LEN, comp_len) != le_get32(b + 56))
		return gerr_fail(GERR_CORRUPT, err, errlen,
			    "blob payload checksum mismatch");
	/* So is the chunk index, and decode allocates only once it holds. */
	if (version == BLOB_CHUNKED) {
		int r = index_parse(b + BLOB_HEADER_LEN, comp_len, raw_len,
				    NULL, err, errlen);
		if (r < 0)
			return r;
	}

	info.kind = (enum blob_kind)kind;
	info.lease = le_get64(b + 24);
	info.epoch = le_get64(b + 32);
	info.raw_len = raw_len;
	info.comp_len = comp_len;
	*ret_info = info;
	return 0;
}

/* Inflate a version-1 payload (one zlib stream) into raw, sequentially. */
static int seq_decompress(const uint8_t *payload,
			  const struct blob_info *info, uint8_t *raw,
			  char *err, size_t errlen)
{
	z_stream zs;
	const uint8_t *in = payload;
	size_t in_left = (size_t)info->comp_len;
	size_t out_left = (size_t)info->raw_len;
	int r, zr;

	memset(&zs, 0, sizeof(zs));
	zr = inflateInit(&zs);
	if (zr != Z_OK)
		return gerr_fail(zr == Z_MEM_ERROR ? GERR_NOMEM : GERR_ZLIB, err,
			    errlen, "inflateInit failed");
	zs.next_out = raw;
	zs.avail_out = 0;
	for (;;) {
		/* Both lengths may exceed uInt; hand them over in pieces. */
		if (zs.avail_in == 0 && in_left > 0) {
			uInt n = in_left > (1u << 30) ? (1u << 30)
						      : (uInt)in_left;
			zs.next_in = (Bytef *)in;
			zs.avail_in = n;
			in += n;
			in_left -= n;
		}
		if (zs.avail_out == 0 && out_left > 0) {
			uInt n = out_left > (1u << 30) ? (1u << 30)
						       : (uInt)out_left;
			zs.avail_out = n;
			out_left -= n;
		}
		zr = inflate(&zs, Z_NO_FLUSH);
		if (zr == Z_STREAM_END)
			break;
		if (zr == Z_OK)
			continue; /* progress was made */
		if (zr == Z_BUF_ERROR && zs.avail_out == 0 && out_left == 0)
			r = gerr_fail(GERR_CORRUPT, err, errlen,
				 "payload inflates to more than %llu bytes",
				 (unsigned long long)info->raw_len);
		else if (zr == Z_BUF_ERROR)
			r = gerr_fail(GERR_CORRUPT, err, errlen,
				 "payload is a truncated zlib stream");
		else if (zr == Z_MEM_ERROR)
			r = gerr_fail(GERR_NOMEM, err, errlen,
				 "out of memory while inflating");
		else
			r = gerr_fail(GERR_CORRUPT, err, errlen,
				 "payload is not a valid zlib stream: %s",
				 zs.msg ? zs.msg : "unknown error");
		goto out;
	}
	if (zs.avail_out != 0 || out_left != 0) {
		r = gerr_fail(GERR_CORRUPT, err, errlen,
			 "payload inflates to %lu bytes, header says %llu",
			 zs.total_out, (unsigned long long)info->raw_len);
		goto out;
	}
	if (zs.avail_in != 0 || in_left != 0) {
		r = gerr_fail(GERR_CORRUPT, err, errlen,
			 "trailing bytes after the zlib stream");
		goto out;
	}
	r = 0;
out:
	inflateEnd(&zs);
	return r;
}

int blob_decode(const void *blob, size_t len, struct blob_info *ret_info,
		uint8_t **ret_raw, size_t *ret_raw_len, char *err,
		size_t errlen)
{
	return blob_decode_max(blob, len, BLOB_MAX_RAW, ret_info, ret_raw,
			       ret_raw_len, err, errlen);
}

int blob_decode_max(const void *blob, size_t len, uint64_t max_raw,
		    struct blob_info *ret_info, uint8_t **ret_raw,
		    size_t *ret_raw_len, char *err, size_t errlen)
{
	struct blob_info info;
	const uint8_t *payload;
	uint8_t *raw;
	int r;

	if (!ret_raw || !ret_raw_len)
		return gerr_fail(GERR_INVAL, err, errlen, "NULL argument");
	r = blob_peek(blob, len, &info, err, errlen);
	if (r < 0)
		return r;
	/* A zlib bomb declares what it inflates to (a stream that inflates
	 * to more than it declares is corrupt): its header is enough. */
	if (info.raw_len > max_raw)
		return gerr_fail(GERR_TOOBIG, err, errlen,
			    "blob declares %llu decoded bytes, over the %llu "
			    "allowed here; refused before inflating",
			    (unsigned long long)info.raw_len,
			    (unsigned long long)max_raw);

	/* raw_len <= BLOB_MAX_RAW (checked by peek). */
	raw = big_alloc((size_t)info.raw_len);
	if (!raw)
		return gerr_fail(GERR_NOMEM, err, errlen,
			    "cannot allocate %llu bytes",
			    (unsigned long long)info.raw_len);
	payload = (const uint8_t *)blob + BLOB_HEADER_LEN;
	if (le_get16((const uint8_t *)blob + 4) == BLOB_CHUNKED)
		r = par_decompress(payload, &info, raw, err, errlen);
	else
		r = seq_decompress(payload, &info, raw, err, errlen);
	if (r < 0) {
		free(raw);
		return r;
	}
	if (ret_info)
		*ret_info = info;
	*ret_raw = raw;
	*ret_raw_len = (size_t)info.raw_len;
	return 0;
}

void blob_hash_hex(const void *blob, size_t len, char out[BLOB_HASH_HEX])
{
	uint8_t h[32];

	crypto_generichash(h, sizeof(h), len ? blob : (const void *)"", len,
			   NULL, 0);
	sodium_bin2hex(out, BLOB_HASH_HEX, h, sizeof(h));
}
