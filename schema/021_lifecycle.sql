-- 021: lifecycles the operator steers (gpuctl requeue, submit --after,
-- submit --time-limit, gpud's end hook).
-- after_job: the job this one waits for; it is granted nothing until that
-- job is done, and fails when that job fails or is cancelled. Only an
-- earlier job, so no cycle can form.
ALTER TABLE jobs ADD COLUMN after_job INTEGER REFERENCES jobs (id)
	CHECK (after_job IS NULL OR after_job < id);
-- time_limit: seconds the job may run (active after its first grant);
-- ran_s: how long it has run so far, added by gpud's lifecycle tick.
ALTER TABLE jobs ADD COLUMN time_limit REAL
	CHECK (time_limit IS NULL OR (time_limit >= 1 AND time_limit <= 31622400));
ALTER TABLE jobs ADD COLUMN ran_s REAL NOT NULL DEFAULT 0 CHECK (ran_s >= 0);
CREATE INDEX jobs_after ON jobs (after_job) WHERE after_job IS NOT NULL;

-- Every end of a job (done, failed, cancelled), whichever code path moved
-- it, is one 'job_end' event in the same transaction: gpud's lifecycle
-- tick reads them in order to run the end hook and to fail the jobs that
-- waited for a job that failed.
CREATE TRIGGER jobs_end_event AFTER UPDATE OF state ON jobs
WHEN new.state IN (2, 3, 4) AND old.state NOT IN (2, 3, 4)
BEGIN
	INSERT INTO events (ts, job_id, kind, detail)
	VALUES (CASE WHEN new.finished_at > 0 THEN new.finished_at
		ELSE (julianday('now') - 2440587.5) * 86400.0 END, new.id, 'job_end',
		CASE new.state WHEN 2 THEN 'done' WHEN 3 THEN 'failed'
		ELSE 'cancelled' END);
END;
