/* ctlcmd.h - the control API's commands as data: one row per command
 * (name, the least role that may ask, flags, request fields) and one
 * codec over them, used by gpud (daemon/control/) and gpuctl
 * (tools/gpuctl/). control.h describes the requests and replies.
 *
 * A request is a JSON object {"cmd": NAME, field: value, ..}. Every field
 * a command takes is a member of struct ctlcmd_req; each row's field
 * table says which members its JSON carries, their JSON type, bounds and
 * whether they are required. gpud decodes every request through the
 * table (ctlcmd_decode) before any handler runs; gpuctl encodes every
 * request from the struct (ctlcmd_encode), so the keys are spelled only
 * in ctlcmd.c. Every reply is typed alike (struct ctlcmd_reply, with
 * the rows of its lists: jobs, workers, tokens, problems, workloads):
 * gpud encodes each reply through ctlcmd_reply_encode, gpuctl decodes it
 * through ctlcmd_reply_decode; a workload's own JSON (a job's params) is
 * one opaque field.
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
#define CTLCMD_PAGE_VALID_MIN 60              /* page_link's "valid", s */
#define CTLCMD_PAGE_VALID_MAX (90 * 86400)
#define CTLCMD_PAGE_VALID_DEFAULT (7 * 86400)
/* A job's owner (status and history's "owner", their "user" filter):
 * a credential's name or a Unix user ("uid N" when it has no name). */
#define CTLCMD_OWNER_MAX 64
/* history's "since" and "until", events' "since": Unix seconds, up to
 * the year 2100. */
#define CTLCMD_TIME_MAX 4102444800
#define CTLCMD_EVENTS_LIMIT_DEFAULT 1000
#define CTLCMD_EVENTS_LIMIT_MAX 100000
/* worker_*'s name: a credential, or CREDENTIAL@INSTANCE (place.h's
 * PLACE_INSTANCE_MAX of 64). */
#define CTLCMD_WORKER_NAME_MAX (AUTH_NAME_MAX + 1 + 64)
/* submit's time_limit, seconds (= the store's STORE_TIME_LIMIT_MIN/MAX). */
#define CTLCMD_TIME_LIMIT_MIN 1
#define CTLCMD_TIME_LIMIT_MAX (366 * 86400)

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
	CTLCMD_PAGE_LINK,
	CTLCMD_WORKER_DRAIN,
	CTLCMD_WORKER_RESUME,
	CTLCMD_WORKER_FORGIVE,
	CTLCMD_EVENTS,
	CTLCMD_REQUEUE,
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
	const char *name;       /* submit: the job's name; token_*: the token's;
				 * worker_*: a worker's or its credential's */
	const char *what;       /* export */
	const char *dir;        /* backup: an absolute path */
	enum auth_role role;    /* token_add; default AUTH_ROLE_WORKER */
	const char *public_key; /* token_add: the credential's, 64 hex digits */
	int64_t valid;          /* page_link: seconds; CTLCMD_PAGE_VALID_DEFAULT */
	int revoke;             /* page_link: end links instead */
	json_t *args;           /* submit, extend, export: borrowed */
	/* history's filters (workload above too), status's user; events'
	 * since and after (an event id) */
	int64_t since, until;   /* Unix seconds; 0: no bound */
	const char *state;      /* done, failed or cancelled */
	const char *user;       /* a job's owner */
	int64_t after;          /* events: an event id; submit: the job it
				 * runs after (0 none) */
	int64_t time_limit;     /* submit: seconds it may run; 0 none */
};

/* The replies' rows and lists. Numbers that a reply may send as null
 * read as 0 (NULL for strings) and 0 is written as null, unless noted;
 * "not sent" marks what an older gpud leaves out. Decoding allocates the
 * arrays (ctlcmd_reply_clear frees them); their strings and objects
 * borrow from the reply. */
#define CTLCMD_LEASE_STATES 6     /* the store's enum lease_state, in order */
#define CTLCMD_NOT_SENT (-1)      /* an optional count or time left out */

/* One job of status or history. */
struct ctlcmd_job {
	int64_t id;
	const char *name;             /* or NULL */
	const char *workload, *unit_name;
	const char *state;            /* queued, running, paused, done, .. */
	int64_t priority;             /* INT64_MIN: not sent */
	json_t *params;               /* the workload's own: opaque, or NULL */
	int64_t total_units, units_done, units_running, units_verified;
	int64_t leases[CTLCMD_LEASE_STATES], replicas[CTLCMD_LEASE_STATES];
	int64_t replicas_waiting, failed_waiting;
	const char *check;            /* sample or full */
	const char **workers;         /* the holders' names */
	size_t n_workers;
	const char *reason;           /* or NULL */
	double submitted_at, created_at;
	double started_at;            /* 0: not yet; < 0: not sent */
	double finished_at;           /* 0: not yet */
	double elapsed_s, avg_rate;   /* < 0: not sent */
	int64_t attempts, verify_failures;  /* < 0: not sent */
	const char *damaged;          /* or NULL */
	double rate, eta_s;           /* eta_s 0: not known */
	int64_t after_job;            /* the job it runs after; 0: none */
	double time_limit_s, ran_s;   /* its limit (0: none), time run */
	const char *owner;            /* who submitted it, or NULL */
};

/* One event of events. */
struct ctlcmd_event {
	int64_t id;
	double ts;
	const char *kind;
	const char *detail;           /* or NULL */
	int64_t lease, epoch;         /* lease 0: none */
	const char *worker;           /* its name, or NULL */
};

/* One worker of workers. */
struct ctlcmd_worker {
	int64_t id;
	const char *name, *device;    /* name: "TOKEN@INSTANCE", one process */
	const char *credential;       /* its token; NULL: an older gpud */
	const char *instance;         /* the process ("" for a row from
				       * before instances); NULL: older gpud */
	int online, quarantined;
	int drained;                  /* the operator's: granted nothing */
	int64_t failures, foreign_msgs, stalls, leases_done, units_done;
	double rate, last_seen;
	int64_t streak, confirmed;
	const char *place[4];         /* host, slurm_job, slurm_array, pod
				       * (place.h's order); NULL: not known */
	int64_t lease;                /* 0: none */
	int64_t trust_after;
	int trusted;
	int64_t job, threads;         /* 0: none, not known */
	const char *job_unit;         /* or NULL */
	int job_unit_sent;            /* decoding: the key was there (an older
				       * gpud sends none) */
};

/* One token of token_list. */
struct ctlcmd_token {
	const char *name;
	double created_at;
	int revoked;
	const char *role;             /* worker, viewer, admin; "?" */
};

/* One stored result found wrong by check or backup. */
struct ctlcmd_problem {
	int64_t job, lease;           /* lease 0: none */
	const char *where, *hash, *problem;
};

/* One parameter / export of a workload (workloads). */
struct ctlcmd_wl_param {
	const char *name, *type;
	const char *def;              /* "default", or NULL */
	const char *help;
};

struct ctlcmd_wl_export {
	const char *name, *help;
};

struct ctlcmd_workload {
	const char *name, *unit_name, *description;
	struct ctlcmd_wl_param *params;
	size_t n_params;
	struct ctlcmd_wl_export *exports;
	size_t n_exports;
	int extend;
};

/* Every reply field, typed; which ones a command's reply carries is its
 * row's (ctlcmd.c lists them, control.h describes them). */
struct ctlcmd_reply {
	enum ctlcmd_id cmd;     /* set by decoding; what ctlcmd_reply_clear walks */
	int64_t job;
	int64_t priority;
	int64_t total_units;
	int64_t bytes;          /* export: the binary part's length; backup's */
	const char *state;      /* the job's state as gpuctl status shows it */
	const char *version;    /* ping: gpud's */
	const char *revoked;    /* token_revoke: the token's name */
	const char *worker;     /* worker_*: the name asked for */
	int64_t changed;        /* worker_*: the worker rows it named */
	int64_t requeued;       /* requeue: the leases that run again */
	/* status, history */
	struct ctlcmd_job *jobs;
	size_t n_jobs;
	int64_t hidden;
	const char **warnings;  /* status: gpud's own trouble */
	size_t n_warnings;
	/* workers */
	struct ctlcmd_worker *workers;
	size_t n_workers;
	/* result */
	const char *workload;
	json_t *params;         /* the job's own: opaque */
	int64_t answer_bytes, units_verified;
	const char *text;       /* the rendered answer, or NULL */
	const char **files;     /* plots written */
	size_t n_files;
	const char **exports;
	size_t n_exports;
	const char *reason;     /* or NULL (then left out) */
	/* workloads */
	struct ctlcmd_workload *workloads;
	size_t n_workloads;
	/* token_add, token_list */
	const char *token, *gpud_key, *credential;  /* credential: or NULL */
	enum auth_role role;
	struct ctlcmd_token *tokens;
	size_t n_tokens;
	/* check, backup */
	int damaged, verified;
	const char **database;  /* SQLite's integrity problems */
	size_t n_database;
	int64_t references, blobs_checked, problems_total;
	struct ctlcmd_problem *problems;
	size_t n_problems;
	int64_t *damaged_jobs;
	size_t n_damaged_jobs;
	const char *path, *database_blake2b;
	int64_t database_bytes, blobs, blob_bytes, linked, copied, ident_files,
		leases_released, snapshots;
	double seconds;
	/* page_link */
	const char *url, *key;  /* NULL: none made (--revoke) */
	double expires_at;      /* 0: none made */
	int64_t revoked_links;
	/* events (and job, state above) */
	struct ctlcmd_event *events;
	size_t n_events;
	int64_t last_event;     /* the newest event's id; 0: none */
	int64_t left_out;       /* older events of the window not sent, as
				 * the reply would not fit in a frame */
};

struct ctlcmd_field;
struct ctlcmd_rows;

struct ctlcmd {
	const char *name;
	enum auth_role role;    /* the least role that may ask */
	unsigned flags;         /* CTLCMD_* */
	const struct ctlcmd_field *fields;
	size_t n_fields;
	const struct ctlcmd_rows *reply;   /* its reply's fields (ctlreply.c) */
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
 * *ret as ctlcmd_decode does (the same rules; a reply's field is
 * required unless the table says otherwise; lists are arrays of their
 * rows, each checked alike). 0, or GERR_INVAL with the reason in err
 * ("jobs[2].units_done: not an integer from 0 to .."); on failure
 * nothing is left allocated. On success ctlcmd_reply_clear frees what
 * decoding allocated. */
int ctlcmd_reply_decode(const struct ctlcmd *c, const json_t *reply,
			struct ctlcmd_reply *ret, char *err, size_t errlen);
/* {"ok": true, ..} from rep for command id, a new object; NULL when out of
 * memory, or when id's row has no typed reply. */
json_t *ctlcmd_reply_encode(enum ctlcmd_id id, const struct ctlcmd_reply *rep);
/* The array of reply's list (a job, worker, token or workload per row:
 * the first list of id's reply) as gpud sent it, borrowed from reply;
 * NULL when id's reply has no list or reply none. For printing a list
 * whole; read its rows through ctlcmd_reply_decode. */
const json_t *ctlcmd_reply_list(enum ctlcmd_id id, const json_t *reply);
/* The envelope every reply has: {"ok": true, ..}, or {"ok": false,
 * "error": msg} (a new object; NULL when out of memory). */
json_t *ctlcmd_reply_error(const char *msg);
/* 1 when reply says ok; else 0 and *ret_error gpud's message (borrowed;
 * NULL when it sent none). */
int ctlcmd_reply_ok(const json_t *reply, const char **ret_error);
/* reply less its envelope (its "ok"), in place, for printing; reply. */
json_t *ctlcmd_reply_body(json_t *reply);
/* result's reply as gpuctl result --json prints it: less its envelope,
 * its "answer_bytes" and "text", with answer (ownership taken) as
 * "answer"; in place, reply. */
json_t *ctlcmd_result_answer(json_t *reply, json_t *answer);
/* Free the arrays decoding put in rep (its strings stay the reply's);
 * rep is zeroed. NULL, or a zeroed struct, is a no-op. */
void ctlcmd_reply_clear(struct ctlcmd_reply *rep);
/* The key of lease state s in a job's "leases" ("pending"), "?" when out
 * of range. */
const char *ctlcmd_lease_state_name(int s);

#endif
