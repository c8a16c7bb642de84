-- 019: who submitted each job (gpuctl status and history's USER): the
-- credential's name for a remote gpuctl, the local Unix user for gpud's
-- socket. Jobs from before have none (NULL, shown "-").
ALTER TABLE jobs ADD COLUMN owner TEXT
	CHECK (owner IS NULL OR length(owner) BETWEEN 1 AND 64);
-- Who made a page link (page_keys.owner stays the role, which --revoke
-- reads).
ALTER TABLE page_keys ADD COLUMN made_by TEXT;
-- gpuctl events JOB: a lease's events that name no job (an expiry, a
-- foreign worker's message) are found by their lease.
CREATE INDEX events_lease ON events (lease_id) WHERE job_id = 0 AND lease_id > 0;
