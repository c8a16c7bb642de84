/* runner.h - the runner thread: runs one lease at a time via wl->run.
 *
 * The loop thread (the client, wgrant.c) and the runner thread share one
 * struct runner.
 * Everything under "shared" is protected by mu; the loop thread learns about
 * new output through the uv_async_t, whose callback calls wake().
 *
 * Invariants:
 *  1. At most one run exists. runner_start is refused (GERR_STATE) while a
 *     run is busy, i.e. started and its result not yet taken by the loop.
 *  2. Each run has a run_id (1, 2, ...). Every output carries the run_id it
 *     came from, so the loop can never mistake a late output of an old run
 *     for one of the current lease.
 *  3. Once stop is set the run emits nothing more: checkpoints handed over
 *     after it are dropped (the workload gets GERR_CANCELLED).
 *  4. Checkpoint and result blobs are encoded (compressed) on the runner
 *     thread (a result may be on the encoder thread, invariant 8) so a big
 *     blob never stalls the loop; the incoming checkpoint
 *     blob and fetched blobs are decoded (and hashed) there for the same
 *     reason.
 *  5. At most one fetch (io->fetch) is outstanding: the run blocks in it.
 *     The loop only carries the request to gpud and the answer back; the
 *     runner thread checks the answer's hash, decodes it and keeps it in
 *     the blob cache (blobcache.h).
 *  6. A fetch never outlives the run's wish for it: stop or quit ends the
 *     wait at once with GERR_CANCELLED, and an answer that arrives after
 *     that (or for another hash) is dropped by runner_fetch_done.
 *  7. Run ahead: after a successful run whose workload chains leases
 *     (next_lease), the thread starts the run of the lease gpud will most
 *     likely grant next, before it exists. Such a run is not busy: it has
 *     no lease, emits no checkpoint, fetches from the cache only, and its
 *     progress is kept aside. runner_start adopts it when the lease's job,
 *     params and spec equal its guess (next_run_key), which makes it
 *     that lease's run (same run id, busy, lease fields filled in);
 *     any other runner_start gives the run a stale run id, so it stops and
 *     its output is dropped. A run ahead that finishes first waits,
 *     holding its output, until it is adopted or dropped.
 *  8. A run ahead does not wait for its state's blob: it starts at once from
 *     the finished run's output, named NEXT_RUN_PENDING_HASH in its spec and served
 *     from memory (pending), while the encoder thread encodes the result.
 *     The encoder then sets the guess (ahead_key, from the blob's real
 *     hash) and only after that posts the result, so a lease can only be
 *     adopted once its guess is known. At most one encoder exists: the
 *     runner thread joins the last one before starting the next.
 *  9. A run ahead that finishes before its lease comes starts compressing
 *     its result at once, on a thread of its own, with lease and epoch 0 in
 *     the blob's header; whoever encodes that result (the encoder thread
 *     or the runner thread) joins it and restamps the header with the
 *     adopting lease (blob_restamp), so the wait for the lease hides the
 *     compression. A dropped run ahead joins it and frees the blob.
 *
 * Fetch states (fetch_move checks every move against fetch_next; under mu):
 *
 *   IDLE -> POSTED -> ASKED -> ANSWERED -> IDLE
 *             |         |
 *             +---------+-----> IDLE (stop/quit: GERR_CANCELLED)
 *
 *   POSTED    the run waits; the loop has not taken the request yet.
 *   ASKED     the loop took it (runner_take_fetch) and sends FETCH, again
 *             after every reconnect, until runner_fetch_done.
 *   ANSWERED  the bytes (or an error) wait for the runner thread.
 *
 * The run ahead (invariants 7-9) is next_run.c's (next_run.h, private to
 * the runner); packing and posting a result, which both the lease's run
 * and the run ahead's encoder do, is result_pack.c's (result_pack.h,
 * private too). Calls go runner.c -> next_run.c -> result_pack.c, and
 * runner.c -> result_pack.c; never back.
 *
 * Lifecycle: runner_init -> (runner_start -> take outputs)* -> runner_close.
 *
 * Threads: every runner_* function here is for the loop thread only. The
 * runner thread runs runner_main and the wl_run_io callbacks in runner.c
 * and the run ahead's steps in next_run.c; next_run.c's encoder_main runs
 * on the encoder thread (invariant 8), result_pack.c's pre_main on a
 * thread of its own (invariant 9).
 */
#ifndef GPUD_WORKER_RUNNER_H
#define GPUD_WORKER_RUNNER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <uv.h>

#include "blob.h"
#include "log.h"
#include "workload.h"

/* One lease to run. runner_start takes ownership of everything in it on
 * success (params/spec references, checkpoint blob); on failure the caller
 * keeps it. */
struct runner_job {
	const struct workload *wl;  /* static registry entry */
	struct wl_device dev;       /* cuda_ctx borrowed; outlives the runner */
	json_t *params, *spec;      /* handed over; no other thread may
				       hold a reference (jansson counts
				       are not a cross-thread handoff) */
	uint8_t *ckpt_blob;         /* malloc'ed blob from LEASE, or NULL */
	size_t ckpt_blob_len;
	uint64_t job, lease, epoch;
	uint64_t units;             /* the lease's size */
	uint64_t units_done;        /* progress gpud already has */
};

/* Free what job owns and zero it; NULL fields are fine. Any thread (the
 * job's owner's). Inline so that runner.c and next_run.c share it without
 * calling each other. */
static inline void runner_job_clear(struct runner_job *job)
{
	json_decref(job->params);
	json_decref(job->spec);
	free(job->ckpt_blob);
	memset(job, 0, sizeof(*job));
}

/* A checkpoint ready to upload. The loop owns blob after taking it. */
struct runner_ckpt {
	uint64_t run_id;
	uint8_t *blob;
	size_t blob_len;
	uint64_t units_done;
	int requested;  /* produced after runner_request_checkpoint */
};

/* How a run ended. The loop owns blob after taking it. */
struct runner_result {
	uint64_t run_id;
	int rc;                /* 0, GERR_CANCELLED, GERR_DEVICE, ... */
	char err[WL_ERRLEN];   /* reason when rc != 0 */
	uint8_t *blob;         /* result blob when rc == 0 */
	size_t blob_len;
	uint64_t units_done;
	uint64_t units_run;    /* units done by this run (for the rate) */
	double seconds;        /* wall time of this run */
};

typedef void (*runner_wake_fn)(void *opaque);

enum runner_fetch_state {
	RUNNER_FETCH_IDLE,
	RUNNER_FETCH_POSTED,
	RUNNER_FETCH_ASKED,
	RUNNER_FETCH_ANSWERED,
	RUNNER_FETCH_COUNT,
};

struct blobcache;

struct runner {
	/* Set by runner_init, then read-only. */
	const struct glog *log;
	runner_wake_fn wake;
	void *wake_opaque;
	uv_async_t async;       /* loop thread handle; runner thread sends */
	uv_thread_t thread;
	uv_mutex_t mu;
	uv_cond_t cv;
	int started;            /* thread created (loop thread only) */
	int run_ahead;          /* start runs ahead (invariant 7) */
	/* Runner thread only (invariant 8). */
	void *pending;          /* the run ahead's state, until it fetches it */
	size_t pending_len;
	uv_thread_t enc_thread;
	int enc_running;
	struct result_pack_pre *pre;  /* a finished run ahead's result, compressing */
	struct blobcache *cache; /* runner and encoder threads (invariant 5) */

	/* Shared, under mu. */
	int quit;               /* loop -> runner: leave the thread */
	int has_job;            /* loop -> runner: job is waiting */
	struct runner_job job;
	uint64_t next_run_id;
	uint64_t run_id;        /* current or last run */
	int busy;               /* started and result not yet taken */
	int stop;               /* loop -> runner: stop the current run */
	int ckpt_requested;     /* loop -> runner: checkpoint now */
	uint64_t last_ckpt_ns;  /* uv_hrtime of the last checkpoint/start */
	uint64_t ckpt_interval_ns; /* runner_set_checkpoint_interval */
	uint64_t units_done;    /* latest progress of the current run */
	int ahead;              /* the current run is ahead (invariant 7) */
	char *ahead_key;        /* its next_run_key, malloc'ed */
	uint64_t ahead_units;   /* its progress */
	struct {                /* the lease that adopted it */
		uint64_t lease, epoch, units;
	} adopted;
	int has_ckpt;
	struct runner_ckpt ckpt;   /* newest checkpoint not yet taken */
	int has_result;
	struct runner_result result;
	/* The fetch (invariants 5, 6). */
	enum runner_fetch_state fetch_state;
	char fetch_hash[BLOB_HASH_HEX];  /* POSTED .. ANSWERED */
	int fetch_rc;                   /* ANSWERED: 0 or GERR_* */
	uint8_t *fetch_blob;            /* ANSWERED with rc 0: the raw blob */
	size_t fetch_blob_len;
};

/* Start the runner thread (checkpoints every ckpt_interval_s; 0: every
 * 60 s until runner_set_checkpoint_interval), with an empty blob cache of
 * a quarter of the memory (cgroup limit included), at most
 * BLOBCACHE_MAX_CAP. r is
 * caller-owned memory that must stay valid until the loop has finished
 * closing the async handle (after runner_close and uv_run returned). wake(opaque) is called on the loop
 * thread whenever a checkpoint or result may be waiting. */
int runner_init(struct runner *r, uv_loop_t *loop, const struct glog *log,
		double ckpt_interval_s, int run_ahead, runner_wake_fn wake,
		void *opaque);

/* Stop any run, join the thread (blocks until the workload notices the stop
 * flag), drop untaken outputs and close the async handle. NULL-safe and safe
 * on a half-initialised runner. */
void runner_close(struct runner *r);

/* Hand a lease to the thread, or let the run ahead become its run
 * (invariant 7). Returns the run's id (> 0) in *ret_run_id. */
int runner_start(struct runner *r, struct runner_job *job,
		 uint64_t *ret_run_id);

/* Ask the current run to stop; its output will be discarded by the loop. */
void runner_stop(struct runner *r);

/* The time between checkpoints from now on (seconds, > 0), for the run
 * going on too: gpud's cadence once it is known at login. */
void runner_set_checkpoint_interval(struct runner *r, double seconds);

/* Ask the current run for a checkpoint as soon as possible. */
void runner_request_checkpoint(struct runner *r);

/* Non-zero while a run is busy (invariant 1). */
int runner_busy(struct runner *r);

/* Latest units_done of the current run. */
uint64_t runner_units_done(struct runner *r);

/* Take the newest checkpoint / the result if there is one: returns 1 and
 * fills *ret, or 0. */
int runner_take_checkpoint(struct runner *r, struct runner_ckpt *ret);
int runner_take_result(struct runner *r, struct runner_result *ret);

/* Take the run's new fetch request (POSTED -> ASKED): returns 1 and copies
 * the hash (64 lowercase hex digits) into ret_hash, or 0 when none is
 * waiting. The loop then sends FETCH until it answers. */
int runner_take_fetch(struct runner *r, char ret_hash[BLOB_HASH_HEX]);

/* gpud's answer to the FETCH for hash: rc 0 with the blob as received
 * (header + zlib stream, unchecked), or a GERR_* code with blob NULL.
 * Takes ownership of blob in every case. Returns 1 when the run was waiting
 * for it, 0 when it was dropped (late, or for another hash). */
int runner_fetch_done(struct runner *r, const char *hash, int rc,
		      uint8_t *blob, size_t len);

#endif
