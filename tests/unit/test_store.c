/* test_store.c - unit tests of daemon/store*.c on real database files in a
 * fresh temporary directory per test. Times are injected (no clock). */
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

#include "auth.h"
#include "gerr.h"
#include "store.h"
#include "store_test.h"

struct fx {
	char dir[64];
	char path[128];
	struct store *st;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[256] = "";

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_store.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/gpud.db", f->dir);
	assert_int_equal(store_open(f->path, &f->st, err, sizeof(err)), 0);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[200];

	store_close(f->st);
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' && rm -rf '%s'",
		 f->dir, f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void reopen(struct fx *f)
{
	char err[256] = "";

	store_close(f->st); /* NULL-safe */
	f->st = NULL;
	assert_int_equal(store_open(f->path, &f->st, err, sizeof(err)), 0);
}

/* Replace the fixture's store with a new database old.db in its directory,
 * as a gpud that knew only migrations 1..version made it; reopen(f) then
 * migrates it to the newest schema. */
static void open_old(struct fx *f, int version)
{
	char err[256] = "";

	store_close(f->st);
	f->st = NULL;
	snprintf(f->path, sizeof(f->path), "%s/old.db", f->dir);
	assert_int_equal(store_open_version(f->path, version, &f->st, err,
					    sizeof(err)), 0);
}

static int64_t add_job(struct store *st, const char *workload)
{
	int64_t id = 0;

	assert_int_equal(store_job_insert(st, workload, "{\"n\":100}", 100,
					  10.0, &id), 0);
	assert_true(id > 0);
	return id;
}

static int64_t add_worker(struct store *st, const char *name)
{
	int64_t id = 0;

	assert_int_equal(store_worker_upsert(st, name, "cpu", 5.0, &id), 0);
	assert_true(id > 0);
	return id;
}

/* A leased lease (epoch 1) of job. */
static struct store_lease add_lease(struct store *st, int64_t job,
				    int64_t worker, uint64_t units)
{
	struct store_lease l;

	assert_int_equal(store_lease_insert_leased(st, job, "{\"r\":[0,10]}",
						   units, worker, 1000.0, 20.0,
						   &l), 0);
	return l;
}

/* A pending lease (released once: epoch 1, attempts 1). */
static int64_t add_pending(struct store *st, int64_t job, int64_t worker)
{
	struct store_lease l = add_lease(st, job, worker, 10);
	int64_t id = l.id;

	assert_int_equal(store_lease_release(st, l.id, l.epoch, 21.0), 0);
	store_lease_clear(&l);
	return id;
}

static void assert_str_or_null(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void assert_lease_equal(const struct store_lease *a,
			       const struct store_lease *b)
{
	assert_int_equal(a->id, b->id);
	assert_int_equal(a->job_id, b->job_id);
	assert_string_equal(a->spec, b->spec);
	assert_int_equal(a->units, b->units);
	assert_int_equal(a->state, b->state);
	assert_int_equal(a->epoch, b->epoch);
	assert_int_equal(a->worker_id, b->worker_id);
	assert_true(a->deadline == b->deadline);
	assert_int_equal(a->attempts, b->attempts);
	assert_int_equal(a->failures, b->failures);
	assert_int_equal(a->units_done, b->units_done);
	assert_str_or_null(a->checkpoint, b->checkpoint);
	assert_int_equal(a->checkpoint_units, b->checkpoint_units);
	assert_str_or_null(a->result, b->result);
	assert_true(a->updated_at == b->updated_at);
	assert_str_or_null(a->last_error, b->last_error);
}

static void get_lease(struct store *st, int64_t id, struct store_lease *l)
{
	assert_int_equal(store_lease_get(st, id, l), 0);
}

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

static void test_open_refuses_newer_schema(void **state)
{
	struct fx *f = *state;
	struct store *st2 = NULL;
	char err[256] = "";

	store_close(f->st);
	f->st = NULL;
	patch_header(f->path, 60, 999); /* user_version */
	assert_int_equal(store_open(f->path, &st2, err, sizeof(err)),
			 GERR_UNSUPPORTED);
	assert_null(st2);
	assert_non_null(strstr(err, "newer"));
	assert_non_null(strstr(err, "999"));
}

static void test_open_refuses_foreign_db(void **state)
{
	struct fx *f = *state;
	struct store *st2 = NULL;
	char err[256] = "";

	store_close(f->st);
	f->st = NULL;
	patch_header(f->path, 68, 0x12345678); /* application_id */
	assert_int_equal(store_open(f->path, &st2, err, sizeof(err)),
			 GERR_CORRUPT);
	assert_null(st2);
	assert_non_null(strstr(err, "not a gpud database"));
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

/* ---- jobs ---- */

static void test_jobs(void **state)
{
	struct fx *f = *state;
	struct store *st = f->st;
	struct store_job j, *a;
	size_t n;
	int64_t id1 = 0, id2;

	assert_int_equal(store_job_insert(st, "graveler", "{\"battles\":5}",
					  5, 100.5, &id1), 0);
	id2 = add_job(st, "officers");
	assert_true(id2 > id1);

	assert_int_equal(store_job_get(st, id1, &j), 0);
	assert_int_equal(j.id, id1);
	assert_string_equal(j.workload, "graveler");
	assert_string_equal(j.params, "{\"battles\":5}");
	assert_int_equal(j.state, JOB_ACTIVE);
	assert_int_equal(j.total_units, 5);
	assert_null(j.cursor);
	assert_int_equal(j.carve_done, 0);
	assert_null(j.answer);
	assert_int_equal(j.units_verified, 0);
	assert_true(j.created_at == 100.5);
	assert_true(j.finished_at == 0);
	assert_null(j.reason);
	store_job_clear(&j);
	store_job_clear(NULL);

	assert_int_equal(store_job_get(st, 999, &j), GERR_NOTFOUND);

	assert_int_equal(store_job_set_cursor(st, id1, "{\"next\":3}", 1), 0);
	assert_int_equal(store_job_set_answer(st, id1, "{\"max\":177}", 5), 0);
	assert_int_equal(store_job_set_reason(st, id1, "waiting"), 0);
	assert_int_equal(store_job_get(st, id1, &j), 0);
	assert_string_equal(j.cursor, "{\"next\":3}");
	assert_int_equal(j.carve_done, 1);
	assert_string_equal(j.answer, "{\"max\":177}");
	assert_int_equal(j.units_verified, 5);
	assert_string_equal(j.reason, "waiting");
	store_job_clear(&j);
	assert_int_equal(store_job_set_cursor(st, 999, "{}", 0), GERR_NOTFOUND);
	assert_int_equal(store_job_set_answer(st, 999, "{}", 0), GERR_NOTFOUND);
	assert_int_equal(store_job_set_reason(st, 999, "x"), GERR_NOTFOUND);
	/* JSON columns refuse what is not JSON. */
	assert_int_equal(store_job_set_cursor(st, id1, "{oops", 0), GERR_INVAL);
	assert_int_equal(store_job_set_answer(st, id1, "[1,", 0), GERR_INVAL);
	assert_int_equal(store_job_insert(st, "graveler", "nope", 1, 1.0, &id2),
			 GERR_INVAL);
	assert_int_equal(store_job_get(st, id1, &j), 0);
	assert_string_equal(j.cursor, "{\"next\":3}");
	store_job_clear(&j);

	/* States: paused has no finished_at, done sets it, done is final. */
	assert_int_equal(store_job_set_state(st, id1, JOB_PAUSED, "by user",
					     200.0), 0);
	assert_int_equal(store_job_get(st, id1, &j), 0);
	assert_int_equal(j.state, JOB_PAUSED);
	assert_string_equal(j.reason, "by user");
	assert_true(j.finished_at == 0);
	store_job_clear(&j);
	assert_int_equal(store_job_set_state(st, id1, JOB_ACTIVE, NULL, 201.0),
			 0);
	assert_int_equal(store_job_set_state(st, id1, JOB_DONE, NULL, 300.0), 0);
	assert_int_equal(store_job_set_state(st, id1, JOB_DONE, "again", 400.0),
			 0);
	assert_int_equal(store_job_get(st, id1, &j), 0);
	assert_int_equal(j.state, JOB_DONE);
	assert_true(j.finished_at == 300.0);
	assert_string_equal(j.reason, "again");
	store_job_clear(&j);
	assert_int_equal(store_job_set_state(st, id1, JOB_ACTIVE, NULL, 500.0),
			 GERR_STATE);
	assert_non_null(strstr(store_errmsg(st), "done"));
	assert_int_equal(store_job_set_state(st, id1, (enum job_state)9, NULL,
					     1.0), GERR_INVAL);
	assert_int_equal(store_job_set_state(st, 999, JOB_PAUSED, NULL, 1.0),
			 GERR_NOTFOUND);

	assert_int_equal(store_job_list(st, &a, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(a[0].id, id1);
	assert_int_equal(a[1].id, id2);
	assert_string_equal(a[1].workload, "officers");
	store_job_free_array(a, n);

	assert_string_equal(job_state_name(JOB_CANCELLED), "cancelled");
	assert_string_equal(lease_state_name(LEASE_VERIFIED), "verified");
	assert_string_equal(lease_state_name((enum lease_state)77), "unknown");
}

static void test_job_next_carvable(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t g1 = add_job(st, "graveler");
	int64_t o1 = add_job(st, "officers");
	int64_t g2 = add_job(st, "graveler");
	int64_t id = 0;

	assert_int_equal(store_job_next_carvable(st, "[\"graveler\"]", NULL, &id), 0);
	assert_int_equal(id, g1);
	assert_int_equal(store_job_next_carvable(st,
		"[\"sudoku\",\"officers\"]", NULL, &id), 0);
	assert_int_equal(id, o1);
	/* Excluded jobs (waiting for results) are passed over. */
	char ex[32];
	snprintf(ex, sizeof(ex), "[%lld]", (long long)g1);
	assert_int_equal(store_job_next_carvable(st, "[\"graveler\"]", ex, &id), 0);
	assert_int_equal(id, g2);
	/* carve_done and paused jobs are skipped. */
	assert_int_equal(store_job_set_cursor(st, g1, "{}", 1), 0);
	assert_int_equal(store_job_next_carvable(st, "[\"graveler\"]", NULL, &id), 0);
	assert_int_equal(id, g2);
	assert_int_equal(store_job_set_state(st, g2, JOB_PAUSED, NULL, 1.0), 0);
	id = -1;
	assert_int_equal(store_job_next_carvable(st, "[\"graveler\"]", NULL, &id),
			 GERR_NOTFOUND);
	assert_int_equal(id, -1); /* ret_* untouched on failure */
	assert_int_equal(store_job_next_carvable(st, "[]", NULL, &id), GERR_NOTFOUND);
	assert_int_equal(store_job_next_carvable(st, "graveler", NULL, &id),
			 GERR_INVAL);
	assert_int_equal(store_job_next_carvable(st, "{\"a\":1}", NULL, &id),
			 GERR_INVAL);
	assert_int_equal(store_job_next_carvable(st, "[\"gr", NULL, &id), GERR_INVAL);
}

/* ---- leases ---- */

static void test_lease_life_cycle(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1");
	struct store_lease l = add_lease(st, job, w, 10), g;
	uint64_t counts[LEASE_NSTATES], units = 0;
	char *old = (char *)"untouched";

	assert_int_equal(l.job_id, job);
	assert_string_equal(l.spec, "{\"r\":[0,10]}");
	assert_int_equal(l.units, 10);
	assert_int_equal(l.state, LEASE_LEASED);
	assert_int_equal(l.epoch, 1);
	assert_int_equal(l.attempts, 1);
	assert_int_equal(l.failures, 0);
	assert_int_equal(l.worker_id, w);
	assert_true(l.deadline == 1000.0);
	assert_null(l.checkpoint);
	assert_null(l.result);

	assert_int_equal(store_lease_heartbeat(st, l.id, 1, 3, 1100.0, 30.0), 0);
	get_lease(st, l.id, &g);
	assert_int_equal(g.units_done, 3);
	assert_true(g.deadline == 1100.0);
	assert_true(g.updated_at == 30.0);
	store_lease_clear(&g);
	assert_int_equal(store_job_units_progress(st, job, &units), 0);
	assert_int_equal(units, 3);

	assert_int_equal(store_lease_set_checkpoint(st, l.id, 1, "aa", 4, 31.0,
						    &old), 0);
	assert_null(old);
	assert_int_equal(store_lease_set_checkpoint(st, l.id, 1, "bb", 6, 32.0,
						    &old), 0);
	assert_string_equal(old, "aa");
	free(old);
	/* The same content again: nothing to delete. */
	assert_int_equal(store_lease_set_checkpoint(st, l.id, 1, "bb", 6, 33.0,
						    &old), 0);
	assert_null(old);
	assert_int_equal(store_lease_set_checkpoint(st, l.id, 1, "cc", 7, 34.0,
						    NULL), 0);
	get_lease(st, l.id, &g);
	assert_string_equal(g.checkpoint, "cc");
	assert_int_equal(g.checkpoint_units, 7);
	assert_int_equal(g.units_done, 7);
	store_lease_clear(&g);

	assert_int_equal(store_lease_set_result(st, l.id, 1, "rr", 10, 40.0), 0);
	get_lease(st, l.id, &g);
	assert_int_equal(g.state, LEASE_DONE);
	assert_string_equal(g.result, "rr");
	assert_int_equal(g.units_done, 10);
	assert_int_equal(g.worker_id, w); /* the producer is kept */
	store_lease_clear(&g);

	assert_int_equal(store_lease_counts(st, job, counts), 0);
	assert_int_equal(counts[LEASE_DONE], 1);
	assert_int_equal(counts[LEASE_LEASED], 0);

	assert_int_equal(store_lease_set_verified(st, l.id, 1, 50.0), 0);
	get_lease(st, l.id, &g);
	assert_int_equal(g.state, LEASE_VERIFIED);
	assert_int_equal(g.epoch, 1);
	store_lease_clear(&g);

	/* A second lease, still leased, adds its progress. */
	store_lease_clear(&l);
	l = add_lease(st, job, w, 20);
	assert_int_equal(store_lease_heartbeat(st, l.id, 1, 5, 1100.0, 51.0), 0);
	assert_int_equal(store_job_units_progress(st, job, &units), 0);
	assert_int_equal(units, 15);
	assert_int_equal(store_lease_counts(st, job, counts), 0);
	assert_int_equal(counts[LEASE_VERIFIED], 1);
	assert_int_equal(counts[LEASE_LEASED], 1);
	assert_int_equal(counts[LEASE_PENDING], 0);

	{
		struct store_lease *a;
		size_t n;

		assert_int_equal(store_lease_list_job(st, job, &a, &n), 0);
		assert_int_equal(n, 2);
		assert_int_equal(a[0].state, LEASE_VERIFIED);
		assert_int_equal(a[1].id, l.id);
		store_lease_free_array(a, n);
		assert_int_equal(store_lease_list_state(st, LEASE_LEASED, &a,
							&n), 0);
		assert_int_equal(n, 1);
		assert_int_equal(a[0].id, l.id);
		store_lease_free_array(a, n);
		assert_int_equal(store_lease_list_state(st, LEASE_FAILED, &a,
							&n), 0);
		assert_int_equal(n, 0);
		store_lease_free_array(a, n);
	}
	assert_int_equal(store_lease_insert_leased(st, job, "{", 1, w, 1.0,
						   1.0, &g), GERR_INVAL);
	/* Insert for a missing job or worker. */
	assert_int_equal(store_lease_insert_leased(st, 999, "{}", 1, w, 1.0,
						   1.0, &g), GERR_NOTFOUND);
	assert_int_equal(store_lease_insert_leased(st, job, "{}", 1, 999, 1.0,
						   1.0, &g), GERR_NOTFOUND);
	store_lease_clear(&l);
}

static void test_claim_order_and_filter(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t gj = add_job(st, "graveler");
	int64_t oj = add_job(st, "officers");
	int64_t pj = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1"), w2 = add_worker(st, "w2");
	int64_t p_paused = add_pending(st, pj, w);  /* lowest id */
	int64_t g1 = add_pending(st, gj, w);
	int64_t o1 = add_pending(st, oj, w);
	int64_t g2 = add_pending(st, gj, w);
	struct store_lease l, keep = { .id = -5 };

	assert_int_equal(store_job_set_state(st, pj, JOB_PAUSED, NULL, 1.0), 0);

	assert_int_equal(store_lease_claim_pending(st, w2, "[\"officers\"]",
						   500.0, 60.0, &l), 0);
	assert_int_equal(l.id, o1);
	store_lease_clear(&l);

	assert_int_equal(store_lease_claim_pending(st, w2, "[\"graveler\"]",
						   500.0, 61.0, &l), 0);
	assert_int_equal(l.id, g1); /* oldest, paused job skipped */
	assert_int_equal(l.state, LEASE_LEASED);
	assert_int_equal(l.epoch, 2);
	assert_int_equal(l.attempts, 2);
	assert_int_equal(l.worker_id, w2);
	assert_true(l.deadline == 500.0);
	assert_true(l.updated_at == 61.0);
	store_lease_clear(&l);

	assert_int_equal(store_lease_claim_pending(st, w2,
		"[\"sudoku\",\"graveler\"]", 500.0, 62.0, &l), 0);
	assert_int_equal(l.id, g2);
	store_lease_clear(&l);

	/* Nothing left but the paused job's lease. */
	assert_int_equal(store_lease_claim_pending(st, w2, "[\"graveler\"]",
						   500.0, 63.0, &keep),
			 GERR_NOTFOUND);
	assert_int_equal(keep.id, -5);
	assert_int_equal(store_lease_claim_pending(st, w2, "[]", 500.0, 63.0,
						   &keep), GERR_NOTFOUND);
	assert_int_equal(store_lease_claim_pending(st, w2, "graveler", 500.0,
						   63.0, &keep), GERR_INVAL);
	assert_int_equal(keep.id, -5);

	/* Resumed, its lease is claimable. */
	assert_int_equal(store_job_set_state(st, pj, JOB_ACTIVE, NULL, 2.0), 0);
	assert_int_equal(store_lease_claim_pending(st, w2, "[\"graveler\"]",
						   500.0, 64.0, &l), 0);
	assert_int_equal(l.id, p_paused);
	store_lease_clear(&l);
	assert_int_equal(store_lease_claim_pending(st, w2, "[\"graveler\"]",
						   500.0, 64.0, &l),
			 GERR_NOTFOUND);
}

static void test_stale_epochs_change_nothing(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1");
	int64_t id = add_pending(st, job, w);
	struct store_lease l, before, after;
	enum lease_state ns = LEASE_NSTATES;
	char *old = (char *)"untouched";

	assert_int_equal(store_lease_claim_pending(st, w, "[\"graveler\"]",
						   900.0, 70.0, &l), 0);
	assert_int_equal(l.id, id);
	assert_int_equal(l.epoch, 2);
	assert_int_equal(store_lease_set_checkpoint(st, id, 2, "ck", 4, 71.0,
						    NULL), 0);
	get_lease(st, id, &before);

	/* The previous holder (epoch 1) and a future epoch are both stale. */
	for (uint64_t e = 1; e <= 3; e += 2) {
		assert_int_equal(store_lease_heartbeat(st, id, e, 9, 2000.0,
						       80.0), GERR_STALE);
		assert_non_null(strstr(store_errmsg(st), "epoch"));
		assert_int_equal(store_lease_set_checkpoint(st, id, e, "x", 9,
							    80.0, &old),
				 GERR_STALE);
		assert_string_equal(old, "untouched");
		assert_int_equal(store_lease_set_result(st, id, e, "r", 9,
							80.0), GERR_STALE);
		assert_int_equal(store_lease_release(st, id, e, 80.0),
				 GERR_STALE);
		assert_int_equal(store_lease_set_verified(st, id, e, 80.0),
				 GERR_STALE);
		assert_int_equal(store_lease_reject(st, id, e, "bad", 3, 80.0,
						    &ns), GERR_STALE);
		assert_int_equal(ns, LEASE_NSTATES);
	}
	assert_int_equal(store_lease_heartbeat(st, id, UINT64_MAX, 9, 2000.0,
					       80.0), GERR_STALE);
	/* Right epoch, wrong state: a leased lease is not done. */
	assert_int_equal(store_lease_set_verified(st, id, 2, 80.0), GERR_STALE);
	assert_int_equal(store_lease_reject(st, id, 2, "bad", 3, 80.0, &ns),
			 GERR_STALE);
	/* No such lease. */
	assert_int_equal(store_lease_heartbeat(st, 999, 1, 9, 2000.0, 80.0),
			 GERR_STALE);
	get_lease(st, id, &after);
	assert_lease_equal(&before, &after);
	store_lease_clear(&after);

	/* Done: the holder's own epoch is now stale for leased-only calls. */
	assert_int_equal(store_lease_set_result(st, id, 2, "res", 10, 81.0), 0);
	store_lease_clear(&before);
	get_lease(st, id, &before);
	assert_int_equal(store_lease_heartbeat(st, id, 2, 9, 2000.0, 82.0),
			 GERR_STALE);
	assert_int_equal(store_lease_set_checkpoint(st, id, 2, "x", 9, 82.0,
						    &old), GERR_STALE);
	assert_int_equal(store_lease_set_result(st, id, 2, "r2", 10, 82.0),
			 GERR_STALE);
	assert_int_equal(store_lease_release(st, id, 2, 82.0), GERR_STALE);
	assert_int_equal(store_lease_set_verified(st, id, 1, 82.0), GERR_STALE);
	get_lease(st, id, &after);
	assert_lease_equal(&before, &after);
	assert_string_equal(after.result, "res");
	store_lease_clear(&after);
	store_lease_clear(&before);
	store_lease_clear(&l);
}

static void test_transition_table(void **state)
{
	static const int allowed[LEASE_NSTATES][LEASE_NSTATES] = {
		/* to: pend leas done veri fail canc */
		[LEASE_PENDING] = { 0, 1, 0, 0, 0, 1 },
		[LEASE_LEASED] = { 1, 1, 1, 0, 0, 1 },
		[LEASE_DONE] = { 1, 0, 0, 1, 1, 1 },
		[LEASE_VERIFIED] = { 0 },
		[LEASE_FAILED] = { 0 },
		[LEASE_CANCELLED] = { 0 },
	};
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1");
	struct store_lease l = add_lease(st, job, w, 10), g;
	uint64_t counts[LEASE_NSTATES];

	for (int a = 0; a < LEASE_NSTATES; a++)
		for (int b = 0; b < LEASE_NSTATES; b++)
			assert_int_equal(store_lease_move_allowed(a, b),
					 allowed[a][b]);
	assert_int_equal(store_lease_move_allowed(-1, LEASE_LEASED), 0);
	assert_int_equal(store_lease_move_allowed(LEASE_PENDING, 6), 0);

	/* Final states refuse every call, and cancel leaves them alone. */
	assert_int_equal(store_lease_set_result(st, l.id, 1, "r", 10, 1.0), 0);
	assert_int_equal(store_lease_set_verified(st, l.id, 1, 2.0), 0);
	assert_int_equal(store_lease_set_verified(st, l.id, 1, 3.0), GERR_STALE);
	assert_int_equal(store_lease_reject(st, l.id, 1, "x", 3, 3.0, NULL),
			 GERR_STALE);
	assert_int_equal(store_lease_release(st, l.id, 1, 3.0), GERR_STALE);
	assert_int_equal(store_job_cancel_leases(st, job, 4.0), 0);
	get_lease(st, l.id, &g);
	assert_int_equal(g.state, LEASE_VERIFIED);
	store_lease_clear(&g);
	assert_int_equal(store_lease_counts(st, job, counts), 0);
	assert_int_equal(counts[LEASE_VERIFIED], 1);
	assert_int_equal(counts[LEASE_CANCELLED], 0);
	store_lease_clear(&l);
}

static void test_expiry_reissues_with_checkpoint(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1"), w2 = add_worker(st, "w2");
	struct store_lease a = add_lease(st, job, w, 10); /* deadline 1000 */
	struct store_lease b = add_lease(st, job, w, 10), g;
	int64_t *ids = NULL;
	size_t n = 99;

	assert_int_equal(store_lease_set_checkpoint(st, a.id, 1, "ck-a", 40,
						    30.0, NULL), 0);
	assert_int_equal(store_lease_heartbeat(st, a.id, 1, 55, 100.0, 31.0), 0);

	assert_int_equal(store_lease_expire(st, 50.0, &ids, &n), 0);
	assert_int_equal(n, 0);
	free(ids);
	assert_int_equal(store_lease_expire(st, 100.0, &ids, &n), 0);
	assert_int_equal(n, 0); /* deadline < now, strictly */
	free(ids);
	assert_int_equal(store_lease_expire(st, 150.0, &ids, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], a.id);
	free(ids);

	get_lease(st, a.id, &g);
	assert_int_equal(g.state, LEASE_PENDING);
	assert_int_equal(g.epoch, 1);
	assert_int_equal(g.worker_id, 0);
	assert_string_equal(g.checkpoint, "ck-a");
	assert_int_equal(g.checkpoint_units, 40);
	assert_int_equal(g.units_done, 40);
	store_lease_clear(&g);
	get_lease(st, b.id, &g);
	assert_int_equal(g.state, LEASE_LEASED);
	store_lease_clear(&g);

	/* The old holder is fenced off. */
	assert_int_equal(store_lease_heartbeat(st, a.id, 1, 60, 2000.0, 151.0),
			 GERR_STALE);
	assert_int_equal(store_lease_set_result(st, a.id, 1, "r", 10, 151.0),
			 GERR_STALE);

	assert_int_equal(store_lease_claim_pending(st, w2, "[\"graveler\"]",
						   3000.0, 152.0, &g), 0);
	assert_int_equal(g.id, a.id);
	assert_int_equal(g.epoch, 2);
	assert_int_equal(g.attempts, 2);
	assert_int_equal(g.worker_id, w2);
	assert_string_equal(g.checkpoint, "ck-a");
	assert_int_equal(g.units_done, 40);
	store_lease_clear(&g);
	assert_int_equal(store_lease_heartbeat(st, a.id, 2, 60, 3000.0, 153.0),
			 0);

	/* Release behaves like expiry. */
	assert_int_equal(store_lease_release(st, a.id, 2, 154.0), 0);
	get_lease(st, a.id, &g);
	assert_int_equal(g.state, LEASE_PENDING);
	assert_int_equal(g.epoch, 2);
	assert_string_equal(g.checkpoint, "ck-a");
	assert_int_equal(g.units_done, 40);
	store_lease_clear(&g);

	store_lease_clear(&a);
	store_lease_clear(&b);
}

static void test_reject_then_failed(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1");
	struct store_lease l = add_lease(st, job, w, 10), g;
	enum lease_state ns = LEASE_NSTATES;

	assert_int_equal(store_lease_set_checkpoint(st, l.id, 1, "ck", 5, 1.0,
						    NULL), 0);
	assert_int_equal(store_lease_set_result(st, l.id, 1, "r1", 10, 2.0), 0);
	assert_int_equal(store_lease_reject(st, l.id, 1, "histogram off", 2,
					    3.0, &ns), 0);
	assert_int_equal(ns, LEASE_PENDING);
	get_lease(st, l.id, &g);
	assert_int_equal(g.state, LEASE_PENDING);
	assert_int_equal(g.failures, 1);
	assert_null(g.result);
	assert_string_equal(g.checkpoint, "ck");
	assert_int_equal(g.units_done, 5);
	assert_int_equal(g.worker_id, 0);
	assert_string_equal(g.last_error, "histogram off");
	store_lease_clear(&g);

	assert_int_equal(store_lease_claim_pending(st, w, "[\"graveler\"]",
						   100.0, 4.0, &g), 0);
	assert_int_equal(g.epoch, 2);
	store_lease_clear(&g);
	assert_int_equal(store_lease_set_result(st, l.id, 2, "r2", 10, 5.0), 0);
	assert_int_equal(store_lease_reject(st, l.id, 2, "max wrong", 2, 6.0,
					    &ns), 0);
	assert_int_equal(ns, LEASE_FAILED);
	get_lease(st, l.id, &g);
	assert_int_equal(g.state, LEASE_FAILED);
	assert_int_equal(g.failures, 2);
	assert_null(g.result);
	assert_string_equal(g.checkpoint, "ck");
	assert_int_equal(g.worker_id, w);
	store_lease_clear(&g);
	/* Failed is final. */
	assert_int_equal(store_lease_claim_pending(st, w, "[\"graveler\"]",
						   100.0, 7.0, &g),
			 GERR_NOTFOUND);
	assert_int_equal(store_lease_reject(st, l.id, 2, "x", 2, 7.0, NULL),
			 GERR_STALE);
	store_lease_clear(&l);
}

static void test_cancel(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	int64_t job = add_job(st, "graveler"), other = add_job(st, "graveler");
	int64_t w = add_worker(st, "w1");
	int64_t pend = add_pending(st, job, w);
	struct store_lease leased = add_lease(st, job, w, 10);
	struct store_lease done = add_lease(st, job, w, 10);
	struct store_lease ver = add_lease(st, job, w, 10);
	struct store_lease oth = add_lease(st, other, w, 10), g;
	uint64_t counts[LEASE_NSTATES];

	assert_int_equal(store_lease_set_result(st, done.id, 1, "r", 10, 1.0), 0);
	assert_int_equal(store_lease_set_result(st, ver.id, 1, "v", 10, 1.0), 0);
	assert_int_equal(store_lease_set_verified(st, ver.id, 1, 2.0), 0);

	assert_int_equal(store_job_cancel_leases(st, job, 3.0), 0);
	assert_int_equal(store_lease_counts(st, job, counts), 0);
	assert_int_equal(counts[LEASE_CANCELLED], 3);
	assert_int_equal(counts[LEASE_VERIFIED], 1);
	assert_int_equal(counts[LEASE_PENDING] + counts[LEASE_LEASED] +
			 counts[LEASE_DONE], 0);
	get_lease(st, pend, &g);
	assert_int_equal(g.state, LEASE_CANCELLED);
	assert_true(g.updated_at == 3.0);
	store_lease_clear(&g);
	get_lease(st, oth.id, &g);
	assert_int_equal(g.state, LEASE_LEASED); /* another job: untouched */
	store_lease_clear(&g);

	/* The cancelled holder is fenced off. */
	assert_int_equal(store_lease_heartbeat(st, leased.id, 1, 1, 9.0, 4.0),
			 GERR_STALE);
	assert_int_equal(store_lease_set_verified(st, done.id, 1, 4.0),
			 GERR_STALE);
	assert_int_equal(store_job_cancel_leases(st, 999, 4.0), GERR_NOTFOUND);
	store_lease_clear(&leased);
	store_lease_clear(&done);
	store_lease_clear(&ver);
	store_lease_clear(&oth);
}

/* ---- workers, tokens, events ---- */

static void test_workers(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	struct store_worker wk, *a;
	int64_t id = 0, id2 = 0, id3 = 0;
	size_t n;
	int q = -1;

	assert_int_equal(store_worker_upsert(st, "alpha", "cuda:0", 10.0, &id),
			 0);
	assert_int_equal(store_worker_upsert(st, "beta", "cpu", 11.0, &id2), 0);
	assert_int_not_equal(id, id2);
	assert_int_equal(store_worker_upsert(st, "alpha", "cuda:1", 12.0, &id3),
			 0);
	assert_int_equal(id3, id);

	assert_int_equal(store_worker_get(st, id, &wk), 0);
	assert_string_equal(wk.name, "alpha");
	assert_string_equal(wk.device, "cuda:1");
	assert_int_equal(wk.online, 1);
	assert_true(wk.first_seen == 10.0);
	assert_true(wk.last_seen == 12.0);
	store_worker_clear(&wk);

	assert_int_equal(store_worker_set_online(st, id, 0, 13.0), 0);
	assert_int_equal(store_worker_get(st, id, &wk), 0);
	assert_int_equal(wk.online, 0);
	store_worker_clear(&wk);
	assert_int_equal(store_worker_all_offline(st), 0);
	assert_int_equal(store_worker_get(st, id2, &wk), 0);
	assert_int_equal(wk.online, 0);
	store_worker_clear(&wk);

	assert_int_equal(store_worker_credit(st, id, 100, 2.5, 20.0), 0);
	assert_int_equal(store_worker_credit(st, id, 50, 3.5, 21.0), 0);
	assert_int_equal(store_worker_get(st, id, &wk), 0);
	assert_int_equal(wk.leases_done, 2);
	assert_int_equal(wk.units_done, 150);
	assert_true(wk.rate == 3.5);
	assert_true(wk.last_seen == 21.0);
	store_worker_clear(&wk);

	assert_int_equal(store_worker_fail(st, id, 3, &q), 0);
	assert_int_equal(q, 0);
	assert_int_equal(store_worker_fail(st, id, 3, NULL), 0);
	assert_int_equal(store_worker_fail(st, id, 3, &q), 0);
	assert_int_equal(q, 1);
	assert_int_equal(store_worker_fail(st, id2, 0, &q), 0);
	assert_int_equal(q, 0); /* threshold 0: never */
	assert_int_equal(store_worker_get(st, id, &wk), 0);
	assert_int_equal(wk.failures, 3);
	assert_int_equal(wk.quarantined, 1);
	store_worker_clear(&wk);
	/* Reconnecting does not lift a quarantine. */
	assert_int_equal(store_worker_upsert(st, "alpha", "cuda:1", 30.0, &id3),
			 0);
	assert_int_equal(store_worker_get(st, id, &wk), 0);
	assert_int_equal(wk.quarantined, 1);
	store_worker_clear(&wk);

	assert_int_equal(store_worker_list(st, &a, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(a[0].name, "alpha");
	assert_string_equal(a[1].name, "beta");
	store_worker_free_array(a, n);

	assert_int_equal(store_worker_get(st, 999, &wk), GERR_NOTFOUND);
	assert_int_equal(store_worker_credit(st, 999, 1, 1.0, 1.0),
			 GERR_NOTFOUND);
	assert_int_equal(store_worker_fail(st, 999, 3, &q), GERR_NOTFOUND);
	assert_int_equal(store_worker_set_online(st, 999, 1, 1.0),
			 GERR_NOTFOUND);
}

static void test_tokens(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	uint8_t k1[32], k2[32], got[32];

	for (int i = 0; i < 32; i++) {
		k1[i] = (uint8_t)i;
		k2[i] = (uint8_t)(0xff - i);
	}
	assert_int_equal(store_token_add(st, "w1", k1, 1.0), 0);
	assert_int_equal(store_token_add(st, "w2", k2, 1.0), 0);
	assert_int_equal(store_token_add(st, "w1", k2, 2.0), GERR_STATE);
	assert_int_equal(store_token_get(st, "w1", got), 0);
	assert_memory_equal(got, k1, 32);
	assert_int_equal(store_token_get(st, "w2", got), 0);
	assert_memory_equal(got, k2, 32);
	assert_int_equal(store_token_get(st, "nobody", got), GERR_NOTFOUND);

	assert_int_equal(store_token_revoke(st, "w1"), 0);
	memset(got, 0xaa, sizeof(got));
	assert_int_equal(store_token_get(st, "w1", got), GERR_NOTFOUND);
	for (int i = 0; i < 32; i++)
		assert_int_equal(got[i], 0xaa);
	assert_int_equal(store_token_revoke(st, "w1"), 0);
	assert_int_equal(store_token_revoke(st, "nobody"), GERR_NOTFOUND);
	/* A revoked name stays taken. */
	assert_int_equal(store_token_add(st, "w1", k1, 3.0), GERR_STATE);
}

/* Migration 002: a database from before it holds client keys; opening it
 * replaces each with its stored key (auth.h), so old tokens still log in. */
static void test_token_migration(void **state)
{
	struct fx *f = *state;
	uint8_t client[32], want[32], got[32];

	for (int i = 0; i < 32; i++)
		client[i] = (uint8_t)(3 * i + 1);
	open_old(f, 1); /* only 001 applied */
	assert_int_equal(store_token_add(f->st, "old", client, 1.0), 0);
	reopen(f);
	auth_stored_key(client, want);
	assert_int_equal(store_token_get(f->st, "old", got), 0);
	assert_memory_equal(got, want, 32);
	/* Applied once: a later open leaves the key alone. */
	reopen(f);
	assert_int_equal(store_token_get(f->st, "old", got), 0);
	assert_memory_equal(got, want, 32);
}

static void test_events(void **state)
{
	struct store *st = ((struct fx *)*state)->st;
	uint64_t n = 99;

	assert_int_equal(store_event_count(st, "claim", 0, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_event(st, 1.0, 1, 10, 1, 7, "claim", NULL), 0);
	assert_int_equal(store_event(st, 2.0, 1, 10, 1, 7, "expire",
				     "deadline"), 0);
	assert_int_equal(store_event(st, 3.0, 1, 10, 2, 8, "claim", NULL), 0);
	assert_int_equal(store_event(st, 4.0, 2, 11, 1, 8, "claim", NULL), 0);
	assert_int_equal(store_event(st, 4.0, 2, 11, 1, 8, NULL, NULL),
			 GERR_INVAL);
	assert_int_equal(store_event_count(st, "claim", 1, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(store_event_count(st, "claim", 0, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(store_event_count(st, "expire", 2, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_event_count(st, NULL, 0, &n), 0);
	assert_int_equal(n, 4);
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
					 3.0), 0);
	assert_int_equal(store_token_add(st, "t", (const uint8_t *)
					 "0123456789abcdef0123456789abcdef",
					 3.0), GERR_STATE);
	assert_int_equal(store_event(st, 3.0, job, l.id, 1, w, "result", NULL),
			 0);
	assert_int_equal(store_commit(st), 0);
	assert_int_equal(store_commit(st), GERR_STATE);

	reopen(f);
	st = f->st;
	{
		struct store_lease g;
		uint8_t key[32];

		get_lease(st, l.id, &g);
		assert_int_equal(g.state, LEASE_DONE);
		assert_string_equal(g.result, "r");
		store_lease_clear(&g);
		assert_int_equal(store_token_get(st, "t", key), 0);
		assert_memory_equal(key, "0123456789abcdef0123456789abcdef",
				    32);
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
	assert_int_equal(store_token_add(f->st, "w1", key, 1.0), 0);
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
	assert_int_equal(store_token_get(f->st, "w1", key), 0);
	assert_int_equal(key[2], 3);
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
		    store_worker_upsert(st, "w", "cpu", 1.0, &w) ||
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

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_open_fresh_and_reopen),
		T(test_open_refuses_newer_schema),
		T(test_open_refuses_foreign_db),
		T(test_open_not_a_database),
		T(test_open_bad_paths),
		T(test_jobs),
		T(test_job_next_carvable),
		T(test_lease_life_cycle),
		T(test_claim_order_and_filter),
		T(test_stale_epochs_change_nothing),
		T(test_transition_table),
		T(test_expiry_reissues_with_checkpoint),
		T(test_reject_then_failed),
		T(test_cancel),
		T(test_workers),
		T(test_tokens),
		T(test_token_migration),
		T(test_events),
		T(test_transactions),
		T(test_durability),
		T(test_durable_after_crash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
