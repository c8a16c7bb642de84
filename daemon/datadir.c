/* datadir.c - the data directory at start (datadir.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blob.h"
#include "datadir.h"
#include "fileio.h"
#include "gerr.h"

#define PATH_LEN 4200

int datadir_check_mode(const char *dir, char *err, size_t errlen)
{
	struct stat sb;

	if (stat(dir, &sb) != 0)
		return gerr_fail(gerr_from_errno(errno), err, errlen,
				 "cannot stat %s: %s", dir, strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return gerr_fail(GERR_INVAL, err, errlen, "%s is not a directory",
				 dir);
	if (sb.st_mode & S_IWOTH)
		return gerr_fail(GERR_PERM, err, errlen,
				 "data directory %s is writable by every user (mode "
				 "%04o): anyone could replace its database or a "
				 "stored result; run chmod 700 %s (gpud creates it "
				 "0700)", dir, (unsigned)(sb.st_mode & 07777), dir);
	return 0;
}

/* The holder's PID from DIR/gpud.lock, or 0 (absent, or not a PID). */
static long lock_holder(const char *path)
{
	char text[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	ssize_t got = fd >= 0 ? pread(fd, text, sizeof(text) - 1, 0) : -1;

	if (fd >= 0)
		close(fd);
	if (got <= 0)
		return 0;
	text[got] = '\0';
	return strtol(text, NULL, 10);
}

static int refused(const char *dir, const char *path, char *err, size_t errlen)
{
	long pid = lock_holder(path);

	if (pid > 0)
		return gerr_fail(GERR_STATE, err, errlen,
				 "another gpud (pid %ld) is using %s; stop it "
				 "first (one gpud per data directory)", pid, dir);
	return gerr_fail(GERR_STATE, err, errlen,
			 "another gpud is using %s (it holds the lock on the "
			 "directory; %s, which names it, is gone); stop it "
			 "first (one gpud per data directory)", dir, path);
}

/* Lock an open descriptor, saying why not: GERR_STATE when held. */
static int lock_fd(int fd, const char *dir, const char *path, char *err,
		   size_t errlen)
{
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno == EWOULDBLOCK)
		return refused(dir, path, err, errlen);
	return gerr_fail(gerr_from_errno(errno), err, errlen,
			 "cannot lock %s: %s", dir, strerror(errno));
}

/* The lock is on the directory's own descriptor: deleting or replacing
 * gpud.lock cannot free it, only the holder's exit can. A filesystem that
 * cannot lock a directory (some network ones) gets the lock on gpud.lock
 * itself, as before. gpud.lock names the holder for the message. */
int datadir_lock(const char *dir, int *ret_fd, char *err, size_t errlen)
{
	char path[PATH_LEN], text[32];
	int dfd, fd, n, r = 0;

	snprintf(path, sizeof(path), "%s/gpud.lock", dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return gerr_fail(gerr_from_errno(errno), err, errlen,
				 "cannot open %s: %s", dir, strerror(errno));
	if (flock(dfd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;

		close(dfd);
		dfd = -1;
		if (e == EWOULDBLOCK) /* read, never created, by the refused */
			return refused(dir, path, err, errlen);
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
		  0600);
	if (fd < 0)
		r = gerr_fail(gerr_from_errno(errno), err, errlen,
			      "cannot open %s: %s", path, strerror(errno));
	else if (dfd < 0)
		r = lock_fd(fd, dir, path, err, errlen);
	if (r == 0) {
		n = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
		if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)n, 0) != n)
			r = gerr_fail(gerr_from_errno(errno), err, errlen,
				      "cannot write %s: %s", path,
				      strerror(errno));
	}
	if (r || dfd >= 0) {
		if (fd >= 0)
			close(fd);
		fd = dfd; /* held by the directory: the file only says who */
	}
	if (r) {
		if (dfd >= 0)
			close(dfd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/* How many stored blobs (or their temporary files) DIR/blobs holds; stops
 * counting at the first one found when any is enough. */
static size_t count_blobs(const char *dir)
{
	char top[PATH_LEN], sub[PATH_LEN + 8];
	struct dirent *e, *f;
	size_t n = 0;
	DIR *d, *s;

	snprintf(top, sizeof(top), "%s/blobs", dir);
	if (!(d = opendir(top)))
		return 0;
	while ((e = readdir(d))) {
		if (strlen(e->d_name) != 2 || e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", top, e->d_name);
		if (!(s = opendir(sub)))
			continue;
		while ((f = readdir(s)))
			if (strlen(f->d_name) == BLOB_HASH_HEX - 1)
				n++;
		closedir(s);
	}
	closedir(d);
	return n;
}

static off_t file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? sb.st_size : -1;
}

/* Rename path to path + suffix (logged); 0 when absent. */
static int move_aside(const char *path, const char *suffix,
		      const struct glog *log, char *err, size_t errlen)
{
	char to[PATH_LEN + 64];

	if (access(path, F_OK) != 0)
		return 0;
	snprintf(to, sizeof(to), "%s%s", path, suffix);
	if (rename(path, to) != 0)
		return gerr_fail(gerr_from_errno(errno), err, errlen,
				 "--init: cannot move %s aside: %s", path,
				 strerror(errno));
	LOG_WARN(log, "--init: moved %s to %s (delete it once you are sure "
		 "you do not need it)", path, to);
	return 0;
}

int datadir_check_fresh(const char *dir, int init, const struct glog *log,
			char *err, size_t errlen)
{
	char db[PATH_LEN], wal[PATH_LEN], blobs[PATH_LEN], key[PATH_LEN];
	char suffix[64];
	off_t db_size, wal_size;
	size_t nblobs;
	int has_key;
	time_t now = time(NULL);
	struct tm tm;
	int r;

	snprintf(db, sizeof(db), "%s/gpud.db", dir);
	snprintf(wal, sizeof(wal), "%s/gpud.db-wal", dir);
	snprintf(blobs, sizeof(blobs), "%s/blobs", dir);
	db_size = file_size(db);
	if (db_size > 0) {
		if (init)
			LOG_INFO(log, "--init: %s exists; nothing to initialise", db);
		return 0;
	}
	nblobs = count_blobs(dir);
	wal_size = file_size(wal);
	snprintf(key, sizeof(key), "%s/gpud.key", dir);
	has_key = access(key, F_OK) == 0;
	if (nblobs == 0 && wal_size <= 0 && !has_key)
		return 0; /* a first start */
	/* The identity key is made at the first start, with the database:
	 * alone, it says a database (its tokens at least) was lost, even
	 * before any blob was stored. */
	if (!init && nblobs == 0 && wal_size <= 0)
		return gerr_fail(GERR_STATE, err, errlen,
				 "%s is %s, but %s (gpud's identity, made with "
				 "the database at the first start) is there: the "
				 "database was lost, and with it every job and "
				 "credential (gpuctl token add). gpud will not start "
				 "a fresh one silently. If it was lost, restore "
				 "gpud.db (and its -wal file) from a backup. To start "
				 "afresh on purpose, run gpud once with --init (the "
				 "identity key is kept: credentials must be added "
				 "again, and they pin the same key), or remove %s "
				 "(a new identity: every credential is made anew)",
				 db, db_size == 0 ? "empty" : "missing", key, key);
	if (!init)
		return gerr_fail(GERR_STATE, err, errlen,
				 "%s is %s, but %s holds %zu stored blob(s)%s of an "
				 "earlier database: gpud will not start a fresh one "
				 "beside them (every job and token would be gone). If "
				 "the database was lost, restore gpud.db (and its -wal "
				 "file) from a backup. To start afresh on purpose, run "
				 "gpud once with --init: the old files are moved aside, "
				 "not deleted", db, db_size == 0 ? "empty" : "missing",
				 blobs, nblobs, wal_size > 0 ? " and a write-ahead log "
				 "(gpud.db-wal)" : "");
	gmtime_r(&now, &tm);
	strftime(suffix, sizeof(suffix), ".before-init-%Y%m%dT%H%M%SZ", &tm);
	if ((r = move_aside(blobs, suffix, log, err, errlen)) ||
	    (r = move_aside(wal, suffix, log, err, errlen)))
		return r;
	snprintf(wal, sizeof(wal), "%s/gpud.db-shm", dir);
	return move_aside(wal, suffix, log, err, errlen);
}

static int probe_in(const char *dir)
{
	static const char zeros[4096];
	struct fileio_buf b = { zeros, sizeof(zeros) };
	char path[PATH_LEN];
	int r;

	snprintf(path, sizeof(path), "%s/.write-probe-%ld", dir, (long)getpid());
	/* One a crash left is ours: in a container gpud has the same pid. */
	unlink(path);
	r = fileio_create(path, 0600, fileio_fill_buf, &b);
	unlink(path);
	return r;
}

int datadir_probe(const char *dir)
{
	char blobs[PATH_LEN];
	int r = probe_in(dir);

	snprintf(blobs, sizeof(blobs), "%s/blobs", dir);
	if (r == 0 && access(blobs, F_OK) == 0)
		r = probe_in(blobs);
	return r;
}
