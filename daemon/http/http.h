/* http.h - gpud's read-only HTTP server (libmicrohttpd), `--http ADDR:PORT`:
 *
 *   GET /             the status page, rendered with its data
 *                     (page_render.h): strip, health, throughput, jobs,
 *                     workers, the newest finished jobs' plots; its script
 *                     fetches the same address every 5 s
 *   GET /job/N        a job's page: record, plots, answer, events
 *   GET /plots        every listed finished job's plots, as links
 *   GET /login?key=K  a page link (gpuctl page-link): the key as a cookie,
 *                     then on to / (http_auth.h)
 *   GET /api/status   the control API's status and workers replies as one
 *                     JSON object, each job with "plots" (its SVG files'
 *                     URLs), with a viewer's rights
 *   GET /metrics      the Prometheus text (metrics.h)
 *   GET /results/job-N/NAME.svg   a job's plot, from DATA/results
 *
 * Access: every path but /login needs a page key that gpud holds (the
 * cookie, or `Authorization: Bearer KEY`), else 401; --http-open
 * (cfg.http_open) serves all without one.
 *
 * Threads: MHD runs its own thread and never touches struct gpud. A request
 * that needs gpud's state or a key's check is suspended and queued; a
 * uv_async wakes the loop thread, which looks the key's hash up on the
 * database thread (store_pagekey_find), asks control_handle
 * (AUTH_ROLE_VIEWER) when the answer needs it, keeps the verdict and the
 * replies in the request and resumes it; MHD's thread then writes the
 * answer. A page also reads the event log's news (store_events.h) on the
 * database thread and the blob store's size on the thread pool; plots
 * are served on MHD's thread (files).
 *
 * Bounds: HTTP_MEM bytes of request (line and headers) each,
 * HTTP_TIMEOUT_S of silence, HTTP_QUEUE_MAX requests waiting for the loop
 * (more: 503), GET and HEAD only (405), plots up to HTTP_FILE_MAX bytes;
 * connections: the guard's deadlines and room (http_guard.h) within
 * libmicrohttpd's caps (HTTP_CONN_MAX, HTTP_CONN_PER_IP from one address).
 *
 * Ownership: struct http belongs to gpud (d->http); http_stop frees it
 * once the requests in flight are answered. http_start writes the page's
 * address to d->http_url (for page links), http_stop clears it. Loop
 * thread only.
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
 * GERR_INVAL (a bad address) or GERR_IO (cannot bind), logged: as an
 * error when the address was asked for (cfg.http_asked), else a warning. */
int http_start(struct gpud *d, int *ret_port);
/* Answer what waits with 503, stop MHD once the requests in flight are
 * answered, and free. Idempotent; NULL d->http is a no-op. */
void http_stop(struct gpud *d);

/* 1 when the page is served over TLS (beyond loopback: http_tls.h). */
int http_is_tls(const struct gpud *d);

#endif
