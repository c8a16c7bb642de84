/* replica.h - replication of results, in BOINC's manner: a result merges
 * only once another worker's result of the same lease agrees with it when
 * the job asks for it (--check full), its worker is not yet trusted
 * (gpud --trust-after N: N results in a row confirmed by other workers)
 * or its workload's verification drew a spot replica (WL_VERIFY_SPOT,
 * workload.h: items too costly for gpud to recompute) and a worker of
 * another credential is in the workload's fleet (else it merges, event
 * "spot_skipped", so a lone worker never waits forever);
 * two results that disagree get a further replica, and the first two that
 * agree decide: every result of the group that differs is charged to its
 * worker as a failed verification.
 *
 * The group is a primary lease and its replicas (store.h, "replication").
 * Every result still passes its workload's own verification first; a
 * result that did is marked checked (durable), so a restart compares it
 * again without verifying it again.
 *
 * Steps, as verification runs them (sched_merge.c):
 *   replica_load    (database) the lease's group: its checked peers
 *   replica_compare (pool)     decode each peer's result, compare
 *   replica_decide  (database) in the verdict's transaction: wait, ask
 *                              for a further replica, or decide; it loads
 *                              the group, replica_judge decides (no store)
 *                              and store_replica_apply writes the verdict
 * The database may change between load and decide (two results of one
 * group verified at once): decide then answers REPLICA_AGAIN and the
 * caller verifies the lease again, so the last of them compares all.
 *
 * Ownership: struct replica_check is the caller's; replica_check_clear
 * frees what the steps put in it (NULL-safe on a zeroed struct).
 */
#ifndef GPUD_REPLICA_H
#define GPUD_REPLICA_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "workload.h"

struct replica_peer {
	int64_t id;
	uint64_t epoch;
	int64_t worker_id;
	char *hash;             /* result blob */
	int agrees;             /* 1 same result, 0 not, -1 not compared */
};

struct replica_check {
	int64_t primary;        /* the group: its primary lease's id */
	int is_replica;
	int checked;            /* the lease passed verification before */
	int loaded, compared;
	int spot;               /* verify answered WL_VERIFY_SPOT (set by the
				   caller before replica_decide) */
	struct replica_peer *peer;  /* checked, done leases of the group */
	size_t npeer;
	uint8_t *primary_raw;   /* the primary's result when it is a peer */
	size_t primary_raw_len;
};

struct replica_policy {
	uint32_t trust_after;       /* 0: trust every worker */
	uint32_t quarantine_after;
	uint32_t max_results;       /* results of one lease before the job fails */
	/* For a spot replica: the job's workload (borrowed) and the fleet's
	 * horizon (workers seen since then count, store_fleet_others). */
	const char *workload;
	double fleet_since;
};

enum replica_verdict {
	REPLICA_MERGE,    /* no replication: merge the lease as usual */
	REPLICA_WAIT,     /* checked; waits for another result */
	REPLICA_AGAIN,    /* the group changed since load: verify again */
	REPLICA_QUORUM,   /* decided: merge the primary (*ret_primary) */
	REPLICA_NOQUORUM, /* max_results results, no two agree: job failed */
};

/* Database thread. l is the lease being verified (done). */
int replica_load(struct store *st, const struct store_lease *l,
		 struct replica_check *rc);
/* Thread pool: compare raw (the lease's decoded result) with each peer's.
 * 0, or an error in err when a peer's result cannot be read. */
int replica_compare(struct replica_check *rc, const char *data_dir,
		    const struct workload *wl, const json_t *params,
		    const json_t *spec, const uint8_t *raw, size_t len,
		    char *err, size_t errlen);
/* Database thread, inside the verdict's transaction, for a lease l whose
 * result passed verification (a skipped spot replica's event is written
 * in it). On REPLICA_QUORUM, *ret_primary is the
 * primary's row (as it is now: its result may be an agreeing replica's)
 * and *ret_from_peer 1 when the result to merge is rc->primary_raw, 0 when
 * it is the lease's own (raw as given to replica_compare). */
int replica_decide(struct store *st, const struct replica_policy *pol,
		   const struct store_lease *l, struct replica_check *rc,
		   double now, enum replica_verdict *ret,
		   struct store_lease *ret_primary, int *ret_from_peer);
/* Pure (no store): the verdict on l's group once l's result needs
 * another's (replica_decide's policy checks passed). g, n: the group's
 * rows (store_lease_group), l among them, done, of l's epoch; move: n
 * bytes of the caller's, filled with enum store_replica_move. *ret_v
 * borrows l, g and move (store_replica_apply writes it); *ret as
 * replica_decide answers; *ret_from_peer as replica_decide's, 0 unless
 * REPLICA_QUORUM. */
void replica_judge(const struct replica_policy *pol,
		   const struct store_lease *l, const struct replica_check *rc,
		   const struct store_instance *g, size_t n,
		   unsigned char *move, struct store_replica_verdict *ret_v,
		   enum replica_verdict *ret, int *ret_from_peer);
void replica_check_clear(struct replica_check *rc);

#endif
