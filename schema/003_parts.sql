-- 003: each verified lease's part of its job's answer.
--
-- A job's answer (jobs.answer) keeps only what does not grow with the
-- number of leases; what belongs to one lease stays here, one row per
-- verified lease, numbered in merge order, so a merge writes one row and a
-- small answer instead of rewriting everything merged before.
CREATE TABLE parts (
	job_id   INTEGER NOT NULL REFERENCES jobs (id),
	seq      INTEGER NOT NULL CHECK (seq >= 0),  -- 0 for the first merge
	lease_id INTEGER NOT NULL UNIQUE REFERENCES leases (id),
	note     TEXT                                -- the workload's note, JSON
	         CHECK (note IS NULL OR json_valid(note)),
	PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;

-- Jobs merged before this migration: their verified leases, in id order,
-- without notes.
INSERT INTO parts (job_id, seq, lease_id, note)
	SELECT job_id, row_number() OVER (PARTITION BY job_id ORDER BY id) - 1,
	       id, NULL
	FROM leases WHERE state = 3;
