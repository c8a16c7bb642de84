/* http_files.c - answers made on libmicrohttpd's thread from constant
 * text and the results directory (http_files.h). */
#include "http_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http.h"

/* resp answered on conn with the headers every answer has, and csp when
 * not NULL; our reference to resp is dropped. */
static enum MHD_Result queue(struct MHD_Connection *conn, unsigned code,
			     struct MHD_Response *resp, const char *type,
			     const char *cache, const char *csp)
{
	enum MHD_Result ok;

	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, cache);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (csp)
		MHD_add_response_header(resp, "Content-Security-Policy", csp);
	ok = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ok;
}

enum MHD_Result http_send_buf(struct MHD_Connection *conn, unsigned code,
				const char *type, void *body, size_t len,
				enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, mode);

	if (!resp) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	return queue(conn, code, resp, type, "no-store",
		     strncmp(type, "text/html", 9) != 0 ? NULL :
		     "default-src 'none'; script-src 'unsafe-inline'; "
		     "style-src 'unsafe-inline'; img-src 'self'; "
		     "connect-src 'self'; base-uri 'none'; form-action 'none'");
}

enum MHD_Result http_send_text(struct MHD_Connection *conn, unsigned code,
				 const char *text)
{
	return http_send_buf(conn, code, "text/plain; charset=utf-8", (void *)text,
			strlen(text), MHD_RESPMEM_PERSISTENT);
}

/* A plot's file name: [A-Za-z0-9._-], not hidden, ending in .svg. */
static int plot_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 5 || n > 64 || s[0] == '.' || strcmp(s + n - 4, ".svg") != 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' ||
		      s[i] == '-'))
			return 0;
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

json_t *http_list_plots(const char *results, json_int_t id)
{
	char dir[4300], *names[HTTP_PLOTS_MAX];
	size_t n = 0;
	json_t *out = json_array();
	struct dirent *e;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/job-%" JSON_INTEGER_FORMAT, results, id);
	dp = opendir(dir);
	if (!dp)
		return out;
	while (n < HTTP_PLOTS_MAX && (e = readdir(dp))) {
		struct stat st;
		/* As send_plot: regular files only, never a link. */
		if (plot_name_ok(e->d_name) &&
		    fstatat(dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && (names[n] = strdup(e->d_name)))
			n++;
	}
	closedir(dp);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(out, json_sprintf("/results/job-%"
				      JSON_INTEGER_FORMAT "/%s", id, names[i]));
		free(names[i]);
	}
	return out;
}

enum MHD_Result http_send_plot(const char *results,
			       struct MHD_Connection *conn, const char *rest)
{
	char path[4400], num[24];
	const char *slash;
	struct MHD_Response *resp;
	struct stat st;
	size_t nd;
	int fd;

	if (strncmp(rest, "job-", 4) != 0 || !(slash = strchr(rest + 4, '/')))
		return http_send_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
	nd = (size_t)(slash - rest - 4);
	if (nd < 1 || nd > 18 || strspn(rest + 4, "0123456789") != nd ||
	    rest[4] == '0' || !plot_name_ok(slash + 1))
		return http_send_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
	memcpy(num, rest + 4, nd);
	num[nd] = '\0';
	snprintf(path, sizeof(path), "%s/job-%s/%s", results, num, slash + 1);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return http_send_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > HTTP_FILE_MAX) {
		close(fd);
		return http_send_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
	}
	resp = MHD_create_response_from_fd((size_t)st.st_size, fd); /* takes fd */
	if (!resp) {
		close(fd);
		return MHD_NO;
	}
	/* Opened on its own, an SVG could run script: none allowed. */
	return queue(conn, MHD_HTTP_OK, resp, "image/svg+xml", "no-cache",
		     "default-src 'none'; style-src 'unsafe-inline'");
}
