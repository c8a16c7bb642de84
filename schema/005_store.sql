-- 005: jobs whose stored results are damaged (a referenced blob missing or
-- no longer matching its hash), as `gpuctl check` last found them.
--
-- A table of its own rather than a job state: the job's state (done,
-- active, ...) stays true, and a later check that finds the blobs intact
-- again (restored from a backup) removes the row.
CREATE TABLE damage (
	job_id   INTEGER PRIMARY KEY REFERENCES jobs (id),
	reason   TEXT    NOT NULL,                 -- the first problem found, for status
	problems INTEGER NOT NULL CHECK (problems >= 1),
	found_at REAL    NOT NULL
);
