/* gerr.h - the one table of error codes used below main().
 *
 * Functions return 0 on success or a negative code from this table. Codes
 * from SQLite, zlib, libuv and CUDA are translated where they enter.
 * gerr_str() never returns NULL and the string is static.
 */
#ifndef GPUD_GERR_H
#define GPUD_GERR_H

enum gerr {
	GERR_OK = 0,
	GERR_NOMEM = -1,    /* allocation failed */
	GERR_INVAL = -2,    /* bad argument or malformed input */
	GERR_IO = -3,       /* read/write/fsync failed */
	GERR_CORRUPT = -4,  /* checksum, magic or length mismatch */
	GERR_TOOBIG = -5,   /* input exceeds a documented bound */
	GERR_AGAIN = -6,    /* need more input / try later */
	GERR_NOTFOUND = -7, /* no such job, lease, token, blob */
	GERR_STALE = -8,    /* stale epoch or lease no longer held */
	GERR_AUTH = -9,     /* authentication failed */
	GERR_PROTO = -10,   /* protocol violation */
	GERR_DB = -11,      /* SQLite error */
	GERR_ZLIB = -12,    /* zlib error */
	GERR_DEVICE = -13,  /* CUDA / device error; the device context is poisoned */
	GERR_VERIFY = -14,  /* a result failed verification */
	GERR_STATE = -15,   /* operation not allowed in the current state */
	GERR_DONE = -16,    /* nothing more to do (e.g. no lease left to carve) */
	GERR_CANCELLED = -17, /* work was stopped on request */
	GERR_NOSPACE = -18, /* disk full */
	GERR_PERM = -19,    /* permission denied */
	GERR_UNSUPPORTED = -20, /* no such workload / device / feature */
};

const char *gerr_str(int code);

/* The code for a failed system call's errno: ENOENT is GERR_NOTFOUND, a
 * full disk GERR_NOSPACE, a refused one GERR_PERM, anything unknown
 * GERR_IO. */
int gerr_from_errno(int e);

#include <stddef.h>

/* Write a one-line message into err (bounded, always terminated; err may
 * be NULL or errlen 0, then nothing is written). */
void gerr_printf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same, returning code: `return gerr_fail(GERR_INVAL, err, n, ...)`. */
int gerr_fail(int code, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
