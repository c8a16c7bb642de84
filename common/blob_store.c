/* blob_store.c - gpud's content-addressed blob store (blob.h): a blob is
 * a file named by the BLAKE2b-256 of its bytes under DIR/blobs.
 *
 * Invariants:
 *  1. blob_store_put returns 0 only after the data, the rename and the
 *     directory entry are on disk; a crash leaves at most a ".tmp-" file,
 *     never a short blob under its final name.
 *  2. blob_store_get never returns bytes whose hash differs from their name.
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

#include "bigmem.h"
#include "fileio.h"
#include "gerr.h"

#define BLOB_STORE_MAX (BLOB_MAX_RAW + BLOB_HEADER_LEN)

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
	char final[PATH_MAX], tmp[PATH_MAX];
	struct fileio_buf buf = { blob, len };
	uint8_t *old;
	size_t old_len;
	int r, oldfd;

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
				r = fileio_fsync_parent(final);
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

	if ((r = fileio_mkdir(dir, 0700)) < 0 ||
	    (r = fileio_mkdir(top, 0700)) < 0 ||
	    (r = fileio_mkdir(sub, 0700)) < 0)
		return r;
	/* ".tmp-" beside the blobs: what audit_sweep removes after a crash. */
	if ((r = path_fmt(tmp, sizeof(tmp), "%s/.tmp-%s-XXXXXX", sub,
			  hash)) < 0 ||
	    (r = fileio_replace(final, tmp, 0600, fileio_fill_buf, &buf)) < 0)
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
	return fileio_fsync_parent(path);
}

int blob_store_check(const char *dir, const char *hash)
{
	crypto_generichash_state hs;
	char path[PATH_MAX], got[BLOB_HASH_HEX];
	uint8_t h[32], *buf;
	ssize_t n;
	int fd, r;

	if (!dir || !*dir || !hash_valid(hash))
		return GERR_INVAL;
	if ((r = path_fmt(path, sizeof(path), "%s/blobs/%.2s/%s", dir, hash,
			  hash)) < 0)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return gerr_from_errno(errno);
	/* Streamed: a stored blob may be far larger than we want in memory. */
	buf = malloc(1 << 20);
	if (!buf) {
		close(fd);
		return GERR_NOMEM;
	}
	crypto_generichash_init(&hs, NULL, 0, sizeof(h));
	r = 0;
	while ((n = read(fd, buf, 1 << 20)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = gerr_from_errno(errno);
			break;
		}
		crypto_generichash_update(&hs, buf, (unsigned long long)n);
	}
	free(buf);
	close(fd);
	if (r)
		return r;
	crypto_generichash_final(&hs, h, sizeof(h));
	sodium_bin2hex(got, sizeof(got), h, sizeof(h));
	return memcmp(got, hash, BLOB_HASH_HEX) == 0 ? 0 : GERR_CORRUPT;
}
