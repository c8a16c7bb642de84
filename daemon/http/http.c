/* http.c - gpud's HTTP server (see http.h): libmicrohttpd's thread on one
 * side, the loop thread on the other, and a queue under a mutex between
 * them. A request's life:
 *
 *   MHD thread: parse, route; a page, /api/status or /metrics: suspend,
 *               queue, wake the loop (uv_async)
 *   loop:       control_handle(status) -> control_handle(workers) ->
 *               [a job's page: control_handle(result)] ->
 *               [pages and /metrics: the event log's news, the last
 *               check and backup, the database's size (database thread)]
 *               -> [measure the blobs on the thread pool] -> resume
 *   MHD thread: the handler runs again: the answer (http_answer.c)
 *               decodes the replies, renders and sends; on_completed
 *               frees the request
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
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
#include "http_internal.h"
#include "metrics.h"
#include "page_render.h"
#include "store.h"
#include "store_events.h"

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
	if (r->kind == REQ_STATUS)
		return http_answer_status(h, conn, r);
	if (r->kind == REQ_METRICS)
		return http_answer_metrics(h, conn, r);
	return http_answer_page(h, conn, r);
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

/* "N" of /job/N: 1 to 18 digits, no leading 0; 0 when not one. */
static int64_t job_id(const char *s)
{
	size_t n = strspn(s, "0123456789");

	if (n < 1 || n > 18 || s[n] != '\0' || s[0] == '0')
		return 0;
	return strtoll(s, NULL, 10);
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
	int64_t job = 0;
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
	else if (strncmp(url, "/job/", 5) == 0 && (job = job_id(url + 5)) > 0)
		kind = REQ_JOB;
	else if (strcmp(url, "/plots") == 0)
		kind = REQ_PLOTS;
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

	/* Open (--http-open): what is served on this thread still is. */
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
	r->job = job;
	r->need_key = key > 0;
	if (r->need_key)
		memcpy(r->key_hash, hash, sizeof(hash));
	return wait_for_loop(h, conn, r, req_cls);
}

static void db_free(struct http_db *db)
{
	if (!db)
		return;
	free(db->check_detail);
	free(db->backup_detail);
	store_event_rows_free(db->events, db->n_events);
	free(db);
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
	json_decref(r->result);
	db_free(r->db);
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

	struct http_req *wait = h->scan_waiters, *next;

	h->scanning = 0;
	h->scan_waiters = NULL;
	if (status == 0 && r->blobs_known) {
		h->blobs_known = 1;
		h->blob_bytes = r->blob_bytes;
		h->blob_files = r->blob_files;
		h->blobs_at_ms = uv_now(h->d->loop);
	}
	finish_measured(r);
	for (; wait; wait = next) {
		next = wait->scan_next;
		finish_measured(wait);
	}
}

/* The blob store's measure and gpud's counters, then the answer. */
static void measure(struct http_req *r)
{
	struct http *h = r->h;
	struct gpud *d = h->d;

	r->verify_failures = d->verify_failures;
	http_guard_counts(h->guard, &r->http_late, &r->http_evicted);
	if (d->storage_error)
		snprintf(r->storage_msg, sizeof(r->storage_msg), "%s",
			 d->storage_msg[0] ? d->storage_msg : "the data directory refuses writes");
	if (d->dbq) {
		dbq_commit_stats(d->dbq, &r->commits);
		r->have_commits = 1;
	}
	/* Walking the blob store costs a stat per blob: at most every
	 * HTTP_BLOBS_EVERY_S, on the thread pool; the requests between get
	 * the last measure, and those before the first wait for it. */
	if (h->scanning && !h->blobs_known) {
		r->scan_next = h->scan_waiters;
		h->scan_waiters = r;
		return;
	}
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

/* The loop's tally moved to the window ending now: buckets that left it
 * dropped, new ones zero (counts by kind are kept). */
static void hist_align(struct store_event_tally *t, double now)
{
	double since = (floor(now / PAGE_BUCKET_S) - (PAGE_BUCKETS - 1)) * PAGE_BUCKET_S;
	double shift = (since - t->since) / PAGE_BUCKET_S;
	size_t n = PAGE_BUCKETS, k;

	if (t->since == since)
		return;
	k = shift > 0 && shift < (double)n ? (size_t)shift : n;
	if (!(shift > 0))
		k = n;  /* the clock went back: start the window afresh */
	memmove(t->verified, t->verified + k, (n - k) * sizeof(t->verified[0]));
	memset(t->verified + (n - k), 0, k * sizeof(t->verified[0]));
	memmove(t->refuted, t->refuted + k, (n - k) * sizeof(t->refuted[0]));
	memset(t->refuted + (n - k), 0, k * sizeof(t->refuted[0]));
	for (size_t w = 0; w < t->n_wl; w++) {
		memmove(t->units[w], t->units[w] + k, (n - k) * sizeof(t->units[w][0]));
		memset(t->units[w] + (n - k), 0, k * sizeof(t->units[w][0]));
	}
	t->since = since;
}

/* Database thread: the log's news after the loop's last read, the last
 * check and backup, a job's events, the database's size. */
static void db_work(struct store *st, void *arg)
{
	struct http_req *r = arg;
	struct http_db *db = r->db;
	char wal[4300];
	struct stat sb;

	db->rc = store_event_since(st, &db->tally);
	if (store_event_last(st, "check", &db->check_at, &db->check_detail))
		db->check_at = 0;
	if (store_event_last(st, "backup", &db->backup_at, &db->backup_detail))
		db->backup_at = 0;
	if (r->kind == REQ_JOB &&
	    store_event_list(st, r->job, PAGE_EVENTS_MAX, &db->events, &db->n_events))
		db->n_events = 0;
	if (stat(r->h->db_path, &sb) == 0) {
		db->db_known = 1;
		db->db_bytes = (uint64_t)sb.st_size;
		snprintf(wal, sizeof(wal), "%s-wal", r->h->db_path);
		if (stat(wal, &sb) == 0)
			db->db_bytes += (uint64_t)sb.st_size;
	}
}

static void db_after(void *arg)
{
	struct http_req *r = arg;
	struct http *h = r->h;
	struct http_db *db = r->db;

	if (db->rc == 0 && h->hist.last_id == db->from_id)
		h->hist = db->tally;
	else if (db->rc)
		LOG_WARN(h->log, "http: cannot read the event log (see the "
			 "database's messages)");
	measure(r);
}

/* Pages and /metrics: what the database thread adds. */
static void read_db(struct http_req *r)
{
	struct http *h = r->h;
	struct http_db *db = calloc(1, sizeof(*db));

	if (!db) {
		measure(r);
		return;
	}
	hist_align(&h->hist, gclock_wall());
	db->tally = h->hist;
	db->from_id = h->hist.last_id;
	r->db = db;
	if (dbq_submit(h->d->dbq, db_work, db_after, r)) {
		db->rc = GERR_STATE;
		measure(r);
	}
}

static void on_result(void *opaque, json_t *reply, void *bin, size_t bin_len)
{
	struct http_req *r = opaque;

	(void)bin_len;
	free(bin);
	r->result = reply;
	read_db(r);
}

static void on_workers(void *opaque, json_t *reply, void *bin, size_t bin_len)
{
	struct http_req *r = opaque;
	const struct ctlcmd_req req = { .cmd = CTLCMD_RESULT, .job = r->job };
	const char *error;

	(void)bin_len;
	free(bin);
	r->workers = reply;
	if (r->kind == REQ_STATUS) {
		finish(r);
		return;
	}
	/* A job's page: its answer's summary, once the job exists. */
	if (r->kind == REQ_JOB && ctlcmd_reply_ok(r->status, &error)) {
		control_handle(r->h->d, AUTH_ROLE_VIEWER, ctlcmd_encode(&req), NULL,
			       0, on_result, r);
		return;
	}
	read_db(r);
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

/* Everything but a plot and /login: the control API's replies. */
static void ask_control(struct http_req *r)
{
	/* Metrics and the plots' list count every job; the page shows what
	 * gpuctl status does; a job's page its job. */
	const struct ctlcmd_req req = { .cmd = CTLCMD_STATUS,
		.all = r->kind == REQ_METRICS || r->kind == REQ_PLOTS,
		.job = r->kind == REQ_JOB ? r->job : 0 };

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
		if (r->kind != REQ_PLOT && r->kind != REQ_LOGIN) {
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
	if (r->kind != REQ_PLOT && r->kind != REQ_LOGIN)
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
	http_tls_clear(&h->https);
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
	snprintf(h->db_path, sizeof(h->db_path), "%s/gpud.db", d->cfg.data_dir);
	for (size_t i = 0; i < METRICS_COUNTERS; i++)
		h->kinds[i] = metrics_counters[i].kind;
	h->hist.kinds = h->kinds;
	h->hist.n_kinds = METRICS_COUNTERS;
	h->hist.bucket_s = PAGE_BUCKET_S;
	h->hist.n_buckets = PAGE_BUCKETS;
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
	if (http_tls_setup(&h->https, &d->identity, (struct sockaddr *)&ss,
			   &d->log)) {
		h->closed = 1;
		close_handles(h);
		return GERR_UNSUPPORTED;
	}
	h->mhd = MHD_start_daemon(flags | h->https.flags, (uint16_t)port, NULL,
		NULL, on_request, h,
		/* First, so that every message of MHD's goes to our log. */
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_CONN_MAX,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)HTTP_CONN_PER_IP,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MEM,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
		MHD_OPTION_NOTIFY_CONNECTION, http_guard_notify, h->guard,
		MHD_OPTION_ARRAY, h->https.opts,
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

int http_is_tls(const struct gpud *d)
{
	return d->http && d->http->tls;
}
