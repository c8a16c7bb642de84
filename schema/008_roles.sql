-- 008: what a token may do. A worker token leases work; a viewer token
-- reads (status, result, export, workers, history) over remote gpuctl; an
-- admin token also changes things (submit, cancel, pause, resume, tokens).
-- Every token made before roles existed was a worker's.
ALTER TABLE tokens ADD COLUMN role TEXT NOT NULL DEFAULT 'worker'
	CHECK (role IN ('worker', 'viewer', 'admin'));
