-- 010: the queue. A job may carry a name (shown by status and history)
-- and a priority: claims take the active job with the highest priority,
-- then the oldest (lowest id). started_at is the time of the job's first
-- grant (NULL before it), for its elapsed time and average rate.
ALTER TABLE jobs ADD COLUMN name TEXT
	CHECK (name IS NULL OR (length(name) BETWEEN 1 AND 64
	       AND name NOT GLOB '*[^A-Za-z0-9._-]*'));
ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0
	CHECK (priority BETWEEN -1000 AND 1000);
ALTER TABLE jobs ADD COLUMN started_at REAL;

-- Jobs granted before this migration: their first grant in the event log.
UPDATE jobs SET started_at = (SELECT min(e.ts) FROM events AS e
	WHERE e.kind = 'grant' AND e.job_id = jobs.id);

-- Queue order for the claim and for the next job to carve.
DROP INDEX jobs_carvable;
CREATE INDEX jobs_carvable ON jobs (state, carve_done, priority DESC, id);
CREATE INDEX jobs_queue ON jobs (state, priority DESC, id);
-- history: finished jobs, newest first.
CREATE INDEX jobs_finished ON jobs (finished_at);
