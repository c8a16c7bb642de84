-- 006: replication. A replica lease recomputes another lease (its primary:
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

-- Officers jobs of older gpuds with --check full ("check": "full" in their
-- params) carved check leases, which recomputed each stored range after
-- its merge; replication now does that for every workload, before the
-- merge. Such a job is replicated from here on, its open check leases go,
-- and its units count each value once again.
UPDATE jobs SET replicate = 1, total_units = total_units / 2,
	units_verified = units_verified - coalesce((SELECT sum(l.units)
		FROM leases AS l WHERE l.job_id = jobs.id AND l.state = 3
		AND json_extract(l.spec, '$.kind') = 'check'), 0)
	WHERE workload = 'officers' AND json_extract(params, '$.check') = 'full';
UPDATE leases SET state = 5
	WHERE state IN (0, 1, 2) AND json_extract(spec, '$.kind') = 'check'
	AND job_id IN (SELECT id FROM jobs WHERE workload = 'officers');
