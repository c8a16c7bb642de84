-- 007: a lease that failed on a worker (its result failed verification, or
-- its run failed there) is never granted to that worker again; another
-- worker computes it ("a result that fails validation is re-sent to a
-- different host"). A set rather than the last failing worker: with one
-- column two lazy workers could take turns on a lease, each with a fresh
-- verification seed. At most max_failures rows per lease.
CREATE TABLE lease_failures (
	lease_id  INTEGER NOT NULL REFERENCES leases (id),
	worker_id INTEGER NOT NULL REFERENCES workers (id),
	PRIMARY KEY (lease_id, worker_id)
) WITHOUT ROWID;
