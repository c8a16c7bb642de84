/* scheduler.h - the lease policy, run on the database thread, one file
 * per concern:
 *   sched_claim.c   claims in queue order (grants, and why none)
 *   sched_hold.c    what a worker does with a lease it holds: heartbeat,
 *                   an upload's load step, release, each checked against
 *                   the worker that holds the grant; a job's live progress
 *   sched_upload.c  an upload's decode, file and commit
 *   sched_merge.c   a result's verification, verdict and merge, and the
 *                   job's end
 * An upload's way through gpud, thread by thread, is daemon/upload.c.
 *
 * Each sched_* function takes a request struct whose "in" fields the loop
 * thread filled and whose "out" fields the function fills. They run on the
 * database thread only (they call store_*), except the decode, store,
 * unstore and check steps, which run on the thread pool and touch no
 * store, and sched_upload_join (any thread, once decode and store are
 * back). The caller owns the structs; _clear frees what a step put in them.
 *
 * Durability: every function that changes state commits before it returns
 * rc == 0 (or, inside a dbq batch, the batch commits before any after()
 * runs), so the loop thread may acknowledge as soon as it sees rc == 0.
 * sched_claim, sched_heartbeat and sched_release may run twice on the same
 * request (group commit retry) and reset their outputs each time.
 */
#ifndef GPUD_SCHEDULER_H
#define GPUD_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

#include "msg.h"
#include "replica.h"
#include "store.h"
#include "workload.h"

struct sched_policy {
	double lease_target_s;  /* a lease's wanted duration at the worker's rate */
	double lease_min_s;     /* its least duration, however large the fleet */
	uint64_t lease_units;   /* fixed lease size; 0 adapts to the rate */
	double lease_timeout_s;
	uint32_t max_failures;      /* failed verifications or runs of a lease */
	uint32_t quarantine_after;  /* each of a worker's charges */
	uint32_t max_leases_per_worker; /* held at once by one process; 0 no cap */
	uint32_t max_leases_per_credential; /* by all of one token's; 0 no cap */
	double progress_timeout_s;  /* no progress for this long: revoked; 0 off */
	uint32_t trust_after;   /* results confirmed in a row before a worker's
				 * results merge unreplicated; 0 trusts all */
	const char *data_dir;
};

/* The reply to every message about a lease its sender does not hold,
 * whether the lease is unknown, at another epoch or someone else's: the
 * same bytes, so that the reply tells nothing about other workers' leases. */
#define SCHED_NOT_HELD "stale: lease not held by this worker"
/* How the reason of a job gpud paused itself begins (sched_release, for
 * its own damaged blob): status shows that reason, not the user's pause. */
#define SCHED_PAUSED_BY_GPUD "paused by gpud: "

/* Holders (sched_hold.c). A message about a lease is acted on only when
 * its sender holds the grant: leases.worker_id is the sender, the lease is
 * leased, and the epoch is the current one. Otherwise it is refused with
 * SCHED_NOT_HELD; when the grant was never the sender's (an unknown lease,
 * an epoch not granted yet, or another worker's current grant, which no
 * honest worker sends: it names only grants it received) the request's
 * `foreign` is set and the sender charged (store_worker_charge,
 * quarantined at quarantine_after). A lease that expired or was re-issued
 * since is ordinary staleness and charges nobody. */

/* A claim, in queue order (the job with the highest priority, then the
 * oldest): its oldest pending lease, or a new one carved; the job's first
 * grant sets its started_at. Refused (rc
 * GERR_STATE, reason) for a quarantined worker and for one that holds
 * pol->max_leases_per_worker leases already (fair share), or whose
 * credential's workers hold pol->max_leases_per_credential together. With nothing to
 * grant (GERR_NOTFOUND) the reason says why, naming who holds what when
 * every lease is held (sched_holders). */
struct sched_claim {
	/* in */
	const struct sched_policy *pol;
	int64_t worker_id;
	char *workloads_json;   /* owned: ["graveler",..] */
	/* out */
	int rc;                 /* 0 granted, GERR_NOTFOUND none, else error */
	struct store_lease lease;
	char *workload;         /* malloc'ed */
	char *params;           /* malloc'ed JSON */
	uint8_t *checkpoint;    /* malloc'ed blob or NULL */
	size_t checkpoint_len;
	int no_jobs;            /* no active job at all */
	char reason[256];
};
void sched_claim(struct store *st, struct sched_claim *c);
void sched_claim_clear(struct sched_claim *c);

/* "every lease is held: alice holds 3, bob holds 1" for job_id (0: every
 * active job) into buf; "" when nobody holds a lease. Database thread. */
void sched_holders(struct store *st, int64_t job_id, char *buf, size_t len);

/* Workloads the idle counts of a heartbeat cover, in registry order
 * (workload_all); a workload past them is never taken back. */
#define SCHED_WL_MAX 32

/* A heartbeat (sched_hold.c). Units over the lease's are refused
 * (GERR_INVAL, err) and not recorded. With pol->progress_timeout_s, a
 * lease whose reported progress has not grown for that long is revoked:
 * back to pending at its last checkpoint, action MSG_HB_STOP, revoked set,
 * the holder charged with a stall. A lease not held gets MSG_HB_STOP; one
 * whose job is paused MSG_HB_RELEASE, no longer active MSG_HB_STOP.
 *
 * The tail: while a claim of a worker that runs the lease's workload waits
 * with nothing to do (idle), a lease whose workload can cut (split), in no
 * replica group, whose rest would take its holder more than twice
 * pol->lease_min_s at the rate it has shown since its grant, is marked to
 * be cut into idle + 1 pieces (none under lease_min_s of that rate) and
 * answered MSG_HB_GIVE_BACK: the holder checkpoints and releases, and
 * sched_release cuts it. takeback says into how many (0: not taken). */
struct sched_heartbeat {
	/* in */
	const struct sched_policy *pol;
	int64_t lease_id, worker_id;
	uint64_t epoch, units_done;
	uint32_t idle[SCHED_WL_MAX]; /* waiting claims per workload */
	/* out */
	int rc;
	enum msg_hb_action action; /* what the holder does next */
	int foreign;            /* never the sender's grant: charged */
	int revoked;            /* taken back for making no progress */
	int quarantined;        /* the sender is quarantined now */
	uint32_t takeback;      /* pieces the lease is to be cut into */
	char err[160];          /* rc's message for the sender */
	char why[200];          /* for the log: why refused or revoked */
};
void sched_heartbeat(struct store *st, struct sched_heartbeat *h);

/* A checkpoint or result upload, in three steps:
 *   sched_upload_load   (database, sched_hold.c) check that the sender
 *                       holds (lease, epoch) and that units_done is within
 *                       the lease; load job
 *   sched_upload_check  (pool, sched_upload.c) decode + validate the blob,
 *                       store the file
 *   sched_upload_commit (database, sched_upload.c) record it; durable
 *                       when rc == 0
 * sched_upload_check is sched_upload_decode, sched_upload_store and
 * sched_upload_join; decode and store touch disjoint fields, so they may
 * run side by side on two pool threads (gpud does so for results), then
 * join (loop) gives the outcome. A file stored for an upload that join
 * refuses (its bytes do not decode) is garbage: sched_upload_unstore
 * (pool) removes it. store writes nothing unless the blob's header names
 * this upload, so that file is never another lease's.
 * A result's decoded bytes stay in raw (owned; _clear frees them) so that
 * its verification can start without reading and inflating it again. */
struct sched_upload {
	/* in */
	const struct sched_policy *pol;
	int is_result;
	int64_t lease_id, worker_id;
	uint64_t epoch, units_done;
	double seconds;
	uint8_t *blob;          /* owned */
	size_t blob_len;
	/* out */
	int rc;
	char err[256];
	int foreign, quarantined; /* as struct sched_heartbeat's */
	char why[200];
	int64_t job_id;
	char *workload, *params, *spec;
	char hash[65];
	uint8_t *raw;           /* results: the decoded bytes, owned */
	size_t raw_len;
	int store_rc, stored;   /* sched_upload_store's own outcome */
	double decode_s, store_s, commit_s; /* stage times, for the log */
};
/* Database thread. Sets rc, err, foreign, quarantined, why; on rc == 0
 * job_id, workload, params and spec (malloc'ed, owned by u). */
void sched_upload_load(struct store *st, struct sched_upload *u);
/* Thread pool. Sets rc, err, raw (a result's bytes), decode_s. */
void sched_upload_decode(struct sched_upload *u);
/* Thread pool. Sets store_rc, stored, hash, store_s. */
void sched_upload_store(struct sched_upload *u);
/* Any thread, once decode and store are back: sets rc and err; returns
 * non-zero when the file is stored but the upload refused. */
int sched_upload_join(struct sched_upload *u);
/* Thread pool: removes the file join refused; clears stored. */
void sched_upload_unstore(struct sched_upload *u);
/* Thread pool: decode, store, join in a row (the unit tests). */
void sched_upload_check(struct sched_upload *u);
/* Database thread: the row, durable when rc == 0 (GERR_STALE with
 * SCHED_NOT_HELD in err when the lease moved on since the load); a
 * replaced checkpoint's file is removed once the new one is durable. */
void sched_upload_commit(struct store *st, struct sched_upload *u);
/* Any thread: frees what u owns (blob, strings, raw); NULL-safe fields. */
void sched_upload_clear(struct sched_upload *u);

/* Verification of a stored result, then merge (sched_merge.c):
 *   sched_verify_load   (database) lease done at epoch; job params
 *   sched_verify_check  (pool)     read blob, decode, workload verify
 *   sched_verify_commit (database) verified + merge + maybe finish the job,
 *                                  or reject (retry elsewhere / fail)
 * Early check, while the upload is still being stored: the caller fills
 * workload, params, spec and raw (the upload's, owned from then on) and
 * runs sched_verify_check first; sched_verify_load then only checks the
 * lease (done at epoch, so the result checked is the one stored) and loads
 * its row, and sched_verify_commit follows as usual.
 * Replication (replica.h) runs inside these steps: load reads the lease's
 * group, check compares its result with the group's, and commit merges,
 * waits for another result (waiting), or asks for the lease to be verified
 * again (again: the group changed meanwhile; early checks always do when
 * the lease is replicated, having compared nothing). On a quorum the lease
 * merged is the group's primary: lease_id, epoch and lease then name it. */
struct sched_verify {
	/* in */
	const struct sched_policy *pol;
	int64_t lease_id;
	uint64_t epoch;
	uint64_t seed;          /* sample seed, random per verification */
	/* out */
	int rc;                 /* of the load step */
	int passed;
	char err[256];
	struct store_lease lease;
	char *workload, *params;
	char *spec;             /* early check: the lease's spec, else NULL */
	uint8_t *raw;           /* decoded result */
	size_t raw_len;
	int job_finished;       /* 1 done, -1 failed, 0 still running */
	double seconds;         /* sched_verify_check, all of it */
	double decode_s;        /* of which reading and inflating the blob */
	double commit_s;        /* sched_verify_commit (merge, durable) */
	struct replica_check rep;
	int64_t checked_id;     /* the lease verified (lease_id may change) */
	int again, waiting, quorum;
	int outdated;           /* result of a format before an upgrade */
	int spot;               /* verify answered WL_VERIFY_SPOT */
	char *blamed_result;    /* a lease the final check blamed: its
				   result file, removed after the commit */
};
/* Database thread. rc: 0, GERR_STALE (not done at epoch) or a store
 * error; fills lease, rep and (unless early) workload and params. */
void sched_verify_load(struct store *st, struct sched_verify *v);
/* Thread pool: sets passed, err, raw (read and decoded unless given),
 * seconds, decode_s, rep's comparison. Touches no store. */
void sched_verify_check(struct sched_verify *v);
/* Database thread: the verdict, durable when rc == 0; a rejected result's
 * file is removed after the commit. */
void sched_verify_commit(struct store *st, struct sched_verify *v);
/* Any thread: frees what v owns; NULL-safe fields. */
void sched_verify_clear(struct sched_verify *v);

/* A release (sched_hold.c). One that carries an error (the holder's run
 * failed) is a failure of the lease: after pol->max_failures of them,
 * failed verifications included, the lease fails and with it the job, its
 * reason naming the lease and the last error; unless a blob gpud stores
 * and the job names (its input, a spec's earlier result) is damaged or
 * missing: then nobody is charged, the lease is released, the job paused
 * with a reason naming the blob, and an event "blob_damaged" says so
 * (damaged set). Runs on the database thread, reading those blobs back
 * for an error release only. A plain release of a grant
 * marked for the tail (struct sched_heartbeat) puts the lease back to
 * pending and, in the same transaction, cuts its rest past the checkpoint
 * into the pieces marked with the workload's split: the head keeps the
 * lease (id, checkpoint, attempts), each other piece is a new pending
 * lease of the job, and an event "takeback" says how. A cut the workload
 * refuses leaves the lease whole. */
struct sched_release {
	/* in */
	const struct sched_policy *pol;
	int64_t lease_id, worker_id;
	uint64_t epoch;
	char error[256];        /* why the run failed, or "" (plain release) */
	/* out */
	int rc;
	int64_t job_id;
	int job_failed;         /* the run failure failed the job */
	int foreign, quarantined; /* as struct sched_heartbeat's */
	uint32_t pieces;        /* the tail: leases the rest became (0: none) */
	int damaged;            /* the run failed on gpud's own damaged blob:
				 * nobody charged, the job paused (why) */
	char why[400];          /* refused: why; cut: how; damaged: the job's
				 * reason (for the log) */
};
void sched_release(struct store *st, struct sched_release *r);

/* Progress of a job in units, live (for rates; sched_hold.c): verified + done + the
 * checkpoints of other leases + held leases' reported progress past them
 * (store_job_units_progress). */
uint64_t sched_job_progress(struct store *st, int64_t job_id);

#endif
