/* ctlcmd.h - the control API's commands as data: one row per command
 * (name, the least role that may ask, flags, request fields) and one
 * codec over them, used by gpud (daemon/control/) and gpuctl
 * (tools/gpuctl/). The reply shapes are in daemon/control/control.h.
 *
 * A request is a JSON object {"cmd": NAME, field: value, ..}. Every field
 * a command takes is a member of struct ctlcmd_req; each row's field
 * table says which members its JSON carries, their JSON type, bounds and
 * whether they are required. gpud decodes every request through the
 * table (ctlcmd_decode) before any handler runs; gpuctl encodes every
 * request from the struct (ctlcmd_encode), so the keys are spelled only
 * in ctlcmd.c. The small replies are typed alike (struct ctlcmd_reply):
 * gpud encodes them, gpuctl decodes them.
 *
 * Rules the codec enforces on decoding:
 *  - a required field must be present; an optional one may be absent or
 *    JSON null, and then reads as its default (0, or the field's default;
 *    NULL for strings and objects);
 *  - job ids are JSON integers > 0; integers are JSON integers within the
 *    field's range; booleans are true or false; strings have no NUL and a
 *    length within the field's bounds; names are 1..max of [A-Za-z0-9._-];
 *    paths are strings that begin with '/'; enums are one of their names;
 *    objects are JSON objects;
 *  - fields the row does not name are ignored.
 * Encoding writes the fields the row names from the struct (an optional
 * number equal to its default, or a NULL string or object, is left out)
 * and checks no bounds: values are gpud's to refuse, with its messages.
 *
 * Ownership: decoding borrows: strings and objects in *ret point into the
 * request it was decoded from and live as long as it does. Encoding
 * returns a new object that holds a new reference to req->args.
 *
 * Threads: pure code over const tables; any thread may call, as long as
 * the JSON values are not shared with another thread meanwhile (jansson's
 * reference counts are not atomic).
 */
#ifndef GPUD_CTLCMD_H
#define GPUD_CTLCMD_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "auth.h"

/* Bounds shared with gpud's store (checked there by _Static_assert). */
#define CTLCMD_JOB_NAME_MAX 64
#define CTLCMD_PRIORITY_MIN -1000
#define CTLCMD_PRIORITY_MAX 1000
#define CTLCMD_HISTORY_LIMIT_DEFAULT 1000
#define CTLCMD_HISTORY_LIMIT_MAX 100000
#define CTLCMD_WHAT_MAX 32        /* an export's name */
#define CTLCMD_PATH_MAX 3800      /* = BACKUP_PATH_MAX */
#define CTLCMD_WORKLOAD_MAX 255   /* longer is unknown all the same */

enum ctlcmd_id {
	CTLCMD_PING,
	CTLCMD_SUBMIT,
	CTLCMD_STATUS,
	CTLCMD_HISTORY,
	CTLCMD_PRIORITY,
	CTLCMD_RESULT,
	CTLCMD_CANCEL,
	CTLCMD_PAUSE,
	CTLCMD_RESUME,
	CTLCMD_WORKERS,
	CTLCMD_WORKLOADS,
	CTLCMD_EXTEND,
	CTLCMD_EXPORT,
	CTLCMD_TOKEN_ADD,
	CTLCMD_TOKEN_LIST,
	CTLCMD_TOKEN_REVOKE,
	CTLCMD_CHECK,
	CTLCMD_BACKUP,
	CTLCMD_COUNT
};

/* Row flags. */
#define CTLCMD_READONLY 1u  /* changes nothing gpud stores */
#define CTLCMD_BIN_IN 2u    /* may carry a binary part (submit's file) */
#define CTLCMD_BIN_OUT 4u   /* its reply may carry one (result, export) */

/* Every request field, typed. Which ones a command carries is its row's. */
struct ctlcmd_req {
	enum ctlcmd_id cmd;
	int64_t job;            /* a job id; 0 when absent */
	int64_t priority;       /* submit, priority */
	int64_t limit;          /* history; default CTLCMD_HISTORY_LIMIT_DEFAULT */
	int all;                /* status, history */
	int copy;               /* backup */
	const char *workload;   /* submit */
	const char *name;       /* submit: the job's name; token_*: the token's */
	const char *what;       /* export */
	const char *dir;        /* backup: an absolute path */
	enum auth_role role;    /* token_add; default AUTH_ROLE_WORKER */
	json_t *args;           /* submit, extend, export: borrowed */
};

/* The small replies, typed: ping, submit, priority, cancel, pause,
 * resume, extend, export and token_revoke. The others (status, history,
 * result, workers, workloads, token_add, token_list, check, backup) are
 * described in daemon/control/control.h and read as JSON. */
struct ctlcmd_reply {
	int64_t job;
	int64_t priority;
	int64_t total_units;
	int64_t bytes;          /* export: the binary part's length */
	const char *state;      /* the job's state as gpuctl status shows it */
	const char *version;    /* ping: gpud's */
	const char *revoked;    /* token_revoke: the token's name */
};

struct ctlcmd_field;

struct ctlcmd {
	const char *name;
	enum auth_role role;    /* the least role that may ask */
	unsigned flags;         /* CTLCMD_* */
	const struct ctlcmd_field *fields;
	size_t n_fields;
	const struct ctlcmd_field *reply;  /* NULL: an untyped reply */
	size_t n_reply;
};

/* The rows, indexed by enum ctlcmd_id. */
extern const struct ctlcmd ctlcmd_table[CTLCMD_COUNT];

/* The row named name, or NULL. */
const struct ctlcmd *ctlcmd_find(const char *name);
/* 1 when role may run c: viewers the read-only commands, admins all. */
int ctlcmd_allowed(const struct ctlcmd *c, enum auth_role role);

/* Check req against c's row (c: a row of ctlcmd_table) and fill *ret
 * (zeroed, then the defaults).
 * 0, or GERR_INVAL with a one-line message for the user in err ("'history'
 * needs 'limit': an integer from 1 to 100000"); *ret is written only on
 * success. */
int ctlcmd_decode(const struct ctlcmd *c, const json_t *req,
		  struct ctlcmd_req *ret, char *err, size_t errlen);

/* {"cmd": NAME, ..} for req->cmd, a new object; NULL when out of memory
 * or req->cmd is out of range. */
json_t *ctlcmd_encode(const struct ctlcmd_req *req);

/* A successful reply of a row with typed reply fields (c->reply): into
 * *ret as ctlcmd_decode does (the same rules; every reply field is
 * required). 0, or GERR_INVAL with the reason in err. */
int ctlcmd_reply_decode(const struct ctlcmd *c, const json_t *reply,
			struct ctlcmd_reply *ret, char *err, size_t errlen);
/* {"ok": true, ..} from rep for command id, a new object; NULL when out of
 * memory, or when id's row has no typed reply. */
json_t *ctlcmd_reply_encode(enum ctlcmd_id id, const struct ctlcmd_reply *rep);

#endif
