/* gpud.h - the coordinator's state (struct gpud), shared by its modules,
 * and the few things every module does to it (gpud.c).
 *
 * Threads: everything here is owned by the loop thread, except `store`,
 * which only the database thread (dbq.c) touches.
 *
 * Modules by folder, each folder from the top down (tools/check_layers.py
 * --layers checks that no file calls back up):
 *   main.c          settings, signals (SIGHUP reloads), start and stop
 *   options.c       the settings table: flags and gpud.conf's keys,
 *                   defaults, checks, what a reload may change
 *   server.c        timers, start-up recovery, drain, shutdown; opens the
 *                   listeners and owns the connections' handler table
 *   listeners.c     the listening sockets: accepting by hand, connection
 *                   caps, descriptor shortage, the connections' timeouts
 *   login.c         a TCP connection's login: worker or remote gpuctl,
 *                   the credential of the key TLS proved, its role
 *   upload.c        a checkpoint's or result's way, thread by thread:
 *                   receive, bound, store, verify, merge, answer
 *   worker_proto.c  the other worker messages: claim, heartbeat,
 *                   release, withdraw; worker_fetch.c: fetch
 *   backup.c        a backup of the data directory while jobs run: the
 *                   database's snapshot, its blobs, the check of the copy
 *   results.c       the results directory: a finished job's plot
 *   health.c        workers' standing: online while connected
 *   conn.c          one connection: the secure channel (common/chan.c),
 *                   framing, lifetime, the connection list
 *   gpud.c          job rates, the data directory's standing, the wake hook
 *   blob_audit.c    the blobs against the rows that name them: the
 *                   start-up sweep, gpuctl check's blob pass
 *   datadir.c       the data directory at start: lock, mode, a database
 *                   missing beside old blobs (--init), the write probe
 *   dbq.c           the database thread
 *   notify.c        systemd notifications
 *   lifecycle.c     the lifecycle tick: time limits, jobs whose
 *                   predecessor failed, the end hook's processes
 *   control/        gpuctl's control API: control.c (the command table,
 *                   dispatch by role, submit, state changes, workers),
 *                   control_jobs.c (status, history, priority),
 *                   control_answer.c (`result` and `export`, rendered on
 *                   the thread pool), control_check.c, control_backup.c,
 *                   control_tokens.c, control_workloads.c, control_req.c
 *                   (a request's reply and end)
 *   http/           http.c (the status page, /metrics and /api/status:
 *                   libmicrohttpd's thread, answered on the loop) and
 *                   metrics.c (the Prometheus text of the control API's
 *                   replies)
 *   sched/          the lease policy on the database thread
 *                   (scheduler.h): sched_claim.c (grants in queue order,
 *                   and why a worker gets none), sched_hold.c (a held
 *                   lease: heartbeat, upload load, release, each checked
 *                   against its holder), sched_upload.c (an upload's
 *                   decode and file on the thread pool, its row),
 *                   sched_merge.c (a result's check, verdict, merge and
 *                   the job's end), replica.c (replicated results: a
 *                   group's results compared, its quorum decided),
 *                   job_parts.c (a job's verified leases as wl_parts)
 *   store/          SQLite, only here (store_internal.h lists the files
 *                   in calling order): store_open.c (open, migrations,
 *                   statements), store_tx.c, store_exec.c, store_err.c,
 *                   and one file per table
 */
#ifndef GPUD_GPUD_H
#define GPUD_GPUD_H

#include <stdint.h>
#include <uv.h>

#include "chan.h"
#include "log.h"
#include "rate_smooth.h"

/* Workloads whose parked claims are counted (= SCHED_WL_MAX). */
#define GPUD_PARKED_WL 32

struct store;
struct dbq;
struct conn;
struct sched_policy;
struct listeners;
struct http;
struct upload_req;
struct lifecycle;

struct gpud_config {
	const char *data_dir;
	const char *results_dir;     /* plots of finished jobs (results.h) */
	const char *listen_host;     /* "127.0.0.1" */
	int listen_port;             /* 0 picks one; written to DATA/gpud.addr */
	const char *socket_path;     /* DATA/gpud.sock by default */
	const char *http_host;       /* the page and /metrics (http.c) */
	int http_port;               /* -1: off; 0 picks one (DATA/gpud.http) */
	int http_asked;              /* --http or http = given: failing to bind
				      * it fails the start; the default's
				      * does not */
	int http_open;               /* the page needs no page link (http.c) */
	double heartbeat_s;          /* worker heartbeat interval */
	double lease_timeout_s;      /* deadline = last heartbeat + this */
	double lease_target_s;       /* wanted duration of one lease */
	double lease_min_s;          /* least duration of one lease */
	uint64_t lease_units;        /* fixed lease size; 0 adapts to rate */
	double checkpoint_s;         /* told to workers in WELCOME */
	uint32_t max_failures;       /* verification failures before failed */
	uint32_t quarantine_after;   /* worker failures before quarantine */
	uint32_t max_leases_per_worker; /* leases one process holds; 0 no cap */
	uint32_t max_leases_per_credential; /* all of a token's; 0 no cap */
	double progress_timeout_s;   /* no progress this long: revoked; 0 off */
	uint32_t trust_after;        /* confirmed results before trust; 0 off */
	double drain_s;              /* SIGTERM: wait for workers' checkpoints */
	int init;                    /* --init: a fresh database beside old blobs */
	double login_timeout_s;      /* a worker connection must log in by then */
	double idle_timeout_s;       /* a silent worker connection closes */
	int max_conns;               /* worker connections in all */
	int max_conns_per_addr;      /* worker connections from one address */
	int max_conns_per_cred;      /* logged-in connections of one token */
	int max_prelogin;            /* connections not logged in, in all */
	int max_prelogin_per_addr;   /* ... from one address */
	uint64_t frame_mem_max;      /* bytes of frames and uploads buffered */
	const char *end_hook;        /* run at a job's end (lifecycle.c); NULL none */
	double end_hook_timeout_s;   /* killed after this long */
	uint32_t end_hook_max;       /* running at once */
};

/* Progress samples of one job, for rate and ETA (loop thread). */
struct job_rate {
	int64_t job_id;
	struct rate_smooth sm;  /* rate_smooth.h: the rule */
	struct job_rate *next;
};

struct gpud {
	uv_loop_t *loop;
	struct glog log;
	struct gpud_config cfg;
	struct chan_identity identity; /* DATA/gpud.key: what workers pin */
	struct store *store;      /* database thread only */
	struct dbq *dbq;
	struct listeners *listeners; /* listeners.c */
	struct http *http;        /* http.c; NULL when off */
	char http_url[320];       /* the page's address, set by http_start
				   * ("": none), for page links */
	uint64_t verify_failures; /* results refuted since start (metrics) */
	uv_timer_t expiry_timer;
	uv_timer_t sample_timer;
	uv_signal_t sigterm, sigint;
	uv_signal_t sighup;       /* main.c: reload the configuration */
	struct conn *conns;       /* every open connection */
	struct job_rate *rates;
	int stopping;
	int draining;             /* SIGTERM seen: workers asked to release */
	uv_timer_t drain_timer;
	uint64_t drain_deadline;  /* uv_now() ms */
	void (*drain_done)(struct gpud *d);
	int watchdog;             /* systemd wants WATCHDOG=1 pings */
	/* The last failure to write the data directory (disk full, permission,
	 * I/O): new work stops until a write succeeds again. */
	int storage_error;
	char storage_msg[200];
	uv_work_t storage_probe;  /* datadir_probe on the thread pool */
	int probing, probe_rc;
	/* A verification could not commit (storage): every stored result is
	 * verified again once the data directory is writable (the wake). */
	int reverify;
	/* The last time accept() found no descriptor (uv_now() ms, 0 never),
	 * and what gpuctl status says about it. */
	uint64_t fd_short_ms;
	char fd_msg[200];
	int exit_code;
	/* Work may have appeared: the owner (server.c) installs what re-runs
	 * the parked claims, so lower modules need not know connections. */
	void (*wake_parked)(struct gpud *d);
	/* Parked claims per workload, in registry order (conn_set_parked):
	 * the idle workers a heartbeat's tail decision counts. */
	uint32_t parked[GPUD_PARKED_WL];
	/* Bytes buffered for frames and uploads (conn.c, upload.c), held
	 * under cfg.frame_mem_max; connections whose reads wait for it, and
	 * uploads waiting to be read back (upload.c's queue). */
	uint64_t frame_mem;
	int frame_paused;
	struct upload_req *upload_wait, *upload_wait_tail;
	unsigned uploads_in_mem;  /* uploads read back, charged to frame_mem */
	/* lifecycle.c: time limits, jobs waiting for others, the end hook */
	struct lifecycle *lifecycle;
};

/* gpud.c: loop thread only. */

/* The lease policy from the configuration (its strings stay d's). */
struct sched_policy gpud_policy(const struct gpud *d);
/* Record a progress sample; returns the job's recent rate (units/s) or 0. */
double gpud_rate_sample(struct gpud *d, int64_t job_id, uint64_t units,
			double now);
/* The job's recent rate (units/s), or 0 when unknown. */
double gpud_rate_get(struct gpud *d, int64_t job_id);
/* Seconds to do left units at the job's smoothed rate, or 0 while its
 * rate is not steady (rate_smooth.h's rule). */
double gpud_rate_eta(struct gpud *d, int64_t job_id, uint64_t left, double now);
/* Forget every job's samples (at shutdown). */
void gpud_rate_clear(struct gpud *d);
/* Note the outcome of a write to the data directory: errors that mean the
 * disk or its permissions fail stop new leases (with a clear reason). A
 * success proves only that its own file took a write (a database write
 * succeeds into an open file of a read-only directory): it starts a probe,
 * and the reason holds until the probe writes the data directory. */
void gpud_storage_outcome(struct gpud *d, int rc, const char *what);
/* While a write has failed: probe whether the data directory and its
 * blobs take writes again (on the thread pool; one at a time); when they
 * do, clear the reason and wake the parked claims. */
void gpud_storage_probe(struct gpud *d);
/* Work may have appeared (job submitted or resumed, lease back to pending,
 * storage writable again): calls d->wake_parked when installed. */
void gpud_wake_parked(struct gpud *d);

#endif
