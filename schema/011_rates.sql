-- 011: leases sized for the fleet. gpud measures each worker's rate itself,
-- from its grants: a grant records when it was made and the progress it
-- resumed from. A lease carved for its first holder was granted when it
-- was created (granted_at 0, granted_units 0).
ALTER TABLE leases ADD COLUMN granted_at REAL NOT NULL DEFAULT 0;
ALTER TABLE leases ADD COLUMN granted_units INTEGER NOT NULL DEFAULT 0
	CHECK (granted_units >= 0);

-- The workloads each worker said it runs (at its claims): the fleet that
-- may take a job's leases is a join.
CREATE TABLE worker_workloads (
	worker_id  INTEGER NOT NULL REFERENCES workers (id),
	workload   TEXT    NOT NULL,
	PRIMARY KEY (worker_id, workload)
) WITHOUT ROWID;
CREATE INDEX worker_workloads_workload ON worker_workloads (workload, worker_id);

-- A worker's rate in one job, in its workload's units per second, as gpud
-- measured it. Per job, since a workload's units may cost very different
-- times from job to job (an Othello position of 24 empties a million times
-- one of 8, a Sudoku gangster of 4x3 much more than one of 3x3).
CREATE TABLE job_rates (
	job_id     INTEGER NOT NULL REFERENCES jobs (id),
	worker_id  INTEGER NOT NULL REFERENCES workers (id),
	rate       REAL    NOT NULL CHECK (rate > 0),
	updated_at REAL    NOT NULL,
	PRIMARY KEY (job_id, worker_id)
) WITHOUT ROWID;
CREATE INDEX job_rates_worker ON job_rates (worker_id);
