/* msg.c - the worker protocol's message codec (see msg.h).
 *
 * One table per message lists its fields: JSON name, kind, where the value
 * lives in the message's struct, whether it is optional, and its bounds.
 * msg_encode and msg_decode walk the same table, so the two directions
 * cannot disagree, and this file is the only place a field's name is
 * spelled.
 *
 * Invariants:
 *  1. Decoding writes *ret only on success; on failure *ret is zeroed.
 *  2. Whatever msg_encode accepts, msg_decode accepts and gives back equal
 *     (the fuzz target checks the other way round: what decodes encodes
 *     and decodes to the same struct).
 */
#include "msg.h"

#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gerr.h"

enum fkind {
	F_U64,     /* uint64_t, JSON integer in [min, max] */
	F_I64,     /* int64_t, JSON integer in [smin, smax] */
	F_BOOL,    /* int, JSON true/false */
	F_NUM,     /* double, JSON number in [dmin, dmax] */
	F_STR,     /* const char *, at most max bytes, no NUL */
	F_HEX,     /* const char *, exactly MSG_HEX_LEN lowercase hex digits */
	F_OBJ,     /* const json_t *, a JSON object */
	F_ENUM,    /* an enum, one of names[0..max] */
	F_STRS,    /* const char *[max_items] + size_t count at off2 */
};

struct field {
	const char *name;
	enum fkind kind;
	size_t off;
	int optional;
	uint64_t min, max;        /* F_U64 range; F_STR/F_STRS length */
	int64_t smin, smax;       /* F_I64 range */
	double dmin, dmax, def;   /* F_NUM range and default */
	const char *const *names; /* F_ENUM */
	size_t off2, max_items;   /* F_STRS: count's offset, array length */
};

struct mtype {
	const char *name;
	size_t size;
	const struct field *fields;
	size_t n_fields;
	int bin_required;
};

#define I64MAX ((uint64_t)INT64_MAX)

/* Field constructors: S is the message's struct, m its member. */
#define U64(n, S, m, lo, hi) \
	{ .name = n, .kind = F_U64, .off = offsetof(S, m), .min = lo, .max = hi }
#define U64_OPT(n, S, m, lo, hi) \
	{ .name = n, .kind = F_U64, .off = offsetof(S, m), .optional = 1, \
	  .min = lo, .max = hi }
#define NUM(n, S, m) \
	{ .name = n, .kind = F_NUM, .off = offsetof(S, m), .dmin = -DBL_MAX, \
	  .dmax = DBL_MAX }
#define NUM_OPT(n, S, m, d) \
	{ .name = n, .kind = F_NUM, .off = offsetof(S, m), .optional = 1, \
	  .dmin = -DBL_MAX, .dmax = DBL_MAX, .def = d }
#define BOOL_OPT(n, S, m) \
	{ .name = n, .kind = F_BOOL, .off = offsetof(S, m), .optional = 1 }
#define STR(n, S, m, len) \
	{ .name = n, .kind = F_STR, .off = offsetof(S, m), .max = len }
#define STR_OPT(n, S, m, len) \
	{ .name = n, .kind = F_STR, .off = offsetof(S, m), .optional = 1, \
	  .max = len }
#define HEX(n, S, m) { .name = n, .kind = F_HEX, .off = offsetof(S, m) }
#define HEX_OPT(n, S, m) \
	{ .name = n, .kind = F_HEX, .off = offsetof(S, m), .optional = 1 }
#define OBJ(n, S, m) { .name = n, .kind = F_OBJ, .off = offsetof(S, m) }
#define ENUM(n, S, m, tab) \
	{ .name = n, .kind = F_ENUM, .off = offsetof(S, m), .names = tab, \
	  .max = sizeof(tab) / sizeof(tab[0]) - 1 }
/* The lease and epoch that every message about one lease names first. */
#define LEASE_EPOCH(S) \
	U64("lease", S, lease, 0, I64MAX), U64("epoch", S, epoch, 0, I64MAX)
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* F_ENUM and F_BOOL values are read and written as int. */
_Static_assert(sizeof(enum msg_hb_action) == sizeof(int), "enum size");
_Static_assert(sizeof(enum msg_ack_what) == sizeof(int), "enum size");

static const char *const hb_action_names[] = {
	[MSG_HB_CONTINUE] = "continue",
	[MSG_HB_STOP] = "stop",
	[MSG_HB_RELEASE] = "release",
	[MSG_HB_GIVE_BACK] = "give_back",
};

static const char *const ack_what_names[] = {
	[MSG_ACK_CHECKPOINT] = "checkpoint",
	[MSG_ACK_RESULT] = "result",
	[MSG_ACK_RELEASE] = "release",
};

static const struct field hello_fields[] = {
	U64("proto", struct msg_hello, proto, PROTO_VERSION, PROTO_VERSION),
	STR("worker", struct msg_hello, worker, MSG_WORKER_MAX),
	STR("instance", struct msg_hello, instance, PLACE_INSTANCE_MAX),
	STR("device", struct msg_hello, device, MSG_DEVICE_MAX),
	{ .name = "workloads", .kind = F_STRS,
	  .off = offsetof(struct msg_hello, workloads),
	  .off2 = offsetof(struct msg_hello, n_workloads),
	  .max_items = MSG_WORKLOADS_MAX, .max = MSG_WORKLOAD_MAX },
	BOOL_OPT("cuda", struct msg_hello, cuda),
	U64_OPT("threads", struct msg_hello, threads, 0, 65535),
	STR_OPT("host", struct msg_hello, host, PLACE_HOST_MAX),
	STR_OPT("slurm_job", struct msg_hello, slurm_job, PLACE_SLURM_MAX),
	STR_OPT("slurm_array", struct msg_hello, slurm_array, PLACE_SLURM_MAX),
	STR_OPT("pod", struct msg_hello, pod, PLACE_POD_MAX),
};

static const struct field ctl_hello_fields[] = {
	U64("proto", struct msg_ctl_hello, proto, PROTO_VERSION, PROTO_VERSION),
	STR("name", struct msg_ctl_hello, name, MSG_WORKER_MAX),
};

static const struct field welcome_fields[] = {
	U64("worker_id", struct msg_welcome, worker_id, 0, I64MAX),
	NUM("heartbeat_s", struct msg_welcome, heartbeat_s),
	NUM_OPT("checkpoint_s", struct msg_welcome, checkpoint_s, 0),
	STR_OPT("role", struct msg_welcome, role, MSG_WORKLOAD_MAX),
};

static const struct field lease_fields[] = {
	LEASE_EPOCH(struct msg_lease),
	U64("job", struct msg_lease, job, 0, I64MAX),
	STR("workload", struct msg_lease, workload, MSG_WORKLOAD_MAX),
	OBJ("params", struct msg_lease, params),
	OBJ("spec", struct msg_lease, spec),
	U64("units", struct msg_lease, units, 0, I64MAX),
	NUM_OPT("deadline_s", struct msg_lease, deadline_s, 0),
	U64_OPT("units_done", struct msg_lease, units_done, 0, I64MAX),
};

static const struct field nolease_fields[] = {
	NUM_OPT("retry_s", struct msg_nolease, retry_s, 1),
	STR_OPT("reason", struct msg_nolease, reason, MSG_TEXT_MAX),
};

static const struct field heartbeat_fields[] = {
	LEASE_EPOCH(struct msg_heartbeat),
	U64("units_done", struct msg_heartbeat, units_done, 0, I64MAX),
};

static const struct field hb_ack_fields[] = {
	LEASE_EPOCH(struct msg_hb_ack),
	ENUM("action", struct msg_hb_ack, action, hb_action_names),
};

static const struct field checkpoint_fields[] = {
	LEASE_EPOCH(struct msg_checkpoint),
	U64("units_done", struct msg_checkpoint, units_done, 0, I64MAX),
};

static const struct field result_fields[] = {
	LEASE_EPOCH(struct msg_result),
	U64("units_done", struct msg_result, units_done, 0, I64MAX),
	NUM_OPT("seconds", struct msg_result, seconds, 0),
};

static const struct field ack_fields[] = {
	LEASE_EPOCH(struct msg_ack),
	ENUM("what", struct msg_ack, what, ack_what_names),
};

static const struct field release_fields[] = {
	LEASE_EPOCH(struct msg_release),
	STR_OPT("error", struct msg_release, error, MSG_TEXT_MAX),
};

static const struct field withdraw_fields[] = {
	STR_OPT("reason", struct msg_withdraw, reason, MSG_TEXT_MAX),
};

static const struct field fetch_fields[] = {
	HEX("hash", struct msg_fetch, hash),
};

static const struct field blob_fields[] = {
	HEX("hash", struct msg_blob, hash),
};

static const struct field error_fields[] = {
	{ .name = "code", .kind = F_I64, .off = offsetof(struct msg_error, code),
	  .smin = INT32_MIN, .smax = INT32_MAX },
	STR("message", struct msg_error, message, MSG_TEXT_MAX),
	U64_OPT("lease", struct msg_error, lease, 0, I64MAX),
	U64_OPT("epoch", struct msg_error, epoch, 0, I64MAX),
	HEX_OPT("hash", struct msg_error, hash),
};

#define MTYPE(T, nm, s, f, bin) \
	[T] = { .name = nm, .size = sizeof(s), .fields = f, .n_fields = N(f), \
		.bin_required = bin }
/* A message without fields: its header is an empty object. */
#define MTYPE_EMPTY(T, nm, s) [T] = { .name = nm, .size = sizeof(s) }

static const struct mtype mtypes[PROTO_TYPE_MAX + 1] = {
	MTYPE(PROTO_HELLO, "HELLO", struct msg_hello, hello_fields, 0),
	MTYPE(PROTO_WELCOME, "WELCOME", struct msg_welcome, welcome_fields, 0),
	/* No field: leases are sized by what gpud measured, never by a
	 * rate a worker states (a "rate" sent anyway is ignored). */
	MTYPE_EMPTY(PROTO_CLAIM, "CLAIM", struct msg_claim),
	MTYPE(PROTO_LEASE, "LEASE", struct msg_lease, lease_fields, 0),
	MTYPE(PROTO_NOLEASE, "NOLEASE", struct msg_nolease, nolease_fields, 0),
	MTYPE(PROTO_HEARTBEAT, "HEARTBEAT", struct msg_heartbeat,
	      heartbeat_fields, 0),
	MTYPE(PROTO_HB_ACK, "HB_ACK", struct msg_hb_ack, hb_ack_fields, 0),
	MTYPE(PROTO_CHECKPOINT, "CHECKPOINT", struct msg_checkpoint,
	      checkpoint_fields, 1),
	MTYPE(PROTO_RESULT, "RESULT", struct msg_result, result_fields, 1),
	MTYPE(PROTO_ACK, "ACK", struct msg_ack, ack_fields, 0),
	MTYPE(PROTO_RELEASE, "RELEASE", struct msg_release, release_fields, 0),
	MTYPE(PROTO_FETCH, "FETCH", struct msg_fetch, fetch_fields, 0),
	MTYPE(PROTO_BLOB, "BLOB", struct msg_blob, blob_fields, 0),
	MTYPE(PROTO_ERROR, "ERROR", struct msg_error, error_fields, 0),
	MTYPE(PROTO_CTL_HELLO, "CTL_HELLO", struct msg_ctl_hello,
	      ctl_hello_fields, 0),
	MTYPE(PROTO_WITHDRAW, "WITHDRAW", struct msg_withdraw, withdraw_fields,
	      0),
};

static const struct mtype *mtype_of(int type)
{
	if (type < 1 || type > PROTO_TYPE_MAX || !mtypes[type].name)
		return NULL;
	return &mtypes[type];
}

int msg_known(int type)
{
	return mtype_of(type) != NULL;
}

/* ---- one value: checks shared by both directions ---- */

static int hex_ok(const char *s, size_t len)
{
	if (len != MSG_HEX_LEN)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* A string value's rule: 0 when it holds, else -1 and why not in why. */
static int str_check(const struct field *f, const char *s, size_t len,
		     char *why, size_t whylen)
{
	if (memchr(s, '\0', len)) {
		snprintf(why, whylen, "contains a NUL");
		return -1;
	}
	if (f->kind == F_HEX && !hex_ok(s, len)) {
		snprintf(why, whylen, "is not %d lowercase hex digits",
			 MSG_HEX_LEN);
		return -1;
	}
	if (f->kind != F_HEX && len > f->max) {
		snprintf(why, whylen, "is too long (%zu > %" PRIu64 ")", len,
			 f->max);
		return -1;
	}
	return 0;
}

static int enum_index(const struct field *f, const char *s)
{
	for (uint64_t i = 0; i <= f->max; i++)
		if (f->names[i] && strcmp(f->names[i], s) == 0)
			return (int)i;
	return -1;
}

/* ---- encode ---- */

static json_t *encode_field(const struct field *f, const char *base,
			    int *ret_skip)
{
	const void *p = base + f->off;

	*ret_skip = 0;
	switch (f->kind) {
	case F_U64: {
		uint64_t v = *(const uint64_t *)p;

		if (f->optional && v == 0) {
			*ret_skip = 1;
			return NULL;
		}
		if (v < f->min || v > f->max)
			return NULL;
		return json_integer((json_int_t)v);
	}
	case F_I64: {
		int64_t v = *(const int64_t *)p;

		if (v < f->smin || v > f->smax)
			return NULL;
		return json_integer((json_int_t)v);
	}
	case F_BOOL: {
		int v = *(const int *)p;

		if (f->optional && !v) {
			*ret_skip = 1;
			return NULL;
		}
		return json_boolean(v);
	}
	case F_NUM: {
		double v = *(const double *)p;

		if (f->optional && v == f->def) {
			*ret_skip = 1;
			return NULL;
		}
		if (!(v >= f->dmin && v <= f->dmax)) /* NaN and inf too */
			return NULL;
		return json_real(v);
	}
	case F_STR:
	case F_HEX: {
		const char *s = *(const char *const *)p;

		if (!s) {
			*ret_skip = f->optional;
			return NULL;
		}
		char why[64];

		if (str_check(f, s, strlen(s), why, sizeof(why)) < 0)
			return NULL;
		return json_string(s);
	}
	case F_OBJ: {
		const json_t *o = *(const json_t *const *)p;

		return json_is_object(o) ? json_deep_copy(o) : NULL;
	}
	case F_ENUM: {
		int v = *(const int *)p;

		if (v < 0 || (uint64_t)v > f->max)
			return NULL;
		return json_string(f->names[v]);
	}
	case F_STRS: {
		const char *const *a = (const char *const *)p;
		size_t n = *(const size_t *)(base + f->off2);
		json_t *arr;
		char why[64];

		if (n > f->max_items)
			return NULL;
		arr = json_array();
		for (size_t i = 0; arr && i < n; i++) {
			if (!a[i] || str_check(f, a[i], strlen(a[i]), why,
					       sizeof(why)) < 0 ||
			    json_array_append_new(arr, json_string(a[i])) < 0) {
				json_decref(arr);
				arr = NULL;
			}
		}
		return arr;
	}
	}
	return NULL;
}

int msg_encode(enum proto_type type, const void *msg, size_t size,
	       json_t **ret_header)
{
	const struct mtype *t = mtype_of((int)type);
	json_t *h;

	if (!t || !msg || size != t->size || !ret_header)
		return GERR_INVAL;
	*ret_header = NULL;
	h = json_object();
	if (!h)
		return GERR_NOMEM;
	for (size_t i = 0; i < t->n_fields; i++) {
		const struct field *f = &t->fields[i];
		int skip;
		json_t *v = encode_field(f, msg, &skip);

		if (skip)
			continue;
		/* A NULL here is a broken rule or, rarely, no memory; the
		 * codec cannot tell them apart cheaply and both are fatal
		 * for the frame. */
		if (!v || json_object_set_new(h, f->name, v) < 0) {
			json_decref(h);
			return GERR_INVAL;
		}
	}
	*ret_header = h;
	return 0;
}

/* ---- decode ---- */

static int bad(const struct mtype *t, const struct field *f, char *err,
	       size_t errlen, const char *why)
{
	return gerr_fail(GERR_PROTO, err, errlen, "%s: \"%s\" %s", t->name,
			 f->name, why);
}

static const char *const kind_names[] = {
	[F_U64] = "an integer", [F_I64] = "an integer",
	[F_BOOL] = "a boolean", [F_NUM] = "a number",
	[F_STR] = "a string", [F_HEX] = "a string", [F_OBJ] = "an object",
	[F_ENUM] = "a string", [F_STRS] = "an array of strings",
};

static int type_ok(const struct field *f, const json_t *v)
{
	switch (f->kind) {
	case F_U64:
	case F_I64: return json_is_integer(v);
	case F_BOOL: return json_is_boolean(v);
	case F_NUM: return json_is_number(v);
	case F_STR:
	case F_HEX:
	case F_ENUM: return json_is_string(v);
	case F_OBJ: return json_is_object(v);
	case F_STRS: return json_is_array(v);
	}
	return 0;
}

static int decode_field(const struct mtype *t, const struct field *f,
			const json_t *v, char *base, char *err, size_t errlen)
{
	void *p = base + f->off;

	if (!v) {
		if (!f->optional)
			return bad(t, f, err, errlen, "is missing");
		if (f->kind == F_NUM)
			*(double *)p = f->def;
		return 0; /* the rest stays zero / NULL */
	}
	if (!type_ok(f, v)) {
		char why[40];

		snprintf(why, sizeof(why), "is not %s", kind_names[f->kind]);
		return bad(t, f, err, errlen, why);
	}
	switch (f->kind) {
	case F_U64: {
		json_int_t i = json_integer_value(v);

		if (i < 0 || (uint64_t)i < f->min || (uint64_t)i > f->max)
			return bad(t, f, err, errlen, "is out of range");
		*(uint64_t *)p = (uint64_t)i;
		return 0;
	}
	case F_I64: {
		json_int_t i = json_integer_value(v);

		if (i < f->smin || i > f->smax)
			return bad(t, f, err, errlen, "is out of range");
		*(int64_t *)p = i;
		return 0;
	}
	case F_BOOL:
		*(int *)p = json_is_true(v);
		return 0;
	case F_NUM: {
		double d = json_number_value(v);

		if (!(d >= f->dmin && d <= f->dmax))
			return bad(t, f, err, errlen, "is out of range");
		*(double *)p = d;
		return 0;
	}
	case F_STR:
	case F_HEX: {
		char why[64];

		if (str_check(f, json_string_value(v), json_string_length(v),
			      why, sizeof(why)) < 0)
			return bad(t, f, err, errlen, why);
		*(const char **)p = json_string_value(v);
		return 0;
	}
	case F_OBJ:
		*(const json_t **)p = v;
		return 0;
	case F_ENUM: {
		int e = json_string_length(v) > 32
			? -1 : enum_index(f, json_string_value(v));

		if (e < 0)
			return bad(t, f, err, errlen, "has an unknown value");
		*(int *)p = e;
		return 0;
	}
	case F_STRS: {
		const char **a = p;
		size_t n = json_array_size(v);

		if (n > f->max_items)
			return bad(t, f, err, errlen, "has too many entries");
		for (size_t i = 0; i < n; i++) {
			const json_t *s = json_array_get(v, i);
			char why[64] = "has an entry that is not a string";

			if (!json_is_string(s) ||
			    str_check(f, json_string_value(s),
				      json_string_length(s), why,
				      sizeof(why)) < 0)
				return bad(t, f, err, errlen, why);
			a[i] = json_string_value(s);
		}
		*(size_t *)(base + f->off2) = n;
		return 0;
	}
	}
	return bad(t, f, err, errlen, "has an unknown kind");
}

int msg_decode(enum proto_type type, const json_t *header, void *ret,
	       size_t size, char *err, size_t errlen)
{
	const struct mtype *t = mtype_of((int)type);

	if (!t || !ret || size != t->size)
		return gerr_fail(GERR_INVAL, err, errlen,
				 "no codec for message type %d of size %zu",
				 (int)type, size);
	memset(ret, 0, size);
	if (!json_is_object(header))
		return gerr_fail(GERR_PROTO, err, errlen,
				 "%s: header is not a JSON object", t->name);
	for (size_t i = 0; i < t->n_fields; i++) {
		const struct field *f = &t->fields[i];
		int rc = decode_field(t, f, json_object_get(header, f->name),
				      ret, err, errlen);
		if (rc < 0) {
			memset(ret, 0, size);
			return rc;
		}
	}
	return 0;
}

int msg_check_bin(enum proto_type type, size_t bin_len, char *err,
		  size_t errlen)
{
	const struct mtype *t = mtype_of((int)type);

	if (t && t->bin_required && bin_len == 0)
		return gerr_fail(GERR_PROTO, err, errlen,
				 "%s: the blob attachment is missing", t->name);
	return 0;
}

const char *msg_hb_action_name(enum msg_hb_action a)
{
	return (unsigned)a < N(hb_action_names) ? hb_action_names[a] : "?";
}

int msg_hb_action_parse(const char *name, enum msg_hb_action *ret)
{
	for (size_t i = 0; name && i < N(hb_action_names); i++) {
		if (strcmp(hb_action_names[i], name) == 0) {
			*ret = (enum msg_hb_action)i;
			return 0;
		}
	}
	return GERR_INVAL;
}

const char *msg_ack_what_name(enum msg_ack_what w)
{
	return (unsigned)w < N(ack_what_names) ? ack_what_names[w] : "?";
}
