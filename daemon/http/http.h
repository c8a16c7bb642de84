/* http.h - gpud's read-only HTTP server (libmicrohttpd), `--http ADDR:PORT`:
 *
 *   GET /             the status page (page.html): jobs, progress, ETAs,
 *                     workers, plots; it fetches /api/status every 2 s
 *   GET /api/status   the control API's status and workers replies as one
 *                     JSON object, each job with "plots" (its SVG files'
 *                     URLs), with a viewer's rights
 *   GET /metrics      the Prometheus text (metrics.h)
 *   GET /results/job-N/NAME.svg   a job's plot, from DATA/results
 *
 * Threads: MHD runs its own thread and never touches struct gpud. A request
 * that needs gpud's state is suspended and queued; a uv_async wakes the
 * loop thread, which asks control_handle (AUTH_ROLE_VIEWER), keeps the
 * replies in the request and resumes it; MHD's thread then writes the
 * answer. Page and plots are served on MHD's thread (constant text, files).
 *
 * Bounds: HTTP_CONN_MAX connections (HTTP_CONN_PER_IP from one address),
 * HTTP_MEM bytes of request (line and headers) each, HTTP_TIMEOUT_S of
 * silence, HTTP_QUEUE_MAX requests waiting for the loop (more: 503), GET
 * and HEAD only (405), plots up to HTTP_FILE_MAX bytes.
 *
 * Ownership: struct http belongs to gpud (d->http); http_stop frees it
 * once the requests in flight are answered. Loop thread only.
 */
#ifndef GPUD_HTTP_H
#define GPUD_HTTP_H

/* libmicrohttpd refuses connections beyond these; the guard
 * (http_guard.h) makes room well before, closing the oldest. */
#define HTTP_CONN_MAX 128
#define HTTP_CONN_PER_IP 16
#define HTTP_ROOM_MAX 64
#define HTTP_ROOM_PER_IP 8
#define HTTP_MEM (32 * 1024)
#define HTTP_TIMEOUT_S 10
#define HTTP_QUEUE_MAX 32
#define HTTP_FILE_MAX (8 * 1024 * 1024)
#define HTTP_PLOTS_MAX 16   /* listed per job */
#define HTTP_BLOBS_EVERY_S 30.0 /* the blob store is measured this often */

struct gpud;

/* Listen on d->cfg.http_host:http_port and serve. *ret_port is the port
 * bound (the one asked for, or the one port 0 picked). Returns 0,
 * GERR_INVAL (a bad address) or GERR_IO (cannot bind), logged. */
int http_start(struct gpud *d, int *ret_port);
/* Answer what waits with 503, stop MHD once the requests in flight are
 * answered, and free. Idempotent; NULL d->http is a no-op. */
void http_stop(struct gpud *d);

#endif
