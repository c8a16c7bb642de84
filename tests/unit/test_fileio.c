/* test_fileio.c - common/fileio.c: a durable write creates and replaces
 * whole files with exactly the mode asked for, refuses a missing or
 * read-only directory with the code callers map to a message, and leaves
 * no temporary file behind when it fails; the create, fsync and mkdir
 * helpers around it. */
#define _GNU_SOURCE /* nftw's FTW_DEPTH, FTW_PHYS */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "gerr.h"
#include "unit_main.h"

struct fx {
	char dir[64];
	char path[128];   /* dir/f, the file most tests write */
	mode_t umask_was;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/gpud-test-fileio-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/f", f->dir);
	/* A strict umask: the modes written must not depend on it. */
	f->umask_was = umask(077);
	*state = f;
	return 0;
}

static int rm_one(const char *p, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	chmod(f->dir, 0700);
	umask(f->umask_was);
	assert_int_equal(nftw(f->dir, rm_one, 8, FTW_DEPTH | FTW_PHYS), 0);
	free(f);
	return 0;
}

/* The names in dir, sorted and joined with spaces. */
static const char *listing(const char *dir)
{
	static char out[512];
	struct dirent **e;
	int n = scandir(dir, &e, NULL, alphasort);

	out[0] = '\0';
	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		if (e[i]->d_name[0] != '.' || strlen(e[i]->d_name) > 2) {
			strcat(out, out[0] ? " " : "");
			strcat(out, e[i]->d_name);
		}
		free(e[i]);
	}
	free(e);
	return out;
}

static void assert_file(const char *path, const char *text, mode_t mode)
{
	char buf[256];
	struct stat sb;
	FILE *fp = fopen(path, "r");
	size_t n;

	assert_non_null(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	assert_string_equal(buf, text);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, mode);
}

static void test_write_new(void **state)
{
	struct fx *f = *state;

	assert_int_equal(fileio_write_atomic(f->path, "one\n", 4, 0644), 0);
	assert_file(f->path, "one\n", 0644);
	assert_string_equal(listing(f->dir), "f");
	/* An empty file is a file too. */
	assert_int_equal(fileio_write_atomic(f->path, NULL, 0, 0600), 0);
	assert_file(f->path, "", 0600);
}

/* A replace, never a write in place: a hard link to the old file keeps the
 * old bytes, and the mode is the new call's. */
static void test_overwrite(void **state)
{
	struct fx *f = *state;
	char old[160];

	snprintf(old, sizeof(old), "%s/old", f->dir);
	assert_int_equal(fileio_write_atomic(f->path, "first", 5, 0644), 0);
	assert_int_equal(link(f->path, old), 0);
	assert_int_equal(fileio_write_atomic(f->path, "second", 6, 0600), 0);
	assert_file(f->path, "second", 0600);
	assert_file(old, "first", 0644);
	assert_string_equal(listing(f->dir), "f old");
}

static void test_missing_dir(void **state)
{
	struct fx *f = *state;
	char path[160];

	snprintf(path, sizeof(path), "%s/no/f", f->dir);
	errno = 0;
	assert_int_equal(fileio_write_atomic(path, "x", 1, 0644), GERR_NOTFOUND);
	assert_int_equal(errno, ENOENT); /* kept for the caller's message */
	assert_string_equal(listing(f->dir), "");
}

/* The refusal a read-only directory gives: 0 when it is GERR_PERM with
 * errno EACCES and nothing was written. */
static int refused(const struct fx *f)
{
	errno = 0;
	if (fileio_write_atomic(f->path, "lost", 4, 0644) != GERR_PERM ||
	    errno != EACCES)
		return 1;
	return strcmp(listing(f->dir), "f") != 0;
}

static void test_readonly_dir(void **state)
{
	struct fx *f = *state;
	pid_t child;
	int st;

	assert_int_equal(fileio_write_atomic(f->path, "kept", 4, 0644), 0);
	if (geteuid() != 0) {
		assert_int_equal(chmod(f->dir, 0500), 0);
		assert_int_equal(refused(f), 0);
	} else {
		/* root writes anyway: refused as nobody, in a child. */
		assert_int_equal(chmod(f->dir, 0555), 0);
		child = fork();
		assert_true(child >= 0);
		if (child == 0)
			_exit(setgid(65534) || setuid(65534) ? 2 : refused(f));
		assert_int_equal(waitpid(child, &st, 0), child);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
	assert_int_equal(chmod(f->dir, 0700), 0);
	assert_file(f->path, "kept", 0644);
}

/* Writes half, then fails as a full disk would. */
static int fill_fails(int fd, void *arg)
{
	int r = fileio_write_all(fd, "partial", 7);

	(void)arg;
	if (r)
		return r;
	errno = ENOSPC;
	return GERR_NOSPACE;
}

static void test_fail_leaves_nothing(void **state)
{
	struct fx *f = *state;
	char tmpl[160], made[160];

	assert_int_equal(fileio_write_atomic(f->path, "kept", 4, 0644), 0);
	errno = 0;
	assert_int_equal(fileio_replace(f->path, NULL, 0644, fill_fails, NULL),
			 GERR_NOSPACE);
	assert_int_equal(errno, ENOSPC);
	snprintf(tmpl, sizeof(tmpl), "%s/.tmp-f-XXXXXX", f->dir);
	assert_int_equal(fileio_replace(f->path, tmpl, 0644, fill_fails, NULL),
			 GERR_NOSPACE);
	assert_file(f->path, "kept", 0644);
	assert_string_equal(listing(f->dir), "f");
	/* fileio_create removes the file it made. */
	snprintf(made, sizeof(made), "%s/made", f->dir);
	assert_int_equal(fileio_create(made, 0600, fill_fails, NULL), GERR_NOSPACE);
	assert_string_equal(listing(f->dir), "f");
}

/* A caller's temporary name: used, and gone after the rename. */
static void test_template(void **state)
{
	struct fx *f = *state;
	struct fileio_buf b = { "blob", 4 };
	char tmpl[160], bad[160];

	snprintf(tmpl, sizeof(tmpl), "%s/.tmp-f-XXXXXX", f->dir);
	assert_int_equal(fileio_replace(f->path, tmpl, 0600, fileio_fill_buf, &b), 0);
	assert_file(f->path, "blob", 0600);
	assert_string_equal(listing(f->dir), "f");
	/* Not a mkostemp template. */
	snprintf(bad, sizeof(bad), "%s/.tmp-f", f->dir);
	assert_int_equal(fileio_replace(f->path, bad, 0600, fileio_fill_buf, &b),
			 GERR_INVAL);
}

static void test_bad_args(void **state)
{
	struct fx *f = *state;
	char *longp = malloc(PATH_MAX + 16);

	assert_non_null(longp);
	assert_int_equal(fileio_write_atomic(NULL, "x", 1, 0644), GERR_INVAL);
	assert_int_equal(fileio_write_atomic("", "x", 1, 0644), GERR_INVAL);
	assert_int_equal(fileio_write_atomic(f->path, NULL, 1, 0644), GERR_INVAL);
	assert_int_equal(fileio_replace(f->path, NULL, 0644, NULL, NULL), GERR_INVAL);
	assert_int_equal(fileio_create(f->path, 0644, NULL, NULL), GERR_INVAL);
	memset(longp, 'a', PATH_MAX + 8);
	longp[0] = '/';
	longp[PATH_MAX + 6] = '/'; /* a parent too long for PATH_MAX */
	longp[PATH_MAX + 8] = '\0';
	assert_int_equal(fileio_write_atomic(longp, "x", 1, 0644), GERR_INVAL);
	assert_int_equal(fileio_fsync_parent(longp), GERR_INVAL);
	free(longp);
	assert_string_equal(listing(f->dir), "");
}

/* O_EXCL: what is there stays untouched; a link is not followed. */
static void test_create(void **state)
{
	struct fx *f = *state;
	struct fileio_buf b = { "new", 3 };
	char link_path[160];

	assert_int_equal(fileio_create(f->path, 0640, fileio_fill_buf, &b), 0);
	assert_file(f->path, "new", 0640);
	errno = 0;
	assert_int_equal(fileio_create(f->path, 0600, fileio_fill_buf, &b), GERR_IO);
	assert_int_equal(errno, EEXIST);
	assert_file(f->path, "new", 0640);
	snprintf(link_path, sizeof(link_path), "%s/link", f->dir);
	assert_int_equal(symlink("elsewhere", link_path), 0);
	assert_int_not_equal(fileio_create(link_path, 0600, fileio_fill_buf, &b), 0);
	assert_string_equal(listing(f->dir), "f link");
}

static void test_fsync(void **state)
{
	struct fx *f = *state;
	char missing[160];

	assert_int_equal(fileio_write_atomic(f->path, "x", 1, 0600), 0);
	assert_int_equal(fileio_fsync_path(f->path), 0);
	assert_int_equal(fileio_fsync_path(f->dir), 0);
	assert_int_equal(fileio_fsync_parent(f->path), 0);
	assert_int_equal(fileio_fsync_parent("f"), 0);  /* "." */
	assert_int_equal(fileio_fsync_parent("/f"), 0); /* "/" */
	snprintf(missing, sizeof(missing), "%s/no/f", f->dir);
	assert_int_equal(fileio_fsync_path(missing), GERR_NOTFOUND);
	assert_int_equal(fileio_fsync_parent(missing), GERR_NOTFOUND);
}

static void test_mkdir(void **state)
{
	struct fx *f = *state;
	char sub[160], deep[200];
	struct stat sb;

	snprintf(sub, sizeof(sub), "%s/sub", f->dir);
	assert_int_equal(fileio_mkdir(sub, 0750), 0);
	assert_int_equal(stat(sub, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0700); /* 0750 under umask 077 */
	assert_int_equal(fileio_mkdir(sub, 0750), 0);
	assert_int_equal(fileio_write_atomic(f->path, "x", 1, 0600), 0);
	assert_int_equal(fileio_mkdir(f->path, 0700), GERR_IO);
	snprintf(deep, sizeof(deep), "%s/no/sub", f->dir);
	assert_int_equal(fileio_mkdir(deep, 0700), GERR_NOTFOUND);
}

/* A full disk is GERR_NOSPACE, as callers tell the operator. */
static void test_write_all(void **state)
{
	char big[1 << 16];
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC), p[2];

	(void)state;
	if (fd < 0)
		skip();
	assert_int_equal(fileio_write_all(fd, "x", 1), GERR_NOSPACE);
	close(fd);
	assert_int_equal(fileio_write_all(-1, "x", 1), GERR_IO);
	/* Nothing to write is done at once. */
	assert_int_equal(fileio_write_all(-1, NULL, 0), 0);
	assert_int_equal(pipe(p), 0);
	memset(big, 'z', sizeof(big));
	assert_int_equal(fileio_write_all(p[1], big, 1000), 0);
	assert_int_equal(read(p[0], big, sizeof(big)), 1000);
	close(p[0]);
	close(p[1]);
}

/* Two threads replacing one file: each write whole, no temporary left. */
struct racer {
	const char *path;
	char byte;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	char buf[4096];

	memset(buf, r->byte, sizeof(buf));
	for (int i = 0; i < 50; i++)
		if (fileio_write_atomic(r->path, buf, sizeof(buf), 0600))
			return arg;
	return NULL;
}

static void test_concurrent(void **state)
{
	struct fx *f = *state;
	struct racer a = { f->path, 'a' }, b = { f->path, 'b' };
	pthread_t ta, tb;
	void *ra, *rb;
	char buf[4097];
	FILE *fp;

	assert_int_equal(pthread_create(&ta, NULL, race, &a), 0);
	assert_int_equal(pthread_create(&tb, NULL, race, &b), 0);
	assert_int_equal(pthread_join(ta, &ra), 0);
	assert_int_equal(pthread_join(tb, &rb), 0);
	assert_null(ra);
	assert_null(rb);
	assert_non_null(fp = fopen(f->path, "r"));
	assert_int_equal(fread(buf, 1, sizeof(buf), fp), 4096);
	fclose(fp);
	for (int i = 1; i < 4096; i++)
		assert_int_equal(buf[i], buf[0]);
	assert_string_equal(listing(f->dir), "f");
}

/* Every test but one on its own fresh directory. */
#define FX(test) cmocka_unit_test_setup_teardown(test, fx_setup, fx_teardown)

UNIT_MAIN(FX(test_write_new),
	FX(test_overwrite),
	FX(test_missing_dir),
	FX(test_readonly_dir),
	FX(test_fail_leaves_nothing),
	FX(test_template),
	FX(test_bad_args),
	FX(test_create),
	FX(test_fsync),
	FX(test_mkdir),
	cmocka_unit_test(test_write_all),
	FX(test_concurrent))
