/* http.c - gpud's HTTP server (see http.h): libmicrohttpd's thread on one
 * side, the loop thread on the other, and a queue under a mutex between
 * them. A request's life:
 *
 *   MHD thread: parse, route; /api/status or /metrics: suspend, queue,
 *               wake the loop (uv_async)
 *   loop:       control_handle(status) -> control_handle(workers) ->
 *               [measure the blobs on the thread pool] -> resume
 *   MHD thread: the handler runs again: decode the replies
 *               (ctlcmd_reply_decode, once), render the answer, send it;
 *               on_completed frees the request
 *
 * No reply key is spelled here: the replies are read through ctlcmd.h
 * (the typed reply, its lists as gpud sent them). The keys this file
 * writes ("plots", "workers", "now", "version") are the page's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>
#include <uv.h>

#include "clock.h"
#include "control.h"
#include "ctlcmd.h"
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "gpud_config.h"
#include "http.h"
#include "http_auth.h"
#include "http_files.h"
#include "http_guard.h"
#include "metrics.h"
#include "store.h"

/* page.html, embedded by embed_file.py (page_html.c). */
extern const unsigned char http_page[];
extern const size_t http_page_len;

enum req_kind { REQ_STATUS, REQ_METRICS, REQ_PAGE, REQ_PLOT, REQ_LOGIN };

/* What the loop found, read by MHD's thread once resumed. */
enum verdict {
	V_NONE,    /* not looked at: gpud stops */
	V_OK,      /* the key is good (or the page is open) */
	V_ENDED,   /* a key gpud does not hold (expired, revoked, never) */
	V_ERROR,   /* the store could not say */
};

struct http_req {
	struct http *h;
	struct MHD_Connection *conn;
	enum req_kind kind;
	uint8_t key_hash[PAGEKEY_HASH]; /* the key presented; set when need_key */
	int need_key;
	/* Written by the loop thread before it resumes the connection, read
	 * by MHD's thread after (the resume orders them). */
	enum verdict verdict;
	double key_until;         /* the key's end (wall clock) */
	int key_rc;               /* database thread: store_pagekey_find's */
	json_t *status, *workers; /* the control replies, owned; NULL: none */
	struct dbq_commit_stats commits;
	int have_commits;
	uint64_t verify_failures;
	int blobs_known;
	uint64_t blob_bytes, blob_files;
	uint64_t http_late, http_evicted;
	uv_work_t scan;           /* the blob store's measure */
	struct http_req *next;
};

struct http {
	struct gpud *d;           /* loop thread only */
	const struct glog *log;   /* any thread (glog is thread-safe) */
	struct MHD_Daemon *mhd;
	uv_async_t async;
	uv_timer_t sweep;         /* the guard's deadlines, every second */
	unsigned open_handles;    /* async and sweep until both closed */
	struct http_guard *guard; /* MHD's thread and the loop (its mutex) */
	int open;                 /* --http-open: no key asked */
	int tls;                  /* served over TLS: the cookie is Secure */
	uv_mutex_t mu;
	struct http_req *head, *tail; /* guarded by mu: waiting for the loop */
	unsigned queued;              /* guarded by mu: waiting or in flight */
	int stopping;                 /* guarded by mu */
	/* Loop thread. */
	unsigned inflight;
	int stop_asked, closed;
	int scanning, blobs_known;
	uint64_t blob_bytes, blob_files;
	uint64_t blobs_at_ms;
	/* Set at start, then only read. */
	char results[4200];       /* cfg.results_dir (MHD's thread) */
	char blobs[4200];         /* DATA/blobs (the thread pool) */
};


static enum MHD_Result send_json(struct MHD_Connection *conn, unsigned code,
				 const json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT);

	if (!text)
		return http_send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return http_send_buf(conn, code, "application/json", text, strlen(text),
			MHD_RESPMEM_MUST_FREE);
}

/* reply, an ok reply of command id, into *ret (ctlcmd_reply_clear frees
 * it; it borrows from reply). 0, or GERR_INVAL, logged: gpud's replies
 * always decode (ctlcmd_reply_encode wrote them), so this is a bug. */
static int decode_reply(const struct http *h, enum ctlcmd_id id,
			const json_t *reply, struct ctlcmd_reply *ret)
{
	char err[256];
	int rc = ctlcmd_reply_decode(&ctlcmd_table[id], reply, ret, err, sizeof(err));

	if (rc)
		LOG_WARN(h->log, "http: gpud's %s reply: %s", ctlcmd_table[id].name, err);
	return rc;
}

static enum MHD_Result send_undecoded(struct MHD_Connection *conn)
{
	return http_send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			 "gpud's reply does not decode (see gpud's log)\n");
}

/* /api/status: the status reply, with the workers and each job's plots. */
static enum MHD_Result send_status(const struct http *h,
				   struct MHD_Connection *conn, struct http_req *r)
{
	struct ctlcmd_reply st;
	const json_t *jobs, *workers;
	const char *error;

	if (!ctlcmd_reply_ok(r->status, &error))
		return send_json(conn, MHD_HTTP_SERVICE_UNAVAILABLE, r->status);
	if (decode_reply(h, CTLCMD_STATUS, r->status, &st))
		return send_undecoded(conn);
	/* st.jobs[i] is the array's row i. */
	jobs = ctlcmd_reply_list(CTLCMD_STATUS, r->status);
	for (size_t i = 0; i < st.n_jobs; i++)
		json_object_set_new(json_array_get(jobs, i), "plots",
				    http_list_plots(h->results, st.jobs[i].id));
	ctlcmd_reply_clear(&st);
	workers = ctlcmd_reply_list(CTLCMD_WORKERS, r->workers);
	/* r owns both replies: the status takes a reference to the list. */
	json_object_set_new(r->status, "workers", json_is_array(workers) ?
			    json_incref((json_t *)workers) : json_array());
	json_object_set_new(r->status, "now", json_real(gclock_wall()));
	json_object_set_new(r->status, "version", json_string(GPUD_VERSION));
	return send_json(conn, MHD_HTTP_OK, r->status);
}

/* /metrics: the replies decoded, rendered (metrics.h). A workers reply
 * that is not ok counts no workers. */
static enum MHD_Result send_metrics(const struct http *h,
				    struct MHD_Connection *conn,
				    const struct http_req *r)
{
	struct ctlcmd_reply st, wk;
	struct metrics_input in = {
		.status = &st,
		.workers = NULL,
		.commits = r->have_commits ? &r->commits : NULL,
		.verify_failures = r->verify_failures,
		.blobs_known = r->blobs_known,
		.blob_bytes = r->blob_bytes,
		.blob_files = r->blob_files,
		.http_late = r->http_late,
		.http_evicted = r->http_evicted,
		.now = gclock_wall(),
		.version = GPUD_VERSION,
	};
	const char *error;
	char *text;
	size_t len;
	int rc;

	if (!ctlcmd_reply_ok(r->status, &error))
		return send_json(conn, MHD_HTTP_SERVICE_UNAVAILABLE, r->status);
	if (decode_reply(h, CTLCMD_STATUS, r->status, &st))
		return send_undecoded(conn);
	if (r->workers && ctlcmd_reply_ok(r->workers, &error)) {
		if (decode_reply(h, CTLCMD_WORKERS, r->workers, &wk)) {
			ctlcmd_reply_clear(&st);
			return send_undecoded(conn);
		}
		in.workers = &wk;
	}
	rc = metrics_render(&in, &text, &len);
	ctlcmd_reply_clear(&st);
	if (in.workers)
		ctlcmd_reply_clear(&wk);
	if (rc)
		return http_send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return http_send_buf(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
			text, len, MHD_RESPMEM_MUST_FREE);
}

/* ---- MHD's thread: requests ---- */

static enum MHD_Result send_page(struct MHD_Connection *conn)
{
	return http_send_buf(conn, MHD_HTTP_OK, "text/html; charset=utf-8",
			(void *)http_page, http_page_len, MHD_RESPMEM_PERSISTENT);
}

/* A request back from the loop: its verdict, then its answer. */
static enum MHD_Result on_resumed(struct http *h, struct MHD_Connection *conn,
				  const char *url, struct http_req *r)
{
	http_guard_request(h->guard, conn, 0);
	if (r->verdict == V_ENDED)
		return http_auth_refuse(conn, 1);
	if (r->verdict == V_ERROR)
		return http_send_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				 "gpud cannot check the page link now (see its log)\n");
	if (r->verdict != V_OK)
		return http_send_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "gpud is stopping\n");
	switch (r->kind) {
	case REQ_PAGE:
		return send_page(conn);
	case REQ_PLOT:
		return http_send_plot(h->results, conn, url + 9);
	case REQ_LOGIN:
		return http_auth_login(conn, r->key_until - gclock_wall(), h->tls);
	default:
		break;
	}
	/* No status: gpud stops. */
	if (!r->status)
		return http_send_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "gpud is stopping\n");
	return r->kind == REQ_STATUS ? send_status(h, conn, r)
				     : send_metrics(h, conn, r);
}

/* Queue r for the loop, suspending its connection; 503 when too many
 * wait or gpud stops. */
static enum MHD_Result wait_for_loop(struct http *h, struct MHD_Connection *conn,
				     struct http_req *r, void **req_cls)
{
	int refused;

	uv_mutex_lock(&h->mu);
	refused = h->stopping || h->queued >= HTTP_QUEUE_MAX;
	if (!refused) {
		if (h->tail)
			h->tail->next = r;
		else
			h->head = r;
		h->tail = r;
		h->queued++;
		/* Under mu: the loop cannot resume it before it is suspended. */
		http_guard_request(h->guard, conn, 1);
		MHD_suspend_connection(conn);
		*req_cls = r;
	}
	uv_mutex_unlock(&h->mu);
	if (refused) {
		free(r);
		return http_send_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				 "busy: too many requests wait for gpud\n");
	}
	uv_async_send(&h->async);
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_size, void **req_cls)
{
	struct http *h = cls;
	struct http_req *r = *req_cls;
	uint8_t hash[PAGEKEY_HASH];
	enum req_kind kind;
	int key;

	(void)version;
	(void)upload_data;
	(void)upload_size;
	if (r)
		return on_resumed(h, conn, url, r);
	http_guard_request(h->guard, conn, 0);
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return http_send_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				 "read-only: GET and HEAD only\n");
	if (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0)
		kind = REQ_PAGE;
	else if (strcmp(url, "/login") == 0)
		kind = REQ_LOGIN;
	else if (strncmp(url, "/results/", 9) == 0)
		kind = REQ_PLOT;
	else if (strcmp(url, "/api/status") == 0)
		kind = REQ_STATUS;
	else if (strcmp(url, "/metrics") == 0)
		kind = REQ_METRICS;
	else
		return http_send_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");

	/* Open (--http-open): what was always served on this thread still is. */
	if (h->open && kind == REQ_PAGE)
		return send_page(conn);
	if (h->open && kind == REQ_PLOT)
		return http_send_plot(h->results, conn, url + 9);
	if (h->open && kind == REQ_LOGIN)
		return http_auth_to_page(conn);
	key = h->open ? 0 : http_auth_key(conn, kind == REQ_LOGIN, hash);
	if (!h->open && key <= 0)
		return http_auth_refuse(conn, key < 0);

	r = calloc(1, sizeof(*r));
	if (!r)
		return http_send_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory\n");
	r->h = h;
	r->conn = conn;
	r->kind = kind;
	r->need_key = key > 0;
	if (r->need_key)
		memcpy(r->key_hash, hash, sizeof(hash));
	return wait_for_loop(h, conn, r, req_cls);
}

static void on_completed(void *cls, struct MHD_Connection *conn,
			 void **req_cls, enum MHD_RequestTerminationCode why)
{
	struct http *h = cls;
	struct http_req *r = *req_cls;

	(void)why;
	http_guard_answered(h->guard, conn);
	if (!r)
		return;
	json_decref(r->status);
	json_decref(r->workers);
	free(r);
	*req_cls = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct http *h = cls;
	char msg[512];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	LOG_WARN(h->log, "http: %s", msg);
}

/* ---- the loop thread ---- */

static void close_now(struct http *h);

static void finish(struct http_req *r)
{
	struct http *h = r->h;

	uv_mutex_lock(&h->mu);
	h->queued--;
	uv_mutex_unlock(&h->mu);
	MHD_resume_connection(r->conn);
	h->inflight--;
	if (h->stop_asked && h->inflight == 0)
		close_now(h);
}

/* finish, with the blob store's last measure. */
static void finish_measured(struct http_req *r)
{
	const struct http *h = r->h;

	r->blobs_known = h->blobs_known;
	r->blob_bytes = h->blob_bytes;
	r->blob_files = h->blob_files;
	finish(r);
}

/* Thread pool: the bytes and files under DATA/blobs (two levels). */
static void scan_work(uv_work_t *w)
{
	struct http_req *r = w->data;
	DIR *top = opendir(r->h->blobs);
	struct dirent *e, *f;

	r->blob_bytes = r->blob_files = 0;
	/* No blobs directory yet: nothing stored. */
	r->blobs_known = top != NULL || errno == ENOENT;
	while (top && (e = readdir(top))) {
		struct stat st;
		int sub;
		DIR *dp;

		if (e->d_name[0] == '.')
			continue;
		sub = openat(dirfd(top), e->d_name, O_RDONLY | O_DIRECTORY |
			     O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 || !(dp = fdopendir(sub))) {
			if (sub >= 0)
				close(sub);
			continue;
		}
		while ((f = readdir(dp)))
			if (f->d_name[0] != '.' &&
			    fstatat(dirfd(dp), f->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISREG(st.st_mode)) {
				r->blob_bytes += (uint64_t)st.st_size;
				r->blob_files++;
			}
		closedir(dp);
	}
	if (top)
		closedir(top);
}

static void scan_after(uv_work_t *w, int status)
{
	struct http_req *r = w->data;
	struct http *h = r->h;

	h->scanning = 0;
	if (status == 0 && r->blobs_known) {
		h->blobs_known = 1;
		h->blob_bytes = r->blob_bytes;
		h->blob_files = r->blob_files;
		h->blobs_at_ms = uv_now(h->d->loop);
	}
	finish_measured(r);
}

static void on_workers(void *opaque, json_t *reply, void *bin, size_t bin_len)
{
	struct http_req *r = opaque;
	struct http *h = r->h;
	struct gpud *d = h->d;

	(void)bin_len;
	free(bin);
	r->workers = reply;
	if (r->kind != REQ_METRICS) {
		finish(r);
		return;
	}
	r->verify_failures = d->verify_failures;
	http_guard_counts(h->guard, &r->http_late, &r->http_evicted);
	if (d->dbq) {
		dbq_commit_stats(d->dbq, &r->commits);
		r->have_commits = 1;
	}
	/* Walking the blob store costs a stat per blob: at most every
	 * HTTP_BLOBS_EVERY_S, on the thread pool; the scrapes between get
	 * the last measure. */
	if (!h->scanning && !h->stop_asked && (!h->blobs_known ||
	    uv_now(d->loop) - h->blobs_at_ms >= HTTP_BLOBS_EVERY_S * 1000)) {
		r->scan.data = r;
		if (uv_queue_work(d->loop, &r->scan, scan_work, scan_after) == 0) {
			h->scanning = 1;
			return;
		}
	}
	finish_measured(r);
}

static void on_status(void *opaque, json_t *reply, void *bin, size_t bin_len)
{
	struct http_req *r = opaque;
	const struct ctlcmd_req req = { .cmd = CTLCMD_WORKERS };

	(void)bin_len;
	free(bin);
	r->status = reply;
	control_handle(r->h->d, AUTH_ROLE_VIEWER, ctlcmd_encode(&req), NULL, 0,
		       on_workers, r);
}

/* /api/status and /metrics: the control API's replies. */
static void ask_control(struct http_req *r)
{
	/* Metrics count every job; the page shows what gpuctl status does. */
	const struct ctlcmd_req req = { .cmd = CTLCMD_STATUS,
					.all = r->kind == REQ_METRICS };

	control_handle(r->h->d, AUTH_ROLE_VIEWER, ctlcmd_encode(&req), NULL, 0,
		       on_status, r);
}

/* Database thread: is the key presented one gpud holds? */
static void key_work(struct store *st, void *arg)
{
	struct http_req *r = arg;

	r->key_rc = store_pagekey_find(st, r->key_hash, gclock_wall(), &r->key_until);
}

static void key_after(void *arg)
{
	struct http_req *r = arg;

	if (r->key_rc == GERR_NOTFOUND) {
		r->verdict = V_ENDED;
	} else if (r->key_rc) {
		LOG_WARN(r->h->log, "http: cannot look up a page key: %s",
			 gerr_str(r->key_rc));
		r->verdict = V_ERROR;
	} else {
		r->verdict = V_OK;
		if (r->kind == REQ_STATUS || r->kind == REQ_METRICS) {
			ask_control(r);
			return;
		}
	}
	finish(r);
}

static void start(struct http_req *r)
{
	if (r->need_key) {
		/* Refused (gpud stops): no verdict, answered 503. */
		if (dbq_submit(r->h->d->dbq, key_work, key_after, r))
			finish(r);
		return;
	}
	r->verdict = V_OK;
	if (r->kind == REQ_STATUS || r->kind == REQ_METRICS)
		ask_control(r);
	else
		finish(r);
}

static void on_async(uv_async_t *a)
{
	struct http *h = a->data;
	struct http_req *r, *next;

	uv_mutex_lock(&h->mu);
	r = h->head;
	h->head = h->tail = NULL;
	uv_mutex_unlock(&h->mu);
	for (; r; r = next) {
		next = r->next;
		h->inflight++;
		start(r);
	}
}

static void on_handle_closed(uv_handle_t *hd)
{
	struct http *h = hd->data;

	if (--h->open_handles)
		return;
	/* MHD stopped (close_now): no connection is left to guard. */
	http_guard_free(h->guard);
	uv_mutex_destroy(&h->mu);
	free(h);
}

static void close_handles(struct http *h)
{
	h->open_handles = 2;
	uv_close((uv_handle_t *)&h->async, on_handle_closed);
	uv_close((uv_handle_t *)&h->sweep, on_handle_closed);
}

/* Every second: the connections past their deadline are closed. */
static void on_sweep(uv_timer_t *t)
{
	struct http *h = t->data;
	unsigned n = http_guard_sweep(h->guard, gclock_mono());

	if (n)
		LOG_DEBUG(h->log, "http: %u connection%s closed: no request within "
			  "%.0f s, or no answer taken within %.0f s", n,
			  n == 1 ? "" : "s", HTTP_REQUEST_S, HTTP_ANSWER_S);
}

/* The page's address for page links, in d->http_url: the host it
 * listens on (this machine's name when it listens on every address). */
static void set_url(struct gpud *d, const struct http *h, int port)
{
	const char *host = d->cfg.http_host;
	const char *scheme = h->tls ? "https" : "http";
	char name[256];

	if (strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0) {
		if (gethostname(name, sizeof(name)) == 0) {
			name[sizeof(name) - 1] = '\0';
			host = name;
		}
	}
	snprintf(d->http_url, sizeof(d->http_url), strchr(host, ':') ?
		 "%s://[%s]:%d" : "%s://%s:%d", scheme, host, port);
}

static void close_now(struct http *h)
{
	if (h->closed)
		return;
	h->closed = 1;
	/* Nothing is suspended now: MHD may stop (it joins its thread). */
	if (h->mhd)
		MHD_stop_daemon(h->mhd);
	h->mhd = NULL;
	close_handles(h);
}

void http_stop(struct gpud *d)
{
	struct http *h = d->http;
	struct http_req *r, *next;

	if (!h)
		return;
	d->http = NULL;
	d->http_url[0] = '\0';
	uv_mutex_lock(&h->mu);
	h->stopping = 1;
	r = h->head;
	h->head = h->tail = NULL;
	uv_mutex_unlock(&h->mu);
	h->stop_asked = 1;
	/* Waiting, never started: answered 503 (no status). */
	for (; r; r = next) {
		next = r->next;
		h->inflight++;
		finish(r);
	}
	if (h->inflight == 0)
		close_now(h);
}

int http_start(struct gpud *d, int *ret_port)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
			     MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	const char *host = d->cfg.http_host;
	int port = d->cfg.http_port;
	const union MHD_DaemonInfo *info;
	struct sockaddr_storage ss;
	struct http *h;

	memset(&ss, 0, sizeof(ss));
	if (uv_ip4_addr(host, port, (struct sockaddr_in *)&ss) == 0) {
		/* IPv4 */
	} else if (uv_ip6_addr(host, port, (struct sockaddr_in6 *)&ss) == 0) {
		flags |= MHD_USE_IPv6;
	} else {
		LOG_ERROR(&d->log, "bad --http address %s (a numeric IPv4 or "
			  "IPv6 address, or off)", host);
		return GERR_INVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return GERR_NOMEM;
	h->d = d;
	h->log = &d->log;
	h->open = d->cfg.http_open;
	snprintf(h->results, sizeof(h->results), "%s", d->cfg.results_dir);
	snprintf(h->blobs, sizeof(h->blobs), "%s/blobs", d->cfg.data_dir);
	if (http_guard_new(HTTP_ROOM_PER_IP, HTTP_ROOM_MAX, &h->guard)) {
		free(h);
		return GERR_NOMEM;
	}
	if (uv_mutex_init(&h->mu)) {
		http_guard_free(h->guard);
		free(h);
		return GERR_NOMEM;
	}
	if (uv_async_init(d->loop, &h->async, on_async)) {
		uv_mutex_destroy(&h->mu);
		http_guard_free(h->guard);
		free(h);
		return GERR_NOMEM;
	}
	h->async.data = h;
	uv_timer_init(d->loop, &h->sweep);
	h->sweep.data = h;
	h->mhd = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, h,
		/* First, so that every message of MHD's goes to our log. */
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_CONN_MAX,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)HTTP_CONN_PER_IP,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MEM,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
		MHD_OPTION_NOTIFY_CONNECTION, http_guard_notify, h->guard,
		MHD_OPTION_END);
	if (!h->mhd) {
		/* The default address taken (another gpud's page) costs the
		 * page only; an address asked for fails the start. */
		if (d->cfg.http_asked)
			LOG_ERROR(&d->log, strchr(host, ':') ? "cannot serve http on "
				  "[%s]:%d (--http; off turns it off)" : "cannot serve "
				  "http on %s:%d (--http; off turns it off)", host, port);
		else
			LOG_WARN(&d->log, "no status page: its default address "
				 "%s:%d is taken (--http HOST:PORT picks another, "
				 "--http off says none)", host, port);
		h->closed = 1;
		close_handles(h);
		return GERR_IO;
	}
	info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
	*ret_port = info && info->port ? info->port : port;
	info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_FLAGS);
	h->tls = info && (info->flags & MHD_USE_TLS);
	uv_timer_start(&h->sweep, on_sweep, 1000, 1000);
	set_url(d, h, *ret_port);
	d->http = h;
	return 0;
}
