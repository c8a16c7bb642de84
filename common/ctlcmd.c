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
};

struct ctlcmd_field {
	const char *key;
	enum fkind kind;
	size_t off;
	int required;
	int64_t lo, hi, def;
	const char *bad;   /* the whole message when refused; NULL: generic */
};

#define XSTR(x) #x
#define STR(x) XSTR(x)
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define M(m) offsetof(struct ctlcmd_req, m)

#define JOB { "job", F_JOB, M(job), 1, 1, INT64_MAX, 0, NULL }
#define JOB_OPT { "job", F_JOB, M(job), 0, 1, INT64_MAX, 0, NULL }
#define ALL_OPT { "all", F_BOOL, M(all), 0, 0, 1, 0, NULL }
#define ARGS(req) { "args", F_OBJ, M(args), req, 0, 0, 0, NULL }

_Static_assert(sizeof(enum auth_role) == sizeof(int), "enum size");

static const struct ctlcmd_field submit_fields[] = {
	{ "workload", F_STR, M(workload), 1, 0, CTLCMD_WORKLOAD_MAX, 0, NULL },
	ARGS(1),
	{ "name", F_NAME, M(name), 0, 1, CTLCMD_JOB_NAME_MAX, 0,
	  "a job name is 1 to " STR(CTLCMD_JOB_NAME_MAX) " characters of "
	  "A-Z a-z 0-9 . _ -" },
	{ "priority", F_INT, M(priority), 0, CTLCMD_PRIORITY_MIN,
	  CTLCMD_PRIORITY_MAX, 0, "a job's priority is an integer from "
	  STR(CTLCMD_PRIORITY_MIN) " to " STR(CTLCMD_PRIORITY_MAX)
	  " (higher runs first)" },
};

static const struct ctlcmd_field status_fields[] = { JOB_OPT, ALL_OPT };

static const struct ctlcmd_field history_fields[] = {
	ALL_OPT,
	{ "limit", F_INT, M(limit), 0, 1, CTLCMD_HISTORY_LIMIT_MAX,
	  CTLCMD_HISTORY_LIMIT_DEFAULT, NULL },
};

static const struct ctlcmd_field priority_fields[] = {
	JOB,
	{ "priority", F_INT, M(priority), 1, CTLCMD_PRIORITY_MIN,
	  CTLCMD_PRIORITY_MAX, 0, NULL },
};

static const struct ctlcmd_field job_fields[] = { JOB };

static const struct ctlcmd_field extend_fields[] = { JOB, ARGS(1) };

static const struct ctlcmd_field export_fields[] = {
	JOB,
	{ "what", F_STR, M(what), 1, 0, CTLCMD_WHAT_MAX, 0, "export needs 'what'" },
	ARGS(0),
};

static const struct ctlcmd_field token_add_fields[] = {
	{ "role", F_ROLE, M(role), 0, AUTH_ROLE_WORKER, AUTH_ROLE_ADMIN,
	  AUTH_ROLE_WORKER, "a token's role is worker, viewer or admin" },
	{ "name", F_NAME, M(name), 1, 1, AUTH_NAME_MAX, 0,
	  "token names are 1.." STR(AUTH_NAME_MAX) " characters of A-Z a-z "
	  "0-9 . _ -" },
};

static const struct ctlcmd_field token_revoke_fields[] = {
	{ "name", F_NAME, M(name), 1, 1, AUTH_NAME_MAX, 0,
	  "token_revoke needs a valid token name" },
};

static const struct ctlcmd_field backup_fields[] = {
	{ "dir", F_PATH, M(dir), 1, 1, CTLCMD_PATH_MAX, 0,
	  "backup needs 'dir': an absolute path of at most "
	  STR(CTLCMD_PATH_MAX) " bytes" },
	{ "copy", F_BOOL, M(copy), 0, 0, 1, 0, "backup's 'copy' is true or false" },
};

/* Reply fields: every one required. */
#define R(m) offsetof(struct ctlcmd_reply, m)
#define R_JOB { "job", F_JOB, R(job), 1, 1, INT64_MAX, 0, NULL }
#define R_STATE { "state", F_STR, R(state), 1, 1, 32, 0, NULL }

static const struct ctlcmd_field ping_reply[] = {
	{ "version", F_STR, R(version), 1, 0, 64, 0, NULL },
};
static const struct ctlcmd_field submit_reply[] = { R_JOB };
static const struct ctlcmd_field priority_reply[] = {
	R_JOB,
	{ "priority", F_INT, R(priority), 1, CTLCMD_PRIORITY_MIN,
	  CTLCMD_PRIORITY_MAX, 0, NULL },
};
static const struct ctlcmd_field state_reply[] = { R_JOB, R_STATE };
static const struct ctlcmd_field extend_reply[] = {
	R_JOB, R_STATE,
	{ "total_units", F_INT, R(total_units), 1, 0, INT64_MAX, 0, NULL },
};
static const struct ctlcmd_field export_reply[] = {
	{ "bytes", F_INT, R(bytes), 1, 0, INT64_MAX, 0, NULL },
};
static const struct ctlcmd_field token_revoke_reply[] = {
	{ "revoked", F_NAME, R(revoked), 1, 1, AUTH_NAME_MAX, 0, NULL },
};

#define ROW(n, role, flags, f) { n, AUTH_ROLE_##role, flags, f, N(f), NULL, 0 }
#define BARE(n, role, flags) { n, AUTH_ROLE_##role, flags, NULL, 0, NULL, 0 }
#define TYPED(n, role, flags, f, r) { n, AUTH_ROLE_##role, flags, f, N(f), r, N(r) }
#define RO CTLCMD_READONLY

const struct ctlcmd ctlcmd_table[CTLCMD_COUNT] = {
	[CTLCMD_PING]         = { "ping", AUTH_ROLE_VIEWER, RO, NULL, 0, ping_reply,
				  N(ping_reply) },
	[CTLCMD_SUBMIT]       = TYPED("submit", ADMIN, CTLCMD_BIN_IN, submit_fields,
				      submit_reply),
	[CTLCMD_STATUS]       = ROW("status", VIEWER, RO, status_fields),
	[CTLCMD_HISTORY]      = ROW("history", VIEWER, RO, history_fields),
	[CTLCMD_PRIORITY]     = TYPED("priority", ADMIN, 0, priority_fields, priority_reply),
	[CTLCMD_RESULT]       = ROW("result", VIEWER, RO | CTLCMD_BIN_OUT, job_fields),
	[CTLCMD_CANCEL]       = TYPED("cancel", ADMIN, 0, job_fields, state_reply),
	[CTLCMD_PAUSE]        = TYPED("pause", ADMIN, 0, job_fields, state_reply),
	[CTLCMD_RESUME]       = TYPED("resume", ADMIN, 0, job_fields, state_reply),
	[CTLCMD_WORKERS]      = BARE("workers", VIEWER, RO),
	[CTLCMD_WORKLOADS]    = BARE("workloads", VIEWER, RO),
	[CTLCMD_EXTEND]       = TYPED("extend", ADMIN, 0, extend_fields, extend_reply),
	[CTLCMD_EXPORT]       = TYPED("export", VIEWER, RO | CTLCMD_BIN_OUT, export_fields,
				      export_reply),
	[CTLCMD_TOKEN_ADD]    = ROW("token_add", ADMIN, 0, token_add_fields),
	/* Read-only, yet it lists credentials: an admin's. */
	[CTLCMD_TOKEN_LIST]   = BARE("token_list", ADMIN, RO),
	[CTLCMD_TOKEN_REVOKE] = TYPED("token_revoke", ADMIN, 0, token_revoke_fields,
				      token_revoke_reply),
	/* check marks damaged jobs in the database. */
	[CTLCMD_CHECK]        = BARE("check", ADMIN, 0),
	[CTLCMD_BACKUP]       = ROW("backup", ADMIN, RO, backup_fields),
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
	}
	return -1;
}

static void set_default(const struct ctlcmd_field *f, char *base)
{
	if (f->kind == F_JOB || f->kind == F_INT)
		*(int64_t *)(base + f->off) = f->def;
	else if (f->kind == F_BOOL || f->kind == F_ROLE)
		*(int *)(base + f->off) = (int)f->def;
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

		if (absent && !f->required) {
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

/* Fields f[0..n) of the struct at base into o; 0, or -1 when out of
 * memory or a string is not UTF-8. */
static int encode_fields(const struct ctlcmd_field *f, size_t n,
			 const char *base, json_t *o)
{
	for (size_t i = 0; i < n; i++, f++) {
		const void *p = base + f->off;
		json_t *v = NULL;
		int64_t k;

		switch (f->kind) {
		case F_JOB:
		case F_INT:
			k = *(const int64_t *)p;
			if (f->required || k != f->def)
				v = json_integer(k);
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
			break;
		case F_OBJ:
			v = json_incref(*(json_t *const *)p);
			break;
		}
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

int ctlcmd_reply_decode(const struct ctlcmd *c, const json_t *reply,
			struct ctlcmd_reply *ret, char *err, size_t errlen)
{
	struct ctlcmd_reply out;

	memset(&out, 0, sizeof(out));
	if (!c->reply) {
		snprintf(err, errlen, "'%s' has no typed reply", c->name);
		return GERR_INVAL;
	}
	if (decode_fields(c, c->reply, c->n_reply, reply, (char *)&out, err, errlen))
		return GERR_INVAL;
	*ret = out;
	return 0;
}

json_t *ctlcmd_reply_encode(enum ctlcmd_id id, const struct ctlcmd_reply *rep)
{
	const struct ctlcmd *c;
	json_t *o;

	if ((unsigned)id >= CTLCMD_COUNT || !ctlcmd_table[id].reply)
		return NULL;
	c = &ctlcmd_table[id];
	o = json_pack("{s:b}", "ok", 1);
	if (o && encode_fields(c->reply, c->n_reply, (const char *)rep, o)) {
		json_decref(o);
		o = NULL;
	}
	return o;
}
