/* http_tls.h - HTTPS for the status page and /metrics (http_tls.c): on a
 * loopback address they stay plain HTTP; beyond it libmicrohttpd serves
 * TLS 1.3 with gpud's certificate (chan.h), the key workers pin.
 *
 * http_tls_setup fills t for the address the page listens on: t->flags to
 * add to MHD_start_daemon's and t->opts to pass as MHD_OPTION_ARRAY (just
 * MHD_OPTION_END on loopback). t owns the PEM text the options point to
 * until http_tls_clear (after MHD_stop_daemon). Loop thread.
 */
#ifndef GPUD_HTTP_TLS_H
#define GPUD_HTTP_TLS_H

#include <sys/socket.h>

#include <microhttpd.h>

#include "chan.h"
#include "log.h"

struct http_tls {
	unsigned int flags;         /* MHD_USE_TLS when on */
	char *cert, *key;           /* PEM, owned */
	struct MHD_OptionItem opts[4];
};

/* 0, or GERR_UNSUPPORTED (libmicrohttpd without TLS) / GERR_NOMEM,
 * logged. */
int http_tls_setup(struct http_tls *t, const struct chan_identity *id,
		   const struct sockaddr *sa, const struct glog *log);
/* Wipe the key and free the PEM text (idempotent). */
void http_tls_clear(struct http_tls *t);

#endif
