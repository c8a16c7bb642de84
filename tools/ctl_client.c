/* ctl_client.c - gpuctl's transport: one request per connection to gpud's
 * control socket, in proto.h frames (ctl_client.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "ctl_client.h"
#include "ctl_text.h"
#include "gerr.h"
#include "proto.h"

static int ctl_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "gpuctl: socket path too long: %s\n", path);
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr, "gpuctl: cannot reach gpud at %s: %s\n", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int ctl_write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Send one request (with an optional binary attachment), read one reply;
 * its binary attachment goes to *ret_bin (malloc'ed) when ret_bin is not
 * NULL. Returns a new reference or NULL. */
static json_t *ctl_call_full(int fd, json_t *req, const void *bin,
			     size_t bin_len, uint8_t **ret_bin, size_t *ret_bin_len)
{
	uint8_t *out = NULL, *buf = NULL;
	size_t outlen = 0, len = 0, cap = 0;
	json_t *reply = NULL;

	if (proto_frame_encode(PROTO_CTL_REQ, req, bin, bin_len, &out, &outlen)) {
		fprintf(stderr, "gpuctl: cannot encode the request\n");
		free(out);
		return NULL;
	}
	if (ctl_write_all(fd, out, outlen)) {
		fprintf(stderr, "gpuctl: cannot send the request to gpud: %s\n",
			errno == EPIPE || errno == ECONNRESET
				? "gpud closed the connection" : strerror(errno));
		free(out);
		return NULL;
	}
	free(out);
	for (;;) {
		struct proto_frame f;
		size_t used = 0, need = 0;
		char err[200] = "";
		int rc = len ? proto_frame_parse(buf, len, &f, &used, &need, err,
						 sizeof(err)) : GERR_AGAIN;
		if (rc == 0) {
			if (f.type == PROTO_CTL_REPLY) {
				reply = json_incref(f.json);
				if (ret_bin) {
					*ret_bin = malloc(f.bin_len ? f.bin_len : 1);
					if (*ret_bin && f.bin_len)
						memcpy(*ret_bin, f.bin, f.bin_len);
					*ret_bin_len = *ret_bin ? f.bin_len : 0;
				}
			} else
				fprintf(stderr, "gpuctl: unexpected reply type %s\n",
					proto_type_name(f.type));
			proto_frame_clear(&f);
			break;
		}
		if (rc != GERR_AGAIN) {
			fprintf(stderr, "gpuctl: bad reply from gpud: %s\n", err);
			break;
		}
		if (cap - len < 65536) {
			size_t ncap = cap ? cap * 2 : 131072;
			uint8_t *nb = ncap > (size_t)PROTO_HEADER_LEN + PROTO_MAX_JSON +
				PROTO_MAX_BIN + 131072 ? NULL : realloc(buf, ncap);
			if (!nb) {
				free(nb ? nb : NULL);
				buf = NULL;
				fprintf(stderr, "gpuctl: reply too large\n");
				break;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "gpuctl: gpud closed the connection\n");
			break;
		}
		len += (size_t)r;
	}
	free(buf);
	return reply;
}

/* One request on a fresh connection; prints gpud's error and returns NULL
 * when the reply is not ok. *ret_exit says why. The reply's binary part is
 * returned in *ret_out (malloc'ed) when ret_out is not NULL. */
json_t *ctl_request_full(const char *sock, json_t *req, const void *bin,
			    size_t bin_len, uint8_t **ret_out,
			    size_t *ret_out_len, int *ret_exit)
{
	int fd = ctl_connect(sock);
	json_t *reply;

	if (fd < 0) {
		json_decref(req);
		*ret_exit = EXIT_UNREACHABLE;
		return NULL;
	}
	reply = ctl_call_full(fd, req, bin, bin_len, ret_out, ret_out_len);
	close(fd);
	json_decref(req);
	if (!reply) {
		*ret_exit = EXIT_UNREACHABLE;
		return NULL;
	}
	if (!json_is_true(json_object_get(reply, "ok"))) {
		const char *e = json_string_value(json_object_get(reply, "error"));
		char *shown = ctl_text_escape(e ? e : "request failed", 0);
		fprintf(stderr, "gpuctl: %s\n", shown ? shown : "request failed");
		free(shown);
		json_decref(reply);
		if (ret_out) {
			free(*ret_out);
			*ret_out = NULL;
		}
		*ret_exit = EXIT_FAIL;
		return NULL;
	}
	*ret_exit = 0;
	return reply;
}

json_t *ctl_request_bin(const char *sock, json_t *req, const void *bin,
			   size_t bin_len, int *ret_exit)
{
	return ctl_request_full(sock, req, bin, bin_len, NULL, NULL, ret_exit);
}

json_t *ctl_request(const char *sock, json_t *req, int *ret_exit)
{
	return ctl_request_bin(sock, req, NULL, 0, ret_exit);
}

