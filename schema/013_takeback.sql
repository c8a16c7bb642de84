-- 013: the tail. A held lease gpud wants back to cut it for idle workers
-- is marked with the pieces wanted and the epoch of the grant the mark is
-- for: only a release of that grant cuts it, so a lease that expired,
-- was revoked or finished instead carries a mark no later grant matches.
ALTER TABLE leases ADD COLUMN takeback INTEGER NOT NULL DEFAULT 0
	CHECK (takeback >= 0);
ALTER TABLE leases ADD COLUMN takeback_epoch INTEGER NOT NULL DEFAULT 0;
