/* ctlcmd_field.h - what ctlcmd.c (the requests, the table, encoding)
 * and ctlreply.c (the replies' tables, decoding a reply) share: a field
 * of a table, its kinds, and the steps on one field. Private to those two
 * files; ctlcmd.h is the module's interface.
 *
 * Threads: const tables and pure functions; any thread.
 */
#ifndef GPUD_CTLCMD_FIELD_H
#define GPUD_CTLCMD_FIELD_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "ctlcmd.h"

enum ctlcmd_fkind {
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
	enum ctlcmd_fkind kind;
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

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The replies' tables (ctlreply.c), indexed by enum ctlcmd_id; each a
 * row of struct ctlcmd_reply. */
extern const struct ctlcmd_rows ctlreply_rows[CTLCMD_COUNT];

/* ctlcmd.c. One field's value into its member at base: 0, or -1 when v
 * breaks its rule (the lists and counts are ctlreply.c's). */
int ctlcmd_field_decode(const struct ctlcmd_field *f, const json_t *v, char *base);
/* An absent optional field's default into its member. */
void ctlcmd_field_default(const struct ctlcmd_field *f, char *base);
/* The message of a field refused in a request of c ("'history' needs
 * 'limit': .."). */
void ctlcmd_field_bad(const struct ctlcmd *c, const struct ctlcmd_field *f,
		      char *err, size_t errlen);
/* Fields f[0..n) of the struct at base into o, in the table's order; 0,
 * or -1 when out of memory or a string is not UTF-8. */
int ctlcmd_fields_encode(const struct ctlcmd_field *f, size_t n,
			 const char *base, json_t *o);

#endif
