/* blob.c - checkpoint/result blob format and the content-addressed store
 * (see blob.h for the byte layout).
 *
 * Invariants:
 *  1. Every header field is checked before the payload is touched, and the
 *     header CRC is checked before any other field is trusted, so a single
 *     flipped bit anywhere in the header is reported as corruption.
 *  2. Decoding allocates at most raw_len bytes (<= BLOB_MAX_RAW), and only
 *     after raw_len has been checked against what comp_len can possibly
 *     inflate to; inflate writes into exactly that buffer and a stream that
 *     would produce more, or less, is corrupt.
 *  3. A stored blob is named by the BLAKE2b-256 of its bytes. blob_store_put
 *     returns 0 only after the data, the rename and the directory entry are
 *     on disk; a crash leaves at most a ".tmp-" file, never a short blob
 *     under its final name.
 *  4. blob_store_get never returns bytes whose hash differs from their name.
 */
#include "blob.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>
#include <zlib.h>

#include "gerr.h"
#include "le.h"

#define BLOB_MAGIC "GPBL"
#define BLOB_VERSION 1
#define BLOB_WORKLOAD_LEN 16
/* Deflate cannot expand one input byte into more than 1032 output bytes
 * (a 258-byte match coded in 2 bits); the slack covers the zlib wrapper.
 * A header announcing more is lying, and is refused before allocating. */
#define BLOB_MAX_RATIO 1040u
#define BLOB_STORE_MAX (BLOB_MAX_RAW + BLOB_HEADER_LEN)

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
 * joined into one zlib stream (as pigz does): every chunk but the last ends
 * with a sync flush on a byte boundary, the last with the final block, and
 * the Adler-32s are combined in order. Any inflate reads it; the bytes do
 * not depend on the number of threads. Below PAR_MIN a single compress2. */
#define PAR_CHUNK (4u << 20)
#define PAR_MIN (16u << 20)
#define PAR_THREADS 8

struct par_chunk {
	const uint8_t *in;
	size_t in_len;
	uint8_t *out;
	size_t out_len;
	uLong adler;
	int level, last, rc;
};

struct par_job {
	struct par_chunk *c;
	size_t n, stride, first;
};

static void par_deflate_one(struct par_chunk *c)
{
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

static void *par_thread(void *arg)
{
	struct par_job *j = arg;

	for (size_t i = j->first; i < j->n; i += j->stride)
		par_deflate_one(&j->c[i]);
	return NULL;
}

/* The zlib stream of raw into *ret (malloc'ed after room for the blob
 * header), its length in *ret_len. */
static int par_compress(const uint8_t *raw, size_t raw_len, size_t head,
			int level, uint8_t **ret, size_t *ret_len)
{
	size_t n = (raw_len + PAR_CHUNK - 1) / PAR_CHUNK, total = 2 + 4;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nt = cpus > 1 ? (size_t)cpus : 1;
	struct par_chunk *c = calloc(n, sizeof(*c));
	struct par_job jobs[PAR_THREADS];
	pthread_t tid[PAR_THREADS];
	size_t started = 0;
	uLong adler = adler32(0L, Z_NULL, 0);
	uint8_t *out = NULL, *p;
	int rc = 0;

	if (!c)
		return GERR_NOMEM;
	if (nt > PAR_THREADS)
		nt = PAR_THREADS;
	if (nt > n)
		nt = n;
	for (size_t i = 0; i < n; i++) {
		c[i].in = raw + i * PAR_CHUNK;
		c[i].in_len = i + 1 < n ? PAR_CHUNK : raw_len - i * PAR_CHUNK;
		c[i].last = i + 1 == n;
		c[i].level = level;
	}
	for (size_t t = 0; t < nt; t++) {
		jobs[t] = (struct par_job){c, n, nt, t};
		/* Thread 0's share runs here; a failed start runs inline. */
		if (t == 0 || pthread_create(&tid[started], NULL, par_thread,
					     &jobs[t]) != 0) {
			if (t != 0)
				par_thread(&jobs[t]);
			continue;
		}
		started++;
	}
	par_thread(&jobs[0]);
	for (size_t t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	for (size_t i = 0; i < n; i++) {
		if (c[i].rc && !rc)
			rc = c[i].rc;
		total += c[i].out_len;
	}
	if (!rc)
		out = malloc(head + total);
	if (!rc && !out)
		rc = GERR_NOMEM;
	if (!rc) {
		p = out + head;
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
	le_put16(out + 4, BLOB_VERSION);
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
	if (version != BLOB_VERSION)
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

	info.kind = (enum blob_kind)kind;
	info.lease = le_get64(b + 24);
	info.epoch = le_get64(b + 32);
	info.raw_len = raw_len;
	info.comp_len = comp_len;
	*ret_info = info;
	return 0;
}

int blob_decode(const void *blob, size_t len, struct blob_info *ret_info,
		uint8_t **ret_raw, size_t *ret_raw_len, char *err,
		size_t errlen)
{
	struct blob_info info;
	z_stream zs;
	const uint8_t *in;
	size_t in_left, out_left;
	uint8_t *raw;
	int r, zr;

	if (!ret_raw || !ret_raw_len)
		return gerr_fail(GERR_INVAL, err, errlen, "NULL argument");
	r = blob_peek(blob, len, &info, err, errlen);
	if (r < 0)
		return r;

	/* raw_len <= BLOB_MAX_RAW (checked by peek); +1 keeps malloc(0) out. */
	raw = malloc((size_t)info.raw_len + 1);
	if (!raw)
		return gerr_fail(GERR_NOMEM, err, errlen,
			    "cannot allocate %llu bytes",
			    (unsigned long long)info.raw_len);

	memset(&zs, 0, sizeof(zs));
	zr = inflateInit(&zs);
	if (zr != Z_OK) {
		free(raw);
		return gerr_fail(zr == Z_MEM_ERROR ? GERR_NOMEM : GERR_ZLIB, err,
			    errlen, "inflateInit failed");
	}
	in = (const uint8_t *)blob + BLOB_HEADER_LEN;
	in_left = (size_t)info.comp_len;
	out_left = (size_t)info.raw_len;
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
				 (unsigned long long)info.raw_len);
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
			 zs.total_out, (unsigned long long)info.raw_len);
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

/* ---- store ---- */

static int hash_valid(const char *hash)
{
	if (!hash || strnlen(hash, BLOB_HASH_HEX) != BLOB_HASH_HEX - 1)
		return 0;
	for (int i = 0; i < BLOB_HASH_HEX - 1; i++)
		if (!((hash[i] >= '0' && hash[i] <= '9') ||
		      (hash[i] >= 'a' && hash[i] <= 'f')))
			return 0;
	return 1;
}

static int path_fmt(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int path_fmt(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return w < 0 || (size_t)w >= n ? GERR_INVAL : 0;
}

static int fsync_dir(const char *path)
{
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return gerr_from_errno(errno);
	if (fsync(fd) < 0 && errno != EINVAL)
		r = gerr_from_errno(errno);
	close(fd);
	return r;
}

/* mkdir that tolerates an existing directory; a new entry is made durable
 * by syncing the parent. */
static int mkdir_durable(const char *path, const char *parent)
{
	struct stat st;

	if (mkdir(path, 0700) == 0)
		return parent ? fsync_dir(parent) : 0;
	if (errno != EEXIST)
		return gerr_from_errno(errno);
	if (stat(path, &st) < 0)
		return gerr_from_errno(errno);
	return S_ISDIR(st.st_mode) ? 0 : GERR_IO;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n > (1u << 30) ? (1u << 30) : n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return gerr_from_errno(errno);
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read a whole regular file of at most max bytes. GERR_NOTFOUND if absent,
 * GERR_TOOBIG if larger. */
static int read_bounded(const char *path, uint64_t max, uint8_t **ret_buf,
			size_t *ret_len, int *ret_fd)
{
	struct stat st;
	uint8_t *buf;
	size_t size, got = 0;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return gerr_from_errno(errno);
	if (fstat(fd, &st) < 0) {
		r = gerr_from_errno(errno);
		goto fail_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		r = GERR_CORRUPT;
		goto fail_fd;
	}
	if (st.st_size < 0 || (uint64_t)st.st_size > max) {
		r = GERR_TOOBIG;
		goto fail_fd;
	}
	size = (size_t)st.st_size;
	buf = malloc(size + 1);
	if (!buf) {
		r = GERR_NOMEM;
		goto fail_fd;
	}
	/* Read one byte past the size to notice a file that grew. */
	while (got < size + 1) {
		ssize_t n = read(fd, buf + got, size + 1 - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = gerr_from_errno(errno);
			goto fail_buf;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got != size) {
		r = GERR_CORRUPT; /* changed under us */
		goto fail_buf;
	}
	*ret_buf = buf;
	*ret_len = size;
	if (ret_fd)
		*ret_fd = fd;
	else
		close(fd);
	return 0;
fail_buf:
	free(buf);
fail_fd:
	close(fd);
	return r;
}

int blob_store_put(const char *dir, const void *blob, size_t len,
		   char ret_hash[BLOB_HASH_HEX])
{
	char hash[BLOB_HASH_HEX], top[PATH_MAX], sub[PATH_MAX];
	char final[PATH_MAX], tmp[PATH_MAX], rnd[17];
	uint8_t rb[8];
	uint8_t *old;
	size_t old_len;
	int fd, r, oldfd;

	if (!dir || !*dir || !ret_hash || (len > 0 && !blob))
		return GERR_INVAL;
	if ((uint64_t)len > BLOB_STORE_MAX)
		return GERR_TOOBIG;
	if (sodium_init() < 0)
		return GERR_IO;

	blob_hash_hex(blob ? blob : (const void *)"", len, hash);
	if ((r = path_fmt(top, sizeof(top), "%s/blobs", dir)) < 0 ||
	    (r = path_fmt(sub, sizeof(sub), "%s/%.2s", top, hash)) < 0 ||
	    (r = path_fmt(final, sizeof(final), "%s/%s", sub, hash)) < 0)
		return r;

	/* Already there: keep it if its bytes are right, but still make sure
	 * it is durable (a crash may have come between rename and fsync). */
	r = read_bounded(final, BLOB_STORE_MAX, &old, &old_len, &oldfd);
	if (r == 0) {
		int same = old_len == len &&
			   (len == 0 || memcmp(old, blob, len) == 0);

		free(old);
		if (same) {
			r = fsync(oldfd) < 0 ? gerr_from_errno(errno) : 0;
			close(oldfd);
			if (r == 0)
				r = fsync_dir(sub);
			if (r == 0)
				memcpy(ret_hash, hash, BLOB_HASH_HEX);
			return r;
		}
		close(oldfd);
		/* Damaged copy: fall through and replace it atomically. */
	} else if (r != GERR_NOTFOUND && r != GERR_CORRUPT &&
		   r != GERR_TOOBIG) {
		return r;
	}

	if ((r = mkdir_durable(dir, NULL)) < 0 ||
	    (r = mkdir_durable(top, dir)) < 0 ||
	    (r = mkdir_durable(sub, top)) < 0)
		return r;

	randombytes_buf(rb, sizeof(rb));
	sodium_bin2hex(rnd, sizeof(rnd), rb, sizeof(rb));
	if ((r = path_fmt(tmp, sizeof(tmp), "%s/.tmp-%s-%s", sub, hash,
			  rnd)) < 0)
		return r;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return gerr_from_errno(errno);
	r = write_all(fd, blob, len);
	if (r == 0 && fsync(fd) < 0)
		r = gerr_from_errno(errno);
	if (close(fd) < 0 && r == 0)
		r = gerr_from_errno(errno);
	if (r == 0 && rename(tmp, final) < 0)
		r = gerr_from_errno(errno);
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	r = fsync_dir(sub);
	if (r < 0)
		return r;
	memcpy(ret_hash, hash, BLOB_HASH_HEX);
	return 0;
}

int blob_store_get(const char *dir, const char *hash, uint8_t **ret_blob,
		   size_t *ret_len)
{
	char path[PATH_MAX], got[BLOB_HASH_HEX];
	uint8_t *buf;
	size_t len;
	int r;

	if (!dir || !*dir || !ret_blob || !ret_len || !hash_valid(hash))
		return GERR_INVAL;
	if ((r = path_fmt(path, sizeof(path), "%s/blobs/%.2s/%s", dir, hash,
			  hash)) < 0)
		return r;
	r = read_bounded(path, BLOB_STORE_MAX, &buf, &len, NULL);
	if (r < 0)
		return r;
	blob_hash_hex(buf, len, got);
	if (memcmp(got, hash, BLOB_HASH_HEX) != 0) {
		free(buf);
		return GERR_CORRUPT;
	}
	*ret_blob = buf;
	*ret_len = len;
	return 0;
}

int blob_store_remove(const char *dir, const char *hash)
{
	char sub[PATH_MAX], path[PATH_MAX];
	int r;

	if (!dir || !*dir || !hash_valid(hash))
		return GERR_INVAL;
	if ((r = path_fmt(sub, sizeof(sub), "%s/blobs/%.2s", dir, hash)) < 0 ||
	    (r = path_fmt(path, sizeof(path), "%s/%s", sub, hash)) < 0)
		return r;
	if (unlink(path) < 0)
		return errno == ENOENT ? 0 : gerr_from_errno(errno);
	return fsync_dir(sub);
}
