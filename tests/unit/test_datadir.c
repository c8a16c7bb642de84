/* test_datadir.c - daemon/datadir.c: the lock names its holder and holds
 * with gpud.lock deleted, a world-writable directory is refused, a missing
 * or empty database beside old blobs or beside gpud.key is refused unless
 * init (which moves the blobs aside and keeps the key), the write probe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <glob.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blob.h"
#include "datadir.h"
#include "gerr.h"
#include "unit_main.h"

static const struct glog quiet = { .prog = "test", .level = GLOG_ERROR };

static int setup(void **state)
{
	char tmpl[] = "/tmp/gpud-test-datadir-XXXXXX";

	*state = mkdtemp(tmpl) ? strdup(tmpl) : NULL;
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (char *)*state);
	assert_int_equal(system(cmd), 0);
	free(*state);
	return 0;
}

static void test_mode(void **state)
{
	const char *dir = *state;
	char err[512], file[128];

	assert_int_equal(datadir_check_mode(dir, err, sizeof(err)), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(datadir_check_mode(dir, err, sizeof(err)), GERR_PERM);
	assert_non_null(strstr(err, "chmod 700"));
	assert_int_equal(chmod(dir, 0770), 0); /* a group may share it */
	assert_int_equal(datadir_check_mode(dir, err, sizeof(err)), 0);
	snprintf(file, sizeof(file), "%s/f", dir);
	fclose(fopen(file, "w"));
	assert_int_equal(datadir_check_mode(file, err, sizeof(err)), GERR_INVAL);
}

static void test_lock(void **state)
{
	const char *dir = *state;
	char err[512], want[64];
	int fd = -1, fd2 = -1, st;
	pid_t child;

	assert_int_equal(datadir_lock(dir, &fd, err, sizeof(err)), 0);
	/* flock is per open file: another process is refused, named. */
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int r = datadir_lock(dir, &fd2, err, sizeof(err));
		snprintf(want, sizeof(want), "(pid %ld)", (long)getppid());
		_exit(r == GERR_STATE && strstr(err, want) ? 0 : 1);
	}
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* The lock is the directory's: gpud.lock deleted frees nothing, and
	 * the refused one does not make it again. */
	snprintf(want, sizeof(want), "%s/gpud.lock", dir);
	assert_int_equal(unlink(want), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int r = datadir_lock(dir, &fd2, err, sizeof(err));
		_exit(r == GERR_STATE && strstr(err, "another gpud") &&
		      access(want, F_OK) != 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(fd);
	assert_int_equal(datadir_lock(dir, &fd2, err, sizeof(err)), 0);
	assert_int_equal(access(want, F_OK), 0); /* names the new holder */
	close(fd2);
}

/* gpud.key without a database: the database was lost, tokens and all. */
static void test_fresh_key(void **state)
{
	const char *dir = *state;
	char err[1024], key[128], db[128];
	FILE *f;

	snprintf(key, sizeof(key), "%s/gpud.key", dir);
	snprintf(db, sizeof(db), "%s/gpud.db", dir);
	assert_non_null(f = fopen(key, "w"));
	fclose(f);
	assert_int_equal(datadir_check_fresh(dir, 0, &quiet, err, sizeof(err)),
			 GERR_STATE);
	assert_non_null(strstr(err, "gpud.db is missing"));
	assert_non_null(strstr(err, "gpud.key"));
	assert_non_null(strstr(err, "--init"));
	assert_non_null(strstr(err, "backup"));
	assert_int_not_equal(access(db, F_OK), 0);
	/* On purpose: init keeps the key. */
	assert_int_equal(datadir_check_fresh(dir, 1, &quiet, err, sizeof(err)), 0);
	assert_int_equal(access(key, F_OK), 0);
	/* Or the key removed: a first start. */
	assert_int_equal(unlink(key), 0);
	assert_int_equal(datadir_check_fresh(dir, 0, &quiet, err, sizeof(err)), 0);
}

static void test_fresh(void **state)
{
	const char *dir = *state;
	char err[1024], db[128], hash[BLOB_HASH_HEX], moved[256];
	glob_t g;
	FILE *f;

	/* An empty directory: the first start. */
	assert_int_equal(datadir_check_fresh(dir, 0, &quiet, err, sizeof(err)), 0);
	assert_int_equal(blob_store_put(dir, "x", 1, hash), 0);
	/* Blobs and no database: refused, saying what to do. */
	assert_int_equal(datadir_check_fresh(dir, 0, &quiet, err, sizeof(err)),
			 GERR_STATE);
	assert_non_null(strstr(err, "missing"));
	assert_non_null(strstr(err, "--init"));
	/* An empty database file is no database either. */
	snprintf(db, sizeof(db), "%s/gpud.db", dir);
	assert_non_null(f = fopen(db, "w"));
	fclose(f);
	assert_int_equal(datadir_check_fresh(dir, 0, &quiet, err, sizeof(err)),
			 GERR_STATE);
	assert_non_null(strstr(err, "empty"));
	/* --init moves the blobs aside, keeping them. */
	assert_int_equal(datadir_check_fresh(dir, 1, &quiet, err, sizeof(err)), 0);
	snprintf(moved, sizeof(moved), "%s/blobs.before-init-*/%.2s/%s", dir, hash, hash);
	assert_int_equal(glob(moved, 0, NULL, &g), 0);
	assert_int_equal(g.gl_pathc, 1);
	globfree(&g);
	assert_int_equal(datadir_check_fresh(dir, 0, &quiet, err, sizeof(err)), 0);
	/* A database with content passes, with or without init. */
	assert_int_equal(blob_store_put(dir, "y", 1, hash), 0);
	assert_non_null(f = fopen(db, "w"));
	fputs("SQLite format 3", f);
	fclose(f);
	assert_int_equal(datadir_check_fresh(dir, 0, &quiet, err, sizeof(err)), 0);
	assert_int_equal(datadir_check_fresh(dir, 1, &quiet, err, sizeof(err)), 0);
}

static void test_probe(void **state)
{
	const char *dir = *state;
	char hash[BLOB_HASH_HEX];

	char stale[128];
	glob_t g;

	assert_int_equal(datadir_probe(dir), 0);
	assert_int_equal(blob_store_put(dir, "x", 1, hash), 0);
	/* One a crash left under this pid is replaced, not an error. */
	snprintf(stale, sizeof(stale), "%s/.write-probe-%ld", dir, (long)getpid());
	fclose(fopen(stale, "w"));
	assert_int_equal(datadir_probe(dir), 0);
	assert_int_not_equal(access(stale, F_OK), 0);
	snprintf(stale, sizeof(stale), "%s/*/.write-probe-*", dir);
	assert_int_equal(glob(stale, 0, NULL, &g), GLOB_NOMATCH);
	globfree(&g);
	assert_int_not_equal(datadir_probe("/nonexistent-gpud-dir"), 0);
}

/* Each test in a fresh directory. */
#define DIR_TEST(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

UNIT_MAIN(DIR_TEST(test_mode),
	DIR_TEST(test_lock),
	DIR_TEST(test_fresh),
	DIR_TEST(test_fresh_key),
	DIR_TEST(test_probe))
