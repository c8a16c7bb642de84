/* ctl_client.h - gpuctl's transport to gpud (ctl_client.c): its Unix
 * socket, or a remote gpud over TLS 1.3 (chan.h) with a viewer or admin
 * credential; one request, one reply, on a fresh connection.
 *
 * Nothing waits forever: connecting has CTL_CONNECT_TIMEOUT_S, the TLS
 * handshake and the login CTL_LOGIN_TIMEOUT_S, and a reply
 * CTL_REPLY_TIMEOUT_S of silence (or less: the target's deadline); a peer
 * that accepts and never answers ends with EXIT_UNREACHABLE.
 *
 * Errors are printed to stderr here (gpud's own error text escaped,
 * ctl_text.h), or kept in the target's ctl_quiet for a caller that may
 * try again (wait and watch ride over a gpud restart); callers only turn
 * *ret_exit into gpuctl's exit status.
 * Single-threaded (gpuctl); keeps nothing between calls.
 */
#ifndef GPUD_CTL_CLIENT_H
#define GPUD_CTL_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "auth.h"
#include "chan.h"
#include "ctlcmd.h"

#define CTL_CONNECT_TIMEOUT_S 10.0
#define CTL_LOGIN_TIMEOUT_S 10.0
/* gpud's slowest replies (check, backup of a large directory) send
 * nothing until done. */
#define CTL_REPLY_TIMEOUT_S 300.0

/* gpuctl's exit codes (documented in gpuctl help and gpuctl(1)). */
#define EXIT_FAIL 1        /* the request was refused or failed */
#define EXIT_USAGE 2
#define EXIT_UNREACHABLE 3 /* gpud could not be reached or hung up */
#define EXIT_NOTFOUND 4    /* no such job */
#define EXIT_JOB_FAILED 5  /* wait: the job failed or was cancelled */
#define EXIT_TIMEOUT 6     /* wait: --timeout passed first */

/* A request's errors, kept instead of printed: the lines stderr would
 * have had ("gpuctl: ...\n" each, cut to fit), and whether the failure is
 * one a gpud restart explains (the socket missing or refusing, a reset, a
 * connection closed, a step timed out) rather than an answer (gpud's
 * error reply, a credential refused, a TLS failure, a malformed reply).
 * ctl_request_full clears it first. */
struct ctl_quiet {
	char why[768];
	int transient;
};

/* Where requests go: the Unix socket, or host:port with a credential. */
struct ctl_target {
	const char *socket;            /* when host is NULL */
	const char *host, *port;       /* --connect */
	struct auth_token cred;        /* --credential */
	struct chan_identity id;       /* its key, with its certificate */
	char hostbuf[256], portbuf[8];
	double deadline;               /* gclock_mono() bound on every
					* request; 0: none (wait --timeout) */
	struct ctl_quiet *quiet;       /* NULL: errors to stderr */
};

/* Fill to for --connect HOST:PORT and --credential FILE; 0 or EXIT_USAGE
 * (printed). */
int ctl_target_remote(struct ctl_target *to, const char *hostport,
		      const char *cred_file);

/* Write all n bytes to fd (EINTR retried). 0 or -1. */
int ctl_write_all(int fd, const uint8_t *p, size_t n);

/* Send req (encoded by ctlcmd_encode; only read) with an optional binary
 * attachment and return the
 * reply (a new reference) when it is ok; otherwise print gpud's error
 * and return NULL. *ret_exit is 0, EXIT_FAIL, EXIT_NOTFOUND (gpud has no
 * such job) or EXIT_UNREACHABLE. The
 * reply's attachment goes to *ret_out (malloc'ed) when ret_out is not
 * NULL. */
json_t *ctl_request_full(const struct ctl_target *to, const struct ctlcmd_req *req,
			 const void *bin, size_t bin_len, uint8_t **ret_out,
			 size_t *ret_out_len, int *ret_exit);
json_t *ctl_request_bin(const struct ctl_target *to, const struct ctlcmd_req *req,
			const void *bin, size_t bin_len, int *ret_exit);
json_t *ctl_request(const struct ctl_target *to, const struct ctlcmd_req *req,
		    int *ret_exit);
/* A reply read through its command's table: the JSON (owned) and its
 * fields (borrowed from it). */
struct ctl_reply {
	json_t *json;
	struct ctlcmd_reply f;
};
/* ctl_request, its reply escaped for the terminal first when shown
 * (ctl_text.h), then decoded into *ret (ctlcmd_reply_decode). 0, or the
 * exit status after printing why (a malformed reply: EXIT_FAIL); *ret is
 * then zeroed. */
int ctl_ask(const struct ctl_target *to, const struct ctlcmd_req *req,
	    int shown, struct ctl_reply *ret);
/* Free what ctl_ask filled; r zeroed. NULL or a zeroed one: no-op. */
void ctl_reply_free(struct ctl_reply *r);
/* A typed reply's fields (ctlcmd_reply_decode), borrowed from reply: 0, or
 * -1 after printing why. */
int ctl_reply_fields(enum ctlcmd_id id, const json_t *reply,
		     struct ctlcmd_reply *ret);

#endif
