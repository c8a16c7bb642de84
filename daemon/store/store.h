/* store.h - gpud's durable state in SQLite (only the store files,
 * daemon/store/store*.c, include sqlite3.h; store_internal.h is their private
 * header).
 *
 * Invariants
 *  1. SQLite runs in WAL mode with synchronous=FULL: when a store_* call that
 *     writes returns 0 outside an explicit transaction, or store_commit
 *     returns 0, the change survives a crash of gpud or of the machine.
 *  2. A lease's epoch increases by one on every grant (claim). Every call
 *     that names (lease, epoch) fails with GERR_STALE unless the lease is in
 *     the expected state with exactly that epoch.
 *  3. Lease states and the only allowed moves (checked in one function):
 *        pending  -> leased      claim
 *        leased   -> pending     release, expiry, revoked (no progress),
 *                                run failed (failures < max)
 *        leased   -> failed      run failed (failures >= max)
 *        leased   -> done        result stored
 *        done     -> done        replication: checked, or a replica's
 *                                agreeing result adopted (store_replica)
 *        done     -> verified    verification passed
 *        done     -> pending     verification failed (attempts < max), or
 *                                a result unreadable for its comparison
 *        done     -> failed      verification failed (attempts >= max),
 *                                or a replica outvoted by its group
 *        verified -> pending     blamed by the job's final check
 *                                (failures < max), started afresh
 *        verified -> failed      blamed, failures >= max
 *        pending|leased|done -> cancelled   job cancelled (or its
 *                                time limit reached)
 *     and, for a job that is not active (failed or cancelled), one bulk
 *     move outside that function: its primaries leased|done|failed|
 *     cancelled -> pending when it is requeued (store_job_requeue,
 *     store_lifecycle.c)
 *  4. The schema is created and migrated by numbered migrations compiled in
 *     from schema/ (PRAGMA user_version is the number applied).
 *
 * Threads: a struct store is used by one thread at a time (gpud serialises
 * all store calls on its database thread). Times are seconds since the Unix
 * epoch as doubles, passed in by the caller (clock injected for tests).
 *
 * Ownership: strings in returned structs are malloc'ed and freed by the
 * matching *_clear / *_free function (NULL-safe). String arguments are
 * borrowed. ret_* are written only on success.
 */
#ifndef GPUD_STORE_H
#define GPUD_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "place.h"

struct store;

enum lease_state {
	LEASE_PENDING = 0,
	LEASE_LEASED = 1,
	LEASE_DONE = 2,
	LEASE_VERIFIED = 3,
	LEASE_FAILED = 4,
	LEASE_CANCELLED = 5,
	LEASE_NSTATES = 6,
};
const char *lease_state_name(enum lease_state s);
/* 1 if invariant 3 allows from -> to, else 0 (the table store_leases.c
 * checks on every move; leased -> leased is the in-place update of a held
 * lease). */
int store_lease_move_allowed(enum lease_state from, enum lease_state to);

enum job_state {
	JOB_ACTIVE = 0,
	JOB_PAUSED = 1,
	JOB_DONE = 2,      /* every lease verified and the answer checked */
	JOB_FAILED = 3,    /* a lease failed too often, or finish() failed */
	JOB_CANCELLED = 4,
	JOB_NSTATES = 5,
};
const char *job_state_name(enum job_state s);

struct store_job {
	int64_t id;
	char *workload;
	char *params;       /* JSON text */
	enum job_state state;
	uint64_t total_units;
	char *cursor;       /* JSON text or NULL */
	int carve_done;     /* 1 when the planner has nothing more to lease */
	char *answer;       /* JSON text or NULL */
	uint64_t units_verified;
	double created_at;
	double finished_at; /* 0 when not finished */
	char *reason;       /* why it is failed/paused/not moving, or NULL */
	char *name;         /* the submitter's name for it, or NULL (010) */
	int priority;       /* STORE_PRIORITY_MIN..MAX; higher runs first */
	double started_at;  /* its first grant; 0 before */
	char *owner;        /* who submitted it, or NULL (019) */
	double run_s;       /* seconds it ran in closed spans (020) */
	double run_since;   /* start of the span it runs in; 0: none */
};
/* Seconds job j ran by now: its closed spans and the open one (a span
 * opens at a grant and closes at a pause or the end: 020). */
double store_job_run_seconds(const struct store_job *j, double now);
void store_job_clear(struct store_job *j);

struct store_lease {
	int64_t id;
	int64_t job_id;
	char *spec;         /* JSON text */
	uint64_t units;
	enum lease_state state;
	uint64_t epoch;
	int64_t worker_id;  /* 0 when none */
	double deadline;
	uint32_t attempts;  /* grants so far */
	uint32_t failures;  /* verification failures so far */
	uint64_t units_done;
	char *checkpoint;   /* blob hash or NULL */
	uint64_t checkpoint_units;
	char *result;       /* blob hash or NULL */
	double updated_at;
	char *last_error;   /* or NULL */
};
void store_lease_clear(struct store_lease *l);
void store_lease_free_array(struct store_lease *a, size_t n);

struct store_worker {
	int64_t id;
	char *name;         /* "CREDENTIAL@INSTANCE" (a row from before
			     * migration 012: CREDENTIAL) */
	char *credential;   /* the token it logged in with */
	char *instance;     /* the process, from its HELLO ("" before 012) */
	char *device;
	int online;
	int quarantined;
	uint32_t failures;
	uint32_t foreign_msgs; /* messages about leases never granted to it */
	uint32_t stalls;    /* leases revoked from it for making no progress */
	uint64_t leases_done;
	uint64_t units_done;
	double rate;        /* units/s, last measured */
	double first_seen, last_seen;
	struct place place; /* its latest login's (migration 009) */
	int drained;        /* the operator's: granted nothing (018) */
};
void store_worker_clear(struct store_worker *w);
void store_worker_free_array(struct store_worker *a, size_t n);

/* Open (creating) the database at path and apply migrations. A database
 * that fails PRAGMA quick_check is refused (GERR_CORRUPT, "damaged" in
 * err) before anything, migrations included, writes to it. */
int store_open(const char *path, struct store **ret, char *err, size_t errlen);
void store_close(struct store *st); /* NULL-safe */

/* Explicit transactions (BEGIN IMMEDIATE / COMMIT / ROLLBACK), for several
 * calls that must land together. Not nestable. */
int store_begin(struct store *st);
int store_commit(struct store *st);
void store_rollback(struct store *st);

/* Group commit: one outer transaction around several callers' work, made
 * durable by one store_batch_commit (one fsync). Inside a batch,
 * store_begin/commit/rollback are savepoints (a caller's work commits or
 * rolls back alone, but is durable only when the batch commits) and single
 * writes are savepoints too. store_batch_commit returns 0 only when
 * everything is durable; on failure the whole batch is rolled back. */
int store_batch_begin(struct store *st);
int store_batch_commit(struct store *st);
void store_batch_rollback(struct store *st);

/* Message of the last SQLite error (static per store, valid until next call). */
const char *store_errmsg(struct store *st);

/* ---- jobs ---- */
/* The queue (migration 010): a claim takes the active job with the
 * highest priority, then the oldest (lowest id). */
#define STORE_PRIORITY_MIN (-1000)
#define STORE_PRIORITY_MAX 1000
#define STORE_JOB_NAME_MAX 64   /* 1..64 of [A-Za-z0-9._-] */
/* 1 when name is a valid job name, else 0. */
int store_job_name_valid(const char *name);
int store_job_insert(struct store *st, const char *workload, const char *params,
		     uint64_t total_units, double now, int64_t *ret_id);
int store_job_get(struct store *st, int64_t id, struct store_job *ret);
/* All jobs, ascending id. */
int store_job_list(struct store *st, struct store_job **ret, size_t *ret_n);
void store_job_free_array(struct store_job *a, size_t n);
/* Jobs not finished, and those finished at or after since, ascending id;
 * *ret_hidden (may be NULL) receives how many finished before since. */
int store_job_list_recent(struct store *st, double since,
			  struct store_job **ret, size_t *ret_n,
			  uint64_t *ret_hidden);
/* Finished jobs (done, failed, cancelled) finished at or after since,
 * newest first, at most limit (>= 1). */
int store_job_history(struct store *st, double since, uint32_t limit,
		      struct store_job **ret, size_t *ret_n);
/* history's filters (gpuctl history): all of them hold. */
struct store_history_filter {
	double since;           /* finished at or after (0: any) */
	double until;           /* finished before (0: no bound) */
	int state;              /* JOB_DONE, JOB_FAILED or JOB_CANCELLED; -1: any */
	const char *workload;   /* NULL: any */
	const char *owner;      /* NULL: any */
	uint32_t limit;         /* >= 1 */
};
/* Finished jobs that pass f, newest first (by finished_at), at most
 * f->limit. GERR_INVAL for a bad filter (a negative time, another state,
 * limit 0). */
int store_job_history_filter(struct store *st, const struct store_history_filter *f,
			     struct store_job **ret, size_t *ret_n);
/* Who submitted job id: a credential's name or a Unix user, 1 to
 * STORE_OWNER_MAX bytes; NULL: none. */
#define STORE_OWNER_MAX 64
int store_job_set_owner(struct store *st, int64_t id, const char *owner);
/* name may be NULL (none); GERR_INVAL unless store_job_name_valid. */
int store_job_set_name(struct store *st, int64_t id, const char *name);
/* GERR_INVAL outside STORE_PRIORITY_MIN..MAX. */
int store_job_set_priority(struct store *st, int64_t id, int priority);
/* A grant of the job: sets started_at unless it is set already, and
 * opens a run span (020) unless one is open. */
int store_job_mark_started(struct store *st, int64_t id, double now);
/* What status and history show of a job, from its leases and events. */
struct store_job_stats {
	uint64_t units_saved;     /* verified + done leases' units + the
				   * stored checkpoint units of every other
				   * primary lease: never lost */
	uint64_t units_running;   /* held leases' progress past their
				   * checkpoints (lost if the holder dies) */
	uint64_t attempts;        /* grants of all its leases */
	uint64_t verify_failures; /* results refuted (verification or vote) */
};
int store_job_stats(struct store *st, int64_t job_id,
		    struct store_job_stats *ret);
/* reason may be NULL. Sets finished_at when moving to done/failed/cancelled;
 * closes the job's run span when it leaves active. */
int store_job_set_state(struct store *st, int64_t id, enum job_state state,
			const char *reason, double now);
int store_job_set_reason(struct store *st, int64_t id, const char *reason);
/* New params and total units for a done, active or paused job (gpuctl
 * extend): it becomes active (paused stays paused), carve_done = 0, not
 * finished. GERR_STATE for failed or cancelled jobs. */
int store_job_extend(struct store *st, int64_t id, const char *params,
		     uint64_t total_units);
int store_job_set_cursor(struct store *st, int64_t id, const char *cursor,
			 int carve_done);
int store_job_set_answer(struct store *st, int64_t id, const char *answer,
			 uint64_t units_verified);
/* The first active job in queue order (priority, then age) with
 * carve_done = 0 whose workload is in the JSON array text workloads_json
 * (e.g. ["graveler"]) and whose id is not in the JSON array exclude_json
 * (may be NULL). GERR_NOTFOUND if none. */
int store_job_next_carvable(struct store *st, const char *workloads_json,
			    const char *exclude_json, int64_t *ret_id);

/* ---- leases ---- */
/* Insert a lease already granted to worker_id (state leased, epoch 1,
 * attempts 1). */
int store_lease_insert_leased(struct store *st, int64_t job_id,
			      const char *spec, uint64_t units,
			      int64_t worker_id, double deadline, double now,
			      struct store_lease *ret);
/* Grant a pending lease of an active job whose workload is in
 * workloads_json, of the first such job in queue order (priority, then
 * age), the oldest of its leases: one UPDATE ... RETURNING (state leased,
 * epoch+1, attempts+1, worker, deadline). Never one whose group this worker holds
 * or computed, nor one it failed (store_lease_reject, _run_failed).
 * GERR_NOTFOUND if none. */
int store_lease_claim_pending(struct store *st, int64_t worker_id,
			      const char *workloads_json, double deadline,
			      double now, struct store_lease *ret);
/* A job's place in the queue: higher priority first, then lower id. */
struct store_rank {
	int priority;
	int64_t id;
};
/* As store_lease_claim_pending, only from jobs ranked at or before *upto
 * (NULL: any job), so that a job ahead in the queue with nothing pending
 * yet can carve first (sched_claim). */
int store_lease_claim_ranked(struct store *st, int64_t worker_id,
			     const char *workloads_json,
			     const struct store_rank *upto, double deadline,
			     double now, struct store_lease *ret);
int store_lease_get(struct store *st, int64_t id, struct store_lease *ret);
int store_lease_list_job(struct store *st, int64_t job_id,
			 struct store_lease **ret, size_t *ret_n);
/* Leases in a given state across all jobs (e.g. done leases to verify after
 * a restart). */
int store_lease_list_state(struct store *st, enum lease_state state,
			   struct store_lease **ret, size_t *ret_n);
/* Counts per state for one job's primary leases (replicas apart):
 * counts[LEASE_NSTATES]. */
int store_lease_counts(struct store *st, int64_t job_id,
		       uint64_t counts[LEASE_NSTATES]);
/* A job's progress, live: store_job_stats' units_saved + units_running
 * (replicas never count), its verified part from the job's own count
 * (store_job_set_answer), so that only the leases still moving are read. */
int store_job_units_progress(struct store *st, int64_t job_id,
			     uint64_t *ret_units);

/* leased, same epoch: extend the deadline and record progress. */
int store_lease_heartbeat(struct store *st, int64_t id, uint64_t epoch,
			  uint64_t units_done, double deadline, double now);
/* leased, same epoch: record a new checkpoint. *ret_old_hash (may be NULL)
 * receives the replaced checkpoint's hash (malloc'ed) or NULL, so the caller
 * can delete the file after the commit. */
int store_lease_set_checkpoint(struct store *st, int64_t id, uint64_t epoch,
			       const char *hash, uint64_t units_done,
			       double now, char **ret_old_hash);
/* leased, same epoch -> done with the result blob. */
int store_lease_set_result(struct store *st, int64_t id, uint64_t epoch,
			   const char *hash, uint64_t units_done, double now);
/* done, same epoch -> verified. */
int store_lease_set_verified(struct store *st, int64_t id, uint64_t epoch,
			     double now);
/* done, same epoch -> pending (failures+1) or failed when failures reaches
 * max_failures. The checkpoint is kept; the result reference is cleared;
 * the producer is recorded in lease_failures (never granted it again).
 * *ret_state (may be NULL) receives the new state. */
int store_lease_reject(struct store *st, int64_t id, uint64_t epoch,
		       const char *reason, uint32_t max_failures, double now,
		       enum lease_state *ret_state);
/* verified, same epoch -> pending (failures+1), or failed when failures
 * reaches max_failures: the job's final check blamed it (a workload's
 * blame hook). As store_lease_reject, and its checkpoint dropped (the
 * next run starts afresh). The caller removes its part
 * (store_part_remove) in the same transaction. */
int store_lease_unverify(struct store *st, int64_t id, uint64_t epoch,
			 const char *reason, uint32_t max_failures, double now,
			 enum lease_state *ret_state);
/* leased, same epoch -> pending (worker gives it back). */
int store_lease_release(struct store *st, int64_t id, uint64_t epoch,
			double now);
/* The progress requirement (migration 004): the most units reported under
 * the current grant and when that last grew (0 before the first report). */
int store_lease_progress(struct store *st, int64_t id, uint64_t *ret_units,
			 double *ret_at);
/* leased, same epoch -> pending, taken from its holder (no progress); the
 * reason becomes last_error. */
int store_lease_revoke(struct store *st, int64_t id, uint64_t epoch,
		       const char *reason, double now);
/* leased, same epoch: the holder's run failed. -> pending (failures+1) or
 * failed when failures reaches max_failures, as store_lease_reject; the
 * checkpoint is kept and the holder recorded in lease_failures. *ret_state
 * (may be NULL) receives the new state. */
int store_lease_run_failed(struct store *st, int64_t id, uint64_t epoch,
			   const char *reason, uint32_t max_failures,
			   double now, enum lease_state *ret_state);
/* Number of leases worker_id holds (leased) now. */
int store_lease_held_count(struct store *st, int64_t worker_id,
			   uint64_t *ret_n);
/* Who holds the leased leases of job_id (0: of every active job): one row
 * per worker, most leases first, then by name. */
struct store_holder {
	char *name;
	uint64_t leases;
};
int store_lease_holders(struct store *st, int64_t job_id,
			struct store_holder **ret, size_t *ret_n);
void store_holder_free_array(struct store_holder *a, size_t n);
/* The tail (migration 013): what the decision to take a held lease back
 * reads of its grant at epoch; GERR_STALE when the lease is at another. */
struct store_lease_grant {
	double granted_at;      /* the grant's time (its creation when 0) */
	uint64_t granted_units; /* the progress it resumed from */
	int grouped;            /* a replica, or a primary with replicas */
	uint32_t takeback;      /* pieces marked for at this epoch, or 0 */
};
int store_lease_grant_get(struct store *st, int64_t id, uint64_t epoch,
			  struct store_lease_grant *ret);
/* leased, same epoch: mark it to be cut into pieces when its holder
 * releases this grant (GERR_STALE when not held so). */
int store_lease_mark_takeback(struct store *st, int64_t id, uint64_t epoch,
			      uint32_t pieces);
/* pending, same epoch: its spec and units become a cut's head (not below
 * its checkpoint), its mark cleared; GERR_STALE when not so. */
int store_lease_respec(struct store *st, int64_t id, uint64_t epoch,
		       const char *spec, uint64_t units, double now);
/* A new pending lease of job_id (epoch 0, no attempts): a cut's tail.
 * *ret_id (may be NULL) receives its id. */
int store_lease_insert_pending(struct store *st, int64_t job_id,
			       const char *spec, uint64_t units, double now,
			       int64_t *ret_id);
/* Every leased lease whose deadline < now -> pending. Returns the ids moved
 * (malloc'ed array) so the caller can log them. */
int store_lease_expire(struct store *st, double now, int64_t **ret_ids,
		       size_t *ret_n);
/* All of a job's pending/leased/done leases -> cancelled. */
int store_job_cancel_leases(struct store *st, int64_t job_id, double now);

/* ---- parts: each verified lease's share of its job's answer ---- */
struct store_part {
	int64_t lease_id;
	char *spec;         /* JSON text */
	uint64_t units;
	char *result;       /* result blob hash */
	char *note;         /* JSON text or NULL */
};
void store_part_clear(struct store_part *p);
/* Append the lease (verified, of job_id) as the job's next part, with the
 * workload's note (JSON text or NULL). GERR_STATE if it is a part already. */
int store_part_add(struct store *st, int64_t job_id, int64_t lease_id,
		   const char *note);
/* Remove the lease's part (one the job's final check blamed): the job's
 * last part takes its seq, so seqs stay 0..n-1 (merge order changes only
 * for that one). GERR_NOTFOUND when the lease is no part of job_id. */
int store_part_remove(struct store *st, int64_t job_id, int64_t lease_id);
/* Number of parts of a job. */
int store_part_count(struct store *st, int64_t job_id, uint64_t *ret_n);
/* The job's part number seq (0 first). GERR_NOTFOUND past the end. */
int store_part_get(struct store *st, int64_t job_id, uint64_t seq,
		   struct store_part *ret);

/* ---- what a lease's size is computed from (store_rates.c) ---- */
/* The workers that may take a job's leases: online or seen since a time,
 * not quarantined, and having claimed its workload at least once. */
struct store_fleet {
	uint32_t workers;
	uint32_t known;     /* of which gpud has measured a rate in the job */
	double rate_sum;    /* their rates, units/s */
};
/* A claim from worker_id for the workloads in workloads_json (a JSON array
 * of names): the worker runs them, and is seen at now. */
int store_rate_register(struct store *st, int64_t worker_id,
			const char *workloads_json, double now);
/* A verified rate (units/s) of worker_id in job_id, blended into the one
 * kept with weight in (0, 1] (the first one is kept as it is); the rate
 * that sizes its leases starts again from it. Nonsense (not positive, not
 * finite) is ignored. */
int store_rate_note(struct store *st, int64_t worker_id, int64_t job_id,
		    double rate, double weight, double now);
/* A checkpoint of lease_id at epoch reaching gpud at now with units_done:
 * its rate since the grant may lower worker_id's rate in the lease's job,
 * never raise it above the verified one; nothing before a verified rate
 * (store_rates.c invariant 2). Samples over less than 10 ms are dropped. */
int store_rate_checkpoint(struct store *st, int64_t lease_id, uint64_t epoch,
			  int64_t worker_id, uint64_t units_done, double now);
/* A result of lease_id at epoch reaching gpud at now with units_done: its
 * rate since the grant is kept on the lease, and noted for its producer
 * when the lease is verified (migration 017's trigger). */
int store_rate_result(struct store *st, int64_t lease_id, uint64_t epoch,
		      uint64_t units_done, double now);
/* What progress a holder owes (sched_hold.c): worker_id's verified rate
 * in job_id, and the slowest verified rate of anyone in it; 0 for none. */
int store_rate_expect(struct store *st, int64_t worker_id, int64_t job_id,
		      double *ret_own, double *ret_slowest);
/* The progress requirement's window of a grant: its start (the grant's, or
 * where a heartbeat moved it), the progress then, and the best progress
 * reported under the grant since. GERR_NOTFOUND: no such grant. */
struct store_window {
	double at;
	uint64_t units;
	uint64_t best;
};
int store_lease_window(struct store *st, int64_t lease_id, uint64_t epoch,
		       struct store_window *ret);
int store_lease_window_move(struct store *st, int64_t lease_id,
			    uint64_t epoch, double at, uint64_t units);
/* The worker's rate in job_id; 0 when not measured yet. */
int store_rate_get(struct store *st, int64_t worker_id, int64_t job_id,
		   double *ret_rate);
int store_rate_fleet(struct store *st, const char *workload, int64_t job_id,
		     double seen_since, struct store_fleet *ret);
/* Workers of the fleet (as store_rate_fleet counts it) whose credential
 * is not worker_id's: who could answer a replica of worker_id's lease. */
int store_fleet_others(struct store *st, const char *workload,
		       int64_t worker_id, double seen_since,
		       uint32_t *ret_count);
/* What is left of a job, in units of its primary leases (replicas redo
 * their primary's work). */
struct store_units_left {
	uint64_t total;     /* the job's; 0 when not known in advance */
	uint64_t uncarved;  /* not in any lease yet */
	uint64_t pending;   /* in pending leases, past their checkpoints */
	uint64_t held;      /* in leased ones, past their holders' progress */
};
int store_job_units_left(struct store *st, int64_t job_id,
			 struct store_units_left *ret);
/* At start: leased leases expire no sooner than deadline, and the time
 * gpud was down does not count as a lease's lack of progress (nor in its
 * window), so that
 * workers reconnecting can still report and upload. */
int store_lease_grace(struct store *st, double now, double deadline);

/* ---- workers ---- */
/* A worker is one process: a row per (credential, instance), named
 * "CREDENTIAL@INSTANCE". Find or create it; marks it online. credential
 * is a token name (no '@'); instance passes place_instance_check (or is
 * "": the credential's row from before migration 012). GERR_INVAL
 * otherwise. */
int store_worker_upsert(struct store *st, const char *credential,
			const char *instance, const char *device, double now,
			int64_t *ret_id);
/* Rows last seen in [since, before) (gclock_wall times) that nothing
 * needs: offline, not quarantined, named by no lease and no failure
 * memory, and not the newest row (ids are never reused). Deletes them and
 * their rates; *ret_n (may be NULL) gets how many. gpud calls it at start
 * for every row unseen for STORE_WORKER_KEEP_S, and when a worker goes
 * offline for the day before that (cheap however many rows the leases
 * keep). A process that computed leases keeps its row: it is the leases'
 * producer. */
#define STORE_WORKER_KEEP_S (7.0 * 86400)
int store_worker_prune(struct store *st, double since, double before,
		       uint64_t *ret_n);
/* Leases held now by every worker that shares worker id's credential
 * (itself included): --max-leases-per-credential. */
int store_worker_credential_held(struct store *st, int64_t id,
				 uint64_t *ret_n);
int store_worker_set_online(struct store *st, int64_t id, int online,
			    double now);
/* Where worker id runs, from its latest login (place.h; every field
 * checked again here: GERR_INVAL for one that breaks its rule). */
int store_worker_set_place(struct store *st, int64_t id,
			   const struct place *p);
/* All workers offline (at gpud start). */
int store_worker_all_offline(struct store *st);
/* Record a finished lease (leases_done+1, units_done += units, rate). */
int store_worker_credit(struct store *st, int64_t id, uint64_t units,
			double rate, double now);
/* A failed verification; quarantines at threshold and ends the worker's
 * streak of confirmed results. *ret_quarantined may be NULL. */
int store_worker_fail(struct store *st, int64_t id, uint32_t threshold,
		      int *ret_quarantined);
/* A message about a lease never granted to it (foreign_msgs+1), or a lease
 * revoked from it for making no progress (stalls+1); each quarantines at
 * threshold (0 never) as store_worker_fail does. */
enum store_charge { STORE_CHARGE_FOREIGN, STORE_CHARGE_STALL };
int store_worker_charge(struct store *st, int64_t id, enum store_charge what,
			uint32_t threshold, int *ret_quarantined);
int store_worker_get(struct store *st, int64_t id, struct store_worker *ret);
/* The longest name store_worker_drain / _forgive take. */
#define STORE_WORKER_NAME_MAX 320
/* Drain (drained 1: granted no more leases) or resume (0) the worker
 * named name (CREDENTIAL@INSTANCE), or every row of the credential name
 * (a name without '@'). *ret_n: the rows changed; GERR_NOTFOUND when
 * none is named so. */
int store_worker_drain(struct store *st, const char *name, int drained,
		       uint64_t *ret_n);
/* Out of quarantine, its failures, foreign messages and stalls reset to
 * 0: the worker(s) named as for store_worker_drain. */
int store_worker_forgive(struct store *st, const char *name, uint64_t *ret_n);
/* The rows online or last seen at or after since (0: all), by id. */
int store_worker_list(struct store *st, double since,
		      struct store_worker **ret, size_t *ret_n);

/* ---- tokens: credentials by their Ed25519 public keys (store_tokens.c) */
/* GERR_STATE if the name (with a key) or the key is taken; a name whose
 * row is of the old kind (no key) takes this one. */
int store_token_add(struct store *st, const char *name, const uint8_t pk[32],
		    enum auth_role role, double now);
/* A live token's key (*ret_has_key 0: the old kind, none) and role;
 * GERR_NOTFOUND if absent or revoked; ret_role may be NULL. */
int store_token_get(struct store *st, const char *name, uint8_t ret_pk[32],
		    int *ret_has_key, enum auth_role *ret_role);
/* The live token whose key is pk: its name and role, or GERR_NOTFOUND. */
int store_token_by_key(struct store *st, const uint8_t pk[32],
		       char ret_name[AUTH_NAME_MAX + 1],
		       enum auth_role *ret_role);
int store_token_revoke(struct store *st, const char *name);
/* A live token's new key (gpud's own local credential, made again when
 * its file is gone); GERR_NOTFOUND if absent or revoked, GERR_STATE if
 * another token has the key. */
int store_token_rekey(struct store *st, const char *name, const uint8_t pk[32],
		      double now);
struct store_token {
	char *name;
	double created_at;
	int revoked;
	enum auth_role role;
	int old_kind;       /* no public key: from before TLS, refused */
};
/* All tokens (names and dates only; keys never leave the store). */
int store_token_list(struct store *st, struct store_token **ret, size_t *ret_n);
void store_token_free_array(struct store_token *a, size_t n);

/* ---- the status page's keys (store_pagekeys.c): hashes only ---- */
#define STORE_PAGEKEY_HASH 32
/* A key's hash, made with the role owner ("viewer" or "admin") by
 * made_by (who asked: 1..STORE_OWNER_MAX bytes, or NULL), valid until
 * expires_at (> now); expired keys are pruned first. */
int store_pagekey_add(struct store *st, const uint8_t hash[STORE_PAGEKEY_HASH],
		      const char *owner, const char *made_by, double now,
		      double expires_at);
/* GERR_NOTFOUND (no message) unless the key is stored and not expired at
 * now; *ret_expires_at (may be NULL): when it ends. */
int store_pagekey_find(struct store *st, const uint8_t hash[STORE_PAGEKEY_HASH],
		       double now, double *ret_expires_at);
/* Delete owner's keys (NULL: every key); *ret_n (may be NULL): how many. */
int store_pagekey_revoke(struct store *st, const char *owner, int64_t *ret_n);
/* Keys not expired at now. */
int store_pagekey_count(struct store *st, double now, int64_t *ret_n);

/* ---- blobs the rows name, integrity, damage (store_blobs.c) ---- */
struct store_blob_ref {
	char hash[65];      /* a column's value may be no hash (check says so) */
	int64_t job_id;
	int64_t lease_id;   /* 0 when a job's own row names it */
	const char *where;  /* static text, e.g. "result of lease" */
};
/* Every place a row names a blob, sorted by hash: leases.result and
 * leases.checkpoint, and every JSON string of 64 lowercase hex digits in
 * jobs.params (inputs), jobs.answer, leases.spec (Officers names earlier
 * results so) and parts.note. With everywhere (the start-up sweep, which
 * removes every blob this does not name), also every text value of 64 hex
 * digits, whole or inside JSON, in any table but the event log (job_id 0,
 * where "a row"). A table that comes to hold blob hashes belongs in the
 * first list. *ret is malloc'ed (free()). */
int store_blob_refs(struct store *st, int everywhere,
		    struct store_blob_ref **ret, size_t *ret_n);
/* PRAGMA quick_check (quick) or integrity_check: the problems SQLite
 * reports, at most max (1..100000); none (*ret_n == 0) when sound. Free
 * with store_lines_free. */
int store_integrity(struct store *st, int quick, size_t max,
		    char ***ret_lines, size_t *ret_n);
void store_lines_free(char **lines, size_t n); /* NULL-safe */
/* A job whose stored results are damaged, as `gpuctl check` found it. */
struct store_damage {
	int64_t job_id;
	const char *reason; /* borrowed */
	uint32_t problems;  /* >= 1 */
};
/* Replace every job's damage mark with these (one write: jobs not listed
 * are marked sound). */
int store_damage_set(struct store *st, const struct store_damage *a,
		     size_t n, double now);
/* *ret_reason: the job's damage (malloc'ed), or NULL when it has none. */
int store_damage_get(struct store *st, int64_t job_id, char **ret_reason);
/* Digests (migration 015): a stored answer or part whose values no longer
 * match the digest written with them. seq is -1 for a job's answer (lease
 * 0), else the part's number and its lease. */
struct store_digest_bad {
	int64_t job_id;
	int64_t lease_id;
	int64_t seq;
};
/* Every job and part recomputed: the damaged ones in *ret (malloc'ed,
 * free(); at most max, 1..1000000, answers first, then parts by job and
 * seq), their number in *ret_n; *ret_total (may be NULL) counts them all.
 * Reads every job and part row once. */
int store_digest_audit(struct store *st, size_t max,
		       struct store_digest_bad **ret, size_t *ret_n,
		       uint64_t *ret_total);
/* 0 when job id's answer, params and verified units match their digest;
 * GERR_CORRUPT (the message names the job and says what to do) when not.
 * store_job_set_answer and store_job_extend check it before they write;
 * store_part_get checks each part's. */
int store_job_digest_check(struct store *st, int64_t id);

/* ---- a copy of the live database (store_backup.c) ----
 * Copy the database at src_path, as one commit left it, into the new file
 * dst_path (mode 0600; an existing file is refused) with SQLite's online
 * backup API, read from a connection of its own inside one read
 * transaction: writers elsewhere go on (WAL) and cannot make the copy
 * start over. Needs no struct store; any thread. On failure dst_path may
 * be left half written (the caller removes it); err says what failed. */
int store_snapshot(const char *src_path, const char *dst_path, char *err,
		   size_t errlen);

/* ---- replication (store_replica.c; the moves in store_leases.c) ----
 * A group: a primary lease (replica_of NULL) and its replicas, which copy
 * its job, spec and units. Only the primary is ever a part or counts
 * toward the job (units, progress, lease counts); a replica ends verified
 * (agreed), failed (outvoted) or cancelled (not needed). */
struct store_instance {
	struct store_lease l;
	int64_t replica_of;     /* 0 for the primary */
	int checked;            /* done, passed verification, awaits a quorum */
};
void store_instance_free_array(struct store_instance *a, size_t n);
/* The job's check mode: 1 = every lease replicated (--check full). */
int store_job_set_replicate(struct store *st, int64_t id, int on);
int store_job_get_replicate(struct store *st, int64_t id, int *ret);
/* A lease's group (its primary's id, or 0 when it is one) and checked. */
int store_lease_replica_of(struct store *st, int64_t id,
			   int64_t *ret_replica_of, int *ret_checked);
/* Every lease of the group of primary, ascending id (the primary first). */
int store_lease_group(struct store *st, int64_t primary,
		      struct store_instance **ret, size_t *ret_n);
/* A new pending replica of primary (which must be one). */
int store_lease_insert_replica(struct store *st, int64_t primary, double now,
			       int64_t *ret_id);
/* Counts per state of a job's replicas. */
int store_replica_counts(struct store *st, int64_t job_id,
			 uint64_t counts[LEASE_NSTATES]);
/* A job's pending leases that some worker may not claim: they need a
 * worker other than one named in their group (held or computed another of
 * its leases), or other than one that failed them (lease_failures). */
int store_replica_waiting(struct store *st, int64_t job_id, uint64_t *ret_n);
/* Of those, the ones some worker failed (store_lease_reject, _run_failed). */
int store_lease_failed_waiting(struct store *st, int64_t job_id,
			       uint64_t *ret_n);
/* done, same epoch: checked = 1 (passed; waits for agreement). */
int store_lease_set_checked(struct store *st, int64_t id, uint64_t epoch,
			    double now);
/* done, same epoch: take another result of the group (the agreeing one)
 * and its producer, in place of one that was outvoted. */
int store_lease_adopt(struct store *st, int64_t id, uint64_t epoch,
		      const char *hash, int64_t worker_id, double now);
/* done, same epoch -> failed: a replica outvoted by its group. */
int store_lease_refute(struct store *st, int64_t id, uint64_t epoch,
		       const char *reason, double now);
/* done, same epoch -> pending, unchecked, without result or holder: a
 * result that could not be read to be compared is computed again (no
 * failure counted). */
int store_lease_recompute(struct store *st, int64_t id, uint64_t epoch,
			  const char *reason, double now);
/* The group's replicas still pending, leased or done but not checked ->
 * cancelled (the group is decided). */
int store_group_cancel(struct store *st, int64_t primary, double now);
/* A group's verdict, decided by the scheduler on the rows of
 * store_lease_group (sched/replica.c) and applied in one call. */
enum store_replica_move {
	STORE_REPLICA_KEEP,      /* left as it is */
	STORE_REPLICA_RECOMPUTE, /* unreadable: store_lease_recompute */
	STORE_REPLICA_CONFIRM,   /* agrees: its worker confirmed; a replica
				  * verified and credited its units */
	STORE_REPLICA_REFUTE,    /* outvoted: its worker charged; a replica
				  * refuted */
};
enum store_replica_end {
	STORE_REPLICA_OPEN,      /* no more now (waits, or verify again) */
	STORE_REPLICA_QUORUM,    /* decided: confirm, refute, cancel the rest */
	STORE_REPLICA_MORE,      /* a further replica */
	STORE_REPLICA_FAILED,    /* no quorum: the job fails */
};
struct store_replica_verdict {
	int64_t primary;                 /* the group */
	uint64_t primary_epoch;
	const struct store_lease *self;  /* borrowed: the lease verified */
	int set_checked;                 /* self passed for the first time */
	const struct store_instance *member; /* borrowed: the group's rows */
	const unsigned char *move;       /* borrowed: enum store_replica_move
					  * per member */
	size_t nmember;
	enum store_replica_end end;
	size_t nwin;        /* QUORUM: results that agree */
	int adopt;          /* QUORUM: the primary takes self's result */
	size_t nchecked;    /* MORE: checked results (they disagree) */
	size_t nresults;    /* FAILED: results of the group */
	uint32_t quarantine_after;
};
/* Apply v inside the caller's transaction, in this order: self checked;
 * each RECOMPUTE; then by v->end: QUORUM: each CONFIRM and REFUTE member
 * in turn (worker, lease, event "confirmed" / "refuted"), the primary's
 * adoption, store_group_cancel and the primary's row in *ret_primary
 * (left untouched otherwise); MORE: a new replica, the job's reason when
 * results disagree, event "replica"; FAILED: the job failed, event
 * "no_quorum". CONFIRM and REFUTE apply only with QUORUM. On an error the
 * caller rolls back. Nothing of v is kept. */
int store_replica_apply(struct store *st,
			const struct store_replica_verdict *v, double now,
			struct store_lease *ret_primary);
/* A result of the worker's confirmed by another worker's: streak + 1
 * (store_worker_fail resets it to 0). */
int store_worker_confirm(struct store *st, int64_t id);
int store_worker_streak(struct store *st, int64_t id, uint32_t *ret_streak,
			uint64_t *ret_confirmed);

/* Lifecycles (requeue, --after, time limits, jobs' ends): store_lifecycle.h. */

/* ---- event log ---- */
int store_event(struct store *st, double now, int64_t job_id, int64_t lease_id,
		uint64_t epoch, int64_t worker_id, const char *kind,
		const char *detail);
/* Count events of a kind (for tests and status). */
int store_event_count(struct store *st, const char *kind, int64_t job_id,
		      uint64_t *ret_n);

#endif
