/* backup.c - a running gpud's data directory backed up into a new one
 * (see backup.h for what it holds and why it is consistent). */
#define _GNU_SOURCE /* nftw's FTW_DEPTH, FTW_PHYS */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/fs.h> /* FICLONE */
#include <jansson.h>
#include <sodium.h>

#include "backup.h"
#include "blob.h"
#include "clock.h"
#include "fileio.h"
#include "gerr.h"
#include "gpud_config.h"

/* Snapshots taken at most: each retry follows a checkpoint replaced between
 * a snapshot and its blobs' placing, which a few milliseconds separate. */
#define BACKUP_MAX_SNAPSHOTS 8
/* integrity_check's problems kept, as gpuctl check keeps them. */
#define BACKUP_MAX_LINES 100

/* What a backup holds besides its manifest, in the order it is moved into
 * place: the database, the blobs, then gpud's identity key (from
 * IDENTITY_FIRST on), copied when present. Never local-worker.token: a
 * credential's secret key; the restored gpud makes its local worker a new
 * one. */
static const char *const held[] = {
	"gpud.db", "blobs", "gpud.key",
};
#define HELD_N (sizeof(held) / sizeof(*held))
#define IDENTITY_FIRST 2

/* A path of at most PATH_MAX bytes; GERR_TOOBIG when it would be longer
 * (backup_write bounds both directories so that none is). */
__attribute__((format(printf, 2, 3)))
static int pathf(char out[PATH_MAX], const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
	return n < 0 || n >= PATH_MAX ? GERR_TOOBIG : 0;
}

static int is_blob_name(const char *s)
{
	size_t i = 0;

	for (; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return i == BLOB_HASH_HEX - 1;
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* What a failed backup wrote: gone, best effort. */
static void remove_tree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* 1 when dir has no entry but . and .., 0 when it has one, or an error. */
static int dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int empty = 1;

	if (!d)
		return gerr_from_errno(errno);
	while (empty && (e = readdir(d)))
		empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/* dest made ready: created (0700) when absent, refused unless an empty
 * directory outside data_dir. *ret_made: whether this call created it. */
static int prepare_dest(const char *data_dir, const char *dest,
			int *ret_made, char *err, size_t errlen)
{
	char real_dest[PATH_MAX], real_data[PATH_MAX];
	struct stat sb;
	size_t n;
	int r;

	*ret_made = 0;
	if (dest[0] != '/')
		return gerr_fail(GERR_INVAL, err, errlen, "the backup directory "
				 "must be an absolute path: %s", dest);
	if (strlen(dest) > BACKUP_PATH_MAX)
		return gerr_fail(GERR_INVAL, err, errlen, "the backup directory's "
				 "path is longer than %d bytes", BACKUP_PATH_MAX);
	if (lstat(dest, &sb) == 0) {
		if (!S_ISDIR(sb.st_mode))
			return gerr_fail(GERR_STATE, err, errlen, "%s exists and "
					 "is not a directory", dest);
		if ((r = dir_empty(dest)) < 0)
			return gerr_fail(r, err, errlen, "cannot read %s: %s",
					 dest, gerr_str(r));
		if (!r)
			return gerr_fail(GERR_STATE, err, errlen, "%s is not "
					 "empty: a backup goes into a new or "
					 "empty directory", dest);
	} else if (errno != ENOENT) {
		return gerr_fail(gerr_from_errno(errno), err, errlen,
				 "cannot use %s: %s", dest, strerror(errno));
	} else if (mkdir(dest, 0700) != 0) {
		return gerr_fail(gerr_from_errno(errno), err, errlen,
				 "cannot create %s: %s", dest, strerror(errno));
	} else {
		*ret_made = 1;
	}
	if (!realpath(dest, real_dest) || !realpath(data_dir, real_data)) {
		r = gerr_fail(gerr_from_errno(errno), err, errlen, "cannot "
			      "resolve %s: %s", dest, strerror(errno));
		goto fail;
	}
	n = strlen(real_data);
	if (strncmp(real_dest, real_data, n) == 0 &&
	    (real_dest[n] == '/' || real_dest[n] == '\0')) {
		r = gerr_fail(GERR_INVAL, err, errlen, "%s is inside the data "
			      "directory %s: put the backup elsewhere", dest,
			      data_dir);
		goto fail;
	}
	/* The backup holds token keys and gpud's identity. */
	if (chmod(dest, 0700) != 0) {
		r = gerr_fail(gerr_from_errno(errno), err, errlen, "cannot make "
			      "%s private: %s", dest, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	if (*ret_made)
		rmdir(dest);
	*ret_made = 0;
	return r;
}

struct copy {
	int in;
	int clone;          /* try a reflink first */
	int cloned;         /* it was one */
	uint64_t total;
};

/* fileio_fill_fn: the rest of c->in, counted: shared copy-on-write when
 * asked and the filesystem can (a reflink: later damage to either file
 * stays in that file), else read and written. */
static int copy_fill(int out, void *arg)
{
	struct copy *c = arg;
	char buf[1 << 16];
	ssize_t n;
	int r;

	if (c->clone && ioctl(out, FICLONE, c->in) == 0) {
		struct stat sb;

		if (fstat(out, &sb) != 0)
			return gerr_from_errno(errno);
		c->cloned = 1;
		c->total = (uint64_t)sb.st_size;
		return 0;
	}
	while ((n = read(c->in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return gerr_from_errno(errno);
		if ((r = fileio_write_all(out, buf, (size_t)n)))
			return r;
		c->total += (uint64_t)n;
	}
	return 0;
}

/* Copy src to the new file dst (mode 0600), durably; a reflink when clone
 * and the filesystem can (*ret_cloned, may be NULL, says so). GERR_NOTFOUND
 * when src is absent. */
static int copy_file_as(const char *src, const char *dst, int clone,
			uint64_t *ret_bytes, int *ret_cloned)
{
	struct copy c = { .in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW),
			  .clone = clone };
	int r;

	if (c.in < 0)
		return gerr_from_errno(errno);
	r = fileio_create(dst, 0600, copy_fill, &c);
	close(c.in);
	if (!r && ret_bytes)
		*ret_bytes = c.total;
	if (!r && ret_cloned)
		*ret_cloned = c.cloned;
	return r;
}

static int copy_file(const char *src, const char *dst, uint64_t *ret_bytes)
{
	return copy_file_as(src, dst, 0, ret_bytes, NULL);
}

/* Where a blob goes, its directory made. */
static int blob_paths(const char *data_dir, const char *stage,
		      const char *hash, char src[PATH_MAX], char dst[PATH_MAX])
{
	char sub[PATH_MAX];
	int r;

	if ((r = pathf(sub, "%s/blobs", stage)))
		return r;
	if (mkdir(sub, 0700) != 0 && errno != EEXIST)
		return gerr_from_errno(errno);
	if ((r = pathf(sub, "%s/blobs/%.2s", stage, hash)))
		return r;
	if (mkdir(sub, 0700) != 0 && errno != EEXIST)
		return gerr_from_errno(errno);
	if ((r = pathf(src, "%s/blobs/%.2s/%s", data_dir, hash, hash)))
		return r;
	return pathf(dst, "%s/blobs/%.2s/%s", stage, hash, hash);
}

struct placing {
	int copy;           /* never reflink: asked, or reflinks fail here */
	size_t linked, copied; /* reflinked, copied byte by byte */
	char (*missing)[BLOB_HASH_HEX];  /* this snapshot's, sorted */
	size_t nmissing;
};

/* Copy (a reflink where the filesystem can) one named blob into the stage;
 * GERR_NOTFOUND when the live store has it no more. Never a hard link: it
 * would share the file, and damage to the live blob would be the backup's
 * too. One placed by an earlier snapshot stays. */
static int place_blob(const char *data_dir, const char *stage,
		      const char *hash, struct placing *p)
{
	char src[PATH_MAX], dst[PATH_MAX];
	struct stat sb;
	int r, cloned = 0;

	if ((r = blob_paths(data_dir, stage, hash, src, dst)))
		return r;
	if (lstat(dst, &sb) == 0)
		return 0;
	if ((r = copy_file_as(src, dst, !p->copy, NULL, &cloned)))
		return r;
	if (cloned) {
		p->linked++;
	} else {
		p->copied++;
		p->copy = 1; /* no reflinks here: not asked again */
	}
	return 0;
}

/* Every distinct blob name refs holds, placed; the missing ones listed. */
static int place_all(const char *data_dir, const char *stage,
		     const struct store_blob_ref *refs, size_t n,
		     struct placing *p, char *err, size_t errlen)
{
	free(p->missing);
	p->missing = NULL;
	p->nmissing = 0;
	for (size_t i = 0; i < n; i++) {
		const char *h = refs[i].hash;
		int r;

		if ((i > 0 && strcmp(h, refs[i - 1].hash) == 0) ||
		    !is_blob_name(h))
			continue; /* the check reports a name that is no hash */
		r = place_blob(data_dir, stage, h, p);
		if (r == GERR_NOTFOUND) {
			void *m = realloc(p->missing, (p->nmissing + 1) *
					  sizeof(*p->missing));

			if (!m)
				return gerr_fail(GERR_NOMEM, err, errlen,
						 "out of memory");
			p->missing = m;
			memcpy(p->missing[p->nmissing++], h, BLOB_HASH_HEX);
		} else if (r) {
			return gerr_fail(r, err, errlen, "cannot place blob %s "
					 "in the backup: %s", h, gerr_str(r));
		}
	}
	return 0;
}

/* Whether every blob missing now was missing for the snapshot before:
 * then it is gone for good, and another snapshot would not find it. */
static int same_missing(char (*was)[BLOB_HASH_HEX], size_t nwas,
			const struct placing *p)
{
	for (size_t i = 0; i < p->nmissing; i++) {
		size_t k = 0;

		while (k < nwas && strcmp(was[k], p->missing[i]) != 0)
			k++;
		if (k == nwas)
			return 0;
	}
	return 1;
}

/* Snapshots until every blob one names is placed (or stays missing): the
 * copy is left open in *ret_copy, its references in r->refs. */
static int snapshot_and_blobs(const char *data_dir, const char *stage,
			      const struct backup_opts *o, struct placing *p,
			      struct backup_report *rep, struct store **ret_copy,
			      char *err, size_t errlen)
{
	char live[PATH_MAX], copy[PATH_MAX], msg[512];
	char (*was)[BLOB_HASH_HEX] = NULL;
	size_t nwas = 0;
	int r;

	if ((r = pathf(live, "%s/gpud.db", data_dir)) ||
	    (r = pathf(copy, "%s/gpud.db", stage)))
		return gerr_fail(r, err, errlen, "path too long");
	for (;;) {
		struct store *st = NULL;

		unlink(copy);
		rep->snapshots++;
		if ((r = store_snapshot(live, copy, msg, sizeof(msg)))) {
			r = gerr_fail(r, err, errlen, "cannot copy the "
				      "database: %s", msg);
			break;
		}
		if ((r = store_open(copy, &st, msg, sizeof(msg)))) {
			r = gerr_fail(r, err, errlen, "cannot open the copied "
				      "database: %s", msg);
			break;
		}
		free(rep->refs);
		rep->refs = NULL;
		if ((r = store_blob_refs(st, 0, &rep->refs, &rep->nrefs))) {
			r = gerr_fail(r, err, errlen, "cannot list the copy's "
				      "blobs: %s", store_errmsg(st));
			store_close(st);
			break;
		}
		if (o->after_snapshot)
			o->after_snapshot(o->arg, rep->snapshots);
		r = place_all(data_dir, stage, rep->refs, rep->nrefs, p, err,
			      errlen);
		if (r || p->nmissing == 0 || same_missing(was, nwas, p) ||
		    rep->snapshots == BACKUP_MAX_SNAPSHOTS) {
			if (r)
				store_close(st);
			else
				*ret_copy = st;
			break;
		}
		store_close(st);
		free(was);
		was = p->missing;
		nwas = p->nmissing;
		p->missing = NULL;
		p->nmissing = 0;
	}
	free(was);
	return r;
}

/* In the copy: every granted lease back to pending, its holder gone. */
static int release_granted(struct store *st, double now, size_t *ret_n,
			   char *err, size_t errlen)
{
	static const char why[] = "granted when the backup was taken; "
				  "granted again after the restore";
	struct store_lease *l = NULL;
	size_t n = 0;
	int r;

	if ((r = store_lease_list_state(st, LEASE_LEASED, &l, &n)))
		return gerr_fail(r, err, errlen, "cannot list granted leases: "
				 "%s", store_errmsg(st));
	if (n && !(r = store_begin(st))) {
		for (size_t i = 0; i < n && !r; i++) {
			r = store_lease_revoke(st, l[i].id, l[i].epoch, why, now);
			if (!r)
				r = store_event(st, now, l[i].job_id, l[i].id,
						l[i].epoch, l[i].worker_id,
						"backup", why);
		}
		if (!r)
			r = store_commit(st);
		else
			store_rollback(st);
	}
	if (r)
		r = gerr_fail(r, err, errlen, "cannot release the copy's "
			      "granted leases: %s", store_errmsg(st));
	else
		*ret_n = n;
	store_lease_free_array(l, n);
	return r;
}

/* The blobs in the stage: counted, their directories made durable. */
static int blobs_settle(const char *stage, struct backup_report *rep)
{
	char top[PATH_MAX], sub[PATH_MAX], path[PATH_MAX];
	struct dirent *e, *f;
	DIR *d, *s;
	int r = 0;

	if ((r = pathf(top, "%s/blobs", stage)))
		return r;
	if (!(d = opendir(top)))
		return errno == ENOENT ? 0 : gerr_from_errno(errno);
	while (!r && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if ((r = pathf(sub, "%s/%s", top, e->d_name)))
			break;
		if (!(s = opendir(sub))) {
			r = gerr_from_errno(errno);
			break;
		}
		while ((f = readdir(s))) {
			struct stat sb;

			if (f->d_name[0] == '.')
				continue;
			if (pathf(path, "%s/%s", sub, f->d_name) == 0 &&
			    lstat(path, &sb) == 0) {
				rep->blobs++;
				rep->blob_bytes += (uint64_t)sb.st_size;
			}
		}
		closedir(s);
		r = fileio_fsync_path(sub);
	}
	closedir(d);
	return r ? r : fileio_fsync_path(top);
}

static int file_hash(const char *path, char out[65])
{
	crypto_generichash_state hs;
	uint8_t buf[1 << 16], h[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return gerr_from_errno(errno);
	crypto_generichash_init(&hs, NULL, 0, sizeof(h));
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = gerr_from_errno(errno);

			close(fd);
			return r;
		}
		crypto_generichash_update(&hs, buf, (size_t)n);
	}
	close(fd);
	crypto_generichash_final(&hs, h, sizeof(h));
	sodium_bin2hex(out, 65, h, sizeof(h));
	return 0;
}

/* The identity files there are, copied into the stage. */
static int copy_identity(const char *data_dir, const char *stage,
			 struct backup_report *rep, char *err, size_t errlen)
{
	for (size_t i = IDENTITY_FIRST; i < HELD_N; i++) {
		char src[PATH_MAX], dst[PATH_MAX];
		uint64_t bytes = 0;
		int r;

		if ((r = pathf(src, "%s/%s", data_dir, held[i])) ||
		    (r = pathf(dst, "%s/%s", stage, held[i])))
			return gerr_fail(r, err, errlen, "path too long");
		r = copy_file(src, dst, &bytes);
		if (r == GERR_NOTFOUND)
			continue;
		if (r)
			return gerr_fail(r, err, errlen, "cannot copy %s: %s",
					 src, gerr_str(r));
		rep->files++;
		rep->bytes += bytes;
	}
	return 0;
}

/* backup.json, written last (fileio: temporary name, fsync, rename). */
static int write_manifest(const char *dest, const struct backup_report *rep)
{
	char path[PATH_MAX];
	json_t *files = json_array(), *m;
	char *text;
	int r;

	for (size_t i = IDENTITY_FIRST; i < HELD_N; i++) {
		if (pathf(path, "%s/%s", dest, held[i]) == 0 &&
		    access(path, F_OK) == 0)
			json_array_append_new(files, json_string(held[i]));
	}
	m = json_pack("{s:i, s:s, s:f, s:{s:s, s:I, s:s}, s:I, s:I, s:o, "
		      "s:I, s:b, s:I, s:I}", "format", 1, "gpud_version",
		      GPUD_VERSION, "created_at", (double)time(NULL), "database",
		      "file", "gpud.db", "bytes", (json_int_t)rep->db_bytes,
		      "blake2b", rep->db_hash, "blobs", (json_int_t)rep->blobs,
		      "blob_bytes", (json_int_t)rep->blob_bytes, "files", files,
		      "leases_released", (json_int_t)rep->released, "verified",
		      rep->nintegrity == 0 && rep->nprobs == 0,
		      "integrity_problems", (json_int_t)rep->nintegrity,
		      "blob_problems", (json_int_t)rep->nprobs);
	text = m ? json_dumps(m, JSON_INDENT(2)) : NULL;
	json_decref(m);
	if (!text)
		return GERR_NOMEM;
	if (!(r = pathf(path, "%s/backup.json", dest)))
		r = fileio_write_atomic(path, text, strlen(text), 0600);
	free(text);
	return r;
}

/* What publish moved into dest, which a failed backup leaves as it found
 * it (empty); fileio removes its own temporary file. */
static void unpublish(const char *dest)
{
	char path[PATH_MAX];

	for (size_t i = 0; i <= HELD_N; i++)
		if (pathf(path, "%s/%s", dest,
			  i < HELD_N ? held[i] : "backup.json") == 0)
			remove_tree(path);
}

/* The stage's entries moved up into dest, then the manifest. */
static int publish(const char *dest, const char *stage,
		   const struct backup_report *rep, char *err, size_t errlen)
{
	char from[PATH_MAX], to[PATH_MAX];
	int r;

	for (size_t i = 0; i < HELD_N; i++) {
		if ((r = pathf(from, "%s/%s", stage, held[i])) ||
		    (r = pathf(to, "%s/%s", dest, held[i])))
			return gerr_fail(r, err, errlen, "path too long");
		if (rename(from, to) != 0 && errno != ENOENT)
			return gerr_fail(gerr_from_errno(errno), err, errlen,
					 "cannot move %s into place: %s", from,
					 strerror(errno));
	}
	if (rmdir(stage) != 0)
		return gerr_fail(gerr_from_errno(errno), err, errlen,
				 "cannot remove %s: %s", stage, strerror(errno));
	if ((r = fileio_fsync_path(dest)) || (r = write_manifest(dest, rep)))
		return gerr_fail(r, err, errlen, "cannot write %s/backup.json: "
				 "%s", dest, gerr_str(r));
	return 0;
}

/* Everything after the snapshot, on the open copy: releases, checks,
 * identity, and the move into place. */
static int finish(const char *data_dir, const char *dest, const char *stage,
		  struct store *copy, const struct backup_opts *o,
		  struct backup_report *rep, char *err, size_t errlen)
{
	static const struct glog quiet = { .prog = "gpud", .level = GLOG_ERROR };
	char db[PATH_MAX];
	struct stat sb;
	size_t checked = 0;
	int r;

	if ((r = release_granted(copy, o->now, &rep->released, err, errlen)))
		goto close;
	if ((r = store_integrity(copy, 0, BACKUP_MAX_LINES, &rep->integrity,
				 &rep->nintegrity)))
		r = gerr_fail(r, err, errlen, "cannot check the copy: %s",
			      store_errmsg(copy));
	/* The answers and parts against their digests, as gpuctl check
	 * does: a backup of a damaged answer says so. */
	if (!r && rep->nintegrity == 0) {
		struct store_digest_bad *bad = NULL;
		uint64_t total = 0;
		size_t nbad = 0;

		if ((r = store_digest_audit(copy, BACKUP_MAX_LINES, &bad, &nbad,
					    &total)))
			r = gerr_fail(r, err, errlen, "cannot check the copy's "
				      "digests: %s", store_errmsg(copy));
		else if ((r = audit_digest_lines(bad, nbad, total,
						 &rep->integrity,
						 &rep->nintegrity)))
			r = gerr_fail(r, err, errlen, "out of memory");
		free(bad);
	}
close:
	store_close(copy);
	if (r)
		return r;
	if ((r = pathf(db, "%s/gpud.db", stage)) == 0 && stat(db, &sb) != 0)
		r = gerr_from_errno(errno);
	if (r || (r = file_hash(db, rep->db_hash)) || (r = fileio_fsync_path(db)))
		return gerr_fail(r, err, errlen, "cannot read the copy back: "
				 "%s", gerr_str(r));
	rep->db_bytes = (uint64_t)sb.st_size;
	/* Blobs an earlier snapshot named and this one does not. */
	if ((r = audit_sweep(stage, rep->refs, rep->nrefs, &quiet, NULL)) ||
	    (r = blobs_settle(stage, rep)))
		return gerr_fail(r, err, errlen, "cannot settle the backup's "
				 "blobs: %s", gerr_str(r));
	if ((r = audit_blobs(stage, rep->refs, rep->nrefs, &rep->probs,
			     &rep->nprobs, &checked)))
		return gerr_fail(r, err, errlen, "cannot check the backup's "
				 "blobs: %s", gerr_str(r));
	if ((r = copy_identity(data_dir, stage, rep, err, errlen)))
		return r;
	rep->bytes += rep->db_bytes + rep->blob_bytes;
	return publish(dest, stage, rep, err, errlen);
}

int backup_write(const char *data_dir, const char *dest,
		 const struct backup_opts *o, struct backup_report *ret,
		 char *err, size_t errlen)
{
	struct backup_report rep = {0};
	struct placing p = {0};
	struct store *copy = NULL;
	char stage[PATH_MAX];
	double t0 = gclock_mono();
	int made = 0, r;

	if (!data_dir || !dest || !o || !ret)
		return gerr_fail(GERR_INVAL, err, errlen, "backup: missing "
				 "argument");
	if (strlen(data_dir) > BACKUP_PATH_MAX)
		return gerr_fail(GERR_TOOBIG, err, errlen, "the data directory's "
				 "path is longer than %d bytes", BACKUP_PATH_MAX);
	if ((r = prepare_dest(data_dir, dest, &made, err, errlen)))
		return r;
	p.copy = o->copy;
	/* dest is at most BACKUP_PATH_MAX bytes: no path below overflows. */
	pathf(stage, "%s/.partial", dest);
	if (mkdir(stage, 0700) != 0) {
		/* Another backup's stage, maybe: not ours to remove. */
		r = gerr_fail(gerr_from_errno(errno), err, errlen, "cannot "
			      "create %s: %s", stage, strerror(errno));
		if (made)
			rmdir(dest);
		return r;
	}
	if ((r = snapshot_and_blobs(data_dir, stage, o, &p, &rep, &copy,
				    err, errlen)) ||
	    (r = finish(data_dir, dest, stage, copy, o, &rep, err, errlen)))
		goto fail;
	free(p.missing);
	rep.linked = p.linked;
	rep.copied = p.copied;
	rep.seconds = gclock_mono() - t0;
	*ret = rep;
	return 0;
fail:
	free(p.missing);
	backup_report_clear(&rep);
	/* Nothing half written stays: the stage, what was moved up, and
	 * dest itself when this call made it. */
	remove_tree(stage);
	if (made)
		remove_tree(dest);
	else
		unpublish(dest);
	return r;
}

void backup_report_clear(struct backup_report *r)
{
	if (r) {
		store_lines_free(r->integrity, r->nintegrity);
		free(r->refs);
		free(r->probs);
		memset(r, 0, sizeof(*r));
	}
}
