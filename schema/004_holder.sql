-- 004: leases bound to their holder and a progress requirement.
--
-- A held lease must show progress: progress_units is the most units its
-- holder has reported under the current grant, progress_at when that last
-- grew (0 until the first report: the clock starts at the first heartbeat).
-- A claim resets both. A lease whose progress_at is older than gpud's
-- --progress-timeout is revoked at its next heartbeat.
ALTER TABLE leases ADD COLUMN progress_units INTEGER NOT NULL DEFAULT 0;
ALTER TABLE leases ADD COLUMN progress_at REAL NOT NULL DEFAULT 0;
UPDATE leases SET progress_units = units_done, progress_at = updated_at
	WHERE state = 1;

-- What a worker was charged with besides failed verifications: messages
-- about leases it was never granted (someone else's, unknown, or an epoch
-- not granted yet), and leases revoked from it for making no progress.
-- Each quarantines it at --quarantine-after, as failures do.
ALTER TABLE workers ADD COLUMN foreign_msgs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workers ADD COLUMN stalls INTEGER NOT NULL DEFAULT 0;

-- The leases a worker holds (the cap per worker, who holds what).
CREATE INDEX leases_worker ON leases (worker_id, state);
