/* ctl_client.h - gpuctl's transport to gpud's control socket
 * (ctl_client.c): one request, one reply, on a fresh connection.
 *
 * Errors are printed to stderr here (gpud's own error text escaped,
 * ctl_text.h); callers only turn *ret_exit into gpuctl's exit status.
 * Single-threaded (gpuctl); keeps nothing between calls.
 */
#ifndef GPUD_CTL_CLIENT_H
#define GPUD_CTL_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* gpuctl's exit codes. */
#define EXIT_FAIL 1        /* the request failed (or the job did not verify) */
#define EXIT_USAGE 2
#define EXIT_UNREACHABLE 3 /* gpud could not be reached or hung up */

/* Write all n bytes to fd (EINTR retried). 0 or -1. */
int ctl_write_all(int fd, const uint8_t *p, size_t n);

/* Send req (consumed) with an optional binary attachment and return the
 * reply (a new reference) when it is ok; otherwise print gpud's error
 * and return NULL. *ret_exit is 0, EXIT_FAIL or EXIT_UNREACHABLE. The
 * reply's attachment goes to *ret_out (malloc'ed) when ret_out is not
 * NULL. */
json_t *ctl_request_full(const char *sock, json_t *req, const void *bin,
			 size_t bin_len, uint8_t **ret_out,
			 size_t *ret_out_len, int *ret_exit);
json_t *ctl_request_bin(const char *sock, json_t *req, const void *bin,
			size_t bin_len, int *ret_exit);
json_t *ctl_request(const char *sock, json_t *req, int *ret_exit);

#endif
