/* http_auth.h - who may see the page, /api/status, the plots and
 * /metrics (issue 34): whoever presents a page key (pagekey.h) that gpud
 * stores, unless the operator opened the page (--http-open).
 *
 * A browser gets a key from `gpuctl page-link`'s address,
 * /login?key=KEY: gpud checks it and answers with a cookie (HttpOnly,
 * SameSite=Strict, Secure on TLS) and a page that moves on to "/". Not a
 * 303: a SameSite=Strict cookie is not sent along a redirect chain that
 * began on another site (a link clicked in a chat), while a navigation
 * the page itself starts is same-site. Scrapers send
 * `Authorization: Bearer KEY`. Requests without a key get 401 and a line
 * that says how to get one.
 *
 * Threads: libmicrohttpd's thread (the connection's). Nothing is kept.
 */
#ifndef GPUD_HTTP_AUTH_H
#define GPUD_HTTP_AUTH_H

#include <stdint.h>
#include <microhttpd.h>

#include "pagekey.h"

#define HTTP_COOKIE "gpud_page"

/* The key conn presents (login: /login's ?key=, else the Authorization
 * header's Bearer key, else the cookie), hashed into ret_hash: 1; 0: none
 * presented; -1: one that is no key (ret_hash untouched). */
int http_auth_key(struct MHD_Connection *conn, int login,
		  uint8_t ret_hash[PAGEKEY_HASH]);
/* 401: no key (ended 0), or one gpud does not hold (ended 1). */
enum MHD_Result http_auth_refuse(struct MHD_Connection *conn, int ended);
/* /login's answer for a good key: the cookie, valid seconds_left (it is
 * sent back as given: the key itself), Secure when tls. */
enum MHD_Result http_auth_login(struct MHD_Connection *conn, double seconds_left,
				int tls);
/* /login when the page is open (--http-open): 303 to "/", no cookie. */
enum MHD_Result http_auth_to_page(struct MHD_Connection *conn);

#endif
