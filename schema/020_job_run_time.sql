-- 020: the time a job ran, which ELAPSED shows: paused spans and the time
-- it sat finished before an extend do not count. run_s holds the closed
-- spans (seconds), run_since the start of the open one (0: none). A span
-- opens at a grant while none is open (the first, and the first after a
-- resume or an extend) and closes when the job pauses or ends.
ALTER TABLE jobs ADD COLUMN run_s REAL NOT NULL DEFAULT 0 CHECK (run_s >= 0);
ALTER TABLE jobs ADD COLUMN run_since REAL NOT NULL DEFAULT 0;
-- Jobs from before: a finished one ran from its first grant to its end,
-- an active one runs since its first grant, a paused one ran until it
-- was last paused (its last 'pause' event, else its start).
UPDATE jobs SET run_s = max(finished_at - started_at, 0)
	WHERE started_at IS NOT NULL AND finished_at > 0;
UPDATE jobs SET run_since = started_at
	WHERE started_at IS NOT NULL AND finished_at = 0 AND state = 0;
UPDATE jobs SET run_s = max(coalesce((SELECT max(ts) FROM events
	WHERE events.job_id = jobs.id AND events.kind = 'pause'),
	started_at) - started_at, 0)
	WHERE started_at IS NOT NULL AND finished_at = 0 AND state = 1;
