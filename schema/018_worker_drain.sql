-- 018: an operator may drain a worker (it finishes the lease it holds and
-- is granted no more) until resumed: gpuctl worker drain|resume. Kept on
-- the row so it lasts across gpud restarts.
ALTER TABLE workers ADD COLUMN drained INTEGER NOT NULL DEFAULT 0
	CHECK (drained IN (0, 1));
