-- 015: digests on stored answers and parts, so that a value changed in
-- place (a damaged page SQLite still reads, an edit outside gpud) is found
-- instead of printed. gpud_digest is BLAKE2b-256, a function gpud gives
-- its own connection (store_open.c); the expressions are JOB_DIGEST and
-- PART_DIGEST in daemon/store/store_internal.h, written in the same
-- transaction as the values they cover and recomputed by gpuctl check,
-- the start-up check and every read of a part. NULL (no digest) counts as
-- damage, so every row gets one here.
ALTER TABLE jobs ADD COLUMN digest BLOB
	CHECK (digest IS NULL OR length(digest) = 32);
ALTER TABLE parts ADD COLUMN digest BLOB
	CHECK (digest IS NULL OR length(digest) = 32);

UPDATE jobs SET digest = gpud_digest('job', jobs.id, jobs.params,
	jobs.answer, jobs.units_verified);
UPDATE parts SET digest = (SELECT gpud_digest('part', parts.job_id,
	parts.seq, parts.lease_id, l.spec, l.units, l.result, parts.note)
	FROM leases AS l WHERE l.id = parts.lease_id);
