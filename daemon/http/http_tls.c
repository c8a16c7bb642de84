/* http_tls.c - HTTPS beyond loopback for the page (see http_tls.h). */
#include "http_tls.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "gerr.h"

/* TLS 1.3 only, as on the worker port. */
#define PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3"

static int loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr)
			>> 24) == 127;
	return sa->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

int http_tls_setup(struct http_tls *t, const struct chan_identity *id,
		   const struct sockaddr *sa, const struct glog *log)
{
	memset(t, 0, sizeof(*t));
	t->opts[0] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	if (loopback(sa))
		return 0;
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		LOG_ERROR(log, "this libmicrohttpd has no TLS: the page beyond "
			  "loopback would be plain HTTP; give --http a loopback "
			  "address (or off)");
		return GERR_UNSUPPORTED;
	}
	if (chan_identity_pem(id, &t->cert, &t->key)) {
		LOG_ERROR(log, "cannot make the page's TLS certificate");
		return GERR_NOMEM;
	}
	t->flags = MHD_USE_TLS;
	t->opts[0] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0,
					      t->cert };
	t->opts[1] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0,
					      t->key };
	t->opts[2] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
					      (void *)PRIORITIES };
	t->opts[3] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	return 0;
}

void http_tls_clear(struct http_tls *t)
{
	if (!t)
		return;
	if (t->key)
		sodium_memzero(t->key, strlen(t->key));
	free(t->key);
	free(t->cert);
	memset(t, 0, sizeof(*t));
}
