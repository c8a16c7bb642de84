-- 012: a worker is one gpuworker process. A credential (token) is whom it
-- acts for, and many processes share one (a Slurm array, a Kubernetes
-- Job); each names itself in HELLO with an instance unique among them
-- (place.h). A row is one (credential, instance); its name is
-- "CREDENTIAL@INSTANCE" (token names hold no '@', so names stay unique).
-- Rows from before are their token's: credential = name, instance ''.
ALTER TABLE workers ADD COLUMN credential TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN instance TEXT NOT NULL DEFAULT '';
UPDATE workers SET credential = name;
CREATE UNIQUE INDEX workers_process ON workers (credential, instance);
-- Offline rows by age, for the prune that keeps the table bounded.
CREATE INDEX workers_gone ON workers (online, last_seen);
CREATE INDEX lease_failures_worker ON lease_failures (worker_id);
-- A row written without a credential (the credential's own row, by name
-- alone) is its name's.
CREATE TRIGGER workers_credential AFTER INSERT ON workers
WHEN NEW.credential = '' BEGIN
	UPDATE workers SET credential = NEW.name WHERE id = NEW.id;
END;
