/* fileio.h - durable file writes: the one place that writes a temporary
 * file, fsyncs it, renames it over its name and fsyncs the directory. And
 * its one read: a whole file into memory, bounded (fileio_read_all).
 *
 * Invariants:
 *  1. fileio_replace and fileio_write_atomic return 0 only after the bytes,
 *     the rename and the directory entry are on disk. A reader (or a crash)
 *     sees the old file or the new one, never a part of the new one.
 *  2. On failure nothing this call created is left behind: the temporary
 *     file (fileio_replace) or the new file (fileio_create) is removed.
 *  3. A file written here has exactly the mode asked for, whatever the
 *     umask; symbolic links are never followed to create a file.
 *
 * Errors are values: 0 or a negative GERR_* (gerr_from_errno of the failed
 * call: ENOSPC is GERR_NOSPACE, EACCES GERR_PERM, ENOENT GERR_NOTFOUND).
 * On failure errno still holds the failed call's errno, so that a caller
 * may say strerror(errno) in its message. Nothing here logs or exits.
 *
 * Ownership: paths and data are borrowed; no reference is kept past a call.
 * Threads: any thread; no shared state. Two writers of one path at once
 * each use a temporary name of their own, and the last rename wins.
 */
#ifndef GPUD_FILEIO_H
#define GPUD_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

/* Writes a file's content to fd (open for writing, at offset 0): 0 or a
 * negative GERR_*. It must not close fd. */
typedef int fileio_fill_fn(int fd, void *arg);

/* For fileio_fill_buf: the bytes to write, borrowed. */
struct fileio_buf {
	const void *data;
	size_t len;
};

/* A fileio_fill_fn writing the struct fileio_buf that arg points to. */
int fileio_fill_buf(int fd, void *arg);

/* Write all len bytes to fd, retrying short writes and EINTR. 0, or
 * GERR_* of the failed write (GERR_IO when write(2) wrote nothing). */
int fileio_write_all(int fd, const void *data, size_t len);

/* The durable replace: content from fill goes to a new temporary file
 * made from tmpl (a mkostemp(3) template ending in "XXXXXX", in path's
 * directory), which is set to mode, fsynced, closed, renamed over path
 * (replacing any file there), and then path's directory is fsynced.
 * tmpl NULL: "<path>.tmp-XXXXXX" (a crash may leave one: whoever sweeps
 * path's directory removes that prefix). GERR_INVAL for a NULL argument,
 * a template without the X's, or a name too long for PATH_MAX. When only
 * the directory's fsync fails, its code is returned with the new file in
 * place. */
int fileio_replace(const char *path, const char *tmpl, mode_t mode,
		   fileio_fill_fn *fill, void *arg);

/* fileio_replace of len bytes, with the default temporary name. */
int fileio_write_atomic(const char *path, const void *data, size_t len,
			mode_t mode);

/* A new file at path (O_EXCL: GERR_IO with errno EEXIST when anything is
 * there), set to mode, filled, fsynced and closed. Its directory is not
 * fsynced: callers that create many files sync it once (fileio_fsync_path)
 * when they are done. */
int fileio_create(const char *path, mode_t mode, fileio_fill_fn *fill,
		  void *arg);

/* fsync the file or directory at path (not followed if a link). EINVAL,
 * from file systems that cannot sync a directory, counts as done. */
int fileio_fsync_path(const char *path);

/* fsync the directory that holds path ("." when path has no slash), so a
 * new, renamed or removed entry there is durable. */
int fileio_fsync_parent(const char *path);

/* mkdir(path, mode) (the umask applies), made durable by syncing its
 * parent; 0 when a directory is already there, GERR_IO when something
 * else is. */
int fileio_mkdir(const char *path, mode_t mode);

/* The whole file at path, at most max bytes, into *ret (malloc'ed, the
 * caller frees; a NUL byte follows the *ret_len bytes read). GERR_TOOBIG
 * when the file holds more than max, GERR_NOMEM, or the failed call's code;
 * *ret and *ret_len are written only on success. */
int fileio_read_all(const char *path, size_t max, void **ret,
		    size_t *ret_len);

#endif
