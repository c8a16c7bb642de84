/* ctlcmd.c - the control API's command table and its codec (ctlcmd.h).
 *
 * Each row's field table gives a field's JSON name, kind, member of
 * struct ctlcmd_req, whether it is required, its bounds, and the message
 * a refusal prints when gpud has always said something more particular
 * than the kind's generic one ("bad" below). ctlcmd_decode and
 * ctlcmd_encode walk the same tables; this file is the only place a
 * request key is spelled.
 *
 * Replies use the same kinds with struct ctlcmd_reply's members.
 *
 * Invariant: whatever ctlcmd_encode writes from a struct that ctlcmd_decode
 * filled, ctlcmd_decode accepts and gives back equal; alike for replies
 * (test_ctl_cmd.c).
 */
#include "ctlcmd.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"

enum fkind {
	F_JOB,     /* int64_t, a JSON integer > 0 */
	F_INT,     /* int64_t, a JSON integer in [lo, hi] */
	F_BOOL,    /* int, JSON true or false */
	F_STR,     /* const char *, lo..hi bytes, no NUL */
	F_NAME,    /* const char *, 1..hi of [A-Za-z0-9._-] */
	F_PATH,    /* const char *, F_STR that begins with '/' */
	F_ROLE,    /* enum auth_role, by its name */
	F_OBJ,     /* json_t *, a JSON object */
	/* replies only */
	F_NUM,     /* double, a JSON number (integer or real); written real */
	F_ANY,     /* json_t *, any JSON value: a workload's own, opaque */
	F_COUNTS,  /* int64_t[hi], an object of integers >= 0 keyed names[] */
	F_STRS,    /* const char **, an array of F_STR; count at off2 */
	F_INTS,    /* int64_t *, an array of integers >= 0; count at off2 */
	F_ROWS,    /* an array of objects, each a row of rows; count at off2 */
};

struct ctlcmd_rows {
	const struct ctlcmd_field *fields;
	size_t n_fields;
	size_t size;       /* of one row's struct */
};

struct ctlcmd_field {
	const char *key;
	enum fkind kind;
	size_t off;
	int required;
	int64_t lo, hi, def;
	const char *bad;   /* the whole message when refused; NULL: generic */
	/* replies */
	int nul;           /* JSON null reads as 0 / NULL, which writes null */
	size_t off2;       /* the lists' count; with sent, an int set to 1
			    * when the key is there */
	int sent;
	int req_msg;       /* a reply's field refused with a request's
			    * message (the small replies, as always) */
	int absent_ok;     /* required (always written), yet a reply without
			    * it reads as the default: an older gpud's, or a
			    * stand-in's that sends only what gpuctl shows */
	const char *const *names;      /* F_COUNTS */
	const struct ctlcmd_rows *rows; /* F_ROWS */
};

/* A request's field (and the small replies'), in that order. */
#define FLD(k, kd, o, req, l, h, d, b) { .key = k, .kind = kd, .off = o, \
	.required = req, .lo = l, .hi = h, .def = d, .bad = b, .req_msg = 1 }

/* The envelope's keys. */
#define OK_KEY "ok"
#define ERROR_KEY "error"

#define XSTR(x) #x
#define STR(x) XSTR(x)
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define M(m) offsetof(struct ctlcmd_req, m)

#define JOB FLD("job", F_JOB, M(job), 1, 1, INT64_MAX, 0, NULL)
#define JOB_OPT FLD("job", F_JOB, M(job), 0, 1, INT64_MAX, 0, NULL)
#define ALL_OPT FLD("all", F_BOOL, M(all), 0, 0, 1, 0, NULL)
#define ARGS(req) FLD("args", F_OBJ, M(args), req, 0, 0, 0, NULL)

_Static_assert(sizeof(enum auth_role) == sizeof(int), "enum size");

static const struct ctlcmd_field submit_fields[] = {
	FLD("workload", F_STR, M(workload), 1, 0, CTLCMD_WORKLOAD_MAX, 0, NULL),
	ARGS(1),
	FLD("name", F_NAME, M(name), 0, 1, CTLCMD_JOB_NAME_MAX, 0,
	  "a job name is 1 to " STR(CTLCMD_JOB_NAME_MAX) " characters of "
	  "A-Z a-z 0-9 . _ -"),
	FLD("priority", F_INT, M(priority), 0, CTLCMD_PRIORITY_MIN,
	  CTLCMD_PRIORITY_MAX, 0, "a job's priority is an integer from "
	  STR(CTLCMD_PRIORITY_MIN) " to " STR(CTLCMD_PRIORITY_MAX)
	  " (higher runs first)"),
};

static const struct ctlcmd_field status_fields[] = { JOB_OPT, ALL_OPT };

static const struct ctlcmd_field history_fields[] = {
	ALL_OPT,
	FLD("limit", F_INT, M(limit), 0, 1, CTLCMD_HISTORY_LIMIT_MAX,
	  CTLCMD_HISTORY_LIMIT_DEFAULT, NULL),
};

static const struct ctlcmd_field priority_fields[] = {
	JOB,
	FLD("priority", F_INT, M(priority), 1, CTLCMD_PRIORITY_MIN,
	  CTLCMD_PRIORITY_MAX, 0, NULL),
};

static const struct ctlcmd_field job_fields[] = { JOB };

static const struct ctlcmd_field extend_fields[] = { JOB, ARGS(1) };

static const struct ctlcmd_field export_fields[] = {
	JOB,
	FLD("what", F_STR, M(what), 1, 0, CTLCMD_WHAT_MAX, 0, "export needs 'what'"),
	ARGS(0),
};

static const struct ctlcmd_field token_add_fields[] = {
	FLD("role", F_ROLE, M(role), 0, AUTH_ROLE_WORKER, AUTH_ROLE_ADMIN,
	  AUTH_ROLE_WORKER, "a token's role is worker, viewer or admin"),
	FLD("name", F_NAME, M(name), 1, 1, AUTH_NAME_MAX, 0,
	  "token names are 1.." STR(AUTH_NAME_MAX) " characters of A-Z a-z "
	  "0-9 . _ -"),
};

static const struct ctlcmd_field token_revoke_fields[] = {
	FLD("name", F_NAME, M(name), 1, 1, AUTH_NAME_MAX, 0,
	  "token_revoke needs a valid token name"),
};

static const struct ctlcmd_field backup_fields[] = {
	FLD("dir", F_PATH, M(dir), 1, 1, CTLCMD_PATH_MAX, 0,
	  "backup needs 'dir': an absolute path of at most "
	  STR(CTLCMD_PATH_MAX) " bytes"),
	FLD("copy", F_BOOL, M(copy), 0, 0, 1, 0, "backup's 'copy' is true or false"),
};

/* Reply fields: required unless noted. */
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
};
static const struct ctlcmd_rows job_rows = ROWS(J, job_row);
#undef J

#define W struct ctlcmd_worker
static const struct ctlcmd_field worker_row[] = {
	MUST_(W, "id", F_INT, id, .hi = INT64_MAX),
	MUST_(W, "name", F_STR, name, .hi = INT64_MAX),
	TEXT(W, "device", device),
	BOOL(W, "online", online),
	BOOL(W, "quarantined", quarantined),
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
#undef Y

#define BARE(n, role, flags, r) { n, AUTH_ROLE_##role, flags, NULL, 0, r, N(r) }
#define TYPED(n, role, flags, f, r) { n, AUTH_ROLE_##role, flags, f, N(f), r, N(r) }
#define RO CTLCMD_READONLY

const struct ctlcmd ctlcmd_table[CTLCMD_COUNT] = {
	[CTLCMD_PING]         = { "ping", AUTH_ROLE_VIEWER, RO, NULL, 0, ping_reply,
				  N(ping_reply) },
	[CTLCMD_SUBMIT]       = TYPED("submit", ADMIN, CTLCMD_BIN_IN, submit_fields,
				      submit_reply),
	[CTLCMD_STATUS]       = TYPED("status", VIEWER, RO, status_fields, status_reply),
	[CTLCMD_HISTORY]      = TYPED("history", VIEWER, RO, history_fields, history_reply),
	[CTLCMD_PRIORITY]     = TYPED("priority", ADMIN, 0, priority_fields, priority_reply),
	[CTLCMD_RESULT]       = TYPED("result", VIEWER, RO | CTLCMD_BIN_OUT, job_fields,
				      result_reply),
	[CTLCMD_CANCEL]       = TYPED("cancel", ADMIN, 0, job_fields, state_reply),
	[CTLCMD_PAUSE]        = TYPED("pause", ADMIN, 0, job_fields, state_reply),
	[CTLCMD_RESUME]       = TYPED("resume", ADMIN, 0, job_fields, state_reply),
	[CTLCMD_WORKERS]      = BARE("workers", VIEWER, RO, workers_reply),
	[CTLCMD_WORKLOADS]    = BARE("workloads", VIEWER, RO, workloads_reply),
	[CTLCMD_EXTEND]       = TYPED("extend", ADMIN, 0, extend_fields, extend_reply),
	[CTLCMD_EXPORT]       = TYPED("export", VIEWER, RO | CTLCMD_BIN_OUT, export_fields,
				      export_reply),
	[CTLCMD_TOKEN_ADD]    = TYPED("token_add", ADMIN, 0, token_add_fields,
				      token_add_reply),
	/* Read-only, yet it lists credentials: an admin's. */
	[CTLCMD_TOKEN_LIST]   = BARE("token_list", ADMIN, RO, token_list_reply),
	[CTLCMD_TOKEN_REVOKE] = TYPED("token_revoke", ADMIN, 0, token_revoke_fields,
				      token_revoke_reply),
	/* check marks damaged jobs in the database. */
	[CTLCMD_CHECK]        = BARE("check", ADMIN, 0, check_reply),
	[CTLCMD_BACKUP]       = TYPED("backup", ADMIN, RO, backup_fields, backup_reply),
};

const struct ctlcmd *ctlcmd_find(const char *name)
{
	for (size_t i = 0; name && i < CTLCMD_COUNT; i++)
		if (strcmp(ctlcmd_table[i].name, name) == 0)
			return &ctlcmd_table[i];
	return NULL;
}

int ctlcmd_allowed(const struct ctlcmd *c, enum auth_role role)
{
	/* A worker's token (below a viewer) may ask nothing. */
	return role >= c->role;
}

static const char *const role_names[] = {
	[AUTH_ROLE_WORKER] = "worker",
	[AUTH_ROLE_VIEWER] = "viewer",
	[AUTH_ROLE_ADMIN] = "admin",
};

static int name_ok(const char *s, size_t n, int64_t max)
{
	if (n < 1 || (int64_t)n > max)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789._-", s[i]) || !s[i])
			return 0;
	return 1;
}

/* The kind's own message, for fields without a particular one. */
static void generic_bad(const struct ctlcmd *c, const struct ctlcmd_field *f,
			char *err, size_t errlen)
{
	switch (f->kind) {
	case F_JOB:
		snprintf(err, errlen, "'%s' needs a job id (a positive integer)", c->name);
		break;
	case F_INT:
		snprintf(err, errlen, "'%s' needs '%s': an integer from %" PRId64
			 " to %" PRId64, c->name, f->key, f->lo, f->hi);
		break;
	case F_BOOL:
		snprintf(err, errlen, "'%s': '%s' is true or false", c->name, f->key);
		break;
	case F_OBJ:
		snprintf(err, errlen, "'%s' needs '%s': an object", c->name, f->key);
		break;
	default:
		snprintf(err, errlen, "'%s' needs '%s': a string of %" PRId64 " to %"
			 PRId64 " bytes", c->name, f->key, f->lo, f->hi);
		break;
	}
}

/* One field's value into its member; 0, or -1 when v breaks the rule. */
static int decode_field(const struct ctlcmd_field *f, const json_t *v, char *base)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	json_int_t i = json_integer_value(v);

	switch (f->kind) {
	case F_JOB:
	case F_INT:
		if (!json_is_integer(v) || i < f->lo || i > f->hi)
			return -1;
		*(int64_t *)(base + f->off) = i;
		return 0;
	case F_BOOL:
		if (!json_is_boolean(v))
			return -1;
		*(int *)(base + f->off) = json_is_true(v);
		return 0;
	case F_STR:
	case F_PATH:
		/* A NUL inside a JSON string would cut it short. */
		if (!s || strlen(s) != n || (int64_t)n < f->lo || (int64_t)n > f->hi ||
		    (f->kind == F_PATH && s[0] != '/'))
			return -1;
		*(const char **)(base + f->off) = s;
		return 0;
	case F_NAME:
		if (!s || !name_ok(s, n, f->hi))
			return -1;
		*(const char **)(base + f->off) = s;
		return 0;
	case F_ROLE:
		for (int64_t r = f->lo; s && r <= f->hi; r++)
			if (strcmp(s, role_names[r]) == 0) {
				*(int *)(base + f->off) = (int)r;
				return 0;
			}
		return -1;
	case F_OBJ:
		if (!json_is_object(v))
			return -1;
		*(json_t **)(base + f->off) = (json_t *)v;
		return 0;
	case F_NUM:
		if (!json_is_number(v))
			return -1;
		*(double *)(base + f->off) = json_number_value(v);
		return 0;
	case F_ANY:
		*(json_t **)(base + f->off) = (json_t *)v;
		return 0;
	default:
		return -1;  /* the lists: reply_value's */
	}
}

static void set_default(const struct ctlcmd_field *f, char *base)
{
	if (f->kind == F_JOB || f->kind == F_INT)
		*(int64_t *)(base + f->off) = f->def;
	else if (f->kind == F_BOOL || f->kind == F_ROLE)
		*(int *)(base + f->off) = (int)f->def;
	else if (f->kind == F_NUM)
		*(double *)(base + f->off) = (double)f->def;
}

/* Fields f[0..n) of json into the struct at base (zeroed by the caller);
 * 0, or GERR_INVAL with err set (cmd names the command in messages). */
static int decode_fields(const struct ctlcmd *c, const struct ctlcmd_field *f,
			 size_t n, const json_t *json, char *base, char *err,
			 size_t errlen)
{
	for (size_t i = 0; i < n; i++, f++) {
		const json_t *v = json_object_get(json, f->key);
		int absent = !v || json_is_null(v);

		if (absent && (!f->required || (!v && f->absent_ok))) {
			set_default(f, base);
			continue;
		}
		if (!absent && decode_field(f, v, base) == 0)
			continue;
		if (f->bad)
			snprintf(err, errlen, "%s", f->bad);
		else
			generic_bad(c, f, err, errlen);
		return GERR_INVAL;
	}
	return 0;
}

static int encode_fields(const struct ctlcmd_field *f, size_t n,
			 const char *base, json_t *o);

/* A list's array (F_STRS, F_INTS, F_ROWS); NULL when out of memory. */
static json_t *encode_list(const struct ctlcmd_field *f, const char *base)
{
	const void *items = *(const void *const *)(base + f->off);
	size_t n = *(const size_t *)(base + f->off2);
	json_t *a = json_array(), *v;

	for (size_t i = 0; a && i < n; i++) {
		if (f->kind == F_STRS)
			v = json_string(((const char *const *)items)[i]);
		else if (f->kind == F_INTS)
			v = json_integer(((const int64_t *)items)[i]);
		else if ((v = json_object()) &&
			 encode_fields(f->rows->fields, f->rows->n_fields,
				       (const char *)items + i * f->rows->size, v)) {
			json_decref(v);
			v = NULL;
		}
		if (json_array_append_new(a, v)) {
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

/* F_COUNTS's object; NULL when out of memory. */
static json_t *encode_counts(const struct ctlcmd_field *f, const char *base)
{
	const int64_t *k = (const int64_t *)(base + f->off);
	json_t *o = json_object();

	for (int64_t i = 0; o && i < f->hi; i++)
		if (json_object_set_new(o, f->names[i], json_integer(k[i]))) {
			json_decref(o);
			o = NULL;
		}
	return o;
}

/* Field f of the struct at base as JSON: a new value; *ret NULL when it
 * is left out. 0, or -1 when out of memory or a string is not UTF-8. */
static int encode_value(const struct ctlcmd_field *f, const char *base,
			json_t **ret)
{
	const void *p = base + f->off;
	json_t *v = NULL;
	int64_t k;
	double d;

	switch (f->kind) {
	case F_JOB:
	case F_INT:
		k = *(const int64_t *)p;
		if (f->required || k != f->def)
			v = f->nul && !k ? json_null() : json_integer(k);
		break;
	case F_NUM:
		d = *(const double *)p;
		if (f->required || d != (double)f->def)
			v = f->nul && d == 0 ? json_null() : json_real(d);
		break;
	case F_BOOL:
	case F_ROLE:
		k = *(const int *)p;
		if (f->required || k != f->def)
			v = f->kind == F_BOOL ? json_boolean(k) :
			    json_string(k >= f->lo && k <= f->hi ? role_names[k] : "");
		break;
	case F_STR:
	case F_NAME:
	case F_PATH:
		if (*(const char *const *)p && !(v = json_string(*(const char *const *)p)))
			return -1;  /* not UTF-8 */
		if (!v && f->nul)
			v = json_null();
		break;
	case F_OBJ:
	case F_ANY:
		v = json_incref(*(json_t *const *)p);
		if (!v && f->nul)
			v = json_null();
		break;
	case F_COUNTS:
		if (!(v = encode_counts(f, base)))
			return -1;
		break;
	case F_STRS:
	case F_INTS:
	case F_ROWS:
		if (!f->required && *(const size_t *)(base + f->off2) == 0)
			break;
		if (!(v = encode_list(f, base)))
			return -1;
		break;
	}
	*ret = v;
	return 0;
}

/* Fields f[0..n) of the struct at base into o, in the table's order; 0,
 * or -1 when out of memory or a string is not UTF-8. */
static int encode_fields(const struct ctlcmd_field *f, size_t n,
			 const char *base, json_t *o)
{
	for (size_t i = 0; i < n; i++, f++) {
		json_t *v;

		if (encode_value(f, base, &v))
			return -1;
		if (v && json_object_set_new(o, f->key, v))
			return -1;
	}
	return 0;
}

int ctlcmd_decode(const struct ctlcmd *c, const json_t *req,
		  struct ctlcmd_req *ret, char *err, size_t errlen)
{
	struct ctlcmd_req out;

	memset(&out, 0, sizeof(out));
	out.cmd = (enum ctlcmd_id)(c - ctlcmd_table);
	if (decode_fields(c, c->fields, c->n_fields, req, (char *)&out, err, errlen))
		return GERR_INVAL;
	*ret = out;
	return 0;
}

json_t *ctlcmd_encode(const struct ctlcmd_req *req)
{
	const struct ctlcmd *c;
	json_t *o;

	if ((unsigned)req->cmd >= CTLCMD_COUNT)
		return NULL;
	c = &ctlcmd_table[req->cmd];
	o = json_pack("{s:s}", "cmd", c->name);
	if (o && encode_fields(c->fields, c->n_fields, (const char *)req, o)) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

/* ---- replies ---- */

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
		if (f->kind != F_ROWS && decode_field(&one, e, items) == 0)
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
			set_default(f, base);
			continue;
		}
		if (absent)
			rc = -1;
		else if (f->kind == F_STRS || f->kind == F_INTS || f->kind == F_ROWS)
			rc = reply_list(c, f, v, base, path, err, errlen);
		else if (f->kind == F_COUNTS)
			rc = reply_counts(f, v, base);
		else
			rc = decode_field(f, v, base);
		if (rc == 0)
			continue;
		if (rc == -1 && f->req_msg) {
			if (f->bad)
				snprintf(err, errlen, "%s", f->bad);
			else
				generic_bad(c, f, err, errlen);
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
	if (reply_fields(c, c->reply, c->n_reply, reply, (char *)&out, "", err, errlen)) {
		clear_fields(c->reply, c->n_reply, (char *)&out);
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
	for (size_t i = 0; i < c->n_reply; i++)
		if (c->reply[i].kind == F_ROWS)
			return json_object_get(reply, c->reply[i].key);
	return NULL;
}

void ctlcmd_reply_clear(struct ctlcmd_reply *rep)
{
	const struct ctlcmd *c;

	if (!rep || (unsigned)rep->cmd >= CTLCMD_COUNT)
		return;
	c = &ctlcmd_table[rep->cmd];
	if (c->reply)
		clear_fields(c->reply, c->n_reply, (char *)rep);
	memset(rep, 0, sizeof(*rep));
}

const char *ctlcmd_lease_state_name(int s)
{
	return s >= 0 && s < CTLCMD_LEASE_STATES ? lease_states[s] : "?";
}

json_t *ctlcmd_reply_encode(enum ctlcmd_id id, const struct ctlcmd_reply *rep)
{
	const struct ctlcmd *c;
	json_t *o;

	if ((unsigned)id >= CTLCMD_COUNT || !ctlcmd_table[id].reply)
		return NULL;
	c = &ctlcmd_table[id];
	o = json_pack("{s:b}", OK_KEY, 1);
	if (o && encode_fields(c->reply, c->n_reply, (const char *)rep, o)) {
		json_decref(o);
		o = NULL;
	}
	return o;
}
