/* ctlreply.c - the control API's replies (ctlcmd.h): each command's
 * reply fields and the rows of its lists (a job, a worker, a token, a
 * problem, a workload with its parameters and exports), and decoding a
 * reply through them. Encoding is ctlcmd.c's (the same walk as a
 * request's); this file is the only place a reply key is spelled.
 *
 * Rules beyond a request's: a reply's field is required unless the
 * table says otherwise, and written always; a required one marked
 * absent_ok reads as its default when a reply leaves it out (what gpuctl
 * can show without: a stand-in's or an older gpud's reply), while the
 * MUST_ ones (ids, names, states) are refused when missing. A field with
 * nul reads JSON null as 0 / NULL and writes 0 / NULL as null. Lists are
 * arrays, decoded into new arrays (ctlcmd_reply_clear frees them); a
 * refusal names the field's path ("jobs[2].units_done").
 *
 * Invariant: what ctlcmd_reply_encode writes from a struct, decoding
 * gives back equal (test_ctl_reply.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctlcmd_field.h"
#include "gerr.h"

/* Reply fields: required unless noted; the small replies' refused with
 * a request's messages. */
#define R(m) offsetof(struct ctlcmd_reply, m)
#define R_JOB FLD("job", F_JOB, R(job), 1, 1, INT64_MAX, 0, NULL)
#define R_STATE FLD("state", F_STR, R(state), 1, 1, 32, 0, NULL)

static const struct ctlcmd_field ping_reply[] = {
	FLD("version", F_STR, R(version), 1, 0, 64, 0, NULL),
};
static const struct ctlcmd_field submit_reply[] = { R_JOB };
static const struct ctlcmd_field priority_reply[] = {
	R_JOB,
	FLD("priority", F_INT, R(priority), 1, CTLCMD_PRIORITY_MIN,
	  CTLCMD_PRIORITY_MAX, 0, NULL),
};
static const struct ctlcmd_field state_reply[] = { R_JOB, R_STATE };
static const struct ctlcmd_field requeue_reply[] = {
	R_JOB, R_STATE,
	FLD("requeued", F_INT, R(requeued), 1, 0, INT64_MAX, 0, NULL),
};
static const struct ctlcmd_field extend_reply[] = {
	R_JOB, R_STATE,
	FLD("total_units", F_INT, R(total_units), 1, 0, INT64_MAX, 0, NULL),
};
static const struct ctlcmd_field export_reply[] = {
	FLD("bytes", F_INT, R(bytes), 1, 0, INT64_MAX, 0, NULL),
};
static const struct ctlcmd_field token_revoke_reply[] = {
	FLD("revoked", F_NAME, R(revoked), 1, 1, AUTH_NAME_MAX, 0, NULL),
};
static const struct ctlcmd_field worker_reply[] = {
	FLD("worker", F_STR, R(worker), 1, 1, CTLCMD_WORKER_NAME_MAX, 0, NULL),
	FLD("changed", F_INT, R(changed), 1, 0, INT64_MAX, 0, NULL),
};

/* The fields of the lists' rows and of the larger replies, by kind: S is
 * the row's struct, k the key, m the member. Free text (reasons, paths,
 * devices) has no bound of its own: gpuctl escapes it before reading. */
#define OPT_(S, k, kd, m, ...) { .key = k, .kind = kd, .off = offsetof(S, m), \
				 __VA_ARGS__ }
#define F_(S, k, kd, m, ...) OPT_(S, k, kd, m, .required = 1, .absent_ok = 1, \
				      __VA_ARGS__)
/* What gpuctl cannot do without: a reply without it is refused. */
#define MUST_(S, k, kd, m, ...) OPT_(S, k, kd, m, .required = 1, __VA_ARGS__)
#define COUNT(S, k, m) F_(S, k, F_INT, m, .hi = INT64_MAX)
#define ID(S, k, m) F_(S, k, F_JOB, m, .lo = 1, .hi = INT64_MAX)
#define ID_NULL(S, k, m) F_(S, k, F_JOB, m, .lo = 1, .hi = INT64_MAX, .nul = 1)
#define NUM(S, k, m) F_(S, k, F_NUM, m)
#define NUM_NULL(S, k, m) F_(S, k, F_NUM, m, .nul = 1)
/* Left out by an older gpud: reads CTLCMD_NOT_SENT. */
#define NUM_OPT(S, k, m) OPT_(S, k, F_NUM, m, .def = CTLCMD_NOT_SENT)
#define COUNT_OPT(S, k, m) OPT_(S, k, F_INT, m, .hi = INT64_MAX, \
			      .def = CTLCMD_NOT_SENT)
#define BOOL(S, k, m) F_(S, k, F_BOOL, m, .hi = 1)
#define TEXT(S, k, m) F_(S, k, F_STR, m, .hi = INT64_MAX)
#define TEXT_NULL(S, k, m) F_(S, k, F_STR, m, .hi = INT64_MAX, .nul = 1)
#define TEXTS(S, k, m, n) F_(S, k, F_STRS, m, .hi = INT64_MAX, .off2 = offsetof(S, n))
#define LIST(S, k, m, n, r) F_(S, k, F_ROWS, m, .off2 = offsetof(S, n), .rows = &r)
#define ROWS(S, f) { f, N(f), sizeof(S) }

static const char *const lease_states[CTLCMD_LEASE_STATES] = {
	"pending", "leased", "done", "verified", "failed", "cancelled",
};

#define J struct ctlcmd_job
#define LEASES(k, m) F_(J, k, F_COUNTS, m, .hi = CTLCMD_LEASE_STATES, \
			    .names = lease_states)
static const struct ctlcmd_field job_row[] = {
	MUST_(J, "id", F_JOB, id, .lo = 1, .hi = INT64_MAX),
	F_(J, "name", F_NAME, name, .lo = 1, .hi = CTLCMD_JOB_NAME_MAX, .nul = 1),
	MUST_(J, "workload", F_STR, workload, .hi = INT64_MAX),
	TEXT(J, "unit_name", unit_name),
	MUST_(J, "state", F_STR, state, .lo = 1, .hi = 32),
	OPT_(J, "priority", F_INT, priority, .lo = CTLCMD_PRIORITY_MIN,
	     .hi = CTLCMD_PRIORITY_MAX, .def = INT64_MIN),
	F_(J, "params", F_ANY, params, .nul = 1),
	COUNT(J, "total_units", total_units),
	COUNT(J, "units_done", units_done),
	COUNT(J, "units_running", units_running),
	COUNT(J, "units_verified", units_verified),
	LEASES("leases", leases),
	LEASES("replicas", replicas),
	COUNT(J, "replicas_waiting", replicas_waiting),
	COUNT(J, "failed_waiting", failed_waiting),
	F_(J, "check", F_STR, check, .lo = 1, .hi = 16),
	TEXTS(J, "workers", workers, n_workers),
	TEXT_NULL(J, "reason", reason),
	NUM(J, "submitted_at", submitted_at),
	NUM(J, "created_at", created_at),
	OPT_(J, "started_at", F_NUM, started_at, .nul = 1, .def = CTLCMD_NOT_SENT),
	NUM_NULL(J, "finished_at", finished_at),
	NUM_OPT(J, "elapsed_s", elapsed_s),
	NUM_OPT(J, "avg_rate", avg_rate),
	COUNT_OPT(J, "attempts", attempts),
	COUNT_OPT(J, "verify_failures", verify_failures),
	TEXT_NULL(J, "damaged", damaged),
	NUM(J, "rate", rate),
	NUM_NULL(J, "eta_s", eta_s),
	TEXT_NULL(J, "owner", owner),
	OPT_(J, "after_job", F_INT, after_job, .hi = INT64_MAX),
	OPT_(J, "time_limit_s", F_NUM, time_limit_s),
	OPT_(J, "ran_s", F_NUM, ran_s),
};
static const struct ctlcmd_rows job_rows = ROWS(J, job_row);
#undef J

#define E struct ctlcmd_event
static const struct ctlcmd_field event_row[] = {
	MUST_(E, "id", F_JOB, id, .lo = 1, .hi = INT64_MAX),
	NUM(E, "ts", ts),
	MUST_(E, "kind", F_STR, kind, .lo = 1, .hi = INT64_MAX),
	TEXT_NULL(E, "detail", detail),
	ID_NULL(E, "lease", lease),
	COUNT(E, "epoch", epoch),
	TEXT_NULL(E, "worker", worker),
};
static const struct ctlcmd_rows event_rows = ROWS(E, event_row);
#undef E

#define W struct ctlcmd_worker
static const struct ctlcmd_field worker_row[] = {
	MUST_(W, "id", F_INT, id, .hi = INT64_MAX),
	MUST_(W, "name", F_STR, name, .hi = INT64_MAX),
	TEXT_NULL(W, "credential", credential),
	TEXT_NULL(W, "instance", instance),
	TEXT(W, "device", device),
	BOOL(W, "online", online),
	BOOL(W, "quarantined", quarantined),
	BOOL(W, "drained", drained),
	COUNT(W, "failures", failures),
	COUNT(W, "foreign_msgs", foreign_msgs),
	COUNT(W, "stalls", stalls),
	COUNT(W, "leases_done", leases_done),
	COUNT(W, "units_done", units_done),
	NUM(W, "rate", rate),
	NUM(W, "last_seen", last_seen),
	COUNT(W, "streak", streak),
	COUNT(W, "confirmed", confirmed),
	TEXT_NULL(W, "host", place[0]),
	TEXT_NULL(W, "slurm_job", place[1]),
	TEXT_NULL(W, "slurm_array", place[2]),
	TEXT_NULL(W, "pod", place[3]),
	ID_NULL(W, "lease", lease),
	COUNT(W, "trust_after", trust_after),
	BOOL(W, "trusted", trusted),
	ID_NULL(W, "job", job),
	F_(W, "threads", F_INT, threads, .hi = INT64_MAX, .nul = 1),
	F_(W, "job_unit", F_STR, job_unit, .hi = INT64_MAX, .nul = 1, .sent = 1,
	   .off2 = offsetof(W, job_unit_sent)),
};
static const struct ctlcmd_rows worker_rows = ROWS(W, worker_row);
#undef W

#define T struct ctlcmd_token
static const struct ctlcmd_field token_row[] = {
	MUST_(T, "name", F_NAME, name, .lo = 1, .hi = AUTH_NAME_MAX),
	NUM(T, "created_at", created_at),
	BOOL(T, "revoked", revoked),
	TEXT(T, "role", role),
};
static const struct ctlcmd_rows token_rows = ROWS(T, token_row);
#undef T

#define P struct ctlcmd_problem
static const struct ctlcmd_field problem_row[] = {
	MUST_(P, "job", F_INT, job, .hi = INT64_MAX),
	ID_NULL(P, "lease", lease),
	TEXT(P, "where", where),
	TEXT(P, "hash", hash),
	TEXT(P, "problem", problem),
};
static const struct ctlcmd_rows problem_rows = ROWS(P, problem_row);
#undef P

static const struct ctlcmd_field wl_param_row[] = {
	MUST_(struct ctlcmd_wl_param, "name", F_STR, name, .hi = INT64_MAX),
	TEXT(struct ctlcmd_wl_param, "type", type),
	TEXT_NULL(struct ctlcmd_wl_param, "default", def),
	TEXT(struct ctlcmd_wl_param, "help", help),
};
static const struct ctlcmd_rows wl_param_rows = ROWS(struct ctlcmd_wl_param, wl_param_row);

static const struct ctlcmd_field wl_export_row[] = {
	MUST_(struct ctlcmd_wl_export, "name", F_STR, name, .hi = INT64_MAX),
	TEXT(struct ctlcmd_wl_export, "help", help),
};
static const struct ctlcmd_rows wl_export_rows = ROWS(struct ctlcmd_wl_export, wl_export_row);

#define L struct ctlcmd_workload
static const struct ctlcmd_field workload_row[] = {
	MUST_(L, "name", F_STR, name, .hi = INT64_MAX),
	TEXT(L, "unit_name", unit_name),
	TEXT(L, "description", description),
	LIST(L, "params", params, n_params, wl_param_rows),
	LIST(L, "exports", exports, n_exports, wl_export_rows),
	BOOL(L, "extend", extend),
};
static const struct ctlcmd_rows workload_rows = ROWS(L, workload_row);
#undef L

#define Y struct ctlcmd_reply
static const struct ctlcmd_field status_reply[] = {
	LIST(Y, "jobs", jobs, n_jobs, job_rows),
	COUNT(Y, "hidden", hidden),
	OPT_(Y, "warnings", F_STRS, warnings, .hi = INT64_MAX,
	     .off2 = offsetof(Y, n_warnings)),
};
static const struct ctlcmd_field history_reply[] = {
	LIST(Y, "jobs", jobs, n_jobs, job_rows),
};
static const struct ctlcmd_field workers_reply[] = {
	LIST(Y, "workers", workers, n_workers, worker_rows),
};
static const struct ctlcmd_field result_reply[] = {
	R_JOB,
	TEXT(Y, "workload", workload),
	R_STATE,
	F_(Y, "params", F_ANY, params, .nul = 1),
	COUNT(Y, "answer_bytes", answer_bytes),
	TEXT_NULL(Y, "text", text),
	TEXTS(Y, "files", files, n_files),
	TEXTS(Y, "exports", exports, n_exports),
	COUNT(Y, "units_verified", units_verified),
	TEXT_NULL(Y, "reason", reason),
};
static const struct ctlcmd_field workloads_reply[] = {
	LIST(Y, "workloads", workloads, n_workloads, workload_rows),
};
static const struct ctlcmd_field token_add_reply[] = {
	TEXT(Y, "token", token),
	F_(Y, "role", F_ROLE, role, .lo = AUTH_ROLE_WORKER, .hi = AUTH_ROLE_ADMIN),
	TEXT(Y, "gpud_key", gpud_key),
	TEXT_NULL(Y, "credential", credential),
};
static const struct ctlcmd_field token_list_reply[] = {
	LIST(Y, "tokens", tokens, n_tokens, token_rows),
};
#define PROBLEMS LIST(Y, "problems", problems, n_problems, problem_rows), \
		 COUNT(Y, "problems_total", problems_total)
static const struct ctlcmd_field check_reply[] = {
	BOOL(Y, "damaged", damaged),
	TEXTS(Y, "database", database, n_database),
	COUNT(Y, "references", references),
	COUNT(Y, "blobs_checked", blobs_checked),
	PROBLEMS,
	F_(Y, "damaged_jobs", F_INTS, damaged_jobs, .hi = INT64_MAX,
	   .off2 = offsetof(Y, n_damaged_jobs)),
};
static const struct ctlcmd_field backup_reply[] = {
	TEXT(Y, "path", path),
	COUNT(Y, "bytes", bytes),
	COUNT(Y, "database_bytes", database_bytes),
	TEXT(Y, "database_blake2b", database_blake2b),
	COUNT(Y, "blobs", blobs),
	COUNT(Y, "blob_bytes", blob_bytes),
	COUNT(Y, "linked", linked),
	COUNT(Y, "copied", copied),
	COUNT(Y, "files", ident_files),
	COUNT(Y, "leases_released", leases_released),
	COUNT(Y, "snapshots", snapshots),
	NUM(Y, "seconds", seconds),
	BOOL(Y, "verified", verified),
	TEXTS(Y, "database", database, n_database),
	PROBLEMS,
};
static const struct ctlcmd_field page_link_reply[] = {
	TEXT_NULL(Y, "url", url),
	TEXT_NULL(Y, "key", key),
	NUM_NULL(Y, "expires_at", expires_at),
	COUNT(Y, "revoked_links", revoked_links),
};
static const struct ctlcmd_field events_reply[] = {
	R_JOB, R_STATE,
	LIST(Y, "events", events, n_events, event_rows),
	COUNT(Y, "last_event", last_event),
	COUNT(Y, "left_out", left_out),
};
#undef Y

/* The replies, indexed by command. */
#define REPLY(id, f) [id] = { f, N(f), sizeof(struct ctlcmd_reply) }
const struct ctlcmd_rows ctlreply_rows[CTLCMD_COUNT] = {
	REPLY(CTLCMD_PING, ping_reply),
	REPLY(CTLCMD_SUBMIT, submit_reply),
	REPLY(CTLCMD_STATUS, status_reply),
	REPLY(CTLCMD_HISTORY, history_reply),
	REPLY(CTLCMD_PRIORITY, priority_reply),
	REPLY(CTLCMD_RESULT, result_reply),
	REPLY(CTLCMD_CANCEL, state_reply),
	REPLY(CTLCMD_PAUSE, state_reply),
	REPLY(CTLCMD_RESUME, state_reply),
	REPLY(CTLCMD_WORKERS, workers_reply),
	REPLY(CTLCMD_WORKLOADS, workloads_reply),
	REPLY(CTLCMD_EXTEND, extend_reply),
	REPLY(CTLCMD_EXPORT, export_reply),
	REPLY(CTLCMD_TOKEN_ADD, token_add_reply),
	REPLY(CTLCMD_TOKEN_LIST, token_list_reply),
	REPLY(CTLCMD_TOKEN_REVOKE, token_revoke_reply),
	REPLY(CTLCMD_CHECK, check_reply),
	REPLY(CTLCMD_BACKUP, backup_reply),
	REPLY(CTLCMD_PAGE_LINK, page_link_reply),
	REPLY(CTLCMD_WORKER_DRAIN, worker_reply),
	REPLY(CTLCMD_WORKER_RESUME, worker_reply),
	REPLY(CTLCMD_WORKER_FORGIVE, worker_reply),
	REPLY(CTLCMD_EVENTS, events_reply),
	REPLY(CTLCMD_REQUEUE, requeue_reply),
};

/* What a reply's value of f must be, for messages ("an integer from 0 to 9"). */
static void want(const struct ctlcmd_field *f, char *out, size_t len)
{
	const char *or_null = f->nul ? ", or null" : "";

	switch (f->kind) {
	case F_JOB:
		snprintf(out, len, "a positive integer%s", or_null);
		break;
	case F_INT:
	case F_INTS:
		snprintf(out, len, "%s integer%s from %" PRId64 " to %" PRId64 "%s",
			 f->kind == F_INTS ? "an array of" : "an", f->kind == F_INTS ? "s" : "",
			 f->lo, f->hi, or_null);
		break;
	case F_BOOL:
		snprintf(out, len, "true or false");
		break;
	case F_NUM:
		snprintf(out, len, "a number%s", or_null);
		break;
	case F_NAME:
		snprintf(out, len, "a name of 1 to %" PRId64 " characters of A-Z a-z "
			 "0-9 . _ -%s", f->hi, or_null);
		break;
	case F_ROLE:
		snprintf(out, len, "worker, viewer or admin");
		break;
	case F_OBJ:
	case F_ANY:
		snprintf(out, len, "an object");
		break;
	case F_COUNTS:
		snprintf(out, len, "an object of %" PRId64 " counts (%s, ..)", f->hi,
			 f->names[0]);
		break;
	case F_ROWS:
		snprintf(out, len, "an array of objects");
		break;
	default:
		snprintf(out, len, "%s string%s", f->kind == F_STRS ? "an array of" : "a",
			 or_null);
		break;
	}
}

static int reply_fields(const struct ctlcmd *c, const struct ctlcmd_field *f,
			size_t n, const json_t *o, char *base, const char *path,
			char *err, size_t errlen);

/* F_COUNTS: every name an integer >= 0; one left out reads 0. */
static int reply_counts(const struct ctlcmd_field *f, const json_t *v, char *base)
{
	int64_t *k = (int64_t *)(base + f->off);

	for (int64_t i = 0; json_is_object(v) && i < f->hi; i++) {
		const json_t *e = json_object_get(v, f->names[i]);

		if (e && (!json_is_integer(e) || json_integer_value(e) < 0))
			return -1;
		k[i] = e ? json_integer_value(e) : 0;
	}
	return json_is_object(v) ? 0 : -1;
}

/* A list (F_STRS, F_INTS, F_ROWS) into a new array at base + f->off, its
 * length at base + f->off2. 0; -1 when v breaks the rule; -2 with err
 * written (a row's field, or out of memory). */
static int reply_list(const struct ctlcmd *c, const struct ctlcmd_field *f,
		      const json_t *v, char *base, const char *path, char *err,
		      size_t errlen)
{
	size_t n = json_array_size(v), size;
	char *items, at[160];

	if (!json_is_array(v))
		return -1;
	size = f->kind == F_ROWS ? f->rows->size :
	       f->kind == F_INTS ? sizeof(int64_t) : sizeof(char *);
	items = n ? calloc(n, size) : NULL;
	if (n && !items) {
		snprintf(err, errlen, "out of memory");
		return -2;
	}
	*(void **)(base + f->off) = items;
	*(size_t *)(base + f->off2) = n;
	for (size_t i = 0; i < n; i++) {
		const json_t *e = json_array_get(v, i);
		struct ctlcmd_field one = *f;

		snprintf(at, sizeof(at), "%s%s%s[%zu]", path, *path ? "." : "", f->key, i);
		one.off = i * size;
		one.kind = f->kind == F_STRS ? F_STR : F_INT;
		if (f->kind == F_ROWS && json_is_object(e)) {
			if (reply_fields(c, f->rows->fields, f->rows->n_fields, e,
					 items + i * size, at, err, errlen))
				return -2;
			continue;
		}
		if (f->kind != F_ROWS && ctlcmd_field_decode(&one, e, items) == 0)
			continue;
		snprintf(err, errlen, "%s: not %s", at,
			 f->kind == F_ROWS ? "an object" : f->kind == F_STRS ?
			 "a string" : "an integer in range");
		return -2;
	}
	return 0;
}

/* Fields f[0..n) of the reply object o into the struct at base (zeroed);
 * path names o in messages ("" for the reply itself, whose messages are
 * those of the requests' fields). 0, or GERR_INVAL with err set. */
static int reply_fields(const struct ctlcmd *c, const struct ctlcmd_field *f,
			size_t n, const json_t *o, char *base, const char *path,
			char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++, f++) {
		const json_t *v = json_object_get(o, f->key);
		int absent = !v || json_is_null(v), rc = -1;
		char w[128];

		if (f->sent)
			*(int *)(base + f->off2) = v != NULL;
		if (v && json_is_null(v) && f->nul)
			continue;  /* 0 or NULL, as the struct was zeroed */
		if (absent && (!f->required || (!v && f->absent_ok))) {
			ctlcmd_field_default(f, base);
			continue;
		}
		if (absent)
			rc = -1;
		else if (f->kind == F_STRS || f->kind == F_INTS || f->kind == F_ROWS)
			rc = reply_list(c, f, v, base, path, err, errlen);
		else if (f->kind == F_COUNTS)
			rc = reply_counts(f, v, base);
		else
			rc = ctlcmd_field_decode(f, v, base);
		if (rc == 0)
			continue;
		if (rc == -1 && f->req_msg) {
			if (f->bad)
				snprintf(err, errlen, "%s", f->bad);
			else
				ctlcmd_field_bad(c, f, err, errlen);
		} else if (rc == -1) {
			want(f, w, sizeof(w));
			snprintf(err, errlen, "%s%s%s: %s %s", path, *path ? "." : "",
				 f->key, absent ? "missing, wants" : "is not", w);
		}
		return GERR_INVAL;
	}
	return 0;
}

/* Free the lists of the struct at base (fields f[0..n)). */
static void clear_fields(const struct ctlcmd_field *f, size_t n, char *base)
{
	for (size_t i = 0; i < n; i++, f++) {
		char *items;

		if (f->kind != F_STRS && f->kind != F_INTS && f->kind != F_ROWS)
			continue;
		items = *(char **)(base + f->off);
		for (size_t k = 0; items && f->kind == F_ROWS &&
		     k < *(size_t *)(base + f->off2); k++)
			clear_fields(f->rows->fields, f->rows->n_fields,
				     items + k * f->rows->size);
		free(items);
	}
}

int ctlcmd_reply_decode(const struct ctlcmd *c, const json_t *reply,
			struct ctlcmd_reply *ret, char *err, size_t errlen)
{
	struct ctlcmd_reply out;

	memset(&out, 0, sizeof(out));
	out.cmd = (enum ctlcmd_id)(c - ctlcmd_table);
	if (!c->reply) {
		snprintf(err, errlen, "'%s' has no typed reply", c->name);
		return GERR_INVAL;
	}
	if (!json_is_object(reply)) {
		snprintf(err, errlen, "not a JSON object");
		return GERR_INVAL;
	}
	if (reply_fields(c, c->reply->fields, c->reply->n_fields, reply, (char *)&out, "", err, errlen)) {
		clear_fields(c->reply->fields, c->reply->n_fields, (char *)&out);
		return GERR_INVAL;
	}
	*ret = out;
	return 0;
}

json_t *ctlcmd_reply_error(const char *msg)
{
	return json_pack("{s:b, s:s}", OK_KEY, 0, ERROR_KEY, msg);
}

int ctlcmd_reply_ok(const json_t *reply, const char **ret_error)
{
	if (json_is_true(json_object_get(reply, OK_KEY)))
		return 1;
	*ret_error = json_string_value(json_object_get(reply, ERROR_KEY));
	return 0;
}

json_t *ctlcmd_reply_body(json_t *reply)
{
	json_object_del(reply, OK_KEY);
	return reply;
}

json_t *ctlcmd_result_answer(json_t *reply, json_t *answer)
{
	json_object_set_new(reply, "answer", answer);
	json_object_del(reply, "answer_bytes");
	json_object_del(reply, OK_KEY);
	json_object_del(reply, "text");
	return reply;
}

const json_t *ctlcmd_reply_list(enum ctlcmd_id id, const json_t *reply)
{
	const struct ctlcmd *c;

	if ((unsigned)id >= CTLCMD_COUNT)
		return NULL;
	c = &ctlcmd_table[id];
	for (size_t i = 0; i < c->reply->n_fields; i++)
		if (c->reply->fields[i].kind == F_ROWS)
			return json_object_get(reply, c->reply->fields[i].key);
	return NULL;
}

void ctlcmd_reply_clear(struct ctlcmd_reply *rep)
{
	const struct ctlcmd *c;

	if (!rep || (unsigned)rep->cmd >= CTLCMD_COUNT)
		return;
	c = &ctlcmd_table[rep->cmd];
	if (c->reply)
		clear_fields(c->reply->fields, c->reply->n_fields, (char *)rep);
	memset(rep, 0, sizeof(*rep));
}

const char *ctlcmd_lease_state_name(int s)
{
	return s >= 0 && s < CTLCMD_LEASE_STATES ? lease_states[s] : "?";
}
