/* test_store.c - unit tests of the store's core (daemon/store/store_open.c,
 * store_tx.c, store_exec.c): open, migrations, transactions, durability.
 * Real database files in a fresh temporary directory per test (store_fx.h);
 * times are injected (no clock). The tables' tests are in test_store_*.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gerr.h"
#include "store_fx.h"
#include "store_test.h"

/* Patch a 4-byte big-endian field of the closed database's header. */
static void patch_header(const char *path, off_t off, uint32_t v)
{
	unsigned char b[4] = { v >> 24, v >> 16, v >> 8, v };
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, b, 4, off), 4);
	assert_int_equal(close(fd), 0);
}

/* dir/ro_empty (0555), dir/ro_hasdb (0555, holds a database), and
 * dir/ro_file/gpud.db (a database file 0444 in a writable directory). */
static void make_readonly_tree(const char *dir)
{
	static const char *const sub[] = { "ro_empty", "ro_hasdb", "ro_file" };
	char p[200], err[256];
	struct store *st;

	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, sub[i]);
		assert_int_equal(mkdir(p, 0755), 0);
		if (i > 0) {
			snprintf(p, sizeof(p), "%s/%s/gpud.db", dir, sub[i]);
			assert_int_equal(store_open(p, &st, err, sizeof(err)),
					 0);
			store_close(st);
			if (geteuid() == 0)
				assert_int_equal(chown(p, 65534, 65534), 0);
		}
		snprintf(p, sizeof(p), "%s/%s", dir, sub[i]);
		if (geteuid() == 0)
			assert_int_equal(chown(p, 65534, 65534), 0);
		if (i < 2)
			assert_int_equal(chmod(p, 0555), 0);
	}
	snprintf(p, sizeof(p), "%s/ro_file/gpud.db", dir);
	assert_int_equal(chmod(p, 0444), 0);
	assert_int_equal(chmod(dir, 0755), 0);
}

/* Runs unprivileged; 0 or the line of the first failed check (no cmocka
 * here: it may run in a child process). */
static int readonly_checks(const char *dir)
{
	static const char *const sub[] = { "ro_empty", "ro_hasdb", "ro_file" };
	char p[200], err[512];

	for (int i = 0; i < 3; i++) {
		struct store *st = NULL;
		int r;

		snprintf(p, sizeof(p), "%s/%s/gpud.db", dir, sub[i]);
		err[0] = 0;
		r = store_open(p, &st, err, sizeof(err));
		if (r != GERR_PERM || st) {
			fprintf(stderr, "%s: %d %s\n", p, r, err);
			store_close(st);
			return __LINE__;
		}
		if (!strstr(err, "not writable") || !strstr(err, p)) {
			fprintf(stderr, "%s: message: %s\n", p, err);
			return __LINE__;
		}
	}
	return 0;
}

/* ---- open and migrations ---- */

static void test_open_fresh_and_reopen(void **state)
{
	struct fx *f = *state;
	struct store_job *jobs;
	struct stat sb;
	size_t n;
	int64_t id = add_job(f->st, "graveler");

	/* Private: it holds token keys. */
	assert_int_equal(stat(f->path, &sb), 0);
	assert_int_equal(sb.st_mode & 077, 0);

	/* Reopening applies nothing twice and keeps the data. */
	reopen(f);
	reopen(f);
	assert_int_equal(store_job_list(f->st, &jobs, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(jobs[0].id, id);
	store_job_free_array(jobs, n);
	assert_int_equal(add_job(f->st, "graveler"), id + 1);
	store_close(NULL); /* NULL-safe */
}

/* The fixture's database with the big-endian header field at off set to
 * v is refused by store_open with want; the message is left in err. */
static void open_patched(struct fx *f, off_t off, uint32_t v, int want,
			 char *err, size_t errlen)
{
	struct store *st2 = NULL;

	store_close(f->st);
	f->st = NULL;
	patch_header(f->path, off, v);
	assert_int_equal(store_open(f->path, &st2, err, errlen), want);
	assert_null(st2);
}

static void test_open_refuses_newer_schema(void **state)
{
	char err[256] = "";

	open_patched(*state, 60, 999, GERR_UNSUPPORTED, err, sizeof(err));
	assert_non_null(strstr(err, "newer")); /* user_version */
	assert_non_null(strstr(err, "999"));
}

static void test_open_refuses_foreign_db(void **state)
{
	char err[256] = "";

	open_patched(*state, 68, 0x12345678, GERR_CORRUPT, err, sizeof(err));
	assert_non_null(strstr(err, "not a gpud database")); /* application_id */
}

static void test_open_not_a_database(void **state)
{
	struct fx *f = *state;
	struct store *st2 = NULL;
	char path[160], err[256] = "";
	char junk[4096];
	FILE *fp;

	memset(junk, 'x', sizeof(junk));
	snprintf(path, sizeof(path), "%s/junk.db", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(junk, 1, sizeof(junk), fp), sizeof(junk));
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(store_open(path, &st2, err, sizeof(err)),
			 GERR_CORRUPT);
	assert_null(st2);
	assert_true(strlen(err) > 0);
}

static void test_open_bad_paths(void **state)
{
	struct fx *f = *state;
	struct store *st2 = NULL;
	char path[200], err[512] = "";
	struct stat sb;

	/* Missing directory. */
	snprintf(path, sizeof(path), "%s/no/such/dir/gpud.db", f->dir);
	assert_int_equal(store_open(path, &st2, err, sizeof(err)), GERR_IO);
	assert_null(st2);
	assert_non_null(strstr(err, "directory"));
	assert_non_null(strstr(err, "No such file"));

	/* Parent is a file. */
	snprintf(path, sizeof(path), "%s/gpud.db/x.db", f->dir);
	assert_int_equal(store_open(path, &st2, err, sizeof(err)), GERR_IO);
	assert_null(st2);
	assert_true(strlen(err) > 0);

	/* Root ignores file modes: the permission checks run in a child
	 * that drops to nobody, and sysfs refuses root itself. */
	make_readonly_tree(f->dir);
	if (geteuid() != 0) {
		assert_int_equal(readonly_checks(f->dir), 0);
	} else {
		pid_t pid = fork();
		int status = -1;

		assert_true(pid >= 0);
		if (pid == 0) {
			if (setgroups(0, NULL) || setgid(65534) ||
			    setuid(65534))
				_exit(2);
			_exit(readonly_checks(f->dir) ? 1 : 0);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		if (stat("/sys/kernel", &sb) == 0) {
			assert_int_equal(store_open("/sys/gpud-test.db", &st2,
						    err, sizeof(err)),
					 GERR_PERM);
			assert_non_null(strstr(err, "/sys/gpud-test.db"));
		}
	}
	assert_null(st2);

	assert_int_equal(store_open(NULL, &st2, err, sizeof(err)), GERR_INVAL);
}

/* store_open_version (store_test.h): an older gpud's database, which
 * store_open then migrates; a newer one is refused as by store_open. */
static void test_open_version(void **state)
{
	struct fx *f = *state;
	struct store *st2 = NULL;
	char err[256] = "";
	uint64_t n = 5;
	int64_t job;

	assert_int_equal(store_open_version(f->path, 0, &st2, err,
					    sizeof(err)), GERR_INVAL);
	assert_int_equal(store_open_version(f->path, 99, &st2, err,
					    sizeof(err)), GERR_INVAL);
	assert_null(st2);
	store_close(f->st);
	f->st = NULL;
	assert_int_equal(store_open_version(f->path, 2, &st2, err,
					    sizeof(err)), GERR_UNSUPPORTED);
	assert_null(st2);
	assert_non_null(strstr(err, "newer"));

	open_old(f, 2);
	job = add_job(f->st, "graveler");
	/* What version 2 lacks fails, and nothing else breaks. */
	assert_int_equal(store_part_count(f->st, job, &n), GERR_DB);
	assert_int_equal(n, 5);
	assert_int_equal(add_job(f->st, "graveler"), job + 1);
	reopen(f);
	assert_int_equal(store_part_count(f->st, job, &n), 0);
	assert_int_equal(n, 0);
}

/* ---- transactions and durability ---- */

static void test_transactions(void **state)
{
	struct fx *f = *state;
	struct store *st = f->st;
	struct store_job *a;
	int64_t w = add_worker(st, "w1");
	int64_t job = add_job(st, "graveler");
	struct store_lease l = add_lease(st, job, w, 10);
	size_t n;
	uint64_t ev = 0;

	assert_int_equal(store_commit(st), GERR_STATE);
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_begin(st), GERR_STATE);
	add_job(st, "graveler");
	assert_int_equal(store_event(st, 1.0, job, 0, 0, 0, "submit", NULL), 0);
	store_rollback(st);
	store_rollback(st); /* no transaction: no-op */
	assert_int_equal(store_job_list(st, &a, &n), 0);
	assert_int_equal(n, 1);
	store_job_free_array(a, n);
	assert_int_equal(store_event_count(st, NULL, 0, &ev), 0);
	assert_int_equal(ev, 0);

	/* A failing call inside a transaction undoes only itself. */
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_lease_set_result(st, l.id, 1, "r", 10, 2.0), 0);
	assert_int_equal(store_lease_heartbeat(st, l.id, 1, 1, 9.0, 3.0),
			 GERR_STALE);
	assert_int_equal(store_token_add(st, "t", (const uint8_t *)
					 "0123456789abcdef0123456789abcdef",
					 AUTH_ROLE_VIEWER, 3.0), 0);
	assert_int_equal(store_token_add(st, "t", (const uint8_t *)
					 "0123456789abcdef0123456789abcdef",
					 AUTH_ROLE_WORKER, 3.0), GERR_STATE);
	assert_int_equal(store_event(st, 3.0, job, l.id, 1, w, "result", NULL),
			 0);
	assert_int_equal(store_commit(st), 0);
	assert_int_equal(store_commit(st), GERR_STATE);

	reopen(f);
	st = f->st;
	{
		struct store_lease g;
		enum auth_role role = 0;
		uint8_t key[32];

		get_lease(st, l.id, &g);
		assert_int_equal(g.state, LEASE_DONE);
		assert_string_equal(g.result, "r");
		store_lease_clear(&g);
		int has_key = 0;

		assert_int_equal(store_token_get(st, "t", key, &has_key, &role),
				 0);
		assert_true(has_key);
		assert_memory_equal(key, "0123456789abcdef0123456789abcdef",
				    32);
		assert_int_equal(role, AUTH_ROLE_VIEWER);
		assert_int_equal(store_event_count(st, "result", job, &ev), 0);
		assert_int_equal(ev, 1);
	}
	store_lease_clear(&l);
}

static void test_durability(void **state)
{
	struct fx *f = *state;
	int64_t job = add_job(f->st, "officers");
	int64_t w = add_worker(f->st, "w1");
	struct store_lease l = add_lease(f->st, job, w, 77), g;
	struct store_job j;
	struct store_worker wk;
	uint8_t key[32] = {1, 2, 3};
	uint64_t n = 0;

	assert_int_equal(store_lease_set_checkpoint(f->st, l.id, 1, "ckpt", 30,
						    5.0, NULL), 0);
	assert_int_equal(store_job_set_cursor(f->st, job, "{\"at\":77}", 1), 0);
	assert_int_equal(store_token_add(f->st, "w1", key, AUTH_ROLE_WORKER, 1.0), 0);
	assert_int_equal(store_worker_credit(f->st, w, 9, 1.5, 6.0), 0);
	assert_int_equal(store_event(f->st, 6.0, job, l.id, 1, w, "ckpt", "30"),
			 0);

	reopen(f);

	assert_int_equal(store_job_get(f->st, job, &j), 0);
	assert_string_equal(j.workload, "officers");
	assert_string_equal(j.cursor, "{\"at\":77}");
	assert_int_equal(j.carve_done, 1);
	store_job_clear(&j);
	get_lease(f->st, l.id, &g);
	assert_int_equal(g.state, LEASE_LEASED);
	assert_int_equal(g.epoch, 1);
	assert_int_equal(g.units, 77);
	assert_string_equal(g.checkpoint, "ckpt");
	assert_int_equal(g.checkpoint_units, 30);
	store_lease_clear(&g);
	assert_int_equal(store_worker_get(f->st, w, &wk), 0);
	assert_int_equal(wk.units_done, 9);
	store_worker_clear(&wk);
	memset(key, 0, sizeof(key));
	{
		int has_key = 0;

		assert_int_equal(store_token_get(f->st, "w1", key, &has_key,
						 NULL), 0);
		assert_int_equal(key[2], 3);
	}
	assert_int_equal(store_event_count(f->st, "ckpt", job, &n), 0);
	assert_int_equal(n, 1);
	/* The reopened lease still fences by epoch. */
	assert_int_equal(store_lease_heartbeat(f->st, l.id, 1, 31, 99.0, 7.0),
			 0);
	assert_int_equal(store_lease_heartbeat(f->st, l.id, 2, 31, 99.0, 7.0),
			 GERR_STALE);
	store_lease_clear(&l);
}

/* A process that dies right after a call returned (no store_close, no
 * checkpoint of the WAL) loses nothing it was told was written. */
static void test_durable_after_crash(void **state)
{
	struct fx *f = *state;
	pid_t pid;
	int status = -1;
	struct store_job j;
	struct store_lease l;

	store_close(f->st);
	f->st = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct store *st;
		struct store_lease cl;
		char err[256];
		int64_t job = 0, w = 0;

		if (store_open(f->path, &st, err, sizeof(err)) ||
		    store_worker_upsert(st, "w", "", "cpu", 1.0, &w) ||
		    store_job_insert(st, "graveler", "{}", 9, 1.0, &job) ||
		    store_begin(st) ||
		    store_lease_insert_leased(st, job, "{}", 9, w, 50.0, 2.0,
					      &cl) ||
		    store_commit(st) ||
		    store_lease_set_checkpoint(st, cl.id, 1, "ck", 3, 3.0,
					       NULL))
			_exit(1);
		_exit(0); /* as if killed: nothing closed or flushed */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	reopen(f);
	assert_int_equal(store_job_get(f->st, 1, &j), 0);
	assert_int_equal(j.total_units, 9);
	store_job_clear(&j);
	get_lease(f->st, 1, &l);
	assert_int_equal(l.state, LEASE_LEASED);
	assert_string_equal(l.checkpoint, "ck");
	assert_int_equal(l.checkpoint_units, 3);
	store_lease_clear(&l);
}

FX_MAIN(T(test_open_fresh_and_reopen), T(test_open_refuses_newer_schema),
	T(test_open_refuses_foreign_db), T(test_open_not_a_database),
	T(test_open_bad_paths), T(test_open_version), T(test_transactions),
	T(test_durability), T(test_durable_after_crash))
