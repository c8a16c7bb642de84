/* control_internal.h - what the control API's files share: one gpuctl
 * request (struct ctl_req) as it moves between the loop thread, the
 * database thread and the thread pool, and each group file's steps,
 * which control.c's command table names. Private to daemon/control/.
 *
 * Files: control.c (dispatch, the table, submit, cancel/pause/resume,
 * extend, workers, ping, workloads), control_req.c (ctl_finish and the
 * helpers the commands share: the error reply, a check's problem rows), control_jobs.c (status, history,
 * priority), control_answer.c (result, export), control_tokens.c
 * (token_add, token_list, token_revoke), control_workloads.c (the
 * workloads reply), control_check.c (check), control_backup.c (backup),
 * control_page.c (page_link), control_workers.c (worker_drain,
 * worker_resume, worker_forgive), control_events.c (events),
 * control_lifecycle.c (requeue, submit's --after and --time-limit).
 *
 * Ownership: a request is owned by whoever runs its current step (one at
 * a time; a step hands it on by queueing the next); ctl_finish (loop
 * thread) sends the reply and frees it. r->in was decoded from r->req by
 * ctlcmd_decode before the first step and borrows from it.
 *
 * Threads: *_start and *_after functions run on the loop thread, *_work
 * functions taking a struct store on the database thread (dbq.h).
 */
#ifndef GPUD_CONTROL_INTERNAL_H
#define GPUD_CONTROL_INTERNAL_H

#include <stdint.h>
#include <jansson.h>
#include <uv.h>

#include "auth.h"
#include "control.h"
#include "ctlcmd.h"
#include "job_parts.h"
#include "store.h"
#include "workload.h"

struct ctl_req {
	struct gpud *d;
	json_t *req;            /* owned */
	const char *cmd;        /* the request's "cmd", borrowed from req */
	enum auth_role caller;  /* the rights it was asked with */
	char caller_name[CTLCMD_OWNER_MAX + 1]; /* who asked; "" not known */
	struct ctlcmd_req in;   /* its checked fields, borrowed from req */
	control_done_fn done;
	void *opaque;
	json_t *reply;          /* built by work(), finished by after() */
	char err[512];
	/* submit */
	const struct workload *wl;
	char *params;
	uint64_t total_units;
	int replicate;          /* --check full */
	uint8_t *input;         /* the submitted file, owned */
	size_t input_len;
	uv_work_t work;
	/* token */
	char *token_text;
	struct auth_token tok;
	enum auth_role role;        /* token_add: the new token's */
	int stored;             /* token_add: stored, its after step replies */
	int storage_rc;         /* outcome of a write that could fail for disk reasons */
	/* export */
	void *out;              /* bulk output, handed to done() */
	size_t out_len;
	char *job_params, *job_answer;
	struct job_parts parts;
	/* result */
	struct store_job jobrow;
	/* status, history: the jobs while the reply is built, owned (freed
	 * by ctl_jobs_after) */
	struct ctl_jobs *jobs;
	/* workers: the stored workers and their rows, owned (freed by its
	 * after step) */
	struct store_worker *ws;
	size_t n_ws;
	struct ctlcmd_worker *wrows;
	/* page_link: the key and its hash between steps, owned */
	struct page_step *page;
};

/* control_req.c. {"ok":false,"error":msg}, a new reference. */
json_t *ctl_error_reply(const char *msg);
struct audit_problem;
/* The first max of probs (n of them) as a reply's rows, a new array of
 * *ret_n that borrows from probs; NULL when out of memory. Any thread. */
struct ctlcmd_problem *ctl_problem_rows(const struct audit_problem *probs,
					size_t n, size_t max, size_t *ret_n);
/* Loop thread: reply (r->reply, or an error from r->err) and free r. */
void ctl_finish(struct ctl_req *r);
/* The JSON value of text, or JSON null when text is NULL or not JSON; a
 * new reference. Any thread. */
json_t *ctl_json_from_text(const char *text);

/* control_answer.c: result and export. The *_work steps read the job and
 * its parts; the *_after steps hand the rendering to the thread pool,
 * whose step finishes the request. */
void ctl_result_load_work(struct store *st, void *arg);
void ctl_result_load_after(void *arg);
void ctl_export_load_work(struct store *st, void *arg);
void ctl_export_load_after(void *arg);

/* control_jobs.c: status, history and priority. Each work step reads
 * the jobs' rows (r->jobs) or sets r->err; ctl_jobs_after adds what only
 * the loop knows (rates, reasons), encodes the reply and finishes the
 * request. */
void ctl_status_work(struct store *st, void *arg);
void ctl_history_work(struct store *st, void *arg);
void ctl_priority_work(struct store *st, void *arg);
void ctl_jobs_after(void *arg);

/* control_tokens.c: token_add makes the token on the loop and stores it
 * on the database thread; list and revoke are database steps, and
 * revoke's after cuts the token's connections. */
void ctl_token_add_start(struct ctl_req *r);
void ctl_token_list_work(struct store *st, void *arg);
void ctl_token_revoke_work(struct store *st, void *arg);
void ctl_token_revoke_after(void *arg);

/* control_workloads.c: the reply to "workloads" (the registry's
 * workloads, their parameters and exports). Any thread; a new reference,
 * NULL when out of memory. */
json_t *ctl_workloads_reply(void);

/* control_check.c: check, from start to ctl_finish (database thread,
 * then the thread pool, then the database thread again). */
void ctl_check_start(struct ctl_req *r);
/* control_backup.c: backup, from start to ctl_finish (thread pool). */
void ctl_backup_start(struct ctl_req *r);
/* control_page.c: page_link, from start to ctl_finish (the key made on
 * the loop, its hash stored on the database thread). */
void ctl_page_link_start(struct ctl_req *r);
/* control_events.c: events, one database step (the job's state and
 * its events) and the generic after step. */
void ctl_events_work(struct store *st, void *arg);
/* control_workers.c: worker_drain, worker_resume and worker_forgive, one
 * database step (the generic after step replies; resume and forgive wake
 * parked claims). */
void ctl_worker_work(struct store *st, void *arg);
/* control_lifecycle.c: requeue, one database step (the generic after
 * step replies and wakes parked claims); and submit's --after and
 * --time-limit, stored in submit's transaction for job id: 0, or the
 * store's code (with r->err set when the request is at fault). */
void ctl_requeue_work(struct store *st, void *arg);
int ctl_submit_lifecycle(struct store *st, struct ctl_req *r, int64_t id);

#endif
