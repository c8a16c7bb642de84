/* msg.h - the worker protocol's messages: one typed struct per message and
 * one codec, used by gpud (daemon/worker_proto.c) and gpuworker (worker/).
 *
 * proto.h frames bytes; this module gives each frame's JSON header a C
 * type. Every field name, its JSON type, its bounds (string lengths,
 * integer ranges, 64-digit hex) and whether it is required live in one
 * field table per message in msg.c, and both directions go through it:
 * what msg_*_encode writes, msg_*_decode accepts, and nothing else.
 *
 * Messages ("->" worker to gpud, "<-" gpud to worker; [x] optional):
 *   HELLO      -> proto, worker, instance, device, workloads[], [cuda],
 *                 [threads], [host], [slurm_job], [slurm_array], [pod]
 *                 (place.h; instance: this process among those of its
 *                 credential, place_instance_check's rule)
 *   WELCOME    <- worker_id, heartbeat_s, [checkpoint_s]
 *   CLAIM      -> (no field: gpud sizes leases by the rates it measured
 *                 on verified work, never by one a worker states)
 *   LEASE      <- lease, epoch, job, workload, params{}, spec{}, units,
 *                 [deadline_s], [units_done]       bin: checkpoint or none
 *   NOLEASE    <- [retry_s], [reason]
 *   WITHDRAW   -> [reason]   the claim gpud holds is no longer wanted (the
 *                 worker stops): its NOLEASE comes at once, no other reply
 *   HEARTBEAT  -> lease, epoch, units_done
 *   HB_ACK     <- lease, epoch, action (continue | stop | release)
 *   CHECKPOINT -> lease, epoch, units_done         bin: blob (required)
 *   RESULT     -> lease, epoch, units_done, [seconds]  bin: blob (required)
 *   ACK        <- lease, epoch, what (checkpoint | result | release)
 *   RELEASE    -> lease, epoch, [error]
 *   FETCH      -> hash (64 hex)
 *   BLOB       <- hash (64 hex)                   bin: the blob
 *   ERROR      <- code, message, [lease, epoch], [hash]
 * (CTL_REQ / CTL_REPLY are gpuctl's, free-form, and not covered here.)
 *
 * Rules the table enforces, both ways:
 *  - a required field must be present, an optional one may be absent;
 *    an absent optional number reads as its default (0 unless noted),
 *    an absent optional string as NULL. Encoding leaves out an optional
 *    number equal to its default and an optional string that is NULL.
 *  - integers are JSON integers within the field's range (ids, epochs and
 *    counts 0..INT64_MAX); numbers are JSON numbers (integer or real);
 *    strings have no NUL and at most the field's length; hex fields are
 *    exactly 64 lowercase hex digits; enums are one of their names;
 *    objects are JSON objects; the workload list is an array of at most
 *    MSG_WORKLOADS_MAX strings.
 *  - fields the table does not name are ignored (a newer peer may add).
 *
 * Ownership: decoding borrows. Strings and objects in a decoded struct
 * point into the header it was decoded from and are valid while that
 * header is (no *_clear: nothing in a struct is owned). Encoding copies:
 * the struct is only read, and *ret_header is a new JSON object that owns
 * all it holds (objects are deep copies); the caller json_decref's it or
 * hands it on.
 *
 * Threads: pure code over const tables, no state; any thread may call any
 * function, as long as it does not share the JSON values with another
 * thread meanwhile (jansson's reference counts are not atomic).
 *
 * Errors: decoding returns 0 or GERR_PROTO with a one-line reason in err
 * ("HELLO: \"device\" is too long (70 > 63)"); encoding returns 0,
 * GERR_INVAL (the struct breaks a rule) or GERR_NOMEM, and leaves
 * *ret_header NULL unless it returns 0.
 */
#ifndef GPUD_MSG_H
#define GPUD_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "place.h"
#include "proto.h"

#define MSG_WORKER_MAX 64        /* = AUTH_NAME_MAX */
#define MSG_DEVICE_MAX 63        /* "cpu", "cuda:N" */
#define MSG_WORKLOAD_MAX 31      /* a workload's name */
#define MSG_WORKLOADS_MAX 32     /* workloads one HELLO offers */
#define MSG_TEXT_MAX 1024        /* reasons, error messages */
#define MSG_HEX_LEN 64           /* nonce, mac, blob hash: 64 hex digits */

enum msg_hb_action {
	MSG_HB_CONTINUE,
	MSG_HB_STOP,
	MSG_HB_RELEASE,
	MSG_HB_GIVE_BACK, /* checkpoint and release: gpud cuts the rest */
};

enum msg_ack_what {
	MSG_ACK_CHECKPOINT,
	MSG_ACK_RESULT,
	MSG_ACK_RELEASE,
};

struct msg_hello {
	uint64_t proto;                 /* PROTO_VERSION, nothing else */
	const char *worker;             /* token name, <= MSG_WORKER_MAX */
	const char *instance;           /* <= PLACE_INSTANCE_MAX, rule by gpud */
	const char *device;             /* <= MSG_DEVICE_MAX */
	const char *workloads[MSG_WORKLOADS_MAX]; /* each <= MSG_WORKLOAD_MAX */
	size_t n_workloads;
	int cuda;                       /* [bool] */
	uint64_t threads;               /* [0..65535] */
	/* [where it runs: lengths bounded here, place_check's rules
	 * applied by gpud] */
	const char *host;               /* [<= PLACE_HOST_MAX] */
	const char *slurm_job;          /* [<= PLACE_SLURM_MAX] */
	const char *slurm_array;        /* [<= PLACE_SLURM_MAX] */
	const char *pod;                /* [<= PLACE_POD_MAX] */
};

/* Remote gpuctl's login: then WELCOME, as a worker's. */
struct msg_ctl_hello {
	uint64_t proto;                 /* PROTO_VERSION, nothing else */
	const char *name;               /* token name, <= MSG_WORKER_MAX */
};

struct msg_welcome {
	uint64_t worker_id;
	double heartbeat_s;
	double checkpoint_s;            /* [] */
	const char *role;               /* [] the token's role (auth.h) */
};

struct msg_claim {
	char none;                      /* C wants a member; never sent */
};

struct msg_lease {
	uint64_t lease, epoch, job;
	const char *workload;           /* <= MSG_WORKLOAD_MAX */
	const json_t *params, *spec;    /* objects */
	uint64_t units;
	double deadline_s;              /* [] */
	uint64_t units_done;            /* [progress of the checkpoint sent] */
};

struct msg_nolease {
	double retry_s;                 /* [default 1] */
	const char *reason;             /* [<= MSG_TEXT_MAX] */
};

struct msg_heartbeat {
	uint64_t lease, epoch, units_done;
};

struct msg_hb_ack {
	uint64_t lease, epoch;
	enum msg_hb_action action;
};

struct msg_checkpoint {
	uint64_t lease, epoch, units_done;
};

struct msg_result {
	uint64_t lease, epoch, units_done;
	double seconds;                 /* [] */
};

struct msg_ack {
	uint64_t lease, epoch;
	enum msg_ack_what what;
};

struct msg_release {
	uint64_t lease, epoch;
	const char *error;              /* [<= MSG_TEXT_MAX] why the run failed */
};

struct msg_withdraw {
	const char *reason;             /* [<= MSG_TEXT_MAX] why, for the log */
};

struct msg_fetch {
	const char *hash;               /* hex */
};

struct msg_blob {
	const char *hash;               /* hex */
};

struct msg_error {
	int64_t code;                   /* a GERR_* (negative) */
	const char *message;            /* <= MSG_TEXT_MAX */
	uint64_t lease, epoch;          /* [both 0: not about a lease] */
	const char *hash;               /* [hex: the answer to a FETCH] */
};

/* The generic codec behind the typed functions below. size must be the
 * size of type's struct (a mismatch is GERR_INVAL): it catches a struct
 * handed in under the wrong type. */
int msg_encode(enum proto_type type, const void *msg, size_t size,
	       json_t **ret_header);
int msg_decode(enum proto_type type, const json_t *header, void *ret,
	       size_t size, char *err, size_t errlen);

/* Non-zero when type is a worker-protocol message this module knows. */
int msg_known(int type);

/* The attachment rule of type: CHECKPOINT and RESULT need a non-empty
 * one; others may carry one or not. Returns 0 or GERR_PROTO (with err). */
int msg_check_bin(enum proto_type type, size_t bin_len, char *err,
		  size_t errlen);

/* Name of an action / ack kind ("continue"), "?" when out of range; and
 * back from a name: 0 and *ret, or GERR_INVAL. */
const char *msg_hb_action_name(enum msg_hb_action a);
int msg_hb_action_parse(const char *name, enum msg_hb_action *ret);
const char *msg_ack_what_name(enum msg_ack_what w);

/* msg_<name>_encode(const struct msg_<name> *, json_t **ret_header) and
 * msg_<name>_decode(const json_t *header, struct msg_<name> *ret,
 * char *err, size_t errlen) for every message above. */
#define MSG_CODEC(name, TYPE)                                               \
	static inline int msg_##name##_encode(const struct msg_##name *m,   \
					      json_t **ret_header)          \
	{                                                                   \
		return msg_encode(TYPE, m, sizeof(*m), ret_header);         \
	}                                                                   \
	static inline int msg_##name##_decode(const json_t *header,         \
					      struct msg_##name *ret,       \
					      char *err, size_t errlen)     \
	{                                                                   \
		return msg_decode(TYPE, header, ret, sizeof(*ret), err,     \
				  errlen);                                  \
	}

MSG_CODEC(hello, PROTO_HELLO)
MSG_CODEC(welcome, PROTO_WELCOME)
MSG_CODEC(claim, PROTO_CLAIM)
MSG_CODEC(lease, PROTO_LEASE)
MSG_CODEC(nolease, PROTO_NOLEASE)
MSG_CODEC(heartbeat, PROTO_HEARTBEAT)
MSG_CODEC(hb_ack, PROTO_HB_ACK)
MSG_CODEC(checkpoint, PROTO_CHECKPOINT)
MSG_CODEC(result, PROTO_RESULT)
MSG_CODEC(ack, PROTO_ACK)
MSG_CODEC(release, PROTO_RELEASE)
MSG_CODEC(fetch, PROTO_FETCH)
MSG_CODEC(blob, PROTO_BLOB)
MSG_CODEC(error, PROTO_ERROR)
MSG_CODEC(ctl_hello, PROTO_CTL_HELLO)
MSG_CODEC(withdraw, PROTO_WITHDRAW)

#undef MSG_CODEC

#endif
