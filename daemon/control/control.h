/* control.h - gpuctl's control API, served on gpud's Unix socket (with
 * an admin's rights) and to remote gpuctl over the secure channel (with
 * its token's role: a viewer may ping, status, history, events, result,
 * export, workers and workloads; an admin everything).
 *
 * The command table (common/ctlcmd.h) holds each command's name, role,
 * request fields and reply fields with their types and bounds; every
 * request is checked against it before anything runs, and every reply is
 * built from its struct through it (common/ctlreply.c has the replies'
 * tables and their rows: job, worker, token, problem, workload), so gpuctl
 * reads what gpud writes through the same tables. Below, the shapes of
 * the requests and of their replies, as those tables write them.
 *
 * Transport: proto.h frames, CTL_REQ from gpuctl, one CTL_REPLY back; the
 * connection may carry several requests. Every reply has "ok"; on failure
 * "error" is a one-line message meant for the user.
 *
 *   {"cmd":"submit","workload":W,"args":{k:"v",..}[,"name":N]
 *    [,"priority":P]}  -> {"job":id}
 *       with an input file as the frame's bin when args has "file"; N is
 *       1..64 of [A-Za-z0-9._-], P -1000..1000 (default 0, higher first)
 *   {"cmd":"status"[,"job":id][,"all":true]} -> {"jobs":[JOB..],"hidden":n}
 *       without "all" (or "job"), jobs finished over 24 h ago are left
 *       out (n of them). JOB =
 *       {"id","name" (or null),"workload","unit_name","state" (queued,
 *        running: a lease held, paused, done, failed, cancelled),
 *        "priority","params","total_units",
 *        "units_done" (never goes back: verified and done leases' units +
 *        every other lease's stored checkpoint),"units_running" (held
 *        leases' progress past their checkpoints),"units_verified",
 *        "rate" (units/s, recent),"eta_s" (or null),"leases":{"pending":n,
 *        "leased":n,"done":n,"verified":n,"failed":n,"cancelled":n},
 *        "workers":[names],
 *        "reason" (or null; a queued job always has one: "no eligible
 *        worker (..)", "behind job N", "verifying results", waiting for
 *        another worker..; a paused one "held: .."; a running one while a
 *        worker waits "every lease is held: alice holds 3, bob holds 1"),
 *        "damaged" (what gpuctl check found wrong with its stored
 *        results, or null),"submitted_at" (= "created_at"),"started_at"
 *        (first grant, or null),"finished_at" (or null),"elapsed_s",
 *        "avg_rate" (units_done / elapsed_s),"attempts" (grants),
 *        "verify_failures" (results refuted)}
 *   {"cmd":"history"[,"all":true][,"limit":n][,"since":T][,"until":T]
 *    [,"state":S][,"workload":W][,"user":U]} -> {"jobs":[JOB..]}:
 *       finished jobs, newest first; without "all" or "since" the last
 *       30 days; T in Unix seconds (finished at or after since, before
 *       until), S done, failed or cancelled, U an owner; the filters
 *       hold together, in the store's query
 *   JOB's "owner" (status and history): who submitted it, the remote
 *       gpuctl's credential or the local Unix user ("uid N" without a
 *       name), null for jobs from before owners; status's "user":U
 *       shows only U's jobs
 *   {"cmd":"priority","job":id,"priority":P} -> {"job":id,"priority":P}
 *   {"cmd":"result","job":id} -> {"job":id,"state":S,"answer_bytes":n,
 *        "text":"..."|null,"files":[paths of a done job's plot in the
 *        results directory (results.h)],"exports":[names]}, bin = the
 *        answer as compact JSON (n bytes; none before the first merge)
 *   {"cmd":"cancel"|"pause"|"resume","job":id} -> {"job":id,"state":S}
 *   {"cmd":"workers"} -> {"workers":[{"id","name","device","online",
 *        "quarantined","failures","foreign_msgs" (messages about leases
 *        it was not granted),"stalls" (leases revoked from it for no
 *        progress),"leases_done","units_done","rate" (in
 *        job_unit),"last_seen","lease" (id or null),"job" (id or null),
 *        "job_unit" (or null),"threads" (from its HELLO, or null),"host",..}]}
 *   {"cmd":"token_add","name":N,"public_key":hex[,"role":"worker|viewer|
 *       admin"]} -> {"token":N,"role","gpud_key":hex} (gpuctl made the
 *       key pair and writes the credential file, auth.h; gpud keeps the
 *       public key)
 *   {"cmd":"token_list"} -> {"tokens":[{"name","created_at","revoked",
 *       "role"}]}
 *   {"cmd":"token_revoke","name":N} -> {"revoked":N}; its workers are
 *       disconnected at once and refused from then on
 *   {"cmd":"extend","job":id,"args":{..}} -> {"job","state","total_units"}
 *   {"cmd":"export","job":id,"what":W,"args":{..}} -> {"bytes":n}, bin =
 *       the workload's bulk output (e.g. values, scored positions, Sudoku
 *       counts as CSV); what "plot": the job's plot (SVG) from its answer
 *       so far, for every workload with a plot
 *   {"cmd":"check"} -> {"damaged":bool,"database":[SQLite's integrity
 *        problems],"references":n,"blobs_checked":n,"problems":[{"job",
 *        "lease" (or null),"where","hash","problem"}] (the first 1000),
 *        "problems_total":n,"damaged_jobs":[ids]};
 *        marks (and unmarks) jobs' "damaged"
 *   {"cmd":"backup","dir":ABSOLUTE_PATH[,"copy":true]} -> {"path",
 *        "bytes","database_bytes","database_blake2b","blobs","blob_bytes",
 *        "linked","copied" (blobs hard-linked or copied),"files" (identity
 *        files),"leases_released" (granted at the snapshot, pending in the
 *        copy),"snapshots","seconds","verified":bool,"database":[the
 *        copy's integrity problems],"problems":[as check's],
 *        "problems_total"}; DIR must not exist or be empty (backup.h)
 *   {"cmd":"workloads"} -> {"workloads":[{"name","unit_name",
 *        "description","params":[{"name","type","default" (or null),
 *        "help"}],"exports":[{"name","help"}],"extend":bool}]}
 *   {"cmd":"events","job":id[,"since":T][,"after":E][,"limit":n]} ->
 *       {"job":id,"state":S (the store's: active, paused, done, ..),
 *        "events":[{"id","ts","kind","detail" (or null),"lease" (or
 *        null),"epoch","worker" (its name, or null)}],"last_event":E,
 *        "left_out":k}: the job's events and its leases' (an expiry
 *       names only its lease), oldest first: the newest n (default 1000,
 *       at most 100000) with ts >= T and id > E (gpuctl events --follow
 *       asks again after the last one), less the k oldest of them when
 *       all would not fit in one reply frame; a viewer's, as history
 *   {"cmd":"ping"} -> {"version":V}
 *   submit's lifecycle fields (control_lifecycle.c): [,"after":id]: the
 *       job is granted nothing until job id (an existing, earlier job) is
 *       done, and fails when it fails or is cancelled; [,"time_limit":s]
 *       (1..31622400): it fails, its leases revoked, once it has run s
 *       seconds. A JOB of status and history then has "after_job",
 *       "time_limit_s" and "ran_s" (left out when 0), and a queued one
 *       waiting the reason "after job N (running)".
 *   {"cmd":"requeue","job":id} (admin) -> {"job":id,"state":"queued",
 *       "requeued":n}: a failed or cancelled job back to the queue, every
 *       verified lease kept, its n other leases pending again (refused,
 *       with the reason, for a done, active or paused job, one whose
 *       "after" job is failed or cancelled, one with every lease verified)
 */
#ifndef GPUD_CONTROL_H
#define GPUD_CONTROL_H

#include <jansson.h>

#include "auth.h"

struct gpud;

/* Loop thread. Handle one request; calls done(reply) exactly once, maybe
 * later (after database work), on the loop thread. reply is a new
 * reference handed to done. req: ownership is taken. bin (an input file
 * for submit, may be NULL) is copied. */
typedef void (*control_done_fn)(void *opaque, json_t *reply, void *bin,
				size_t bin_len); /* bin: ownership passes */
void control_handle(struct gpud *d, enum auth_role role, json_t *req,
		    const void *bin, size_t bin_len, control_done_fn done,
		    void *opaque);
/* The same from caller: the credential's name of a remote gpuctl, the
 * Unix user of a local one (peer_user.h), NULL when not known (the page).
 * A job it submits is caller's (its "owner"); a page link it makes is
 * recorded as made by caller. Copied: no reference is kept. */
void control_handle_by(struct gpud *d, enum auth_role role, const char *caller,
		       json_t *req, const void *bin, size_t bin_len,
		       control_done_fn done, void *opaque);

#endif
