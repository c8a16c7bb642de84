/* http_files.h - the page's answers that need nothing of gpud's state,
 * made on libmicrohttpd's thread: text, a buffer with the headers every
 * answer has, the plots of the results directory (their listing and the
 * files: regular files only, never through a link, names of
 * [A-Za-z0-9._-] ending .svg, at most HTTP_FILE_MAX bytes).
 *
 * Threads: libmicrohttpd's (the connection's); nothing is kept.
 */
#ifndef GPUD_HTTP_FILES_H
#define GPUD_HTTP_FILES_H

#include <stddef.h>
#include <jansson.h>
#include <microhttpd.h>

/* body (len bytes, kept as mode says) answered with code and type, no
 * caching, and the page's Content-Security-Policy on HTML. */
enum MHD_Result http_send_buf(struct MHD_Connection *conn, unsigned code,
			      const char *type, void *body, size_t len,
			      enum MHD_ResponseMemoryMode mode);
/* A constant text/plain answer. */
enum MHD_Result http_send_text(struct MHD_Connection *conn, unsigned code,
			       const char *text);
/* The URLs of the SVG files in RESULTS/job-ID, sorted (the first
 * HTTP_PLOTS_MAX), as a new JSON array. */
json_t *http_list_plots(const char *results, json_int_t id);
/* GET /results/job-N/NAME.svg (rest: after "/results/"), from results. */
enum MHD_Result http_send_plot(const char *results,
			       struct MHD_Connection *conn, const char *rest);

#endif
