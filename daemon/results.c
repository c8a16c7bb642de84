/* results.c - the results directory (results.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blob.h"
#include "datadir.h"
#include "dbq.h"
#include "fileio.h"
#include "gerr.h"
#include "gpud.h"
#include "job_parts.h"
#include "results.h"
#include "store.h"

#define RESULTS_PATH_MAX 4200

int results_prepare(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return gerr_fail(gerr_from_errno(errno), err, errlen,
				 "cannot create the results directory %s: %s",
				 dir, strerror(errno));
	int rc = datadir_check_mode(dir, err, errlen);
	if (rc)
		return rc;
	/* Its parent may be private (DATA); the plots are meant to be read. */
	if (chmod(dir, 0755) != 0)
		return gerr_fail(gerr_from_errno(errno), err, errlen,
				 "cannot make the results directory %s readable: %s",
				 dir, strerror(errno));
	return 0;
}

static int fetch(void *opaque, const char *hash, void **ret, size_t *ret_len)
{
	uint8_t *blob = NULL, *raw = NULL;
	size_t len = 0, raw_len = 0;
	struct blob_info info;
	char err[128];
	int rc = blob_store_get(opaque, hash, &blob, &len);

	if (!rc)
		rc = blob_decode(blob, len, &info, &raw, &raw_len, err, sizeof(err));
	free(blob);
	if (rc)
		return rc;
	*ret = raw;
	*ret_len = raw_len;
	return 0;
}

struct wl_blob_reader results_blob_reader(const char *data_dir)
{
	return (struct wl_blob_reader){(void *)data_dir, fetch};
}

static json_t *parse(const char *text)
{
	return text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
}

int results_render(const struct workload *wl, const char *params,
		   const char *answer, const struct wl_parts *parts,
		   const char *data_dir, char **ret_svg, size_t *ret_len,
		   char *err, size_t errlen)
{
	struct wl_blob_reader rd = results_blob_reader(data_dir);
	json_t *p, *a;
	int rc;

	if (!wl || !wl->render_plot)
		return gerr_fail(GERR_UNSUPPORTED, err, errlen, "%s jobs have no plot",
				 wl ? wl->name : "these");
	p = parse(params);
	a = parse(answer);
	if (!p)
		rc = gerr_fail(GERR_CORRUPT, err, errlen, "the job's params are unreadable");
	else if (!a || json_is_null(a))
		rc = gerr_fail(GERR_NOTFOUND, err, errlen, "nothing merged yet to plot");
	else
		rc = wl->render_plot(workload_ctx(wl), p, a, parts, &rd, ret_svg,
				     ret_len, err, errlen);
	json_decref(p);
	json_decref(a);
	return rc;
}

int results_path(const char *dir, int64_t job, const char *name,
		 char *ret_path, size_t pathlen)
{
	int n = snprintf(ret_path, pathlen, "%s/job-%" PRId64 "/%s", dir, job, name);

	return n < 0 || (size_t)n >= pathlen ? GERR_TOOBIG : 0;
}

int results_store(const char *dir, int64_t job, const char *name,
		  const void *bytes, size_t len, char *ret_path,
		  size_t pathlen, char *err, size_t errlen)
{
	char sub[RESULTS_PATH_MAX], path[RESULTS_PATH_MAX];
	struct stat sb;
	int r;

	if (!name || !name[0] || strchr(name, '/') || name[0] == '.')
		return gerr_fail(GERR_INVAL, err, errlen, "bad plot name");
	snprintf(sub, sizeof(sub), "%s/job-%" PRId64, dir, job);
	if (results_path(dir, job, name, path, sizeof(path)))
		return gerr_fail(GERR_TOOBIG, err, errlen, "results path too long");
	if (mkdir(sub, 0755) != 0 && errno != EEXIST)
		return gerr_fail(gerr_from_errno(errno), err, errlen,
				 "cannot create %s: %s", sub, strerror(errno));
	if (lstat(sub, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return gerr_fail(GERR_STATE, err, errlen,
				 "%s is not a directory; not writing into it", sub);
	/* mkdir's mode went through the umask. */
	if ((sb.st_mode & 07777) != 0755 && chmod(sub, 0755) != 0)
		return gerr_fail(gerr_from_errno(errno), err, errlen,
				 "cannot chmod %s: %s", sub, strerror(errno));
	/* A temporary name of its own: the finish and a gpuctl result may
	 * write at once. */
	r = fileio_write_atomic(path, bytes, len, 0644);
	if (r)
		return gerr_fail(r, err, errlen, "cannot write %s: %s", path,
				 strerror(errno));
	if (ret_path)
		snprintf(ret_path, pathlen, "%s", path);
	return 0;
}

/* ---- when a job finishes ---- */

struct results_req {
	uv_work_t work;
	struct gpud *d;
	int64_t job;
	struct store_job row;
	struct job_parts parts;
	const struct workload *wl;
	int rc;
	char path[RESULTS_PATH_MAX];
	char err[WL_ERRLEN + 64];
};

static void req_free(struct results_req *r)
{
	job_parts_clear(&r->parts);
	store_job_clear(&r->row);
	free(r);
}

/* Database thread: the job and its parts. */
static void load_work(struct store *st, void *arg)
{
	struct results_req *r = arg;

	r->rc = store_job_get(st, r->job, &r->row);
	if (r->rc == 0)
		r->rc = job_parts_load(&r->parts, st, r->job);
	if (r->rc)
		snprintf(r->err, sizeof(r->err), "cannot load the job: %s",
			 gerr_str(r->rc));
}

/* Thread pool: render and write. */
static void render_work(uv_work_t *w)
{
	struct results_req *r = w->data;
	char *svg = NULL;
	size_t len = 0;

	r->rc = results_render(r->wl, r->row.params, r->row.answer, &r->parts.pub,
			       r->d->cfg.data_dir, &svg, &len, r->err,
			       sizeof(r->err));
	if (r->rc == 0)
		r->rc = results_store(r->d->cfg.results_dir, r->job,
				      r->wl->plot_name, svg, len, r->path,
				      sizeof(r->path), r->err, sizeof(r->err));
	free(svg);
}

static void render_after(uv_work_t *w, int status)
{
	struct results_req *r = w->data;

	if (status == 0 && r->rc == 0)
		LOG_INFO(&r->d->log, "plot written job=%" PRId64 " path=%s", r->job,
			 r->path);
	else
		LOG_WARN(&r->d->log, "no plot for job=%" PRId64 ": %s", r->job,
			 status ? "cancelled" : r->err);
	req_free(r);
}

static void load_after(void *arg)
{
	struct results_req *r = arg;

	r->wl = r->rc ? NULL : workload_find(r->row.workload);
	if (r->rc || !r->wl || !r->wl->render_plot || r->row.state != JOB_DONE ||
	    r->d->stopping) {
		if (r->rc)
			LOG_WARN(&r->d->log, "no plot for job=%" PRId64 ": %s",
				 r->job, r->err);
		req_free(r);
		return;
	}
	r->work.data = r;
	if (uv_queue_work(r->d->loop, &r->work, render_work, render_after))
		req_free(r);
}

void results_job_done(struct gpud *d, int64_t job)
{
	struct results_req *r;

	if (d->stopping)
		return;
	r = calloc(1, sizeof(*r));
	if (!r) {
		LOG_WARN(&d->log, "no plot for job=%" PRId64 ": out of memory", job);
		return;
	}
	r->d = d;
	r->job = job;
	if (dbq_submit(d->dbq, load_work, load_after, r))
		free(r);
}
