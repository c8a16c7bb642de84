-- 004: replication. A replica lease recomputes another lease (its primary:
-- same job, spec and units) on a different worker; the primary is merged
-- only once two results agree. Replicas never count toward a job's units,
-- progress or "every lease verified".

-- 1 when the job was submitted with --check full: every lease replicated.
ALTER TABLE jobs ADD COLUMN replicate INTEGER NOT NULL DEFAULT 0
	CHECK (replicate IN (0, 1));

-- NULL for a primary; for a replica, the primary it recomputes.
ALTER TABLE leases ADD COLUMN replica_of INTEGER REFERENCES leases (id);
-- 1 once a done lease's result passed its own verification and waits for
-- another result of its group to agree with it.
ALTER TABLE leases ADD COLUMN checked INTEGER NOT NULL DEFAULT 0
	CHECK (checked IN (0, 1));
-- A group's replicas, and the claim's "never two results of one group
-- from the same worker".
CREATE INDEX leases_replica ON leases (replica_of);

-- Adaptive replication: results of this worker confirmed by another
-- worker's in a row (reset by any failure), and in all.
ALTER TABLE workers ADD COLUMN streak INTEGER NOT NULL DEFAULT 0
	CHECK (streak >= 0);
ALTER TABLE workers ADD COLUMN confirmed INTEGER NOT NULL DEFAULT 0
	CHECK (confirmed >= 0);
