/* sched_claim.c - grants (scheduler.h's sched_claim): the claim in queue
 * order (priority, then age), a pending lease before a new one carved,
 * and why a worker gets nothing (every lease held, jobs paused, leases
 * waiting for another worker).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "blob.h"
#include "clock.h"
#include "gerr.h"
#include "job_parts.h"
#include "scheduler.h"
#include "store_lifecycle.h"

/* Passes of the claim over jobs whose planner waits for results. */
#define CARVE_TRIES 16
/* Specs and cursors as the planners' other JSON: sorted, compact. */
#define JSON_TEXT (JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)

static json_t *parse_text(const char *text)
{
	return text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
}

/* ---- claim ---- */

/* --check full: the replica of a new lease is pending at once, so another
 * worker computes it while the first does. */
static int carve_replica(struct store *st, int64_t job_id, int64_t lease_id,
			 double now)
{
	int full = 0, rc = store_job_get_replicate(st, job_id, &full);
	int64_t id;

	return rc || !full ? rc : store_lease_insert_replica(st, lease_id, now, &id);
}

/* The claim's job and its parameters, for the grant. */
static int claim_job_info(struct store *st, struct sched_claim *c)
{
	struct store_job job = {0};
	int rc = store_job_get(st, c->lease.job_id, &job);

	if (rc == 0) {
		c->workload = strdup(job.workload);
		c->params = strdup(job.params);
	}
	store_job_clear(&job);
	return rc;
}

/* How many units to ask job's planner for (0: its own default). With a
 * rate r measured for this worker in this job (on verified work only,
 * store_rates.c: nothing the worker states, neither its claim, which
 * carries no field, nor its checkpoints' progress, raises r above what
 * its verified results showed): r x --lease-seconds, cut
 * to the worker's share of what is left, never below r x
 * --lease-min-seconds while some of the fleet is unmeasured. What is left
 * counts the holders' unfinished work too, so that every worker would
 * finish at the same time: the share is r / (the fleet's rates) of it (a
 * worker not measured yet counts as their mean). Before r is known: a
 * probe, an equal share, which carve_job caps at the planner's default
 * lease shared by the fleet (a GPU and CPUs that start together learn
 * their rates on a piece each, and a CPU's probe does not outlast the
 * GPU's whole job). Sets *probe to the fleet's size (at least 1) then.
 * A chain (a workload whose runs chain, next_lease: one lease at a time)
 * has no share to cut: r x --lease-seconds, steady, as its run ahead
 * guesses, and the planner's default as its probe. */
static int lease_want(struct store *st, const struct sched_claim *c,
		      const struct workload *wl, const struct store_job *job,
		      double now, uint64_t *ret, int *probe)
{
	const struct sched_policy *pol = c->pol;
	struct store_fleet fleet = {0};
	struct store_units_left left = {0};
	double r = 0, share = 0, want;
	int rc;

	*ret = pol->lease_units;
	*probe = 0;
	if (pol->lease_units)
		return 0;
	rc = store_rate_get(st, c->worker_id, job->id, &r);
	if (!rc)
		rc = store_job_units_left(st, job->id, &left);
	if (!rc)
		rc = store_rate_fleet(st, job->workload, job->id,
				      now - 2 * pol->lease_timeout_s, &fleet);
	if (rc)
		return rc;
	if (left.total && fleet.workers > 0 && !wl->next_lease) {
		double mean = fleet.known ? fleet.rate_sum / fleet.known : 0;
		double sum = fleet.rate_sum + (fleet.workers - fleet.known) * mean;
		double all = (double)left.uncarved + (double)left.pending +
			     (double)left.held;

		share = r > 0 && sum > 0 ? all * r / sum
					 : all / fleet.workers;
		if (share < 1)
			share = 1;
	}
	if (r > 0) {
		want = r * pol->lease_target_s;
		if (share > 0 && share < want)
			want = share;
		/* The floor, never above the wanted length, while some of the
		 * fleet is not measured in the job (counted at the mean, they
		 * may shrink a fast worker's share to nothing). With every
		 * rate known the share is what the fleet does meanwhile, and
		 * below the floor the job is ending: a slow worker's lease
		 * then ends with the fast ones' rather than after them. */
		if (want < r * pol->lease_min_s && pol->lease_min_s <
		    pol->lease_target_s &&
		    (share == 0 || fleet.known < fleet.workers))
			want = r * pol->lease_min_s;
	} else {
		want = share;
		*probe = fleet.workers > 1 && !wl->next_lease ?
			 (int)fleet.workers : 1;
	}
	*ret = want >= 1e18 ? (uint64_t)1e18 : (uint64_t)want;
	return 0;
}

/* Carve a new lease of job for the claim. Inside a transaction.
 * GERR_NOTFOUND when the job gives none now: its planner is done (marked
 * so), must wait for results (GERR_AGAIN: added to skip, so the next job
 * may have work) or failed (the job fails alone). */
static int carve_job(struct store *st, struct sched_claim *c,
		     const struct store_job *job, json_t *skip, double now)
{
	const struct workload *wl = workload_find(job->workload);
	json_t *params = parse_text(job->params);
	json_t *cursor = parse_text(job->cursor);
	json_t *answer = parse_text(job->answer);
	json_t *spec = NULL, *next = NULL;
	struct job_parts parts = {0};
	char *spec_text = NULL, *next_text = NULL;
	uint64_t units = 0, want = 0;
	int last = 0, probe = 0, rc;

	if (!wl || !params) {
		rc = store_job_set_state(st, job->id, JOB_FAILED,
			"job parameters unreadable or workload unknown", now);
		goto none;
	}
	rc = job_parts_open(&parts, st, job->id);
	if (rc)
		goto out;
	rc = lease_want(st, c, wl, job, now, &want, &probe);
	if (rc)
		goto out;
	rc = wl->carve(workload_ctx(wl), params, cursor, answer, &parts.pub,
		       probe ? 0 : want, &spec, &units, &next, &last);
	/* The planner's default lease, unless the job's end cut it, is
	 * shared by the fleet. */
	if (rc == 0 && probe && !last &&
	    (!want || want > units / (uint64_t)probe))
		want = units / (uint64_t)probe;
	if (rc == 0 && probe && want && units > want) {
		/* The planner's default is more than the probe: cut to it. */
		json_decref(spec);
		json_decref(next);
		spec = next = NULL;
		rc = wl->carve(workload_ctx(wl), params, cursor, answer,
			       &parts.pub, want, &spec, &units, &next, &last);
	}
	if (rc == GERR_DONE) {
		rc = store_job_set_cursor(st, job->id, job->cursor, 1);
		goto none;
	}
	if (rc == GERR_AGAIN) {
		rc = json_array_append_new(skip, json_integer(job->id)) ?
			GERR_NOMEM : 0;
		goto none;
	}
	if (rc && rc != GERR_NOMEM) {
		/* A job its planner cannot continue fails alone; it must
		 * not hold up every other job's leases. */
		char reason[128];
		snprintf(reason, sizeof(reason), "planner failed: %s",
			 gerr_str(rc));
		rc = store_job_set_state(st, job->id, JOB_FAILED, reason, now);
		goto none;
	}
	if (rc)
		goto out;
	spec_text = json_dumps(spec, JSON_TEXT);
	next_text = json_dumps(next, JSON_TEXT);
	rc = (spec_text && next_text) ? 0 : GERR_NOMEM;
	if (!rc)
		rc = store_job_set_cursor(st, job->id, next_text, last);
	if (!rc)
		rc = store_lease_insert_leased(st, job->id, spec_text, units,
			c->worker_id, now + c->pol->lease_timeout_s, now,
			&c->lease);
	if (!rc)
		rc = carve_replica(st, job->id, c->lease.id, now);
	if (!rc) {
		c->workload = strdup(job->workload);
		c->params = strdup(job->params);
	}
	goto out;
none:
	if (!rc)
		rc = GERR_NOTFOUND;
out:
	free(spec_text);
	free(next_text);
	job_parts_clear(&parts);
	json_decref(spec);
	json_decref(next);
	json_decref(params);
	json_decref(cursor);
	json_decref(answer);
	return rc;
}

/* Grant in queue order (priority, then age): the first job that has
 * something for this worker gives it, a pending lease before a new one
 * carved. Inside a transaction. Each pass takes the first job that may
 * still carve and claims a pending lease of it or of a job ahead of it,
 * else carves it; the last pass claims from any job. */
static int claim_in_order(struct store *st, struct sched_claim *c,
			  double now)
{
	double deadline = now + c->pol->lease_timeout_s;
	json_t *skip = json_array(); /* jobs whose planner waits for results */
	int rc = skip ? GERR_NOTFOUND : GERR_NOMEM;

	for (int pass = 0; skip && pass < CARVE_TRIES; pass++) {
		struct store_job job = {0};
		struct store_rank upto;
		int64_t job_id = 0;
		char *skip_text = json_dumps(skip, JSON_COMPACT);

		rc = skip_text ? store_job_next_carvable(st, c->workloads_json,
							 skip_text, &job_id)
			       : GERR_NOMEM;
		free(skip_text);
		if (rc && rc != GERR_NOTFOUND)
			break;
		if (rc || pass == CARVE_TRIES - 1)
			job_id = 0;
		else if ((rc = store_job_get(st, job_id, &job)))
			break;
		upto.priority = job.priority;
		upto.id = job.id;
		rc = store_lease_claim_ranked(st, c->worker_id,
			c->workloads_json, job_id ? &upto : NULL, deadline, now,
			&c->lease);
		if (rc == 0)
			rc = claim_job_info(st, c);
		if (rc == GERR_NOTFOUND && job_id)
			rc = carve_job(st, c, &job, skip, now);
		store_job_clear(&job);
		if (rc != GERR_NOTFOUND || !job_id)
			break;
	}
	json_decref(skip);
	return rc;
}

/* 1 when some active job waits for another not done (store_lifecycle.c),
 * and no active job that waits for none has anything left to lease. */
static int after_waits(struct store *st)
{
	struct store_job *jobs = NULL;
	size_t n = 0;
	int waits = 0, free_work = 0;

	if (store_job_list(st, &jobs, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct store_lifecycle lc;
		uint64_t k[LEASE_NSTATES] = {0};

		if (jobs[i].state != JOB_ACTIVE ||
		    store_job_lifecycle_get(st, jobs[i].id, &lc))
			continue;
		if (lc.after_job && lc.after_state != JOB_DONE) {
			waits = 1;
		} else if (!jobs[i].carve_done ||
			   (store_lease_counts(st, jobs[i].id, k) == 0 &&
			    k[LEASE_PENDING])) {
			free_work = 1;
		}
	}
	store_job_free_array(jobs, n);
	return waits && !free_work;
}

static void explain_no_lease(struct store *st, struct sched_claim *c)
{
	struct store_job *jobs = NULL;
	size_t n = 0, active = 0, paused = 0;
	uint64_t waiting = 0;

	if (store_job_list(st, &jobs, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			uint64_t w = 0;

			if (jobs[i].state == JOB_ACTIVE) {
				active++;
				if (store_replica_waiting(st, jobs[i].id,
							  &w) == 0)
					waiting += w;
			} else if (jobs[i].state == JOB_PAUSED) {
				paused++;
			}
		}
		store_job_free_array(jobs, n);
	}
	c->no_jobs = active == 0 && paused == 0;
	if (c->no_jobs)
		snprintf(c->reason, sizeof(c->reason), "no jobs");
	else if (active == 0)
		snprintf(c->reason, sizeof(c->reason), "all jobs are paused");
	else if (waiting)
		/* The claim's exclusions (store_lease_claim_pending). */
		snprintf(c->reason, sizeof(c->reason), "%" PRIu64 " pending "
			 "lease(s) wait for another worker: one that did not "
			 "fail them or compute another result of their group",
			 waiting);
	else if (after_waits(st))
		snprintf(c->reason, sizeof(c->reason), "the queued jobs wait "
			 "for other jobs to be done (submit --after)");
	else {
		sched_holders(st, 0, c->reason, sizeof(c->reason));
		if (!c->reason[0])
			snprintf(c->reason, sizeof(c->reason), "every lease "
				 "of the active jobs is held by a worker or finished");
	}
}

void sched_holders(struct store *st, int64_t job_id, char *buf, size_t len)
{
	static const char more[] = ", ...";
	struct store_holder *h = NULL;
	size_t n = 0, used;

	if (!len)
		return;
	buf[0] = '\0';
	if (store_lease_holders(st, job_id, &h, &n) || n == 0 ||
	    len < 32) {
		store_holder_free_array(h, n);
		return;
	}
	used = (size_t)snprintf(buf, len, "every lease is held:");
	for (size_t i = 0; i < n; i++) {
		/* Keep room for "more" after the last name that fits. */
		size_t room = len - used - sizeof(more) + 1;
		int k = snprintf(buf + used, room, "%s %s holds %" PRIu64,
				 i ? "," : "", h[i].name, h[i].leases);

		if (k < 0 || (size_t)k >= room) {
			snprintf(buf + used, len - used, "%s", more);
			break;
		}
		used += (size_t)k;
	}
	store_holder_free_array(h, n);
}

/* Forget the outputs of an earlier run (a claim may run twice: see
 * dbq_submit_batch). */
static void claim_reset(struct sched_claim *c)
{
	store_lease_clear(&c->lease);
	memset(&c->lease, 0, sizeof(c->lease));
	free(c->workload);
	free(c->params);
	free(c->checkpoint);
	c->workload = c->params = NULL;
	c->checkpoint = NULL;
	c->checkpoint_len = 0;
	c->no_jobs = 0;
	c->reason[0] = '\0';
	c->rc = 0;
}

/* A drained or quarantined worker, or one holding its share of leases already (fair
 * share: one token cannot take every lease), gets nothing more. */
static int claim_refused(struct store *st, struct sched_claim *c)
{
	struct store_worker w = {0};
	uint64_t held = 0;
	uint32_t cap = c->pol->max_leases_per_worker;
	uint32_t cred_cap = c->pol->max_leases_per_credential;

	if (store_worker_get(st, c->worker_id, &w) != 0)
		return 0;
	if (w.drained) {
		c->rc = GERR_STATE;
		snprintf(c->reason, sizeof(c->reason), "worker %s is drained by "
			 "the operator (gpuctl worker resume %s)", w.name, w.name);
	} else if (w.quarantined) {
		c->rc = GERR_STATE;
		snprintf(c->reason, sizeof(c->reason), "worker %s is quarantined "
			 "(%u failed verifications, %u messages about leases it "
			 "was not granted, %u leases revoked for no progress)",
			 w.name, w.failures, w.foreign_msgs, w.stalls);
	} else if (cap && (c->rc = store_lease_held_count(st, c->worker_id,
							  &held)) == 0 &&
		   held >= cap) {
		c->rc = GERR_STATE;
		snprintf(c->reason, sizeof(c->reason), "worker %s holds %" PRIu64
			 " leases, the most one worker may hold "
			 "(--max-leases-per-worker %u)", w.name, held, cap);
	} else if (cred_cap &&
		   (c->rc = store_worker_credential_held(st, c->worker_id,
							 &held)) == 0 &&
		   held >= cred_cap) {
		/* Every process of a token counts: a shared credential's
		 * fleet together. */
		c->rc = GERR_STATE;
		snprintf(c->reason, sizeof(c->reason), "the workers of token "
			 "%s hold %" PRIu64 " leases, the most one token may "
			 "hold (--max-leases-per-credential %u)", w.credential,
			 held, cred_cap);
	}
	store_worker_clear(&w);
	return c->rc != 0;
}

void sched_claim(struct store *st, struct sched_claim *c)
{
	double now = gclock_wall();

	claim_reset(c);
	if (claim_refused(st, c))
		return;
	/* The worker counts in the fleet that shares jobs from its first
	 * claim, whether that claim gets a lease or not: outside the
	 * claim's transaction, which a claim without a lease rolls back. */
	c->rc = store_rate_register(st, c->worker_id, c->workloads_json, now);
	if (c->rc == 0)
		c->rc = store_begin(st);
	if (c->rc)
		return;
	c->rc = claim_in_order(st, c, now);
	if (c->rc == 0 && (!c->workload || !c->params))
		c->rc = GERR_NOMEM;
	if (c->rc == 0)
		c->rc = store_job_mark_started(st, c->lease.job_id, now);
	if (c->rc == 0) {
		char detail[96];
		snprintf(detail, sizeof(detail), "units=%" PRIu64 " attempt=%u",
			 c->lease.units, c->lease.attempts);
		c->rc = store_event(st, now, c->lease.job_id, c->lease.id,
				    c->lease.epoch, c->worker_id, "grant", detail);
	}
	if (c->rc == 0)
		c->rc = store_commit(st);
	else
		store_rollback(st);
	if (c->rc == GERR_NOTFOUND) {
		explain_no_lease(st, c);
		return;
	}
	if (c->rc)
		return;
	if (c->lease.checkpoint) {
		/* A missing or damaged checkpoint file only costs the work since
		 * the lease started: run from the beginning rather than fail. */
		if (blob_store_get(c->pol->data_dir, c->lease.checkpoint,
				   &c->checkpoint, &c->checkpoint_len) != 0) {
			c->checkpoint = NULL;
			c->checkpoint_len = 0;
		}
	}
}

void sched_claim_clear(struct sched_claim *c)
{
	free(c->workloads_json);
	store_lease_clear(&c->lease);
	free(c->workload);
	free(c->params);
	free(c->checkpoint);
	memset(c, 0, sizeof(*c));
}
