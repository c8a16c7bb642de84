/* gpud.h - the coordinator's state, shared by its modules.
 *
 * Threads: everything here is owned by the loop thread, except `store`,
 * which only the database thread (dbq.c) touches, and the pure functions of
 * the workloads, which the thread pool calls for verification.
 *
 * Modules:
 *   main.c       options, start, signals
 *   server.c     listeners, timers, start-up recovery, shutdown
 *   conn.c       one connection: framing, worker protocol, control replies
 *   scheduler.c  the database-thread side of leases: claim, heartbeat,
 *                checkpoint, result, verification, merge
 *   control.c    gpuctl's commands
 *   dbq.c        the database thread
 */
#ifndef GPUD_GPUD_H
#define GPUD_GPUD_H

#include <stdint.h>
#include <uv.h>

#include "log.h"

struct store;
struct dbq;
struct conn;
struct sched_upload;
struct verify_req;

struct gpud_config {
	const char *data_dir;
	const char *listen_host;     /* "127.0.0.1" */
	int listen_port;             /* 0 picks one; written to DATA/gpud.addr */
	const char *socket_path;     /* DATA/gpud.sock by default */
	double heartbeat_s;          /* worker heartbeat interval */
	double lease_timeout_s;      /* deadline = last heartbeat + this */
	double lease_target_s;       /* wanted duration of one lease */
	uint64_t lease_units;        /* fixed lease size; 0 adapts to rate */
	double checkpoint_s;         /* told to workers in WELCOME */
	uint32_t max_failures;       /* verification failures before failed */
	uint32_t quarantine_after;   /* worker failures before quarantine */
	double drain_s;              /* SIGTERM: wait for workers' checkpoints */
};

/* Progress samples of one job, for rate and ETA (loop thread). */
#define GPUD_RATE_SAMPLES 24
struct job_rate {
	int64_t job_id;
	unsigned n, head;
	double t[GPUD_RATE_SAMPLES];
	uint64_t units[GPUD_RATE_SAMPLES];
	struct job_rate *next;
};

struct gpud {
	uv_loop_t *loop;
	struct glog log;
	struct gpud_config cfg;
	struct store *store;      /* database thread only */
	struct dbq *dbq;
	uv_tcp_t tcp;
	uv_pipe_t pipe;
	uv_timer_t expiry_timer;
	uv_timer_t sample_timer;
	uv_signal_t sigterm, sigint;
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
	int exit_code;
};

/* Wall-clock seconds (the store's time base). */
double gpud_now(void);

/* server.c */
int server_start(struct gpud *d);
void server_stop(struct gpud *d);
/* Stop granting leases and ask every worker holding one to checkpoint and
 * release it; call done(d) once none holds a lease or cfg.drain_s passed. */
void server_drain(struct gpud *d, void (*done)(struct gpud *d));
/* Record a progress sample; returns the job's recent rate (units/s) or 0. */
double gpud_rate_sample(struct gpud *d, int64_t job_id, uint64_t units,
			double now);
double gpud_rate_get(struct gpud *d, int64_t job_id);
/* Note the outcome of a write to the data directory: errors that mean the
 * disk or its permissions fail stop new leases (with a clear reason);
 * a success clears that. */
void gpud_storage_outcome(struct gpud *d, int rc, const char *what);
/* Start verification of a lease whose result is stored (state done). */
void gpud_verify_lease(struct gpud *d, int64_t lease_id, uint64_t epoch);
/* Start checking a result upload's decoded bytes while the upload is still
 * being stored, so the check overlaps the durable writes. Takes u->raw
 * (u->raw is NULL afterwards) and copies what else it needs. Returns NULL
 * when it cannot start (u unchanged: verify the usual way once stored).
 * The caller must then call gpud_verify_stored exactly once. */
struct verify_req *gpud_verify_early(struct gpud *d, struct sched_upload *u);
/* The upload's outcome: stored (durable, lease done) lets the early check
 * commit its verdict and merge; not stored drops it. */
void gpud_verify_stored(struct verify_req *r, int stored);

/* conn.c */
int conn_accept_tcp(struct gpud *d, uv_stream_t *server);
int conn_accept_pipe(struct gpud *d, uv_stream_t *server);
void conn_close_all(struct gpud *d);
/* The connection (worker) holding a lease, for `gpuctl workers`. */
int64_t conn_worker_lease(struct gpud *d, int64_t worker_id, int64_t *ret_job);
/* Work may have appeared (job submitted or resumed, lease back to pending):
 * re-run the claims of workers waiting for work. */
void conn_wake_parked(struct gpud *d);
/* Close every worker connection authenticated with that token name. */
void conn_close_token(struct gpud *d, const char *name);
/* Worker connections holding a lease now. */
int conn_count_leases(struct gpud *d);
/* Authenticated worker connections now. */
int conn_count_workers(struct gpud *d);
/* Non-zero when some authenticated worker connection runs that workload. */
int conn_workload_served(struct gpud *d, const char *workload);

#endif
