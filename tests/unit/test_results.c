/* test_results.c - daemon/results.c: the results directory made 0755
 * whatever the umask and refused when others may write it; a job's plot
 * written as RESULTS/job-N/NAME (0644), replaced whole, bad names and a
 * job-N that is no plain directory refused; the path's bound; rendering
 * through the workload's hook and the stored blobs' reader; and a finished
 * job's plot written in the background on a real loop and database thread
 * (the store tests' fixture, store_fx.c). */
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
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "log_fx.h"
#include "results.h"
#include "store.h"
#include "store_fx.h"
#include "unit_main.h"
#include "workload.h"

static mode_t mode_of(const char *path)
{
	struct stat sb;

	assert_int_equal(lstat(path, &sb), 0);
	return sb.st_mode & 07777;
}

/* The whole file as a string (malloc'ed). */
static char *slurp(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (ret_len)
		*ret_len = (size_t)n;
	return buf;
}

static void test_prepare(void **state)
{
	struct fx *f = *state;
	char dir[128], err[512], file[160];
	mode_t old = umask(077);

	snprintf(dir, sizeof(dir), "%s/results", f->dir);
	/* Missing: made, readable by all despite the umask. */
	assert_int_equal(results_prepare(dir, err, sizeof(err)), 0);
	assert_int_equal(mode_of(dir), 0755);
	/* Existing and private: opened up. */
	assert_int_equal(chmod(dir, 0700), 0);
	assert_int_equal(results_prepare(dir, err, sizeof(err)), 0);
	assert_int_equal(mode_of(dir), 0755);
	/* Writable by others: refused and left as it is. */
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(results_prepare(dir, err, sizeof(err)), GERR_PERM);
	assert_non_null(strstr(err, dir));
	assert_int_equal(mode_of(dir), 0777);
	assert_int_equal(chmod(dir, 0755), 0);
	/* Its parent missing: the reason and the directory named. */
	snprintf(file, sizeof(file), "%s/no/results", f->dir);
	assert_int_equal(results_prepare(file, err, sizeof(err)), GERR_NOTFOUND);
	assert_non_null(strstr(err, "cannot create the results directory"));
	assert_non_null(strstr(err, file));
	/* A file where the directory should be. */
	snprintf(file, sizeof(file), "%s/plain", f->dir);
	fclose(fopen(file, "w"));
	assert_int_equal(results_prepare(file, err, sizeof(err)), GERR_INVAL);
	umask(old);
}

static void test_path(void **state)
{
	char path[64];

	(void)state;
	assert_int_equal(results_path("/var/lib/gpud-results", 42,
				      "graveler-histogram.svg", path,
				      sizeof(path)), 0);
	assert_string_equal(path, "/var/lib/gpud-results/job-42/"
			    "graveler-histogram.svg");
	/* "/r/job-7/x.svg" is 14 bytes: 15 fit with its NUL, 14 do not. */
	assert_int_equal(results_path("/r", 7, "x.svg", path, 15), 0);
	assert_string_equal(path, "/r/job-7/x.svg");
	assert_int_equal(results_path("/r", 7, "x.svg", path, 14), GERR_TOOBIG);
	assert_int_equal(results_path("/r", INT64_MAX, "x.svg", path,
				      sizeof(path)), 0);
	assert_string_equal(path, "/r/job-9223372036854775807/x.svg");
}

static void test_store(void **state)
{
	struct fx *f = *state;
	char dir[128], path[256], want[256], err[512], *text;
	mode_t old = umask(077);
	size_t len;

	snprintf(dir, sizeof(dir), "%s/results", f->dir);
	assert_int_equal(results_prepare(dir, err, sizeof(err)), 0);
	assert_int_equal(results_store(dir, 3, "plot.svg", "<svg/>", 6, path,
				       sizeof(path), err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/job-3/plot.svg", dir);
	assert_string_equal(path, want);
	text = slurp(path, &len);
	assert_int_equal(len, 6);
	assert_string_equal(text, "<svg/>");
	free(text);
	assert_int_equal(mode_of(path), 0644);
	snprintf(want, sizeof(want), "%s/job-3", dir);
	assert_int_equal(mode_of(want), 0755);
	/* Again: replaced whole, a shorter file, still 0644; no path
	 * wanted this time. A private job-N is opened up again. */
	assert_int_equal(chmod(want, 0700), 0);
	assert_int_equal(results_store(dir, 3, "plot.svg", "<g>", 3, NULL, 0, err,
				       sizeof(err)), 0);
	text = slurp(path, &len);
	assert_int_equal(len, 3);
	assert_string_equal(text, "<g>");
	free(text);
	assert_int_equal(mode_of(path), 0644);
	assert_int_equal(mode_of(want), 0755);
	/* An empty plot is a file too. */
	assert_int_equal(results_store(dir, 4, "e.svg", "", 0, path, sizeof(path),
				       err, sizeof(err)), 0);
	text = slurp(path, &len);
	assert_int_equal(len, 0);
	free(text);
	umask(old);
}

static void test_store_refused(void **state)
{
	struct fx *f = *state;
	char dir[128], path[400], sub[200], other[200], err[512], *big;
	static const char *const bad[] = { "", "a/b", "/abs", ".hidden", "..",
					   "." };

	snprintf(dir, sizeof(dir), "%s/results", f->dir);
	assert_int_equal(results_prepare(dir, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (results_store(dir, 1, bad[i], "x", 1, NULL, 0, err,
				  sizeof(err)) != GERR_INVAL)
			fail_msg("name '%s' taken", bad[i]);
		assert_string_equal(err, "bad plot name");
	}
	assert_int_equal(results_store(dir, 1, NULL, "x", 1, NULL, 0, err,
				       sizeof(err)), GERR_INVAL);
	/* Nothing was made for them. */
	snprintf(sub, sizeof(sub), "%s/job-1", dir);
	assert_int_equal(access(sub, F_OK), -1);
	/* job-N a link to a directory elsewhere: not followed. */
	snprintf(other, sizeof(other), "%s/elsewhere", f->dir);
	assert_int_equal(mkdir(other, 0755), 0);
	assert_int_equal(symlink(other, sub), 0);
	assert_int_equal(results_store(dir, 1, "p.svg", "x", 1, NULL, 0, err,
				       sizeof(err)), GERR_STATE);
	snprintf(path, sizeof(path), "%s is not a directory; not writing into it",
		 sub);
	assert_string_equal(err, path);
	snprintf(path, sizeof(path), "%s/p.svg", other);
	assert_int_equal(access(path, F_OK), -1);
	/* job-N a plain file. */
	snprintf(sub, sizeof(sub), "%s/job-2", dir);
	fclose(fopen(sub, "w"));
	assert_int_equal(results_store(dir, 2, "p.svg", "x", 1, NULL, 0, err,
				       sizeof(err)), GERR_STATE);
	/* The results directory gone. */
	snprintf(other, sizeof(other), "%s/none", f->dir);
	assert_int_equal(results_store(other, 5, "p.svg", "x", 1, NULL, 0, err,
				       sizeof(err)), GERR_NOTFOUND);
	assert_non_null(strstr(err, "cannot create"));
	/* A path past the bound. */
	big = malloc(5000);
	assert_non_null(big);
	memset(big, 'n', 4999);
	big[4999] = '\0';
	assert_int_equal(results_store(dir, 5, big, "x", 1, NULL, 0, err,
				       sizeof(err)), GERR_TOOBIG);
	assert_string_equal(err, "results path too long");
	free(big);
}

/* Othello's plot: params and an answer of 10 positions. */
static const char othello_params[] =
	"{\"mode\":\"random\",\"positions\":10,\"empties\":12,\"seed\":\"1\"}";

static char *othello_answer(void)
{
	json_t *a = json_pack("{s:i, s:i, s:i, s:i, s:i, s:[], s:[]}",
			      "positions", 10, "leases", 1, "nodes", 100,
			      "usec", 5, "mismatches", 0, "mismatch_list", "hist");
	json_t *hist = json_object_get(a, "hist");
	char *text;

	for (int b = 0; b < 65; b++)
		json_array_append_new(hist, json_integer(b == 30 ? 4 : b == 32 ? 1
							 : b == 40 ? 5 : 0));
	text = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	assert_non_null(text);
	return text;
}

static void test_render(void **state)
{
	struct fx *f = *state;
	const struct workload *wl = workload_find("othello");
	const struct workload noplot = { .name = "noplot" };
	struct wl_parts none = { 0 };
	char err[WL_ERRLEN + 64], *svg = NULL, *want = NULL, *answer;
	size_t len = 0, want_len = 0;
	json_t *p, *a;

	assert_non_null(wl);
	answer = othello_answer();
	assert_int_equal(results_render(NULL, othello_params, answer, &none,
					f->dir, &svg, &len, err, sizeof(err)),
			 GERR_UNSUPPORTED);
	assert_string_equal(err, "these jobs have no plot");
	assert_int_equal(results_render(&noplot, othello_params, answer, &none,
					f->dir, &svg, &len, err, sizeof(err)),
			 GERR_UNSUPPORTED);
	assert_string_equal(err, "noplot jobs have no plot");
	assert_int_equal(results_render(wl, "{bad", answer, &none, f->dir, &svg,
					&len, err, sizeof(err)), GERR_CORRUPT);
	assert_string_equal(err, "the job's params are unreadable");
	assert_int_equal(results_render(wl, NULL, answer, &none, f->dir, &svg,
					&len, err, sizeof(err)), GERR_CORRUPT);
	/* No answer yet (NULL or JSON null): nothing to plot. */
	assert_int_equal(results_render(wl, othello_params, NULL, &none, f->dir,
					&svg, &len, err, sizeof(err)), GERR_NOTFOUND);
	assert_string_equal(err, "nothing merged yet to plot");
	assert_int_equal(results_render(wl, othello_params, "null", &none, f->dir,
					&svg, &len, err, sizeof(err)), GERR_NOTFOUND);
	assert_null(svg);
	/* The hook's own bytes, from the JSON texts. */
	assert_int_equal(results_render(wl, othello_params, answer, &none, f->dir,
					&svg, &len, err, sizeof(err)), 0);
	p = json_loads(othello_params, 0, NULL);
	a = json_loads(answer, 0, NULL);
	assert_int_equal(wl->render_plot(workload_ctx(wl), p, a, &none, NULL,
					 &want, &want_len, err, sizeof(err)), 0);
	assert_int_equal(len, want_len);
	assert_memory_equal(svg, want, len);
	assert_non_null(strstr(svg, "5 wins, 1 draws, 4 losses"));
	json_decref(p);
	json_decref(a);
	free(svg);
	free(want);
	free(answer);
}

static void test_blob_reader(void **state)
{
	struct fx *f = *state;
	struct wl_blob_reader rd = results_blob_reader(f->dir);
	static const char raw[] = "a lease's result, stored as a blob";
	char hash[BLOB_HASH_HEX], blobs[128];
	uint8_t *blob;
	size_t len, got_len = 0;
	void *got = NULL;

	assert_ptr_equal(rd.opaque, f->dir); /* borrowed */
	assert_int_equal(blob_encode(BLOB_RESULT, "othello", 7, 1, raw, sizeof(raw),
				     &blob, &len), 0);
	assert_int_equal(blob_store_put(f->dir, blob, len, hash), 0);
	free(blob);
	/* The raw bytes, decoded. */
	assert_int_equal(rd.fetch(rd.opaque, hash, &got, &got_len), 0);
	assert_int_equal(got_len, sizeof(raw));
	assert_memory_equal(got, raw, sizeof(raw));
	free(got);
	/* A hash not stored. */
	got = NULL;
	hash[0] = hash[0] == '0' ? '1' : '0';
	assert_int_equal(rd.fetch(rd.opaque, hash, &got, &got_len), GERR_NOTFOUND);
	assert_null(got);
	/* A stored file that is no blob. */
	assert_int_equal(blob_store_put(f->dir, "not a blob", 10, hash), 0);
	assert_true(rd.fetch(rd.opaque, hash, &got, &got_len) < 0);
	assert_null(got);
	snprintf(blobs, sizeof(blobs), "%s/blobs", f->dir);
	assert_int_equal(access(blobs, F_OK), 0);
}

/* ---- a job's end, on a loop and the database thread ---- */

static void on_closed(void *opaque)
{
	*(int *)opaque = 1;
}

/* results_job_done for each job in turn, then dbq_close, which lets the
 * loop run until every request and its rendering are over. */
static char *job_done(struct fx *f, const char *results, int stopping,
		      const int64_t *jobs, size_t n)
{
	uv_loop_t loop;
	struct gpud *d = calloc(1, sizeof(*d));
	struct cap c;
	int closed = 0;

	assert_non_null(d);
	assert_int_equal(uv_loop_init(&loop), 0);
	d->loop = &loop;
	d->log = (struct glog){ .prog = "gpud", .level = GLOG_INFO, .journal = 1 };
	d->cfg.data_dir = f->dir;
	d->cfg.results_dir = results;
	d->stopping = stopping;
	assert_int_equal(dbq_open(&loop, f->st, &d->dbq), 0);
	cap_start(&c);
	for (size_t i = 0; i < n; i++)
		results_job_done(d, jobs[i]);
	dbq_close(d->dbq, on_closed, &closed);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(closed, 1);
	assert_int_equal(uv_loop_close(&loop), 0);
	free(d);
	return cap_end(&c);
}

static void test_job_done(void **state)
{
	struct fx *f = *state;
	char results[128], path[256], want[1024], err[256], *answer, *log, *svg;
	int64_t done, active, missing = 999;
	size_t len;

	snprintf(results, sizeof(results), "%s/results", f->dir);
	assert_int_equal(results_prepare(results, err, sizeof(err)), 0);
	answer = othello_answer();
	assert_int_equal(store_job_insert(f->st, "othello", othello_params, 10, 1.0,
					  &done), 0);
	assert_int_equal(store_job_set_answer(f->st, done, answer, 10), 0);
	assert_int_equal(store_job_set_state(f->st, done, JOB_DONE, NULL, 2.0), 0);
	assert_int_equal(store_job_insert(f->st, "othello", othello_params, 10, 1.0,
					  &active), 0);
	assert_int_equal(store_job_set_answer(f->st, active, answer, 5), 0);
	free(answer);

	/* While gpud stops: nothing. */
	log = job_done(f, results, 1, &done, 1);
	assert_string_equal(log, "");
	free(log);
	assert_int_equal(results_path(results, done, "othello-scores.svg", path,
				      sizeof(path)), 0);
	assert_int_equal(access(path, F_OK), -1);

	/* The done job's plot is written and logged; the active job and a
	 * missing one get none, the missing one with a warning. */
	int64_t jobs[] = { active, done, missing };
	log = job_done(f, results, 0, jobs, 3);
	snprintf(want, sizeof(want), "<6>plot written job=%lld path=%s\n",
		 (long long)done, path);
	assert_non_null(strstr(log, want));
	snprintf(want, sizeof(want), "<4>no plot for job=%lld: cannot load the "
		 "job: not found\n", (long long)missing);
	assert_non_null(strstr(log, want));
	snprintf(want, sizeof(want), "job=%lld", (long long)active);
	assert_null(strstr(log, want));
	free(log);
	svg = slurp(path, &len);
	assert_non_null(strstr(svg, "5 wins, 1 draws, 4 losses"));
	free(svg);
	assert_int_equal(mode_of(path), 0644);
	assert_int_equal(results_path(results, active, "othello-scores.svg", path,
				      sizeof(path)), 0);
	assert_int_equal(access(path, F_OK), -1);

	/* A results directory that cannot take it: a warning naming why. */
	snprintf(path, sizeof(path), "%s/job-%lld", results, (long long)done);
	snprintf(want, sizeof(want), "rm -rf '%s' && touch '%s'", path, path);
	assert_int_equal(system(want), 0);
	log = job_done(f, results, 0, &done, 1);
	snprintf(want, sizeof(want), "<4>no plot for job=%lld: %s is not a "
		 "directory; not writing into it\n", (long long)done, path);
	assert_non_null(strstr(log, want));
	free(log);
}

UNIT_MAIN(T(test_prepare),
	T(test_path),
	T(test_store),
	T(test_store_refused),
	T(test_render),
	T(test_blob_reader),
	T(test_job_done))
