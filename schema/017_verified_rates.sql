-- 017: rates from verified work only. A result's rate (its units past the
-- grant over the time from the grant to the result) is kept on its lease
-- when it arrives and noted for its worker only when the lease is
-- verified; `verified` is the worker's rate as verified work showed it, and
-- `rate`, what sizes its leases, never exceeds it (a checkpoint, which no
-- one checks, may only lower it). The window is the progress requirement's
-- mark: a holder's reported progress since window_at, against its rate.
ALTER TABLE job_rates ADD COLUMN verified REAL NOT NULL DEFAULT 0
	CHECK (verified >= 0);
ALTER TABLE leases ADD COLUMN result_rate REAL NOT NULL DEFAULT 0
	CHECK (result_rate >= 0);
ALTER TABLE leases ADD COLUMN window_at REAL NOT NULL DEFAULT 0;
ALTER TABLE leases ADD COLUMN window_units INTEGER NOT NULL DEFAULT 0
	CHECK (window_units >= 0);
-- Invariant 1 of store_rates.c, wherever a lease becomes verified (state 3:
-- the merge, a replica group's quorum): its result's rate is blended, by
-- half, into its producer's verified rate in the job, and the rate that
-- sizes its leases starts again from that (store_rate_note does the same).
CREATE TRIGGER leases_verified_rate AFTER UPDATE OF state ON leases
WHEN NEW.state = 3 AND OLD.state != 3 AND NEW.result_rate > 0
	AND NEW.worker_id IS NOT NULL
BEGIN
	INSERT INTO job_rates (job_id, worker_id, rate, verified, updated_at)
	VALUES (NEW.job_id, NEW.worker_id, NEW.result_rate, NEW.result_rate,
		NEW.updated_at)
	ON CONFLICT (job_id, worker_id) DO UPDATE SET
		verified = CASE WHEN verified > 0
			THEN verified * 0.5 + excluded.verified * 0.5
			ELSE excluded.verified END,
		rate = CASE WHEN verified > 0
			THEN verified * 0.5 + excluded.verified * 0.5
			ELSE excluded.verified END,
		updated_at = excluded.updated_at;
END;
-- Rates kept before came from checkpoints and results not yet verified:
-- measured again.
DELETE FROM job_rates;
