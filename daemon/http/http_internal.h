/* http_internal.h - what http.c (the requests' way between libmicrohttpd's
 * thread and the loop) and http_answer.c (the answers written on
 * libmicrohttpd's thread from what the loop gathered) share: a request,
 * the server, and the answers. Nothing else includes it.
 *
 * Threads: a struct http_req is written by the loop thread until it
 * resumes the connection, then read by libmicrohttpd's thread (the resume
 * orders them); struct http's fields say which thread owns each.
 */
#ifndef GPUD_HTTP_INTERNAL_H
#define GPUD_HTTP_INTERNAL_H

#include <stdint.h>

#include <jansson.h>
#include <microhttpd.h>
#include <uv.h>

#include "dbq.h"
#include "http_auth.h"
#include "metrics.h"
#include "store_events.h"

/* page.html, embedded by embed_file.py (page_html.c). */
extern const unsigned char http_page[];
extern const size_t http_page_len;

enum req_kind { REQ_STATUS, REQ_METRICS, REQ_PAGE, REQ_JOB, REQ_PLOTS,
		REQ_PLOT, REQ_LOGIN };

/* What the database thread reads for a page or a scrape. */
struct http_db {
	struct store_event_tally tally; /* a copy of the loop's, advanced */
	int64_t from_id;                /* the copy's last_id before */
	int rc;                         /* store_event_since's */
	double check_at, backup_at;     /* 0: none */
	char *check_detail, *backup_detail;
	int db_known;
	uint64_t db_bytes;
	struct store_event_row *events; /* a job's page */
	size_t n_events;
};

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
	int64_t job;              /* REQ_JOB: its id */
	uint8_t key_hash[PAGEKEY_HASH]; /* the key presented; set when need_key */
	int need_key;
	/* Written by the loop thread before it resumes the connection, read
	 * by MHD's thread after (the resume orders them). */
	enum verdict verdict;
	double key_until;         /* the key's end (wall clock) */
	int key_rc;               /* database thread: store_pagekey_find's */
	json_t *status, *workers; /* the control replies, owned; NULL: none */
	json_t *result;           /* REQ_JOB: the result reply, owned */
	struct http_db *db;       /* pages and /metrics; NULL: none read */
	char storage_msg[200];    /* gpud's storage trouble ("": none) */
	struct dbq_commit_stats commits;
	int have_commits;
	uint64_t verify_failures;
	int blobs_known;
	uint64_t blob_bytes, blob_files;
	uint64_t http_late, http_evicted;
	uv_work_t scan;           /* the blob store's measure */
	struct http_req *scan_next; /* loop: waiting for the first measure */
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
	struct http_req *scan_waiters;  /* for the first measure (scan_next) */
	uint64_t blob_bytes, blob_files;
	uint64_t blobs_at_ms;
	/* The event log as read so far: counts by kind, the throughput's
	 * buckets (store_events.h), kinds from metrics_counters. */
	struct store_event_tally hist;
	const char *kinds[METRICS_COUNTERS];
	/* Set at start, then only read. */
	char results[4200];       /* cfg.results_dir (MHD's thread) */
	char blobs[4200];         /* DATA/blobs (the thread pool) */
	char db_path[4200];       /* DATA/gpud.db (the database thread) */
};

/* The answers, on libmicrohttpd's thread, from r's replies (http_answer.c):
 * /api/status (the status reply with the workers and each job's plots),
 * /metrics (metrics.h), a page (page_render.h). */
enum MHD_Result http_answer_status(const struct http *h,
				   struct MHD_Connection *conn,
				   struct http_req *r);
enum MHD_Result http_answer_metrics(const struct http *h,
				    struct MHD_Connection *conn,
				    const struct http_req *r);
enum MHD_Result http_answer_page(const struct http *h,
				 struct MHD_Connection *conn,
				 const struct http_req *r);

#endif
