-- 011: leases sized for the fleet. gpud measures each worker's rate itself,
-- per workload, from its grants: a grant records when it was made and the
-- progress it resumed from. A lease carved for its first holder was granted
-- when it was created (granted_at 0, granted_units 0).
ALTER TABLE leases ADD COLUMN granted_at REAL NOT NULL DEFAULT 0;
ALTER TABLE leases ADD COLUMN granted_units INTEGER NOT NULL DEFAULT 0
	CHECK (granted_units >= 0);

-- A worker's rate in one workload's units, as gpud measured it (0: not
-- yet). A row exists for every workload the worker said it runs, so the
-- fleet that may take a job's leases is a join.
CREATE TABLE worker_rates (
	worker_id  INTEGER NOT NULL REFERENCES workers (id),
	workload   TEXT    NOT NULL,
	rate       REAL    NOT NULL DEFAULT 0 CHECK (rate >= 0),
	updated_at REAL    NOT NULL,
	PRIMARY KEY (worker_id, workload)
) WITHOUT ROWID;
CREATE INDEX worker_rates_workload ON worker_rates (workload, worker_id);
