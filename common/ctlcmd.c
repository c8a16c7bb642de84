/* ctlcmd.c - the control API's command table and its codec (ctlcmd.h).
 *
 * Each row's field table gives a field's JSON name, kind, member of
 * struct ctlcmd_req, whether it is required, its bounds, and the message
 * a refusal prints when gpud has always said something more particular
 * than the kind's generic one ("bad" below). ctlcmd_decode and
 * ctlcmd_encode walk the same tables; this file is the only place a
 * request key is spelled.
 *
 * Replies use the same kinds with struct ctlcmd_reply's members; their
 * tables and their decoding are ctlreply.c's, their encoding is here
 * (ctlcmd_reply_encode: the same walk as a request's, lists and counts
 * included). ctlcmd_field.h is what the two files share.
 *
 * Invariant: whatever ctlcmd_encode writes from a struct that ctlcmd_decode
 * filled, ctlcmd_decode accepts and gives back equal; alike for replies
 * (test_ctl_cmd.c, test_ctl_reply.c).
 */
#include "ctlcmd.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctlcmd_field.h"
#include "gerr.h"

#define XSTR(x) #x
#define STR(x) XSTR(x)
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
	FLD("after", F_JOB, M(after), 0, 1, INT64_MAX, 0,
	  "'after' is a job id (a positive integer)"),
	FLD("time_limit", F_INT, M(time_limit), 0, CTLCMD_TIME_LIMIT_MIN,
	  CTLCMD_TIME_LIMIT_MAX, 0, "a time limit is 1 second to 366 days"),
};

static const struct ctlcmd_field status_fields[] = { JOB_OPT, ALL_OPT,
	FLD("user", F_STR, M(user), 0, 1, CTLCMD_OWNER_MAX, 0,
	  "a user is 1 to " STR(CTLCMD_OWNER_MAX) " bytes: a credential's name or a "
	  "Unix user") };

#define USER_OPT FLD("user", F_STR, M(user), 0, 1, CTLCMD_OWNER_MAX, 0, \
	"a user is 1 to " STR(CTLCMD_OWNER_MAX) " bytes: a credential's name or a " \
	"Unix user")
#define TIME_OPT(k, m) FLD(k, F_INT, M(m), 0, 0, CTLCMD_TIME_MAX, 0, \
	"'" k "' is a time in Unix seconds, from 0 to " STR(CTLCMD_TIME_MAX))

static const struct ctlcmd_field history_fields[] = {
	ALL_OPT,
	FLD("limit", F_INT, M(limit), 0, 1, CTLCMD_HISTORY_LIMIT_MAX,
	  CTLCMD_HISTORY_LIMIT_DEFAULT, NULL),
	TIME_OPT("since", since),
	TIME_OPT("until", until),
	FLD("state", F_STR, M(state), 0, 1, 16, 0,
	  "a finished job's state is done, failed or cancelled"),
	FLD("workload", F_STR, M(workload), 0, 1, CTLCMD_WORKLOAD_MAX, 0, NULL),
	USER_OPT,
};

static const struct ctlcmd_field events_fields[] = {
	JOB,
	TIME_OPT("since", since),
	FLD("after", F_INT, M(after), 0, 0, INT64_MAX, 0,
	  "'after' is an event id, an integer >= 0"),
	FLD("limit", F_INT, M(limit), 0, 1, CTLCMD_EVENTS_LIMIT_MAX,
	  CTLCMD_EVENTS_LIMIT_DEFAULT, NULL),
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
	FLD("public_key", F_STR, M(public_key), 1, 64, 64, 0,
	  "token_add needs 'public_key': the credential's Ed25519 public key, "
	  "64 hex digits"),
};

static const struct ctlcmd_field token_revoke_fields[] = {
	FLD("name", F_NAME, M(name), 1, 1, AUTH_NAME_MAX, 0,
	  "token_revoke needs a valid token name"),
};

static const struct ctlcmd_field worker_fields[] = {
	FLD("name", F_STR, M(name), 1, 1, CTLCMD_WORKER_NAME_MAX, 0,
	  "a worker is named CREDENTIAL@INSTANCE (gpuctl workers), or by its "
	  "credential for all its processes"),
};

static const struct ctlcmd_field backup_fields[] = {
	FLD("dir", F_PATH, M(dir), 1, 1, CTLCMD_PATH_MAX, 0,
	  "backup needs 'dir': an absolute path of at most "
	  STR(CTLCMD_PATH_MAX) " bytes"),
	FLD("copy", F_BOOL, M(copy), 0, 0, 1, 0, "backup's 'copy' is true or false"),
};

static const struct ctlcmd_field page_link_fields[] = {
	FLD("valid", F_INT, M(valid), 0, CTLCMD_PAGE_VALID_MIN, CTLCMD_PAGE_VALID_MAX,
	  CTLCMD_PAGE_VALID_DEFAULT, "a page link is valid for 1 minute to 90 days"),
	FLD("revoke", F_BOOL, M(revoke), 0, 0, 1, 0, "page_link's 'revoke' is true or false"),
};

#define ROW(id, n, role, flags, f) [id] = { n, AUTH_ROLE_##role, flags, f, N(f), \
					      &ctlreply_rows[id] }
#define BARE(id, n, role, flags) [id] = { n, AUTH_ROLE_##role, flags, NULL, 0, \
					  &ctlreply_rows[id] }
#define RO CTLCMD_READONLY

const struct ctlcmd ctlcmd_table[CTLCMD_COUNT] = {
	BARE(CTLCMD_PING, "ping", VIEWER, RO),
	ROW(CTLCMD_SUBMIT, "submit", ADMIN, CTLCMD_BIN_IN, submit_fields),
	ROW(CTLCMD_STATUS, "status", VIEWER, RO, status_fields),
	ROW(CTLCMD_HISTORY, "history", VIEWER, RO, history_fields),
	ROW(CTLCMD_PRIORITY, "priority", ADMIN, 0, priority_fields),
	ROW(CTLCMD_RESULT, "result", VIEWER, RO | CTLCMD_BIN_OUT, job_fields),
	ROW(CTLCMD_CANCEL, "cancel", ADMIN, 0, job_fields),
	ROW(CTLCMD_PAUSE, "pause", ADMIN, 0, job_fields),
	ROW(CTLCMD_RESUME, "resume", ADMIN, 0, job_fields),
	BARE(CTLCMD_WORKERS, "workers", VIEWER, RO),
	BARE(CTLCMD_WORKLOADS, "workloads", VIEWER, RO),
	ROW(CTLCMD_EXTEND, "extend", ADMIN, 0, extend_fields),
	ROW(CTLCMD_EXPORT, "export", VIEWER, RO | CTLCMD_BIN_OUT, export_fields),
	ROW(CTLCMD_TOKEN_ADD, "token_add", ADMIN, 0, token_add_fields),
	/* Read-only, yet it lists credentials: an admin's. */
	BARE(CTLCMD_TOKEN_LIST, "token_list", ADMIN, RO),
	ROW(CTLCMD_TOKEN_REVOKE, "token_revoke", ADMIN, 0, token_revoke_fields),
	/* check marks damaged jobs in the database. */
	BARE(CTLCMD_CHECK, "check", ADMIN, 0),
	ROW(CTLCMD_BACKUP, "backup", ADMIN, RO, backup_fields),
	/* A viewer may see the page: a link to it (and end viewers' links). */
	ROW(CTLCMD_PAGE_LINK, "page_link", VIEWER, 0, page_link_fields),
	/* The operator's hold on workers: drain, resume, forgive. */
	ROW(CTLCMD_WORKER_DRAIN, "worker_drain", ADMIN, 0, worker_fields),
	ROW(CTLCMD_WORKER_RESUME, "worker_resume", ADMIN, 0, worker_fields),
	ROW(CTLCMD_WORKER_FORGIVE, "worker_forgive", ADMIN, 0, worker_fields),
	/* A job's event log, as history a viewer's. */
	ROW(CTLCMD_EVENTS, "events", VIEWER, RO, events_fields),
	/* A failed or cancelled job back to the queue, its verified work kept. */
	ROW(CTLCMD_REQUEUE, "requeue", ADMIN, 0, job_fields),
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
void ctlcmd_field_bad(const struct ctlcmd *c, const struct ctlcmd_field *f,
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
int ctlcmd_field_decode(const struct ctlcmd_field *f, const json_t *v, char *base)
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

void ctlcmd_field_default(const struct ctlcmd_field *f, char *base)
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
			ctlcmd_field_default(f, base);
			continue;
		}
		if (!absent && ctlcmd_field_decode(f, v, base) == 0)
			continue;
		if (f->bad)
			snprintf(err, errlen, "%s", f->bad);
		else
			ctlcmd_field_bad(c, f, err, errlen);
		return GERR_INVAL;
	}
	return 0;
}


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
			 ctlcmd_fields_encode(f->rows->fields, f->rows->n_fields,
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
int ctlcmd_fields_encode(const struct ctlcmd_field *f, size_t n,
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
	if (o && ctlcmd_fields_encode(c->fields, c->n_fields, (const char *)req, o)) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

json_t *ctlcmd_reply_encode(enum ctlcmd_id id, const struct ctlcmd_reply *rep)
{
	const struct ctlcmd *c;
	json_t *o;

	if ((unsigned)id >= CTLCMD_COUNT)
		return NULL;
	c = &ctlcmd_table[id];
	o = json_pack("{s:b}", OK_KEY, 1);
	if (o && ctlcmd_fields_encode(c->reply->fields, c->reply->n_fields, (const char *)rep, o)) {
		json_decref(o);
		o = NULL;
	}
	return o;
}
