-- 001_init.sql - gpud's first schema (applied as migration 1 in one
-- transaction; store.c then sets PRAGMA user_version = 1).
--
-- Conventions
--  * Times are seconds since the Unix epoch as REAL, passed in by gpud.
--  * Enumerations are stored as the integer values of store.h's enums
--    (enum job_state, enum lease_state); the CHECKs keep them in range.
--  * uint64 counters are stored as INTEGER (int64); they never reach 2^63.
--  * A missing reference (no worker, no checkpoint) is NULL, never 0 or ''.
--  * JSON columns are checked with json_valid(): a bad write is refused
--    (GERR_INVAL) instead of breaking every later reader.
--  * Never edit this file once released: add 002_*.sql instead.

-- Marks the file as a gpud database ('gpud' in ASCII), so that store_open
-- can refuse some other application's SQLite file.
PRAGMA application_id = 1735423332;

-- One row per submitted job.
CREATE TABLE jobs (
	id             INTEGER PRIMARY KEY,
	workload       TEXT    NOT NULL,           -- registry name, e.g. 'graveler'
	params         TEXT    NOT NULL            -- JSON text, validated by the workload
	               CHECK (json_valid(params)),
	state          INTEGER NOT NULL DEFAULT 0  -- enum job_state
	               CHECK (state BETWEEN 0 AND 4),
	total_units    INTEGER NOT NULL CHECK (total_units >= 0),
	cursor         TEXT                        -- planner's JSON cursor, NULL before the first carve
	               CHECK (cursor IS NULL OR json_valid(cursor)),
	carve_done     INTEGER NOT NULL DEFAULT 0 CHECK (carve_done IN (0, 1)),
	answer         TEXT                        -- merged answer, JSON text
	               CHECK (answer IS NULL OR json_valid(answer)),
	units_verified INTEGER NOT NULL DEFAULT 0,
	created_at     REAL    NOT NULL,
	finished_at    REAL    NOT NULL DEFAULT 0, -- 0 until done/failed/cancelled
	reason         TEXT                        -- why failed/paused/not moving
);
-- store_job_next_carvable: oldest active job that still has work to carve.
CREATE INDEX jobs_carvable ON jobs (state, carve_done, id);

-- One row per worker identity (the token name it authenticated with).
CREATE TABLE workers (
	id          INTEGER PRIMARY KEY,
	name        TEXT    NOT NULL UNIQUE,
	device      TEXT    NOT NULL,              -- e.g. 'cuda:0', 'cpu'
	online      INTEGER NOT NULL DEFAULT 0 CHECK (online IN (0, 1)),
	quarantined INTEGER NOT NULL DEFAULT 0 CHECK (quarantined IN (0, 1)),
	failures    INTEGER NOT NULL DEFAULT 0,    -- verification failures charged to it
	leases_done INTEGER NOT NULL DEFAULT 0,
	units_done  INTEGER NOT NULL DEFAULT 0,
	rate        REAL    NOT NULL DEFAULT 0,    -- units/s, last measured
	first_seen  REAL    NOT NULL,
	last_seen   REAL    NOT NULL
);

-- One row per lease: a unit of work of one job. The state machine and the
-- epoch rules are in store.h (invariants 2 and 3) and enforced by
-- lease_move() in store.c; every write names (id, epoch, state) in its
-- WHERE clause.
CREATE TABLE leases (
	id               INTEGER PRIMARY KEY,
	job_id           INTEGER NOT NULL REFERENCES jobs (id),
	spec             TEXT    NOT NULL          -- JSON text from the planner
	                 CHECK (json_valid(spec)),
	units            INTEGER NOT NULL CHECK (units >= 0),
	state            INTEGER NOT NULL          -- enum lease_state
	                 CHECK (state BETWEEN 0 AND 5),
	epoch            INTEGER NOT NULL CHECK (epoch >= 0), -- +1 on every grant
	worker_id        INTEGER REFERENCES workers (id), -- holder (leased) or producer (done..)
	deadline         REAL    NOT NULL DEFAULT 0, -- leased: expires when deadline < now
	attempts         INTEGER NOT NULL DEFAULT 0, -- grants so far
	failures         INTEGER NOT NULL DEFAULT 0, -- verification failures so far
	units_done       INTEGER NOT NULL DEFAULT 0, -- progress reported by the holder
	checkpoint       TEXT,                       -- blob hash of the last good checkpoint
	checkpoint_units INTEGER NOT NULL DEFAULT 0, -- units covered by that checkpoint
	result           TEXT,                       -- blob hash of the result (done, verified)
	last_error       TEXT,
	created_at       REAL    NOT NULL,
	updated_at       REAL    NOT NULL
);
-- Claim: oldest lease in a state (pending), in id order.
CREATE INDEX leases_claim ON leases (state, id);
-- Expiry: leased leases by deadline.
CREATE INDEX leases_expiry ON leases (state, deadline);
-- Per-job listing, counts, progress and cancellation.
CREATE INDEX leases_job ON leases (job_id, state);

-- Worker tokens, stored as the derived key only (never the secret).
CREATE TABLE tokens (
	name       TEXT    PRIMARY KEY,
	key        BLOB    NOT NULL CHECK (length(key) = 32),
	revoked    INTEGER NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1)),
	created_at REAL    NOT NULL
);

-- Append-only event log: what happened to which job/lease/worker. Rows are
-- never updated or deleted by gpud; ids that do not apply are 0. No foreign
-- keys, so the log outlives what it mentions.
CREATE TABLE events (
	id        INTEGER PRIMARY KEY,
	ts        REAL    NOT NULL,
	job_id    INTEGER NOT NULL DEFAULT 0,
	lease_id  INTEGER NOT NULL DEFAULT 0,
	epoch     INTEGER NOT NULL DEFAULT 0,
	worker_id INTEGER NOT NULL DEFAULT 0,
	kind      TEXT    NOT NULL,                -- e.g. 'claim', 'expire', 'reject'
	detail    TEXT
);
CREATE INDEX events_kind ON events (kind, job_id);
CREATE INDEX events_job ON events (job_id, id);

-- Enforce append-only in the database itself.
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
	SELECT RAISE(ABORT, 'events are append-only');
END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN
	SELECT RAISE(ABORT, 'events are append-only');
END;
