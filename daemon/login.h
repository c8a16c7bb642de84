/* login.h - a TCP connection's login (login.c), after the TLS handshake:
 * a worker's HELLO or remote gpuctl's CTL_HELLO, then WELCOME with the
 * role of the credential whose key the handshake proved (or ERROR saying
 * why not: no key, an unknown key, an old-kind credential, a name that is
 * not the key's). A worker token logs in only as a worker, a viewer or
 * admin token only as gpuctl.
 *
 * Handlers for conn.h's table: each returns 0 (maybe having started an
 * asynchronous step) or GERR_PROTO for an invalid message, which closes
 * the connection. Loop thread only.
 */
#ifndef GPUD_LOGIN_H
#define GPUD_LOGIN_H

#include <jansson.h>

#include "conn.h"

int login_hello(struct conn *c, const json_t *msg);
int login_ctl_hello(struct conn *c, const json_t *msg);

#endif
