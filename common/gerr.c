#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "gerr.h"

const char *gerr_str(int code)
{
	switch (code) {
	case GERR_OK: return "ok";
	case GERR_NOMEM: return "out of memory";
	case GERR_INVAL: return "invalid argument";
	case GERR_IO: return "input/output error";
	case GERR_CORRUPT: return "corrupt data";
	case GERR_TOOBIG: return "too large";
	case GERR_AGAIN: return "try again";
	case GERR_NOTFOUND: return "not found";
	case GERR_STALE: return "stale epoch";
	case GERR_AUTH: return "authentication failed";
	case GERR_PROTO: return "protocol violation";
	case GERR_DB: return "database error";
	case GERR_ZLIB: return "compression error";
	case GERR_DEVICE: return "device error";
	case GERR_VERIFY: return "verification failed";
	case GERR_STATE: return "not allowed in this state";
	case GERR_DONE: return "nothing left to do";
	case GERR_CANCELLED: return "cancelled";
	case GERR_NOSPACE: return "no space left on device";
	case GERR_PERM: return "permission denied";
	case GERR_UNSUPPORTED: return "unsupported";
	}
	return "unknown error";
}

void gerr_printf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int gerr_fail(int code, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

int gerr_from_errno(int e)
{
	switch (e) {
	case ENOENT:
		return GERR_NOTFOUND;
	case ENOSPC:
	case EDQUOT:
		return GERR_NOSPACE;
	case EACCES:
	case EPERM:
		return GERR_PERM;
	case ENOMEM:
		return GERR_NOMEM;
	case ENAMETOOLONG:
		return GERR_INVAL;
	default:
		return GERR_IO;
	}
}
