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
-- Rates kept before came from checkpoints and results not yet verified:
-- measured again.
DELETE FROM job_rates;
