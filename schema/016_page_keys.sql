-- 016: the status page's keys (gpuctl page-link). A key is 32
-- random bytes that only its holder has; gpud keeps its BLAKE2b-256 hash,
-- the role that made it and when it ends, so a copy of the database lets
-- nobody in.
CREATE TABLE page_keys (
	id INTEGER PRIMARY KEY,
	hash BLOB NOT NULL UNIQUE CHECK (length(hash) = 32),
	owner TEXT NOT NULL CHECK (owner IN ('viewer', 'admin')),
	created_at REAL NOT NULL,
	expires_at REAL NOT NULL CHECK (expires_at > created_at)
);
