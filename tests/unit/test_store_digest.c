/* test_store_digest.c - the digests of migration 015 (store.h): answers
 * and parts carry one written with them; a value changed in place outside
 * gpud is named by store_digest_audit, refused by store_part_get, and never
 * merged over by store_job_set_answer or store_job_extend; a database from
 * before 015 gets digests for the rows it has. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "store_fx.h"

/* Run sql on f's database through a connection of its own, as the
 * sqlite3 command-line tool would. */
static void edit(struct fx *f, const char *sql)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_changes(db), 1);
	sqlite3_close(db);
}

static size_t audit(struct fx *f, struct store_digest_bad **ret)
{
	size_t n = 99;
	uint64_t total = 99;

	assert_int_equal(store_digest_audit(f->st, 10, ret, &n, &total), 0);
	assert_int_equal(total, n);
	return n;
}

/* A job with two merged parts and an answer. */
static int64_t merged_job(struct fx *f, int64_t *ret_lease)
{
	int64_t job = add_job(f->st, "graveler");
	int64_t w = add_worker(f->st, "w1");
	int64_t a = add_verified_lease(f->st, job, w, 10);
	int64_t b = add_verified_lease(f->st, job, w, 20);

	assert_int_equal(store_part_add(f->st, job, a, "{\"max\":17}"), 0);
	assert_int_equal(store_job_set_answer(f->st, job, "{\"max\":17}", 10),
			 0);
	assert_int_equal(store_part_add(f->st, job, b, NULL), 0);
	assert_int_equal(store_job_set_answer(f->st, job, "{\"max\":18}", 30),
			 0);
	*ret_lease = b;
	return job;
}

static void test_sound(void **state)
{
	struct fx *f = *state;
	struct store_digest_bad *bad = NULL;
	struct store_part p;
	int64_t lease;
	int64_t job = merged_job(f, &lease);

	assert_int_equal(audit(f, &bad), 0);
	free(bad);
	assert_int_equal(store_job_digest_check(f->st, job), 0);
	assert_int_equal(store_part_get(f->st, job, 1, &p), 0);
	assert_int_equal(p.lease_id, lease);
	store_part_clear(&p);
	/* Extending rewrites it with the params. */
	assert_int_equal(store_job_extend(f->st, job, "{\"n\":200}", 200), 0);
	assert_int_equal(store_job_digest_check(f->st, job), 0);
	reopen(f);
	assert_int_equal(audit(f, &bad), 0);
	free(bad);
	assert_int_equal(store_job_digest_check(f->st, job + 1), GERR_NOTFOUND);
	assert_int_equal(store_digest_audit(f->st, 0, &bad, NULL, NULL),
			 GERR_INVAL);
}

/* One digit of the answer changed: named, and never merged over. */
static void test_answer_damaged(void **state)
{
	struct fx *f = *state;
	struct store_digest_bad *bad = NULL;
	struct store_job j;
	int64_t lease;
	int64_t job = merged_job(f, &lease);
	int64_t other = add_job(f->st, "graveler");

	edit(f, "UPDATE jobs SET answer = '{\"max\":19}' WHERE id = 1");
	assert_int_equal(job, 1);
	assert_int_equal(audit(f, &bad), 1);
	assert_int_equal(bad[0].job_id, job);
	assert_int_equal(bad[0].seq, -1);
	assert_int_equal(bad[0].lease_id, 0);
	free(bad);
	assert_int_equal(store_job_digest_check(f->st, job), GERR_CORRUPT);
	assert_non_null(strstr(store_errmsg(f->st), "job 1"));
	assert_non_null(strstr(store_errmsg(f->st), "digest"));
	assert_int_equal(store_job_digest_check(f->st, other), 0);
	assert_int_equal(store_job_set_answer(f->st, job, "{\"max\":20}", 40),
			 GERR_CORRUPT);
	assert_int_equal(store_job_extend(f->st, job, "{\"n\":300}", 300),
			 GERR_CORRUPT);
	/* Nothing written over it: the damage stays visible. */
	assert_int_equal(store_job_get(f->st, job, &j), 0);
	assert_string_equal(j.answer, "{\"max\":19}");
	assert_string_equal(j.params, "{\"n\":100}");
	assert_int_equal(j.units_verified, 30);
	store_job_clear(&j);
	/* The verified units and the params are covered too. */
	edit(f, "UPDATE jobs SET params = '{\"n\":101}' WHERE id = 2");
	assert_int_equal(store_job_digest_check(f->st, other), GERR_CORRUPT);
	assert_int_equal(audit(f, &bad), 2);
	free(bad);
}

/* One digit of a part (its note, or its lease's spec) changed: named, and
 * refused by every reader of the part. */
static void test_part_damaged(void **state)
{
	struct fx *f = *state;
	struct store_digest_bad *bad = NULL;
	struct store_part p;
	uint64_t n = 0;
	int64_t lease;
	int64_t job = merged_job(f, &lease);
	char sql[200];

	edit(f, "UPDATE parts SET note = '{\"max\":16}' WHERE seq = 0");
	assert_int_equal(audit(f, &bad), 1);
	assert_int_equal(bad[0].job_id, job);
	assert_int_equal(bad[0].seq, 0);
	assert_int_equal(bad[0].lease_id, lease - 1);
	free(bad);
	assert_int_equal(store_part_get(f->st, job, 0, &p), GERR_CORRUPT);
	assert_non_null(strstr(store_errmsg(f->st), "part 0"));
	assert_int_equal(store_part_get(f->st, job, 1, &p), 0);
	store_part_clear(&p);
	snprintf(sql, sizeof(sql), "UPDATE leases SET units = 21 WHERE id = "
		 "%lld", (long long)lease);
	edit(f, sql);
	assert_int_equal(store_part_get(f->st, job, 1, &p), GERR_CORRUPT);
	assert_int_equal(audit(f, &bad), 2);
	assert_int_equal(bad[1].seq, 1);
	assert_int_equal(bad[1].lease_id, lease);
	free(bad);
	/* The answer itself is sound, and the part count is as it was. */
	assert_int_equal(store_job_digest_check(f->st, job), 0);
	assert_int_equal(store_part_count(f->st, job, &n), 0);
	assert_int_equal(n, 2);
	/* A digest removed is damage too. */
	edit(f, "UPDATE jobs SET digest = NULL WHERE id = 1");
	assert_int_equal(store_job_digest_check(f->st, job), GERR_CORRUPT);
}

/* A database from before 015: its rows get their digests, sound. */
static void test_migration(void **state)
{
	struct fx *f = *state;
	struct store_digest_bad *bad = NULL;
	struct store_part p;
	int64_t job, w, lease;

	open_old(f, 13);
	job = add_job(f->st, "graveler");
	w = add_worker(f->st, "w1");
	lease = add_verified_lease(f->st, job, w, 10);
	assert_int_equal(store_part_add(f->st, job, lease, "{\"a\":1}"), 0);
	assert_int_equal(store_job_set_answer(f->st, job, "{\"a\":1}", 10), 0);
	reopen(f);
	assert_int_equal(audit(f, &bad), 0);
	free(bad);
	assert_int_equal(store_part_get(f->st, job, 0, &p), 0);
	store_part_clear(&p);
	assert_int_equal(store_job_digest_check(f->st, job), 0);
}

FX_MAIN(T(test_sound), T(test_answer_damaged), T(test_part_damaged),
	T(test_migration))
