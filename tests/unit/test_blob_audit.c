/* test_blob_audit.c - daemon/blob_audit.c: the start-up sweep removes
 * temporary files and blobs no reference names (and nothing else), and the
 * check pass finds missing, corrupt and misnamed blobs, once per
 * reference; the digests' findings in words, after lines already there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sys/stat.h>
#include <unistd.h>

#include "blob.h"
#include "blob_audit.h"
#include "gerr.h"
#include "unit_main.h"

struct fx {
	char dir[64];
	char h[3][BLOB_HASH_HEX];   /* stored blobs */
};

static const struct glog quiet = { .prog = "test", .level = GLOG_ERROR };

static void put(struct fx *f, int i)
{
	char data[32];

	snprintf(data, sizeof(data), "blob number %d", i);
	assert_int_equal(blob_store_put(f->dir, data, strlen(data), f->h[i]), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/gpud-test-audit-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	for (int i = 0; i < 3; i++)
		put(f, i);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static int exists(const struct fx *f, const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/blobs/%.2s/%s", f->dir, name, name);
	return access(p, F_OK) == 0;
}

/* refs naming hashes (sorted as store_blob_refs sorts them). */
static struct store_blob_ref *refs_of(const char *const *hashes, size_t n)
{
	struct store_blob_ref *r = calloc(n + 1, sizeof(*r));

	for (size_t i = 0; i < n; i++) {
		snprintf(r[i].hash, sizeof(r[i].hash), "%s", hashes[i]);
		r[i].job_id = (int64_t)i + 1;
		r[i].lease_id = (int64_t)i + 10;
		r[i].where = "result of lease";
	}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(r[j - 1].hash, r[j].hash) > 0; j--) {
			struct store_blob_ref t = r[j];
			r[j] = r[j - 1];
			r[j - 1] = t;
		}
	return r;
}

static void test_sweep(void **state)
{
	struct fx *f = *state;
	const char *keep[] = { f->h[0], f->h[2] };
	struct store_blob_ref *refs = refs_of(keep, 2);
	struct audit_sweep s;
	char tmp[256], other[256];
	FILE *fp;

	snprintf(tmp, sizeof(tmp), "%s/blobs/%.2s/.tmp-%s-00", f->dir, f->h[0], f->h[0]);
	snprintf(other, sizeof(other), "%s/blobs/%.2s/notes.txt", f->dir, f->h[0]);
	assert_non_null(fp = fopen(tmp, "w"));
	fclose(fp);
	assert_non_null(fp = fopen(other, "w"));
	fclose(fp);
	/* An older gpud's fixed name, and fileio's (common/fileio.h). */
	static const char *const temps[] = {
		"gpud.addr.tmp", "gpud.addr.tmp-a1B2c3", "gpud.http.tmp-x9Y8z7",
		"local-worker.token.tmp-q1W2e3",
	};
	char addr_tmp[4][256], mine[256];
	for (size_t i = 0; i < 4; i++) {
		snprintf(addr_tmp[i], sizeof(addr_tmp[i]), "%s/%s", f->dir, temps[i]);
		assert_non_null(fp = fopen(addr_tmp[i], "w"));
		fclose(fp);
	}
	snprintf(mine, sizeof(mine), "%s/my.tmp", f->dir);
	assert_non_null(fp = fopen(mine, "w"));
	fclose(fp);
	assert_int_equal(audit_sweep(f->dir, refs, 2, &quiet, &s), 0);
	assert_int_equal(s.temps, 5);
	for (size_t i = 0; i < 4; i++)
		assert_int_not_equal(access(addr_tmp[i], F_OK), 0);
	assert_int_equal(access(mine, F_OK), 0);
	assert_int_equal(s.orphans, 1);
	assert_int_equal(s.kept, 2);
	assert_true(s.bytes > 0);
	assert_true(exists(f, f->h[0]) && exists(f, f->h[2]));
	assert_false(exists(f, f->h[1]));
	assert_int_not_equal(access(tmp, F_OK), 0);
	assert_int_equal(access(other, F_OK), 0); /* not a blob's name */
	/* Nothing named: every blob goes; no blobs directory: nothing to do. */
	assert_int_equal(audit_sweep(f->dir, NULL, 0, &quiet, &s), 0);
	assert_int_equal(s.orphans, 2);
	assert_int_equal(audit_sweep("/nonexistent-gpud-dir", NULL, 0, &quiet, &s), 0);
	assert_int_equal(s.orphans + s.temps + s.kept, 0);
	free(refs);
}

static void test_audit(void **state)
{
	struct fx *f = *state;
	const char *named[] = { f->h[0], f->h[1], f->h[1], f->h[2], "r1" };
	struct store_blob_ref *refs = refs_of(named, 5);
	struct audit_problem *p = NULL;
	size_t np = 9, checked = 0;
	char path[256];
	FILE *fp;

	assert_int_equal(audit_blobs(f->dir, refs, 5, &p, &np, &checked), 0);
	assert_int_equal(checked, 4);
	assert_int_equal(np, 1); /* "r1" is no blob name */
	assert_string_equal(p[0].ref->hash, "r1");
	assert_int_equal(p[0].rc, GERR_INVAL);
	free(p);

	/* h[1] (named twice) missing, h[2] corrupt. */
	snprintf(path, sizeof(path), "%s/blobs/%.2s/%s", f->dir, f->h[1], f->h[1]);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/blobs/%.2s/%s", f->dir, f->h[2], f->h[2]);
	assert_non_null(fp = fopen(path, "a"));
	fputc('x', fp);
	fclose(fp);
	assert_int_equal(audit_missing(f->dir, refs, 5), 1);
	assert_int_equal(audit_blobs(f->dir, refs, 5, &p, &np, &checked), 0);
	assert_int_equal(np, 4);
	int missing = 0, corrupt = 0;
	for (size_t i = 0; i < np; i++) {
		missing += p[i].rc == GERR_NOTFOUND && !strcmp(p[i].ref->hash, f->h[1]);
		corrupt += p[i].rc == GERR_CORRUPT && !strcmp(p[i].ref->hash, f->h[2]);
	}
	assert_int_equal(missing, 2); /* one per reference: both jobs named */
	assert_int_equal(corrupt, 1);
	assert_string_equal(audit_problem_name(GERR_NOTFOUND), "missing");
	free(p);
	free(refs);
}

static void test_digest_lines(void **state)
{
	const struct store_digest_bad bad[] = {
		{ .job_id = 3, .lease_id = 0, .seq = -1 },
		{ .job_id = 4, .lease_id = 9, .seq = 2 },
	};
	char **lines = calloc(1, sizeof(*lines));
	size_t n = 1;

	(void)state;
	assert_non_null(lines);
	assert_non_null(lines[0] = strdup("row 1 missing from index"));
	assert_int_equal(audit_digest_lines(bad, 0, 0, &lines, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(audit_digest_lines(bad, 2, 7, &lines, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(lines[0], "row 1 missing from index");
	assert_string_equal(lines[1], "job 3: its stored answer does not match "
			    "its digest (damaged)");
	assert_string_equal(lines[2], "job 4: part 2 (lease 9) does not match "
			    "its digest (damaged)");
	assert_non_null(strstr(lines[3], "and 5 more"));
	store_lines_free(lines, n);
}

UNIT_MAIN(cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
	cmocka_unit_test_setup_teardown(test_audit, setup, teardown),
	cmocka_unit_test(test_digest_lines))
