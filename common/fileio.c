/* fileio.c - durable file writes (fileio.h). */
#define _GNU_SOURCE /* mkostemp */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gerr.h"

/* The code for errno, leaving errno as it was for the caller's message. */
static int fail_errno(void)
{
	return gerr_from_errno(errno);
}

int fileio_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		/* Linux writes at most about 2 GiB a call. */
		ssize_t w = write(fd, p, len > (1u << 30) ? (1u << 30) : len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return fail_errno();
		if (w == 0) {
			errno = EIO;
			return GERR_IO;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int fileio_fill_buf(int fd, void *arg)
{
	const struct fileio_buf *b = arg;

	return fileio_write_all(fd, b->data, b->len);
}

/* fd made mode, filled, fsynced and closed (closed also on failure). */
static int fill_and_close(int fd, mode_t mode, fileio_fill_fn *fill,
			  void *arg)
{
	int r = 0, e = 0;

	/* The umask may only have removed bits; make the mode exact. */
	if (fchmod(fd, mode) < 0)
		r = fail_errno();
	if (r == 0)
		r = fill(fd, arg);
	if (r == 0 && fsync(fd) < 0)
		r = fail_errno();
	if (r)
		e = errno;
	if (close(fd) < 0 && r == 0) {
		r = fail_errno();
		e = errno;
	}
	errno = e;
	return r;
}

/* Remove what a failed call made, keeping the failure's errno. */
static int undo(const char *path, int r)
{
	int e = errno;

	unlink(path);
	errno = e;
	return r;
}

int fileio_replace(const char *path, const char *tmpl, mode_t mode,
		   fileio_fill_fn *fill, void *arg)
{
	char tmp[PATH_MAX];
	int fd, w, r;

	if (!path || !*path || !fill) {
		errno = EINVAL;
		return GERR_INVAL;
	}
	w = tmpl ? snprintf(tmp, sizeof(tmp), "%s", tmpl)
		 : snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", path);
	if (w < 0 || (size_t)w >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return GERR_INVAL;
	}
	if (w < 6 || strcmp(tmp + w - 6, "XXXXXX") != 0) {
		errno = EINVAL;
		return GERR_INVAL;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return fail_errno();
	r = fill_and_close(fd, mode, fill, arg);
	if (r == 0 && rename(tmp, path) < 0)
		r = fail_errno();
	if (r)
		return undo(tmp, r);
	return fileio_fsync_parent(path);
}

int fileio_write_atomic(const char *path, const void *data, size_t len,
			mode_t mode)
{
	struct fileio_buf b = { data, len };

	if (len > 0 && !data) {
		errno = EINVAL;
		return GERR_INVAL;
	}
	return fileio_replace(path, NULL, mode, fileio_fill_buf, &b);
}

int fileio_create(const char *path, mode_t mode, fileio_fill_fn *fill,
		  void *arg)
{
	int fd, r;

	if (!path || !*path || !fill) {
		errno = EINVAL;
		return GERR_INVAL;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return fail_errno();
	r = fill_and_close(fd, mode, fill, arg);
	return r ? undo(path, r) : 0;
}

/* fsync an open fd, then close it; EINVAL is a file system that cannot
 * sync this kind of file, which leaves nothing to wait for. */
static int sync_close(int fd)
{
	int r = 0, e = 0;

	if (fsync(fd) < 0 && errno != EINVAL) {
		e = errno;
		r = gerr_from_errno(e);
	}
	close(fd);
	errno = e;
	return r;
}

int fileio_fsync_path(const char *path)
{
	int fd;

	if (!path || !*path) {
		errno = EINVAL;
		return GERR_INVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? fail_errno() : sync_close(fd);
}

int fileio_fsync_parent(const char *path)
{
	char dir[PATH_MAX];
	const char *slash;
	size_t n;
	int fd;

	if (!path || !*path) {
		errno = EINVAL;
		return GERR_INVAL;
	}
	slash = strrchr(path, '/');
	if (!slash) {
		strcpy(dir, ".");
	} else {
		n = slash == path ? 1 : (size_t)(slash - path);
		if (n >= sizeof(dir)) {
			errno = ENAMETOOLONG;
			return GERR_INVAL;
		}
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? fail_errno() : sync_close(fd);
}

int fileio_mkdir(const char *path, mode_t mode)
{
	struct stat st;

	if (!path || !*path) {
		errno = EINVAL;
		return GERR_INVAL;
	}
	if (mkdir(path, mode) == 0)
		return fileio_fsync_parent(path);
	if (errno != EEXIST || stat(path, &st) < 0)
		return fail_errno();
	if (S_ISDIR(st.st_mode))
		return 0;
	errno = ENOTDIR;
	return GERR_IO;
}

int fileio_read_all(const char *path, size_t max, void **ret,
		    size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	size_t len = 0, cap = 1 << 16;
	char *buf = NULL;
	int rc = 0;

	if (!f)
		return fail_errno();
	for (;;) {
		char *nb = realloc(buf, cap + 1);

		if (!nb) {
			rc = GERR_NOMEM;
			goto fail;
		}
		buf = nb;
		len += fread(buf + len, 1, cap - len, f);
		if (len < cap)
			break;
		if (cap > max) {
			rc = GERR_TOOBIG;
			goto fail;
		}
		cap *= 2;
	}
	if (ferror(f))
		rc = GERR_IO;
	else if (len > max)
		rc = GERR_TOOBIG;
	if (rc)
		goto fail;
	fclose(f);
	buf[len] = 0;
	*ret = buf;
	*ret_len = len;
	return 0;
fail:
	free(buf);
	fclose(f);
	return rc;
}
