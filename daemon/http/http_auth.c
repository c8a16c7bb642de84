/* http_auth.c - page keys on the wire (see http_auth.h): where a request
 * carries its key, the 401 answer, /login's cookie. */
#include "http_auth.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int http_auth_key(struct MHD_Connection *conn, int login,
		  uint8_t ret_hash[PAGEKEY_HASH])
{
	const char *v;

	if (login) {
		v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "key");
	} else if ((v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
					MHD_HTTP_HEADER_AUTHORIZATION))) {
		/* RFC 6750: "Bearer" (any case), one space, the token. */
		if (strncasecmp(v, "Bearer ", 7) != 0)
			return -1;
		v += 7;
	} else {
		v = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, HTTP_COOKIE);
	}
	if (!v)
		return 0;
	return pagekey_hash(v, strlen(v), ret_hash) ? -1 : 1;
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned code,
			      const char *type, const char *body,
			      const char *cookie)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ok;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	/* The key is in /login's address: never sent on as a referrer. */
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "Content-Security-Policy",
				"default-src 'none'; base-uri 'none'; form-action 'none'");
	if (code == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"gpud\"");
	if (cookie)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, cookie);
	if (code == MHD_HTTP_SEE_OTHER)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, "/");
	ok = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ok;
}

enum MHD_Result http_auth_refuse(struct MHD_Connection *conn, int ended)
{
	return answer(conn, MHD_HTTP_UNAUTHORIZED, "text/plain; charset=utf-8", ended ?
		"This page link has expired or was revoked (or is no page key): "
		"`gpuctl page-link` makes a new one.\n" :
		"gpud's status page needs a page link: run `gpuctl page-link` "
		"(a viewer's or an admin's credential) and open the address it "
		"prints. /api/status and /metrics also take "
		"`Authorization: Bearer KEY` with the key it prints. (An "
		"operator may serve the page to anyone: gpud --http-open.)\n", NULL);
}

enum MHD_Result http_auth_login(struct MHD_Connection *conn, double seconds_left,
				int tls)
{
	const char *key = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
						      "key");
	char cookie[PAGEKEY_HEX + 128];
	long long age = seconds_left > 1 ? (long long)seconds_left : 1;

	if (!key || strlen(key) != PAGEKEY_HEX)
		return http_auth_refuse(conn, 0);
	snprintf(cookie, sizeof(cookie), HTTP_COOKIE "=%s; Path=/; Max-Age=%lld; "
		 "HttpOnly; SameSite=Strict%s", key, age, tls ? "; Secure" : "");
	return answer(conn, MHD_HTTP_OK, "text/html; charset=utf-8",
		      "<!doctype html><html><head><meta charset=\"utf-8\">"
		      "<meta http-equiv=\"refresh\" content=\"0;url=/\">"
		      "<title>gpud</title></head><body><a href=\"/\">gpud's status "
		      "page</a></body></html>\n", cookie);
}

enum MHD_Result http_auth_to_page(struct MHD_Connection *conn)
{
	return answer(conn, MHD_HTTP_SEE_OTHER, "text/plain; charset=utf-8",
		      "the page is open: /\n", NULL);
}
