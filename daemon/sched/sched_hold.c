/* sched_hold.c - what a worker does with a lease it holds: heartbeat,
 * checkpoint or result upload (its load step), release; database thread.
 *
 * Invariants
 *  1. Every message about a lease is acted on only when its sender holds
 *     the grant (lease_held): the lease is leased, at the message's epoch,
 *     to the sender's worker id. A worker that reconnects with the same
 *     token has the same id, so it keeps its lease.
 *  2. Every refusal for not holding the lease gives the sender the same
 *     reply (SCHED_NOT_HELD, or "stop" to a heartbeat), whatever the lease's
 *     real state: the reply tells nothing about other workers' leases. Only
 *     the log and the event say why.
 *  3. A sender naming a grant that was never its own is charged
 *     (foreign_msgs); ordinary staleness (its lease expired or was
 *     re-issued since) is not.
 *  4. No report over the lease's units is recorded (heartbeat, checkpoint,
 *     result): progress shown is bounded by the lease size.
 *  5. With a progress timeout T, a held lease is a stall when its reported
 *     progress has not grown for T, or when over a window of T (from its
 *     grant, then from each heartbeat that closed a window) it grew by less
 *     than PROGRESS_FRACTION of what its holder's verified rate in the job
 *     predicts (a holder not verified in the job yet: the job's slowest
 *     verified rate over UNMEASURED_SLACK; nobody verified: growth only),
 *     never more than is left of the lease. A stall goes back to pending
 *     at its last checkpoint, and its holder is charged with it. A trickle
 *     (a unit per heartbeat) is a stall; a liar who reports progress it
 *     did not make holds a lease at most 1 / PROGRESS_FRACTION times as
 *     long as its verified rate needs, and its result is verified.
 *  6. A release that carries an error is a failure of the lease, counted
 *     with failed verifications against max_failures: the lease, then its
 *     job, fails with a reason naming the lease and the last error;
 *     unless a blob of gpud's that the lease's job names (params' input,
 *     a spec's earlier result) is damaged or missing in gpud's own store:
 *     then the failure is gpud's, nobody is charged (the lease goes back
 *     as released, its worker may take it again), and the job is paused
 *     with a reason naming the blob, until the operator restores it.
 *  7. The tail: a lease is cut only at a plain release of the very grant
 *     that was marked (takeback_epoch), in the transaction that puts it
 *     back to pending, so its checkpoint and every unit stay with one of
 *     the pieces: the head keeps the lease and its checkpoint, the pieces
 *     add up to its units, and the job's cursor is untouched. A grant that
 *     expires, is revoked or finishes leaves a mark no later grant
 *     matches.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "blob.h"
#include "clock.h"
#include "gerr.h"
#include "scheduler.h"

/* The tail: a grant's rate is read over at least this long. */
#define TAKEBACK_MIN_S 1.0
/* The most pieces one cut makes. */
#define TAKEBACK_MAX_PIECES 64
/* Invariant 5: the share of the progress a holder's verified rate predicts
 * that it must show per window; a rate measured over whole leases (fetch,
 * upload and all) is below the rate of the run itself, so an honest worker
 * slowed tenfold still passes. */
#define PROGRESS_FRACTION 0.1
/* Invariant 5: a holder not verified in the job yet owes the job's slowest
 * verified rate over this: a CPU thread beside a GPU measured alone runs
 * at about 1e-4 of it (bench/graveler.md: 2.5e7 and 2.3e11 battles/s), so
 * the floor (1e-5 of the GPU with PROGRESS_FRACTION) lets it through ten
 * times over while a trickle of a unit per heartbeat is a stall. */
#define UNMEASURED_SLACK 1e4

/* Invariants 1 and 3: 0 with the lease's row in *l when worker_id holds
 * (lease_id, epoch), else GERR_STALE (or a store error) with why for the
 * log and *foreign set when that grant was never the sender's. */
static int lease_held(struct store *st, int64_t lease_id, uint64_t epoch,
		      int64_t worker_id, struct store_lease *l, int *foreign,
		      char *why, size_t whylen)
{
	int rc = store_lease_get(st, lease_id, l);

	*foreign = 0;
	if (rc == GERR_NOTFOUND) {
		*foreign = 1;
		snprintf(why, whylen, "no lease %" PRId64, lease_id);
		return GERR_STALE;
	}
	if (rc)
		return rc;
	if (epoch > l->epoch) {
		*foreign = 1;
		snprintf(why, whylen, "lease %" PRId64 " was never granted at "
			 "epoch %" PRIu64 " (it is at %" PRIu64 ")", lease_id,
			 epoch, l->epoch);
	} else if (epoch == l->epoch && l->worker_id &&
		   l->worker_id != worker_id) {
		*foreign = 1;
		snprintf(why, whylen, "lease %" PRId64 " epoch %" PRIu64
			 " was granted to worker id %" PRId64, lease_id, epoch,
			 l->worker_id);
	} else if (l->state != LEASE_LEASED || epoch != l->epoch ||
		   l->worker_id != worker_id) {
		snprintf(why, whylen, "lease %" PRId64 " is %s at epoch %" PRIu64
			 ", the message is for epoch %" PRIu64, lease_id,
			 lease_state_name(l->state), l->epoch, epoch);
	} else {
		return 0;
	}
	store_lease_clear(l);
	return GERR_STALE;
}

/* Invariant 3: charge the sender, with an event naming the message. A
 * failure here changes nothing for the reply (invariant 2). */
static void charge_foreign(struct store *st, const struct sched_policy *pol,
			   int64_t worker_id, int64_t lease_id, uint64_t epoch,
			   const char *what, int *ret_quarantined)
{
	double now = gclock_wall();
	int rc = store_begin(st);

	if (rc)
		return;
	rc = store_worker_charge(st, worker_id, STORE_CHARGE_FOREIGN,
				 pol->quarantine_after, ret_quarantined);
	if (!rc)
		rc = store_event(st, now, 0, lease_id, epoch, worker_id,
				 "foreign", what);
	if (!rc)
		rc = store_commit(st);
	else
		store_rollback(st);
}

/* Invariant 4. */
static int units_over(uint64_t units_done, const struct store_lease *l,
		      char *err, size_t errlen)
{
	if (units_done <= l->units)
		return 0;
	snprintf(err, errlen, "units_done %" PRIu64 " is more than the "
		 "lease's %" PRIu64 " units", units_done, l->units);
	return GERR_INVAL;
}

/* ---- heartbeat ---- */

/* Invariant 5: take l back from its holder, charged with a stall for
 * h->why. Returns 0 (h->revoked set) or a store error. */
static int stall(struct store *st, struct sched_heartbeat *h,
		 const struct store_lease *l, double now)
{
	int rc = store_begin(st);

	if (rc)
		return rc;
	rc = store_lease_revoke(st, l->id, l->epoch, h->why, now);
	if (!rc)
		rc = store_worker_charge(st, h->worker_id, STORE_CHARGE_STALL,
					 h->pol->quarantine_after,
					 &h->quarantined);
	if (!rc)
		rc = store_event(st, now, l->job_id, l->id, l->epoch,
				 h->worker_id, "revoked", h->why);
	if (!rc)
		rc = store_commit(st);
	else
		store_rollback(st);
	if (!rc) {
		h->revoked = 1;
		h->action = MSG_HB_STOP;
	}
	return rc;
}

/* Invariant 5, the window: 0 with *ret_owed the units l's holder owed
 * since the window's start w->at (never more than is left of l), *ret_rate
 * the rate they were owed at (0: none known) and *ret_own whether it is
 * the holder's own verified rate. */
static int progress_owed(struct store *st, const struct sched_heartbeat *h,
			 const struct store_lease *l,
			 const struct store_window *w, double now,
			 double *ret_owed, double *ret_rate, int *ret_own)
{
	double own = 0, slowest = 0, left;
	int rc = store_rate_expect(st, h->worker_id, l->job_id, &own, &slowest);

	if (rc)
		return rc;
	*ret_own = own > 0;
	*ret_rate = own > 0 ? own : slowest / UNMEASURED_SLACK;
	*ret_owed = PROGRESS_FRACTION * *ret_rate * (now - w->at);
	left = l->units > w->units ? (double)(l->units - w->units) : 0;
	if (*ret_owed > left)
		*ret_owed = left;
	return 0;
}

/* Invariant 5: revoke l when its progress has not grown for the timeout,
 * or grew over the window by less than it owed; else close the window
 * when it is over. Returns 0 (h->revoked says whether it was) or a store
 * error. */
static int check_progress(struct store *st, struct sched_heartbeat *h,
			  const struct store_lease *l, double now)
{
	double T = h->pol->progress_timeout_s, owed = 0, rate = 0;
	struct store_window w = {0};
	uint64_t best = 0, made;
	double at = 0;
	int own = 0;
	int rc = store_lease_progress(st, l->id, &best, &at);

	if (rc)
		return rc;
	/* at == 0: no report yet under this grant (the clock starts now). */
	if (at != 0 && h->units_done <= best && now - at >= T) {
		snprintf(h->why, sizeof(h->why), "no progress for %.0f s "
			 "(--progress-timeout %.0f): %" PRIu64 " of %" PRIu64
			 " units", now - at, T, best, l->units);
		return stall(st, h, l, now);
	}
	rc = store_lease_window(st, l->id, l->epoch, &w);
	if (rc || now - w.at < T)
		return rc == GERR_NOTFOUND ? 0 : rc;
	if (h->units_done > w.best)
		w.best = h->units_done;
	made = w.best > w.units ? w.best - w.units : 0;
	rc = progress_owed(st, h, l, &w, now, &owed, &rate, &own);
	if (rc)
		return rc;
	if (made == 0 && owed > 0) {
		snprintf(h->why, sizeof(h->why), "no progress for %.0f s "
			 "(--progress-timeout %.0f): %" PRIu64 " of %" PRIu64
			 " units", now - w.at, T, w.best, l->units);
		return stall(st, h, l, now);
	}
	if ((double)made + 0.5 < owed) {
		char basis[96];

		if (own)
			snprintf(basis, sizeof(basis), "its verified rate in "
				 "the job");
		else
			snprintf(basis, sizeof(basis), "not verified in the "
				 "job: its slowest verified rate / %g",
				 UNMEASURED_SLACK);
		snprintf(h->why, sizeof(h->why), "too little progress: %" PRIu64
			 " units in %.0f s, %.0f owed at %g of %.4g units/s "
			 "(%s; --progress-timeout %.0f)", made, now - w.at,
			 owed, PROGRESS_FRACTION, rate, basis, T);
		return stall(st, h, l, now);
	}
	return store_lease_window_move(st, l->id, l->epoch, now, w.best);
}

/* A workload's place in the registry (the idle counts' index), or -1. */
static int workload_index(const char *name)
{
	const struct workload *const *all = workload_all();

	for (int i = 0; all[i] && i < SCHED_WL_MAX; i++)
		if (strcmp(all[i]->name, name) == 0)
			return i;
	return -1;
}

/* The tail (struct sched_heartbeat): mark l to be cut when worth it, and
 * ask its holder for it back. Returns 0 or a store error; a lease that is
 * left alone is no error. */
static int takeback_decide(struct store *st, struct sched_heartbeat *h,
			   const struct store_lease *l, const char *workload,
			   double now)
{
	const struct workload *wl = workload_find(workload);
	int wi = workload_index(workload), replicate = 0, rc;
	struct store_lease_grant g;
	double rate, left_s, span;
	uint64_t pieces, fit;

	if (!wl || !wl->split || wi < 0)
		return 0;
	rc = store_lease_grant_get(st, l->id, l->epoch, &g);
	if (rc)
		return rc;
	if (g.takeback >= 2) { /* marked already: still wanted back */
		h->takeback = g.takeback;
		h->action = MSG_HB_GIVE_BACK;
		return 0;
	}
	if (g.grouped || h->idle[wi] == 0 || h->pol->lease_min_s <= 0 ||
	    h->units_done >= l->units)
		return 0;
	rc = store_job_get_replicate(st, l->job_id, &replicate);
	if (rc || replicate)
		return rc;
	span = now - g.granted_at;
	if (span < TAKEBACK_MIN_S || h->units_done <= g.granted_units)
		return 0;
	rate = (double)(h->units_done - g.granted_units) / span;
	left_s = (double)(l->units - h->units_done) / rate;
	if (left_s <= 2 * h->pol->lease_min_s)
		return 0;
	pieces = (uint64_t)h->idle[wi] + 1;
	fit = (uint64_t)(left_s / h->pol->lease_min_s);
	if (pieces > fit)
		pieces = fit;
	if (pieces > TAKEBACK_MAX_PIECES)
		pieces = TAKEBACK_MAX_PIECES;
	rc = store_lease_mark_takeback(st, l->id, l->epoch, (uint32_t)pieces);
	if (rc)
		return rc;
	h->takeback = (uint32_t)pieces;
	h->action = MSG_HB_GIVE_BACK;
	snprintf(h->why, sizeof(h->why), "%" PRIu64 " units left, %.0f s at "
		 "%.0f units/s; %u idle", l->units - h->units_done, left_s,
		 rate, h->idle[wi]);
	return 0;
}

void sched_heartbeat(struct store *st, struct sched_heartbeat *h)
{
	double now = gclock_wall();
	struct store_lease l = {0};
	struct store_job job = {0};

	h->action = MSG_HB_CONTINUE;
	h->foreign = h->revoked = h->quarantined = 0;
	h->takeback = 0;
	h->err[0] = h->why[0] = '\0';
	h->rc = lease_held(st, h->lease_id, h->epoch, h->worker_id, &l,
			   &h->foreign, h->why, sizeof(h->why));
	if (h->rc == GERR_STALE) {
		h->action = MSG_HB_STOP;
		if (h->foreign)
			charge_foreign(st, h->pol, h->worker_id, h->lease_id,
				       h->epoch, "heartbeat", &h->quarantined);
		return;
	}
	if (h->rc)
		return;
	h->rc = units_over(h->units_done, &l, h->err, sizeof(h->err));
	if (!h->rc && h->pol->progress_timeout_s > 0)
		h->rc = check_progress(st, h, &l, now);
	if (h->rc || h->revoked)
		goto out;
	h->rc = store_lease_heartbeat(st, h->lease_id, h->epoch, h->units_done,
				      now + h->pol->lease_timeout_s, now);
	if (h->rc)
		goto out;
	if (store_job_get(st, l.job_id, &job) == 0) {
		if (job.state == JOB_PAUSED)
			h->action = MSG_HB_RELEASE;
		else if (job.state != JOB_ACTIVE)
			h->action = MSG_HB_STOP;
		else if (takeback_decide(st, h, &l, job.workload, now))
			h->takeback = 0; /* the lease stays whole */
	}
	store_job_clear(&job);
out:
	store_lease_clear(&l);
}

uint64_t sched_job_progress(struct store *st, int64_t job_id)
{
	uint64_t u = 0;

	if (store_job_units_progress(st, job_id, &u) != 0)
		return 0;
	return u;
}

/* ---- uploads: the load step ---- */

void sched_upload_load(struct store *st, struct sched_upload *u)
{
	struct store_lease l = {0};
	struct store_job job = {0};

	u->foreign = u->quarantined = 0;
	u->why[0] = '\0';
	u->rc = lease_held(st, u->lease_id, u->epoch, u->worker_id, &l,
			   &u->foreign, u->why, sizeof(u->why));
	if (u->rc == GERR_STALE) {
		snprintf(u->err, sizeof(u->err), "%s", SCHED_NOT_HELD);
		if (u->foreign)
			charge_foreign(st, u->pol, u->worker_id, u->lease_id,
				       u->epoch, u->is_result ? "result"
							      : "checkpoint",
				       &u->quarantined);
		return;
	}
	if (u->rc)
		return;
	u->rc = units_over(u->units_done, &l, u->err, sizeof(u->err));
	if (u->rc == 0)
		u->rc = store_job_get(st, l.job_id, &job);
	if (u->rc == 0) {
		u->job_id = l.job_id;
		u->workload = strdup(job.workload);
		u->params = strdup(job.params);
		u->spec = strdup(l.spec);
		if (!u->workload || !u->params || !u->spec)
			u->rc = GERR_NOMEM;
	}
	store_job_clear(&job);
	store_lease_clear(&l);
}

/* ---- release ---- */

/* Invariant 6: the run of l failed on its holder. */
static int release_failed(struct store *st, struct sched_release *r,
			  const struct store_lease *l, double now)
{
	enum lease_state ns = LEASE_PENDING;
	char reason[400];
	int rc;

	snprintf(reason, sizeof(reason), "run failed: %s", r->error);
	rc = store_lease_run_failed(st, r->lease_id, r->epoch, reason,
				    r->pol->max_failures, now, &ns);
	if (!rc)
		rc = store_event(st, now, l->job_id, r->lease_id, r->epoch,
				 r->worker_id, "run_failed", r->error);
	if (rc)
		return rc;
	if (ns == LEASE_FAILED) {
		snprintf(reason, sizeof(reason), "lease %" PRId64 " failed %u "
			 "times; last: run failed on a worker: %s", r->lease_id,
			 l->failures + 1, r->error);
		rc = store_job_set_state(st, l->job_id, JOB_FAILED, reason, now);
		if (!rc)
			rc = store_event(st, now, l->job_id, r->lease_id,
					 r->epoch, r->worker_id, "job_failed",
					 reason);
		r->job_failed = rc == 0;
		return rc;
	}
	snprintf(reason, sizeof(reason), "lease %" PRId64 " failed on a worker "
		 "(failure %u of %u allowed): %s", r->lease_id, l->failures + 1,
		 r->pol->max_failures, r->error);
	return store_job_set_reason(st, l->job_id, reason);
}

/* Whether s is a blob's name: 64 lowercase hex digits. */
static int blob_name(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n == BLOB_HASH_HEX - 1 && s[n] == '\0';
}

/* Invariant 6: the first blob of gpud's named by a top-level string of
 * params or spec (JSON texts) that gpud cannot read back whole, with why
 * it is gpud's fault in why; 0 when every one is whole. Each named blob
 * is read (bounded by the store's limit) on this thread: only for a
 * release that carries an error. */
static int own_blob_damaged(const struct sched_policy *pol,
			    const char *params, const char *spec, char *why,
			    size_t whylen)
{
	const char *text[2] = { params, spec }, *where[2] = { "params",
							      "spec" };
	int found = 0;

	for (int i = 0; i < 2 && !found; i++) {
		json_t *j = text[i] ? json_loads(text[i], 0, NULL) : NULL;
		const char *key;
		json_t *v;

		json_object_foreach(j, key, v) {
			const char *h = json_string_value(v);
			uint8_t *blob = NULL;
			size_t len = 0;
			int rc;

			if (!h || !blob_name(h))
				continue;
			rc = blob_store_get(pol->data_dir, h, &blob, &len);
			free(blob);
			if (rc != GERR_CORRUPT && rc != GERR_NOTFOUND)
				continue;
			snprintf(why, whylen, "blob %.16s (the job's %s \"%.32s\") "
				 "is %s in gpud's own store", h, where[i], key,
				 rc == GERR_CORRUPT ? "damaged" : "missing");
			found = 1;
			break;
		}
		json_decref(j);
	}
	return found;
}

/* Invariant 6, gpud's fault: l goes back as released, charged to no one,
 * and its job is paused with a reason naming the blob (r->why, set by
 * own_blob_damaged). Inside the release's transaction. */
static int release_damaged(struct store *st, struct sched_release *r,
			   const struct store_lease *l,
			   const struct store_job *job, double now)
{
	char reason[400];
	int rc = store_lease_release(st, r->lease_id, r->epoch, now);

	snprintf(reason, sizeof(reason), SCHED_PAUSED_BY_GPUD "%.200s, so lease %"
		 PRId64 " cannot run (no worker is charged); restore it from a "
		 "backup (gpuctl check names it), then gpuctl resume %" PRId64,
		 r->why, r->lease_id, l->job_id);
	if (!rc)
		rc = store_event(st, now, l->job_id, r->lease_id, r->epoch,
				 r->worker_id, "blob_damaged", reason);
	if (!rc && job->state == JOB_ACTIVE)
		rc = store_job_set_state(st, l->job_id, JOB_PAUSED, reason,
					 now);
	else if (!rc)
		rc = store_job_set_reason(st, l->job_id, reason);
	if (!rc) {
		snprintf(r->why, sizeof(r->why), "%s", reason);
		r->damaged = 1;
	}
	return rc;
}

/* The pieces of a cut: specs (owned) and units, the head first. */
struct cut {
	json_t *spec[TAKEBACK_MAX_PIECES];
	uint64_t units[TAKEBACK_MAX_PIECES];
	uint32_t n;
};

/* Cut spec (params) with wl into c: the head at `at`, then pieces of
 * share units while fewer than want, the last one the rest. Returns 0 or
 * the workload's refusal of the head's cut. */
static int cut_plan(const struct workload *wl, json_t *params, json_t *spec,
		    uint64_t at, uint64_t share, uint32_t want,
		    struct cut *c)
{
	json_t *head = NULL, *tail = NULL, *rest = NULL;
	uint64_t hu = 0, tu = 0, ru = 0;
	int rc = wl->split(workload_ctx(wl), params, spec, at, &head, &hu,
			   &tail, &tu);

	if (rc)
		return rc;
	c->spec[0] = head;
	c->units[0] = hu;
	c->n = 1;
	while (c->n + 1 < want &&
	       wl->split(workload_ctx(wl), params, tail, share, &head, &hu,
			 &rest, &ru) == 0) {
		json_decref(tail);
		c->spec[c->n] = head;
		c->units[c->n++] = hu;
		tail = rest;
		tu = ru;
	}
	c->spec[c->n] = tail;
	c->units[c->n++] = tu;
	return 0;
}

/* Invariant 7: cut the released lease l (pending again at r->epoch) into
 * pieces at its checkpoint plus equal shares of the rest. Returns 0 or a
 * store error; a cut the workload refuses, or one whose pieces do not add
 * up to the lease, leaves it whole and is no error (why says so). */
/* The holder's part of the rest of l when it is cut into pieces: in
 * proportion to its rate in the job among the others' (their mean stands
 * for the idle workers', who are not known here), so that a CPU worker
 * beside an idle GPU keeps a little and the GPU takes the rest; equal
 * shares when gpud has measured no one else in the job. */
static uint64_t holder_share(struct store *st, const struct store_lease *l,
			     int64_t holder, const char *workload,
			     uint32_t pieces)
{
	uint64_t rest = l->units - l->checkpoint_units;
	struct store_fleet fl = {0};
	double mine = 0, others, part;

	if (store_rate_get(st, holder, l->job_id, &mine) || !(mine > 0) ||
	    store_rate_fleet(st, workload, l->job_id, 0, &fl) ||
	    fl.known < 2 || !(fl.rate_sum > mine))
		return rest / pieces;
	others = (fl.rate_sum - mine) / (fl.known - 1);
	part = (double)rest * mine / (mine + (pieces - 1) * others);
	return part < 1 ? 1 : (uint64_t)part;
}

static int takeback_cut(struct store *st, struct sched_release *r,
			const struct store_lease *l, uint32_t pieces,
			double now)
{
	struct store_job job = {0};
	struct cut c = {0};
	const struct workload *wl;
	json_t *params = NULL, *spec = NULL;
	uint64_t share, sum = 0;
	size_t n = 0;
	int rc = store_job_get(st, l->job_id, &job), wrc = 0, replicate = 0;

	if (rc == 0)
		rc = store_job_get_replicate(st, l->job_id, &replicate);
	if (rc || replicate) {
		store_job_clear(&job);
		return rc;
	}
	wl = workload_find(job.workload);
	if (pieces > TAKEBACK_MAX_PIECES)
		pieces = TAKEBACK_MAX_PIECES;
	share = (l->units - l->checkpoint_units) / pieces;
	params = json_loads(job.params, 0, NULL);
	spec = json_loads(l->spec, 0, NULL);
	if (wl && wl->split && share && params && spec) {
		uint64_t head = holder_share(st, l, r->worker_id, job.workload,
					     pieces);

		/* The idle workers' pieces share what the head leaves. */
		if (head < l->units - l->checkpoint_units && pieces > 1)
			share = (l->units - l->checkpoint_units - head) /
				(pieces - 1);
		if (!share)
			share = 1;
		wrc = cut_plan(wl, params, spec, l->checkpoint_units + head,
			       share, pieces, &c);
	}
	for (uint32_t i = 0; i < c.n; i++)
		sum += c.units[i];
	if (!wl || !wl->split || !share || !params || !spec || wrc ||
	    sum != l->units || c.units[0] < l->checkpoint_units) {
		snprintf(r->why, sizeof(r->why), "not cut: %s",
			 !wl || !wl->split ? "the workload cannot cut"
			 : !share	   ? "nothing left to share"
			 : !params || !spec ? "unreadable params or spec"
			 : wrc		   ? gerr_str(wrc)
					   : "pieces do not add up");
		goto out;
	}
	for (uint32_t i = 0; i < c.n && rc == 0; i++) {
		char *text = json_dumps(c.spec[i], JSON_COMPACT);

		if (!text)
			rc = GERR_NOMEM;
		else if (i == 0)
			rc = store_lease_respec(st, l->id, r->epoch, text,
						c.units[0], now);
		else
			rc = store_lease_insert_pending(st, l->job_id, text,
							c.units[i], now, NULL);
		free(text);
		if (n < sizeof(r->why))
			n += (size_t)snprintf(r->why + n, sizeof(r->why) - n,
					      i ? " + %" PRIu64
						: "%" PRIu64, c.units[i]);
	}
	if (n < sizeof(r->why))
		snprintf(r->why + n, sizeof(r->why) - n, " units (checkpoint "
			 "at %" PRIu64 ")", l->checkpoint_units);
	if (rc == 0)
		rc = store_event(st, now, l->job_id, l->id, r->epoch,
				 r->worker_id, "takeback", r->why);
	if (rc == 0)
		r->pieces = c.n;
out:
	for (uint32_t i = 0; i < c.n; i++)
		json_decref(c.spec[i]);
	json_decref(params);
	json_decref(spec);
	store_job_clear(&job);
	return rc;
}

void sched_release(struct store *st, struct sched_release *r)
{
	double now = gclock_wall();
	struct store_lease l = {0};
	int rc;

	r->job_id = 0;
	r->job_failed = r->foreign = r->quarantined = r->damaged = 0;
	r->pieces = 0;
	r->why[0] = '\0';
	r->rc = lease_held(st, r->lease_id, r->epoch, r->worker_id, &l,
			   &r->foreign, r->why, sizeof(r->why));
	if (r->rc == GERR_STALE && r->foreign)
		charge_foreign(st, r->pol, r->worker_id, r->lease_id, r->epoch,
			       "release", &r->quarantined);
	if (r->rc)
		return;
	r->job_id = l.job_id;
	rc = store_begin(st);
	if (rc)
		goto out;
	if (r->error[0]) {
		struct store_job job = {0};

		rc = store_job_get(st, l.job_id, &job);
		if (!rc && own_blob_damaged(r->pol, job.params, l.spec, r->why,
					    sizeof(r->why)))
			rc = release_damaged(st, r, &l, &job, now);
		else if (!rc)
			rc = release_failed(st, r, &l, now);
		store_job_clear(&job);
	} else {
		struct store_lease_grant g = {0};

		rc = store_lease_grant_get(st, r->lease_id, r->epoch, &g);
		if (!rc)
			rc = store_lease_release(st, r->lease_id, r->epoch,
						 now);
		if (!rc)
			rc = store_event(st, now, l.job_id, r->lease_id,
					 r->epoch, r->worker_id, "release",
					 NULL);
		/* A group made since the mark (a replica) stays whole. */
		if (!rc && g.takeback >= 2 && !g.grouped)
			rc = takeback_cut(st, r, &l, g.takeback, now);
	}
	if (!rc)
		rc = store_commit(st);
	else
		store_rollback(st);
out:
	if (rc)
		r->job_failed = 0;
	r->rc = rc;
	store_lease_clear(&l);
}
