/* test_blob_store.c - the on-disk blob store: put, get and remove by hash,
 * damaged files refused, bad names, I/O and permission errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blob.h"
#include "blob_fx.h"
#include "gerr.h"

struct tmpdir {
	char path[256];
};

static int setup_dir(void **state)
{
	struct tmpdir *t = malloc(sizeof(*t));

	snprintf(t->path, sizeof(t->path), "/tmp/gpud-test-blob-XXXXXX");
	if (!mkdtemp(t->path))
		return -1;
	*state = t;
	return 0;
}

static void rm_rf(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char sub[1024];

	if (!d) {
		unlink(path);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		rm_rf(sub);
	}
	closedir(d);
	chmod(path, 0700);
	rmdir(path);
}

static int teardown_dir(void **state)
{
	struct tmpdir *t = *state;

	rm_rf(t->path);
	free(t);
	return 0;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_store_put_get(void **state)
{
	struct tmpdir *t = *state;
	size_t len, got_len;
	uint8_t *b = make_blob(10000, &len), *got;
	char hash[BLOB_HASH_HEX], hash2[BLOB_HASH_HEX], want[BLOB_HASH_HEX];
	char path[512];
	struct stat st;

	assert_int_equal(blob_store_put(t->path, b, len, hash), 0);
	blob_hash_hex(b, len, want);
	assert_string_equal(hash, want);

	snprintf(path, sizeof(path), "%s/blobs", t->path);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/blobs/%.2s", t->path, hash);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(count_entries(path), 1); /* no temp left over */
	snprintf(path, sizeof(path), "%s/blobs/%.2s/%s", t->path, hash, hash);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, len);

	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len), 0);
	assert_int_equal(got_len, len);
	assert_memory_equal(got, b, len);
	free(got);

	/* Idempotent. */
	assert_int_equal(blob_store_put(t->path, b, len, hash2), 0);
	assert_string_equal(hash2, hash);
	snprintf(path, sizeof(path), "%s/blobs/%.2s", t->path, hash);
	assert_int_equal(count_entries(path), 1);

	/* Remove, then get reports not found; removing twice is fine. */
	assert_int_equal(blob_store_remove(t->path, hash), 0);
	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len),
			 GERR_NOTFOUND);
	assert_int_equal(blob_store_remove(t->path, hash), 0);
	free(b);
}

static void test_store_corrupt_file(void **state)
{
	struct tmpdir *t = *state;
	size_t len, got_len = 99;
	uint8_t *b = make_blob(4000, &len), *got = NULL;
	char hash[BLOB_HASH_HEX], path[512];
	FILE *f;

	assert_int_equal(blob_store_put(t->path, b, len, hash), 0);
	snprintf(path, sizeof(path), "%s/blobs/%.2s/%s", t->path, hash, hash);

	/* Flip one byte on disk. */
	f = fopen(path, "r+b");
	assert_non_null(f);
	fseek(f, 100, SEEK_SET);
	fputc(b[100] ^ 1, f);
	fclose(f);
	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len),
			 GERR_CORRUPT);
	assert_null(got);
	assert_int_equal(got_len, 99);

	/* Putting the blob again repairs the damaged copy. */
	assert_int_equal(blob_store_put(t->path, b, len, hash), 0);
	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len), 0);
	assert_memory_equal(got, b, len);
	free(got);
	got = NULL;

	/* Truncated on disk. */
	assert_int_equal(truncate(path, (off_t)len / 2), 0);
	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len),
			 GERR_CORRUPT);
	/* Empty file. */
	assert_int_equal(truncate(path, 0), 0);
	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len),
			 GERR_CORRUPT);
	/* Larger than any blob may be: refused before reading. */
	assert_int_equal(truncate(path, (off_t)(BLOB_MAX_RAW + 65)), 0);
	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len),
			 GERR_TOOBIG);
	/* A directory where the file should be. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(blob_store_get(t->path, hash, &got, &got_len),
			 GERR_CORRUPT);
	assert_int_equal(rmdir(path), 0);
	/* A symlink is not followed. */
	assert_int_equal(symlink("/etc/hostname", path), 0);
	assert_true(blob_store_get(t->path, hash, &got, &got_len) < 0);
	assert_null(got);
	unlink(path);
	free(b);
}

/* blob_store_check: the hash of the file, streamed. */
static void test_store_check(void **state)
{
	struct tmpdir *t = *state;
	size_t len;
	uint8_t *b = make_blob(3 << 20, &len);
	char hash[BLOB_HASH_HEX], path[512];
	FILE *f;

	assert_int_equal(blob_store_put(t->path, b, len, hash), 0);
	assert_int_equal(blob_store_check(t->path, hash), 0);
	snprintf(path, sizeof(path), "%s/blobs/%.2s/%s", t->path, hash, hash);
	/* The last byte: past the first 1 MiB read when the blob is larger. */
	assert_true(len > 64);
	f = fopen(path, "r+b");
	assert_non_null(f);
	fseek(f, (long)len - 1, SEEK_SET);
	fputc(b[len - 1] ^ 0x10, f);
	fclose(f);
	assert_int_equal(blob_store_check(t->path, hash), GERR_CORRUPT);
	assert_int_equal(truncate(path, 0), 0);
	assert_int_equal(blob_store_check(t->path, hash), GERR_CORRUPT);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(blob_store_check(t->path, hash), GERR_NOTFOUND);
	/* A symlink is not followed. */
	assert_int_equal(symlink("/etc/hostname", path), 0);
	assert_true(blob_store_check(t->path, hash) < 0);
	assert_int_not_equal(blob_store_check(t->path, hash), GERR_NOTFOUND);
	unlink(path);
	assert_int_equal(blob_store_check(t->path, "r1"), GERR_INVAL);
	assert_int_equal(blob_store_check(t->path, "../../../../etc/passwd"),
			 GERR_INVAL);
	free(b);
}

static void test_store_bad_names(void **state)
{
	struct tmpdir *t = *state;
	uint8_t *got = NULL;
	size_t len;
	char h[80];

	static const char *const bad[] = {
		"",
		"abc",
		"../../../../etc/passwd",
		"0E5751C026E543B2E8AB2EB06099DAA1D1E5DF47778F7787FAAB45CDF12FE3A8",
		"0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a",
		"0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a80",
		"0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3g8",
		"0e/751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(blob_store_get(t->path, bad[i], &got, &len),
				 GERR_INVAL);
		assert_int_equal(blob_store_remove(t->path, bad[i]),
				 GERR_INVAL);
	}
	assert_int_equal(blob_store_get(t->path, NULL, &got, &len), GERR_INVAL);
	assert_null(got);
	/* Well-formed but absent. */
	memset(h, 'a', 64);
	h[64] = 0;
	assert_int_equal(blob_store_get(t->path, h, &got, &len), GERR_NOTFOUND);
	assert_int_equal(blob_store_put(NULL, "x", 1, h), GERR_INVAL);
	assert_int_equal(blob_store_put(t->path, NULL, 1, h), GERR_INVAL);
}

static void test_store_errors(void **state)
{
	struct tmpdir *t = *state;
	char hash[BLOB_HASH_HEX] = "untouched", sub[512];

	/* Parent is a file: an I/O error, not a crash. */
	snprintf(sub, sizeof(sub), "%s/file", t->path);
	close(open(sub, O_CREAT | O_WRONLY, 0600));
	assert_int_equal(blob_store_put(sub, "x", 1, hash), GERR_IO);
	assert_string_equal(hash, "untouched");

	/* Read-only store directory: permission error (root bypasses). */
	if (geteuid() != 0) {
		snprintf(sub, sizeof(sub), "%s/ro", t->path);
		assert_int_equal(mkdir(sub, 0500), 0);
		assert_int_equal(blob_store_put(sub, "x", 1, hash), GERR_PERM);
		assert_string_equal(hash, "untouched");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_store_put_get, setup_dir,
						teardown_dir),
		cmocka_unit_test_setup_teardown(test_store_corrupt_file,
						setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_store_check, setup_dir,
						teardown_dir),
		cmocka_unit_test_setup_teardown(test_store_bad_names, setup_dir,
						teardown_dir),
		cmocka_unit_test_setup_teardown(test_store_errors, setup_dir,
						teardown_dir),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
