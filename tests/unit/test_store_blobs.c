/* test_store_blobs.c - unit tests of daemon/store/store_blobs.c: the blobs rows
 * name, integrity checks (and the quick check store_open runs), and the
 * damage marks of migration 004 (fixture: store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "gerr.h"
#include "store_fx.h"

/* A hash-like name: 64 hex digits, all c. */
static const char *hex64(char c, char buf[65])
{
	memset(buf, c, 64);
	buf[64] = '\0';
	return buf;
}

static int has_ref(const struct store_blob_ref *a, size_t n, const char *hash,
		   int64_t job, int64_t lease, const char *where)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(a[i].hash, hash) == 0 && a[i].job_id == job &&
		    a[i].lease_id == lease && strcmp(a[i].where, where) == 0)
			return 1;
	return 0;
}

static void test_refs(void **state)
{
	struct fx *f = *state;
	struct store *st = f->st;
	struct store_blob_ref *refs = NULL;
	char a[65], b[65], c[65], d[65], e[65], g[65], params[300], spec[300];
	size_t n = 0;
	int64_t job, job2, w = add_worker(st, "w");
	struct store_lease l;
	char *old = NULL;

	/* An empty database names nothing. */
	assert_int_equal(store_blob_refs(st, 0, &refs, &n), 0);
	assert_int_equal(n, 0);
	free(refs);

	/* An input in params; digests of 64 hex digits are no name. */
	snprintf(params, sizeof(params), "{\"input\":\"%s\",\"digests\":\"%s\","
		 "\"n\":[\"%.63s\",\"%sX\"]}", hex64('a', a), hex64('9', g),
		 hex64('8', d), hex64('7', e));
	assert_int_equal(store_job_insert(st, "othello", params, 10, 1.0, &job),
			 0);
	job2 = add_job(st, "officers");
	/* A spec naming an earlier result (deep in the JSON), a checkpoint
	 * and a result. */
	snprintf(spec, sizeof(spec), "{\"from\":{\"state\":\"%s\"}}",
		 hex64('b', b));
	assert_int_equal(store_lease_insert_leased(st, job2, spec, 10, w,
						   100.0, 2.0, &l), 0);
	assert_int_equal(store_lease_set_checkpoint(st, l.id, l.epoch,
						    hex64('c', c), 5, 3.0,
						    &old), 0);
	assert_null(old);
	assert_int_equal(store_lease_set_result(st, l.id, l.epoch,
						hex64('d', d), 10, 4.0), 0);
	snprintf(spec, sizeof(spec), "{\"state\":\"%s\"}", hex64('e', e));
	assert_int_equal(store_job_set_answer(st, job2, spec, 10), 0);

	assert_int_equal(store_blob_refs(st, 0, &refs, &n), 0);
	assert_int_equal(n, 5);
	assert_true(has_ref(refs, n, a, job, 0, "params of job"));
	assert_true(has_ref(refs, n, b, job2, l.id, "spec of lease"));
	assert_true(has_ref(refs, n, c, job2, l.id, "checkpoint of lease"));
	assert_true(has_ref(refs, n, d, job2, l.id, "result of lease"));
	assert_true(has_ref(refs, n, e, job2, 0, "answer of job"));
	for (size_t i = 1; i < n; i++)
		assert_true(strcmp(refs[i - 1].hash, refs[i].hash) <= 0);
	free(refs);

	/* A verified part's note names blobs too. */
	assert_int_equal(store_lease_set_verified(st, l.id, l.epoch, 5.0), 0);
	snprintf(spec, sizeof(spec), "{\"slice\":\"%s\"}", hex64('f', g));
	assert_int_equal(store_part_add(st, job2, l.id, spec), 0);
	assert_int_equal(store_blob_refs(st, 0, &refs, &n), 0);
	assert_int_equal(n, 6);
	assert_true(has_ref(refs, n, g, job2, l.id, "note of lease"));
	free(refs);
	store_lease_clear(&l);
}

/* The sweep's listing also keeps 64-hex text in tables and columns the
 * named list does not know, but not in the event log. */
static void test_refs_everywhere(void **state)
{
	struct fx *f = *state;
	struct store_blob_ref *refs = NULL;
	char a[65], b[65], c[65], sql[400];
	size_t n = 0;
	int64_t job = add_job(f->st, "graveler");
	sqlite3 *db;

	assert_int_equal(store_event(f->st, 1.0, job, 0, 0, 0, "note",
				     hex64('c', c)), 0);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	snprintf(sql, sizeof(sql), "CREATE TABLE later (h TEXT, j TEXT, n INT);"
		 "INSERT INTO later VALUES ('%s', '{\"x\":[\"%s\"]}', 5)",
		 hex64('a', a), hex64('b', b));
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_blob_refs(f->st, 0, &refs, &n), 0);
	assert_int_equal(n, 0);
	free(refs);
	assert_int_equal(store_blob_refs(f->st, 1, &refs, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(refs[0].hash, a);
	assert_string_equal(refs[1].hash, b);
	assert_int_equal(refs[0].job_id, 0);
	free(refs);
}

static void test_damage(void **state)
{
	struct fx *f = *state;
	struct store *st = f->st;
	int64_t j1 = add_job(st, "graveler"), j2 = add_job(st, "graveler");
	char *reason = (char *)"x";
	struct store_damage dmg[2] = {
		{ .job_id = j1, .reason = "result of lease 1: missing",
		  .problems = 2 },
		{ .job_id = j2, .reason = "note of lease 3: corrupt",
		  .problems = 1 },
	};

	assert_int_equal(store_damage_get(st, j1, &reason), 0);
	assert_null(reason);
	assert_int_equal(store_damage_set(st, dmg, 2, 7.0), 0);
	assert_int_equal(store_damage_get(st, j1, &reason), 0);
	assert_string_equal(reason, "result of lease 1: missing");
	free(reason);
	/* Kept across a reopen. */
	reopen(f);
	st = f->st;
	assert_int_equal(store_damage_get(st, j2, &reason), 0);
	assert_string_equal(reason, "note of lease 3: corrupt");
	free(reason);
	/* A later check replaces every mark. */
	assert_int_equal(store_damage_set(st, dmg + 1, 1, 8.0), 0);
	assert_int_equal(store_damage_get(st, j1, &reason), 0);
	assert_null(reason);
	assert_int_equal(store_damage_set(st, NULL, 0, 9.0), 0);
	assert_int_equal(store_damage_get(st, j2, &reason), 0);
	assert_null(reason);
	/* Refused whole: a mark without a reason, a job that does not exist. */
	dmg[0].reason = NULL;
	assert_int_equal(store_damage_set(st, dmg, 2, 9.0), GERR_INVAL);
	dmg[0].reason = "r";
	dmg[1].job_id = 999;
	assert_int_equal(store_damage_set(st, dmg, 2, 9.0), GERR_NOTFOUND);
	assert_int_equal(store_damage_get(st, j1, &reason), 0);
	assert_null(reason);
}

/* Overwrite the leases table's root page of the closed database. */
static void damage_leases_page(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int page, root, fd;
	unsigned char buf[65536];

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)",
				      NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT (SELECT page_size FROM "
		"pragma_page_size), rootpage FROM sqlite_schema WHERE name = "
		"'leases'", -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	page = sqlite3_column_int(s, 0);
	root = sqlite3_column_int(s, 1);
	sqlite3_finalize(s);
	sqlite3_close(db);
	assert_true(page > 0 && page <= (int)sizeof(buf) && root > 1);
	for (int i = 0; i < page; i++)
		buf[i] = (unsigned char)(i * 37 + 11);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, (size_t)page,
				(off_t)(root - 1) * page), page);
	close(fd);
}

static void test_integrity(void **state)
{
	struct fx *f = *state;
	struct store *st = f->st;
	char **lines = NULL, err[512] = "";
	size_t n = 99;
	int64_t job = add_job(st, "graveler"), w = add_worker(st, "w");

	for (int i = 0; i < 20; i++) {
		struct store_lease l = add_lease(st, job, w, 10);
		store_lease_clear(&l);
	}
	for (int quick = 0; quick < 2; quick++) {
		assert_int_equal(store_integrity(st, quick, 10, &lines, &n), 0);
		assert_int_equal(n, 0);
		store_lines_free(lines, n);
	}
	assert_int_equal(store_integrity(st, 1, 0, &lines, &n), GERR_INVAL);
	store_close(f->st);
	f->st = NULL;

	/* A damaged page: store_open refuses, saying so. */
	damage_leases_page(f->path);
	assert_int_equal(store_open(f->path, &f->st, err, sizeof(err)),
			 GERR_CORRUPT);
	assert_null(f->st);
	assert_non_null(strstr(err, "damaged"));
	/* The full check, on a database opened around store_open, lists it. */
	{
		sqlite3 *db;
		sqlite3_stmt *s;
		int bad = 0;

		assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
		if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s,
				       NULL) == SQLITE_OK) {
			while (sqlite3_step(s) == SQLITE_ROW)
				bad |= strcmp((const char *)sqlite3_column_text(
					s, 0), "ok") != 0;
			sqlite3_finalize(s);
		} else {
			bad = 1;
		}
		sqlite3_close(db);
		assert_true(bad);
	}
}

FX_MAIN(T(test_refs), T(test_refs_everywhere), T(test_damage),
	T(test_integrity))
