/* control_check.c - `gpuctl check` (control.h): SQLite's full integrity
 * check, every stored answer and part against its digest (migration 015:
 * a value changed in place, which the integrity check cannot see), and
 * every blob a row names, present with the right hash; jobs whose answers,
 * parts or blobs are damaged are marked (store_damage_set) so status shows
 * them. The digests' findings are lines of the database's verdict.
 *
 * Steps, none on the loop for long: list (database thread: integrity check
 * and the references), read and hash every blob (thread pool), confirm and
 * mark (database thread: a problem counts only if a row still names the
 * blob and it is still bad there, so a checkpoint replaced while the check
 * ran is no damage), reply (loop).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "blob_audit.h"
#include "clock.h"
#include "control_internal.h"
#include "dbq.h"
#include "event_note.h"
#include "gerr.h"
#include "gpud.h"
#include "scheduler.h"

/* The integrity check's lines kept for the reply, and the problems listed
 * in it (all are counted and marked): a reply stays far below a frame's
 * bound however much is lost. */
#define CHECK_MAX_LINES 100
#define CHECK_MAX_LISTED 1000
/* Digest findings kept (all are counted): each is a line and a mark. */
#define CHECK_MAX_DIGESTS 100

struct check {
	struct ctl_req *r;
	uv_work_t work;
	char **lines;            /* integrity_check's problems */
	size_t nlines;
	struct store_blob_ref *refs;
	size_t nrefs;
	struct audit_problem *probs;
	size_t nprobs, checked;
	struct store_digest_bad *bad; /* answers and parts not as written */
	size_t nbad;
	uint64_t bad_total;
	int rc;                  /* the first step that failed */
	char msg[256];
};

static void check_free(struct check *c)
{
	store_lines_free(c->lines, c->nlines);
	free(c->refs);
	free(c->probs);
	free(c->bad);
	free(c);
}

static void check_fail(struct check *c, const char *msg)
{
	struct ctl_req *r = c->r;

	snprintf(r->err, sizeof(r->err), "check failed: %s", msg);
	check_free(c);
	ctl_finish(r);
}

static void problem_text(const struct audit_problem *p, char *out, size_t n)
{
	const struct store_blob_ref *f = p->ref;

	if (f->lease_id)
		snprintf(out, n, "%s %" PRId64 ": blob %.16s %s", f->where,
			 f->lease_id, f->hash, audit_problem_name(p->rc));
	else
		snprintf(out, n, "%s %" PRId64 ": blob %.16s %s", f->where,
			 f->job_id, f->hash, audit_problem_name(p->rc));
}

static int ref_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct store_blob_ref *)elem)->hash);
}

/* The mark of job among dmg's nd: a further problem counted (NULL), or a
 * new mark whose reason the caller writes into the text returned. */
static char *damage_slot(struct store_damage *dmg, size_t *nd,
			 char (*why)[200], int64_t job)
{
	for (size_t k = 0; k < *nd; k++)
		if (dmg[k].job_id == job) {
			dmg[k].problems++;
			return NULL;
		}
	dmg[*nd] = (struct store_damage){ .job_id = job, .reason = why[*nd],
					  .problems = 1 };
	return why[(*nd)++];
}

/* Database thread: keep the problems that are still true now that nothing
 * can move between the look and the verdict, and mark their jobs. */
static void mark_work(struct store *st, void *arg)
{
	struct check *c = arg;
	struct store_blob_ref *now = NULL;
	struct store_damage *dmg = NULL;
	char (*why)[200] = NULL;
	size_t nnow = 0, nd = 0, kept = 0;

	if ((c->rc = store_blob_refs(st, 0, &now, &nnow))) {
		snprintf(c->msg, sizeof(c->msg), "%s", store_errmsg(st));
		return;
	}
	for (size_t i = 0; i < c->nprobs; i++) {
		struct audit_problem *p = &c->probs[i];

		if (!bsearch(p->ref->hash, now, nnow, sizeof(*now), ref_cmp))
			continue;
		if (p->rc != GERR_INVAL &&
		    (p->rc = blob_store_check(c->r->d->cfg.data_dir, p->ref->hash)) == 0)
			continue;
		c->probs[kept++] = *p;
	}
	c->nprobs = kept;
	dmg = calloc(kept + c->nbad + 1, sizeof(*dmg));
	why = calloc(kept + c->nbad + 1, sizeof(*why));
	if (!dmg || !why) {
		c->rc = GERR_NOMEM;
		snprintf(c->msg, sizeof(c->msg), "out of memory");
		goto out;
	}
	/* One mark per job: its first problem, and how many it has; a
	 * damaged answer or part first, then its blobs. */
	for (size_t i = 0; i < c->nbad; i++) {
		char *w = damage_slot(dmg, &nd, why, c->bad[i].job_id);

		if (w)
			audit_digest_text(&c->bad[i], w, sizeof(*why));
	}
	for (size_t i = 0; i < kept; i++) {
		char *w = damage_slot(dmg, &nd, why, c->probs[i].ref->job_id);

		if (w)
			problem_text(&c->probs[i], w, sizeof(*why));
	}
	if ((c->rc = store_damage_set(st, dmg, nd, gclock_wall())))
		snprintf(c->msg, sizeof(c->msg), "cannot mark the damaged jobs: %s",
			 store_errmsg(st));
out:
	free(dmg);
	free(why);
	free(now);
}

static void mark_after(void *arg)
{
	struct check *c = arg;
	struct ctl_req *r = c->r;
	struct ctlcmd_problem *rows = NULL;
	int64_t *jobs = NULL;
	size_t nrows = 0, njobs = 0;

	if (c->rc) {
		check_fail(c, c->msg);
		return;
	}
	rows = ctl_problem_rows(c->probs, c->nprobs, CHECK_MAX_LISTED, &nrows);
	jobs = calloc(c->nprobs + c->nbad + 1, sizeof(*jobs));
	/* Each damaged job once, in the order first found. */
	for (size_t i = 0; jobs && i < c->nbad + c->nprobs; i++) {
		int64_t job = i < c->nbad ? c->bad[i].job_id
					  : c->probs[i - c->nbad].ref->job_id;
		size_t k = 0;

		while (k < njobs && jobs[k] != job)
			k++;
		if (k == njobs)
			jobs[njobs++] = job;
	}
	if (rows && jobs)
		r->reply = ctlcmd_reply_encode(CTLCMD_CHECK, &(struct ctlcmd_reply){
			.damaged = c->nlines > 0 || c->nprobs > 0,
			.database = (const char **)c->lines, .n_database = c->nlines,
			.references = (int64_t)c->nrefs, .blobs_checked = (int64_t)c->checked,
			.problems = rows, .n_problems = nrows,
			.problems_total = (int64_t)c->nprobs,
			.damaged_jobs = jobs, .n_damaged_jobs = njobs });
	if (!r->reply)
		snprintf(r->err, sizeof(r->err), "out of memory");
	free(rows);
	free(jobs);
	event_note(r->d->dbq, "check", c->nlines || c->nprobs ? "problems found" : "sound");
	check_free(c);
	ctl_finish(r);
}

/* Thread pool: read and hash every named blob. */
static void blobs_work(uv_work_t *w)
{
	struct check *c = w->data;

	c->rc = audit_blobs(c->r->d->cfg.data_dir, c->refs, c->nrefs, &c->probs,
			    &c->nprobs, &c->checked);
	if (c->rc)
		snprintf(c->msg, sizeof(c->msg), "reading the blobs: %s",
			 gerr_str(c->rc));
}

static void blobs_after(uv_work_t *w, int status)
{
	struct check *c = w->data;

	if (status || c->rc) {
		check_fail(c, status ? "gpud is shutting down" : c->msg);
		return;
	}
	if (dbq_submit(c->r->d->dbq, mark_work, mark_after, c))
		check_fail(c, "gpud is shutting down");
}

/* Database thread: SQLite's own check, the digests, then the references. */
static void list_work(struct store *st, void *arg)
{
	struct check *c = arg;

	c->rc = store_integrity(st, 0, CHECK_MAX_LINES, &c->lines, &c->nlines);
	/* A page SQLite cannot walk would fail every digest too: the
	 * integrity check's lines say it first. */
	if (!c->rc && c->nlines == 0)
		c->rc = store_digest_audit(st, CHECK_MAX_DIGESTS, &c->bad,
					   &c->nbad, &c->bad_total);
	if (!c->rc && (c->rc = audit_digest_lines(c->bad, c->nbad,
						  c->bad_total, &c->lines,
						  &c->nlines)) != 0) {
		snprintf(c->msg, sizeof(c->msg), "out of memory");
		return;
	}
	if (!c->rc)
		c->rc = store_blob_refs(st, 0, &c->refs, &c->nrefs);
	if (c->rc)
		snprintf(c->msg, sizeof(c->msg), "%s", store_errmsg(st));
}

static void list_after(void *arg)
{
	struct check *c = arg;

	if (c->rc) {
		check_fail(c, c->msg);
		return;
	}
	c->work.data = c;
	if (uv_queue_work(c->r->d->loop, &c->work, blobs_work, blobs_after))
		check_fail(c, "gpud is shutting down");
}

void ctl_check_start(struct ctl_req *r)
{
	struct check *c = calloc(1, sizeof(*c));

	if (!c) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		ctl_finish(r);
		return;
	}
	c->r = r;
	if (dbq_submit(r->d->dbq, list_work, list_after, c))
		check_fail(c, "gpud is shutting down");
}
