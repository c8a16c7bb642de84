/* control_internal.h - what control.c, control_answer.c, control_jobs.c
 * and control_req.c share: one gpuctl request as it moves between the
 * loop thread, the database thread and the thread pool. Private to those
 * files.
 *
 * A request is owned by whoever runs its current step; ctl_finish (loop
 * thread) sends the reply and frees it.
 */
#ifndef GPUD_CONTROL_INTERNAL_H
#define GPUD_CONTROL_INTERNAL_H

#include <stdint.h>
#include <jansson.h>
#include <uv.h>

#include "auth.h"
#include "control.h"
#include "job_parts.h"
#include "store.h"
#include "workload.h"

struct ctl_req {
	struct gpud *d;
	json_t *req;            /* owned */
	const char *cmd;
	int64_t job;            /* 0 when the request names none */
	control_done_fn done;
	void *opaque;
	json_t *reply;          /* built by work(), finished by after() */
	char err[512];
	/* submit */
	const struct workload *wl;
	char *params;
	uint64_t total_units;
	int replicate;          /* --check full */
	char name[STORE_JOB_NAME_MAX + 1]; /* "" for none */
	int priority;
	uint8_t *input;         /* the submitted file, owned */
	size_t input_len;
	uv_work_t work;
	/* token */
	char *token_text;
	struct auth_token tok;
	enum auth_role role;        /* token_add: the new token's */
	int storage_rc;         /* outcome of a write that could fail for disk reasons */
	/* export */
	char *what;
	void *out;              /* bulk output, handed to done() */
	size_t out_len;
	char *job_params, *job_answer;
	struct job_parts parts;
	/* result */
	struct store_job jobrow;
};

/* {"ok":false,"error":msg}, a new reference. */
json_t *ctl_error_reply(const char *msg);
/* Loop thread: reply (r->reply, or an error from r->err) and free r. */
void ctl_finish(struct ctl_req *r);
/* The JSON value of text, or JSON null when text is NULL or not JSON. */
json_t *ctl_json_from_text(const char *text);

/* control_answer.c: `gpuctl result` and `gpuctl export`. The *_work steps
 * run on the database thread (dbq work), the *_after steps on the loop
 * thread, where they hand the rendering to the thread pool. */
void ctl_result_load_work(struct store *st, void *arg);
void ctl_result_load_after(void *arg);
void ctl_export_load_work(struct store *st, void *arg);
void ctl_export_load_after(void *arg);

/* The request's "job": 0, or GERR_INVAL with r->err set. */
int ctl_read_job(struct ctl_req *r);

/* control_jobs.c: status, history and priority, from start to ctl_finish
 * (loop thread). */
void ctl_jobs_start(struct ctl_req *r);

/* control_tokens.c: token_add, token_list and token_revoke, from start
 * to ctl_finish (loop thread). */
void ctl_token_start(struct ctl_req *r);

/* control_workloads.c: the reply to "workloads" (the registry's
 * workloads, their parameters and exports). Any thread; a new reference. */
json_t *ctl_workloads_reply(void);

/* control_check.c: `gpuctl check`, from start to ctl_finish (loop thread). */
void ctl_check_start(struct ctl_req *r);
/* control_backup.c: `gpuctl backup`, from start to ctl_finish (loop
 * thread). */
void ctl_backup_start(struct ctl_req *r);

#endif
